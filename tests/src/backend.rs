//! Where the native host keeps the node's state: a SQLite file, or memory.

use std::path::Path;
use std::sync::Mutex;

use ledger_node_core::store::{Entry, MemoryStore, Scan, Store, StoreError, WriteBatch, WriteError};

use crate::sqlite::SqliteStore;

/// The store behind the component's `store` import.
#[derive(Debug)]
pub enum Backend {
    /// A SQLite database (a file, or a private in-memory one).
    Sqlite(SqliteStore),
    /// The core's in-memory store, behind a lock.
    Memory(Mutex<MemoryStore>),
}

fn poisoned<T>(_: std::sync::PoisonError<T>) -> StoreError {
    StoreError::new("memory store: the lock was poisoned by a panic")
}

impl Backend {
    /// A SQLite database file at `path`, created if absent.
    pub fn sqlite(path: &Path) -> Result<Self, StoreError> {
        SqliteStore::open(path).map(Backend::Sqlite)
    }

    /// An empty in-memory store.
    pub fn memory() -> Self {
        Backend::Memory(Mutex::new(MemoryStore::new()))
    }

    /// The value of `key`.
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        match self {
            Backend::Sqlite(s) => s.get(key),
            Backend::Memory(m) => Ok(m.lock().map_err(poisoned)?.get_now(key)),
        }
    }

    /// The values of `keys`, in order.
    pub fn get_many(&self, keys: &[&[u8]]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        match self {
            Backend::Sqlite(s) => s.get_many(keys),
            Backend::Memory(m) => {
                let m = m.lock().map_err(poisoned)?;
                Ok(keys.iter().map(|k| m.get_now(k)).collect())
            }
        }
    }

    /// The entries of `scan`.
    pub fn scan(&self, scan: &Scan) -> Result<Vec<Entry>, StoreError> {
        match self {
            Backend::Sqlite(s) => s.scan(scan),
            Backend::Memory(m) => Ok(m.lock().map_err(poisoned)?.scan_now(scan)),
        }
    }

    /// Applies `batch` atomically.
    pub fn write(&self, batch: &WriteBatch) -> Result<(), WriteError> {
        match self {
            Backend::Sqlite(s) => s.write(batch),
            Backend::Memory(m) => m.lock().map_err(poisoned)?.write_now(batch),
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
