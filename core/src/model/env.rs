//! What a host hands the core with every request, besides the request and the store.

use crate::model::config::Config;
use crate::model::time::Timestamp;

/// What the host passes in with every request: the core reads no clock, no random
/// source and no environment of its own.
#[derive(Debug, Clone, Copy)]
pub struct Env<'a> {
    /// The current time.
    pub now: Timestamp,
    /// Fresh random bytes from the host's secure random source.
    pub entropy: [u8; 32],
    /// The node's configuration.
    pub config: &'a Config,
}
