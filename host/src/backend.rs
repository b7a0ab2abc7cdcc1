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
//!
//! Each backend holds the node's body cache ([`BodyCache`], `bodies.rs`): the values
//! the core remembers, shared by every instance, which the backend's own writes
//! forget ([`BodyCache::forget_after`]) so that no write can miss it.

use std::sync::{Mutex, PoisonError};

use ledger_node_core::model::error::StoreError;
use ledger_node_core::storage::store::{Entry, MemoryStore, Op, Scan, Store, WriteBatch, WriteError};

use crate::bodies::BodyCache;

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

    /// The body cache in front of this backend, which its writes forget.
    fn bodies(&self) -> &BodyCache;
}

/// The core's in-memory store, behind a lock: a node without persistence.
#[derive(Debug)]
pub struct MemoryBackend {
    /// The store, keeping no remembered values of its own: [`Self::bodies`] does.
    store: Mutex<MemoryStore>,
    bodies: BodyCache,
}

impl Default for MemoryBackend {
    fn default() -> Self {
        Self::new()
    }
}

impl MemoryBackend {
    /// An empty store, with a body cache of [`crate::bodies::DEFAULT_BYTES`].
    pub fn new() -> Self {
        MemoryBackend { store: Mutex::new(MemoryStore::new().remembering(0)), bodies: BodyCache::default() }
    }

    /// The same store, with a body cache of at most `bytes` (`0`: none).
    pub fn with_body_cache(self, bytes: u64) -> Self {
        MemoryBackend { bodies: BodyCache::new(bytes), ..self }
    }

    fn store(&self) -> Result<std::sync::MutexGuard<'_, MemoryStore>, StoreError> {
        self.store.lock().map_err(|_: PoisonError<_>| StoreError::new("memory store: the lock was poisoned by a panic"))
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
        self.write_batch(&batch)
    }

    fn write_batch(&self, batch: &WriteBatch) -> Result<(), WriteError> {
        let store = self.store()?;
        let written = store.write_now(batch);
        // Forgotten before the lock is let go: no read of the new state comes first.
        self.bodies.forget_after(&batch.ops);
        drop(store);
        written
    }

    fn sync(&self) -> Result<(), StoreError> {
        Ok(())
    }

    fn bodies(&self) -> &BodyCache {
        &self.bodies
    }
}

/// The core's port over a backend, for running core code natively: the layout check
/// at start-up, the storage contract suite, the scenario suite's core runner.
///
/// It remembers into the backend's body cache under the generation current when the
/// value is offered, not when the reads it was computed from began (a port does not
/// know where a call begins, as an instance does): so it is for code that nothing
/// writes beside, as at start-up, in the contract suite and in the benchmark's reads.
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
    fn recall(&self, key: &[u8]) -> Option<Vec<u8>> {
        self.0.bodies().recall(key)
    }
    fn remember(&self, key: &[u8], value: &[u8]) {
        let bodies = self.0.bodies();
        bodies.remember(key, value, bodies.generation());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_memory_backend_keeps_remembered_bodies_in_its_cache_until_a_reset() {
        let backend = MemoryBackend::new().with_body_cache(1 << 20);
        let bodies = backend.bodies();
        bodies.remember(b"rendered", b"body", bodies.generation());
        backend.write(&[OpRef::Put { key: b"k", value: b"v" }]).expect("a put");
        assert_eq!(bodies.recall(b"rendered"), Some(b"body".to_vec()));
        let mut reset = WriteBatch::new();
        reset.delete_range(Vec::new(), None);
        backend.write_batch(&reset).expect("the reset");
        assert_eq!((bodies.recall(b"rendered"), bodies.stats().bytes), (None, 0));
        let off = MemoryBackend::new().with_body_cache(0);
        off.bodies().remember(b"rendered", b"body", 0);
        assert_eq!(off.bodies().recall(b"rendered"), None);
    }
}
