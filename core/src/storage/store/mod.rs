//! The storage port: an ordered key-value store, the core's only storage abstraction.
//!
//! Keys and values are bytes; keys are ordered bytewise (`memcmp`), shorter first on a
//! common prefix. The port has four operations:
//!
//! - [`Store::get`] and [`Store::get_many`]: point reads (one round trip for many keys);
//! - [`Store::scan`]: a range in key order, forward or reverse, with a limit;
//! - [`Store::write`]: an atomic [`WriteBatch`] of puts, deletes and put-if-absent
//!   preconditions. A failed precondition writes nothing and names the key.
//!
//! Adapters: [`MemoryStore`] here (tests, and the component host's memory mode), an
//! LSM tree (fjall) in the native host, D1 in the worker, and the WIT `store` import in
//! the component.
//! [`contract`] is the test suite every adapter must pass; the node runs it on demand
//! against its live backend (`POST /v0/admin/store-check`) in a scratch key range.
//!
//! Futures are not `Send`: Workers and wasip2 are single-threaded.
//!
//! ## Remembered values: a cache, not storage
//!
//! Besides the store, every host offers the core a cache in its own memory:
//! [`Store::remember`] offers it a value under a key the core chooses, and
//! [`Store::recall`] asks for it back. Both are synchronous, since every host answers
//! them from its own memory. The core keeps there what it can compute again from the
//! store, and would rather not: an update's rendered body, a pure function of
//! immutable stored data. The rules, which every adapter keeps (the [`contract`]
//! checks them):
//!
//! - nothing remembered is ever persisted, or read by the core as stored data;
//! - the host bounds what it keeps in bytes, and may forget any value at any time;
//!   a value larger than an eighth of its bound ([`MAX_REMEMBERED_SHARE`]) is not
//!   kept, and a bound of zero keeps nothing;
//! - [`Store::recall`] after [`Store::remember`] returns the same bytes or nothing,
//!   never another value;
//! - a host forgets everything it keeps when it applies a write batch that may remove
//!   data a remembered value was computed from ([`forgets_remembered`]): a range delete
//!   (the reset deletes everything), or a delete of a key of an immutable table. A
//!   delete of any other key does not forget: every guarded commit deletes one (its
//!   ingest generation, [`crate::storage::commit`]), and mutable data is never what a
//!   remembered value is computed from. A host where another writer may reset the
//!   store beside it (the worker's other isolates) forgets when it learns of that.
//!
//! So the core remembers only values that are a pure function of immutable stored
//! data, under a key that names that data; a write that adds data never makes one
//! wrong.
//!
//! ## Access rules
//!
//! The core reads each table of its keyspace as [`crate::storage::keys::TABLES`] declares:
//! some one key at a time, some scanned only within a prefix, some with immutable
//! values. An adapter may build on that (the worker stores such keys shorter, and
//! immutable bodies outside D1), so the core keeps to it, and [`MemoryStore`] refuses
//! what breaks it ([`access`] has the rules). Maintenance that covers the whole
//! keyspace keeps working: a range delete may always cover whole tables (the reset
//! deletes everything); a scan of everything is refused like any scan of a table read
//! by point, so the storage check scans only inside its scratch namespace and the
//! layout check reads its keys one at a time and scans only the generations.

pub mod access;
pub mod contract;
mod memory;
mod prefixed;
mod remembered;

use alloc::vec::Vec;

pub use memory::{DEFAULT_REMEMBERED_BYTES, MemoryStore};
pub use prefixed::Prefixed;

use crate::model::error::{Error, StoreError};
use crate::storage::keys;

/// A host keeps no remembered value larger than its bound divided by this.
pub const MAX_REMEMBERED_SHARE: usize = 8;

/// Whether applying `ops` may remove data that a remembered value was computed from,
/// so that the host forgets everything it keeps ([module docs](self)): the batch holds
/// a range delete, or a delete of a key of a table whose values never change
/// ([`keys::Table::immutable`]; the access rules refuse that outside a range delete of
/// the whole table, so only the reset does it).
pub fn forgets_remembered<B: AsRef<[u8]>>(ops: &[Op<B>]) -> bool {
    ops.iter().any(|op| match op {
        Op::DeleteRange { .. } => true,
        Op::Delete { key } => key.as_ref().first().and_then(|tag| keys::table(*tag)).is_some_and(|t| t.immutable),
        Op::Put { .. } | Op::PutIfAbsent { .. } => false,
    })
}

/// Why a write batch was not applied. Either way, nothing of it was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteError {
    /// A [`Op::PutIfAbsent`] found its key present.
    PreconditionFailed {
        /// The first key (in batch order) whose precondition failed.
        key: Vec<u8>,
    },
    /// The backend failed.
    Store(StoreError),
}

impl From<StoreError> for WriteError {
    fn from(e: StoreError) -> Self {
        WriteError::Store(e)
    }
}

/// A write without preconditions can only fail in the backend.
pub(crate) fn write_failed(e: WriteError) -> Error {
    match e {
        WriteError::Store(e) => Error::Store(e),
        WriteError::PreconditionFailed { key } => Error::Internal(alloc::format!(
            "unexpected precondition failure on key {:?}",
            alloc::string::String::from_utf8_lossy(&key)
        )),
    }
}

/// One operation of a [`WriteBatch`], over keys and values of type `B`: owned bytes
/// in a batch (the default), borrowed bytes where a backend reads a batch in place
/// (`Op<&[u8]>`), or whatever else a backend keeps them as. One type, so that every
/// layer names the same four operations the same way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op<B = Vec<u8>> {
    /// Sets `key` to `value`.
    Put {
        /// The key.
        key: B,
        /// The value.
        value: B,
    },
    /// Sets `key` to `value` if `key` is absent; otherwise the whole batch fails.
    PutIfAbsent {
        /// The key.
        key: B,
        /// The value.
        value: B,
    },
    /// Removes `key` (absent keys are fine).
    Delete {
        /// The key.
        key: B,
    },
    /// Removes every key in `start..end` (`end: None`: to the end of the keyspace).
    DeleteRange {
        /// First key removed.
        start: B,
        /// First key kept, if any.
        end: Option<B>,
    },
}

impl<B> Op<B> {
    /// The key the operation is about (the start of a range).
    pub fn key(&self) -> &B {
        match self {
            Op::Put { key, .. } | Op::PutIfAbsent { key, .. } | Op::Delete { key } => key,
            Op::DeleteRange { start, .. } => start,
        }
    }

    /// The value the operation writes, if it writes one.
    pub fn value(&self) -> Option<&B> {
        match self {
            Op::Put { value, .. } | Op::PutIfAbsent { value, .. } => Some(value),
            Op::Delete { .. } | Op::DeleteRange { .. } => None,
        }
    }

    /// The same operation over `f` of each key and value.
    pub fn map<C>(self, mut f: impl FnMut(B) -> C) -> Op<C> {
        match self {
            Op::Put { key, value } => Op::Put { key: f(key), value: f(value) },
            Op::PutIfAbsent { key, value } => Op::PutIfAbsent { key: f(key), value: f(value) },
            Op::Delete { key } => Op::Delete { key: f(key) },
            Op::DeleteRange { start, end } => Op::DeleteRange { start: f(start), end: end.map(f) },
        }
    }
}

impl<B: AsRef<[u8]>> Op<B> {
    /// The operation, borrowing its bytes.
    pub fn as_bytes(&self) -> Op<&[u8]> {
        match self {
            Op::Put { key, value } => Op::Put { key: key.as_ref(), value: value.as_ref() },
            Op::PutIfAbsent { key, value } => Op::PutIfAbsent { key: key.as_ref(), value: value.as_ref() },
            Op::Delete { key } => Op::Delete { key: key.as_ref() },
            Op::DeleteRange { start, end } => {
                Op::DeleteRange { start: start.as_ref(), end: end.as_ref().map(B::as_ref) }
            }
        }
    }

    /// The operation, owning a copy of its bytes.
    pub fn to_owned_bytes(&self) -> Op {
        self.as_bytes().map(<[u8]>::to_vec)
    }
}

/// Operations applied in order, all or nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WriteBatch {
    /// The operations, in order.
    pub ops: Vec<Op>,
}

impl WriteBatch {
    /// An empty batch.
    pub fn new() -> Self {
        WriteBatch::default()
    }

    /// Adds a put.
    pub fn put(&mut self, key: impl Into<Vec<u8>>, value: impl Into<Vec<u8>>) -> &mut Self {
        self.ops.push(Op::Put { key: key.into(), value: value.into() });
        self
    }

    /// Adds a put that requires `key` to be absent.
    pub fn put_if_absent(&mut self, key: impl Into<Vec<u8>>, value: impl Into<Vec<u8>>) -> &mut Self {
        self.ops.push(Op::PutIfAbsent { key: key.into(), value: value.into() });
        self
    }

    /// Adds a delete.
    pub fn delete(&mut self, key: impl Into<Vec<u8>>) -> &mut Self {
        self.ops.push(Op::Delete { key: key.into() });
        self
    }

    /// Adds a range delete.
    pub fn delete_range(&mut self, start: impl Into<Vec<u8>>, end: Option<Vec<u8>>) -> &mut Self {
        self.ops.push(Op::DeleteRange { start: start.into(), end });
        self
    }

    /// Whether the batch has no operations.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }
}

/// A key range to scan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scan {
    /// First key included.
    pub start: Vec<u8>,
    /// First key excluded; `None`: to the end of the keyspace.
    pub end: Option<Vec<u8>>,
    /// At most this many entries.
    pub limit: u32,
    /// Descending key order (from just below `end`).
    pub reverse: bool,
}

impl Scan {
    /// Every key that starts with `prefix`, ascending.
    pub fn prefix(prefix: &[u8], limit: u32) -> Self {
        Scan { start: prefix.into(), end: prefix_end(prefix), limit, reverse: false }
    }

    /// The same range, descending.
    pub fn reversed(mut self) -> Self {
        self.reverse = true;
        self
    }

    /// Whether `key` lies in the range.
    pub fn contains(&self, key: &[u8]) -> bool {
        key >= self.start.as_slice() && self.end.as_deref().is_none_or(|end| key < end)
    }
}

/// The smallest key greater than every key starting with `prefix`, or `None` when
/// there is none (the prefix is empty or all `0xff`).
pub fn prefix_end(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}

/// The smallest key greater than `key`: where a scan that read up to `key` goes on.
pub fn key_after(key: &[u8]) -> Vec<u8> {
    let mut next = Vec::with_capacity(key.len() + 1);
    next.extend_from_slice(key);
    next.push(0);
    next
}

/// The key a backend must name when `batch` failed a precondition, given which keys
/// were present before the batch. For backends that learn only *that* a batch failed
/// (D1 rolls the whole batch back on a constraint violation): replays the batch's
/// effect on key presence and returns the first [`Op::PutIfAbsent`] whose key would
/// be present, or `None` if no precondition fails.
pub fn first_failed_precondition(batch: &WriteBatch, present_before: impl Fn(&[u8]) -> bool) -> Option<Vec<u8>> {
    use alloc::collections::BTreeMap;
    // Keys whose presence the batch has decided so far, and the ranges it deleted.
    let mut decided: BTreeMap<&[u8], bool> = BTreeMap::new();
    let mut deleted: Vec<(&[u8], Option<&[u8]>)> = Vec::new();
    for op in &batch.ops {
        match op {
            Op::Put { key, .. } => {
                decided.insert(key, true);
            }
            Op::PutIfAbsent { key, .. } => {
                let present = match decided.get(key.as_slice()) {
                    Some(present) => *present,
                    None => {
                        let in_deleted =
                            deleted.iter().any(|(s, e)| key.as_slice() >= *s && e.is_none_or(|e| key.as_slice() < e));
                        !in_deleted && present_before(key)
                    }
                };
                if present {
                    return Some(key.clone());
                }
                decided.insert(key, true);
            }
            Op::Delete { key } => {
                decided.insert(key, false);
            }
            Op::DeleteRange { start, end } => {
                let end = end.as_deref();
                for (_, present) in
                    decided.iter_mut().filter(|(k, _)| **k >= start.as_slice() && end.is_none_or(|e| **k < e))
                {
                    *present = false;
                }
                deleted.push((start, end));
            }
        }
    }
    None
}

/// A key-value entry.
pub type Entry = (Vec<u8>, Vec<u8>);

/// The storage port. See the [module docs](self).
#[expect(async_fn_in_trait, reason = "hosts are single-threaded; futures need not be Send")]
pub trait Store {
    /// The value of `key`.
    async fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError>;
    /// The values of `keys`, in the same order.
    async fn get_many(&self, keys: &[&[u8]]) -> Result<Vec<Option<Vec<u8>>>, StoreError>;
    /// The entries of `scan.start..scan.end`, in key order (descending if `reverse`), at
    /// most `limit`.
    async fn scan(&self, scan: &Scan) -> Result<Vec<Entry>, StoreError>;
    /// Applies `batch` atomically.
    async fn write(&self, batch: &WriteBatch) -> Result<(), WriteError>;
    /// A value kept by [`Store::remember`] under `key`, if the host still holds it.
    fn recall(&self, key: &[u8]) -> Option<Vec<u8>>;
    /// Offers the host `value` to keep in memory under `key`, for [`Store::recall`].
    fn remember(&self, key: &[u8], value: &[u8]);
}

impl<S: Store> Store for &S {
    async fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        (**self).get(key).await
    }
    async fn get_many(&self, keys: &[&[u8]]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        (**self).get_many(keys).await
    }
    async fn scan(&self, scan: &Scan) -> Result<Vec<Entry>, StoreError> {
        (**self).scan(scan).await
    }
    async fn write(&self, batch: &WriteBatch) -> Result<(), WriteError> {
        (**self).write(batch).await
    }
    fn recall(&self, key: &[u8]) -> Option<Vec<u8>> {
        (**self).recall(key)
    }
    fn remember(&self, key: &[u8], value: &[u8]) {
        (**self).remember(key, value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_failed_precondition_is_replayed_from_presence() {
        let mut batch = WriteBatch::new();
        batch
            .put_if_absent(b"a".to_vec(), b"".to_vec())
            .delete(b"b".to_vec())
            .put_if_absent(b"b".to_vec(), b"".to_vec());
        assert_eq!(first_failed_precondition(&batch, |k| k == b"b"), None);
        assert_eq!(first_failed_precondition(&batch, |k| k == b"a"), Some(b"a".to_vec()));
        let mut batch = WriteBatch::new();
        batch.put(b"c".to_vec(), b"".to_vec()).put_if_absent(b"c".to_vec(), b"".to_vec());
        assert_eq!(first_failed_precondition(&batch, |_| false), Some(b"c".to_vec()));
        let mut batch = WriteBatch::new();
        batch.delete_range(b"a".to_vec(), None).put_if_absent(b"x".to_vec(), b"".to_vec());
        assert_eq!(first_failed_precondition(&batch, |_| true), None);
    }

    #[test]
    fn the_key_after_a_key_is_the_next_one_in_order() {
        let after = key_after(b"ab");
        assert!(after.as_slice() > b"ab".as_slice());
        assert!(after.as_slice() < b"ab\x00\x00".as_slice());
        let scan = Scan { start: after, end: None, limit: 10, reverse: false };
        assert!(!scan.contains(b"ab"));
        assert!(scan.contains(b"ab\x00\x00"));
        assert!(scan.contains(b"ac"));
    }

    #[test]
    fn a_range_delete_or_a_delete_of_immutable_data_forgets_what_was_remembered() {
        let body = keys::Key::new(keys::UPDATE).str("tx-1").byte(0).into_bytes();
        let generation = keys::Key::new(keys::GENERATION).i64(3).into_bytes();
        let forgets = |op: Op| forgets_remembered(&[Op::Put { key: b"k".to_vec(), value: b"v".to_vec() }, op]);
        assert!(forgets(Op::DeleteRange { start: Vec::new(), end: None }));
        assert!(forgets(Op::DeleteRange { start: b"a".to_vec(), end: Some(b"b".to_vec()) }));
        assert!(forgets(Op::Delete { key: body.clone() }));
        assert!(!forgets(Op::Delete { key: generation }), "a guarded commit's delete of its generation");
        assert!(!forgets(Op::Delete { key: Vec::new() }));
        assert!(!forgets(Op::Put { key: body.clone(), value: b"v".to_vec() }));
        assert!(!forgets(Op::PutIfAbsent { key: body, value: b"v".to_vec() }));
    }

    #[test]
    fn prefix_end_is_the_next_prefix() {
        assert_eq!(prefix_end(b"ab"), Some(b"ac".to_vec()));
        assert_eq!(prefix_end(&[0x01, 0xff]), Some(alloc::vec![0x02]));
        assert_eq!(prefix_end(&[0xff, 0xff]), None);
        assert_eq!(prefix_end(b""), None);
    }
}
