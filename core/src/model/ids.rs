//! The ids the node takes in, and the one limit on them: at most [`MAX_ID_BYTES`] bytes.
//!
//! Every id the node takes in is bounded: update, contract, party, synchronizer
//! (domain), participant, tracking, user and transfer instruction ids. An id longer
//! than [`MAX_ID_BYTES`] bytes of UTF-8 is refused where it enters the node, with a
//! message that names the field:
//!
//! - at ingest, in every record kind (updates of every kind, with their events'
//!   contract ids and party lists, topology, roll-forward and wallet user records): a
//!   400 naming the line and the field;
//! - in a request path (measured after percent-decoding) and in a request body: a 400
//!   naming the parameter or field;
//! - as the subject (`sub`) of a wallet token, the wallet user id: a 401, since the
//!   token is checked before anything else of the request.
//!
//! The limit keeps stored keys and values small and every stored id servable: an id
//! that could be recorded but not asked for again (a path longer than a host accepts),
//! or a record so large that every job reading it fails, cannot get in. Event ids are
//! not bounded on their own: they are `<update_id>:<n>` of a bounded update id.
//!
//! ## Typed ids of requests
//!
//! The ids a request names, in its path or its body, are typed: [`UpdateId`],
//! [`ContractId`], [`PartyId`], [`SynchronizerId`] and [`TrackingId`]. One is made only
//! by checking its text, once, where the request enters: the router decodes and checks
//! path parameters ([`crate::api::route`], [`from_path`](UpdateId::from_path)) and the
//! parsers of request bodies check body fields ([`parse`](UpdateId::parse)), so a
//! handler that holds one checks nothing. The router cannot answer for a bad path
//! parameter itself: a protected route checks its credentials first (a 401 comes
//! before a 400), and some routes parse their body first. So a route carries a path
//! parameter as a [`PathParam`], the id or the [`BadId`] the router found, and its
//! handler reports the error where its order of checks puts it.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use crate::model::error::Error;

/// The most bytes an id may have.
pub const MAX_ID_BYTES: usize = 512;

/// What is wrong with `value` as an id, if anything: `is N bytes long; ids are at
/// most 512 bytes` (for messages that name the field first).
pub fn length_problem(value: &str) -> Option<String> {
    (value.len() > MAX_ID_BYTES).then(|| format!("is {} bytes long; ids are at most {MAX_ID_BYTES} bytes", value.len()))
}

/// Checks the length of id `value` of field `field`: a 400 naming the field when it is
/// longer than [`MAX_ID_BYTES`].
pub fn check_id(field: &str, value: &str) -> Result<(), Error> {
    match length_problem(value) {
        Some(problem) => Err(Error::BadRequest(format!("{field} {problem}"))),
        None => Ok(()),
    }
}

/// A path parameter that is not an id: it does not percent-decode to UTF-8, or it is
/// too long. Its message names the parameter; as an [`Error`] it is a 400.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadId(String);

impl From<BadId> for Error {
    fn from(bad: BadId) -> Error {
        Error::BadRequest(bad.0)
    }
}

/// A path parameter as the router decoded it: the id, or why it is not one.
pub type PathParam<Id> = Result<Id, BadId>;

/// The id in path parameter `field`, percent-decoded and checked ([`check_id`]).
fn decode_path_param(raw: &str, field: &str) -> Result<String, BadId> {
    let id = percent_decode(raw)
        .ok_or_else(|| BadId(format!("path parameter {field} is not valid percent-encoded UTF-8")))?;
    match length_problem(&id) {
        Some(problem) => Err(BadId(format!("{field} {problem}"))),
        None => Ok(id),
    }
}

/// Decodes `%XX` escapes of a path segment or query component (`+` is kept as is in
/// paths; see [`query_param`](crate::api::http::query_param) for query strings). Invalid escapes and invalid UTF-8 are
/// refused.
pub fn percent_decode(text: &str) -> Option<String> {
    if !text.contains('%') {
        return Some(text.into());
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b == b'%' {
            let hex = bytes.get(i + 1..i + 3)?;
            let hi = char::from(*hex.first()?).to_digit(16)?;
            let lo = char::from(*hex.get(1)?).to_digit(16)?;
            // Two hex digits make at most 255.
            out.push((hi * 16 + lo) as u8);
            i += 3;
        } else {
            out.push(b);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Defines a typed id: a `String` of at most [`MAX_ID_BYTES`] bytes, made by checking.
/// It reads as a `str` (`Deref`), and shows (`Display`, `Debug`) as its text does, so
/// messages quote it as they quote a string.
macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(String);

        impl $name {
            /// `value`, the id in field `field` of a request body: a 400 naming the field
            /// when it is too long ([`check_id`]).
            pub fn parse(field: &str, value: &str) -> Result<Self, Error> {
                check_id(field, value)?;
                Ok($name(value.into()))
            }

            /// The id in path parameter `field`, still percent-encoded as `raw`: decoded
            /// and checked, or the [`BadId`] that names the parameter.
            pub fn from_path(raw: &str, field: &str) -> PathParam<Self> {
                decode_path_param(raw, field).map($name)
            }

            /// The id's text.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl core::ops::Deref for $name {
            type Target = str;
            fn deref(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&self.0, f)
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Debug::fmt(&self.0, f)
            }
        }

        impl From<$name> for String {
            fn from(id: $name) -> String {
                id.0
            }
        }
    };
}

id_type! {
    /// An update id (`GET /v{1,2}/updates/{update_id}`, `after_update_id`).
    UpdateId
}

id_type! {
    /// A contract id (the transfer instruction of a registry choice context).
    ContractId
}

id_type! {
    /// A party id (`party_id` of the hosting routes, `receiving_validator_party_id`).
    PartyId
}

id_type! {
    /// A synchronizer id, called `domain_id` in paths and in the wallet's body.
    SynchronizerId
}

id_type! {
    /// A wallet client's tracking id of a buy-traffic request.
    TrackingId
}

id_type! {
    /// The name of an ANS entry (`GET /v0/ans-entries/by-name/{name}`).
    EntryName
}

id_type! {
    /// A token registry's instrument id (`GET /registry/metadata/v1/instruments/{instrumentId}`).
    InstrumentId
}

/// `text` quoted for a log line, cut to its first 64 characters (and its length
/// given) when it is longer: log lines name records, they do not copy them.
pub fn shown(text: &str) -> String {
    match head(text, 64) {
        None => format!("{text:?}"),
        Some(head) => format!("{head:?}… ({} bytes)", text.len()),
    }
}

/// The first `chars` characters of `text`, or `None` when it has no more than that.
pub(crate) fn head(text: &str, chars: usize) -> Option<&str> {
    let (cut, _) = text.char_indices().nth(chars)?;
    // `cut` starts a character, so it is a boundary and `get` finds the head.
    text.get(..cut)
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn an_id_of_512_bytes_is_accepted_and_one_of_513_is_refused_naming_the_field() {
        assert_eq!(check_id("update_id", &"u".repeat(512)), Ok(()));
        assert_eq!(
            check_id("update_id", &"u".repeat(513)),
            Err(Error::BadRequest("update_id is 513 bytes long; ids are at most 512 bytes".into()))
        );
    }

    #[test]
    fn a_tracking_id_over_512_bytes_is_refused_naming_the_field() {
        let message = check_id("tracking_id", &"t".repeat(900_000)).unwrap_err().to_string();
        assert_eq!(message, "tracking_id is 900000 bytes long; ids are at most 512 bytes");
    }

    #[test]
    fn the_limit_counts_bytes_not_characters() {
        // 256 two-byte characters are 512 bytes; one more is over.
        assert_eq!(check_id("party_id", &"é".repeat(256)), Ok(()));
        assert!(check_id("party_id", &"é".repeat(257)).is_err());
    }

    #[test]
    fn a_path_parameter_is_measured_after_percent_decoding() {
        // 512 bytes, written as 1536 characters of escapes.
        let encoded = "%41".repeat(512);
        assert_eq!(UpdateId::from_path(&encoded, "update_id").unwrap().as_str(), "A".repeat(512));
        let message = Error::from(UpdateId::from_path(&"%41".repeat(513), "update_id").unwrap_err()).to_string();
        assert_eq!(message, "update_id is 513 bytes long; ids are at most 512 bytes");
        let message = Error::from(PartyId::from_path("%zz", "party_id").unwrap_err()).to_string();
        assert_eq!(message, "path parameter party_id is not valid percent-encoded UTF-8");
    }

    #[test]
    fn a_body_field_is_checked_naming_the_field() {
        assert_eq!(TrackingId::parse("tracking_id", "t-1").map(String::from), Ok("t-1".to_string()));
        let message = SynchronizerId::parse("synchronizer_id", &"s".repeat(513)).unwrap_err().to_string();
        assert_eq!(message, "synchronizer_id is 513 bytes long; ids are at most 512 bytes");
    }

    #[test]
    fn a_typed_id_shows_as_its_text() {
        let id = PartyId::parse("party_id", "p::1").unwrap();
        assert_eq!(alloc::format!("{id} {id:?}"), "p::1 \"p::1\"");
    }

    #[test]
    fn every_id_path_parameter_is_checked_after_decoding() {
        use crate::api::http::{Body, Method, Request};
        let store = crate::storage::store::MemoryStore::new();
        let config = crate::Config::default();
        let env = crate::Env { now: crate::model::time::Timestamp::MIN, entropy: [0; 32], config: &config };
        let long = "x".repeat(513);
        let ok = "x".repeat(512);
        for (method, path, field) in [
            (Method::Get, alloc::format!("/v2/updates/{long}"), "update_id"),
            (Method::Get, alloc::format!("/v1/updates/{}", "%78".repeat(513)), "update_id"),
            (Method::Get, alloc::format!("/v0/domains/{long}/parties/p/participant-id"), "domain_id"),
            (Method::Get, alloc::format!("/v0/domains/d/parties/{long}/participant-id"), "party_id"),
            (
                Method::Post,
                alloc::format!("/registry/transfer-instruction/v2/{long}/choice-contexts/accept"),
                "transfer_instruction_id",
            ),
        ] {
            let mut request = Request::new(method, &path);
            request.body = Body::Complete(b"{}".to_vec());
            let response = crate::storage::exec::block_on(crate::handle(&request, &env, &store));
            let body = alloc::string::String::from_utf8_lossy(&response.body).into_owned();
            assert_eq!(response.status, 400, "{path}: {body}");
            assert!(body.contains(&alloc::format!("{field} is 513 bytes long; ids are at most 512 bytes")), "{body}");
            // At the limit the id is looked up: not found.
            let at_limit = request.path.replace(&long, &ok).replace(&"%78".repeat(513), &"%78".repeat(512));
            request.path = at_limit;
            let response = crate::storage::exec::block_on(crate::handle(&request, &env, &store));
            assert_eq!(response.status, 404, "{}", request.path);
        }
    }

    #[test]
    fn a_bad_path_id_is_answered_where_the_order_of_checks_puts_it() {
        use crate::api::http::{Body, Method, Request};
        let store = crate::storage::store::MemoryStore::new();
        let config = crate::Config::default();
        let env = crate::Env { now: crate::model::time::Timestamp::MIN, entropy: [0; 32], config: &config };
        let answer = |method, path: &str, body: &[u8]| {
            let mut request = Request::new(method, path);
            request.body = Body::Complete(body.to_vec());
            let response = crate::storage::exec::block_on(crate::handle(&request, &env, &store));
            (response.status, alloc::string::String::from_utf8_lossy(&response.body).into_owned())
        };
        // The registry reads its body first, then the id in the path.
        let choice = "/registry/transfer-instruction/v2/%zz/choice-contexts/accept";
        let (status, body) = answer(Method::Post, choice, b"");
        assert_eq!(status, 400);
        assert!(body.contains("request body required"), "{body}");
        let (status, body) = answer(Method::Post, choice, b"{}");
        assert_eq!(status, 400);
        assert!(body.contains("path parameter transfer_instruction_id is not valid"), "{body}");
        // The wallet's status checks the token first.
        let (status, body) = answer(Method::Post, "/v0/wallet/buy-traffic-requests/%zz/status", b"");
        assert_eq!(status, 401, "{body}");
        // The update by id checks the id before its query.
        let (status, body) = answer(Method::Get, "/v2/updates/%zz?ledger_value_encoding=bogus", b"");
        assert_eq!(status, 400);
        assert!(body.contains("path parameter update_id"), "{body}");
    }

    #[test]
    fn long_texts_are_shown_cut_with_their_length() {
        assert_eq!(shown("t-1"), "\"t-1\"");
        let long = shown(&"x".repeat(900_000));
        assert!(long.len() < 100, "{long}");
        assert!(long.ends_with("… (900000 bytes)"), "{long}");
    }

    #[test]
    fn percent_decoding_handles_escapes_and_refuses_bad_ones() {
        assert_eq!(percent_decode("a%3A%3Ab").as_deref(), Some("a::b"));
        assert_eq!(percent_decode("plain").as_deref(), Some("plain"));
        assert_eq!(percent_decode("%zz"), None);
        assert_eq!(percent_decode("%4"), None);
        assert_eq!(percent_decode("%ff"), None);
    }
}
