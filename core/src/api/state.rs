//! The endpoints of the network state derived at ingest ([`crate::state`]). Each
//! answers from keys it can read directly or scan with a small limit:
//!
//! | endpoint | kept by | store reads |
//! |---|---|---|
//! | `GET .../rounds/earliest-available` ([`earliest_round`]) | [`rounds`] | 1 scan (limit 1) |
//! | `POST /v0/backfilling/migration-info` ([`migration_info`]) | [`migrations`] | 3 scans and 1 get |
//! | `GET /v0/state/acs/snapshot-timestamp-after` ([`snapshot_after`]) | [`snapshots`] | 1 get and 1 scan (limit 1) |
//! | `GET /v0/closed-rounds` ([`closed_rounds`]) | [`rounds`] | 1 scan (limit [`rounds::MAX_CLOSED_ROUNDS`]) |
//! | `GET /v0/{coin}-price/votes` ([`price_votes`]) | [`votes`] | one scan (limit 1) per SV with an active vote, plus 1 |
//!
//! Party hosting and the roll-forward plan are served by [`crate::api::hosting`].

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde::Serialize;

use crate::api::http::{Response, query_param};
use crate::model::config::Config;
use crate::model::error::Error;
use crate::model::json::Json;
use crate::model::time::{TIMESTAMP_FORM, Timestamp};
use crate::model::value::read;
use crate::state::listed::render_list;
use crate::state::{migrations, network, rounds, snapshots, votes};
use crate::storage::keys::{self, Key};
use crate::storage::store::{Scan, Store};

/// `GET /v0/internal/reward-accounting-process/rounds/earliest-available`: one scan.
pub async fn earliest_round<S: Store>(store: &S) -> Result<Response, Error> {
    let first = store.scan(&Scan::prefix(&[keys::ROUND_COMPLETE], 1)).await?;
    match first.first().and_then(|(key, _)| keys::decode_i64(key, 1)) {
        Some(round) => Ok(Response::ok(&serde_json::json!({ "earliest_round": round }))),
        None => Err(Error::NotFound("No reward accounting data available yet".into())),
    }
}

/// `GET /v0/closed-rounds`: one scan.
pub async fn closed_rounds<S: Store>(store: &S) -> Result<Response, Error> {
    let rounds = store.scan(&Scan::prefix(&[keys::CLOSED_ROUND], rounds::MAX_CLOSED_ROUNDS)).await?;
    Ok(Response::json(200, render_list("rounds", rounds.into_iter().map(|(_, json)| json))))
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
pub async fn migration_info<S: Store>(store: &S, body: &[u8]) -> Result<Response, Error> {
    let migration_id = parse_body(body)?;
    let prefix = Key::new(keys::SYNCHRONIZER_RANGE).i64(migration_id).into_bytes();
    let ranges = store.scan(&Scan::prefix(&prefix, migrations::MAX_SYNCHRONIZERS)).await?;
    if ranges.is_empty() {
        return Err(Error::NotFound(format!("No data for migration {migration_id}")));
    }
    let mut record_time_range = Vec::with_capacity(ranges.len());
    for (_, value) in ranges {
        let range = migrations::Range::from_bytes(&value)?;
        let synchronizer_id = value
            .get(migrations::Range::LEN..)
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
        end: Some(migrations::migration_range_key(migration_id)),
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

/// A required query parameter.
fn required(query: &str, name: &str, shape: &str) -> Result<alloc::string::String, Error> {
    query_param(query, name)?.ok_or_else(|| Error::BadRequest(format!("query parameter {name} is required ({shape})")))
}

fn parse_query(query: &str) -> Result<(Timestamp, i64), Error> {
    let after = required(query, "after", TIMESTAMP_FORM)?;
    let after = Timestamp::parse_named("query parameter after", &after)?;
    let migration_id = required(query, "migration_id", "an integer (int64)")?;
    let migration_id = migration_id.parse::<i64>().map_err(|_| {
        Error::BadRequest(format!("query parameter migration_id must be an integer (int64), not {migration_id:?}"))
    })?;
    Ok((after, migration_id))
}

/// `GET /v0/state/acs/snapshot-timestamp-after?after=T&migration_id=M`: 2 reads.
pub async fn snapshot_after<S: Store>(store: &S, config: &Config, query: &str) -> Result<Response, Error> {
    let (after, migration_id) = parse_query(query)?;
    let hours = u8::try_from(config.snapshot_period_hours)
        .ok()
        .filter(|h| snapshots::PERIODS_HOURS.contains(h))
        .ok_or_else(|| Error::Internal(format!("snapshot period of {} hours", config.snapshot_period_hours)))?;
    match snapshots::first_after(store, hours, after, migration_id).await? {
        Some(at) => {
            let at = Timestamp::from_micros(at).map_err(|e| Error::Internal(format!("a snapshot time: {e}")))?;
            Ok(Response::ok(&serde_json::json!({ "record_time": format!("{at}") })))
        }
        None => Err(Error::NotFound(format!("No snapshots found after {after}"))),
    }
}

/// `GET /v0/{coin}-price/votes`: the list under `field` (`coin_price_votes` by default).
pub async fn price_votes<S: Store>(store: &S, field: &str) -> Result<Response, Error> {
    Ok(Response::json(200, render_list(field, votes::latest(store).await?)))
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn query_parameters_are_required_and_named() {
        assert!(parse_query("after=2024-01-01T00:00:00Z&migration_id=2").is_ok());
        let nine_digits = parse_query("after=2024-01-01T00:00:00.000001000Z&migration_id=2").unwrap();
        assert_eq!(nine_digits, (Timestamp::from_micros(1_704_067_200_000_001).unwrap(), 2));
        let cases = [
            ("migration_id=1", "query parameter after is required"),
            ("after=yesterday&migration_id=1", "query parameter after must be"),
            ("after=2024-01-01T00:00:00Z", "query parameter migration_id is required"),
            (
                "after=2024-01-01T00:00:00.0000001Z&migration_id=1",
                "query parameter after: 2024-01-01T00:00:00.0000001Z has a nonzero digit beyond the microsecond; \
                 times have microsecond resolution",
            ),
            ("after=2024-01-01T00:00:00Z&migration_id=one", "query parameter migration_id must be an integer"),
        ];
        for (query, want) in cases {
            match parse_query(query) {
                Err(Error::BadRequest(message)) => assert!(message.contains(want), "{message}"),
                other => panic!("{want}: {other:?}"),
            }
        }
    }
}
