//! The operator's endpoints under `/v0/admin/`: the storage check and the reset. Every
//! admin call first passes [`crate::api::auth::authorize`].

use alloc::vec::Vec;

use crate::api::http::Response;
use crate::model::config::{self, Config};
use crate::model::error::Error;
use crate::storage::store::{Prefixed, Store, WriteBatch, contract, write_failed};

/// The first byte of keys the node keeps for itself outside the ledger's keyspace
/// (the storage check's scratch namespaces).
pub const SCRATCH_PREFIX: u8 = 0xff;

/// `POST /v0/admin/store-check`: runs the storage contract against the live backend,
/// in a fresh scratch namespace that it removes afterwards.
pub async fn store_check<S: Store>(store: &S, entropy: &[u8; 32]) -> Result<Response, Error> {
    let mut prefix = Vec::with_capacity(32);
    prefix.push(SCRATCH_PREFIX);
    prefix.extend_from_slice(b"store-check/");
    for byte in entropy.iter().take(8) {
        prefix.extend_from_slice(alloc::format!("{byte:02x}").as_bytes());
    }
    prefix.push(b'/');
    let namespace = Prefixed::new(store, prefix);
    let report = contract::run(&namespace).await;
    // Remove whatever a failed check left behind.
    namespace.inner().write(&namespace.clear_batch()).await.map_err(write_failed)?;
    Ok(Response::ok(&report))
}

/// `POST /v0/admin/reset`: removes every key but the layout version, when the operator
/// allowed it.
pub async fn reset<S: Store>(store: &S, config: &Config) -> Result<Response, Error> {
    if !config.allow_reset {
        return Err(Error::Forbidden(alloc::format!(
            "reset is disabled: set {}=true to allow wiping this node",
            config::ALLOW_RESET
        )));
    }
    let mut batch = WriteBatch::new();
    batch.delete_range(Vec::new(), None);
    // The store is still of this layout: a host checked it before serving.
    crate::storage::layout::stamp(&mut batch, &config.names);
    store.write(&batch).await.map_err(write_failed)?;
    Ok(Response::ok(&serde_json::json!({ "reset": true })))
}
