//! The body cache: values the core remembers (its storage port's `remember` and
//! `recall`, the component's `store` import of the same names), kept in the process's
//! memory for every instance of the component at once. The core keeps there what it
//! renders from stored data on every read, an update's body above all, so that a body
//! read again is not rendered again.
//!
//! A cache, not storage: nothing is persisted, it holds at most its bound in bytes
//! (keys, values and about what the cache spends on each; `--body-cache-bytes`,
//! [`DEFAULT_BYTES`]), evicted by `quick_cache`'s policy (a value recalled since it was
//! kept outlasts values never recalled), and it keeps no value larger than an eighth
//! of its bound. A bound of zero keeps nothing.
//!
//! Values are a pure function of immutable stored data (the storage port's docs), so
//! only a write that may remove such data makes one wrong: the backend that holds this
//! cache calls [`BodyCache::forget_after`] on every batch it applies, which forgets
//! everything after a range delete (the reset) or a delete of a key of an immutable
//! table ([`ledger_node_core::storage::store::forgets_remembered`]).
//!
//! An instance renders a value from what it read, then remembers it, and another
//! instance's reset may commit in between: the stale value must not be kept after the
//! reset forgot everything. So every forgetting advances a generation under an
//! exclusive lock; an instance notes the generation before the first read of a call
//! into the component ([`BodyCache::generation`], `host/store_import.rs`), and a value
//! it remembers is kept only if, under the same lock (shared), the generation has not
//! moved ([`BodyCache::remember`]), as the store's row cache does for its fills
//! (`lsm/rows.rs`). Recalls take no lock.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock};

use ledger_node_core::storage::store::{MAX_REMEMBERED_SHARE, Op, forgets_remembered};

/// The body cache's bound unless `--body-cache-bytes` says otherwise: 64 MiB, about
/// 13,000 updates' bodies of both encodings.
pub const DEFAULT_BYTES: u64 = 64 * 1024 * 1024;

/// What an entry costs beyond its key and value: its slot in the cache's table and the
/// headers of its allocations.
const ENTRY_OVERHEAD: u64 = 64;

/// A value's estimated size, for the cache's first sizing: a rendered update body.
const TYPICAL_VALUE_BYTES: u64 = 4096;

/// The bytes an entry of `key` and `value` is charged.
fn cost(key: &[u8], value: &[u8]) -> u64 {
    u64::try_from(key.len() + value.len()).unwrap_or(u64::MAX).saturating_add(ENTRY_OVERHEAD)
}

/// Weighs an entry in bytes, as [`cost`] charges it.
#[derive(Debug, Clone, Copy)]
struct Weight;

impl quick_cache::Weighter<Box<[u8]>, Arc<[u8]>> for Weight {
    fn weight(&self, key: &Box<[u8]>, value: &Arc<[u8]>) -> u64 {
        cost(key, value)
    }
}

/// Values by key, weighed in bytes.
type Values = quick_cache::sync::Cache<Box<[u8]>, Arc<[u8]>, Weight>;

/// What the cache has done since the process started, for the metrics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Recalls answered with a value.
    pub hits: u64,
    /// Recalls answered with nothing.
    pub misses: u64,
    /// Bytes held now, as charged against the bound.
    pub bytes: u64,
    /// The bound.
    pub bound: u64,
}

/// Remembered values by key, up to a bound in bytes (see the module docs).
pub struct BodyCache {
    /// `None` when the bound is zero.
    cache: Option<Values>,
    bound: u64,
    /// Advanced by every forgetting (see the module docs).
    generation: AtomicU64,
    /// Shared by remembers, exclusive for a forgetting.
    fills: RwLock<()>,
    hits: AtomicU64,
    misses: AtomicU64,
}

impl std::fmt::Debug for BodyCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BodyCache").field("stats", &self.stats()).finish_non_exhaustive()
    }
}

impl Default for BodyCache {
    fn default() -> Self {
        BodyCache::new(DEFAULT_BYTES)
    }
}

impl BodyCache {
    /// An empty cache of at most `bytes`; `0` keeps nothing.
    pub fn new(bytes: u64) -> Self {
        let values = usize::try_from(bytes / TYPICAL_VALUE_BYTES).unwrap_or(usize::MAX).max(16);
        BodyCache {
            cache: (bytes > 0).then(|| Values::with_weighter(values, bytes, Weight)),
            bound: bytes,
            generation: AtomicU64::new(0),
            fills: RwLock::new(()),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        }
    }

    /// The generation now: what a call into the component notes as it begins, and
    /// hands to [`Self::remember`].
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    /// The value kept under `key`, if any.
    pub fn recall(&self, key: &[u8]) -> Option<Vec<u8>> {
        let value = self.cache.as_ref().and_then(|cache| cache.get(key));
        let counter = if value.is_some() { &self.hits } else { &self.misses };
        counter.fetch_add(1, Ordering::Relaxed);
        value.map(|value| value.to_vec())
    }

    /// Keeps `value` under `key`, computed from what was read after the generation
    /// was `since`, unless something was forgotten since then or the value is over an
    /// eighth of the bound (then what `key` held goes too).
    pub fn remember(&self, key: &[u8], value: &[u8], since: u64) {
        let Some(cache) = &self.cache else { return };
        if cost(key, value) > self.bound / MAX_REMEMBERED_SHARE as u64 {
            cache.remove(key);
            return;
        }
        let _fill = self.fills.read().unwrap_or_else(PoisonError::into_inner);
        if self.generation.load(Ordering::SeqCst) == since {
            cache.insert(key.into(), value.into());
        }
    }

    /// After a write batch of `ops` was applied (or failed, which may still have
    /// applied it): forgets everything if the batch may have removed data a value was
    /// computed from.
    pub fn forget_after<B: AsRef<[u8]>>(&self, ops: &[Op<B>]) {
        if forgets_remembered(ops) {
            let _forget = self.fills.write().unwrap_or_else(PoisonError::into_inner);
            if let Some(cache) = &self.cache {
                cache.clear();
            }
            self.generation.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// What the cache has done, and holds.
    pub fn stats(&self) -> Stats {
        Stats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            bytes: self.cache.as_ref().map_or(0, |cache| cache.weight()),
            bound: self.bound,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RESET: Op<&[u8]> = Op::DeleteRange { start: b"", end: None };

    #[test]
    fn a_remembered_value_is_recalled_and_counted() {
        let bodies = BodyCache::new(1 << 20);
        assert_eq!(bodies.recall(b"k"), None);
        bodies.remember(b"k", b"body", bodies.generation());
        assert_eq!(bodies.recall(b"k").as_deref(), Some(b"body".as_slice()));
        let stats = bodies.stats();
        assert_eq!((stats.hits, stats.misses, stats.bytes, stats.bound), (1, 1, cost(b"k", b"body"), 1 << 20));
    }

    #[test]
    fn the_cache_holds_no_more_than_its_bound_and_evicts_to_stay_within_it() {
        let bodies = BodyCache::new(64 * 1024);
        let value = vec![7u8; 1000];
        for i in 0..1000u32 {
            bodies.remember(&i.to_be_bytes(), &value, bodies.generation());
            assert!(bodies.stats().bytes <= 64 * 1024, "{} bytes after {i}", bodies.stats().bytes);
        }
        let kept = (0..1000u32).filter(|i| bodies.recall(&i.to_be_bytes()).is_some()).count();
        assert!(kept > 16 && kept < 64, "{kept} values of 1 KB kept in 64 KiB");
        assert!(bodies.recall(&999u32.to_be_bytes()).is_some(), "the newest is kept");
    }

    #[test]
    fn a_value_over_an_eighth_of_the_bound_is_not_kept_and_drops_the_old_one() {
        let bodies = BodyCache::new(64 * 1024);
        bodies.remember(b"k", &[1; 100], 0);
        bodies.remember(b"k", &[2; 8 * 1024], 0);
        assert_eq!(bodies.recall(b"k"), None);
        let off = BodyCache::new(0);
        off.remember(b"k", b"v", 0);
        assert_eq!((off.recall(b"k"), off.stats().bytes), (None, 0));
    }

    #[test]
    fn a_reset_forgets_everything_and_a_guarded_commits_delete_nothing() {
        let bodies = BodyCache::new(1 << 20);
        bodies.remember(b"k", b"body", 0);
        let generation = b"G\x80\x00\x00\x00\x00\x00\x00\x01".as_slice();
        let put: Op<&[u8]> = Op::Put { key: b"x", value: b"y" };
        bodies.forget_after(&[Op::Delete { key: generation }, put]);
        assert_eq!((bodies.recall(b"k").as_deref(), bodies.generation()), (Some(b"body".as_slice()), 0));
        bodies.forget_after(&[put, RESET]);
        assert_eq!((bodies.recall(b"k"), bodies.stats().bytes, bodies.generation()), (None, 0, 1));
    }

    #[test]
    fn a_value_computed_before_a_reset_is_not_kept_after_it() {
        let bodies = BodyCache::new(1 << 20);
        // An instance begins its call, reads and renders; a reset commits meanwhile.
        let since = bodies.generation();
        bodies.forget_after(&[RESET]);
        bodies.remember(b"k", b"stale", since);
        assert_eq!(bodies.recall(b"k"), None);
        bodies.remember(b"k", b"fresh", bodies.generation());
        assert_eq!(bodies.recall(b"k").as_deref(), Some(b"fresh".as_slice()));
    }
}
