//! The core's storage port over the component's `store` import.

use ledger_node_core::model::error::StoreError;
use ledger_node_core::storage::store::{Entry, Scan, Store, WriteBatch, WriteError};

use crate::bindings::ledger::node::store as wit;
use crate::convert;

/// The host's store, as imported through WIT. Every call completes synchronously;
/// `recall` and `remember` reach the host's cache, shared by all its instances.
#[derive(Debug, Clone, Copy)]
pub struct WitStore;

impl Store for WitStore {
    async fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        wit::get(key).map_err(StoreError::new)
    }

    async fn get_many(&self, keys: &[&[u8]]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        let values = wit::get_many(keys).map_err(StoreError::new)?;
        if values.len() == keys.len() {
            Ok(values)
        } else {
            Err(StoreError::new(format!(
                "the host's get-many answered {} values for {} keys",
                values.len(),
                keys.len()
            )))
        }
    }

    async fn scan(&self, scan: &Scan) -> Result<Vec<Entry>, StoreError> {
        wit::scan(convert::scan(scan)).map(convert::entries).map_err(StoreError::new)
    }

    async fn write(&self, batch: &WriteBatch) -> Result<(), WriteError> {
        let ops: Vec<wit::Op> = batch.ops.iter().map(convert::op).collect();
        wit::write(&ops).map_err(convert::write_error)
    }

    fn recall(&self, key: &[u8]) -> Option<Vec<u8>> {
        wit::recall(key)
    }

    fn remember(&self, key: &[u8], value: &[u8]) {
        wit::remember(key, value);
    }
}
