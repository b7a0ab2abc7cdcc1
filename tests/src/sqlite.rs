//! The SQLite adapter of the core's storage port: one table, keys as BLOBs (SQLite
//! compares BLOBs with `memcmp`, which is exactly the port's key order).
//!
//! One writer connection and a small pool of reader connections over the same file in
//! WAL mode, so reads never wait for a write. Every write batch is one `IMMEDIATE`
//! transaction.

use std::path::Path;
use std::sync::Mutex;

use ledger_node_core::store::{Entry, Op, Scan, StoreError, WriteBatch, WriteError};
use rusqlite::{Connection, ErrorCode, OpenFlags, OptionalExtension, params};

const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS kv (k BLOB PRIMARY KEY NOT NULL, v BLOB NOT NULL) WITHOUT ROWID;";

/// How many reader connections a file-backed store keeps.
const READERS: usize = 4;

/// A SQLite-backed ordered key-value store.
#[derive(Debug)]
pub struct SqliteStore {
    writer: Mutex<Connection>,
    /// Idle reader connections; empty for in-memory databases, which read through the
    /// writer.
    readers: Mutex<Vec<Connection>>,
    file_backed: bool,
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
                "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000; {SCHEMA}"
            ))
            .map_err(backend)?;
        let mut readers = Vec::with_capacity(READERS);
        for _ in 0..READERS {
            let reader =
                Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)
                    .map_err(backend)?;
            reader.execute_batch("PRAGMA busy_timeout = 5000;").map_err(backend)?;
            readers.push(reader);
        }
        Ok(SqliteStore { writer: Mutex::new(writer), readers: Mutex::new(readers), file_backed: true })
    }

    /// A private in-memory database.
    pub fn in_memory() -> Result<Self, StoreError> {
        let writer = Connection::open_in_memory().map_err(backend)?;
        writer.execute_batch(SCHEMA).map_err(backend)?;
        Ok(SqliteStore { writer: Mutex::new(writer), readers: Mutex::new(Vec::new()), file_backed: false })
    }

    /// Runs `read` on an idle reader connection (or the writer, for in-memory databases).
    fn read<T>(&self, read: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> Result<T, StoreError> {
        let pooled = if self.file_backed { self.readers.lock().map_err(poisoned)?.pop() } else { None };
        match pooled {
            Some(connection) => {
                let result = read(&connection);
                self.readers.lock().map_err(poisoned)?.push(connection);
                result.map_err(backend)
            }
            None => {
                let writer = self.writer.lock().map_err(poisoned)?;
                read(&writer).map_err(backend)
            }
        }
    }

    /// The value of `key`.
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        self.read(|c| c.prepare_cached("SELECT v FROM kv WHERE k = ?1")?.query_row([key], |row| row.get(0)).optional())
    }

    /// The values of `keys`, in order.
    pub fn get_many(&self, keys: &[&[u8]]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        self.read(|c| {
            let mut statement = c.prepare_cached("SELECT v FROM kv WHERE k = ?1")?;
            keys.iter().map(|key| statement.query_row([key], |row| row.get(0)).optional()).collect()
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
