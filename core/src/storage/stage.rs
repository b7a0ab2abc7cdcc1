//! Staged writes: the write batch of one guarded commit under construction.
//!
//! Ingest and the scheduled jobs read state, decide and write. They read through a
//! [`Stage`], which sees the batch's own writes, and write into it; the whole batch is
//! then committed at once, atomically, by [`crate::storage::commit::guarded`]. Reads can be
//! fetched ahead in one round trip ([`Stage::prefetch`]), so that deciding needs no
//! further store call.

use alloc::collections::BTreeMap;
use alloc::collections::btree_map::Entry;
use alloc::vec::Vec;

use crate::model::error::StoreError;
use crate::storage::store::{Store, WriteBatch};

/// A staged write.
#[derive(Debug)]
struct Staged {
    /// The value written (`None`: deleted).
    value: Option<Vec<u8>>,
    /// Whether the store does not hold the key ([`Stage::put_new`]): removing it then
    /// removes the write.
    fresh: bool,
}

/// A write batch under construction over a store, with a read cache.
#[derive(Debug)]
pub struct Stage<'s, S> {
    store: &'s S,
    /// Values read from the store (`None`: absent there).
    read: BTreeMap<Vec<u8>, Option<Vec<u8>>>,
    /// Writes of the batch, by key.
    written: BTreeMap<Vec<u8>, Staged>,
    /// Operations that go first in the batch (preconditions).
    first: WriteBatch,
}

impl<'s, S: Store> Stage<'s, S> {
    /// An empty stage over `store`.
    pub fn new(store: &'s S) -> Self {
        Stage { store, read: BTreeMap::new(), written: BTreeMap::new(), first: WriteBatch::new() }
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
        if let Some(staged) = self.written.get(key) {
            return Ok(staged.value.clone());
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
        match self.written.get(key) {
            Some(staged) => Some(staged.value.as_deref()),
            None => self.read.get(key).map(Option::as_deref),
        }
    }

    /// Sets `key`.
    pub fn put(&mut self, key: Vec<u8>, value: Vec<u8>) {
        match self.written.entry(key) {
            Entry::Occupied(mut staged) => staged.get_mut().value = Some(value),
            Entry::Vacant(slot) => {
                slot.insert(Staged { value: Some(value), fresh: false });
            }
        }
    }

    /// Sets `key`, which the caller knows the store does not hold: if the batch then
    /// removes it, the batch does not write it at all.
    pub fn put_new(&mut self, key: Vec<u8>, value: Vec<u8>) {
        self.written.insert(key, Staged { value: Some(value), fresh: true });
    }

    /// Removes `key`.
    pub fn delete(&mut self, key: Vec<u8>) {
        match self.written.entry(key) {
            Entry::Occupied(staged) if staged.get().fresh => {
                staged.remove();
            }
            Entry::Occupied(mut staged) => staged.get_mut().value = None,
            Entry::Vacant(slot) => {
                slot.insert(Staged { value: None, fresh: false });
            }
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
        for (key, staged) in self.written {
            match staged.value {
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
    use crate::storage::exec::block_on;
    use crate::storage::store::{MemoryStore, Op};

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
        // A new key written again is still new, so removing it writes nothing; a new key
        // removed and then written again is written.
        stage.put_new(b"p".to_vec(), b"3".to_vec());
        stage.put(b"p".to_vec(), b"4".to_vec());
        stage.delete(b"p".to_vec());
        stage.put_new(b"q".to_vec(), b"5".to_vec());
        stage.delete(b"q".to_vec());
        stage.put(b"q".to_vec(), b"6".to_vec());
        let batch = stage.into_batch();
        assert_eq!(
            batch.ops,
            [Op::Delete { key: b"old".to_vec() }, Op::Put { key: b"q".to_vec(), value: b"6".to_vec() }]
        );
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
