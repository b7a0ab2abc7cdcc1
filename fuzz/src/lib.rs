//! What the fuzz targets share: the node they run against, and the input formats that
//! both the targets and the seed generator (`examples/seeds.rs`) read and write.
//!
//! - A request ([`decode_request`], [`encode_request`]) is written as HTTP/1 shows it:
//!   `METHOD target`, header lines `name: value`, a blank line, then the body.
//! - The follower's upstream answers ([`split_answers`], [`join_answers`]) are the
//!   bodies of the upstream's answers in the order the follower asks, separated by a
//!   `0xff` byte (which UTF-8 text never holds).
//! - A wallet token to sign ([`signed_token`]) is its header and its claims, on the
//!   first line and after it.

use std::sync::OnceLock;

use hmac::{Hmac, Mac};
use ledger_node_core::model::config::Config;
use ledger_node_core::model::time::Timestamp;
use ledger_node_core::storage::exec::block_on;
use ledger_node_core::storage::store::{MemoryStore, Scan, WriteBatch};
use ledger_node_core::{Body, Env, Method, Request, Response, handle};
use sha2::Sha256;

/// The admin token of the node the targets run against (the scenario suite's).
pub const ADMIN_TOKEN: &str = "test-admin-token";
/// The HS256 secret of wallet tokens (the scenario suite's and the core's tests').
pub const HS256_SECRET: &str = "test-hs256-secret";
/// The node's clock: 2026-01-01T00:00:00Z, the scenario suite's fixed clock.
pub const NOW_MICROS: i64 = 1_767_225_600_000_000;
/// A small demo history (`ledger-node demo`, written by `scripts/fuzz seeds`) that the
/// request target's node holds, so that requests reach the endpoints' stored data.
pub const HISTORY: &[u8] = include_bytes!("../history.ndjson");
/// The page size the follow target's follower asks its upstream for.
pub const FOLLOW_PAGE_SIZE: u32 = 4;
/// The most pages of updates the follow target's follower applies.
pub const FOLLOW_MAX_PAGES: u32 = 3;
/// The byte between two upstream answers.
pub const ANSWER_SEPARATOR: u8 = 0xff;

/// The core's test keys (`testdata/keys.json`), private halves included.
const KEYS: &str = include_str!("../../core/src/api/auth/testdata/keys.json");

/// The configuration of the node: the scenario suite's, with the core's test keys as
/// its JWK set.
pub fn config() -> &'static Config {
    static CONFIG: OnceLock<Config> = OnceLock::new();
    CONFIG.get_or_init(|| {
        let jwks = jwks();
        Config::from_pairs([
            ("LEDGER_NODE_ADMIN_TOKEN", ADMIN_TOKEN),
            ("LEDGER_NODE_ALLOW_RESET", "true"),
            ("LEDGER_NODE_JWT_HS256_SECRET", HS256_SECRET),
            ("LEDGER_NODE_JWT_JWKS", jwks.as_str()),
            ("LEDGER_NODE_SNAPSHOT_PERIOD_HOURS", "3"),
            // The scenarios' tokens expire in 2099.
            ("LEDGER_NODE_JWT_MAX_TTL_HOURS", "1000000"),
        ])
        // The configuration is this file's own; a mistake in it is the harness's bug.
        .expect("the fuzz configuration is valid")
    })
}

/// The public halves of the test keys, as a JWK set.
fn jwks() -> String {
    let keys: serde_json::Value = serde_json::from_str(KEYS).expect("the core's test keys are JSON");
    let public: Vec<serde_json::Value> = ["rsa", "ec", "ed", "rsa2"]
        .into_iter()
        .enumerate()
        .map(|(index, name)| {
            let mut key = keys[name].clone();
            if let Some(members) = key.as_object_mut() {
                for private in ["d", "p", "q", "dp", "dq", "qi"] {
                    members.remove(private);
                }
                members.insert("kid".into(), format!("{name}-{index}").into());
            }
            key
        })
        .collect();
    serde_json::json!({ "keys": public }).to_string()
}

/// What the node is handed with every request.
pub fn env() -> Env<'static> {
    let now = Timestamp::from_micros(NOW_MICROS).expect("the fixed clock is in range");
    Env { now, entropy: [7; 32], config: config() }
}

/// Serves `request` on `store`.
pub fn serve(request: &Request, store: &MemoryStore) -> Response {
    block_on(handle(request, &env(), store))
}

/// A POST of `body` to `path` with the admin token.
pub fn admin_post(path: &str, body: Vec<u8>) -> Request {
    let mut request = Request::new(Method::Post, path);
    request.headers.push(("authorization".into(), format!("Bearer {ADMIN_TOKEN}")));
    request.body = Body::Complete(body);
    request
}

/// A fresh node holding [`HISTORY`]: ingested once, then copied for every input.
pub fn node_with_history() -> MemoryStore {
    static ENTRIES: OnceLock<Vec<(Vec<u8>, Vec<u8>)>> = OnceLock::new();
    let entries = ENTRIES.get_or_init(|| {
        let store = MemoryStore::new();
        let response = serve(&admin_post("/v0/admin/ingest", HISTORY.to_vec()), &store);
        assert_eq!(response.status, 200, "the fuzz history ingests: {}", String::from_utf8_lossy(&response.body));
        store.scan_now(&Scan::prefix(b"", u32::MAX))
    });
    let store = MemoryStore::new();
    let mut batch = WriteBatch::new();
    for (key, value) in entries {
        batch.put(key.clone(), value.clone());
    }
    store.write_now(&batch).expect("plain puts always apply");
    store
}

/// The request that `bytes` spell (module docs); anything goes, lossily decoded.
pub fn decode_request(bytes: &[u8]) -> Request {
    let (head, body) = match bytes.windows(2).position(|w| w == b"\n\n") {
        Some(at) => (&bytes[..at], &bytes[at + 2..]),
        None => (bytes, &[][..]),
    };
    let head = String::from_utf8_lossy(head);
    let mut lines = head.split('\n');
    let start = lines.next().unwrap_or_default();
    let (method, target) = start.split_once(' ').unwrap_or((start, "/"));
    let mut request = Request::new(Method::parse(method), target);
    for line in lines {
        let (name, value) = line.split_once(':').unwrap_or((line, ""));
        request.headers.push((name.into(), value.strip_prefix(' ').unwrap_or(value).into()));
    }
    request.body = Body::Complete(body.to_vec());
    request
}

/// `request` as [`decode_request`] reads it.
pub fn encode_request(request: &Request) -> Vec<u8> {
    let mut out = format!("{} {}", request.method.as_str(), request.path);
    if !request.query.is_empty() {
        out.push('?');
        out.push_str(&request.query);
    }
    for (name, value) in &request.headers {
        out.push_str(&format!("\n{name}: {value}"));
    }
    out.push_str("\n\n");
    let mut out = out.into_bytes();
    if let Body::Complete(body) = &request.body {
        out.extend_from_slice(body);
    }
    out
}

/// The upstream answers that `bytes` hold, in order.
pub fn split_answers(bytes: &[u8]) -> Vec<&[u8]> {
    if bytes.is_empty() {
        return Vec::new();
    }
    bytes.split(|b| *b == ANSWER_SEPARATOR).collect()
}

/// `answers` as [`split_answers`] reads them.
pub fn join_answers(answers: &[Vec<u8>]) -> Vec<u8> {
    answers.join(&ANSWER_SEPARATOR)
}

/// Base64url without padding, as JWTs write their parts.
pub fn base64url(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(char::from(ALPHABET[(n >> (18 - 6 * i) & 63) as usize]));
        }
    }
    out
}

/// A token whose header is `header` and whose claims are `claims`, as sent, signed
/// with [`HS256_SECRET`] (whatever the header says).
pub fn signed_token(header: &[u8], claims: &[u8]) -> String {
    let signing_input = format!("{}.{}", base64url(header), base64url(claims));
    let mut mac = Hmac::<Sha256>::new_from_slice(HS256_SECRET.as_bytes()).expect("HMAC takes a key of any length");
    mac.update(signing_input.as_bytes());
    format!("{signing_input}.{}", base64url(&mac.finalize().into_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_reads_back_as_written() {
        let mut request = Request::new(Method::Post, "/v2/updates?x=1");
        request.headers.push(("authorization".into(), "Bearer t".into()));
        request.body = Body::Complete(b"{\"page_size\":1}\n\nmore".to_vec());
        assert_eq!(decode_request(&encode_request(&request)), request);
    }

    #[test]
    fn base64url_matches_the_rfc_examples() {
        assert_eq!(base64url(b""), "");
        assert_eq!(base64url(b"f"), "Zg");
        assert_eq!(base64url(b"fo"), "Zm8");
        assert_eq!(base64url(b"foo"), "Zm9v");
        assert_eq!(base64url(&[0xfb, 0xff]), "-_8");
    }

    #[test]
    fn a_signed_token_is_accepted_by_the_node() {
        let claims = br#"{"sub":"alice","exp":1767229200}"#;
        let token = signed_token(br#"{"alg":"HS256","typ":"JWT"}"#, claims);
        let now = Timestamp::from_micros(NOW_MICROS).unwrap();
        let subject = ledger_node_core::api::auth::jwt::authenticate(&token, config(), now).unwrap();
        assert_eq!(subject.0, "alice");
    }
}
