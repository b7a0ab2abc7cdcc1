//! The row cache: values recently read by key, kept whole, so that a repeated read by
//! key (an update by id, above all) is one hash lookup instead of a walk down the
//! tree (a table's key index, a data block and the blob, each found in the block
//! cache: three quarters of the store's share of such a request).
//!
//! Only values that are present are cached, and only reads of one key
//! ([`super::LsmStore::get`]): reads of several keys from one snapshot and scans go to
//! the tree. A write forgets every key it names (a range delete forgets everything)
//! once it has committed, so the next read sees it.
//!
//! A read that misses fills the cache from the tree, which races with writes: the
//! reader may have read a value that a write then replaced, and must not put it back
//! after the write forgot the key. So every write, after its commit, forgets its keys
//! and advances a generation, both under an exclusive lock; a reader notes the
//! generation before it reads the tree and fills the cache only if, under the same
//! lock (shared), the generation has not moved. Either the fill comes before the
//! write forgets the key, which then forgets the filled value too, or it comes after
//! and sees the generation moved. Hits take no lock.

use std::sync::RwLock;
use std::sync::atomic::{AtomicU64, Ordering};

use fjall::Slice;

/// A cached row's weight: its key, its value and about what the cache spends on it.
#[derive(Debug, Clone, Copy)]
struct Weight;

impl quick_cache::Weighter<Box<[u8]>, Slice> for Weight {
    fn weight(&self, key: &Box<[u8]>, value: &Slice) -> u64 {
        u64::try_from(key.len() + value.len()).unwrap_or(u64::MAX).saturating_add(64)
    }
}

/// Values by key, up to a number of bytes.
pub(super) struct Rows {
    cache: quick_cache::sync::Cache<Box<[u8]>, Slice, Weight>,
    /// Advanced by every write, after its commit (see the module docs).
    generation: AtomicU64,
    /// Shared by fills, exclusive for a write's forgetting.
    fills: RwLock<()>,
}

impl std::fmt::Debug for Rows {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rows").field("bytes", &self.cache.weight()).field("rows", &self.cache.len()).finish()
    }
}

/// A row's estimated size, for the cache's first sizing: an update body.
const TYPICAL_ROW_BYTES: u64 = 4096;

impl Rows {
    /// A cache of at most `bytes` (keys and values).
    pub(super) fn new(bytes: u64) -> Self {
        let rows = usize::try_from(bytes / TYPICAL_ROW_BYTES).unwrap_or(usize::MAX).max(16);
        Rows {
            cache: quick_cache::sync::Cache::with_weighter(rows, bytes, Weight),
            generation: AtomicU64::new(0),
            fills: RwLock::new(()),
        }
    }

    /// The value of `key`: from the cache, or from `read` (the tree), which fills the
    /// cache unless a write came in between. `read` hands over a value of its own, of
    /// its exact size (the store decodes each value it reads into a new one), which the
    /// cache then shares: a view into a table's data block would keep the whole block
    /// alive while weighing only the value.
    pub(super) fn read_through<E>(
        &self,
        key: &[u8],
        read: impl FnOnce() -> Result<Option<Slice>, E>,
    ) -> Result<Option<Slice>, E> {
        if let Some(value) = self.cache.get(key) {
            return Ok(Some(value));
        }
        let generation = self.generation.load(Ordering::SeqCst);
        let value = read()?;
        if let Some(value) = &value {
            let _fill = self.fills.read().unwrap_or_else(std::sync::PoisonError::into_inner);
            if self.generation.load(Ordering::SeqCst) == generation {
                self.cache.insert(key.into(), value.clone());
            }
        }
        Ok(value)
    }

    /// Forgets `keys` after a write to them (committed or not: a failed commit may
    /// still have applied), or every key when `everything` (a range delete).
    pub(super) fn forget<'k>(&self, keys: impl IntoIterator<Item = &'k [u8]>, everything: bool) {
        let _forget = self.fills.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        if everything {
            self.cache.clear();
        } else {
            for key in keys {
                self.cache.remove(key);
            }
        }
        self.generation.fetch_add(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(value: &[u8]) -> Result<Option<Slice>, ()> {
        Ok(Some(Slice::from(value)))
    }

    #[test]
    fn a_read_fills_the_cache_and_a_write_forgets_it() {
        let rows = Rows::new(1 << 20);
        assert_eq!(rows.read_through(b"k", || read(b"v1")), Ok(Some(Slice::from(b"v1"))));
        // Served from the cache: the tree is not read again.
        assert_eq!(rows.read_through(b"k", || panic!("read the tree")), Ok::<_, ()>(Some(Slice::from(b"v1"))));
        rows.forget([b"k".as_slice()], false);
        assert_eq!(rows.read_through(b"k", || read(b"v2")), Ok(Some(Slice::from(b"v2"))));
        rows.forget([], true);
        assert_eq!(rows.read_through(b"k", || Ok::<_, ()>(None)), Ok(None));
    }

    #[test]
    fn a_value_read_before_a_write_is_not_cached_after_it() {
        let rows = Rows::new(1 << 20);
        // The write commits and forgets the key while the reader holds the old value.
        let stale = rows.read_through(b"k", || {
            rows.forget([b"k".as_slice()], false);
            read(b"old")
        });
        assert_eq!(stale, Ok(Some(Slice::from(b"old"))), "the reader gets what it read");
        assert_eq!(rows.read_through(b"k", || read(b"new")), Ok(Some(Slice::from(b"new"))), "but it was not cached");
    }

    #[test]
    fn absent_keys_and_failed_reads_are_not_cached() {
        let rows = Rows::new(1 << 20);
        assert_eq!(rows.read_through(b"k", || Ok::<_, ()>(None)), Ok(None));
        assert_eq!(rows.read_through(b"k", || Err::<Option<Slice>, _>("broken")), Err("broken"));
        assert_eq!(rows.read_through(b"k", || read(b"v")), Ok(Some(Slice::from(b"v"))));
    }

    #[test]
    fn the_cache_holds_no_more_than_its_bytes() {
        let rows = Rows::new(64 * 1024);
        let value = vec![7u8; 1000];
        for i in 0..1000u32 {
            rows.read_through(&i.to_be_bytes(), || read(&value)).expect("a read");
        }
        assert!(rows.cache.weight() <= 64 * 1024, "{} bytes", rows.cache.weight());
        assert!(rows.cache.len() > 16, "{} rows", rows.cache.len());
    }
}
