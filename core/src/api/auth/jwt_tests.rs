//! The token attack corpus: real keys (`testdata/`), real signatures, every refusal a 401.

use alloc::string::String;
use alloc::vec::Vec;

use jwt_compact::alg::RsaPrivateKey;
use serde_json::{Value as Json, json};

use super::*;
use crate::model::config;
use jwt_compact::Algorithm;
use jwt_compact::jwk::JsonWebKey;

const KEYS: &str = include_str!("testdata/keys.json");
const RSA_PUBLIC_PEM: &str = include_str!("testdata/rsa_public.pem");
const SECRET: &str = "test-hs256-secret";
/// 2026-01-01T00:00:00Z, the tests' "now", in seconds.
const NOW_SECONDS: i64 = 1_767_225_600;
/// 2099-01-01T00:00:00Z.
const FAR_FUTURE: i64 = 4_070_908_800;

fn now() -> Timestamp {
    Timestamp::from_unix_seconds(NOW_SECONDS).unwrap()
}

fn key(name: &str) -> Json {
    let keys: Json = serde_json::from_str(KEYS).unwrap();
    keys[name].clone()
}

/// The public half of a private JWK, with extra members.
fn public(name: &str, extra: Json) -> Json {
    let mut jwk = key(name);
    let object = jwk.as_object_mut().unwrap();
    for private in ["d", "p", "q", "dp", "dq", "qi"] {
        object.remove(private);
    }
    object.extend(extra.as_object().unwrap().clone());
    jwk
}

fn jwks() -> String {
    json!({"keys": [
        public("rsa", json!({"kid": "rsa-1", "use": "sig", "alg": "RS256"})),
        public("ec", json!({"kid": "ec-1"})),
        public("ed", json!({"kid": "ed-1", "key_ops": ["verify"]})),
        public("rsa2", json!({})),
        {"kty": "oct", "k": "c2VjcmV0", "kid": "ignored"},
    ]})
    .to_string()
}

/// Hours from the tests' "now" to [`FAR_FUTURE`], and then some: most tests sign tokens
/// that expire then, so they allow tokens that long-lived.
const LONG_TTL_HOURS: &str = "700000";

fn config_with(extra: &[(&str, &str)]) -> Config {
    let jwks = jwks();
    let mut pairs: Vec<(&str, &str)> = alloc::vec![
        (config::JWT_HS256_SECRET, SECRET),
        (config::JWT_JWKS, &jwks),
        (config::JWT_MAX_TTL_HOURS, LONG_TTL_HOURS)
    ];
    pairs.extend_from_slice(extra);
    Config::from_pairs(pairs).unwrap()
}

fn b64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |acc, (i, b)| acc | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..=chunk.len() {
            out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
        }
    }
    out
}

/// A token with exactly this header and these claims, signed by `sign`.
fn token_with(header: &Json, claims: &Json, sign: impl Fn(&[u8]) -> Vec<u8>) -> String {
    let signing_input = alloc::format!("{}.{}", b64(header.to_string().as_bytes()), b64(claims.to_string().as_bytes()));
    let signature = sign(signing_input.as_bytes());
    alloc::format!("{signing_input}.{}", b64(&signature))
}

fn hs256(secret: &[u8]) -> impl Fn(&[u8]) -> Vec<u8> {
    let key = Hs256Key::new(secret);
    move |message| {
        use jwt_compact::AlgorithmSignature;
        Hs256.sign(&key, message).as_bytes().to_vec()
    }
}

fn rs256(name: &str) -> impl Fn(&[u8]) -> Vec<u8> {
    let jwk: JsonWebKey<'_> = serde_json::from_value(key(name)).unwrap();
    let key = RsaPrivateKey::try_from(&jwk).unwrap();
    move |message| {
        use jwt_compact::AlgorithmSignature;
        Rsa::rs256().sign(&key, message).as_bytes().to_vec()
    }
}

fn es256(name: &str) -> impl Fn(&[u8]) -> Vec<u8> {
    let jwk: JsonWebKey<'_> = serde_json::from_value(key(name)).unwrap();
    let key = <Es256 as Algorithm>::SigningKey::try_from(&jwk).unwrap();
    move |message| {
        use jwt_compact::AlgorithmSignature;
        Es256.sign(&key, message).as_bytes().to_vec()
    }
}

fn eddsa(name: &str) -> impl Fn(&[u8]) -> Vec<u8> {
    let jwk: JsonWebKey<'_> = serde_json::from_value(key(name)).unwrap();
    let key = <Ed25519 as Algorithm>::SigningKey::try_from(&jwk).unwrap();
    move |message| {
        use jwt_compact::AlgorithmSignature;
        Ed25519.sign(&key, message).as_bytes().to_vec()
    }
}

fn claims() -> Json {
    json!({"sub": "alice", "exp": FAR_FUTURE})
}

fn header(alg: &str, kid: Option<&str>) -> Json {
    match kid {
        Some(kid) => json!({"alg": alg, "typ": "JWT", "kid": kid}),
        None => json!({"alg": alg, "typ": "JWT"}),
    }
}

fn verify(token: &str, config: &Config) -> Result<Subject, Error> {
    authenticate(token, config, now())
}

#[track_caller]
fn assert_refused(token: &str, config: &Config, says: &str) {
    match verify(token, config) {
        Err(Error::Unauthorized(message)) => {
            assert!(message.contains(says), "message {message:?} should say {says:?}");
            assert!(!message.contains(SECRET), "message {message:?} leaks the secret");
        }
        other => panic!("want a 401 saying {says:?}, got {other:?}"),
    }
}

#[test]
fn an_hs256_token_with_good_claims_yields_its_subject() {
    let token = token_with(&header("HS256", None), &claims(), hs256(SECRET.as_bytes()));
    assert_eq!(verify(&token, &config_with(&[])), Ok(Subject("alice".into())));
}

#[test]
fn rs256_es256_and_eddsa_tokens_verify_with_the_key_their_kid_names() {
    let config = config_with(&[]);
    for token in [
        token_with(&header("RS256", Some("rsa-1")), &claims(), rs256("rsa")),
        token_with(&header("ES256", Some("ec-1")), &claims(), es256("ec")),
        token_with(&header("EdDSA", Some("ed-1")), &claims(), eddsa("ed")),
    ] {
        assert_eq!(verify(&token, &config), Ok(Subject("alice".into())), "{token}");
    }
}

#[test]
fn without_a_kid_every_key_of_the_matching_type_is_tried() {
    let config = config_with(&[]);
    // rsa2 has no kid and comes after rsa-1 in the set.
    for token in [
        token_with(&header("RS256", None), &claims(), rs256("rsa2")),
        token_with(&header("RS256", None), &claims(), rs256("rsa")),
        token_with(&header("ES256", None), &claims(), es256("ec")),
        token_with(&header("EdDSA", None), &claims(), eddsa("ed")),
    ] {
        assert_eq!(verify(&token, &config), Ok(Subject("alice".into())));
    }
}

#[test]
fn a_signature_by_another_key_is_refused() {
    let config = config_with(&[]);
    assert_refused(&token_with(&header("RS256", Some("rsa-1")), &claims(), rs256("rsa2")), &config, "does not verify");
    assert_refused(&token_with(&header("RS256", None), &claims(), rs256("rsa1024")), &config, "does not verify");
    assert_refused(
        &token_with(&header("HS256", None), &claims(), hs256(b"another-secret")),
        &config,
        "does not verify",
    );
    // A valid Ed25519 signature with one bit flipped.
    let good = token_with(&header("EdDSA", Some("ed-1")), &claims(), eddsa("ed"));
    let (signing_input, signature) = good.rsplit_once('.').unwrap();
    let mut flipped = signature.as_bytes().to_vec();
    flipped[5] = if flipped[5] == b'A' { b'B' } else { b'A' };
    let forged = alloc::format!("{signing_input}.{}", String::from_utf8(flipped).unwrap());
    assert_refused(&forged, &config, "does not verify");
}

#[test]
fn a_tampered_payload_is_refused() {
    let token = token_with(&header("ES256", Some("ec-1")), &claims(), es256("ec"));
    let parts: Vec<&str> = token.split('.').collect();
    let forged_claims = b64(json!({"sub": "mallory", "exp": FAR_FUTURE}).to_string().as_bytes());
    let forged = alloc::format!("{}.{}.{}", parts[0], forged_claims, parts[2]);
    assert_refused(&forged, &config_with(&[]), "does not verify");
}

#[test]
fn expired_and_not_yet_valid_tokens_are_refused() {
    let config = config_with(&[]);
    let expired = json!({"sub": "alice", "exp": 1_704_067_200});
    assert_refused(&token_with(&header("HS256", None), &expired, hs256(SECRET.as_bytes())), &config, "expired");
    let just_expired = json!({"sub": "alice", "exp": NOW_SECONDS - 1});
    assert_refused(&token_with(&header("ES256", None), &just_expired, es256("ec")), &config, "expired");
    let immature = json!({"sub": "alice", "exp": FAR_FUTURE, "nbf": FAR_FUTURE - 10});
    assert_refused(&token_with(&header("EdDSA", None), &immature, eddsa("ed")), &config, "not valid yet");
    let mature = json!({"sub": "alice", "exp": FAR_FUTURE, "nbf": NOW_SECONDS});
    assert!(verify(&token_with(&header("EdDSA", None), &mature, eddsa("ed")), &config).is_ok());
    let no_exp = json!({"sub": "alice"});
    assert_refused(
        &token_with(&header("HS256", None), &no_exp, hs256(SECRET.as_bytes())),
        &config,
        "exp claim is required",
    );
}

#[test]
fn the_audience_is_checked_when_configured() {
    let config = config_with(&[(config::JWT_AUDIENCE, "https://wallet.example")]);
    let sign = |claims: Json| token_with(&header("HS256", None), &claims, hs256(SECRET.as_bytes()));
    let ok = |aud: Json| sign(json!({"sub": "alice", "exp": FAR_FUTURE, "aud": aud}));
    assert!(verify(&ok(json!("https://wallet.example")), &config).is_ok());
    assert!(verify(&ok(json!(["other", "https://wallet.example"])), &config).is_ok());
    assert_refused(&ok(json!("https://other.example")), &config, "audience");
    assert_refused(&ok(json!(["a", "b"])), &config, "audience");
    assert_refused(&ok(json!(42)), &config, "aud must be");
    assert_refused(&sign(claims()), &config, "no aud claim");
    // Unset: not checked.
    assert!(verify(&ok(json!("https://other.example")), &config_with(&[])).is_ok());
}

#[test]
fn unsigned_tokens_are_never_accepted() {
    let config = config_with(&[]);
    for alg in ["none", "None", "NONE"] {
        let unsigned = token_with(&header(alg, None), &claims(), |_| Vec::new());
        assert!(matches!(verify(&unsigned, &config), Err(Error::Unauthorized(_))), "{alg}");
        let with_hmac = token_with(&header(alg, None), &claims(), hs256(SECRET.as_bytes()));
        assert!(matches!(verify(&with_hmac, &config), Err(Error::Unauthorized(_))), "{alg}");
    }
    let unsigned = token_with(&header("none", None), &claims(), |_| Vec::new());
    assert_refused(&unsigned, &config, "alg none");
}

#[test]
fn hs256_signed_with_the_rsa_public_key_as_secret_is_refused() {
    let config = config_with(&[]);
    let n = String::from(key("rsa")["n"].as_str().unwrap());
    for secret in [RSA_PUBLIC_PEM.as_bytes(), n.as_bytes(), jwks().as_bytes()] {
        for kid in [None, Some("rsa-1")] {
            let token = token_with(&header("HS256", kid), &claims(), hs256(secret));
            assert_refused(&token, &config, "does not verify with the HS256 secret");
        }
    }
    // And with no HS256 secret configured at all.
    let jwks = jwks();
    let only_jwks =
        Config::from_pairs([(config::JWT_JWKS, jwks.as_str()), (config::JWT_MAX_TTL_HOURS, LONG_TTL_HOURS)]).unwrap();
    let token = token_with(&header("HS256", Some("rsa-1")), &claims(), hs256(RSA_PUBLIC_PEM.as_bytes()));
    assert_refused(&token, &only_jwks, "HS256 tokens are not accepted");
}

#[test]
fn a_key_of_the_wrong_type_or_algorithm_is_refused() {
    let config = config_with(&[]);
    // An ES256 token naming the RSA key.
    assert_refused(
        &token_with(&header("ES256", Some("rsa-1")), &claims(), es256("ec")),
        &config,
        "cannot verify ES256",
    );
    // An RS256 token naming the Ed25519 key.
    assert_refused(
        &token_with(&header("RS256", Some("ed-1")), &claims(), rs256("rsa")),
        &config,
        "cannot verify RS256",
    );
    // The symmetric JWK is never used.
    assert_refused(
        &token_with(&header("HS256", Some("ignored")), &claims(), hs256(b"secret")),
        &config,
        "does not verify",
    );
    // A key limited to another algorithm, or to encryption.
    let restricted = json!({"keys": [
        public("rsa", json!({"kid": "ps", "alg": "PS256"})),
        public("ec", json!({"kid": "enc", "use": "enc"})),
        public("ed", json!({"kid": "wrap", "key_ops": ["wrapKey"]})),
    ]})
    .to_string();
    let config =
        Config::from_pairs([(config::JWT_JWKS, restricted.as_str()), (config::JWT_MAX_TTL_HOURS, LONG_TTL_HOURS)])
            .unwrap();
    assert_refused(&token_with(&header("RS256", Some("ps")), &claims(), rs256("rsa")), &config, "does not allow RS256");
    assert_refused(&token_with(&header("RS256", None), &claims(), rs256("rsa")), &config, "no configured key verifies");
    assert_refused(&token_with(&header("ES256", Some("enc")), &claims(), es256("ec")), &config, "not a signature");
    assert_refused(&token_with(&header("EdDSA", Some("wrap")), &claims(), eddsa("ed")), &config, "not a signature");
    assert_refused(
        &token_with(&header("EdDSA", Some("who")), &claims(), eddsa("ed")),
        &config,
        "no configured key has kid",
    );
}

#[test]
fn truncated_and_garbage_tokens_are_refused() {
    let config = config_with(&[]);
    let good = token_with(&header("RS256", Some("rsa-1")), &claims(), rs256("rsa"));
    assert!(verify(&good, &config).is_ok());
    let mut cases: Vec<String> = alloc::vec![
        String::new(),
        "garbage".into(),
        "a.b".into(),
        "a.b.c.d".into(),
        "...".into(),
        "%%%.%%%.%%%".into(),
        "eyJhbGciOiJIUzI1NiJ9.e30.".into(),
        alloc::format!("{}.{}.", b64(b"not json"), b64(b"{}")),
        alloc::format!("{}.{}.", b64(br#"{"alg":"HS256"}"#), b64(b"not json")),
        alloc::format!("{}.{}.", b64(br#"{"alg":"HS256","cty":"cbor"}"#), b64(b"{}")),
        alloc::format!("{}.{}.", b64(br#"{"typ":"JWT"}"#), b64(b"{}")),
    ];
    for cut in [1, 10, good.len() / 2, good.len() - 1] {
        cases.push(good[..cut].into());
    }
    cases.push(alloc::format!("{good}x"));
    cases.push(good.replace('.', ""));
    for token in cases {
        assert!(matches!(verify(&token, &config), Err(Error::Unauthorized(_))), "{token:?}");
    }
}

#[test]
fn unsigned_claims_that_are_malformed_or_lack_a_subject_are_refused() {
    let config = config_with(&[]);
    let sign = |claims: Json| token_with(&header("HS256", None), &claims, hs256(SECRET.as_bytes()));
    assert_refused(&sign(json!({"exp": FAR_FUTURE})), &config, "no subject");
    assert_refused(&sign(json!({"sub": "", "exp": FAR_FUTURE})), &config, "no subject");
    assert_refused(&sign(json!({"sub": 7, "exp": FAR_FUTURE})), &config, "sub must be a string");
    assert_refused(&sign(json!({"sub": "alice", "exp": "tomorrow"})), &config, "claims are malformed");
    assert_refused(&sign(json!([1, 2])), &config, "claims are malformed");
}

#[test]
fn an_unsupported_algorithm_is_named_and_refused() {
    let config = config_with(&[]);
    assert_refused(&token_with(&header("HS512", None), &claims(), hs256(SECRET.as_bytes())), &config, "\"HS512\"");
    assert_refused(&token_with(&header("PS256", None), &claims(), rs256("rsa")), &config, "unsupported");
}

#[test]
fn without_configured_keys_asymmetric_tokens_are_refused() {
    let config =
        Config::from_pairs([(config::JWT_HS256_SECRET, SECRET), (config::JWT_MAX_TTL_HOURS, LONG_TTL_HOURS)]).unwrap();
    let token = token_with(&header("ES256", Some("ec-1")), &claims(), es256("ec"));
    assert_refused(&token, &config, "LEDGER_NODE_JWT_JWKS is not set");
}

#[test]
fn the_key_set_refuses_private_weak_and_unreadable_keys() {
    let parse = |keys: Json| crate::model::jwks::KeySet::parse(&json!({ "keys": keys }).to_string());
    assert_eq!(
        parse(json!([public("rsa", json!({})), public("ec", json!({})), public("ed", json!({}))])).unwrap().len(),
        3
    );
    assert!(parse(json!([key("rsa")])).unwrap_err().contains("private"));
    assert!(parse(json!([key("ed")])).unwrap_err().contains("private"));
    assert!(parse(json!([public("rsa1024", json!({}))])).unwrap_err().contains("2048"));
    assert!(
        parse(json!([{"kty": "EC", "crv": "P-256", "x": "AAAA", "y": "AAAA"}])).unwrap_err().starts_with("keys[0]")
    );
    assert!(parse(json!([{"kty": "RSA"}])).is_err());
    assert!(parse(json!([{"crv": "P-256"}])).unwrap_err().contains("kty"));
    assert!(parse(json!(["text"])).is_err());
    // Keys the node does not verify with are skipped.
    let skipped =
        parse(json!([{"kty": "oct", "k": "AAAA"}, {"kty": "EC", "crv": "P-384", "x": "A", "y": "A"}])).unwrap();
    assert!(skipped.is_empty());
    assert!(crate::model::jwks::KeySet::parse("{}").is_err());
    assert!(crate::model::jwks::KeySet::parse("nope").is_err());
}

#[test]
fn a_subject_over_512_bytes_is_refused_naming_sub() {
    let config = config_with(&[]);
    let sign = |sub: &str| {
        token_with(&header("HS256", None), &json!({"sub": sub, "exp": FAR_FUTURE}), hs256(SECRET.as_bytes()))
    };
    assert_refused(
        &sign(&"u".repeat(513)),
        &config,
        "the token's subject (sub) is 513 bytes long; ids are at most 512 bytes",
    );
    assert_eq!(verify(&sign(&"u".repeat(512)), &config), Ok(Subject("u".repeat(512))));
}

#[test]
fn a_jwt_with_crit_is_refused() {
    let config = config_with(&[]);
    for crit in [json!(["exp"]), json!([]), json!(null), json!("b64")] {
        let header = json!({"alg": "HS256", "typ": "JWT", "crit": crit});
        let token = token_with(&header, &claims(), hs256(SECRET.as_bytes()));
        assert_refused(&token, &config, "crit");
    }
    let header = json!({"alg": "EdDSA", "kid": "ed-1", "crit": ["b64"], "b64": false});
    assert_refused(&token_with(&header, &claims(), eddsa("ed")), &config, "crit parameter");
}

#[test]
fn token_times_must_be_integers_naming_the_claim() {
    let config = config_with(&[]);
    let sign = |claims: Json| token_with(&header("HS256", None), &claims, hs256(SECRET.as_bytes()));
    assert_refused(
        &sign(json!({"sub": "alice", "exp": 4_070_908_800.5})),
        &config,
        "the token's exp must be an integer (whole seconds), not 4070908800.5",
    );
    assert_refused(
        &sign(json!({"sub": "alice", "exp": FAR_FUTURE, "nbf": 1.5})),
        &config,
        "the token's nbf must be an integer",
    );
    assert_refused(
        &sign(json!({"sub": "alice", "exp": FAR_FUTURE, "iat": 1e9})),
        &config,
        "the token's iat must be an integer",
    );
    let integers = json!({"sub": "alice", "exp": FAR_FUTURE, "nbf": NOW_SECONDS - 10, "iat": NOW_SECONDS - 10});
    assert_eq!(verify(&sign(integers), &config), Ok(Subject("alice".into())));
}

#[test]
fn a_token_that_expires_further_ahead_than_the_configured_lifetime_is_refused() {
    let sign =
        |exp: i64| token_with(&header("HS256", None), &json!({"sub": "alice", "exp": exp}), hs256(SECRET.as_bytes()));
    // The default: a day.
    let config = Config::from_pairs([(config::JWT_HS256_SECRET, SECRET)]).unwrap();
    assert_eq!(verify(&sign(NOW_SECONDS + 24 * 3600), &config), Ok(Subject("alice".into())));
    assert_refused(
        &sign(NOW_SECONDS + 24 * 3600 + 1),
        &config,
        "at most 24 hours ahead (LEDGER_NODE_JWT_MAX_TTL_HOURS)",
    );
    assert_refused(&sign(FAR_FUTURE), &config, "at most 24 hours ahead");
    // Configured: an hour.
    let config = Config::from_pairs([(config::JWT_HS256_SECRET, SECRET), (config::JWT_MAX_TTL_HOURS, "1")]).unwrap();
    assert!(verify(&sign(NOW_SECONDS + 3600), &config).is_ok());
    assert_refused(&sign(NOW_SECONDS + 3601), &config, "at most 1 hours ahead");
}

/// An HS256 token of the raw header and claims texts, which may repeat keys.
fn raw_hs256_token(header: &str, claims: &str) -> String {
    let signing_input = alloc::format!("{}.{}", b64(header.as_bytes()), b64(claims.as_bytes()));
    alloc::format!("{signing_input}.{}", b64(&hs256(SECRET.as_bytes())(signing_input.as_bytes())))
}

#[test]
fn a_header_or_claims_set_that_repeats_a_key_is_refused() {
    let config = config_with(&[]);
    let claims = alloc::format!(r#"{{"sub":"alice","exp":{FAR_FUTURE}}}"#);
    let cases = [
        (
            String::from(r#"{"alg":"HS256","typ":"JWT"}"#),
            alloc::format!(r#"{{"sub":"alice","sub":"mallory","exp":{FAR_FUTURE}}}"#),
            "the token's claims are malformed",
        ),
        (
            String::from(r#"{"alg":"HS256"}"#),
            alloc::format!(r#"{{"sub":"alice","exp":{FAR_FUTURE},"role":"a","role":"b"}}"#),
            "the token's claims are malformed: the key \"role\" appears twice",
        ),
        (String::from(r#"{"alg":"HS256","kid":"a","kid":"b"}"#), claims.clone(), "duplicate field `kid`"),
        // Parameters the library does not read are checked by the node's reader.
        (String::from(r#"{"alg":"HS256","zip":"a","zip":"b"}"#), claims, "the key \"zip\" appears twice in one object"),
    ];
    for (header, claims, message) in cases {
        assert_refused(&raw_hs256_token(&header, &claims), &config, message);
    }
}
