//! The one limit on ids: at most [`MAX_ID_BYTES`] bytes.
//!
//! Every id the node takes in is bounded: update, contract, party, synchronizer
//! (domain), participant, tracking, user and transfer instruction ids. An id longer
//! than [`MAX_ID_BYTES`] bytes of UTF-8 is refused where it enters the node, with a
//! message that names the field:
//!
//! - at ingest, in every record kind (updates of every kind, with their events'
//!   contract ids and party lists, topology, roll-forward and wallet user records): a
//!   400 naming the line and the field;
//! - in a request path ([`path_id`], measured after percent-decoding) and in a request
//!   body: a 400 naming the parameter or field;
//! - as the subject (`sub`) of a wallet token, the wallet user id: a 401, since the
//!   token is checked before anything else of the request.
//!
//! The limit keeps stored keys and values small and every stored id servable: an id
//! that could be recorded but not asked for again (a path longer than a host accepts),
//! or a record so large that every job reading it fails, cannot get in. Event ids are
//! not bounded on their own: they are `<update_id>:<n>` of a bounded update id.

use alloc::format;
use alloc::string::String;

use crate::error::Error;
use crate::http::percent_decode;

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

/// The id in path parameter `field`, percent-decoded and checked ([`check_id`]); a 400
/// naming the parameter when it does not decode to UTF-8 or is too long.
pub fn path_id(raw: &str, field: &str) -> Result<String, Error> {
    let id = percent_decode(raw)
        .ok_or_else(|| Error::BadRequest(format!("path parameter {field} is not valid percent-encoded UTF-8")))?;
    check_id(field, &id)?;
    Ok(id)
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
        assert_eq!(path_id(&encoded, "update_id").unwrap(), "A".repeat(512));
        let message = path_id(&"%41".repeat(513), "update_id").unwrap_err().to_string();
        assert_eq!(message, "update_id is 513 bytes long; ids are at most 512 bytes");
        let message = path_id("%zz", "party_id").unwrap_err().to_string();
        assert_eq!(message, "path parameter party_id is not valid percent-encoded UTF-8");
    }

    #[test]
    fn every_id_path_parameter_is_checked_after_decoding() {
        use crate::http::{Body, Method, Request};
        let store = crate::store::MemoryStore::new();
        let config = crate::Config::default();
        let env = crate::Env { now: crate::time::Timestamp::MIN, entropy: [0; 32], config: &config };
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
            let response = crate::exec::block_on(crate::handle(&request, &env, &store));
            let body = alloc::string::String::from_utf8_lossy(&response.body).into_owned();
            assert_eq!(response.status, 400, "{path}: {body}");
            assert!(body.contains(&alloc::format!("{field} is 513 bytes long; ids are at most 512 bytes")), "{body}");
            // At the limit the id is looked up: not found.
            let at_limit = request.path.replace(&long, &ok).replace(&"%78".repeat(513), &"%78".repeat(512));
            request.path = at_limit;
            let response = crate::exec::block_on(crate::handle(&request, &env, &store));
            assert_eq!(response.status, 404, "{}", request.path);
        }
    }

    #[test]
    fn long_texts_are_shown_cut_with_their_length() {
        assert_eq!(shown("t-1"), "\"t-1\"");
        let long = shown(&"x".repeat(900_000));
        assert!(long.len() < 100, "{long}");
        assert!(long.ends_with("… (900000 bytes)"), "{long}");
    }
}
