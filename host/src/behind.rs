//! Write-behind: write batches queued in order, committed by a writer thread of their
//! own, and read through until they have committed.
//!
//! An ingest batch's turn at the store ([`crate::host::turns`]) used to last until its
//! write had committed, so the host's half of every batch (copying it into the
//! store's journal and memory table) sat in the chain of turns that bounds an ingest
//! run.
//! With a [`WriteBehind`] in front of the backend, a write only checks its
//! preconditions, copies the batch and queues it; the turn passes at once, and the next
//! batch applies while this one commits.
//!
//! Reads go through the queue: a key written by a queued batch reads as the newest
//! queued batch left it, any other key from the backend. That is exact whether or not
//! the backend's read already sees a queued batch's commit, because a queued batch
//! holds the whole effect of its write on every key it names: the backend only ever
//! gets the same values later. A scan asks the backend for as many more entries as the
//! queue has keys in its range, so that the queue's deletes cannot leave it short.
//!
//! The writer commits every batch queued by the time it is free as one atomic batch of
//! the store (a group commit), so when commits fall behind they catch up.
//!
//! A batch with a range delete is not queued: it waits until the queue is empty and is
//! written at once, so that the queue only ever holds single-key operations.
//!
//! The one thing write-behind changes is when a failure shows: a commit can still fail
//! after its batch was queued (the disk is full, say). No other writer can take a key
//! that a queued put-if-absent checked: the store is held by one process, and within it
//! the queue is the store's only writer while a run lasts. Then that batch and every batch queued after it are dropped
//! unwritten, and every later call fails. That is why a caller may report a batch as
//! applied only once [`WriteBehind::committed`] says so (`serve_in_turn` waits for it).

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::ops::Range;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;

use ledger_node_core::store::{Entry, Op, Scan, Store, StoreError, WriteBatch, WriteError};

use crate::backend::{Backend, OpRef};

/// Most batches waiting for the writer (besides the group it is committing); a write
/// waits while that many are.
const MAX_WAITING: usize = 2;

/// A write-behind queue in front of a backend. Dropping it commits what is queued.
#[derive(Debug)]
pub struct WriteBehind {
    shared: Arc<Shared>,
    writer: Option<JoinHandle<()>>,
}

#[derive(Debug)]
struct Shared {
    backend: Arc<Backend>,
    /// Committed batches, for later batches to fill again.
    spare: Mutex<Vec<Batch>>,
    queue: Mutex<Queue>,
    changed: Condvar,
}

#[derive(Debug, Default)]
struct Queue {
    /// Queued batches, oldest first; the writer is committing the first `committing`.
    batches: VecDeque<Arc<Batch>>,
    /// How many of the first batches the writer is committing, as one group.
    committing: usize,
    /// How many batches have committed: batch `n` has once `committed > n`.
    committed: u64,
    /// How many batches were ever queued (the next batch's number).
    queued: u64,
    /// Why a commit failed: every later call fails with it.
    failed: Option<String>,
    /// No more batches will come: the writer stops once the queue is empty.
    closed: bool,
}

/// One queued write batch: its bytes in one buffer, its operations in order, and an
/// index of the last operation on each key, sorted by key. A committed batch's buffers
/// are filled again by a later one (a fresh 30 MB buffer a batch cost a page fault
/// for every 4 KiB of it).
#[derive(Debug, Default)]
struct Batch {
    bytes: Vec<u8>,
    ops: Vec<QueuedOp>,
    /// `(key, value)` spans, sorted by key, one per key: the value the batch leaves
    /// (`None`: deleted).
    index: Vec<(Range<usize>, Option<Range<usize>>)>,
    /// Scratch space for sorting the index.
    order: Vec<usize>,
}

/// A single-key operation, its bytes as spans of [`Batch::bytes`].
type QueuedOp = Op<Range<usize>>;

impl Batch {
    /// Copies `ops` (none of them a range delete) into the batch, replacing what it held.
    fn fill(&mut self, ops: &[OpRef<'_>]) {
        let Batch { bytes, ops: queued, index, order } = self;
        bytes.clear();
        queued.clear();
        index.clear();
        bytes.reserve(
            ops.iter()
                .map(|op| match *op {
                    OpRef::Put { key, value } | OpRef::PutIfAbsent { key, value } => key.len() + value.len(),
                    OpRef::Delete { key } => key.len(),
                    OpRef::DeleteRange { .. } => 0,
                })
                .sum(),
        );
        queued.reserve(ops.len());
        let mut span = |data: &[u8]| {
            let start = bytes.len();
            bytes.extend_from_slice(data);
            start..bytes.len()
        };
        queued.extend(ops.iter().filter(|op| !matches!(op, OpRef::DeleteRange { .. })).map(|op| op.map(&mut span)));
        // The last operation on each key decides what the batch leaves there.
        let key = |at: usize| &bytes[queued[at].key().clone()];
        order.clear();
        order.extend(0..queued.len());
        // Stable, and quick on the core's batches: a few first operations, then keys in
        // order, which the merge sort takes as two runs.
        order.sort_by(|&a, &b| key(a).cmp(key(b)));
        for (n, &at) in order.iter().enumerate() {
            if order.get(n + 1).is_none_or(|&next| key(next) != key(at)) {
                let value = match &queued[at] {
                    Op::Put { value, .. } | Op::PutIfAbsent { value, .. } => Some(value.clone()),
                    Op::Delete { .. } | Op::DeleteRange { .. } => None,
                };
                index.push((queued[at].key().clone(), value));
            }
        }
    }

    /// Entry `at` of the index: a key, and the value the batch leaves there (`None`:
    /// deleted).
    fn entry(&self, at: usize) -> (&[u8], Option<&[u8]>) {
        let (key, value) = &self.index[at];
        (&self.bytes[key.clone()], value.clone().map(|value| &self.bytes[value]))
    }

    /// The number of index entries whose keys sort before `key`.
    fn before(&self, key: &[u8]) -> usize {
        self.index.partition_point(|(k, _)| &self.bytes[k.clone()] < key)
    }

    /// What the batch leaves at `key`: `None` if it does not name it, `Some(None)` if
    /// it deletes it.
    fn lookup(&self, key: &[u8]) -> Option<Option<&[u8]>> {
        let at = self.index.binary_search_by(|(k, _)| self.bytes[k.clone()].cmp(key)).ok()?;
        Some(self.entry(at).1)
    }

    /// The keys the batch names from `start` (included) to `end` (excluded).
    fn range(&self, start: &[u8], end: Option<&[u8]>) -> impl Iterator<Item = (&[u8], Option<&[u8]>)> {
        let from = self.before(start);
        let to = end.map_or(self.index.len(), |end| self.before(end));
        (from..to.max(from)).map(|at| self.entry(at))
    }

    /// The batch's operations, borrowing its bytes.
    fn op_refs(&self) -> Vec<OpRef<'_>> {
        let bytes = |span: &Range<usize>| &self.bytes[span.clone()];
        self.ops.iter().map(|op| op.clone().map(|span| bytes(&span))).collect()
    }
}

/// The key a single-key operation sets or removes, and whether it is present after.
fn effect<'a>(op: &OpRef<'a>) -> Option<(&'a [u8], bool)> {
    match *op {
        OpRef::Put { key, .. } | OpRef::PutIfAbsent { key, .. } => Some((key, true)),
        OpRef::Delete { key } => Some((key, false)),
        OpRef::DeleteRange { .. } => None,
    }
}

/// Why a call fails after a commit failed.
fn after_failure(why: &str) -> StoreError {
    StoreError::new(format!("an earlier write batch failed to commit, so nothing after it was written: {why}"))
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The queued batches, oldest first, or the failure that emptied the queue.
    fn queued(&self) -> Result<Vec<Arc<Batch>>, StoreError> {
        let queue = self.lock();
        match &queue.failed {
            Some(why) => Err(after_failure(why)),
            None => Ok(queue.batches.iter().cloned().collect()),
        }
    }

    /// The writer: commits queued batches in order until the queue is closed and empty.
    /// It takes every batch queued by then as one group (see [`Shared::commit`]).
    fn write_queued(&self) {
        loop {
            let group: Vec<Arc<Batch>> = {
                let mut queue = self
                    .changed
                    .wait_while(self.lock(), |q| q.batches.is_empty() && !q.closed)
                    .unwrap_or_else(PoisonError::into_inner);
                if queue.batches.is_empty() {
                    return; // closed and empty
                }
                queue.committing = queue.batches.len();
                queue.batches.iter().cloned().collect()
            };
            let (committed, failure) = self.commit(&group);
            let mut queue = self.lock();
            queue.batches.drain(..committed);
            queue.committed += committed as u64;
            queue.committing = 0;
            if let Some(e) = failure {
                queue.failed = Some(match e {
                    WriteError::PreconditionFailed { key } => format!(
                        "the key {} that the batch put only if absent was present when it committed",
                        key.escape_ascii()
                    ),
                    WriteError::Store(e) => e.to_string(),
                });
                queue.batches.clear();
            }
            drop(queue);
            self.changed.notify_all();
            // A reader may still hold a batch; it is then dropped when the read ends.
            let mut spare = self.spare.lock().unwrap_or_else(PoisonError::into_inner);
            for done in group.into_iter().filter_map(|batch| Arc::try_unwrap(batch).ok()) {
                if spare.len() < 2 * MAX_WAITING {
                    spare.push(done);
                }
            }
        }
    }

    /// Commits `group`, queued batches oldest first, in one atomic write of the
    /// backend: how many committed, and why the next one did not.
    ///
    /// A group (of at most [`MAX_WAITING`] batches) forms when commits fall behind the
    /// batches queued. If the group's write fails, its batches are committed one by
    /// one, so that the batches before the failing one commit as they would have alone.
    fn commit(&self, group: &[Arc<Batch>]) -> (usize, Option<WriteError>) {
        let ops: Vec<OpRef<'_>> = group.iter().flat_map(|batch| batch.op_refs()).collect();
        match self.backend.write_ops(&ops) {
            Ok(()) => return (group.len(), None),
            // A group of one has nothing to retry alone.
            Err(e) if group.len() == 1 => return (0, Some(e)),
            Err(_) => {}
        }
        for (committed, batch) in group.iter().enumerate() {
            if let Err(e) = self.backend.write_ops(&batch.op_refs()) {
                return (committed, Some(e));
            }
        }
        (group.len(), None)
    }
}

/// Marks the queue failed if the writer thread unwinds, so that nobody waits for it.
struct WriterGuard(Arc<Shared>);

impl Drop for WriterGuard {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let mut queue = self.0.lock();
            queue.failed.get_or_insert_with(|| "the store's writer thread panicked".to_owned());
            queue.batches.clear();
            drop(queue);
            self.0.changed.notify_all();
        }
    }
}

impl WriteBehind {
    /// A queue in front of `backend`, with its writer thread.
    pub fn new(backend: Arc<Backend>) -> Result<Self, StoreError> {
        let shared = Arc::new(Shared {
            backend,
            spare: Mutex::new(Vec::new()),
            queue: Mutex::new(Queue::default()),
            changed: Condvar::new(),
        });
        let guard = WriterGuard(Arc::clone(&shared));
        let writer = std::thread::Builder::new()
            .name("store-writer".into())
            .spawn(move || guard.0.write_queued())
            .map_err(|e| StoreError::new(format!("starting the store's writer thread: {e}")))?;
        Ok(WriteBehind { shared, writer: Some(writer) })
    }

    /// The backend behind the queue.
    pub fn backend(&self) -> &Arc<Backend> {
        &self.shared.backend
    }

    /// The value of `key`, as the queued batches leave it.
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        let queued = self.shared.queued()?;
        match queued.iter().rev().find_map(|batch| batch.lookup(key)) {
            Some(value) => Ok(value.map(<[u8]>::to_vec)),
            None => self.shared.backend.get(key),
        }
    }

    /// The values of `keys`, in order, as the queued batches leave them.
    pub fn get_many(&self, keys: &[&[u8]]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        let queued = self.shared.queued()?;
        if queued.is_empty() {
            return self.shared.backend.get_many(keys);
        }
        let found: Vec<Option<Option<&[u8]>>> =
            keys.iter().map(|key| queued.iter().rev().find_map(|batch| batch.lookup(key))).collect();
        let missing: Vec<&[u8]> = keys.iter().zip(&found).filter(|(_, f)| f.is_none()).map(|(k, _)| *k).collect();
        // Every key found in the queue: no read snapshot of the backend is needed.
        let mut read =
            if missing.is_empty() { Vec::new() } else { self.shared.backend.get_many(&missing)? }.into_iter();
        Ok(found
            .into_iter()
            .map(|found| match found {
                Some(value) => value.map(<[u8]>::to_vec),
                None => read.next().flatten(),
            })
            .collect())
    }

    /// The entries of `scan`, as the queued batches leave them.
    pub fn scan(&self, scan: &Scan) -> Result<Vec<Entry>, StoreError> {
        let queued = self.shared.queued()?;
        let mut overlay: BTreeMap<&[u8], Option<&[u8]>> = BTreeMap::new();
        for batch in &queued {
            overlay.extend(batch.range(&scan.start, scan.end.as_deref()));
        }
        if overlay.is_empty() {
            return self.shared.backend.scan(scan);
        }
        // At most `overlay.len()` of the backend's entries are replaced or deleted.
        let extra = u32::try_from(overlay.len()).unwrap_or(u32::MAX);
        let wider = Scan { limit: scan.limit.saturating_add(extra), ..scan.clone() };
        let mut merged: BTreeMap<Vec<u8>, Vec<u8>> = self.shared.backend.scan(&wider)?.into_iter().collect();
        for (key, value) in overlay {
            match value {
                Some(value) => merged.insert(key.to_vec(), value.to_vec()),
                None => merged.remove(key),
            };
        }
        let limit = scan.limit as usize;
        Ok(if scan.reverse {
            merged.into_iter().rev().take(limit).collect()
        } else {
            merged.into_iter().take(limit).collect()
        })
    }

    /// Queues `ops` to be committed after every batch queued before, once their
    /// put-if-absent keys are checked; the batch's number, for [`WriteBehind::wait`].
    /// A batch with a range delete is written at once, after the queue has emptied.
    pub fn write(&self, ops: &[OpRef<'_>]) -> Result<u64, WriteError> {
        if ops.iter().any(|op| matches!(op, OpRef::DeleteRange { .. })) {
            return self.write_now(ops);
        }
        self.check_absent(ops)?;
        let mut batch = self.shared.spare.lock().unwrap_or_else(PoisonError::into_inner).pop().unwrap_or_default();
        batch.fill(ops);
        let batch = Arc::new(batch);
        let mut queue = self
            .shared
            .changed
            .wait_while(self.shared.lock(), |q| q.batches.len() - q.committing >= MAX_WAITING && q.failed.is_none())
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(why) = &queue.failed {
            return Err(WriteError::Store(after_failure(why)));
        }
        let number = queue.queued;
        queue.queued += 1;
        queue.batches.push_back(batch);
        drop(queue);
        self.shared.changed.notify_all();
        Ok(number)
    }

    /// Writes `ops` once the queue is empty, as batch number the next.
    fn write_now(&self, ops: &[OpRef<'_>]) -> Result<u64, WriteError> {
        let mut queue = self
            .shared
            .changed
            .wait_while(self.shared.lock(), |q| !q.batches.is_empty() && q.failed.is_none())
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(why) = &queue.failed {
            return Err(WriteError::Store(after_failure(why)));
        }
        // The lock is held through the write, so nothing is queued meanwhile.
        self.shared.backend.write_ops(ops)?;
        let number = queue.queued;
        queue.queued += 1;
        queue.committed += 1;
        drop(queue);
        self.shared.changed.notify_all();
        Ok(number)
    }

    /// Fails with the first put-if-absent key of `ops` that is present, as the batch's
    /// earlier operations, the queue and the backend leave it.
    fn check_absent(&self, ops: &[OpRef<'_>]) -> Result<(), WriteError> {
        let guarded: BTreeSet<&[u8]> = ops
            .iter()
            .filter_map(|op| match *op {
                OpRef::PutIfAbsent { key, .. } => Some(key),
                _ => None,
            })
            .collect();
        if guarded.is_empty() {
            return Ok(());
        }
        // The operations on guarded keys, in order (an ingest batch has one).
        let on_guarded: Vec<&OpRef<'_>> =
            ops.iter().filter(|op| effect(op).is_some_and(|(key, _)| guarded.contains(key))).collect();
        // The guarded keys whose first operation is a put-if-absent: the store decides.
        let mut named = BTreeSet::new();
        let mut unknown: Vec<&[u8]> = Vec::new();
        for op in &on_guarded {
            if let Some((key, _)) = effect(op)
                && named.insert(key)
                && matches!(op, OpRef::PutIfAbsent { .. })
            {
                unknown.push(key);
            }
        }
        // Whether each key is present, as far as the batch has gone.
        let stored = if unknown.is_empty() { Vec::new() } else { self.get_many(&unknown)? };
        let mut present: BTreeMap<&[u8], bool> =
            unknown.into_iter().zip(stored).map(|(key, value)| (key, value.is_some())).collect();
        for op in on_guarded {
            if let OpRef::PutIfAbsent { key, .. } = *op
                && present.get(key).copied().unwrap_or(false)
            {
                return Err(WriteError::PreconditionFailed { key: key.to_vec() });
            }
            if let Some((key, now)) = effect(op) {
                present.insert(key, now);
            }
        }
        Ok(())
    }

    /// Waits until batch `number` has committed; an error if it never will.
    pub fn wait(&self, number: u64) -> Result<(), StoreError> {
        let queue = self
            .shared
            .changed
            .wait_while(self.shared.lock(), |q| q.committed <= number && q.failed.is_none())
            .unwrap_or_else(PoisonError::into_inner);
        if queue.committed > number {
            return Ok(());
        }
        let why = queue.failed.as_deref().unwrap_or("the queue was dropped");
        Err(StoreError::new(format!("the write batch did not commit: {why}")))
    }

    /// Whether batch `number` has committed.
    pub fn committed(&self, number: u64) -> bool {
        self.shared.lock().committed > number
    }
}

impl Drop for WriteBehind {
    fn drop(&mut self) {
        self.shared.lock().closed = true;
        self.shared.changed.notify_all();
        if let Some(writer) = self.writer.take() {
            // A panic of the writer was already recorded by its guard.
            let _ = writer.join();
        }
    }
}

/// The core's port over the queue: read-your-writes without waiting for commits (the
/// storage contract suite runs against it).
impl Store for WriteBehind {
    async fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        WriteBehind::get(self, key)
    }
    async fn get_many(&self, keys: &[&[u8]]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        WriteBehind::get_many(self, keys)
    }
    async fn scan(&self, scan: &Scan) -> Result<Vec<Entry>, StoreError> {
        WriteBehind::scan(self, scan)
    }
    async fn write(&self, batch: &WriteBatch) -> Result<(), WriteError> {
        let ops: Vec<OpRef<'_>> = batch.ops.iter().map(Op::as_bytes).collect();
        WriteBehind::write(self, &ops).map(drop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ledger_node_core::exec::block_on;
    use ledger_node_core::store::contract;

    fn put<'a>(key: &'a [u8], value: &'a [u8]) -> OpRef<'a> {
        OpRef::Put { key, value }
    }

    /// A thread holding a store's write lock.
    struct Stall {
        release: std::sync::mpsc::Sender<Option<(Vec<u8>, Vec<u8>)>>,
        thread: JoinHandle<()>,
    }

    impl Stall {
        /// Lets go of the lock, having first written `write` as another writer would.
        fn release(self, write: Option<(&[u8], &[u8])>) {
            let _ = self.release.send(write.map(|(k, v)| (k.to_vec(), v.to_vec())));
            self.thread.join().expect("no panics");
        }
    }

    /// A store in a directory holding `stored`, and a thread that holds its write lock,
    /// so that queued batches stay uncommitted until it lets go.
    fn stalled_store(stored: &[OpRef<'_>]) -> (tempfile::TempDir, WriteBehind, Stall) {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let backend = Arc::new(Backend::open(&dir.path().join("behind.store")).expect("a store"));
        backend.write_ops(stored).expect("stored");
        let queue = WriteBehind::new(Arc::clone(&backend)).expect("a queue");
        let (held, is_held) = std::sync::mpsc::channel();
        let (release, on_release) = std::sync::mpsc::channel();
        let thread = std::thread::spawn(move || {
            let Backend::Lsm(store) = backend.as_ref() else { unreachable!("a store in a directory") };
            store.stall_writes(held, on_release);
        });
        is_held.recv().expect("the write lock");
        (dir, queue, Stall { release, thread })
    }

    #[test]
    fn the_queue_honours_the_storage_contract() {
        let report = block_on(contract::run(&WriteBehind::new(Arc::new(Backend::memory())).expect("a queue")));
        assert!(report.ok, "{:#?}", report.failures().collect::<Vec<_>>());
        let dir = tempfile::tempdir().expect("a temporary directory");
        let backend = Backend::open(&dir.path().join("contract.store")).expect("a store");
        let report = block_on(contract::run(&WriteBehind::new(Arc::new(backend)).expect("a queue")));
        assert!(report.ok, "{:#?}", report.failures().collect::<Vec<_>>());
    }

    #[test]
    fn reads_see_queued_batches_before_they_commit() {
        let stored = [put(b"a1", b"old"), put(b"a2", b"kept"), put(b"a3", b"gone"), put(b"b", b"x")];
        let (_dir, queue, other) = stalled_store(&stored);
        let backend = Arc::clone(queue.backend());
        let first = queue.write(&[put(b"a1", b"new"), OpRef::Delete { key: b"a3" }, put(b"a4", b"added")]).unwrap();
        let second = queue.write(&[put(b"a0", b"first"), OpRef::Delete { key: b"a4" }]).unwrap();
        assert_eq!((first, second), (0, 1));
        assert!(!queue.committed(first), "another thread holds the write lock");
        assert_eq!(backend.get(b"a1").unwrap().as_deref(), Some(&b"old"[..]), "nothing committed yet");

        assert_eq!(queue.get(b"a1").unwrap().as_deref(), Some(&b"new"[..]));
        assert_eq!(queue.get(b"a3").unwrap(), None);
        assert_eq!(queue.get(b"a4").unwrap(), None, "the newest batch wins");
        let keys: [&[u8]; 5] = [b"a0", b"a1", b"a2", b"a3", b"zz"];
        let values = queue.get_many(&keys).unwrap();
        let values: Vec<Option<&[u8]>> = values.iter().map(Option::as_deref).collect();
        assert_eq!(values, [Some(&b"first"[..]), Some(b"new"), Some(b"kept"), None, None]);

        let expected: Vec<Entry> = [("a0", "first"), ("a1", "new"), ("a2", "kept")]
            .into_iter()
            .map(|(k, v)| (k.as_bytes().to_vec(), v.as_bytes().to_vec()))
            .collect();
        for limit in 0..5u32 {
            let scan = Scan::prefix(b"a", limit);
            let want: Vec<Entry> = expected.iter().take(limit as usize).cloned().collect();
            assert_eq!(queue.scan(&scan).unwrap(), want, "limit {limit}");
            let want: Vec<Entry> = expected.iter().rev().take(limit as usize).cloned().collect();
            assert_eq!(queue.scan(&scan.reversed()).unwrap(), want, "limit {limit}, reversed");
        }

        other.release(None);
        queue.wait(second).expect("both batches commit");
        assert!(queue.committed(first));
        assert_eq!(backend.scan(&Scan::prefix(b"a", 10)).unwrap(), expected, "the backend holds what the queue showed");
    }

    #[test]
    fn put_if_absent_is_checked_against_the_queue_and_the_batch() {
        let (_dir, queue, other) = stalled_store(&[]);
        queue.write(&[put(b"k", b"1")]).unwrap();
        let present = OpRef::PutIfAbsent { key: b"k", value: b"2" };
        assert_eq!(queue.write(&[present]), Err(WriteError::PreconditionFailed { key: b"k".to_vec() }));
        let fresh = OpRef::PutIfAbsent { key: b"n", value: b"1" };
        assert_eq!(
            queue.write(&[fresh, OpRef::Delete { key: b"k" }, present, fresh]),
            Err(WriteError::PreconditionFailed { key: b"n".to_vec() }),
            "the batch's own put counts"
        );
        let last = queue.write(&[OpRef::Delete { key: b"k" }, present]).expect("deleted first, in the batch");
        other.release(None);
        queue.wait(last).expect("committed");
        assert_eq!(queue.backend().get(b"k").unwrap().as_deref(), Some(&b"2"[..]));
        assert_eq!(queue.backend().get(b"n").unwrap(), None, "a refused batch writes nothing");
    }

    #[test]
    fn a_failed_commit_drops_every_later_batch_and_fails_every_later_call() {
        let (_dir, queue, other) = stalled_store(&[]);
        // Checked while `k` is absent, then taken by another writer before the commit.
        let first = queue.write(&[put(b"a", b"1"), OpRef::PutIfAbsent { key: b"k", value: b"mine" }]).unwrap();
        let second = queue.write(&[put(b"b", b"2")]).unwrap();
        other.release(Some((b"k", b"theirs")));

        let error = queue.wait(first).expect_err("the first batch cannot commit").to_string();
        assert!(error.contains("the key k that the batch put only if absent was present"), "{error}");
        assert!(queue.wait(second).is_err(), "a later batch is dropped");
        assert!(queue.get(b"a").is_err(), "reads fail after a failed commit");
        assert!(matches!(queue.write(&[put(b"c", b"3")]), Err(WriteError::Store(_))));
        let backend = queue.backend();
        assert_eq!(backend.get(b"a").unwrap(), None, "nothing of the failed batch was written");
        assert_eq!(backend.get(b"b").unwrap(), None, "nothing after it was written");
        assert_eq!(backend.get(b"k").unwrap().as_deref(), Some(&b"theirs"[..]));
    }

    /// Queued batches holding `ops`, as the writer takes them.
    fn batches(groups: &[&[OpRef<'_>]]) -> Vec<Arc<Batch>> {
        groups
            .iter()
            .map(|ops| {
                let mut batch = Batch::default();
                batch.fill(ops);
                Arc::new(batch)
            })
            .collect()
    }

    fn shared(backend: Backend) -> Shared {
        Shared {
            backend: Arc::new(backend),
            spare: Mutex::new(Vec::new()),
            queue: Mutex::new(Queue::default()),
            changed: Condvar::new(),
        }
    }

    #[test]
    fn a_group_commits_whole_and_its_batches_before_a_failing_one_still_commit() {
        let shared = shared(Backend::memory());
        let group = batches(&[&[put(b"a", b"1")], &[put(b"a", b"2"), put(b"b", b"1")]]);
        assert!(matches!(shared.commit(&group), (2, None)));
        assert_eq!(shared.backend.get(b"a").unwrap().as_deref(), Some(&b"2"[..]), "the later batch wins");

        // The second batch's put-if-absent fails: the group's transaction writes
        // nothing, then the first batch commits alone and the third is not tried.
        let taken = OpRef::PutIfAbsent { key: b"b", value: b"mine" };
        let group = batches(&[&[put(b"c", b"1")], &[put(b"d", b"1"), taken], &[put(b"e", b"1")]]);
        let (committed, failure) = shared.commit(&group);
        assert_eq!(committed, 1);
        assert_eq!(failure, Some(WriteError::PreconditionFailed { key: b"b".to_vec() }));
        assert_eq!(shared.backend.get(b"c").unwrap().as_deref(), Some(&b"1"[..]));
        assert_eq!(shared.backend.get(b"d").unwrap(), None, "nothing of the failing batch");
        assert_eq!(shared.backend.get(b"e").unwrap(), None, "nothing after it");
        assert_eq!(shared.backend.get(b"b").unwrap().as_deref(), Some(&b"1"[..]));
    }

    #[test]
    fn batches_that_wait_behind_a_commit_commit_together() {
        let (_dir, queue, other) = stalled_store(&[]);
        // The writer takes the first batch and waits for the write lock.
        let first = queue.write(&[put(b"a", b"1")]).unwrap();
        while queue.shared.lock().committing == 0 {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        // The batch being committed does not count against the waiting batches' limit.
        let second = queue.write(&[put(b"b", b"2")]).unwrap();
        let third = queue.write(&[put(b"c", b"3")]).unwrap();
        {
            let state = queue.shared.lock();
            assert_eq!((state.batches.len(), state.committing), (3, 1), "two batches wait behind the first");
        }
        other.release(None);
        queue.wait(third).expect("committed");
        assert!(queue.committed(first) && queue.committed(second));
        let stored = queue.backend().scan(&Scan::prefix(b"", 10)).unwrap();
        assert_eq!(stored.len(), 3);
        let Backend::Lsm(store) = queue.backend().as_ref() else { unreachable!("a store in a directory") };
        assert_eq!(store.commits(), 2, "the first batch alone, then the two that waited behind it as one group");
    }

    #[test]
    fn a_range_delete_waits_for_the_queue_and_is_written_at_once() {
        let (_dir, queue, other) = stalled_store(&[]);
        queue.write(&[put(b"r1", b"1"), put(b"r2", b"2"), put(b"s", b"3")]).unwrap();
        let release = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(50));
            other.release(None);
        });
        let number = queue.write(&[OpRef::DeleteRange { start: b"r", end: Some(b"s") }]).unwrap();
        assert!(queue.committed(number), "written before it returned");
        release.join().expect("no panics");
        let left = queue.backend().scan(&Scan::prefix(b"", 10)).unwrap();
        assert_eq!(left, [(b"s".to_vec(), b"3".to_vec())]);
    }

    #[test]
    fn dropping_the_queue_commits_what_it_holds() {
        let backend = Arc::new(Backend::memory());
        let queue = WriteBehind::new(Arc::clone(&backend)).expect("a queue");
        for n in 0..5u8 {
            queue.write(&[put(&[n], b"v")]).unwrap();
        }
        drop(queue);
        assert_eq!(backend.scan(&Scan::prefix(b"", 10)).unwrap().len(), 5);
    }
}
