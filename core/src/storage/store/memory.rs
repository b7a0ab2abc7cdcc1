//! An in-memory [`Store`]: a `BTreeMap` behind a `RefCell`.
//!
//! As a [`Store`] it holds the node's keyspace and keeps its rules: a scan or a write
//! that [`super::access`] refuses fails with a [`StoreError`] naming the table and the
//! range, as the worker's store would fail it. So every core test, which runs on this
//! store, keeps the rules the worker relies on. [`MemoryStore::without_access_rules`]
//! is a store of any bytes (the storage contract runs on it), and the synchronous
//! methods (`get_now`, `scan_now`, `write_now`) are the bare map either way: for hosts
//! that wrap it, and for tests that look inside.
//!
//! It keeps remembered values ([`Store::remember`]) in a map of its own, bounded in
//! bytes ([`DEFAULT_REMEMBERED_BYTES`], or [`MemoryStore::remembering`]), which
//! [`MemoryStore::write_now`] empties when a batch [forgets](super::forgets_remembered)
//! them. A host that keeps its own cache in front of the store sets the bound to zero.

use alloc::collections::BTreeMap;
use alloc::vec::Vec;
use core::cell::RefCell;
use core::ops::Bound;

use super::remembered::Remembered;
use super::{
    Entry, Op, Scan, Store, StoreError, WriteBatch, WriteError, access, first_failed_precondition, forgets_remembered,
};

/// The bytes of remembered values a [`MemoryStore`] keeps unless told otherwise: small,
/// as tests and a node in memory hold little.
pub const DEFAULT_REMEMBERED_BYTES: usize = 1 << 20;

/// An in-memory ordered key-value store, for tests and for hosts without persistence.
#[derive(Debug)]
pub struct MemoryStore {
    map: RefCell<BTreeMap<Vec<u8>, Vec<u8>>>,
    /// Whether its [`Store`] methods keep the keyspace's access rules.
    access_rules: bool,
    /// Values kept for [`Store::recall`].
    remembered: RefCell<Remembered>,
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
        MemoryStore { map: RefCell::default(), access_rules: true, remembered: Self::default_remembered() }
    }

    /// An empty store of any keys: a plain ordered map, for the storage contract.
    pub fn without_access_rules() -> Self {
        MemoryStore { map: RefCell::default(), access_rules: false, remembered: Self::default_remembered() }
    }

    fn default_remembered() -> RefCell<Remembered> {
        RefCell::new(Remembered::new(DEFAULT_REMEMBERED_BYTES))
    }

    /// The same store, keeping at most `bytes` of remembered values (`0`: none).
    pub fn remembering(self, bytes: usize) -> Self {
        MemoryStore { remembered: RefCell::new(Remembered::new(bytes)), ..self }
    }

    /// The bytes of remembered values held now.
    pub fn remembered_bytes(&self) -> usize {
        self.remembered.borrow().held()
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
        if forgets_remembered(&batch.ops) {
            self.remembered.borrow_mut().clear();
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

    fn recall(&self, key: &[u8]) -> Option<Vec<u8>> {
        self.remembered.borrow().recall(key)
    }

    fn remember(&self, key: &[u8], value: &[u8]) {
        self.remembered.borrow_mut().remember(key, value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::exec::block_on;
    use crate::storage::keys::{self, Key};

    #[test]
    fn a_remembered_value_is_recalled_within_the_bound_and_the_reset_forgets_it() {
        let store = MemoryStore::new().remembering(4096);
        store.remember(b"rendered/tx-1", b"{\"update_id\":\"tx-1\"}");
        assert_eq!(store.recall(b"rendered/tx-1").as_deref(), Some(b"{\"update_id\":\"tx-1\"}".as_slice()));
        assert_eq!(store.recall(b"rendered/tx-2"), None);
        for n in 0..100u32 {
            store.remember(&n.to_be_bytes(), &[7; 400]);
            assert!(store.remembered_bytes() <= 4096, "{} bytes held", store.remembered_bytes());
        }
        assert_eq!(store.recall(b"rendered/tx-1"), None, "pushed out by newer values");
        assert!(store.recall(&99u32.to_be_bytes()).is_some());

        // A guarded commit deletes its generation: that forgets nothing.
        let mut batch = WriteBatch::new();
        batch.put(Key::new(keys::GENERATION).i64(1).into_bytes(), Vec::new());
        block_on(store.write(&batch)).unwrap();
        let mut batch = WriteBatch::new();
        batch.delete(Key::new(keys::GENERATION).i64(1).into_bytes());
        block_on(store.write(&batch)).unwrap();
        assert!(store.recall(&99u32.to_be_bytes()).is_some());

        // The reset does.
        let mut reset = WriteBatch::new();
        reset.delete_range(Vec::new(), None);
        block_on(store.write(&reset)).unwrap();
        assert_eq!((store.recall(&99u32.to_be_bytes()), store.remembered_bytes()), (None, 0));
    }

    #[test]
    fn a_refused_batch_forgets_nothing_and_a_bound_of_zero_keeps_nothing() {
        let store = MemoryStore::new();
        store.remember(b"k", b"v");
        let mut refused = WriteBatch::new();
        refused.put(b"a".to_vec(), Vec::new()).put_if_absent(b"a".to_vec(), Vec::new()).delete_range(Vec::new(), None);
        assert!(block_on(store.write(&refused)).is_err());
        assert_eq!(store.recall(b"k"), Some(b"v".to_vec()));
        let off = MemoryStore::new().remembering(0);
        off.remember(b"k", b"v");
        assert_eq!(off.recall(b"k"), None);
    }
}
