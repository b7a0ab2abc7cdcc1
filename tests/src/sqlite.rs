//! The SQLite adapter of the core's storage port: one table, keys as BLOBs (SQLite
//! compares BLOBs with `memcmp`, which is exactly the port's key order).
//!
//! One writer connection and a small pool of reader connections over the same file in
//! WAL mode, so reads never wait for a write. Every write batch is one `IMMEDIATE`
//! transaction. The write-ahead log is copied into the database by a checkpointer
//! thread of its own (woken after each write), not inside the writer's commit, so an
//! ingest's next batch is prepared while the last one is checkpointed. The log restarts
//! only once a checkpoint has caught up with the last commit, so a write that finds it
//! over a limit (512 MiB) checkpoints it whole itself; dropping the store does too.
//! Readers map the database file into memory (`mmap_size`), so serving a stored body
//! does not copy it through `pread`.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, SyncSender, TrySendError};
use std::sync::{Mutex, TryLockError};
use std::thread::JoinHandle;

use ledger_node_core::store::{Entry, Op, Scan, StoreError, WriteBatch, WriteError};
use rusqlite::{Connection, ErrorCode, OpenFlags, OptionalExtension, params};

const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS kv (k BLOB PRIMARY KEY NOT NULL, v BLOB NOT NULL) WITHOUT ROWID;";

/// How many reader connections a file-backed store keeps: one a core, at least two.
fn reader_count() -> usize {
    std::thread::available_parallelism().map_or(2, usize::from).clamp(2, 8)
}

/// The page size of a new database: large enough that a pre-rendered update body
/// (a few kilobytes) sits in its B-tree leaf rather than in a chain of overflow pages.
const PAGE_BYTES: u32 = 32 * 1024;

/// How large the write-ahead log may grow before a write waits for a full checkpoint.
const LOG_LIMIT_BYTES: u64 = 512 * 1024 * 1024;

/// How much of the database file each reader maps into memory: all of it (pages are
/// resident only once read, and the kernel may drop them again; the build raises
/// SQLite's own cap, see `.cargo/config.toml`).
const MMAP_BYTES: u64 = 1 << 40;

/// A SQLite-backed ordered key-value store.
#[derive(Debug)]
pub struct SqliteStore {
    writer: Mutex<Connection>,
    /// Reader connections, each behind its own lock so that concurrent reads rarely
    /// meet; empty for in-memory databases, which read through the writer.
    readers: Vec<Mutex<Connection>>,
    /// Where the next read starts looking for an idle reader.
    next_reader: AtomicUsize,
    /// The checkpointer of a file-backed store.
    checkpointer: Option<Checkpointer>,
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
    fn start(path: &Path) -> Result<Self, StoreError> {
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
                while woken.recv().is_ok() {
                    checkpoint("PASSIVE");
                }
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

fn backend(e: rusqlite::Error) -> StoreError {
    StoreError::new(format!("sqlite: {e}"))
}

impl SqliteStore {
    /// Opens (creating if needed) the database file at `path`.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        let writer = Connection::open(path).map_err(backend)?;
        writer
            .execute_batch(&format!(
                "PRAGMA page_size = {PAGE_BYTES}; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; \
                 PRAGMA busy_timeout = 5000; PRAGMA wal_autocheckpoint = 0; PRAGMA cache_size = -65536; {SCHEMA}"
            ))
            .map_err(backend)?;
        let count = reader_count();
        let mut readers = Vec::with_capacity(count);
        for _ in 0..count {
            let reader =
                Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)
                    .map_err(backend)?;
            reader
                .execute_batch(&format!("PRAGMA busy_timeout = 5000; PRAGMA mmap_size = {MMAP_BYTES};"))
                .map_err(backend)?;
            readers.push(Mutex::new(reader));
        }
        let checkpointer = Some(Checkpointer::start(path)?);
        Ok(SqliteStore { writer: Mutex::new(writer), readers, next_reader: AtomicUsize::new(0), checkpointer })
    }

    /// A private in-memory database.
    pub fn in_memory() -> Result<Self, StoreError> {
        let writer = Connection::open_in_memory().map_err(backend)?;
        writer.execute_batch(SCHEMA).map_err(backend)?;
        Ok(SqliteStore {
            writer: Mutex::new(writer),
            readers: Vec::new(),
            next_reader: AtomicUsize::new(0),
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
        let start = self.next_reader.fetch_add(1, Ordering::Relaxed);
        let count = self.readers.len();
        for offset in 0..count {
            match self.readers[(start + offset) % count].try_lock() {
                Ok(connection) => return read(&connection).map_err(backend),
                Err(TryLockError::WouldBlock) => continue,
                Err(TryLockError::Poisoned(e)) => return Err(poisoned(e)),
            }
        }
        let connection = self.readers[start % count].lock().map_err(poisoned)?;
        read(&connection).map_err(backend)
    }

    /// The value of `key`.
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        self.read(|c| c.prepare_cached("SELECT v FROM kv WHERE k = ?1")?.query_row([key], |row| row.get(0)).optional())
    }

    /// The values of `keys`, in order, read in one transaction (one snapshot).
    pub fn get_many(&self, keys: &[&[u8]]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        self.read(|c| {
            let tx = c.unchecked_transaction()?;
            let values = {
                let mut statement = tx.prepare_cached("SELECT v FROM kv WHERE k = ?1")?;
                keys.iter().map(|key| statement.query_row([key], |row| row.get(0)).optional()).collect()
            };
            tx.finish()?;
            values
        })
    }

    /// The entries of `scan`.
    pub fn scan(&self, scan: &Scan) -> Result<Vec<Entry>, StoreError> {
        let order = if scan.reverse { "DESC" } else { "ASC" };
        let limit = i64::from(scan.limit);
        self.read(|c| {
            let collect = |rows: rusqlite::MappedRows<'_, _>| rows.collect::<rusqlite::Result<Vec<Entry>>>();
            let row = |row: &rusqlite::Row<'_>| Ok((row.get(0)?, row.get(1)?));
            match &scan.end {
                Some(end) => {
                    let sql = format!("SELECT k, v FROM kv WHERE k >= ?1 AND k < ?2 ORDER BY k {order} LIMIT ?3");
                    collect(c.prepare_cached(&sql)?.query_map(params![scan.start, end, limit], row)?)
                }
                None => {
                    let sql = format!("SELECT k, v FROM kv WHERE k >= ?1 ORDER BY k {order} LIMIT ?2");
                    collect(c.prepare_cached(&sql)?.query_map(params![scan.start, limit], row)?)
                }
            }
        })
    }

    /// Applies `batch` in one transaction.
    pub fn write(&self, batch: &WriteBatch) -> Result<(), WriteError> {
        if batch.is_empty() {
            return Ok(());
        }
        let mut writer = self.writer.lock().map_err(poisoned)?;
        let tx = writer.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate).map_err(backend)?;
        for op in &batch.ops {
            if !apply(&tx, op).map_err(backend)? {
                // Dropping the transaction rolls it back.
                let (Op::PutIfAbsent { key, .. }
                | Op::Put { key, .. }
                | Op::Delete { key }
                | Op::DeleteRange { start: key, .. }) = op;
                return Err(WriteError::PreconditionFailed { key: key.clone() });
            }
        }
        tx.commit().map_err(backend)?;
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

/// Applies one operation; `false` when a put-if-absent found its key present.
fn apply(tx: &rusqlite::Transaction<'_>, op: &Op) -> rusqlite::Result<bool> {
    match op {
        Op::Put { key, value } => {
            tx.prepare_cached("INSERT OR REPLACE INTO kv (k, v) VALUES (?1, ?2)")?.execute(params![key, value])?;
        }
        Op::PutIfAbsent { key, value } => {
            match tx.prepare_cached("INSERT INTO kv (k, v) VALUES (?1, ?2)")?.execute(params![key, value]) {
                Err(rusqlite::Error::SqliteFailure(e, _)) if e.code == ErrorCode::ConstraintViolation => {
                    return Ok(false);
                }
                other => other?,
            };
        }
        Op::Delete { key } => {
            tx.prepare_cached("DELETE FROM kv WHERE k = ?1")?.execute([key])?;
        }
        Op::DeleteRange { start, end: Some(end) } => {
            tx.prepare_cached("DELETE FROM kv WHERE k >= ?1 AND k < ?2")?.execute([start, end])?;
        }
        Op::DeleteRange { start, end: None } => {
            tx.prepare_cached("DELETE FROM kv WHERE k >= ?1")?.execute([start])?;
        }
    }
    Ok(true)
}

fn poisoned<T>(_: std::sync::PoisonError<T>) -> StoreError {
    StoreError::new("sqlite: a connection lock was poisoned by a panic")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readers_map_the_whole_database_and_new_files_use_large_pages() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let store = SqliteStore::open(&dir.path().join("node.sqlite")).expect("a store");
        let pragma =
            |name: &str| store.read(|c| c.query_row(&format!("PRAGMA {name}"), [], |row| row.get::<_, i64>(0)));
        // SQLite silently caps mmap_size at its compile-time limit (2 GiB by default).
        assert_eq!(pragma("mmap_size").expect("mmap_size"), i64::try_from(MMAP_BYTES).expect("fits"));
        assert_eq!(pragma("page_size").expect("page_size"), i64::from(PAGE_BYTES));
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
