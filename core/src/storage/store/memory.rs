//! An in-memory [`Store`]: a `BTreeMap` behind a `RefCell`.
//!
//! As a [`Store`] it holds the node's keyspace and keeps its rules: a scan or a write
//! that [`super::access`] refuses fails with a [`StoreError`] naming the table and the
//! range, as the worker's store would fail it. So every core test, which runs on this
//! store, keeps the rules the worker relies on. [`MemoryStore::without_access_rules`]
//! is a store of any bytes (the storage contract runs on it), and the synchronous
//! methods (`get_now`, `scan_now`, `write_now`) are the bare map either way: for hosts
//! that wrap it, and for tests that look inside.

use alloc::collections::BTreeMap;
use alloc::vec::Vec;
use core::cell::RefCell;
use core::ops::Bound;

use super::{Entry, Op, Scan, Store, StoreError, WriteBatch, WriteError, access, first_failed_precondition};

/// An in-memory ordered key-value store, for tests and for hosts without persistence.
#[derive(Debug)]
pub struct MemoryStore {
    map: RefCell<BTreeMap<Vec<u8>, Vec<u8>>>,
    /// Whether its [`Store`] methods keep the keyspace's access rules.
    access_rules: bool,
}

impl Default for MemoryStore {
    fn default() -> Self {
        MemoryStore::new()
    }
}

impl MemoryStore {
    /// An empty store of the node's keyspace, which refuses what breaks its access rules
    /// (see the [store port](crate::storage::store)).
    pub fn new() -> Self {
        MemoryStore { map: RefCell::default(), access_rules: true }
    }

    /// An empty store of any keys: a plain ordered map, for the storage contract.
    pub fn without_access_rules() -> Self {
        MemoryStore { map: RefCell::default(), access_rules: false }
    }

    /// How many keys are held.
    pub fn len(&self) -> usize {
        self.map.borrow().len()
    }

    /// Whether no key is held.
    pub fn is_empty(&self) -> bool {
        self.map.borrow().is_empty()
    }

    /// The value of `key`, synchronously.
    pub fn get_now(&self, key: &[u8]) -> Option<Vec<u8>> {
        self.map.borrow().get(key).cloned()
    }

    /// The entries of `scan`, synchronously.
    pub fn scan_now(&self, scan: &Scan) -> Vec<Entry> {
        let map = self.map.borrow();
        let upper = scan.end.as_deref().map_or(Bound::Unbounded, Bound::Excluded);
        if scan.end.as_deref().is_some_and(|end| end <= scan.start.as_slice()) {
            return Vec::new();
        }
        let range = map.range::<[u8], _>((Bound::Included(scan.start.as_slice()), upper));
        let take = usize::try_from(scan.limit).unwrap_or(usize::MAX);
        let clone = |(k, v): (&Vec<u8>, &Vec<u8>)| (k.clone(), v.clone());
        if scan.reverse { range.rev().take(take).map(clone).collect() } else { range.take(take).map(clone).collect() }
    }

    /// Applies `batch`, synchronously.
    pub fn write_now(&self, batch: &WriteBatch) -> Result<(), WriteError> {
        let mut map = self.map.borrow_mut();
        // Check every precondition against the state as the batch would see it, before
        // changing anything: a put earlier in the batch makes a later put-if-absent fail.
        let mut overlay: BTreeMap<&[u8], bool> = BTreeMap::new();
        for op in &batch.ops {
            match op {
                Op::Put { key, .. } => {
                    overlay.insert(key, true);
                }
                Op::PutIfAbsent { key, .. } => {
                    let present = overlay.get(key.as_slice()).copied().unwrap_or_else(|| map.contains_key(key));
                    if present {
                        return Err(WriteError::PreconditionFailed { key: key.clone() });
                    }
                    overlay.insert(key, true);
                }
                Op::Delete { key } => {
                    overlay.insert(key, false);
                }
                Op::DeleteRange { start, end } => {
                    let in_range = |k: &[u8]| k >= start.as_slice() && end.as_deref().is_none_or(|e| k < e);
                    for (_, present) in overlay.iter_mut().filter(|(k, _)| in_range(k)) {
                        *present = false;
                    }
                    for key in map.keys().filter(|k| in_range(k)) {
                        overlay.insert(key.as_slice(), false);
                    }
                }
            }
        }
        let ops = batch.ops.clone();
        drop(overlay);
        for op in ops {
            match op {
                Op::Put { key, value } | Op::PutIfAbsent { key, value } => {
                    map.insert(key, value);
                }
                Op::Delete { key } => {
                    map.remove(&key);
                }
                Op::DeleteRange { start, end } => {
                    if end.as_deref().is_some_and(|e| e <= start.as_slice()) {
                        continue;
                    }
                    let doomed: Vec<Vec<u8>> = map
                        .range::<[u8], _>((
                            Bound::Included(start.as_slice()),
                            end.as_deref().map_or(Bound::Unbounded, Bound::Excluded),
                        ))
                        .map(|(k, _)| k.clone())
                        .collect();
                    for key in doomed {
                        map.remove(&key);
                    }
                }
            }
        }
        Ok(())
    }
}

impl Store for MemoryStore {
    async fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self.map.borrow().get(key).cloned())
    }

    async fn get_many(&self, keys: &[&[u8]]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        let map = self.map.borrow();
        Ok(keys.iter().map(|k| map.get(*k).cloned()).collect())
    }

    async fn scan(&self, scan: &Scan) -> Result<Vec<Entry>, StoreError> {
        if self.access_rules {
            access::scan(scan)?;
        }
        Ok(self.scan_now(scan))
    }

    async fn write(&self, batch: &WriteBatch) -> Result<(), WriteError> {
        if self.access_rules {
            let map = self.map.borrow();
            // A batch that fails a precondition writes nothing, and says so: the guarded
            // commit retries it on what changed.
            if first_failed_precondition(batch, |key| map.contains_key(key)).is_none() {
                access::write(batch, |key| map.get(key).map(Vec::as_slice))?;
            }
        }
        self.write_now(batch)
    }
}
