//! Staged writes: the write batch of one guarded commit under construction.
//!
//! Ingest and the scheduled jobs read state, decide and write. They read through a
//! [`Stage`], which sees the batch's own writes, and write into it; the whole batch is
//! then committed at once, atomically, by [`crate::commit::guarded`]. Reads can be
//! fetched ahead in one round trip ([`Stage::prefetch`]), so that deciding needs no
//! further store call.

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::vec::Vec;

use crate::store::{Store, StoreError, WriteBatch};

/// A write batch under construction over a store, with a read cache.
#[derive(Debug)]
pub struct Stage<'s, S> {
    store: &'s S,
    /// Values read from the store (`None`: absent there).
    read: BTreeMap<Vec<u8>, Option<Vec<u8>>>,
    /// Values written by the batch (`None`: deleted).
    written: BTreeMap<Vec<u8>, Option<Vec<u8>>>,
    /// Keys written by the batch that the store does not hold ([`Stage::put_new`]).
    fresh: BTreeSet<Vec<u8>>,
    /// Operations that go first in the batch (preconditions).
    first: WriteBatch,
}

impl<'s, S: Store> Stage<'s, S> {
    /// An empty stage over `store`.
    pub fn new(store: &'s S) -> Self {
        Stage {
            store,
            read: BTreeMap::new(),
            written: BTreeMap::new(),
            fresh: BTreeSet::new(),
            first: WriteBatch::new(),
        }
    }

    /// The store underneath.
    pub fn store(&self) -> &'s S {
        self.store
    }

    /// Reads `keys` from the store in one round trip, so that later [`Stage::get`]s of
    /// them need none.
    pub async fn prefetch(&mut self, keys: impl IntoIterator<Item = Vec<u8>>) -> Result<(), StoreError> {
        let mut wanted: Vec<Vec<u8>> =
            keys.into_iter().filter(|k| !self.read.contains_key(k) && !self.written.contains_key(k)).collect();
        wanted.sort();
        wanted.dedup();
        let mut values = Vec::with_capacity(wanted.len());
        for chunk in wanted.chunks(512) {
            let refs: Vec<&[u8]> = chunk.iter().map(Vec::as_slice).collect();
            values.extend(self.store.get_many(&refs).await?);
        }
        // The keys are sorted and new to the cache: the map is built from them in one
        // pass, then merged in, rather than searched for each one.
        let mut fetched: BTreeMap<_, _> = wanted.into_iter().zip(values).collect();
        self.read.append(&mut fetched);
        Ok(())
    }

    /// The value of `key` as the batch sees it.
    pub async fn get(&mut self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        if let Some(value) = self.written.get(key) {
            return Ok(value.clone());
        }
        if let Some(value) = self.read.get(key) {
            return Ok(value.clone());
        }
        let value = self.store.get(key).await?;
        self.read.insert(key.to_vec(), value.clone());
        Ok(value)
    }

    /// The value of `key` as the batch sees it, if that is known without a store read.
    pub fn cached(&self, key: &[u8]) -> Option<Option<&[u8]>> {
        self.written.get(key).or_else(|| self.read.get(key)).map(Option::as_deref)
    }

    /// Sets `key`.
    pub fn put(&mut self, key: Vec<u8>, value: Vec<u8>) {
        self.written.insert(key, Some(value));
    }

    /// Sets `key`, which the caller knows the store does not hold: if the batch then
    /// removes it, the batch does not write it at all.
    pub fn put_new(&mut self, key: Vec<u8>, value: Vec<u8>) {
        self.fresh.insert(key.clone());
        self.written.insert(key, Some(value));
    }

    /// Removes `key`.
    pub fn delete(&mut self, key: Vec<u8>) {
        if self.fresh.remove(&key) {
            self.written.remove(&key);
        } else {
            self.written.insert(key, None);
        }
    }

    /// Adds an operation that goes before every staged write (a precondition).
    pub fn first(&mut self) -> &mut WriteBatch {
        &mut self.first
    }

    /// Whether nothing was staged.
    pub fn is_empty(&self) -> bool {
        self.written.is_empty() && self.first.is_empty()
    }

    /// The batch: the first operations, then every staged write in key order.
    pub fn into_batch(self) -> WriteBatch {
        let mut batch = self.first;
        for (key, value) in self.written {
            match value {
                Some(value) => batch.put(key, value),
                None => batch.delete(key),
            };
        }
        batch
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::block_on;
    use crate::store::{MemoryStore, Op};

    #[test]
    fn a_new_key_removed_in_the_same_batch_is_not_written() {
        let store = MemoryStore::new();
        let mut stage = Stage::new(&store);
        stage.put_new(b"new".to_vec(), b"1".to_vec());
        assert_eq!(block_on(stage.get(b"new")).unwrap(), Some(b"1".to_vec()));
        stage.delete(b"new".to_vec());
        assert_eq!(block_on(stage.get(b"new")).unwrap(), None);
        stage.put(b"old".to_vec(), b"2".to_vec());
        stage.delete(b"old".to_vec());
        let batch = stage.into_batch();
        assert_eq!(batch.ops, [Op::Delete { key: b"old".to_vec() }]);
    }

    #[test]
    fn the_batch_holds_the_first_operations_then_the_staged_writes_in_key_order() {
        let store = MemoryStore::new();
        let mut stage = Stage::new(&store);
        stage.first().put(b"g".to_vec(), Vec::new());
        for key in [&b"c"[..], b"a", b"ab", b"b\x00", b"b"] {
            stage.put(key.to_vec(), key.to_vec());
        }
        stage.delete(b"aa".to_vec());
        let batch = stage.into_batch();
        let keys: Vec<&[u8]> = batch.ops.iter().map(|op| op.key().as_slice()).collect();
        assert_eq!(keys, [&b"g"[..], b"a", b"aa", b"ab", b"b", b"b\x00", b"c"]);
    }
}
