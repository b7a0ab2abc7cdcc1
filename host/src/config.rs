//! The native host's configuration: the `LEDGER_NODE_*` variables from the process
//! environment, checked at start-up so that a bad value stops the node before it
//! serves anything.
//!
//! Those are the component's (the core parses them); the host's own settings are
//! command-line flags, a few of which a variable can set too ([`BODY_CACHE_BYTES`]).

use ledger_node_core::Config;
use ledger_node_core::model::config::NAMES;

/// `serve --body-cache-bytes`, from the environment: the body cache's bound in bytes
/// (`bodies.rs`), `0` turning it off. The flag wins when both are given.
pub const BODY_CACHE_BYTES: &str = "LEDGER_NODE_BODY_CACHE_BYTES";

/// The configuration variables set in this process's environment, checked.
pub fn from_environment() -> anyhow::Result<Vec<(String, String)>> {
    let vars: Vec<(String, String)> =
        NAMES.iter().filter_map(|name| Some((name.to_string(), std::env::var(name).ok()?))).collect();
    check(&vars)?;
    Ok(vars)
}

/// Fails with the variable's name when a value cannot be used.
pub fn check(vars: &[(String, String)]) -> anyhow::Result<Config> {
    Config::from_pairs(vars.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .map_err(|e| anyhow::anyhow!("configuration: {e}"))
}
