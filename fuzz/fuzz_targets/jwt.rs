//! The wallet token reader (`wallet::jwt::authenticate`), with the HS256 secret and a
//! JWK set of RSA, EC and Ed25519 keys configured.
//!
//! Input: a token as sent; or, when the input starts with `{`, a header (its first
//! line) and claims (the rest) as sent, which the target signs with the HS256 secret,
//! so that arbitrary claims get past the signature to the checks behind it.
//!
//! Arbitrary tokens never panic; every refusal is a 401; a subject the node accepts is
//! a non-empty id within the id bound, and the token that named it is still accepted
//! when sent again.

#![no_main]

use ledger_node_core::Error;
use ledger_node_core::api::auth::jwt::authenticate;
use ledger_node_core::model::ids::MAX_ID_BYTES;
use ledger_node_core::model::time::Timestamp;
use ledger_node_fuzz::{NOW_MICROS, config, signed_token};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| {
    let token = if input.first() == Some(&b'{') {
        let (header, claims) = match input.iter().position(|b| *b == b'\n') {
            Some(at) => (&input[..at], &input[at + 1..]),
            None => (input, &[][..]),
        };
        signed_token(header, claims)
    } else {
        String::from_utf8_lossy(input).into_owned()
    };
    let now = Timestamp::from_micros(NOW_MICROS).expect("the fixed clock is in range");
    match authenticate(&token, config(), now) {
        Ok(subject) => {
            assert!(!subject.0.is_empty() && subject.0.len() <= MAX_ID_BYTES, "subject {:?}", subject.0);
            assert_eq!(authenticate(&token, config(), now).ok(), Some(subject), "a token accepted twice");
        }
        Err(Error::Unauthorized(message)) => assert!(!message.is_empty()),
        Err(other) => panic!("a token refused with {other:?}, not a 401"),
    }
});
