//! Wallet bearer tokens: who is calling.
//!
//! A wallet call carries `Authorization: Bearer <JWT>`. [`authenticate`] verifies the
//! token with [`jwt_compact`] and returns its subject, the ledger API user:
//!
//! | header `alg` | verified with | chosen how |
//! |---|---|---|
//! | `HS256` | `LEDGER_NODE_JWT_HS256_SECRET` | the one secret (development) |
//! | `RS256` | an `RSA` key of `LEDGER_NODE_JWT_JWKS` (2048, 3072 or 4096 bits) | by `kid` when the token has one, else every RSA key in turn |
//! | `ES256` | an `EC` key on `P-256` | likewise |
//! | `EdDSA` | an `OKP` key on `Ed25519` | likewise |
//! | `none`, anything else | refused | |
//!
//! A key is never used for an algorithm of another family: the token's `alg` picks the
//! key type first, so an `HS256` token "signed" with a public RSA key as secret meets
//! only the configured HS256 secret. A key whose JWK names an `alg` verifies only that
//! algorithm; one marked `"use": "enc"` or without `verify` in its `key_ops` verifies
//! nothing.
//!
//! Before the signature: a header with a `crit` parameter is refused (the node
//! implements no JWS extension, so it cannot honour one that is critical), and so is a
//! header or claims set that repeats a key.
//!
//! After the signature: `exp` is required and must not be before `env.now`, nor further
//! ahead of it than `LEDGER_NODE_JWT_MAX_TTL_HOURS` (24 hours by default), so a leaked
//! token is not good for years; `nbf` (if present) must not be after now; `exp`, `nbf`
//! and `iat` must be JSON integers (whole seconds), never fractions; `aud` (a string or
//! an array of strings) must contain `LEDGER_NODE_JWT_AUDIENCE` when that is set; and
//! `sub` must be a non-empty string of at most [`MAX_ID_BYTES`](crate::model::ids::MAX_ID_BYTES)
//! bytes (it is the wallet user id). There is no leeway: the host's clock is the node's
//! clock.
//!
//! Every refusal is a 401 that says what is wrong with the token (never the configured
//! secrets or keys). Whether the subject is an onboarded wallet user (403 otherwise) is
//! the caller's business ([`super`]).
//!
//! The JWK set is parsed with the configuration, once ([`crate::model::jwks`]): a key of a
//! supported type that cannot be read, a private key and a weak RSA key are
//! configuration errors; keys of types the node does not verify with are skipped.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use chrono::{DateTime, TimeDelta, Utc};
use jwt_compact::alg::{Ed25519, Es256, Hs256, Hs256Key, Rsa};
use jwt_compact::{AlgorithmExt, Claims, TimeOptions, Token, UntrustedToken, ValidationError};
use serde::Deserialize;
use serde_json::Value as Json;

use crate::model::config::Config;
use crate::model::error::Error;
use crate::model::ids;
use crate::model::json::{Json as StrictJson, Number};
use crate::model::jwks::{Jwk, PublicKey};
use crate::model::time::Timestamp;
use crate::model::update::Blob;

/// The verified subject of a wallet token: the ledger API user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subject(pub String);

/// The claims the node reads besides `exp`, `nbf` and `iat`.
#[derive(Debug, Deserialize)]
struct WalletClaims {
    #[serde(default)]
    sub: Option<Json>,
    #[serde(default)]
    aud: Option<Json>,
}

fn unauthorized(message: impl Into<String>) -> Error {
    Error::Unauthorized(message.into())
}

/// Verifies `token` against the configured keys at `now` and returns its subject.
pub fn authenticate(token: &str, config: &Config, now: Timestamp) -> Result<Subject, Error> {
    let untrusted = UntrustedToken::new(token)
        .map_err(|e| unauthorized(format!("the bearer token is not a well-formed JWT: {e}")))?;
    let header = part(token, 0)?;
    let header = StrictJson::parse(&header)
        .map_err(|e| unauthorized(format!("the bearer token is not a well-formed JWT: its header: {e}")))?;
    if header.as_object().is_some_and(|h| h.contains_key("crit")) {
        return Err(unauthorized(
            "the token's header has a crit parameter; this node implements no JWS extension, so it refuses such tokens",
        ));
    }
    let alg = untrusted.algorithm();
    let claims = match alg {
        "HS256" => {
            let secret = config.jwt_hs256_secret.as_deref().ok_or_else(|| {
                unauthorized(format!(
                    "HS256 tokens are not accepted: {} is not set",
                    crate::model::config::JWT_HS256_SECRET
                ))
            })?;
            let token = Hs256.validator::<WalletClaims>(&Hs256Key::new(secret)).validate(&untrusted);
            token.map_err(|e| signature_error(e, "the HS256 secret"))?
        }
        "RS256" | "ES256" | "EdDSA" => verify_with_key_set(&untrusted, alg, config)?,
        "none" => return Err(unauthorized("unsigned tokens (alg none) are never accepted")),
        other => {
            let shown: String = other.chars().take(32).collect();
            return Err(unauthorized(format!(
                "unsupported token algorithm {shown:?}; the node accepts HS256, RS256, ES256 and EdDSA"
            )));
        }
    };
    let raw_claims = part(token, 1)?;
    let raw_claims =
        StrictJson::parse(&raw_claims).map_err(|e| unauthorized(format!("the token's claims are malformed: {e}")))?;
    check_claims(claims.claims(), &raw_claims, config, now)
}

/// The decoded bytes of part `index` (0: the header, 1: the claims) of a token that
/// parsed as a JWT, so that the node reads them with its own strict reader.
fn part(token: &str, index: usize) -> Result<Vec<u8>, Error> {
    let malformed = || unauthorized("the bearer token is not a well-formed JWT");
    let text = token.split('.').nth(index).ok_or_else(malformed)?;
    // Base64url without padding, as standard base64 with padding.
    let mut standard: String = text
        .chars()
        .map(|c| match c {
            '-' => '+',
            '_' => '/',
            c => c,
        })
        .collect();
    while !standard.len().is_multiple_of(4) {
        standard.push('=');
    }
    Ok(Blob::parse(&standard).map_err(|_| malformed())?.decode())
}

/// Tries the keys of the JWK set that may verify `alg`.
fn verify_with_key_set(
    untrusted: &UntrustedToken<'_>,
    alg: &str,
    config: &Config,
) -> Result<Token<WalletClaims>, Error> {
    let set = config.jwt_jwks.as_ref().ok_or_else(|| {
        unauthorized(format!("{alg} tokens are not accepted: {} is not set", crate::model::config::JWT_JWKS))
    })?;
    let kid = untrusted.header().key_id.as_deref();
    let mut candidates: Vec<(usize, &Jwk)> = Vec::new();
    for (index, jwk) in set.keys().iter().enumerate() {
        if let Some(kid) = kid {
            if jwk.kid.as_deref() != Some(kid) {
                continue;
            }
            // The token names this key: say precisely why it cannot be used.
            let name = jwk.name(index);
            if jwk.key.algorithm() != alg {
                return Err(unauthorized(format!("{name} is {}; it cannot verify {alg} tokens", jwk.key.describe())));
            }
            if jwk.alg.as_deref().is_some_and(|allowed| allowed != alg) {
                return Err(unauthorized(format!("{name} does not allow {alg}")));
            }
            if !jwk.verifies {
                return Err(unauthorized(format!("{name} is not a signature verification key")));
            }
        } else if jwk.key.algorithm() != alg || jwk.alg.as_deref().is_some_and(|a| a != alg) || !jwk.verifies {
            continue;
        }
        candidates.push((index, jwk));
    }
    if candidates.is_empty() {
        return Err(unauthorized(match kid {
            Some(kid) => format!("no configured key has kid {:?}", kid.chars().take(64).collect::<String>()),
            None => format!("no configured key verifies {alg} tokens"),
        }));
    }
    let mut last_error = None;
    for (index, jwk) in &candidates {
        let result = match &jwk.key {
            PublicKey::Rsa(key) => Rsa::rs256().validator::<WalletClaims>(key).validate(untrusted),
            PublicKey::Es256(key) => Es256.validator::<WalletClaims>(key).validate(untrusted),
            PublicKey::Ed25519(key) => Ed25519.validator::<WalletClaims>(key).validate(untrusted),
        };
        match result {
            Ok(token) => return Ok(token),
            Err(e) => last_error = Some((e, jwk.name(*index))),
        }
    }
    let (error, name) = last_error.ok_or_else(|| Error::Internal("no candidate key was tried".into()))?;
    let name = if candidates.len() > 1 { format!("any configured {alg} key") } else { name };
    Err(signature_error(error, &name))
}

/// The 401 for a token that did not validate against `key` (a description of the key,
/// never its material).
fn signature_error(error: ValidationError, key: &str) -> Error {
    match error {
        ValidationError::MalformedClaims(e) => unauthorized(format!("the token's claims are malformed: {e}")),
        ValidationError::InvalidSignatureLen { expected, actual } => {
            unauthorized(format!("the token's signature has {actual} bytes, not the {expected} of its algorithm"))
        }
        ValidationError::AlgorithmMismatch { expected, actual } => {
            unauthorized(format!("the token's algorithm {actual:?} is not {expected}"))
        }
        _ => unauthorized(format!("the token's signature does not verify with {key}")),
    }
}

/// Checks `exp`, `nbf`, `iat`, `aud` and `sub` of signed claims; `raw` is the claims
/// set as sent, for what the parsed claims no longer tell (whether a time was an
/// integer).
fn check_claims(
    claims: &Claims<WalletClaims>,
    raw: &StrictJson<'_>,
    config: &Config,
    now: Timestamp,
) -> Result<Subject, Error> {
    for name in ["exp", "nbf", "iat"] {
        match raw.as_object().and_then(|claims| claims.get(name)) {
            None | Some(StrictJson::Number(Number::Unsigned(_) | Number::Negative(_))) => {}
            Some(StrictJson::Number(n)) => {
                return Err(unauthorized(format!("the token's {name} must be an integer (whole seconds), not {n}")));
            }
            Some(_) => return Err(unauthorized(format!("the token's {name} must be an integer (whole seconds)"))),
        }
    }
    let now = DateTime::<Utc>::from_timestamp_micros(now.micros())
        .ok_or_else(|| Error::Internal("the clock is out of range".into()))?;
    let options = TimeOptions::new(TimeDelta::zero(), move || now);
    claims.validate_expiration(&options).map_err(|e| match e {
        ValidationError::Expired => unauthorized("the token has expired (exp is in the past)"),
        _ => unauthorized("the token has no expiry; an exp claim is required"),
    })?;
    let max_hours = config.jwt_max_ttl_hours;
    let lifetime_left = claims.expiration.map_or(0, |exp| exp.timestamp().saturating_sub(now.timestamp()));
    if lifetime_left > i64::from(max_hours).saturating_mul(3600) {
        return Err(unauthorized(format!(
            "the token's exp is more than {max_hours} hours from now; this node accepts tokens that expire at most \
             {max_hours} hours ahead ({})",
            crate::model::config::JWT_MAX_TTL_HOURS
        )));
    }
    if claims.not_before.is_some() {
        claims
            .validate_maturity(&options)
            .map_err(|_| unauthorized("the token is not valid yet (nbf is in the future)"))?;
    }
    if let Some(audience) = &config.jwt_audience {
        let listed = match &claims.custom.aud {
            Some(Json::String(aud)) => aud == audience,
            Some(Json::Array(auds)) => auds.iter().any(|aud| aud.as_str() == Some(audience.as_str())),
            Some(_) => return Err(unauthorized("the token's aud must be a string or an array of strings")),
            None => return Err(unauthorized("the token has no aud claim; this node requires one")),
        };
        if !listed {
            return Err(unauthorized("the token's audience (aud) is not this node's"));
        }
    }
    match &claims.custom.sub {
        Some(Json::String(sub)) if !sub.is_empty() => match ids::length_problem(sub) {
            Some(problem) => Err(unauthorized(format!("the token's subject (sub) {problem}"))),
            None => Ok(Subject(sub.to_string())),
        },
        Some(Json::String(_)) | None => Err(unauthorized("the token has no subject; sub must name the wallet user")),
        Some(_) => Err(unauthorized("the token's sub must be a string")),
    }
}

#[cfg(test)]
#[path = "jwt_tests.rs"]
mod tests;
