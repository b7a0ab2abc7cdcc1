//! The values [`MemoryStore`](super::MemoryStore) keeps for [`Store::remember`]: a map
//! bounded in bytes, the oldest value forgotten first.
//!
//! First in, first out is enough for the hosts that use it (tests, and a node in memory
//! that holds little); the native host and the worker keep theirs in `quick_cache`,
//! whose policy lets a value read again outlast values read once.
//!
//! [`Store::remember`]: super::Store::remember

use alloc::collections::{BTreeMap, VecDeque};
use alloc::vec::Vec;

/// What a value kept under a key is charged: the bytes of both.
fn cost(key: &[u8], value: &[u8]) -> usize {
    key.len().saturating_add(value.len())
}

/// Values by key, at most [`Remembered::bound`] bytes of keys and values.
#[derive(Debug, Default)]
pub struct Remembered {
    bound: usize,
    held: usize,
    values: BTreeMap<Vec<u8>, Vec<u8>>,
    /// The keys held, oldest first.
    order: VecDeque<Vec<u8>>,
}

impl Remembered {
    /// An empty map of at most `bound` bytes; `0` keeps nothing.
    pub fn new(bound: usize) -> Self {
        Remembered { bound, ..Remembered::default() }
    }

    /// The most bytes held.
    #[cfg(test)]
    pub fn bound(&self) -> usize {
        self.bound
    }

    /// The bytes held now.
    pub fn held(&self) -> usize {
        self.held
    }

    /// The value of `key`, if kept.
    pub fn recall(&self, key: &[u8]) -> Option<Vec<u8>> {
        self.values.get(key).cloned()
    }

    /// Keeps `value` under `key`, forgetting the oldest values until it fits. A value
    /// over [`super::MAX_REMEMBERED_SHARE`] of the bound is not kept, and what `key`
    /// held is forgotten.
    pub fn remember(&mut self, key: &[u8], value: &[u8]) {
        self.forget(key);
        let charge = cost(key, value);
        if self.bound == 0 || charge > self.bound / super::MAX_REMEMBERED_SHARE {
            return;
        }
        while self.held + charge > self.bound {
            let Some(oldest) = self.order.pop_front() else { break };
            if let Some(value) = self.values.remove(&oldest) {
                self.held -= cost(&oldest, &value);
            }
        }
        self.held += charge;
        self.values.insert(key.to_vec(), value.to_vec());
        self.order.push_back(key.to_vec());
    }

    /// Forgets everything.
    pub fn clear(&mut self) {
        self.values.clear();
        self.order.clear();
        self.held = 0;
    }

    fn forget(&mut self, key: &[u8]) {
        if let Some(value) = self.values.remove(key) {
            self.held -= cost(key, &value);
            self.order.retain(|held| held.as_slice() != key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_is_recalled_until_newer_ones_push_it_out() {
        let mut kept = Remembered::new(80);
        kept.remember(b"a", &[1; 9]);
        assert_eq!(kept.recall(b"a"), Some(alloc::vec![1; 9]));
        for key in [b"b", b"c", b"d", b"e", b"f", b"g", b"h"] {
            kept.remember(key, &[2; 9]);
            assert!(kept.held() <= kept.bound(), "{} bytes held", kept.held());
        }
        assert_eq!(kept.held(), 80);
        assert_eq!(kept.recall(b"a"), Some(alloc::vec![1; 9]), "eight values of ten bytes fit");
        kept.remember(b"i", &[3; 9]);
        assert_eq!(kept.recall(b"a"), None, "the oldest went first");
        assert_eq!(kept.recall(b"b"), Some(alloc::vec![2; 9]));
        assert_eq!(kept.held(), 80);
    }

    #[test]
    fn a_value_remembered_again_replaces_the_old_one_and_its_charge() {
        let mut kept = Remembered::new(800);
        kept.remember(b"k", &[0; 90]);
        kept.remember(b"k", &[1; 9]);
        assert_eq!((kept.recall(b"k"), kept.held()), (Some(alloc::vec![1; 9]), 10));
    }

    #[test]
    fn a_value_over_an_eighth_of_the_bound_is_not_kept_and_drops_the_old_one() {
        let mut kept = Remembered::new(800);
        kept.remember(b"k", &[0; 99]);
        assert!(kept.recall(b"k").is_some(), "an eighth exactly is kept");
        kept.remember(b"k", &[0; 100]);
        assert_eq!((kept.recall(b"k"), kept.held()), (None, 0));
        let mut off = Remembered::new(0);
        off.remember(b"", b"");
        assert_eq!(off.recall(b""), None, "a bound of zero keeps nothing");
    }
}
