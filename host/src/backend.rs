//! Where the native host keeps the node's state: the [`Backend`] trait, the native
//! store the component's WIT `store` import is served from (`host/store_import.rs`).
//!
//! Two stores implement it: the log-structured store in a directory (`lsm.rs`) and
//! [`MemoryBackend`], the core's in-memory store behind a lock. A node holds its
//! backend as an `Arc<dyn Backend>`, chosen at start-up; a wrapper may stand in for it
//! for one request (an ingest batch's turn at the store, `ingest/in_turn.rs`). [`Port`]
//! runs core code natively over any backend. This module imports none of the others.
//!
//! Calls are synchronous and may come from several threads at once (one instance per
//! request), so a backend is `Send + Sync`; a write batch is atomic, and visible to
//! every read that starts after it returns.

use std::sync::{Mutex, PoisonError};

use ledger_node_core::model::error::StoreError;
use ledger_node_core::storage::store::{Entry, MemoryStore, Op, Scan, Store, WriteBatch, WriteError};

/// One operation of a write batch, borrowing its bytes: how a batch the component
/// wrote is read where it lies.
pub type OpRef<'a> = Op<&'a [u8]>;

/// The native store behind the component's `store` import: the port's operations,
/// synchronous, plus [`Backend::sync`].
pub trait Backend: std::fmt::Debug + Send + Sync {
    /// The value of `key`.
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError>;

    /// The values of `keys`, in order.
    fn get_many(&self, keys: &[&[u8]]) -> Result<Vec<Option<Vec<u8>>>, StoreError>;

    /// The entries of `scan`.
    fn scan(&self, scan: &Scan) -> Result<Vec<Entry>, StoreError>;

    /// Applies `ops`, which borrow their bytes (from the component's memory), atomically.
    fn write(&self, ops: &[OpRef<'_>]) -> Result<(), WriteError>;

    /// Applies `batch`, which owns its bytes, atomically.
    fn write_batch(&self, batch: &WriteBatch) -> Result<(), WriteError> {
        let ops: Vec<OpRef<'_>> = batch.ops.iter().map(Op::as_bytes).collect();
        self.write(&ops)
    }

    /// Syncs every write so far to disk (the end of a bulk load); nothing to do in
    /// memory.
    fn sync(&self) -> Result<(), StoreError>;
}

/// The core's in-memory store, behind a lock: a node without persistence.
#[derive(Debug, Default)]
pub struct MemoryBackend(Mutex<MemoryStore>);

impl MemoryBackend {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn store(&self) -> Result<std::sync::MutexGuard<'_, MemoryStore>, StoreError> {
        self.0.lock().map_err(|_: PoisonError<_>| StoreError::new("memory store: the lock was poisoned by a panic"))
    }
}

impl Backend for MemoryBackend {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self.store()?.get_now(key))
    }

    fn get_many(&self, keys: &[&[u8]]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        let store = self.store()?;
        Ok(keys.iter().map(|k| store.get_now(k)).collect())
    }

    fn scan(&self, scan: &Scan) -> Result<Vec<Entry>, StoreError> {
        Ok(self.store()?.scan_now(scan))
    }

    fn write(&self, ops: &[OpRef<'_>]) -> Result<(), WriteError> {
        let batch = WriteBatch { ops: ops.iter().map(Op::to_owned_bytes).collect() };
        self.store()?.write_now(&batch)
    }

    fn write_batch(&self, batch: &WriteBatch) -> Result<(), WriteError> {
        self.store()?.write_now(batch)
    }

    fn sync(&self) -> Result<(), StoreError> {
        Ok(())
    }
}

/// The core's port over a backend, for running core code natively: the layout check
/// at start-up, the storage contract suite, the scenario suite's core runner.
#[derive(Debug, Clone, Copy)]
pub struct Port<'a>(pub &'a dyn Backend);

impl Store for Port<'_> {
    async fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        self.0.get(key)
    }
    async fn get_many(&self, keys: &[&[u8]]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        self.0.get_many(keys)
    }
    async fn scan(&self, scan: &Scan) -> Result<Vec<Entry>, StoreError> {
        self.0.scan(scan)
    }
    async fn write(&self, batch: &WriteBatch) -> Result<(), WriteError> {
        self.0.write_batch(batch)
    }
}
