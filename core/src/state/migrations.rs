//! Migration info: which migrations have data, the record
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
//!   here with the ranges ([`crate::api::history`]).
//!
//! Both ranges are maintained by read-modify-write at ingest, their keys prefetched.
//! `POST /v0/backfilling/migration-info` reads: one scan of `M migration` (at most
//! [`MAX_SYNCHRONIZERS`] entries), one reverse scan of `N` below the migration (limit
//! 1: the previous migration with data), one reverse scan of `I migration` (limit 1),
//! and one get of the backfill record: 4 reads.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde::Serialize;

use crate::api::http::Response;
use crate::model::error::Error;
use crate::model::json::Json;
use crate::model::time::Timestamp;
use crate::model::update::Update;
use crate::model::value::read;
use crate::state::network;
use crate::storage::keys::{self, Key};
use crate::storage::stage::Stage;
use crate::storage::store::{Scan, Store, StoreError};

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
    const LEN: usize = 16;

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
    stage.put(crate::api::history::stream_key(update), Vec::new());
    stage.put(crate::api::history::synchronizer_key(update), Vec::new());
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

/// The response of `POST /v0/backfilling/migration-info` (`GetMigrationInfoResponse`).
#[derive(Debug, Serialize)]
struct MigrationInfo {
    #[serde(skip_serializing_if = "Option::is_none")]
    previous_migration_id: Option<i64>,
    record_time_range: Vec<RecordTimeRange>,
    #[serde(skip_serializing_if = "Option::is_none")]
    last_import_update_id: Option<String>,
    complete: bool,
    import_updates_complete: bool,
}

#[derive(Debug, Serialize)]
struct RecordTimeRange {
    synchronizer_id: String,
    min: String,
    max: String,
}

/// Reads the body `{"migration_id": n}`. Other fields are ignored; a key repeated in
/// any object of the body is refused, as in every request body.
fn parse_body(body: &[u8]) -> Result<i64, Error> {
    const SHAPE: &str = "the body must be a JSON object such as {\"migration_id\": 0}";
    let json = Json::parse(body).map_err(|e| Error::BadRequest(format!("{SHAPE}; it is not valid JSON: {e}")))?;
    let object = json.as_object().ok_or_else(|| Error::BadRequest(SHAPE.into()))?;
    match object.get("migration_id") {
        None => Err(Error::BadRequest(format!("migration_id is required; {SHAPE}"))),
        Some(Json::Number(n)) => {
            n.as_i64().ok_or_else(|| Error::BadRequest(format!("migration_id must be an integer (int64), not {n}")))
        }
        Some(other) => {
            Err(Error::BadRequest(format!("migration_id must be an integer (int64), not {}", read::describe(other))))
        }
    }
}

fn timestamp(micros: i64) -> Result<String, Error> {
    Timestamp::from_micros(micros)
        .map(|t| format!("{t}"))
        .map_err(|e| Error::Internal(format!("a stored record time: {e}")))
}

/// `POST /v0/backfilling/migration-info`: 4 reads.
pub async fn info<S: Store>(store: &S, body: &[u8]) -> Result<Response, Error> {
    let migration_id = parse_body(body)?;
    let prefix = Key::new(keys::SYNCHRONIZER_RANGE).i64(migration_id).into_bytes();
    let ranges = store.scan(&Scan::prefix(&prefix, MAX_SYNCHRONIZERS)).await?;
    if ranges.is_empty() {
        return Err(Error::NotFound(format!("No data for migration {migration_id}")));
    }
    let mut record_time_range = Vec::with_capacity(ranges.len());
    for (_, value) in ranges {
        let range = Range::from_bytes(&value)?;
        let synchronizer_id = value
            .get(Range::LEN..)
            .and_then(|id| core::str::from_utf8(id).ok())
            .ok_or_else(|| Error::Internal("an unreadable synchronizer record time range".into()))?;
        record_time_range.push(RecordTimeRange {
            synchronizer_id: synchronizer_id.into(),
            min: timestamp(range.min)?,
            max: timestamp(range.max)?,
        });
    }

    let below = Scan {
        start: alloc::vec![keys::MIGRATION_RANGE],
        end: Some(migration_range_key(migration_id)),
        limit: 1,
        reverse: true,
    };
    let previous_migration_id = store.scan(&below).await?.first().and_then(|(key, _)| keys::decode_i64(key, 1));

    let imports = Key::new(keys::IMPORT_UPDATE).i64(migration_id).into_bytes();
    let last_import = store.scan(&Scan::prefix(&imports, 1).reversed()).await?;
    let last_import_update_id = match last_import.into_iter().next() {
        Some((_, id)) => {
            Some(String::from_utf8(id).map_err(|_| Error::Internal("an unreadable import update id".into()))?)
        }
        None => None,
    };

    let backfill = match store.get(&network::backfill_key(migration_id)).await? {
        Some(bytes) => Some(network::stored_backfill(&bytes)?),
        None => None,
    };
    Ok(Response::ok(&MigrationInfo {
        previous_migration_id,
        record_time_range,
        last_import_update_id,
        complete: backfill.as_ref().is_some_and(|b| b.complete),
        import_updates_complete: backfill.as_ref().is_some_and(|b| b.import_updates_complete),
    }))
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

    #[test]
    fn the_body_names_what_is_wrong() {
        assert_eq!(parse_body(br#"{"migration_id": 3, "extra": true}"#), Ok(3));
        let cases: [(&[u8], &str); 8] = [
            (br#"{"migration_id": 1, "migration_id": 2}"#, "the key \"migration_id\" appears twice in one object"),
            (br#"{"migration_id": 1, "extra": {"a": 1, "a": 2}}"#, "the key \"a\" appears twice in one object"),
            (
                br#"{"migration_id":9223372036854775808}"#,
                "migration_id must be an integer (int64), not 9223372036854775808",
            ),
            (b"", "not valid JSON"),
            (b"[1]", "must be a JSON object"),
            (b"{}", "migration_id is required"),
            (br#"{"migration_id":"3"}"#, "migration_id must be an integer"),
            (br#"{"migration_id":1.5}"#, "migration_id must be an integer (int64), not 1.5"),
        ];
        for (body, want) in cases {
            match parse_body(body) {
                Err(Error::BadRequest(message)) => assert!(message.contains(want), "{message}"),
                other => panic!("{want}: {other:?}"),
            }
        }
    }
}
