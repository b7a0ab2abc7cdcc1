//! Migration info ([`crate::api::state::migration_info`]): which migrations have data, the record
//! time range of each synchronizer in them, their last import update, and how complete
//! the node's history of them is.
//!
//! A migration *has data* when it has a non-import update. Keys (see [`crate::storage::keys`]):
//!
//! - `M migration synchronizer` ([`Range`] then the synchronizer id): min and max
//!   record time of the migration's non-import updates on that synchronizer. A
//!   transaction counts for its synchronizer, an assignment for its target, an
//!   unassignment for its source, each under its own migration id.
//! - `N migration` ([`Range`]): the same over all synchronizers; present exactly when
//!   the migration has data. Snapshots ([`super::snapshots`]) derive from it too.
//! - `I migration update_id` (the update id): the migration's import updates; the last
//!   key is the largest id.
//! - `K ...` and `J ...`: the history stream's indexes of non-import updates, written
//!   here with the ranges ([`stream_key`], [`synchronizer_key`]) and read by the
//!   stream's endpoints ([`crate::api::history`]).
//!
//! Both ranges are maintained by read-modify-write at ingest, their keys prefetched.
//! `POST /v0/backfilling/migration-info` reads: one scan of `M migration` (at most
//! [`MAX_SYNCHRONIZERS`] entries), one reverse scan of `N` below the migration (limit
//! 1: the previous migration with data), one reverse scan of `I migration` (limit 1),
//! and one get of the backfill record: 4 reads.

use alloc::vec::Vec;

use crate::model::error::Error;
use crate::model::error::StoreError;
use crate::model::update::Update;
use crate::storage::keys::{self, Key};
use crate::storage::stage::Stage;
use crate::storage::store::Store;

/// Most synchronizers one migration's info lists.
pub const MAX_SYNCHRONIZERS: u32 = 1000;

/// The smallest and largest record time (microseconds since the epoch) of a set of
/// updates. Stored as two big-endian `i64`s.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    /// The earliest record time.
    pub min: i64,
    /// The latest record time.
    pub max: i64,
}

impl Range {
    /// The bytes of a stored range (two big-endian `i64`s), before what follows it.
    pub const LEN: usize = 16;

    /// The range of one record time.
    pub fn at(micros: i64) -> Self {
        Range { min: micros, max: micros }
    }

    /// The range widened to include `micros`.
    pub fn including(self, micros: i64) -> Self {
        Range { min: self.min.min(micros), max: self.max.max(micros) }
    }

    /// Its stored form.
    pub fn to_bytes(self) -> [u8; Self::LEN] {
        let mut bytes = [0; Self::LEN];
        bytes[..8].copy_from_slice(&self.min.to_be_bytes());
        bytes[8..].copy_from_slice(&self.max.to_be_bytes());
        bytes
    }

    /// Reads the stored form at the start of `bytes`.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, StoreError> {
        let unreadable = || StoreError::new("an unreadable record time range");
        let min: [u8; 8] = bytes.get(..8).and_then(|b| b.try_into().ok()).ok_or_else(unreadable)?;
        let max: [u8; 8] = bytes.get(8..Self::LEN).and_then(|b| b.try_into().ok()).ok_or_else(unreadable)?;
        Ok(Range { min: i64::from_be_bytes(min), max: i64::from_be_bytes(max) })
    }
}

fn synchronizer_range_key(migration_id: i64, synchronizer_id: &str) -> Vec<u8> {
    Key::new(keys::SYNCHRONIZER_RANGE).i64(migration_id).str(synchronizer_id).into_bytes()
}

/// The key of a migration's record time range.
pub fn migration_range_key(migration_id: i64) -> Vec<u8> {
    Key::new(keys::MIGRATION_RANGE).i64(migration_id).into_bytes()
}

fn import_key(migration_id: i64, update_id: &str) -> Vec<u8> {
    Key::new(keys::IMPORT_UPDATE).i64(migration_id).str(update_id).into_bytes()
}

/// The stream index entry of a non-import `update`.
pub fn stream_key(update: &Update) -> Vec<u8> {
    position_prefix(update.migration_id(), update.record_time().micros()).str(update.id()).into_bytes()
}

/// The per-synchronizer index entry of a non-import `update`.
pub fn synchronizer_key(update: &Update) -> Vec<u8> {
    Key::new(keys::SYNCHRONIZER_STREAM)
        .i64(update.migration_id())
        .str(update.synchronizer_id())
        .i64(update.record_time().micros())
        .str(update.id())
        .into_bytes()
}

/// `K migration record_time`: the prefix of one group of the stream.
pub fn position_prefix(migration_id: i64, record_time: i64) -> Key {
    Key::new(keys::STREAM).i64(migration_id).i64(record_time)
}

/// The ranges [`apply_update`] reads and widens.
pub fn keys_read(update: &Update) -> Vec<Vec<u8>> {
    if update.is_import() {
        return Vec::new();
    }
    alloc::vec![
        synchronizer_range_key(update.migration_id(), update.synchronizer_id()),
        migration_range_key(update.migration_id()),
    ]
}

/// How a migration's record time range changed: before (none: the migration had no
/// data) and after.
pub type RangeChange = (Option<Range>, Range);

/// Counts `update` (new to the node) in its migration, and indexes it for the history
/// stream ([`crate::api::history`]); says how the migration's range changed, if it did.
pub async fn apply_update<S: Store>(stage: &mut Stage<'_, S>, update: &Update) -> Result<Option<RangeChange>, Error> {
    let migration_id = update.migration_id();
    if update.is_import() {
        stage.put(import_key(migration_id, update.id()), update.id().as_bytes().to_vec());
        return Ok(None);
    }
    stage.put(stream_key(update), Vec::new());
    stage.put(synchronizer_key(update), Vec::new());
    let at = update.record_time().micros();
    let key = synchronizer_range_key(migration_id, update.synchronizer_id());
    let widened = match stage.get(&key).await? {
        Some(bytes) => Range::from_bytes(&bytes)?.including(at),
        None => Range::at(at),
    };
    let mut value = widened.to_bytes().to_vec();
    value.extend_from_slice(update.synchronizer_id().as_bytes());
    stage.put(key, value);

    let key = migration_range_key(migration_id);
    let before = match stage.get(&key).await? {
        Some(bytes) => Some(Range::from_bytes(&bytes)?),
        None => None,
    };
    let after = before.map_or(Range::at(at), |r| r.including(at));
    if before == Some(after) {
        return Ok(None);
    }
    stage.put(key, after.to_bytes().to_vec());
    Ok(Some((before, after)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_round_trip_and_widen() {
        let range = Range::at(-5).including(7).including(0);
        assert_eq!(range, Range { min: -5, max: 7 });
        assert_eq!(Range::from_bytes(&range.to_bytes()).unwrap(), range);
        assert!(Range::from_bytes(&[0; 15]).is_err());
    }
}
