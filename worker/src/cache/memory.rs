//! The in-isolate tier: update bodies held in memory, bounded in bytes, and what the
//! isolate knows of the cache generation. Bookkeeping only, no I/O: the tests run
//! natively.
//!
//! Reads fill the tier after an `await`, and another request of the same isolate may
//! have cleared it meanwhile (a reset, or a generation change seen by a refresh). Every
//! clear therefore starts a new *epoch*, and a fill carries the epoch it began in: a
//! fill from an earlier epoch is dropped, so a body read before a reset never lands in
//! the cache after it.

use std::collections::BTreeMap;

/// How long a generation read from D1 is trusted before it is read again, in
/// milliseconds: the bound on how long an isolate serves bodies from before a reset
/// made by another isolate.
pub const GENERATION_TTL_MS: u64 = 1000;

/// What an entry costs beyond its key and value: the map nodes and the key's copy in
/// the use index (counted with the key, see [`cost`]).
const ENTRY_OVERHEAD: usize = 64;

/// The bytes an entry of `key` and `value` is charged.
fn cost(key: &[u8], value: &[u8]) -> usize {
    2 * key.len() + value.len() + ENTRY_OVERHEAD
}

/// Values by key, at most `capacity` bytes of them (as charged by [`cost`]); when full,
/// the least recently used go first. A value that alone exceeds the capacity is not
/// kept.
#[derive(Debug)]
pub struct Bodies {
    capacity: usize,
    used: usize,
    /// Counts uses; an entry's `used_at` is the tick of its last use, unique.
    clock: u64,
    entries: BTreeMap<Vec<u8>, Slot>,
    /// Keys by the tick of their last use: the first is the least recently used.
    by_use: BTreeMap<u64, Vec<u8>>,
}

#[derive(Debug)]
struct Slot {
    value: Vec<u8>,
    used_at: u64,
}

impl Bodies {
    /// An empty cache of at most `capacity` bytes.
    pub fn new(capacity: usize) -> Self {
        Bodies { capacity, used: 0, clock: 0, entries: BTreeMap::new(), by_use: BTreeMap::new() }
    }

    /// A copy of the value of `key`, which becomes the most recently used.
    pub fn get(&mut self, key: &[u8]) -> Option<Vec<u8>> {
        self.clock += 1;
        let slot = self.entries.get_mut(key)?;
        let owned = self.by_use.remove(&slot.used_at).unwrap_or_else(|| key.to_vec());
        slot.used_at = self.clock;
        self.by_use.insert(self.clock, owned);
        Some(slot.value.clone())
    }

    /// Keeps `value` under `key` (replacing any), evicting the least recently used
    /// entries until it fits.
    pub fn insert(&mut self, key: Vec<u8>, value: Vec<u8>) {
        self.remove(&key);
        let charge = cost(&key, &value);
        if charge > self.capacity {
            return;
        }
        while self.used + charge > self.capacity {
            let Some((_, oldest)) = self.by_use.pop_first() else { break };
            if let Some(slot) = self.entries.remove(&oldest) {
                self.used -= cost(&oldest, &slot.value);
            }
        }
        self.clock += 1;
        self.by_use.insert(self.clock, key.clone());
        self.entries.insert(key, Slot { value, used_at: self.clock });
        self.used += charge;
    }

    /// Forgets `key`.
    fn remove(&mut self, key: &[u8]) {
        if let Some(slot) = self.entries.remove(key) {
            self.by_use.remove(&slot.used_at);
            self.used -= cost(key, &slot.value);
        }
    }

    /// Forgets everything.
    pub fn clear(&mut self) {
        self.entries.clear();
        self.by_use.clear();
        self.used = 0;
    }

    /// How many entries are kept.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// The bytes charged for the entries kept.
    #[cfg(test)]
    pub fn bytes(&self) -> usize {
        self.used
    }
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

/// One isolate's cache: the bodies and the generation they belong to.
#[derive(Debug)]
pub struct IsolateCache {
    bodies: Bodies,
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
    /// An empty cache of at most `capacity` bytes of bodies, with no generation known.
    pub fn new(capacity: usize) -> Self {
        IsolateCache { bodies: Bodies::new(capacity), known: None, epoch: 0 }
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
    pub fn get(&mut self, key: &[u8]) -> Option<Vec<u8>> {
        self.bodies.get(key)
    }

    /// Keeps the body of `key`, read (or written) in `epoch`, unless the bodies were
    /// cleared since.
    pub fn fill(&mut self, epoch: u64, key: Vec<u8>, value: Vec<u8>) {
        if epoch == self.epoch {
            self.bodies.insert(key, value);
        }
    }

    /// The bodies held.
    #[cfg(test)]
    pub fn bodies(&self) -> &Bodies {
        &self.bodies
    }

    fn clear(&mut self) {
        self.bodies.clear();
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
    fn the_byte_bound_holds_and_the_least_recently_used_go_first() {
        let one = cost(b"a", &[0; 100]);
        let mut bodies = Bodies::new(3 * one);
        for key in ["a", "b", "c"] {
            let (key, value) = entry(key, 100);
            bodies.insert(key, value);
        }
        assert_eq!((bodies.len(), bodies.bytes()), (3, 3 * one));
        // "a" is used, so "b" is now the least recently used.
        assert!(bodies.get(b"a").is_some());
        let (key, value) = entry("d", 100);
        bodies.insert(key, value);
        assert_eq!((bodies.len(), bodies.bytes()), (3, 3 * one));
        assert!(bodies.get(b"b").is_none());
        for key in [b"a", b"c", b"d"] {
            assert_eq!(bodies.get(key), Some(vec![b'v'; 100]));
        }
    }

    #[test]
    fn a_large_entry_evicts_as_many_as_it_needs() {
        let one = cost(b"a", &[0; 100]);
        let mut bodies = Bodies::new(4 * one);
        for key in ["a", "b", "c", "d"] {
            let (key, value) = entry(key, 100);
            bodies.insert(key, value);
        }
        let (key, value) = entry("e", 2 * one);
        bodies.insert(key, value);
        assert_eq!(bodies.len(), 2);
        assert!(bodies.bytes() <= 4 * one);
        assert!(bodies.get(b"d").is_some() && bodies.get(b"e").is_some());
    }

    #[test]
    fn a_value_larger_than_the_whole_cache_is_not_kept() {
        let mut bodies = Bodies::new(1000);
        let (key, value) = entry("a", 10);
        bodies.insert(key, value);
        let (key, value) = entry("b", 1000);
        bodies.insert(key, value);
        assert_eq!(bodies.len(), 1);
        assert!(bodies.get(b"b").is_none());
        assert!(bodies.get(b"a").is_some());
    }

    #[test]
    fn replacing_a_value_charges_only_the_new_one() {
        let mut bodies = Bodies::new(10_000);
        let (key, value) = entry("a", 500);
        bodies.insert(key, value);
        let (key, value) = entry("a", 100);
        bodies.insert(key, value);
        assert_eq!((bodies.len(), bodies.bytes()), (1, cost(b"a", &[0; 100])));
        bodies.clear();
        assert_eq!((bodies.len(), bodies.bytes()), (0, 0));
    }

    #[test]
    fn a_generation_is_trusted_for_its_time_to_live() {
        let mut cache = IsolateCache::new(10_000);
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
        let mut cache = IsolateCache::new(10_000);
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
        let mut cache = IsolateCache::new(10_000);
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
        let mut cache = IsolateCache::new(10_000);
        let before = cache.epoch();
        cache.bodies_deleted(Some("g2".into()), 10);
        assert_eq!(cache.learned("g1".into(), 5, before), None);
        assert_eq!(cache.view(10).map(|v| v.generation), Some("g2".to_owned()));
    }

    #[test]
    fn bodies_written_along_with_the_generation_they_belong_to_are_kept() {
        // A fresh isolate ingests: the write reads the generation in its transaction.
        let mut cache = IsolateCache::new(10_000);
        let epoch = cache.learned("g1".into(), 0, cache.epoch());
        assert!(epoch.is_some());
        cache.fill(epoch.unwrap_or_default(), b"k".to_vec(), b"v".to_vec());
        // Its first read finds the same generation and keeps what the write filled.
        cache.learned("g1".into(), 2_000, cache.epoch());
        assert_eq!(cache.get(b"k"), Some(b"v".to_vec()));
    }

    #[test]
    fn a_reset_of_unknown_outcome_forgets_the_generation() {
        let mut cache = IsolateCache::new(10_000);
        cache.learned("g1".into(), 0, cache.epoch());
        cache.fill(cache.epoch(), b"k".to_vec(), b"v".to_vec());
        cache.bodies_deleted(None, 10);
        assert_eq!(cache.view(10), None);
        assert_eq!(cache.bodies().len(), 0);
    }
}
