//! The native store in a directory, a [`Backend`] (so also, through
//! [`crate::backend::Port`], an adapter of the core's storage port): a log-structured
//! merge tree ([fjall](https://docs.rs/fjall)) in a directory of its own.
//!
//! Update and contract ids are random, so the node's writes land all over its key
//! space. An LSM tree takes them in order of arrival: a write batch is appended to a
//! journal and applied to an in-memory table, which is written out sorted when full and
//! merged into the levels below in the background, so no write waits for a random
//! read of the index, however large the store. Values of 512 bytes or more (updates'
//! stored forms, contract records) are LZ4-compressed by the writer before its batch is
//! committed (`lsm/values.rs`), so the journal, the in-memory table and the blob files
//! all hold a third of the raw bytes, and fjall's one background thread, which also
//! merges, compresses nothing. Stored values over [`SEPARATION_BYTES`] are kept apart
//! from the keys in blob files that merges rewrite only once over a quarter of a file's
//! bytes are values no longer held (fjall's defaults); the key index stays small enough
//! for its upper levels to be held in memory, and a read by key is one read of the
//! index (Bloom filters answer for keys that are absent) and one of the blob.
//!
//! The key index and Bloom filters follow fjall's defaults: held in memory for the
//! upper levels, and, in the lower ones, where a loaded store keeps nearly all its
//! keys, split into partitions read through the block cache. Memory then stays
//! bounded by the caches as the history grows. Holding every table's index and filter
//! in memory read updates by id about 7% faster at 1,000,000 updates, but it held about
//! 25 MB more per million updates (`serve` at 298 MB of anonymous memory with
//! 5,000,000 held), and every start read all of it before its first answer. These
//! options are fjall's per keyspace, fixed when the keyspace is created: a store made
//! by an earlier build keeps its own.
//!
//! When serving, values read by key are also kept whole in a row cache
//! (`lsm/rows.rs`), from which a write removes its keys before it returns. The body
//! cache (`bodies.rs`) is kept here too, when serving, and forgotten by the same
//! writes; a bulk load keeps none.
//!
//! One background thread writes the in-memory tables out and merges tables. With two,
//! fjall's pool (3.1) has its first thread hand each merge request back to the queue
//! and take it again, spinning on a core for as long as the other thread merges: a
//! fifth of a bulk load's processor time. A single thread also takes requests to seal
//! the in-memory table only between merges, so this adapter seals it itself once
//! 64 MiB (a bulk load) or 32 MiB (serving) have been written to it; fjall then holds
//! writes back while four sealed tables wait to be written out, which bounds the
//! memory a load holds.
//!
//! One keyspace, `kv`, holds the core's keys as they are (fjall compares keys bytewise,
//! exactly the port's order); `layout` records the stored layout's version. Every
//! write batch is one fjall batch, committed atomically: its preconditions are checked
//! and it is committed under one lock, so a put-if-absent cannot lose a race. A
//! committed batch is visible to every read that starts after it returns.
//!
//! Only one process at a time holds a store (fjall locks the directory): the others are
//! refused with advice. A SQLite file of an earlier build is refused too, with what to
//! do about it.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::ops::Bound;
use std::path::Path;
use std::sync::{Arc, Mutex};

use fjall::compaction::Leveled;
use fjall::{Database, Keyspace, KeyspaceCreateOptions, KvSeparationOptions, PersistMode, Readable as _};
use ledger_node_core::model::error::StoreError;
use ledger_node_core::storage::store::{Entry, Scan, WriteError};

use crate::backend::{Backend, OpRef};
use crate::bodies::BodyCache;

mod rows;
mod values;
use rows::Rows;
use values::Encoded;

/// Stored values (compressed, if they were long: `lsm/values.rs`) longer than this are
/// kept apart from the key index, in blob files. An update body is stored in about
/// 2 KB: kept in the key index, every merge would rewrite it (a load of 1,000,000
/// updates with the threshold at 2,048 bytes had not finished after four minutes,
/// against about 65 s).
pub const SEPARATION_BYTES: u32 = 512;

/// The stored layout's version; a store of another layout is refused rather than
/// misread. It counts the core's keyspace too. Version 2 stores every non-empty value
/// with a tag byte, long ones compressed (`lsm/values.rs`).
const LAYOUT_VERSION: u32 = 2;

/// Where the layout's version is kept, in the `layout` keyspace.
const LAYOUT_KEY: &[u8] = b"version";

/// Block cache of the key index, of small values and of blobs when serving:
/// anonymous memory the process holds whatever the size of the store (blob files are
/// read through the system's page cache). With the row cache and the body cache,
/// `serve` peaked at 166 MB holding 1,000,000 updates under the benchmark's load.
const SERVE_CACHE_BYTES: u64 = 48 * 1024 * 1024;

/// Row cache when serving ([`Rows`]): values read by key, whole. An update is stored
/// as a binary form of about 1.4 KB, and the rendered bodies read most are kept by the
/// body cache in front (`bodies.rs`, 64 MiB by default), so the rows are the forms of
/// bodies that cache lost and the contract records the registry reads. 16 MiB keeps
/// `serve` under 200 MB of anonymous memory with both caches full (64 MiB with bodies
/// stored rendered, before the body cache).
const SERVE_ROW_CACHE_BYTES: u64 = 16 * 1024 * 1024;

/// Block cache of a bulk load, which reads little and holds its batches' memory too.
const BULK_CACHE_BYTES: u64 = 64 * 1024 * 1024;

/// Bytes written to the in-memory table of a bulk load at which it is sealed and
/// written out; the load holds it, and up to four more being written, in anonymous
/// memory (about 650 MB at the peak of a load of 1,000,000 updates). While values
/// reached the table raw, a load wrote about 170 MB/s to it and the one background
/// thread took a second or more for a merge into level 1, so four sealed tables of
/// 32 MiB filled during one merge and fjall halted the writer (4.7 s of a
/// 1,000,000-update load); tables of 64 MiB halved that, and the load ran about 5%
/// faster. With values compressed by the writer a load writes a third of that, and
/// 32 MiB measured within the spread of 64 (14,392 and 15,538 updates/s against
/// 15,118 and 15,353), so the larger table, which is written out and merged half as
/// often, stays.
const BULK_MEMTABLE_BYTES: u64 = 64 * 1024 * 1024;

/// Bytes written to the in-memory table of a serving node at which it is sealed: a
/// node takes the network's history at its pace, far below a bulk load's, and a
/// smaller table is less memory held and less journal to replay after a crash.
const SERVE_MEMTABLE_BYTES: u64 = 32 * 1024 * 1024;

/// Tables in level 0 at which they are merged into level 1. The tables an in-memory
/// table is written out as are small (about 3.2 MB for a bulk load's 64 MiB written:
/// the values go to blob files), and random keys make each overlap all of level 1, so
/// every merge into level 1 rewrites all of it: merging sixteen at a time instead of
/// fjall's four rewrites it a quarter as often. fjall slows writes from 20 tables in
/// level 0 and stops them at 30, so this stays below 20.
const LEVEL0_TABLES: u8 = 16;

/// Target size of a table in the levels below 0. fjall sizes level 1 as
/// [`LEVEL0_TABLES`] tables, 128 MiB here, and each next level ten times as much. With
/// fjall's 64 MiB tables, level 1 would grow to 1 GiB, more than the whole key index of
/// 1,000,000 updates (about 500 MB), which every merge into level 1 would then rewrite.
const TABLE_BYTES: u64 = 8 * 1024 * 1024;

/// The first bytes of a SQLite database file.
const SQLITE_HEADER: &[u8] = b"SQLite format 3\0";

/// What a write batch leaves at each key it names, in key order: the operation whose
/// value it holds (`None`: deleted).
type Effects<'a> = BTreeMap<Cow<'a, [u8]>, Option<usize>>;

/// A store in a directory, open in this process only.
pub struct LsmStore {
    db: Database,
    kv: Keyspace,
    /// How each commit is persisted before it returns.
    durability: PersistMode,
    /// Held while a batch's preconditions are checked and it is committed: the bytes
    /// written to the in-memory table since it was last sealed.
    writer: Mutex<u64>,
    /// The bytes written at which this adapter seals the in-memory table.
    memtable_bytes: u64,
    /// Values read by key, when serving; a bulk load reads too little to keep any.
    rows: Option<Rows>,
    /// Values the core remembers, when serving ([`Self::with_body_cache`]).
    bodies: BodyCache,
}

impl std::fmt::Debug for LsmStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LsmStore").field("durability", &self.durability).finish_non_exhaustive()
    }
}

fn backend(e: fjall::Error) -> StoreError {
    StoreError::new(format!("store: {e}"))
}

fn poisoned<T>(_: std::sync::PoisonError<T>) -> StoreError {
    StoreError::new("store: the write lock was poisoned by a panic")
}

impl LsmStore {
    /// Opens (creating if needed) the store in directory `path`.
    ///
    /// Every commit is synced to disk before it returns: a write the node answered for,
    /// a wallet request above all, survives a power loss, not only a crash of the
    /// process.
    ///
    /// It keeps a body cache of [`crate::bodies::DEFAULT_BYTES`]
    /// ([`Self::with_body_cache`] sets another bound).
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        let rows = Some(Rows::new(SERVE_ROW_CACHE_BYTES));
        let store = Self::open_with(path, PersistMode::SyncData, SERVE_CACHE_BYTES, SERVE_MEMTABLE_BYTES, rows)?;
        Ok(store.with_body_cache(crate::bodies::DEFAULT_BYTES))
    }

    /// The same store, with a body cache of at most `bytes` (`0`: none).
    pub fn with_body_cache(self, bytes: u64) -> Self {
        LsmStore { bodies: BodyCache::new(bytes), ..self }
    }

    /// What the store's compactions have done so far, for the metrics: read from
    /// fjall's own counters (marked experimental there; `Cargo.lock` pins the version).
    pub fn compaction_source(&self) -> impl Fn() -> crate::metrics::Compaction + Send + Sync + 'static {
        let db = self.db.clone();
        move || crate::metrics::Compaction {
            completed: u64::try_from(db.compactions_completed()).unwrap_or(u64::MAX),
            active: u64::try_from(db.active_compactions()).unwrap_or(u64::MAX),
            seconds: db.time_compacting().as_secs_f64(),
        }
    }

    /// Opens the store in `path` for a bulk load (`ledger-node ingest`, `follow`): a
    /// commit is handed to the system before it returns, so it survives a crash of the
    /// process at once, and a power loss once [`Self::sync`] has returned. A bulk load
    /// that a power loss cut short is completed by running it again, as ingest is
    /// idempotent.
    pub fn open_bulk(path: &Path) -> Result<Self, StoreError> {
        Self::open_with(path, PersistMode::Buffer, BULK_CACHE_BYTES, BULK_MEMTABLE_BYTES, None)
    }

    fn open_with(
        path: &Path,
        durability: PersistMode,
        cache_bytes: u64,
        memtable_bytes: u64,
        rows: Option<Rows>,
    ) -> Result<Self, StoreError> {
        refuse_a_file(path)?;
        // Large values come compressed (`lsm/values.rs`), and the rest gain little: the
        // journal and blob files store what they are given.
        let db = Database::builder(path)
            .cache_size(cache_bytes)
            .journal_compression(fjall::CompressionType::None)
            .worker_threads(1)
            .open()
            .map_err(|e| match e {
                fjall::Error::Locked => StoreError::new(format!(
                    "{} is open in another process (`ledger-node serve`, `ingest` or `follow`), and a store is held \
                 by one process at a time: send history to the serving node instead (POST /v0/admin/ingest \
                 with its admin token), or stop that process first",
                    path.display()
                )),
                e => backend(e),
            })?;
        let layout = db.keyspace("layout", KeyspaceCreateOptions::default).map_err(backend)?;
        let kv = db
            .keyspace("kv", || {
                KeyspaceCreateOptions::default()
                    // The adapter seals the table itself; fjall's own seal, by its
                    // thread between merges, is a backstop at the larger size.
                    .max_memtable_size(BULK_MEMTABLE_BYTES)
                    .compaction_strategy(Arc::new(
                        Leveled::default().with_l0_threshold(LEVEL0_TABLES).with_table_target_size(TABLE_BYTES),
                    ))
                    .with_kv_separation(Some(
                        KvSeparationOptions::default()
                            .separation_threshold(SEPARATION_BYTES)
                            .compression(fjall::CompressionType::None),
                    ))
            })
            .map_err(backend)?;
        match layout.get(LAYOUT_KEY).map_err(backend)? {
            Some(version) if *version == LAYOUT_VERSION.to_le_bytes() => {}
            Some(version) => {
                let version = <[u8; 4]>::try_from(&*version).map(u32::from_le_bytes).ok();
                return Err(StoreError::new(format!(
                    "{} holds a store of another layout (version {}, this build reads {LAYOUT_VERSION}); ingest \
                     the history again into a new directory",
                    path.display(),
                    version.map_or_else(|| "unknown".to_owned(), |v| v.to_string()),
                )));
            }
            None if kv.is_empty().map_err(backend)? => {
                layout.insert(LAYOUT_KEY, LAYOUT_VERSION.to_le_bytes()).map_err(backend)?;
                db.persist(PersistMode::SyncAll).map_err(backend)?;
            }
            None => return Err(StoreError::new(format!("{} holds keys but no layout version", path.display()))),
        }
        // The layout's one write is written out at once, not left in memory. fjall
        // deletes a sealed journal only once every keyspace has written out what the
        // journal holds of it, and this keyspace's in-memory table never fills: left
        // there, it kept every journal of a load, which each later open read through
        // before its first answer (about a second after a load of 100,000 updates;
        // loads past fjall's 512 MB of journal had it written out by fjall itself). A
        // no-op once it is written out.
        layout.rotate_memtable().map_err(backend)?;
        let bodies = BodyCache::new(0);
        Ok(LsmStore { db, kv, durability, writer: Mutex::new(0), memtable_bytes, rows, bodies })
    }
}

impl Backend for LsmStore {
    /// Syncs every commit so far to disk, then writes the in-memory tables out and
    /// merges the key index into one sorted run (a major compaction), which the end of a
    /// bulk load calls for: a load leaves many overlapping tables and the tombstones of
    /// what it deleted, which every scan would otherwise step through until background
    /// merges caught up, and up to a full in-memory table held only in the journal, which
    /// the next process to open the store would replay before its first answer.
    ///
    /// The merge waits for every sealed in-memory table to be written out first, not
    /// only the one sealed here (fjall's `rotate_memtable_and_wait` waits only when it
    /// sealed one itself): when the load's last write sealed it ([`Backend::write`]),
    /// the tables still queued would land above the merged run, every key they rewrite
    /// or delete stepped through by reads and scans (after 1,000,000 updates,
    /// `closed-rounds` answered 48,000 requests/s instead of 80,000).
    fn sync(&self) -> Result<(), StoreError> {
        self.db.persist(PersistMode::SyncAll).map_err(backend)?;
        self.kv.rotate_memtable().map_err(backend)?;
        while self.kv.sealed_memtable_count() > 0 {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        self.kv.major_compact().map_err(backend)?;
        self.db.persist(PersistMode::SyncAll).map_err(backend)
    }

    fn bodies(&self) -> &BodyCache {
        &self.bodies
    }

    /// The value of `key`.
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        let read = || self.kv.get(key).map_err(backend);
        let Some(rows) = &self.rows else {
            return read()?.map(|stored| Ok(values::decode(&stored)?.into_owned())).transpose();
        };
        // The cache keeps the decoded value, in a slice of its own.
        let decoded = || read()?.map(|stored| Ok(fjall::Slice::from(&*values::decode(&stored)?))).transpose();
        Ok(rows.read_through(key, decoded)?.map(|v| v.to_vec()))
    }

    /// The values of `keys`, in order, read from one snapshot.
    fn get_many(&self, keys: &[&[u8]]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        let snapshot = self.db.snapshot();
        keys.iter()
            .map(|key| match snapshot.get(&self.kv, key).map_err(backend)? {
                Some(stored) => Ok(Some(values::decode(&stored)?.into_owned())),
                None => Ok(None),
            })
            .collect()
    }

    /// The entries of `scan`.
    fn scan(&self, scan: &Scan) -> Result<Vec<Entry>, StoreError> {
        let end = scan.end.as_deref().map_or(Bound::Unbounded, Bound::Excluded);
        if scan.end.as_deref().is_some_and(|end| end <= scan.start.as_slice()) {
            return Ok(Vec::new());
        }
        let range = self.kv.range::<&[u8], _>((Bound::Included(scan.start.as_slice()), end));
        let limit = usize::try_from(scan.limit).unwrap_or(usize::MAX);
        let entry = |guard: fjall::Guard| {
            let (key, value) = guard.into_inner().map_err(backend)?;
            Ok((key.to_vec(), values::decode(&value)?.into_owned()))
        };
        if scan.reverse { range.rev().take(limit).map(entry).collect() } else { range.take(limit).map(entry).collect() }
    }

    /// Applies `ops`, which borrow their bytes, atomically.
    ///
    /// A fjall batch gives all its writes one sequence number, so it must name a key
    /// once: the last operation on a key decides what the batch leaves there. Every
    /// put-if-absent is checked against the store as the batch would see it, earlier
    /// operations included.
    fn write(&self, ops: &[OpRef<'_>]) -> Result<(), WriteError> {
        if ops.is_empty() {
            return Ok(());
        }
        let encoded = Encoded::new(ops);
        let ranges = ops.iter().any(|op| matches!(op, OpRef::DeleteRange { .. }));
        // The operations in key order, those on one key in batch order. The sort is
        // stable and finds runs already in order: a batch of the core is its few
        // preconditions, then its writes sorted by key, so this is one merge.
        let mut order: Vec<usize> = if ranges { Vec::new() } else { (0..ops.len()).collect() };
        order.sort_by(|&a, &b| ops[a].key().cmp(ops[b].key()));
        let mut writer = self.writer.lock().map_err(poisoned)?;
        let mut batch = self.db.batch().durability(Some(self.durability));
        if ranges {
            for (key, effect) in self.effects_with_ranges(ops)? {
                match effect {
                    Some(at) => batch.insert(&self.kv, &*key, encoded.value(at)),
                    None => batch.remove(&self.kv, &*key),
                }
            }
        } else {
            // The first put-if-absent, in batch order, that finds its key present.
            let mut failed: Option<usize> = None;
            for group in order.chunk_by(|&a, &b| ops[a].key() == ops[b].key()) {
                for (i, &at) in group.iter().enumerate() {
                    let OpRef::PutIfAbsent { key, .. } = ops[at] else { continue };
                    let present = match i.checked_sub(1) {
                        Some(before) => !matches!(ops[group[before]], OpRef::Delete { .. }),
                        None => self.kv.contains_key(key).map_err(backend)?,
                    };
                    if present {
                        failed = Some(failed.map_or(at, |first| first.min(at)));
                        break;
                    }
                }
                let Some(&last) = group.last() else { continue };
                match ops[last] {
                    OpRef::Put { key, .. } | OpRef::PutIfAbsent { key, .. } => {
                        batch.insert(&self.kv, key, encoded.value(last));
                    }
                    OpRef::Delete { key } => batch.remove(&self.kv, key),
                    OpRef::DeleteRange { .. } => {}
                }
            }
            if let Some(at) = failed {
                return Err(WriteError::PreconditionFailed { key: ops[at].key().to_vec() });
            }
        }
        let committed = batch.commit().map_err(backend);
        if let Some(rows) = &self.rows {
            rows.forget(ops.iter().map(|op| *op.key()), ranges);
        }
        self.bodies.forget_after(ops);
        committed?;
        let keys: usize = ops.iter().map(key_bytes).sum();
        *writer += u64::try_from(keys + encoded.bytes()).unwrap_or(u64::MAX);
        if *writer >= self.memtable_bytes {
            *writer = 0;
            self.kv.rotate_memtable().map_err(backend)?;
        }
        drop(writer);
        Ok(())
    }
}

impl LsmStore {
    /// What a batch with range deletes leaves at each key it names or deletes: the
    /// operation whose value it holds, or `None`, deleted. Its preconditions are
    /// checked; the caller holds the write lock.
    fn effects_with_ranges<'a>(&self, ops: &[OpRef<'a>]) -> Result<Effects<'a>, WriteError> {
        let mut effects = Effects::new();
        for (at, op) in ops.iter().enumerate() {
            match *op {
                OpRef::Put { key, .. } => {
                    effects.insert(Cow::Borrowed(key), Some(at));
                }
                OpRef::PutIfAbsent { key, .. } => {
                    let present = match effects.get(key) {
                        Some(effect) => effect.is_some(),
                        None => self.kv.contains_key(key).map_err(backend)?,
                    };
                    if present {
                        return Err(WriteError::PreconditionFailed { key: key.to_vec() });
                    }
                    effects.insert(Cow::Borrowed(key), Some(at));
                }
                OpRef::Delete { key } => {
                    effects.insert(Cow::Borrowed(key), None);
                }
                OpRef::DeleteRange { start, end } => {
                    if end.is_some_and(|end| end <= start) {
                        continue;
                    }
                    let range = (Bound::Included(start), end.map_or(Bound::Unbounded, Bound::Excluded));
                    for (_, effect) in effects.range_mut::<[u8], _>(range) {
                        *effect = None;
                    }
                    for guard in self.kv.range::<&[u8], _>(range) {
                        let key = guard.key().map_err(backend)?;
                        effects.insert(Cow::Owned(key.to_vec()), None);
                    }
                }
            }
        }
        Ok(effects)
    }
}

/// The bytes of the key (or keys, for a range) `op` names.
fn key_bytes(op: &OpRef<'_>) -> usize {
    match *op {
        OpRef::Put { key, .. } | OpRef::PutIfAbsent { key, .. } | OpRef::Delete { key } => key.len(),
        OpRef::DeleteRange { start, end } => start.len() + end.map_or(0, <[u8]>::len),
    }
}

/// Refuses a path that is a file: a SQLite store of an earlier build, or anything else.
fn refuse_a_file(path: &Path) -> Result<(), StoreError> {
    if !path.is_file() {
        return Ok(());
    }
    let mut header = [0u8; 16];
    let is_sqlite = std::fs::File::open(path)
        .and_then(|mut file| std::io::Read::read_exact(&mut file, &mut header))
        .is_ok_and(|()| header == SQLITE_HEADER);
    Err(StoreError::new(if is_sqlite {
        format!(
            "{} is a SQLite store of an earlier build of ledger-node; this build keeps its store in a directory, \
             in another engine, and cannot read it: ingest the history again into a new directory \
             (ledger-node ingest --db <directory> <history>), then remove the old file",
            path.display()
        )
    } else {
        format!("{} is a file; a store is a directory (created if absent)", path.display())
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put(store: &LsmStore, key: &[u8], value: &[u8]) {
        store.write(&[OpRef::Put { key, value }]).expect("a write");
    }

    #[test]
    fn large_and_small_values_read_back_after_a_reopen() {
        let dir = tempfile::tempdir().expect("a directory");
        let path = dir.path().join("store");
        let large = vec![7u8; 10_000];
        {
            let store = LsmStore::open(&path).expect("a store");
            put(&store, b"small", b"value");
            put(&store, b"large", &large);
        }
        let store = LsmStore::open(&path).expect("the store again");
        assert_eq!(store.get(b"small").expect("a read"), Some(b"value".to_vec()));
        assert_eq!(store.get(b"large").expect("a read"), Some(large));
    }

    #[test]
    fn a_serving_store_keeps_remembered_bodies_until_a_range_delete_and_a_bulk_load_keeps_none() {
        let dir = tempfile::tempdir().expect("a directory");
        let store = LsmStore::open(&dir.path().join("serving")).expect("a store");
        let bodies = store.bodies();
        bodies.remember(b"rendered", b"body", bodies.generation());
        put(&store, b"k", b"v");
        store.write(&[OpRef::Delete { key: b"k" }]).expect("a delete of a key of no immutable table");
        assert_eq!(bodies.recall(b"rendered"), Some(b"body".to_vec()));
        store.write(&[OpRef::DeleteRange { start: b"x", end: Some(b"y") }]).expect("a range delete");
        assert_eq!(bodies.recall(b"rendered"), None);
        assert_eq!(bodies.stats().bound, crate::bodies::DEFAULT_BYTES);
        let bulk = LsmStore::open_bulk(&dir.path().join("bulk")).expect("a store");
        bulk.bodies().remember(b"rendered", b"body", bulk.bodies().generation());
        assert_eq!((bulk.bodies().recall(b"rendered"), bulk.bodies().stats().bound), (None, 0));
    }

    #[test]
    fn a_second_opening_of_one_store_is_refused_with_advice() {
        let dir = tempfile::tempdir().expect("a directory");
        let _first = LsmStore::open(dir.path()).expect("a store");
        let error = LsmStore::open_bulk(dir.path()).expect_err("one process at a time").to_string();
        assert!(error.contains("open in another process") && error.contains("POST /v0/admin/ingest"), "{error}");
    }

    #[test]
    fn a_sqlite_file_of_an_earlier_build_is_refused_with_advice() {
        let dir = tempfile::tempdir().expect("a directory");
        let path = dir.path().join("node.sqlite");
        std::fs::write(&path, [SQLITE_HEADER, &[0u8; 100]].concat()).expect("a file");
        let error = LsmStore::open(&path).expect_err("a SQLite file").to_string();
        assert!(error.contains("SQLite store of an earlier build") && error.contains("ingest the history again"));
        std::fs::write(&path, b"text").expect("a file");
        let error = LsmStore::open(&path).expect_err("a file").to_string();
        assert!(error.contains("a store is a directory"), "{error}");
    }

    #[test]
    fn a_store_of_another_layout_is_refused() {
        let dir = tempfile::tempdir().expect("a directory");
        {
            let store = LsmStore::open(dir.path()).expect("a store");
            let layout = store.db.keyspace("layout", KeyspaceCreateOptions::default).expect("the layout keyspace");
            layout.insert(LAYOUT_KEY, 0u32.to_le_bytes()).expect("a write");
        }
        let error = LsmStore::open(dir.path()).expect_err("another layout").to_string();
        assert!(error.contains(&format!("another layout (version 0, this build reads {LAYOUT_VERSION})")), "{error}");
    }

    #[test]
    fn the_in_memory_table_is_sealed_by_the_write_that_fills_it() {
        let dir = tempfile::tempdir().expect("a directory");
        let store = LsmStore::open_bulk(dir.path()).expect("a store");
        let value = values::noise(1 << 20, 1);
        let batches = BULK_MEMTABLE_BYTES >> 20;
        for i in 0..batches {
            assert_eq!(store.kv.sealed_memtable_count() + store.kv.table_count(), 0, "sealed before it was full");
            put(&store, format!("key {i}").as_bytes(), &value);
        }
        // Sealed by the write itself, not later by fjall's background thread.
        assert!(store.kv.sealed_memtable_count() + store.kv.table_count() >= 1, "not sealed when full");
        assert_eq!(store.get(b"key 0").expect("a read"), Some(value));
    }

    #[test]
    fn a_journal_whose_writes_are_written_out_is_deleted() {
        let dir = tempfile::tempdir().expect("a directory");
        let store = LsmStore::open_bulk(dir.path()).expect("a store");
        let journals = || {
            let entries = std::fs::read_dir(dir.path()).expect("the store's directory");
            entries.filter(|e| e.as_ref().is_ok_and(|e| e.path().extension().is_some_and(|x| x == "jnl"))).count()
        };
        // A full in-memory table: fjall seals the journal when it writes the table out.
        let value = values::noise(1 << 20, 2);
        for i in 0..=(BULK_MEMTABLE_BYTES >> 20) {
            put(&store, format!("key {i}").as_bytes(), &value);
        }
        let started = std::time::Instant::now();
        while journals() > 1 && started.elapsed() < std::time::Duration::from_secs(20) {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert_eq!(journals(), 1, "the sealed journal is kept, and every open would read it through");
    }

    #[test]
    fn the_end_of_a_bulk_load_keeps_no_replaced_version_and_no_deleted_key() {
        use fjall::AbstractTree as _;
        let dir = tempfile::tempdir().expect("a directory");
        let store = LsmStore::open_bulk(dir.path()).expect("a store");
        for key in [&b"a"[..], b"b", b"c"] {
            put(&store, key, b"first");
        }
        put(&store, b"a", b"second");
        store.write(&[OpRef::Delete { key: b"b" }]).expect("a delete");
        let filler = values::noise(1 << 20, 2);
        for i in 0..BULK_MEMTABLE_BYTES >> 20 {
            put(&store, format!("filler {i}").as_bytes(), &filler);
        }
        // The last write sealed the table, so fjall's own seal at the end has nothing
        // to seal and waits for nothing.
        assert_eq!(store.kv.tree.active_memtable().len(), 0, "sealed by the last write");
        store.sync().expect("a sync");
        let live = 2 + usize::try_from(BULK_MEMTABLE_BYTES >> 20).expect("a count");
        assert_eq!((store.kv.tree.approximate_len(), store.kv.tree.tombstone_count()), (live, 0));
        assert_eq!(store.get(b"a").expect("a read"), Some(b"second".to_vec()));
        assert_eq!(store.get(b"b").expect("a read"), None);
    }

    #[test]
    fn a_read_by_key_after_a_write_sees_it_through_the_row_cache() {
        let dir = tempfile::tempdir().expect("a directory");
        let store = LsmStore::open(dir.path()).expect("a store");
        assert!(store.rows.is_some(), "serving keeps a row cache");
        let large = vec![7u8; 5_000];
        put(&store, b"a", b"first");
        put(&store, b"b", &large);
        assert_eq!(store.get(b"a").expect("a read"), Some(b"first".to_vec()));
        assert_eq!(store.get(b"b").expect("a read"), Some(large.clone()));
        put(&store, b"a", b"second");
        assert_eq!(store.get(b"a").expect("a read"), Some(b"second".to_vec()));
        store.write(&[OpRef::Delete { key: b"a" }]).expect("a delete");
        assert_eq!(store.get(b"a").expect("a read"), None);
        store.write(&[OpRef::DeleteRange { start: b"a", end: None }]).expect("a range delete");
        assert_eq!(store.get(b"b").expect("a read"), None);
        // A refused batch changes nothing, cached or not.
        put(&store, b"c", b"kept");
        assert_eq!(store.get(b"c").expect("a read"), Some(b"kept".to_vec()));
        let refused =
            store.write(&[OpRef::Put { key: b"d", value: b"x" }, OpRef::PutIfAbsent { key: b"c", value: b"y" }]);
        assert!(matches!(refused, Err(WriteError::PreconditionFailed { .. })));
        assert_eq!(store.get(b"c").expect("a read"), Some(b"kept".to_vec()));
        assert_eq!(store.get(b"d").expect("a read"), None);
        assert!(LsmStore::open_bulk(dir.path().join("bulk").as_path()).expect("a bulk store").rows.is_none());
    }

    /// Readers racing a writer through the row cache never read a value older than
    /// the last write that had returned before their read began. (The narrow race of
    /// a fill overtaken by a write is tested step by step in `lsm/rows.rs`; this one
    /// runs the store's own threads and locks.)
    #[test]
    fn reads_racing_writes_never_go_back_in_time() {
        use std::sync::atomic::{AtomicU32, Ordering};
        let dir = tempfile::tempdir().expect("a directory");
        let store = LsmStore::open(dir.path()).expect("a store");
        // One value kept in the key index, one in a blob file.
        let value = |n: u32, large: bool| {
            let mut v = n.to_be_bytes().to_vec();
            v.resize(if large { 2_000 } else { 8 }, 0);
            v
        };
        let written = AtomicU32::new(0);
        std::thread::scope(|scope| {
            for key in [b"small".as_slice(), b"large".as_slice()] {
                let (store, written) = (&store, &written);
                scope.spawn(move || {
                    while written.load(Ordering::SeqCst) < 200 {
                        let before = written.load(Ordering::SeqCst);
                        let read = store
                            .get(key)
                            .expect("a read")
                            .map_or(0, |v| u32::from_be_bytes(v[..4].try_into().expect("four bytes")));
                        assert!(read >= before, "{key:?}: read {read} after write {before} had returned");
                    }
                });
            }
            for n in 1..=200 {
                for (key, large) in [(b"small".as_slice(), false), (b"large".as_slice(), true)] {
                    store.write(&[OpRef::Put { key, value: &value(n, large) }]).expect("a write");
                }
                written.store(n, Ordering::SeqCst);
            }
        });
    }

    #[test]
    fn a_key_written_twice_in_one_batch_keeps_the_last_value() {
        let dir = tempfile::tempdir().expect("a directory");
        let store = LsmStore::open(dir.path()).expect("a store");
        let ops = [
            OpRef::Put { key: b"k", value: b"first" },
            OpRef::Delete { key: b"k" },
            OpRef::PutIfAbsent { key: b"k", value: b"last" },
        ];
        store.write(&ops).expect("a write");
        assert_eq!(store.get(b"k").expect("a read"), Some(b"last".to_vec()));
    }
}
