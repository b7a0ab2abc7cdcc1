//! A reader connection that keeps its read transaction open from one read to the next.
//!
//! Beginning and ending a read transaction in WAL mode takes SQLite's lock on the shared
//! log index (a process-wide mutex the readers contend on, and `fcntl` locks): half the
//! cost of serving a stored body. A [`Reader`] therefore reads from one snapshot until
//! it is stale, which is when
//!
//! - this process has committed a write since the snapshot began (the store's commit
//!   *epoch* moved on), so a write is visible to every read that starts after it
//!   returned; or
//! - the snapshot is [`MAX_AGE`] old, so another process's writes are seen within that.
//!
//! An open snapshot keeps checkpoints from reaching past it, so an idle reader must not
//! hold one: the store's checkpointer ends snapshots older than [`MAX_AGE`]
//! ([`Reader::release_if_older`]).

use std::time::{Duration, Instant};

use rusqlite::Connection;

/// How long a snapshot serves reads before it is renewed.
pub const MAX_AGE: Duration = Duration::from_millis(20);

/// A reader connection and its open snapshot, if any.
#[derive(Debug)]
pub struct Reader {
    connection: Connection,
    snapshot: Option<Snapshot>,
}

#[derive(Debug)]
struct Snapshot {
    /// The commit epoch when the snapshot began.
    epoch: u64,
    began: Instant,
}

impl Reader {
    /// A reader over `connection`, with no snapshot yet.
    pub fn new(connection: Connection) -> Self {
        Reader { connection, snapshot: None }
    }

    /// Runs `read` in a snapshot that has seen every commit up to epoch `epoch`.
    pub fn read<T>(
        &mut self,
        epoch: u64,
        read: impl FnOnce(&Connection) -> rusqlite::Result<T>,
    ) -> rusqlite::Result<T> {
        if self.snapshot.as_ref().is_some_and(|s| s.epoch != epoch || s.began.elapsed() >= MAX_AGE) {
            self.release()?;
        }
        if self.snapshot.is_none() {
            self.connection.execute_batch("BEGIN")?;
            self.snapshot = Some(Snapshot { epoch, began: Instant::now() });
        }
        let result = read(&self.connection);
        if result.is_err() {
            // Whatever went wrong, the next read starts afresh.
            let _ = self.release();
        }
        result
    }

    /// Ends the snapshot if it is at least `age` old.
    pub fn release_if_older(&mut self, age: Duration) -> rusqlite::Result<()> {
        match &self.snapshot {
            Some(snapshot) if snapshot.began.elapsed() >= age => self.release(),
            _ => Ok(()),
        }
    }

    /// Ends the snapshot, if one is open.
    pub fn release(&mut self) -> rusqlite::Result<()> {
        if self.snapshot.take().is_some() {
            self.connection.execute_batch("COMMIT")?;
        }
        Ok(())
    }
}
