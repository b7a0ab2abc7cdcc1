//! The in-isolate tier: update bodies held in memory, bounded in bytes, the values the
//! core remembers ([`Store::remember`](ledger_node_core::storage::store::Store::remember)),
//! and what the isolate knows of the cache generation. Bookkeeping only, no I/O: the
//! tests run natively.
//!
//! The remembered values (rendered bodies) are kept apart from the stored bodies, each
//! under a bound of its own ([`IsolateCache::new`]): a read of many stored bodies (an
//! ingest batch reading the updates it re-sends) then never pushes the rendered ones
//! out, nor the other way round, and a write that forgets the remembered values
//! ([`ledger_node_core::storage::store::forgets_remembered`]) keeps the stored bodies,
//! which it cannot have changed. Both go with the generation: any clear empties both.
//! A remembered value is recalled only while the generation is fresh (read from D1
//! less than [`GENERATION_TTL_MS`] before), as a stored body is served, so after a
//! reset by another isolate this one stops recalling within about a second. They are
//! never put into KV: a rendered body is cheap to compute again from the stored form,
//! which the tiers below already cache.
//!
//! Reads fill the tier after an `await`, and another request of the same isolate may
//! have cleared it meanwhile (a reset, or a generation change seen by a refresh). Every
//! clear therefore starts a new *epoch*, and a fill carries the epoch it began in: a
//! fill from an earlier epoch is dropped, so a body read before a reset never lands in
//! the cache after it.

use ledger_node_core::storage::store::MAX_REMEMBERED_SHARE;
use quick_cache::Weighter;
use quick_cache::unsync::Cache;

/// How long a generation read from D1 is trusted before it is read again, in
/// milliseconds: the bound on how long an isolate serves bodies from before a reset
/// made by another isolate.
pub const GENERATION_TTL_MS: u64 = 1000;

/// What an entry costs beyond its key and value: its slot in the cache's table and the
/// headers of its two allocations.
const ENTRY_OVERHEAD: u64 = 64;

/// The size of a typical body, to size the cache's record of recently evicted keys
/// (which it keeps outside the byte budget, tens of bytes each).
const TYPICAL_BODY_BYTES: usize = 4096;

/// The bytes an entry of `key` and `value` is charged.
fn cost(key: &[u8], value: &[u8]) -> u64 {
    u64::try_from(key.len() + value.len()).unwrap_or(u64::MAX).saturating_add(ENTRY_OVERHEAD)
}

/// Weighs an entry in bytes, as [`cost`] charges it.
#[derive(Debug, Clone, Copy)]
struct ByteWeight;

impl Weighter<Vec<u8>, Vec<u8>> for ByteWeight {
    fn weight(&self, key: &Vec<u8>, value: &Vec<u8>) -> u64 {
        cost(key, value)
    }
}

/// Bodies by key, at most a given number of bytes of them (as charged by [`cost`]).
/// When full, `quick_cache` evicts by its CLOCK-PRO policy: a body read since it was
/// put outlasts bodies read only once. A value too large for the cache (over 97% of
/// it, the policy's hot share) is not kept, and putting one drops what the key held.
type Bodies = Cache<Vec<u8>, Vec<u8>, ByteWeight>;

/// An empty [`Bodies`] of at most `capacity` bytes.
fn empty_bodies(capacity: usize) -> Bodies {
    let capacity_bytes = u64::try_from(capacity).unwrap_or(u64::MAX);
    Cache::with_weighter((capacity / TYPICAL_BODY_BYTES).max(1), capacity_bytes, ByteWeight)
}

/// The generation the isolate is using and the epoch it began in, taken when a read
/// starts: the KV keys of the read carry the generation, its fills the epoch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct View {
    /// The cache generation, as kept in D1.
    pub generation: String,
    /// The isolate's epoch (see the module docs).
    pub epoch: u64,
}

/// One isolate's cache: the bodies, the remembered values and the generation they
/// belong to.
#[derive(Debug)]
pub struct IsolateCache {
    bodies: Bodies,
    /// Values the core remembered, by key.
    remembered: Bodies,
    /// The bound of `remembered`: no value over an eighth of it is kept.
    remembered_bound: usize,
    known: Option<Known>,
    epoch: u64,
}

/// A generation read from D1, and when the read began (milliseconds since the epoch).
#[derive(Debug)]
struct Known {
    generation: String,
    checked_at: u64,
}

impl IsolateCache {
    /// An empty cache of at most `capacity` bytes of bodies and `remembered` bytes of
    /// remembered values, with no generation known.
    pub fn new(capacity: usize, remembered: usize) -> Self {
        IsolateCache {
            bodies: empty_bodies(capacity),
            remembered: empty_bodies(remembered),
            remembered_bound: remembered,
            known: None,
            epoch: 0,
        }
    }

    /// The view to read with at `now`, if the generation was read from D1 less than
    /// [`GENERATION_TTL_MS`] before; `None`: read it again first ([`Self::learned`]).
    pub fn view(&self, now: u64) -> Option<View> {
        let known = self.known.as_ref()?;
        (now.saturating_sub(known.checked_at) < GENERATION_TTL_MS)
            .then(|| View { generation: known.generation.clone(), epoch: self.epoch })
    }

    /// The current epoch: pass it to [`Self::learned`] or [`Self::fill`].
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// Records `generation`, read from D1 by a request that began at `started` in
    /// `epoch`, and returns the epoch that bodies read along with it are filled in. A
    /// different generation than the one known (or none known) clears the bodies. A
    /// read from before the latest clear is ignored (`None`): what it saw may be older
    /// than what cleared.
    pub fn learned(&mut self, generation: String, started: u64, epoch: u64) -> Option<u64> {
        if epoch != self.epoch {
            return None;
        }
        match &mut self.known {
            Some(known) if known.generation == generation => known.checked_at = known.checked_at.max(started),
            _ => {
                self.clear();
                self.known = Some(Known { generation, checked_at: started });
            }
        }
        Some(self.epoch)
    }

    /// A write that deletes bodies has ended: clears the bodies and takes the new
    /// generation it committed, or, when its outcome is not known (`None`), forgets the
    /// generation so that the next read fetches it.
    pub fn bodies_deleted(&mut self, generation: Option<String>, now: u64) {
        self.clear();
        self.known = generation.map(|generation| Known { generation, checked_at: now });
    }

    /// The body of `key`, if held.
    pub fn get(&self, key: &[u8]) -> Option<Vec<u8>> {
        self.bodies.get(key).cloned()
    }

    /// Keeps the body of `key`, read (or written) in `epoch`, unless the bodies were
    /// cleared since.
    pub fn fill(&mut self, epoch: u64, key: Vec<u8>, value: Vec<u8>) {
        if epoch == self.epoch {
            self.bodies.insert(key, value);
        }
    }

    /// The value remembered under `key`, if held and the generation is fresh at `now`.
    pub fn recall(&self, now: u64, key: &[u8]) -> Option<Vec<u8>> {
        self.view(now)?;
        self.remembered.get(key).cloned()
    }

    /// Keeps `value` under `key`, computed by a request that began in `epoch`, unless
    /// the cache was cleared since or the value is over an eighth of the bound (then
    /// what `key` held goes too).
    pub fn remember(&mut self, epoch: u64, key: &[u8], value: &[u8]) {
        if cost(key, value) > u64::try_from(self.remembered_bound / MAX_REMEMBERED_SHARE).unwrap_or(u64::MAX) {
            self.remembered.remove(key);
        } else if epoch == self.epoch {
            self.remembered.insert(key.to_vec(), value.to_vec());
        }
    }

    /// A write of this isolate may have removed data a remembered value was computed
    /// from: forgets every remembered value, and drops the remembers under way.
    pub fn forget_remembered(&mut self) {
        self.remembered.clear();
        self.epoch += 1;
    }

    /// The bodies held.
    #[cfg(test)]
    fn bodies(&self) -> &Bodies {
        &self.bodies
    }

    fn clear(&mut self) {
        self.bodies.clear();
        self.remembered.clear();
        self.epoch += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(key: &str, value_bytes: usize) -> (Vec<u8>, Vec<u8>) {
        (key.as_bytes().to_vec(), vec![b'v'; value_bytes])
    }

    #[test]
    fn the_byte_bound_holds_whatever_is_put() {
        let one = cost(b"a", &[0; 100]);
        let capacity = 20 * one;
        let mut bodies = empty_bodies(usize::try_from(capacity).unwrap_or_default());
        for n in 0..1_000_usize {
            let (key, value) = entry(&format!("k{n}"), 50 + n % 7 * 25);
            bodies.insert(key.clone(), value.clone());
            assert!(bodies.weight() <= capacity, "{} bytes held after {n} puts", bodies.weight());
            assert_eq!(bodies.peek(&key), Some(&value), "the body just put is kept");
        }
        let held: u64 = bodies.iter().map(|(key, value)| cost(key, value)).sum();
        assert_eq!(held, bodies.weight(), "every entry is charged its key, value and overhead");
        assert!(held > capacity / 2, "the cache is used: {held} of {capacity} bytes");
    }

    #[test]
    fn a_body_read_again_outlasts_bodies_read_once() {
        let one = cost(b"k00", &[0; 100]);
        let mut bodies = empty_bodies(usize::try_from(10 * one).unwrap_or_default());
        let put = |bodies: &mut Bodies, n: usize| {
            let (key, value) = entry(&format!("k{n:02}"), 100);
            bodies.insert(key, value);
        };
        for n in 0..20 {
            put(&mut bodies, n);
        }
        // Put into a full cache, then read after every put of another body.
        let (again, value) = entry("k_again", 97);
        bodies.insert(again.clone(), value);
        for n in 20..100 {
            assert!(bodies.get(&again).is_some(), "the body read again was evicted before put {n}");
            put(&mut bodies, n);
        }
        assert!(bodies.get(&again).is_some());
        assert!(bodies.len() <= 10);
    }

    #[test]
    fn a_value_too_large_for_the_cache_is_not_kept_and_drops_what_its_key_held() {
        let mut bodies = empty_bodies(1000);
        let (key, value) = entry("a", 10);
        bodies.insert(key, value);
        let (key, value) = entry("b", 1000);
        bodies.insert(key, value);
        assert_eq!(bodies.len(), 1);
        assert!(bodies.get(b"b".as_slice()).is_none());
        assert!(bodies.get(b"a".as_slice()).is_some());
        let (key, value) = entry("a", 1000);
        bodies.insert(key, value);
        assert!(bodies.is_empty());
    }

    #[test]
    fn replacing_a_value_charges_only_the_new_one() {
        let mut bodies = empty_bodies(10_000);
        let (key, value) = entry("a", 500);
        bodies.insert(key, value);
        let (key, value) = entry("a", 100);
        bodies.insert(key, value);
        assert_eq!((bodies.len(), bodies.weight()), (1, cost(b"a", &[0; 100])));
        bodies.clear();
        assert_eq!((bodies.len(), bodies.weight()), (0, 0));
    }

    #[test]
    fn a_generation_is_trusted_for_its_time_to_live() {
        let mut cache = IsolateCache::new(10_000, 10_000);
        assert_eq!(cache.view(5_000), None);
        cache.learned("g1".into(), 5_000, cache.epoch());
        let view = cache.view(5_000 + GENERATION_TTL_MS - 1);
        assert_eq!(view.map(|v| v.generation), Some("g1".to_owned()));
        assert_eq!(cache.view(5_000 + GENERATION_TTL_MS), None);
        cache.learned("g1".into(), 6_000, cache.epoch());
        assert!(cache.view(6_500).is_some());
    }

    #[test]
    fn a_new_generation_clears_the_bodies() {
        let mut cache = IsolateCache::new(10_000, 10_000);
        cache.learned("g1".into(), 0, cache.epoch());
        cache.fill(cache.epoch(), b"k".to_vec(), b"old".to_vec());
        cache.learned("g1".into(), 10, cache.epoch());
        assert_eq!(cache.get(b"k"), Some(b"old".to_vec()));
        cache.learned("g2".into(), 20, cache.epoch());
        assert_eq!(cache.get(b"k"), None);
        assert_eq!(cache.view(20).map(|v| v.generation), Some("g2".to_owned()));
    }

    #[test]
    fn a_fill_that_began_before_a_reset_is_dropped() {
        let mut cache = IsolateCache::new(10_000, 10_000);
        cache.learned("g1".into(), 0, cache.epoch());
        let before = cache.epoch();
        cache.bodies_deleted(Some("g2".into()), 10);
        cache.fill(before, b"k".to_vec(), b"old".to_vec());
        assert_eq!(cache.get(b"k"), None);
        cache.fill(cache.epoch(), b"k".to_vec(), b"new".to_vec());
        assert_eq!(cache.get(b"k"), Some(b"new".to_vec()));
    }

    #[test]
    fn a_generation_read_that_began_before_a_reset_is_ignored() {
        let mut cache = IsolateCache::new(10_000, 10_000);
        let before = cache.epoch();
        cache.bodies_deleted(Some("g2".into()), 10);
        assert_eq!(cache.learned("g1".into(), 5, before), None);
        assert_eq!(cache.view(10).map(|v| v.generation), Some("g2".to_owned()));
    }

    #[test]
    fn bodies_written_along_with_the_generation_they_belong_to_are_kept() {
        // A fresh isolate ingests: the write reads the generation in its transaction.
        let mut cache = IsolateCache::new(10_000, 10_000);
        let epoch = cache.learned("g1".into(), 0, cache.epoch());
        assert!(epoch.is_some());
        cache.fill(epoch.unwrap_or_default(), b"k".to_vec(), b"v".to_vec());
        // Its first read finds the same generation and keeps what the write filled.
        cache.learned("g1".into(), 2_000, cache.epoch());
        assert_eq!(cache.get(b"k"), Some(b"v".to_vec()));
    }

    #[test]
    fn a_remembered_value_is_recalled_while_the_generation_is_fresh() {
        let mut cache = IsolateCache::new(10_000, 10_000);
        let epoch = cache.epoch();
        cache.remember(epoch, b"r", b"rendered");
        assert_eq!(cache.recall(0, b"r"), None, "no generation known yet");
        cache.learned("g1".into(), 0, epoch);
        assert_eq!(cache.recall(10, b"r"), None, "remembered before any generation was known: cleared with it");
        cache.remember(cache.epoch(), b"r", b"rendered");
        assert_eq!(cache.recall(10, b"r"), Some(b"rendered".to_vec()));
        assert_eq!(cache.recall(GENERATION_TTL_MS, b"r"), None, "the generation must be read again first");
        assert_eq!(cache.get(b"r"), None, "a remembered value is no stored body");
    }

    #[test]
    fn remembered_values_keep_their_own_bound_and_leave_the_bodies_theirs() {
        let one = cost(b"k00", &[0; 100]);
        let bound = usize::try_from(10 * one).unwrap_or_default();
        let mut cache = IsolateCache::new(bound, bound);
        cache.learned("g1".into(), 0, cache.epoch());
        cache.fill(cache.epoch(), b"body".to_vec(), b"stored".to_vec());
        for n in 0..100 {
            cache.remember(cache.epoch(), format!("k{n:02}").as_bytes(), &[0; 100]);
            assert!(cache.remembered.weight() <= 10 * one, "{} bytes after {n}", cache.remembered.weight());
        }
        assert_eq!(cache.recall(0, b"k99"), Some(vec![0; 100]));
        assert_eq!(cache.get(b"body"), Some(b"stored".to_vec()), "the bodies' tier is not pushed out");
        // Over an eighth of the bound: not kept, and the old value goes.
        cache.remember(cache.epoch(), b"k99", &[1; 200]);
        assert_eq!(cache.recall(0, b"k99"), None);
    }

    #[test]
    fn a_forgetting_write_drops_remembered_values_and_remembers_under_way_but_keeps_the_bodies() {
        let mut cache = IsolateCache::new(10_000, 10_000);
        cache.learned("g1".into(), 0, cache.epoch());
        cache.fill(cache.epoch(), b"body".to_vec(), b"stored".to_vec());
        cache.remember(cache.epoch(), b"r", b"rendered");
        let before = cache.epoch();
        cache.forget_remembered();
        cache.remember(before, b"s", b"rendered before the write");
        assert_eq!((cache.recall(0, b"r"), cache.recall(0, b"s")), (None, None));
        assert_eq!(cache.get(b"body"), Some(b"stored".to_vec()));
    }

    #[test]
    fn a_new_generation_clears_the_remembered_values_too() {
        let mut cache = IsolateCache::new(10_000, 10_000);
        cache.learned("g1".into(), 0, cache.epoch());
        cache.remember(cache.epoch(), b"r", b"rendered");
        cache.learned("g2".into(), 20, cache.epoch());
        assert_eq!(cache.recall(20, b"r"), None);
        cache.remember(cache.epoch(), b"r", b"again");
        cache.bodies_deleted(Some("g3".into()), 30);
        assert_eq!(cache.recall(30, b"r"), None);
    }

    #[test]
    fn a_reset_of_unknown_outcome_forgets_the_generation() {
        let mut cache = IsolateCache::new(10_000, 10_000);
        cache.learned("g1".into(), 0, cache.epoch());
        cache.fill(cache.epoch(), b"k".to_vec(), b"v".to_vec());
        cache.bodies_deleted(None, 10);
        assert_eq!(cache.view(10), None);
        assert_eq!(cache.bodies().len(), 0);
    }
}
