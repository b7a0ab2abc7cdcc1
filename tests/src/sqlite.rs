//! The SQLite adapter of the core's storage port: keys as BLOBs (SQLite compares BLOBs
//! with `memcmp`, which is exactly the port's key order).
//!
//! Two tables. `kv` is the ordered index, one row a key. A small value sits in its row;
//! a larger one (over [`INLINE_BYTES`], such as a pre-rendered update body or a
//! contract record) is kept out of line in `bodies`, an append-only rowid table,
//! LZ4-compressed (a JSON body shrinks to about a third, and so do the bytes it sends
//! through the log, the checkpoint and page reads), and the `kv` row holds its row id.
//! Update and contract ids are random, so inserts land all over `kv`'s B-tree, and an
//! ingest batch rewrites most of its leaves; keeping every value over a few hundred
//! bytes out of it keeps those scattered pages few (10 MB of `kv` for 20,000 demo
//! updates, 45 MB when contract records sat in it), while `bodies` only ever grows at
//! its end, each page written once; a batch appends its bodies in the order that fills
//! whole pages (`sqlite/pack.rs`). A read is still one statement (and
//! one store read for the core). Triggers delete a body whose key is overwritten or
//! deleted, so the two tables cannot drift apart.
//!
//! One writer connection and a small pool of reader connections over the same file in
//! WAL mode, so reads never wait for a write. Every write batch is one `IMMEDIATE`
//! transaction. The write-ahead log is copied into the database by a checkpointer
//! thread of its own (woken after each write), not inside the writer's commit, so an
//! ingest's next batch is prepared while the last one is checkpointed. The log restarts
//! only once a checkpoint has caught up with the last commit, so a write that finds it
//! over a limit (512 MiB) checkpoints it whole itself; dropping the store does too.
//! Pages are 16 KiB (a new file's; an existing one keeps its own), which a commit
//! mostly appends whole, and readers keep SQLite's default 2 MiB page cache: a read
//! copies a few pages rather than mapping the file, so the process's memory stays
//! bounded however large the store grows. A reader keeps its
//! read transaction open across reads until a local commit or a few milliseconds make
//! it stale (see `sqlite/reader.rs`).
//!
//! A put is a plain insert, and an update only when the key is already held. An
//! upsert, which may fire the update trigger, needs a statement journal (SQLite's undo
//! log for one statement inside a transaction: a copy of every page the statement
//! touches), and most puts are of new keys. Statement journals stay in memory:
//! spilled to temporary files, they wrote a page for every key an ingest put, more
//! bytes than the log itself.

mod compress;
mod pack;
mod reader;

use std::path::Path;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, Mutex, TryLockError};
use std::thread::JoinHandle;
use std::time::Duration;

use ledger_node_core::store::{Entry, Scan, StoreError, WriteBatch, WriteError};
use rusqlite::{Connection, OpenFlags, OptionalExtension, params};

use crate::backend::OpRef;

use compress::Compressor;
use reader::Reader;

/// The schema. A `kv` row has exactly one of `v` (the value) and `body` (the row id of
/// the value in `bodies`).
const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS kv (
    k BLOB PRIMARY KEY NOT NULL,
    v BLOB,
    body INTEGER,
    CHECK ((v IS NULL) <> (body IS NULL))
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS bodies (id INTEGER PRIMARY KEY, v BLOB NOT NULL);
CREATE TRIGGER IF NOT EXISTS kv_body_replaced AFTER UPDATE OF body ON kv
    WHEN old.body IS NOT NULL AND old.body IS NOT new.body
    BEGIN DELETE FROM bodies WHERE id = old.body; END;
CREATE TRIGGER IF NOT EXISTS kv_body_deleted AFTER DELETE ON kv WHEN old.body IS NOT NULL
    BEGIN DELETE FROM bodies WHERE id = old.body; END;
";

/// The stored layout's version (`PRAGMA user_version`); a store written with another
/// layout is refused rather than misread. It counts the core's keyspace too: version 4
/// holds the history stream's indexes, which a store of version 3 lacks.
const LAYOUT_VERSION: i64 = 4;

/// The value of a `kv` row as two columns, exactly one of them not null: the value kept
/// in the row, and the compressed value kept in `bodies` (a macro, so that it can be
/// `concat!`ed). [`value`] reads them.
macro_rules! value {
    () => {
        "kv.v, (SELECT bodies.v FROM bodies WHERE bodies.id = kv.body)"
    };
}

/// Reads the value of key `?1`.
const GET: &str = concat!("SELECT ", value!(), " FROM kv WHERE k = ?1");

/// The value of a row selected with [`value!`] from column `first` on.
fn value(row: &rusqlite::Row<'_>, first: usize) -> rusqlite::Result<Vec<u8>> {
    if let Some(inline) = row.get::<_, Option<Vec<u8>>>(first)? {
        return Ok(inline);
    }
    decompress(row.get_ref(first + 1)?.as_blob()?)
        .map_err(|e| rusqlite::Error::FromSqlConversionFailure(first + 1, rusqlite::types::Type::Blob, e.into()))
}

/// A value compressed by [`Compressor`]: its length (4 bytes, little-endian), then an LZ4
/// block. A length the block cannot hold, or a block that does not decode to exactly
/// that length, is damage.
fn decompress(stored: &[u8]) -> Result<Vec<u8>, String> {
    /// LZ4 expands at most 255-fold.
    const MAX_RATIO: usize = 255;
    let (length, block) = stored.split_first_chunk::<4>().ok_or("a stored body is shorter than its header")?;
    let length = u32::from_le_bytes(*length) as usize;
    if length > block.len().saturating_mul(MAX_RATIO) {
        return Err(format!("a stored body claims {length} bytes from {} compressed", block.len()));
    }
    let value = lz4_flex::block::decompress(block, length).map_err(|e| format!("a stored body is damaged: {e}"))?;
    if value.len() != length {
        return Err(format!("a stored body decodes to {} bytes, not {length}", value.len()));
    }
    Ok(value)
}

/// Values larger than this are kept out of line in `bodies`: in `kv` stay keys, content
/// hashes, row ids and small state records.
pub const INLINE_BYTES: usize = 256;

/// How many reader connections a file-backed store keeps: one a core, at least two.
fn reader_count() -> usize {
    std::thread::available_parallelism().map_or(2, usize::from).clamp(2, 8)
}

/// The page size of a new database (an existing one keeps its own). 16 KiB: a batch's
/// commit appends mostly whole pages of bodies, and at 4 KiB each of them cost a log
/// frame of its own (two writes), a checkpoint write and a page-cache entry; ingest
/// took a tenth more CPU at 4 KiB, and reads from a warm store were no faster
/// (the git history of BENCHMARKS.md has the runs).
const PAGE_BYTES: u32 = 16384;

/// How often the checkpointer ends the read snapshots of idle readers.
const SWEEP_EVERY: Duration = Duration::from_millis(50);

/// How large the write-ahead log may grow before a write waits for a full checkpoint.
const LOG_LIMIT_BYTES: u64 = 512 * 1024 * 1024;

/// A SQLite-backed ordered key-value store.
#[derive(Debug)]
pub struct SqliteStore {
    writer: Mutex<Connection>,
    /// The compressed bodies of the write in progress (locked by the writer only,
    /// within its lock): one buffer kept from write to write.
    compressor: Mutex<Compressor>,
    /// Reader connections, each behind its own lock so that concurrent reads rarely
    /// meet; empty for in-memory databases, which read through the writer.
    readers: Arc<[Mutex<Reader>]>,
    /// Where the next read starts looking for an idle reader.
    next_reader: AtomicUsize,
    /// How many writes this store has committed: a reader whose snapshot began at an
    /// earlier epoch renews it.
    epoch: AtomicU64,
    /// The checkpointer of a file-backed store.
    checkpointer: Option<Checkpointer>,
    /// The bytes of a leaf page that cells can use, in this database's page size
    /// ([`pack::page_cell_bytes`]).
    page_cell_bytes: usize,
}

/// A thread that checkpoints the write-ahead log when woken, and checkpoints it whole
/// (truncating it) when its channel closes.
#[derive(Debug)]
struct Checkpointer {
    wake: Option<SyncSender<()>>,
    thread: Option<JoinHandle<()>>,
    /// The write-ahead log's file.
    log: std::path::PathBuf,
}

impl Checkpointer {
    fn start(path: &Path, readers: Arc<[Mutex<Reader>]>) -> Result<Self, StoreError> {
        let connection = Connection::open(path).map_err(backend)?;
        connection.execute_batch("PRAGMA busy_timeout = 5000;").map_err(backend)?;
        let (wake, woken) = mpsc::sync_channel::<()>(1);
        let thread = std::thread::Builder::new()
            .name("sqlite-checkpoint".into())
            .spawn(move || {
                let checkpoint = |mode: &str| {
                    let sql = format!("PRAGMA wal_checkpoint({mode})");
                    if let Err(e) = connection.query_row(&sql, [], |_| Ok(())) {
                        eprintln!("ledger-node: sqlite checkpoint ({mode}) failed: {e}");
                    }
                };
                // Ends the snapshots idle readers hold, which would keep the checkpoint
                // from reaching the end of the log.
                let release = |age: Duration| {
                    for reader in readers.iter() {
                        if let Ok(mut reader) = reader.try_lock()
                            && let Err(e) = reader.release_if_older(age)
                        {
                            eprintln!("ledger-node: sqlite: ending a read snapshot failed: {e}");
                        }
                    }
                };
                loop {
                    match woken.recv_timeout(SWEEP_EVERY) {
                        Ok(()) => {
                            release(reader::MAX_AGE);
                            checkpoint("PASSIVE");
                        }
                        Err(RecvTimeoutError::Timeout) => release(reader::MAX_AGE),
                        Err(RecvTimeoutError::Disconnected) => break,
                    }
                }
                // The store is being dropped: no read is running, so none is skipped.
                release(Duration::ZERO);
                checkpoint("TRUNCATE");
            })
            .map_err(|e| StoreError::new(format!("sqlite: starting the checkpointer: {e}")))?;
        let mut log = path.as_os_str().to_owned();
        log.push("-wal");
        Ok(Checkpointer { wake: Some(wake), thread: Some(thread), log: log.into() })
    }

    /// The size of the write-ahead log (0 when it cannot be read).
    fn log_bytes(&self) -> u64 {
        std::fs::metadata(&self.log).map_or(0, |m| m.len())
    }

    /// Asks for a checkpoint; one already asked for covers this one.
    fn nudge(&self) {
        if let Some(wake) = &self.wake
            && let Err(TrySendError::Disconnected(())) = wake.try_send(())
        {
            eprintln!("ledger-node: the sqlite checkpointer has stopped");
        }
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        self.wake = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Creates the schema in a new database, or checks that an existing one has this
/// version's layout.
fn create_schema(connection: &Connection, path: &Path) -> Result<(), StoreError> {
    let version: i64 = connection.query_row("PRAGMA user_version", [], |row| row.get(0)).map_err(backend)?;
    let tables: i64 =
        connection.query_row("SELECT count(*) FROM sqlite_schema", [], |row| row.get(0)).map_err(backend)?;
    match version {
        LAYOUT_VERSION => Ok(()),
        0 if tables == 0 => connection
            .execute_batch(&format!("BEGIN; {SCHEMA} PRAGMA user_version = {LAYOUT_VERSION}; COMMIT;"))
            .map_err(backend),
        _ => Err(StoreError::new(format!(
            "sqlite: {} holds a store of another layout (version {version}, this build reads {LAYOUT_VERSION}); \
             remove it and ingest the history again",
            path.display()
        ))),
    }
}

/// The bytes of a leaf page that cells can use in the database `connection` holds
/// open, whose page size was fixed when it was created.
fn page_cell_bytes(connection: &Connection) -> Result<usize, StoreError> {
    let page_bytes: i64 = connection.query_row("PRAGMA page_size", [], |row| row.get(0)).map_err(backend)?;
    usize::try_from(page_bytes)
        .map(pack::page_cell_bytes)
        .map_err(|_| StoreError::new(format!("sqlite: a page size of {page_bytes} bytes")))
}

fn backend(e: rusqlite::Error) -> StoreError {
    StoreError::new(format!("sqlite: {e}"))
}

impl SqliteStore {
    /// Opens (creating if needed) the database file at `path`.
    ///
    /// Every commit is synced to disk before it returns (`synchronous = FULL`): a write
    /// the node answered for, a wallet request above all, survives a power loss, not only
    /// a crash of the process.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        Self::open_with(path, "FULL")
    }

    /// Opens the database file at `path` for a bulk load (`ledger-node ingest`): a commit
    /// survives a crash of the process at once, and a power loss once [`Self::sync`] has
    /// returned (`synchronous = NORMAL`). A bulk load that a power loss cut short is
    /// completed by running it again, as ingest is idempotent; syncing every commit
    /// would cost it about 7% of its rate.
    pub fn open_bulk(path: &Path) -> Result<Self, StoreError> {
        Self::open_with(path, "NORMAL")
    }

    /// Syncs every commit so far to disk, by checkpointing the write-ahead log into the
    /// database (which syncs both).
    pub fn sync(&self) -> Result<(), StoreError> {
        let writer = self.writer.lock().map_err(poisoned)?;
        writer.query_row("PRAGMA wal_checkpoint(FULL)", [], |_| Ok(())).map_err(backend)
    }

    fn open_with(path: &Path, synchronous: &str) -> Result<Self, StoreError> {
        let writer = Connection::open(path).map_err(backend)?;
        writer
            .execute_batch(&format!(
                "PRAGMA page_size = {PAGE_BYTES}; PRAGMA journal_mode = WAL; PRAGMA synchronous = {synchronous}; \
                 PRAGMA busy_timeout = 5000; PRAGMA wal_autocheckpoint = 0; PRAGMA cache_size = -65536; \
                 PRAGMA temp_store = MEMORY;"
            ))
            .map_err(backend)?;
        create_schema(&writer, path)?;
        let count = reader_count();
        let mut readers = Vec::with_capacity(count);
        for _ in 0..count {
            let reader =
                Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)
                    .map_err(backend)?;
            reader.execute_batch("PRAGMA busy_timeout = 5000;").map_err(backend)?;
            readers.push(Mutex::new(Reader::new(reader)));
        }
        let readers: Arc<[Mutex<Reader>]> = readers.into();
        let checkpointer = Some(Checkpointer::start(path, Arc::clone(&readers))?);
        Ok(SqliteStore {
            page_cell_bytes: page_cell_bytes(&writer)?,
            writer: Mutex::new(writer),
            compressor: Mutex::default(),
            readers,
            next_reader: AtomicUsize::new(0),
            epoch: AtomicU64::new(0),
            checkpointer,
        })
    }

    /// A private in-memory database.
    pub fn in_memory() -> Result<Self, StoreError> {
        let writer = Connection::open_in_memory().map_err(backend)?;
        writer.execute_batch(&format!("PRAGMA page_size = {PAGE_BYTES};")).map_err(backend)?;
        create_schema(&writer, Path::new(":memory:"))?;
        Ok(SqliteStore {
            page_cell_bytes: page_cell_bytes(&writer)?,
            writer: Mutex::new(writer),
            compressor: Mutex::default(),
            readers: Arc::new([]),
            next_reader: AtomicUsize::new(0),
            epoch: AtomicU64::new(0),
            checkpointer: None,
        })
    }

    /// Runs `read` on an idle reader connection (or the writer, for in-memory databases).
    /// Readers are tried in turn from a rotating start; when all are busy, the read
    /// waits for the first one tried.
    fn read<T>(&self, read: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> Result<T, StoreError> {
        if self.readers.is_empty() {
            let writer = self.writer.lock().map_err(poisoned)?;
            return read(&writer).map_err(backend);
        }
        let epoch = self.epoch.load(Ordering::Acquire);
        let start = self.next_reader.fetch_add(1, Ordering::Relaxed);
        let count = self.readers.len();
        for offset in 0..count {
            match self.readers[(start + offset) % count].try_lock() {
                Ok(mut reader) => return reader.read(epoch, read).map_err(backend),
                Err(TryLockError::WouldBlock) => continue,
                Err(TryLockError::Poisoned(e)) => return Err(poisoned(e)),
            }
        }
        let mut reader = self.readers[start % count].lock().map_err(poisoned)?;
        reader.read(epoch, read).map_err(backend)
    }

    /// How many transactions this store has committed since it was opened.
    #[cfg(test)]
    pub(crate) fn commits(&self) -> u64 {
        self.epoch.load(Ordering::Acquire)
    }

    /// The value of `key`.
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        self.read(|c| c.prepare_cached(GET)?.query_row([key], |row| value(row, 0)).optional())
    }

    /// The values of `keys`, in order, read from one snapshot.
    pub fn get_many(&self, keys: &[&[u8]]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        self.read(|c| {
            let mut statement = c.prepare_cached(GET)?;
            keys.iter().map(|key| statement.query_row([key], |row| value(row, 0)).optional()).collect()
        })
    }

    /// The entries of `scan`.
    pub fn scan(&self, scan: &Scan) -> Result<Vec<Entry>, StoreError> {
        let order = if scan.reverse { "DESC" } else { "ASC" };
        let limit = i64::from(scan.limit);
        self.read(|c| {
            let collect = |rows: rusqlite::MappedRows<'_, _>| rows.collect::<rusqlite::Result<Vec<Entry>>>();
            let row = |row: &rusqlite::Row<'_>| Ok((row.get(0)?, value(row, 1)?));
            match &scan.end {
                Some(end) => {
                    let sql = format!(
                        concat!("SELECT k, ", value!(), " FROM kv WHERE k >= ?1 AND k < ?2 ORDER BY k {} LIMIT ?3"),
                        order
                    );
                    collect(c.prepare_cached(&sql)?.query_map(params![scan.start, end, limit], row)?)
                }
                None => {
                    let sql = format!(
                        concat!("SELECT k, ", value!(), " FROM kv WHERE k >= ?1 ORDER BY k {} LIMIT ?2"),
                        order
                    );
                    collect(c.prepare_cached(&sql)?.query_map(params![scan.start, limit], row)?)
                }
            }
        })
    }

    /// Applies `batch` in one transaction.
    pub fn write(&self, batch: &WriteBatch) -> Result<(), WriteError> {
        let ops: Vec<OpRef<'_>> = batch.ops.iter().map(OpRef::from).collect();
        self.write_ops(&ops)
    }

    /// Applies `ops`, which borrow their bytes, in one transaction.
    pub fn write_ops(&self, ops: &[OpRef<'_>]) -> Result<(), WriteError> {
        if ops.is_empty() {
            return Ok(());
        }
        let mut writer = self.writer.lock().map_err(poisoned)?;
        let tx = writer.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate).map_err(backend)?;
        let mut compressor = self.compressor.lock().map_err(poisoned)?;
        let bodies = append_bodies(&tx, ops, &mut compressor, self.page_cell_bytes).map_err(backend)?;
        drop(compressor);
        for (op, body) in ops.iter().zip(bodies) {
            if !apply(&tx, op, body).map_err(backend)? {
                // Dropping the transaction rolls it back. The key it found may have been
                // written by another process after the readers' snapshots began: renew
                // them, so that the caller's next read sees what the write saw.
                self.epoch.fetch_add(1, Ordering::Release);
                return Err(WriteError::PreconditionFailed { key: op.key().to_vec() });
            }
        }
        tx.commit().map_err(backend)?;
        self.epoch.fetch_add(1, Ordering::Release);
        if let Some(checkpointer) = &self.checkpointer {
            if checkpointer.log_bytes() > LOG_LIMIT_BYTES {
                // The checkpointer fell behind (the log only restarts once a checkpoint
                // has caught up with the last commit): catch up here, and truncate.
                writer.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(())).map_err(backend)?;
            } else {
                checkpointer.nudge();
            }
        }
        Ok(())
    }
}

/// Applies one operation, whose value, if large, is the body `body` already appended
/// to `bodies`; `false` when a put-if-absent found its key present.
fn apply(tx: &rusqlite::Transaction<'_>, op: &OpRef<'_>, body: Option<i64>) -> rusqlite::Result<bool> {
    // A value is kept in its row unless it went to `bodies`.
    let in_row = |value| body.is_none().then_some(value);
    match *op {
        OpRef::Put { key, value } => {
            let inline = in_row(value);
            // Most puts are of new keys. A plain insert writes one row and fires no
            // trigger, so SQLite keeps no statement journal for it (a copy of each
            // page it touches); only a key already held takes the update, whose
            // trigger deletes the body it replaces.
            let inserted = tx
                .prepare_cached("INSERT INTO kv (k, v, body) VALUES (?1, ?2, ?3) ON CONFLICT (k) DO NOTHING")?
                .execute(params![key, inline, body])?;
            if inserted == 0 {
                tx.prepare_cached("UPDATE kv SET v = ?2, body = ?3 WHERE k = ?1")?
                    .execute(params![key, inline, body])?;
            }
        }
        OpRef::PutIfAbsent { key, value } => {
            let inline = in_row(value);
            let insert = tx
                .prepare_cached("INSERT INTO kv (k, v, body) VALUES (?1, ?2, ?3)")?
                .execute(params![key, inline, body]);
            match insert {
                // The caller rolls the transaction back, the body just written with it.
                Err(rusqlite::Error::SqliteFailure(e, _))
                    if e.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY =>
                {
                    return Ok(false);
                }
                other => other?,
            };
        }
        OpRef::Delete { key } => {
            tx.prepare_cached("DELETE FROM kv WHERE k = ?1")?.execute([key])?;
        }
        OpRef::DeleteRange { start, end: Some(end) } => {
            tx.prepare_cached("DELETE FROM kv WHERE k >= ?1 AND k < ?2")?.execute([start, end])?;
        }
        OpRef::DeleteRange { start, end: None } => {
            tx.prepare_cached("DELETE FROM kv WHERE k >= ?1")?.execute([start])?;
        }
    }
    Ok(true)
}

/// Appends the large values of `ops` (over [`INLINE_BYTES`]) to `bodies`, compressed
/// by `compressor`, in the order that fills its pages ([`pack`]): the row id of each
/// operation's body, if its value is large.
fn append_bodies(
    tx: &rusqlite::Transaction<'_>,
    ops: &[OpRef<'_>],
    compressor: &mut Compressor,
    page_cell_bytes: usize,
) -> rusqlite::Result<Vec<Option<i64>>> {
    let mut ids = vec![None; ops.len()];
    compressor.clear();
    let mut large = Vec::new(); // the operation of each body
    for (at, op) in ops.iter().enumerate() {
        if let OpRef::Put { value, .. } | OpRef::PutIfAbsent { value, .. } = *op
            && value.len() > INLINE_BYTES
        {
            compressor.add(value).map_err(|e| rusqlite::Error::ToSqlConversionFailure(e.into()))?;
            large.push(at);
        }
    }
    let sizes: Vec<usize> = compressor.bodies().map(|body| pack::cell_bytes(body.len())).collect();
    let mut insert = tx.prepare_cached("INSERT INTO bodies (v) VALUES (?1)")?;
    for n in pack::append_order(&sizes, page_cell_bytes) {
        insert.execute([compressor.body(n)])?;
        ids[large[n]] = Some(tx.last_insert_rowid());
    }
    Ok(ids)
}

fn poisoned<T>(_: std::sync::PoisonError<T>) -> StoreError {
    StoreError::new("sqlite: a connection lock was poisoned by a panic")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pragma(store: &SqliteStore, name: &str) -> i64 {
        store.read(|c| c.query_row(&format!("PRAGMA {name}"), [], |row| row.get(0))).expect("a pragma")
    }

    /// How many bodies are stored, and how many `kv` rows point at one.
    fn bodies(store: &SqliteStore) -> (i64, i64) {
        store
            .read(|c| {
                c.query_row(
                    "SELECT (SELECT count(*) FROM bodies), (SELECT count(*) FROM kv WHERE body IS NOT NULL)",
                    [],
                    |row| Ok((row.get(0)?, row.get(1)?)),
                )
            })
            .expect("counts")
    }

    #[test]
    fn new_files_use_the_page_size_and_record_their_layout() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let store = SqliteStore::open(&dir.path().join("node.sqlite")).expect("a store");
        assert_eq!(pragma(&store, "page_size"), i64::from(PAGE_BYTES));
        assert_eq!(store.page_cell_bytes, pack::page_cell_bytes(PAGE_BYTES as usize));
        assert_eq!(pragma(&store, "user_version"), LAYOUT_VERSION);
        let writer = store.writer.lock().expect("the writer");
        let temp_store: i64 = writer.query_row("PRAGMA temp_store", [], |row| row.get(0)).expect("a pragma");
        assert_eq!(temp_store, 2, "statement journals are kept in memory");
    }

    #[test]
    fn a_store_keeps_the_page_size_it_was_created_with() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("node.sqlite");
        Connection::open(&path)
            .and_then(|c| {
                c.execute_batch(&format!("PRAGMA page_size = 4096; {SCHEMA} PRAGMA user_version = {LAYOUT_VERSION};"))
            })
            .expect("a store of 4 KiB pages");
        let store = SqliteStore::open(&path).expect("opened");
        assert_eq!(pragma(&store, "page_size"), 4096);
        assert_eq!(store.page_cell_bytes, 4088, "bodies are packed for the pages the file has");
        let mut batch = WriteBatch::new();
        batch.put(b"k".to_vec(), vec![7; 10_000]);
        store.write(&batch).expect("a write");
        assert_eq!(store.get(b"k").expect("a read"), Some(vec![7; 10_000]));
    }

    #[test]
    fn a_store_of_another_layout_is_refused() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("node.sqlite");
        Connection::open(&path)
            .and_then(|c| {
                c.execute_batch("CREATE TABLE kv (k BLOB PRIMARY KEY NOT NULL, v BLOB NOT NULL) WITHOUT ROWID;")
            })
            .expect("an old store");
        let err = SqliteStore::open(&path).expect_err("refused");
        let want = format!("another layout (version 0, this build reads {LAYOUT_VERSION})");
        assert!(err.to_string().contains(&want), "{err}");
    }

    #[test]
    fn large_values_live_out_of_line_and_go_with_their_keys() {
        let store = SqliteStore::in_memory().expect("a store");
        let (small, large, larger) = (vec![1; 10], vec![2; INLINE_BYTES + 1], vec![3; 50_000]);
        let mut batch = WriteBatch::new();
        for (key, value) in [(b"a", &small), (b"b", &large), (b"c", &larger), (b"d", &large)] {
            batch.put(key.to_vec(), value.clone());
        }
        store.write(&batch).expect("a write");
        assert_eq!(bodies(&store), (3, 3));
        assert_eq!(store.get(b"b").expect("a read"), Some(large.clone()));
        let everything = store.scan(&Scan::prefix(b"", 10)).expect("a scan");
        assert_eq!(
            everything.iter().map(|(_, v)| v.len()).collect::<Vec<_>>(),
            [10, INLINE_BYTES + 1, 50_000, INLINE_BYTES + 1]
        );

        // Overwrites: large by larger, large by small, small by large; then deletes.
        let mut batch = WriteBatch::new();
        batch.put(b"b".to_vec(), larger.clone());
        batch.put(b"c".to_vec(), small.clone());
        batch.put(b"a".to_vec(), large.clone());
        store.write(&batch).expect("overwrites");
        assert_eq!(bodies(&store), (3, 3));
        let got = store.get_many(&[b"a", b"b", b"c"]).expect("reads");
        assert_eq!(got, [Some(large.clone()), Some(larger.clone()), Some(small.clone())]);
        let mut batch = WriteBatch::new();
        batch.delete(b"a".to_vec());
        batch.delete_range(b"b".to_vec(), Some(b"d".to_vec()));
        store.write(&batch).expect("deletes");
        assert_eq!(bodies(&store), (1, 1));
        assert_eq!(store.get(b"d").expect("a read"), Some(large.clone()));

        // A failed precondition rolls back the body it had already written.
        let mut batch = WriteBatch::new();
        batch.put(b"e".to_vec(), larger.clone());
        batch.put_if_absent(b"d".to_vec(), larger);
        assert!(matches!(store.write(&batch), Err(WriteError::PreconditionFailed { key }) if key == b"d"));
        assert_eq!(bodies(&store), (1, 1));
        assert_eq!(store.get(b"e").expect("a read"), None);
    }

    /// Issue 21: a 200 of the wallet means the request survives power loss, so a commit
    /// is synced before it returns.
    #[test]
    fn every_commit_is_synced_to_disk_before_it_returns() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let store = SqliteStore::open(&dir.path().join("node.sqlite")).expect("a store");
        let writer = store.writer.lock().expect("the writer");
        let synchronous: i64 = writer.query_row("PRAGMA synchronous", [], |row| row.get(0)).expect("the setting");
        assert_eq!(synchronous, 2, "synchronous is FULL (2)");
        drop(writer);
        // A bulk load syncs when asked, and its data is there after.
        let bulk = SqliteStore::open_bulk(&dir.path().join("bulk.sqlite")).expect("a store");
        put(&bulk, b"k", b"v");
        bulk.sync().expect("a sync");
        assert_eq!(bulk.get(b"k").expect("a read"), Some(b"v".to_vec()));
    }

    /// Issue 21: two `serve` processes on one file answered 429 where 409 was right,
    /// because the loser of a put-if-absent race read the claim from a snapshot older
    /// than the other process's write.
    #[test]
    fn a_failed_precondition_is_followed_by_reads_that_see_the_key_another_process_wrote() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("node.sqlite");
        let (ours, theirs) = (SqliteStore::open(&path).expect("a store"), SqliteStore::open(&path).expect("a store"));
        // Our readers hold a snapshot from before the other process's write.
        assert_eq!(ours.get(b"claim").expect("a read"), None);
        put(&theirs, b"claim", b"theirs");
        let mut batch = WriteBatch::new();
        batch.put_if_absent(b"claim".to_vec(), b"ours".to_vec());
        assert!(matches!(ours.write(&batch), Err(WriteError::PreconditionFailed { .. })));
        assert_eq!(ours.get(b"claim").expect("a read"), Some(b"theirs".to_vec()));
    }

    #[test]
    fn bodies_are_stored_compressed_and_a_damaged_one_is_an_error() {
        let store = SqliteStore::in_memory().expect("a store");
        let body: Vec<u8> = br#"{"party":"alice::1220abcdef","amount":"1.0000000000"},"#.repeat(100);
        put(&store, b"k", &body);
        let stored: i64 = store
            .read(|c| c.query_row("SELECT length(v) FROM bodies", [], |row| row.get(0)))
            .expect("the stored length");
        assert!(stored < body.len() as i64 / 4, "{stored} of {} bytes", body.len());
        assert_eq!(store.get(b"k").expect("a read"), Some(body.clone()));
        assert_eq!(store.scan(&Scan::prefix(b"k", 1)).expect("a scan"), [(b"k".to_vec(), body)]);
        store.read(|c| c.execute("UPDATE bodies SET v = x'ffffffff00'", [])).expect("damage");
        let err = store.get(b"k").expect_err("a damaged body");
        assert!(err.to_string().contains("sqlite"), "{err}");
    }

    fn put(store: &SqliteStore, key: &[u8], value: &[u8]) {
        let mut batch = WriteBatch::new();
        batch.put(key.to_vec(), value.to_vec());
        store.write(&batch).expect("a write");
    }

    #[test]
    fn a_read_after_a_write_sees_it_on_every_reader() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let store = SqliteStore::open(&dir.path().join("node.sqlite")).expect("a store");
        for round in 0..20u8 {
            put(&store, b"k", &[round]);
            for _ in 0..store.readers.len() {
                assert_eq!(store.get(b"k").expect("a read"), Some(vec![round]));
            }
        }
    }

    #[test]
    fn another_processs_writes_are_seen_within_a_snapshots_age() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("node.sqlite");
        let (ours, theirs) = (SqliteStore::open(&path).expect("a store"), SqliteStore::open(&path).expect("another"));
        assert_eq!(ours.get(b"k").expect("a read"), None);
        put(&theirs, b"k", b"v");
        let deadline = std::time::Instant::now() + reader::MAX_AGE + Duration::from_secs(1);
        while ours.get(b"k").expect("a read").is_none() {
            assert!(std::time::Instant::now() < deadline, "the write was not seen");
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    #[test]
    fn idle_readers_do_not_keep_the_log_from_being_checkpointed() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("node.sqlite");
        let store = SqliteStore::open(&path).expect("a store");
        put(&store, b"k", &[1; 10_000]);
        for _ in 0..store.readers.len() {
            store.get(b"k").expect("a read");
        }
        put(&store, b"k", &[2; 10_000]);
        // The readers' snapshots predate the last write; once the checkpointer has
        // ended them, a full checkpoint is not blocked.
        std::thread::sleep(reader::MAX_AGE + SWEEP_EVERY * 3);
        let other = Connection::open(&path).expect("a connection");
        let busy: i64 = other.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |row| row.get(0)).expect("a checkpoint");
        assert_eq!(busy, 0, "a reader still holds an old snapshot");
    }

    #[test]
    fn dropping_the_store_folds_the_log_into_the_database() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("node.sqlite");
        let store = SqliteStore::open(&path).expect("a store");
        let mut batch = WriteBatch::new();
        batch.put(b"k".to_vec(), vec![7; 100_000]);
        store.write(&batch).expect("a write");
        drop(store);
        let wal = dir.path().join("node.sqlite-wal");
        assert!(std::fs::metadata(&wal).map_or(true, |m| m.len() == 0), "the log is empty or gone");
        let reopened = SqliteStore::open(&path).expect("the store again");
        assert_eq!(reopened.get(b"k").expect("a read"), Some(vec![7; 100_000]));
    }
}
