//! Where the native host keeps the node's state: a store directory ([`crate::lsm`]), or
//! memory.

use std::path::Path;
use std::sync::Mutex;

use ledger_node_core::model::error::StoreError;
use ledger_node_core::storage::store::{Entry, MemoryStore, Op, Scan, Store, WriteBatch, WriteError};

use crate::lsm::{LsmStore, OpRef};

/// The store behind the component's `store` import.
#[derive(Debug)]
pub enum Backend {
    /// A log-structured store in a directory.
    Lsm(LsmStore),
    /// The core's in-memory store, behind a lock.
    Memory(Mutex<MemoryStore>),
}

fn poisoned<T>(_: std::sync::PoisonError<T>) -> StoreError {
    StoreError::new("memory store: the lock was poisoned by a panic")
}

impl Backend {
    /// The store in directory `path`, created if absent; every commit is synced to disk
    /// before it returns.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        LsmStore::open(path).map(Backend::Lsm)
    }

    /// The store in directory `path` opened for a bulk load: commits are synced to disk
    /// by [`Backend::sync`], not each as it returns ([`LsmStore::open_bulk`]).
    pub fn open_bulk(path: &Path) -> Result<Self, StoreError> {
        LsmStore::open_bulk(path).map(Backend::Lsm)
    }

    /// Syncs every write so far to disk (nothing to do in memory).
    pub fn sync(&self) -> Result<(), StoreError> {
        match self {
            Backend::Lsm(s) => s.sync(),
            Backend::Memory(_) => Ok(()),
        }
    }

    /// An empty in-memory store.
    pub fn memory() -> Self {
        Backend::Memory(Mutex::new(MemoryStore::new()))
    }

    /// The value of `key`.
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        match self {
            Backend::Lsm(s) => s.get(key),
            Backend::Memory(m) => Ok(m.lock().map_err(poisoned)?.get_now(key)),
        }
    }

    /// The values of `keys`, in order.
    pub fn get_many(&self, keys: &[&[u8]]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        match self {
            Backend::Lsm(s) => s.get_many(keys),
            Backend::Memory(m) => {
                let m = m.lock().map_err(poisoned)?;
                Ok(keys.iter().map(|k| m.get_now(k)).collect())
            }
        }
    }

    /// The entries of `scan`.
    pub fn scan(&self, scan: &Scan) -> Result<Vec<Entry>, StoreError> {
        match self {
            Backend::Lsm(s) => s.scan(scan),
            Backend::Memory(m) => Ok(m.lock().map_err(poisoned)?.scan_now(scan)),
        }
    }

    /// Applies `batch` atomically.
    pub fn write(&self, batch: &WriteBatch) -> Result<(), WriteError> {
        match self {
            Backend::Lsm(s) => s.write(batch),
            Backend::Memory(m) => m.lock().map_err(poisoned)?.write_now(batch),
        }
    }

    /// Applies `ops`, which borrow their bytes (from the component's memory), atomically.
    pub fn write_ops(&self, ops: &[OpRef<'_>]) -> Result<(), WriteError> {
        match self {
            Backend::Lsm(s) => s.write_ops(ops),
            Backend::Memory(m) => {
                let batch = WriteBatch { ops: ops.iter().map(Op::to_owned_bytes).collect() };
                m.lock().map_err(poisoned)?.write_now(&batch)
            }
        }
    }
}

/// The core's port over the backend, for running core code natively (the storage
/// contract suite, the scenario suite's core runner).
impl Store for Backend {
    async fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        Backend::get(self, key)
    }
    async fn get_many(&self, keys: &[&[u8]]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        Backend::get_many(self, keys)
    }
    async fn scan(&self, scan: &Scan) -> Result<Vec<Entry>, StoreError> {
        Backend::scan(self, scan)
    }
    async fn write(&self, batch: &WriteBatch) -> Result<(), WriteError> {
        Backend::write(self, batch)
    }
}
