//! Configuration, parsed once from the host's name-value source.
//!
//! Every host hands the same names ([`NAMES`]) to [`Config::from_lookup`]: environment
//! variables for the native host, `[vars]` and secrets for the worker, the WASI
//! environment for the component. A bad value is an error naming the variable, so a
//! node never starts half-configured.
//!
//! | name | meaning | default |
//! |---|---|---|
//! | `LEDGER_NODE_ADMIN_TOKEN` | bearer token for `/v0/admin/*`; unset: those answer 403 | unset |
//! | `LEDGER_NODE_JWT_HS256_SECRET` | HS256 secret for wallet tokens (development) | unset |
//! | `LEDGER_NODE_JWT_JWKS` | JWK set of RS256, ES256 and EdDSA public keys | unset |
//! | `LEDGER_NODE_JWT_AUDIENCE` | required `aud` of wallet tokens; unset: not checked | unset |
//! | `LEDGER_NODE_JWT_MAX_TTL_HOURS` | the furthest ahead a wallet token's `exp` may be, whole hours, at least 1 | 24 |
//! | `LEDGER_NODE_SNAPSHOT_PERIOD_HOURS` | snapshot cadence, 1 to 24 hours | 3 |
//! | `LEDGER_NODE_NAMES_ROOT` / `LEDGER_NODE_NAMES_COIN` | template naming; the coin also spells the price votes path and field and the coin rules context key ([`crate::model::names`]) | `Platform` / `Coin` |
//! | `LEDGER_NODE_NAMES_ANS` | the name service's acronym: the names of the entries derived from the DSO rules end in `.<acronym>` in lower case ([`crate::api::scan::lookups`]) | `ans` |
//! | `LEDGER_NODE_ALLOW_RESET` | whether `POST /v0/admin/reset` may wipe the node | `false` |
//! | `LEDGER_NODE_STARTED_AT` | when the host started, for the uptime of `GET /status`; set by the host | unset |
//! | `LEDGER_NODE_PORTS` | the ports the host serves on, by name (`public=8080,metrics=9090`), for `GET /status`; set by the host | unset |

use alloc::collections::BTreeMap;
use alloc::string::{String, ToString};
use core::fmt;

use crate::model::jwks::KeySet;
use crate::model::time::Timestamp;

/// Bearer token for `/v0/admin/*`.
pub const ADMIN_TOKEN: &str = "LEDGER_NODE_ADMIN_TOKEN";
/// HS256 secret for wallet tokens (development).
pub const JWT_HS256_SECRET: &str = "LEDGER_NODE_JWT_HS256_SECRET";
/// JWK set of public keys for wallet tokens (production).
pub const JWT_JWKS: &str = "LEDGER_NODE_JWT_JWKS";
/// Required `aud` of wallet tokens.
pub const JWT_AUDIENCE: &str = "LEDGER_NODE_JWT_AUDIENCE";
/// The furthest ahead, in hours, a wallet token's expiry may be.
pub const JWT_MAX_TTL_HOURS: &str = "LEDGER_NODE_JWT_MAX_TTL_HOURS";
/// Snapshot cadence in hours.
pub const SNAPSHOT_PERIOD_HOURS: &str = "LEDGER_NODE_SNAPSHOT_PERIOD_HOURS";
/// Module root of template names.
pub const NAMES_ROOT: &str = "LEDGER_NODE_NAMES_ROOT";
/// Currency word of template names.
pub const NAMES_COIN: &str = "LEDGER_NODE_NAMES_COIN";
/// The name service's acronym, in the names of the ANS entries of the DSO and the SVs.
pub const NAMES_ANS: &str = "LEDGER_NODE_NAMES_ANS";
/// The name service's acronym when [`NAMES_ANS`] is unset.
pub const DEFAULT_ANS: &str = "ans";
/// The module root of template names when [`NAMES_ROOT`] is unset.
pub const DEFAULT_ROOT: &str = "Platform";
/// The currency word when [`NAMES_COIN`] is unset.
pub const DEFAULT_COIN: &str = "Coin";

/// Whether `POST /v0/admin/reset` may wipe the node's state.
pub const ALLOW_RESET: &str = "LEDGER_NODE_ALLOW_RESET";

/// When the process (or isolate) serving the node started, RFC 3339 UTC: set by the
/// host, for the uptime of `GET /status`.
pub const STARTED_AT: &str = "LEDGER_NODE_STARTED_AT";

/// The ports the host serves on, by name (`public=8080,metrics=9090`): set by the
/// host, for the `ports` of `GET /status`.
pub const PORTS: &str = "LEDGER_NODE_PORTS";

/// Every configuration name the node reads.
pub const NAMES: [&str; 12] = [
    ADMIN_TOKEN,
    JWT_HS256_SECRET,
    JWT_JWKS,
    JWT_AUDIENCE,
    JWT_MAX_TTL_HOURS,
    SNAPSHOT_PERIOD_HOURS,
    NAMES_ROOT,
    NAMES_COIN,
    NAMES_ANS,
    ALLOW_RESET,
    STARTED_AT,
    PORTS,
];

/// The node's configuration.
#[derive(Clone, PartialEq, Eq)]
pub struct Config {
    /// Bearer token for the admin endpoints; `None`: they answer 403.
    pub admin_token: Option<String>,
    /// HS256 secret for wallet tokens.
    pub jwt_hs256_secret: Option<String>,
    /// The JWK set, parsed.
    pub jwt_jwks: Option<KeySet>,
    /// Required audience of wallet tokens; `None`: not checked.
    pub jwt_audience: Option<String>,
    /// The furthest ahead of now a wallet token's `exp` may be, in hours (at least 1,
    /// 24 by default): a token that claims to live longer is refused.
    pub jwt_max_ttl_hours: u32,
    /// Snapshot cadence, hours (1 to 24).
    pub snapshot_period_hours: u32,
    /// Template naming.
    pub names: Names,
    /// The name service's acronym, in lower case (`ans` by default; `cns` on the
    /// network whose name service is the CNS).
    pub ans_acronym: String,
    /// Whether the reset endpoint may wipe the node.
    pub allow_reset: bool,
    /// When the host serving the node started ([`STARTED_AT`]); `None`: not said.
    pub started_at: Option<Timestamp>,
    /// The ports the host serves on, by name ([`PORTS`]); empty: not said.
    pub ports: BTreeMap<String, u16>,
}

impl fmt::Debug for Config {
    /// Never prints secrets.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Config")
            .field("admin_token", &self.admin_token.as_ref().map(|_| "<set>"))
            .field("jwt_hs256_secret", &self.jwt_hs256_secret.as_ref().map(|_| "<set>"))
            .field("jwt_jwks", &self.jwt_jwks.as_ref().map(|_| "<set>"))
            .field("jwt_audience", &self.jwt_audience)
            .field("jwt_max_ttl_hours", &self.jwt_max_ttl_hours)
            .field("snapshot_period_hours", &self.snapshot_period_hours)
            .field("names", &self.names)
            .field("ans_acronym", &self.ans_acronym)
            .field("allow_reset", &self.allow_reset)
            .field("started_at", &self.started_at)
            .field("ports", &self.ports)
            .finish()
    }
}

/// How the network spells its template names ([`crate::model::names`]), and the API
/// spellings that follow the currency word ([`crate::model::names::ApiNames`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Names {
    /// Module root, `Platform` by default.
    pub root: String,
    /// Currency word, `Coin` by default.
    pub coin: String,
}

/// A configuration value that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// The variable's name.
    pub name: &'static str,
    /// What is wrong with it.
    pub problem: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.name, self.problem)
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            admin_token: None,
            jwt_hs256_secret: None,
            jwt_jwks: None,
            jwt_audience: None,
            jwt_max_ttl_hours: 24,
            snapshot_period_hours: 3,
            names: Names { root: DEFAULT_ROOT.into(), coin: DEFAULT_COIN.into() },
            ans_acronym: DEFAULT_ANS.into(),
            allow_reset: false,
            started_at: None,
            ports: BTreeMap::new(),
        }
    }
}

impl Config {
    /// Reads every name of [`NAMES`] through `lookup` (absent: `None`).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Config, ConfigError> {
        let mut config = Config::default();
        let secret = |name: &'static str| -> Result<Option<String>, ConfigError> {
            match lookup(name) {
                Some(v) if v.is_empty() => {
                    Err(ConfigError { name, problem: "is set but empty; unset it or give a value".into() })
                }
                other => Ok(other),
            }
        };
        config.admin_token = secret(ADMIN_TOKEN)?;
        config.jwt_hs256_secret = secret(JWT_HS256_SECRET)?;
        config.jwt_audience = secret(JWT_AUDIENCE)?;
        config.jwt_jwks = match secret(JWT_JWKS)? {
            Some(text) => Some(KeySet::parse(&text).map_err(|problem| ConfigError { name: JWT_JWKS, problem })?),
            None => None,
        };
        if let Some(hours) = lookup(JWT_MAX_TTL_HOURS) {
            config.jwt_max_ttl_hours = match hours.trim().parse::<u32>() {
                Ok(h) if h >= 1 => h,
                _ => {
                    return Err(ConfigError {
                        name: JWT_MAX_TTL_HOURS,
                        problem: alloc::format!(
                            "must be a whole number of hours from 1 to {}, not {hours:?}",
                            u32::MAX
                        ),
                    });
                }
            };
        }
        if let Some(hours) = lookup(SNAPSHOT_PERIOD_HOURS) {
            config.snapshot_period_hours = match hours.trim().parse::<u32>() {
                Ok(h @ 1..=24) => h,
                _ => {
                    return Err(ConfigError {
                        name: SNAPSHOT_PERIOD_HOURS,
                        problem: alloc::format!("must be a whole number of hours from 1 to 24, not {hours:?}"),
                    });
                }
            };
        }
        for (name, slot) in [(NAMES_ROOT, &mut config.names.root), (NAMES_COIN, &mut config.names.coin)] {
            if let Some(value) = lookup(name) {
                let valid = value.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
                    && value.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
                if !valid {
                    return Err(ConfigError {
                        name,
                        problem: alloc::format!(
                            "must be an identifier (a letter, then letters, digits or _), not {value:?}"
                        ),
                    });
                }
                *slot = value;
            }
        }
        if let Some(acronym) = lookup(NAMES_ANS) {
            if acronym.is_empty() || !acronym.chars().all(|c| c.is_ascii_alphanumeric()) {
                return Err(ConfigError {
                    name: NAMES_ANS,
                    problem: alloc::format!("must be letters and digits (an acronym such as ANS), not {acronym:?}"),
                });
            }
            config.ans_acronym = acronym.to_ascii_lowercase();
        }
        if let Some(flag) = lookup(ALLOW_RESET) {
            config.allow_reset = match flag.trim() {
                "true" | "1" => true,
                "false" | "0" => false,
                other => {
                    return Err(ConfigError {
                        name: ALLOW_RESET,
                        problem: alloc::format!("must be true or false, not {other:?}"),
                    });
                }
            };
        }
        if let Some(text) = lookup(STARTED_AT) {
            config.started_at = Some(Timestamp::parse(text.trim()).map_err(|_| ConfigError {
                name: STARTED_AT,
                problem: alloc::format!("must be an RFC 3339 UTC time (2024-01-02T03:04:05Z), not {text:?}"),
            })?);
        }
        if let Some(text) = lookup(PORTS) {
            config.ports = parse_ports(&text)
                .map_err(|problem| ConfigError { name: PORTS, problem: alloc::format!("{problem}, in {text:?}") })?;
        }
        Ok(config)
    }

    /// Configuration from name-value pairs (later pairs win).
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)> + Clone) -> Result<Config, ConfigError> {
        Config::from_lookup(|name| {
            pairs.clone().into_iter().filter(|(n, _)| *n == name).last().map(|(_, v)| v.to_string())
        })
    }
}

/// The value of [`PORTS`]: comma-separated `name=port` pairs, each name of ASCII
/// letters, digits, `-` and `_`, given once, each port from 1 to 65535; empty: none.
fn parse_ports(text: &str) -> Result<BTreeMap<String, u16>, String> {
    let mut ports = BTreeMap::new();
    for pair in text.split(',').map(str::trim).filter(|pair| !pair.is_empty()) {
        let Some((name, port)) = pair.split_once('=') else {
            return Err(alloc::format!("{pair:?} is not name=port"));
        };
        let name = name.trim();
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_') {
            return Err(alloc::format!("{name:?} is not a port's name (letters, digits, - and _)"));
        }
        let port = match port.trim().parse::<u16>() {
            Ok(port) if port > 0 => port,
            _ => return Err(alloc::format!("the port of {name} must be from 1 to 65535, not {:?}", port.trim())),
        };
        if ports.insert(name.to_string(), port).is_some() {
            return Err(alloc::format!("{name} is given twice"));
        }
    }
    Ok(ports)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_are_named_pairs_and_a_bad_one_is_refused_naming_it() {
        let config = Config::from_pairs([(PORTS, "public=8080, metrics=9090")]).unwrap();
        assert_eq!(
            config.ports.into_iter().collect::<alloc::vec::Vec<_>>(),
            [("metrics".into(), 9090), ("public".into(), 8080)]
        );
        assert!(Config::from_pairs([(PORTS, "")]).unwrap().ports.is_empty());
        for (bad, named) in [
            ("public", "\"public\" is not name=port"),
            ("public=0", "must be from 1 to 65535"),
            ("public=70000", "must be from 1 to 65535"),
            ("pub lic=80", "is not a port's name"),
            ("public=80,public=81", "public is given twice"),
        ] {
            let refused = Config::from_pairs([(PORTS, bad)]).unwrap_err();
            assert_eq!(refused.name, PORTS);
            assert!(refused.problem.contains(named), "{bad}: {}", refused.problem);
        }
    }

    #[test]
    fn defaults_apply_when_nothing_is_set() {
        assert_eq!(Config::from_pairs([]).unwrap(), Config::default());
        assert_eq!(Config::default().snapshot_period_hours, 3);
        assert_eq!(Config::default().jwt_max_ttl_hours, 24);
        assert_eq!(Config::default().names.root, "Platform");
    }

    #[test]
    fn values_are_read() {
        let c = Config::from_pairs([
            (ADMIN_TOKEN, "t"),
            (SNAPSHOT_PERIOD_HOURS, "6"),
            (NAMES_ROOT, "Splice"),
            (NAMES_COIN, "Amulet"),
            (JWT_JWKS, r#"{"keys":[]}"#),
            (ALLOW_RESET, "true"),
            (JWT_MAX_TTL_HOURS, "168"),
            (NAMES_ANS, "CNS"),
        ])
        .unwrap();
        assert_eq!(c.ans_acronym, "cns");
        assert_eq!(c.jwt_max_ttl_hours, 168);
        assert_eq!(c.admin_token.as_deref(), Some("t"));
        assert_eq!(c.snapshot_period_hours, 6);
        assert_eq!(c.names, Names { root: "Splice".into(), coin: "Amulet".into() });
        assert!(c.allow_reset);
    }

    #[test]
    fn a_bad_value_names_its_variable() {
        for (name, value) in [
            (SNAPSHOT_PERIOD_HOURS, "0"),
            (SNAPSHOT_PERIOD_HOURS, "three"),
            (SNAPSHOT_PERIOD_HOURS, "25"),
            (NAMES_ROOT, "Platform.Sub"),
            (NAMES_COIN, ""),
            (NAMES_ANS, ""),
            (NAMES_ANS, "a.ns"),
            (ADMIN_TOKEN, ""),
            (JWT_JWKS, "not json"),
            (JWT_JWKS, "{}"),
            (ALLOW_RESET, "yes"),
            (JWT_MAX_TTL_HOURS, "0"),
            (JWT_MAX_TTL_HOURS, "-1"),
            (JWT_MAX_TTL_HOURS, "1.5"),
            (JWT_MAX_TTL_HOURS, ""),
            (JWT_MAX_TTL_HOURS, "a day"),
        ] {
            let err = Config::from_pairs([(name, value)]).unwrap_err();
            assert_eq!(err.name, name, "{value}");
            assert!(alloc::format!("{err}").starts_with(name));
        }
    }

    #[test]
    fn debug_output_hides_secrets() {
        let c = Config::from_pairs([(ADMIN_TOKEN, "hunter2")]).unwrap();
        assert!(!alloc::format!("{c:?}").contains("hunter2"));
    }
}
