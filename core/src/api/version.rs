//! `GET /version`: the crate version and the build's commit time.

use alloc::string::String;

use serde::Serialize;

use crate::model::time::Timestamp;

/// The body of `GET /version`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Version {
    /// The node's version (the workspace version).
    pub version: &'static str,
    /// Commit time of the source the node was built from, RFC 3339 UTC.
    pub commit_ts: String,
}

/// The running build's version.
pub fn current() -> Version {
    let epoch: i64 = env!("LEDGER_NODE_COMMIT_EPOCH").parse().unwrap_or(0);
    let commit = Timestamp::from_unix_seconds(epoch).unwrap_or(Timestamp::UNIX_EPOCH);
    Version { version: env!("CARGO_PKG_VERSION"), commit_ts: alloc::format!("{commit}") }
}
