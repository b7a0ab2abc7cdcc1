//! The JWK set of `LEDGER_NODE_JWT_JWKS`: the public keys wallet tokens are verified
//! with ([`crate::api::auth::jwt`]), parsed once, with the rest of the configuration.
//!
//! Keys of types the node does not verify with (`oct`, other curves) are skipped; a key
//! of a supported type that cannot be read, a private key, or an RSA key of another
//! size than 2048, 3072 or 4096 bits is a configuration error naming the key.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use jwt_compact::Algorithm;
use jwt_compact::alg::{Ed25519, Es256, RsaPublicKey, StrongKey};
use jwt_compact::jwk::JsonWebKey;
use serde_json::Value as Json;

/// A P-256 public key.
pub type Es256Key = <Es256 as Algorithm>::VerifyingKey;
/// An Ed25519 public key.
pub type Ed25519Key = <Ed25519 as Algorithm>::VerifyingKey;

/// A public key of the JWK set, by the family of algorithm it verifies.
#[derive(Debug, Clone)]
pub enum PublicKey {
    /// RS256.
    Rsa(RsaPublicKey),
    /// ES256.
    Es256(Es256Key),
    /// EdDSA.
    Ed25519(Ed25519Key),
}

impl PublicKey {
    /// The one JWS algorithm this key verifies.
    pub fn algorithm(&self) -> &'static str {
        match self {
            PublicKey::Rsa(_) => "RS256",
            PublicKey::Es256(_) => "ES256",
            PublicKey::Ed25519(_) => "EdDSA",
        }
    }

    /// What kind of key it is, for messages.
    pub fn describe(&self) -> &'static str {
        match self {
            PublicKey::Rsa(_) => "an RSA key",
            PublicKey::Es256(_) => "a P-256 key",
            PublicKey::Ed25519(_) => "an Ed25519 key",
        }
    }
}

/// One usable key of the JWK set.
#[derive(Debug, Clone)]
pub struct Jwk {
    /// `kid`, if the JWK has one.
    pub kid: Option<String>,
    /// `alg`, if the JWK names one.
    pub alg: Option<String>,
    /// Whether `use`/`key_ops` allow verifying signatures.
    pub verifies: bool,
    /// The key.
    pub key: PublicKey,
}

impl Jwk {
    /// How messages name the key at `index` of the set.
    pub fn name(&self, index: usize) -> String {
        match &self.kid {
            Some(kid) => format!("key {kid:?}"),
            None => format!("key #{index}"),
        }
    }
}

/// The public keys of `LEDGER_NODE_JWT_JWKS` that the node verifies with.
#[derive(Debug, Clone, Default)]
pub struct KeySet {
    /// The set as configured: two sets are the same when their texts are.
    source: String,
    keys: Vec<Jwk>,
}

impl PartialEq for KeySet {
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source
    }
}

impl Eq for KeySet {}

impl KeySet {
    /// Reads a JWK set (`{"keys": [...]}`). Keys of types the node does not verify with
    /// (`oct`, other curves) are skipped; a key of a supported type that cannot be read,
    /// a private key or an RSA key of another size than 2048, 3072 or 4096 bits is an
    /// error naming the key.
    pub fn parse(text: &str) -> Result<KeySet, String> {
        let json: Json = serde_json::from_str(text).map_err(|e| format!("is not valid JSON: {e}"))?;
        let keys = json
            .get("keys")
            .and_then(Json::as_array)
            .ok_or_else(|| String::from("must be a JWK set: an object with a \"keys\" array"))?;
        let mut set = KeySet { source: text.into(), keys: Vec::new() };
        for (index, jwk) in keys.iter().enumerate() {
            if let Some(key) = Self::parse_key(jwk).map_err(|problem| format!("keys[{index}]: {problem}"))? {
                set.keys.push(key);
            }
        }
        Ok(set)
    }

    fn parse_key(json: &Json) -> Result<Option<Jwk>, String> {
        let object = json.as_object().ok_or("a JWK must be an object")?;
        let text = |name: &str| -> Result<Option<String>, String> {
            match object.get(name) {
                None => Ok(None),
                Some(Json::String(s)) => Ok(Some(s.clone())),
                Some(_) => Err(format!("{name} must be a string")),
            }
        };
        let kid = text("kid")?;
        let alg = text("alg")?;
        let kty = text("kty")?.ok_or("missing kty")?;
        let crv = text("crv")?;
        let supported = match kty.as_str() {
            "RSA" => true,
            "EC" => crv.as_deref() == Some("P-256"),
            "OKP" => crv.as_deref() == Some("Ed25519"),
            _ => false,
        };
        if !supported {
            return Ok(None);
        }
        if object.contains_key("d") {
            return Err("holds private key material (d); give the public key only".into());
        }
        let key_ops_verify = match object.get("key_ops") {
            None => true,
            Some(Json::Array(ops)) => ops.iter().any(|op| op.as_str() == Some("verify")),
            Some(_) => return Err("key_ops must be an array".into()),
        };
        let verifies = text("use")?.is_none_or(|u| u == "sig") && key_ops_verify;
        let jwk: JsonWebKey<'_> =
            serde_json::from_value(json.clone()).map_err(|e| format!("unreadable {kty} key: {e}"))?;
        let key = match kty.as_str() {
            "RSA" => {
                let key = RsaPublicKey::try_from(&jwk).map_err(|e| format!("unreadable RSA key: {e}"))?;
                let strong = StrongKey::try_from(key)
                    .map_err(|_| String::from("an RSA key must have 2048, 3072 or 4096 bits"))?;
                PublicKey::Rsa(strong.into_inner())
            }
            "EC" => PublicKey::Es256(Es256Key::try_from(&jwk).map_err(|e| format!("unreadable P-256 key: {e}"))?),
            _ => PublicKey::Ed25519(Ed25519Key::try_from(&jwk).map_err(|e| format!("unreadable Ed25519 key: {e}"))?),
        };
        Ok(Some(Jwk { kid, alg, verifies, key }))
    }

    /// The keys, in the set's order.
    pub fn keys(&self) -> &[Jwk] {
        &self.keys
    }

    /// How many keys the node verifies with.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}
