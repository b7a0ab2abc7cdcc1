//! The history stream: how readers page through everything the node holds, in the
//! shapes of the real network's API, so its explorers, indexers and other nodes read
//! this node unchanged.
//!
//! | method | path | answers |
//! |---|---|---|
//! | POST | `/v2/updates`, `/v1/updates` | `{"transactions": [item, ...]}`, items as `GET /v{2,1}/updates/{id}` |
//! | POST | `/v0/backfilling/import-updates` | the import updates of a migration by update id, items as `GET /v1/updates/{id}` renders them (`protobuf_json`) |
//! | POST | `/v0/backfilling/updates-before` | the latest updates of a synchronizer before a time, newest first, items as `GET /v1/updates/{id}` renders them (`protobuf_json`) |
//! | GET | `/v0/backfilling/status` | `{"complete": bool}` |
//!
//! **Order.** The stream is ordered by (migration id, record time, update id); import
//! updates (recorded at the first instant) are not in it. A page starts strictly after
//! the reader's `after` position, a (migration id, record time) pair, and never splits
//! a group of updates with equal migration id and record time: it ends before such a
//! group, unless the group starts the page, which then holds the whole group even
//! beyond `page_size`. So the last item of a page is always a position to go on from,
//! and an empty page means the reader has caught up for now.
//!
//! **Backfilling endpoints**, as the network's Scan answers them (its
//! `apps/scan/src/main/openapi/scan.yaml`, the handler
//! `apps/scan/src/main/scala/org/lfdecentralizedtrust/splice/scan/admin/http/HttpScanHandler.scala`
//! and `UpdateHistory.getUpdatesBefore` and `getImportUpdates` in
//! `apps/common/src/main/scala/org/lfdecentralizedtrust/splice/store/UpdateHistory.scala`):
//!
//! - Both answer their items in the version-1 shape in `protobuf_json`, byte for byte
//!   what `GET /v1/updates/{id}?ledger_value_encoding=protobuf_json` answers: a
//!   transaction carries the legacy `offset`, as the network encodes these two
//!   endpoints with its version-1 encoder.
//! - Updates-before answers the most recent `count` updates of the migration and
//!   synchronizer recorded strictly before `before` (and at or after `at_or_after`,
//!   when given), **newest first**: the network sorts them ascending and reverses the
//!   whole list before taking `count`. Its sort key is (migration id, record time,
//!   synchronizer), which orders nothing within one record time of one synchronizer
//!   (on the network a migration's record times are unique, so such ties do not
//!   arise there). This node holds what it is given, ties included, and answers the
//!   exact reverse of the ascending (record time, update id) order: newest first,
//!   equal record times by descending update id, and a `count` that cuts a group of
//!   equal record time keeps its largest update ids.
//! - Import updates come by ascending update id, after `after_update_id`.
//! - A migration the node holds no update of (neither a non-import update nor an
//!   import update) is a 404 on both, `{"error": "No data for migration N"}`, the
//!   answer `POST /v0/backfilling/migration-info` gives. scan.yaml declares a 404 for
//!   these three backfilling endpoints (not for the status); the network's handler
//!   answers it from migration-info, and this node from all three. A held migration
//!   with nothing in the range asked for is a 200 with no items.
//!
//! **Layout.** Ingest writes two index entries for every non-import update ([`crate::state::migrations`]), in the
//! same atomic batch as the update itself, so an index entry never exists without its
//! bodies:
//!
//! | key | value |
//! |---|---|
//! | `K migration record_time update_id` | empty: the stream order |
//! | `J migration synchronizer record_time update_id` | empty: the order per synchronizer (an assignment counts for its target, an unassignment for its source) |
//!
//! Import updates are found through `I migration update_id` ([`crate::state::migrations`]).
//!
//! **Store reads**, whatever the size of the history: a page of the stream is one scan
//! of `K` and one `get_many` of the bodies (one more scan when a group is larger than
//! the page); import updates and updates-before are one scan and one `get_many`, and an
//! answer with no items one `get` more (whether the migration has a non-import update)
//! and, only if it has none, one scan more (whether it has an import update); the
//! status is one scan of the migrations with non-import updates, one scan per
//! migration holding import updates (and one more that finds none), and one `get_many`
//! of their backfill records: bounded by the number of migrations, not of updates. The bodies are the ones `GET /v{1,2}/updates/{id}` serves,
//! stored rendered at ingest: a page concatenates them without parsing any JSON.

pub mod by_id;

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use by_id::response_body;

use crate::api::http::Response;
use crate::api::route::UpdateApi;
use crate::model::error::Error;
use crate::model::ids::{SynchronizerId, UpdateId};
use crate::model::json::{Json, Object};
use crate::model::time::Timestamp;
use crate::model::value::{Encoding, read};
use crate::state::ledger::updates;
use crate::state::migrations::position_prefix;
use crate::storage::keys::{self, Key};
use crate::storage::store::{Scan, Store};

/// Most updates a page of the stream asks for (`page_size`), and most that the import
/// and updates-before endpoints answer (`limit`, `count`).
pub const MAX_PAGE: u32 = 1000;
/// Most updates one group of equal (migration id, record time) may hold for a page to
/// return it whole; a larger group is a 500 rather than a page that splits it.
pub const MAX_GROUP: u32 = 10_000;
/// Most migrations the status and export endpoints look at.
pub(crate) const MAX_MIGRATIONS: u32 = 1000;

/// The length of a group's prefix in a `K` key: the tag and two integers.
const GROUP_PREFIX: usize = 1 + 8 + 8;

/// The group (migration id and record time) a `K` key belongs to, as its prefix.
fn group(key: &[u8]) -> Option<&[u8]> {
    key.get(..GROUP_PREFIX)
}

/// The update id at the end of an index key, after `skip` bytes of tag and integers
/// and strings before it.
fn trailing_id(key: &[u8], skip: usize) -> Result<String, Error> {
    key.get(skip..)
        .and_then(keys::decode_str)
        .map(|(id, _)| id)
        .ok_or_else(|| Error::Internal(format!("an unreadable history index key ({} bytes)", key.len())))
}

/// `POST /v2/updates` and `POST /v1/updates`.
pub async fn updates<S: Store>(store: &S, api: UpdateApi, body: &[u8]) -> Result<Response, Error> {
    const SHAPE: &str = "the body must be a JSON object such as {\"page_size\": 100, \"after\": \
                         {\"after_migration_id\": 0, \"after_record_time\": \"2024-01-01T00:00:00Z\"}}";
    let json = parse(body, SHAPE)?;
    let object = json.as_object().ok_or_else(|| Error::BadRequest(SHAPE.into()))?;
    let page_size = page_size(object, "page_size")?;
    let encoding = encoding(object)?;
    let start = match object.get("after") {
        None | Some(Json::Null) => Key::new(keys::STREAM).into_bytes(),
        Some(Json::Object(after)) => {
            let migration_id = required_i64(after, "after.after_migration_id")?;
            let record_time = required_time(after, "after.after_record_time")?.micros();
            // Strictly after the group at (migration, record time): the first key of
            // the next possible group.
            match (record_time.checked_add(1), migration_id.checked_add(1)) {
                (Some(next), _) => position_prefix(migration_id, next).into_bytes(),
                (None, Some(next)) => position_prefix(next, i64::MIN).into_bytes(),
                (None, None) => return Ok(transactions(Vec::new())),
            }
        }
        Some(other) => {
            return Err(Error::BadRequest(format!("after must be an object, not {}", read::describe(other))));
        }
    };
    let end = Key::new(keys::STREAM + 1).into_bytes();
    let mut entries = store.scan(&Scan { start, end: Some(end), limit: page_size + 1, reverse: false }).await?;
    if entries.len() > page_size as usize {
        // The group of the first entry past the page.
        let last = group(&entries[page_size as usize].0).unwrap_or_default().to_vec();
        if group(&entries[0].0) == Some(&last[..]) {
            // The page is one group, larger than the page: return it whole.
            entries = store.scan(&Scan::prefix(&last, MAX_GROUP + 1)).await?;
            if entries.len() > MAX_GROUP as usize {
                return Err(Error::Internal(format!(
                    "more than {MAX_GROUP} updates share one migration id and record time; the stream cannot page them"
                )));
            }
        } else {
            // End before the group that the page would split.
            entries.truncate(page_size as usize);
            while entries.len() > 1 && group(&entries[entries.len() - 1].0) == Some(&last[..]) {
                entries.pop();
            }
        }
    }
    let ids = entries.iter().map(|(key, _)| trailing_id(key, GROUP_PREFIX)).collect::<Result<Vec<_>, _>>()?;
    Ok(transactions(bodies(store, &ids, encoding, api).await?))
}

/// `POST /v0/backfilling/import-updates`: `{"migration_id", "after_update_id", "limit"}`.
pub async fn import_updates<S: Store>(store: &S, body: &[u8]) -> Result<Response, Error> {
    const SHAPE: &str =
        "the body must be a JSON object such as {\"migration_id\": 0, \"after_update_id\": \"\", \"limit\": 100}";
    let json = parse(body, SHAPE)?;
    let object = json.as_object().ok_or_else(|| Error::BadRequest(SHAPE.into()))?;
    let migration_id = required_i64(object, "migration_id")?;
    // `""`: from the first.
    let after = UpdateId::parse("after_update_id", required_str(object, "after_update_id")?)?;
    let after = Some(after).filter(|id| !id.is_empty());
    let limit = page_size(object, "limit")?;
    let prefix = Key::new(keys::IMPORT_UPDATE).i64(migration_id).into_bytes();
    let start = match after {
        None => prefix.clone(),
        Some(after) => {
            crate::storage::store::key_after(&Key::new(keys::IMPORT_UPDATE).i64(migration_id).str(&after).into_bytes())
        }
    };
    let scan = Scan { start, end: crate::storage::store::prefix_end(&prefix), limit, reverse: false };
    let entries = store.scan(&scan).await?;
    if entries.is_empty() {
        held(store, migration_id).await?;
    }
    let ids = entries.iter().map(|(key, _)| trailing_id(key, 1 + 8)).collect::<Result<Vec<_>, _>>()?;
    Ok(transactions(bodies(store, &ids, Encoding::ProtobufJson, UpdateApi::V1).await?))
}

/// `POST /v0/backfilling/updates-before`: `{"migration_id", "synchronizer_id", "before",
/// "at_or_after"?, "count"}`.
pub async fn updates_before<S: Store>(store: &S, body: &[u8]) -> Result<Response, Error> {
    const SHAPE: &str = "the body must be a JSON object such as {\"migration_id\": 0, \"synchronizer_id\": \"...\", \
                         \"before\": \"2024-01-01T00:00:00Z\", \"count\": 100}";
    let json = parse(body, SHAPE)?;
    let object = json.as_object().ok_or_else(|| Error::BadRequest(SHAPE.into()))?;
    let migration_id = required_i64(object, "migration_id")?;
    let synchronizer_id = SynchronizerId::parse("synchronizer_id", required_str(object, "synchronizer_id")?)?;
    let before = required_time(object, "before")?.micros();
    let at_or_after = match object.get("at_or_after") {
        None | Some(Json::Null) => None,
        Some(_) => Some(required_time(object, "at_or_after")?.micros()),
    };
    let count = page_size(object, "count")?;
    let synchronizer = Key::new(keys::SYNCHRONIZER_STREAM).i64(migration_id).str(&synchronizer_id);
    let prefix = synchronizer.clone().into_bytes();
    let start = match at_or_after {
        Some(at) => synchronizer.clone().i64(at).into_bytes(),
        None => prefix.clone(),
    };
    let end = synchronizer.i64(before).into_bytes();
    // Newest first: the reverse scan walks (record time, update id) downwards.
    let entries = if start < end {
        store.scan(&Scan { start, end: Some(end), limit: count, reverse: true }).await?
    } else {
        Vec::new()
    };
    if entries.is_empty() {
        held(store, migration_id).await?;
    }
    let ids = entries.iter().map(|(key, _)| trailing_id(key, prefix.len() + 8)).collect::<Result<Vec<_>, _>>()?;
    Ok(transactions(bodies(store, &ids, Encoding::ProtobufJson, UpdateApi::V1).await?))
}

/// Ok when the node holds an update of `migration_id`, a non-import one (its record
/// time range, one `get`) or else an import update (one scan); otherwise the 404 of
/// a migration without data.
async fn held<S: Store>(store: &S, migration_id: i64) -> Result<(), Error> {
    if store.get(&crate::state::migrations::migration_range_key(migration_id)).await?.is_some() {
        return Ok(());
    }
    let imports = Key::new(keys::IMPORT_UPDATE).i64(migration_id).into_bytes();
    if !store.scan(&Scan::prefix(&imports, 1)).await?.is_empty() {
        return Ok(());
    }
    Err(Error::NotFound(format!("No data for migration {migration_id}")))
}

/// `GET /v0/backfilling/status`: complete when the node holds at least one migration
/// and its backfill records say that it has every update and every import update of
/// each migration it holds (as the network's own nodes answer: a history whose import
/// updates are still being backfilled is not complete).
pub async fn status<S: Store>(store: &S) -> Result<Response, Error> {
    let held = store.scan(&Scan::prefix(&[keys::MIGRATION_RANGE], MAX_MIGRATIONS)).await?;
    let mut migrations: Vec<i64> = held.iter().filter_map(|(key, _)| keys::decode_i64(key, 1)).collect();
    // Migrations holding only import updates count too.
    for migration_id in import_migrations(store).await? {
        if !migrations.contains(&migration_id) {
            migrations.push(migration_id);
        }
    }
    let keys: Vec<Vec<u8>> = migrations.iter().map(|&m| crate::state::network::backfill_key(m)).collect();
    let keys: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
    let mut complete = !migrations.is_empty();
    for record in store.get_many(&keys).await? {
        let done = match record {
            Some(bytes) => {
                let backfill = crate::state::network::stored_backfill(&bytes)?;
                backfill.complete && backfill.import_updates_complete
            }
            None => false,
        };
        complete &= done;
    }
    Ok(Response::ok(&serde_json::json!({ "complete": complete })))
}

/// The migrations holding import updates, in order: one scan per migration (its first
/// import), and one more that finds none; at most [`MAX_MIGRATIONS`].
pub(crate) async fn import_migrations<S: Store>(store: &S) -> Result<Vec<i64>, Error> {
    let imports = Key::new(keys::IMPORT_UPDATE).into_bytes();
    let mut migrations = Vec::new();
    let mut from = imports.clone();
    for _ in 0..MAX_MIGRATIONS {
        let scan = Scan { start: from, end: crate::storage::store::prefix_end(&imports), limit: 1, reverse: false };
        let Some((key, _)) = store.scan(&scan).await?.into_iter().next() else { break };
        let migration_id =
            keys::decode_i64(&key, 1).ok_or_else(|| Error::Internal("an unreadable import update key".into()))?;
        migrations.push(migration_id);
        match migration_id.checked_add(1) {
            Some(next) => from = Key::new(keys::IMPORT_UPDATE).i64(next).into_bytes(),
            None => break,
        }
    }
    Ok(migrations)
}

/// The bodies of `ids` in `encoding`, as `api` renders them.
async fn bodies<S: Store>(
    store: &S,
    ids: &[String],
    encoding: Encoding,
    api: UpdateApi,
) -> Result<Vec<Vec<u8>>, Error> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let found = updates::bodies(store, ids, encoding).await?;
    ids.iter()
        .zip(found)
        .map(|(id, stored)| {
            let stored = stored.ok_or_else(|| Error::Internal(format!("update {id} is indexed but not stored")))?;
            response_body(stored, api).ok_or_else(|| Error::Internal(format!("stored update {id} is unreadable")))
        })
        .collect()
}

/// `{"transactions": [...]}` around rendered items.
fn transactions(items: Vec<Vec<u8>>) -> Response {
    let mut body = Vec::with_capacity(items.iter().map(|i| i.len() + 1).sum::<usize>() + 20);
    body.extend_from_slice(b"{\"transactions\":[");
    for (n, item) in items.iter().enumerate() {
        if n > 0 {
            body.push(b',');
        }
        body.extend_from_slice(item);
    }
    body.extend_from_slice(b"]}");
    Response::json(200, body)
}

fn parse<'a>(body: &'a [u8], shape: &str) -> Result<Json<'a>, Error> {
    Json::parse(body).map_err(|e| Error::BadRequest(format!("{shape}; it is not valid JSON: {e}")))
}

/// The last segment of a dotted field name: the key within its object.
fn key_of(field: &str) -> &str {
    field.rsplit('.').next().unwrap_or(field)
}

fn required_i64(object: &Object<'_>, field: &str) -> Result<i64, Error> {
    match object.get(key_of(field)) {
        None => Err(Error::BadRequest(format!("{field} is required"))),
        Some(Json::Number(n)) => {
            n.as_i64().ok_or_else(|| Error::BadRequest(format!("{field} must be an integer (int64), not {n}")))
        }
        Some(other) => {
            Err(Error::BadRequest(format!("{field} must be an integer (int64), not {}", read::describe(other))))
        }
    }
}

fn required_str<'o>(object: &'o Object<'_>, field: &str) -> Result<&'o str, Error> {
    match object.get(key_of(field)) {
        None => Err(Error::BadRequest(format!("{field} is required"))),
        Some(json) => json
            .as_str()
            .ok_or_else(|| Error::BadRequest(format!("{field} must be a string, not {}", read::describe(json)))),
    }
}

fn required_time(object: &Object<'_>, field: &str) -> Result<Timestamp, Error> {
    Timestamp::parse_named(field, required_str(object, field)?)
}

/// A page size field: an integer from 1 to [`MAX_PAGE`].
fn page_size(object: &Object<'_>, field: &str) -> Result<u32, Error> {
    let n = required_i64(object, field)?;
    u32::try_from(n)
        .ok()
        .filter(|n| (1..=MAX_PAGE).contains(n))
        .ok_or_else(|| Error::BadRequest(format!("{field} must be from 1 to {MAX_PAGE}, not {n}")))
}

/// `daml_value_encoding`, or its alias `ledger_value_encoding`; `compact_json` when
/// neither is given. Each one given must name an encoding, and both the same one.
fn encoding(object: &Object<'_>) -> Result<Encoding, Error> {
    let mut chosen = None;
    for name in ["daml_value_encoding", "ledger_value_encoding"] {
        let Some(json) = object.get(name).filter(|json| !matches!(json, Json::Null)) else {
            continue;
        };
        let encoding = Encoding::parse(json.as_str().unwrap_or("")).ok_or_else(|| {
            Error::BadRequest(format!("{name} must be compact_json or protobuf_json, not {}", json_text(json)))
        })?;
        chosen = Some(agreeing(chosen, name, encoding)?);
    }
    Ok(chosen.map_or(Encoding::CompactJson, |(_, encoding)| encoding))
}

/// `encoding`, given as `name`, unless the other name given before it (`before`) named
/// another one.
pub(crate) fn agreeing(
    before: Option<(&'static str, Encoding)>,
    name: &'static str,
    encoding: Encoding,
) -> Result<(&'static str, Encoding), Error> {
    match before {
        Some((other_name, other)) if other != encoding => Err(Error::BadRequest(format!(
            "{other_name} and {name} disagree: {} and {}",
            other.as_str(),
            encoding.as_str()
        ))),
        _ => Ok((name, encoding)),
    }
}

fn json_text(json: &Json<'_>) -> String {
    match json.as_str() {
        Some(text) => format!("{text:?}"),
        None => String::from(read::describe(json)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::config::Config;
    use crate::storage::exec::block_on;
    use crate::storage::store::MemoryStore;
    use alloc::string::ToString;
    use serde_json::{Value as J, json};

    /// A transaction with one created event, at `record_time` (micros past 2024-01-01).
    fn transaction(id: &str, migration_id: i64, synchronizer: &str, record_time: &str) -> J {
        json!({"update": {
            "update_id": id, "migration_id": migration_id, "workflow_id": "", "record_time": record_time,
            "synchronizer_id": synchronizer, "effective_at": record_time, "root_event_ids": [format!("{id}:0")],
            "events_by_id": {format!("{id}:0"): {
                "event_type": "created_event", "event_id": format!("{id}:0"), "contract_id": format!("c-{id}"),
                "template_id": "p:M:T", "package_name": "p", "create_arguments": {"record": {"fields": []}},
                "created_at": record_time, "signatories": [], "observers": []
            }}
        }})
    }

    fn at(second: u32) -> String {
        format!("2024-01-01T00:00:{second:02}Z")
    }

    /// A store holding `records`, ingested in one batch.
    fn store(records: &[J]) -> MemoryStore {
        let store = MemoryStore::new();
        let body: String = records.iter().map(|r| format!("{r}\n")).collect();
        block_on(crate::ingest::ingest(body.as_bytes(), &store, &Config::default())).expect("ingested");
        store
    }

    fn call(response: Result<Response, Error>) -> (u16, J) {
        let response = response.unwrap_or_else(Error::into_response);
        (response.status, serde_json::from_slice(&response.body).expect("a JSON body"))
    }

    fn ids(body: &J) -> Vec<String> {
        body["transactions"]
            .as_array()
            .expect("transactions")
            .iter()
            .map(|t| t["update_id"].as_str().unwrap().into())
            .collect()
    }

    fn page(store: &MemoryStore, body: J) -> (u16, J) {
        call(block_on(updates(store, UpdateApi::V2, body.to_string().as_bytes())))
    }

    #[test]
    fn the_stream_is_ordered_by_migration_and_record_time_and_resumes_strictly_after_a_position() {
        let store = store(&[
            transaction("b", 1, "s", &at(1)),
            transaction("a", 0, "s", &at(9)),
            transaction("c", 1, "s", &at(2)),
            transaction("d", 0, "s", &at(3)),
        ]);
        let (status, first) = page(&store, json!({"page_size": 2}));
        assert_eq!(status, 200);
        assert_eq!(ids(&first), ["d", "a"]);
        let after = json!({"after_migration_id": 0, "after_record_time": at(9)});
        let (_, next) = page(&store, json!({"page_size": 2, "after": after}));
        assert_eq!(ids(&next), ["b", "c"]);
        let after = json!({"after_migration_id": 1, "after_record_time": at(2)});
        assert_eq!(page(&store, json!({"page_size": 2, "after": after})).1, json!({"transactions": []}));
    }

    #[test]
    fn items_are_the_bodies_that_get_by_id_serves_in_either_encoding_and_version() {
        let store = store(&[transaction("a", 0, "s", &at(1))]);
        for (api, encoding, version) in [
            (UpdateApi::V2, Encoding::CompactJson, "v2"),
            (UpdateApi::V2, Encoding::ProtobufJson, "v2"),
            (UpdateApi::V1, Encoding::CompactJson, "v1"),
        ] {
            let name = if encoding == Encoding::CompactJson { "compact_json" } else { "protobuf_json" };
            let body = json!({"page_size": 10, "daml_value_encoding": name}).to_string();
            let (_, page) = call(block_on(updates(&store, api, body.as_bytes())));
            let query = format!("ledger_value_encoding={name}");
            let (_, item) = call(block_on(by_id::get(&store, api, UpdateId::from_path("a", "update_id"), &query)));
            assert_eq!(page["transactions"][0], item, "{version} {name}");
        }
    }

    #[test]
    fn a_page_ends_before_a_group_it_would_split_and_a_group_that_starts_it_comes_whole() {
        let store = store(&[
            transaction("a", 0, "s", &at(1)),
            transaction("b1", 0, "s", &at(2)),
            transaction("b2", 0, "s", &at(2)),
            transaction("b3", 0, "s", &at(2)),
            transaction("c", 0, "s", &at(3)),
        ]);
        assert_eq!(ids(&page(&store, json!({"page_size": 2})).1), ["a"]);
        assert_eq!(ids(&page(&store, json!({"page_size": 4})).1), ["a", "b1", "b2", "b3"]);
        let after = json!({"after_migration_id": 0, "after_record_time": at(1)});
        assert_eq!(ids(&page(&store, json!({"page_size": 1, "after": after})).1), ["b1", "b2", "b3"]);
    }

    #[test]
    fn import_updates_are_paged_by_id_and_are_not_in_the_stream() {
        let import = |id: &str| transaction(id, 2, "s", "0001-01-01T00:00:00Z");
        let store = store(&[import("i3"), import("i1"), import("i2"), transaction("a", 2, "s", &at(1))]);
        assert_eq!(ids(&page(&store, json!({"page_size": 10})).1), ["a"]);
        let body = |after: &str| json!({"migration_id": 2, "after_update_id": after, "limit": 2}).to_string();
        let (status, first) = call(block_on(import_updates(&store, body("").as_bytes())));
        assert_eq!(status, 200);
        assert_eq!(ids(&first), ["i1", "i2"]);
        assert_eq!(ids(&call(block_on(import_updates(&store, body("i2").as_bytes()))).1), ["i3"]);
    }

    /// `POST /v0/backfilling/updates-before` of synchronizer `s` of migration 0.
    fn before(store: &MemoryStore, before: &str, count: u32, at_or_after: Option<String>) -> (u16, J) {
        let mut body = json!({"migration_id": 0, "synchronizer_id": "s", "before": before, "count": count});
        if let Some(t) = at_or_after {
            body["at_or_after"] = json!(t);
        }
        call(block_on(updates_before(store, body.to_string().as_bytes())))
    }

    #[test]
    fn updates_before_are_the_latest_of_their_synchronizer_newest_first() {
        let store = store(&[
            transaction("a", 0, "s", &at(1)),
            transaction("b", 0, "other", &at(2)),
            transaction("c", 0, "s", &at(3)),
            transaction("d", 0, "s", &at(4)),
            transaction("e", 0, "s", &at(5)),
            transaction("f", 1, "s", &at(2)),
        ]);
        let ids_before = |count, at_or_after| ids(&before(&store, &at(5), count, at_or_after).1);
        assert_eq!(ids_before(2, None), ["d", "c"]);
        assert_eq!(ids_before(10, None), ["d", "c", "a"]);
        assert_eq!(ids_before(10, Some(at(3))), ["d", "c"]);
        assert_eq!(ids_before(10, Some(at(5))), Vec::<String>::new());
    }

    #[test]
    fn equal_record_times_come_by_descending_update_id_and_a_count_keeps_the_largest() {
        let store = store(&[
            transaction("t1", 0, "s", &at(1)),
            transaction("t2b", 0, "s", &at(2)),
            transaction("t2a", 0, "s", &at(2)),
            transaction("t2c", 0, "s", &at(2)),
            transaction("t3", 0, "s", &at(3)),
        ]);
        assert_eq!(ids(&before(&store, &at(9), 10, None).1), ["t3", "t2c", "t2b", "t2a", "t1"]);
        assert_eq!(ids(&before(&store, &at(9), 3, None).1), ["t3", "t2c", "t2b"]);
        assert_eq!(ids(&before(&store, &at(3), 10, Some(at(2))).1), ["t2c", "t2b", "t2a"]);
    }

    #[test]
    fn backfilling_items_are_the_version_1_bodies_in_protobuf_json() {
        let import = transaction("i", 0, "s", "0001-01-01T00:00:00Z");
        let store = store(&[import, transaction("a", 0, "s", &at(1))]);
        let by_id = |id: &str| {
            let id = UpdateId::from_path(id, "update_id");
            let got = block_on(by_id::get(&store, UpdateApi::V1, id, "ledger_value_encoding=protobuf_json"));
            call(got).1
        };
        let (_, page) = before(&store, &at(9), 10, None);
        assert_eq!(page["transactions"], json!([by_id("a")]));
        assert_eq!(page["transactions"][0]["offset"], "000000000000000001");
        let body = json!({"migration_id": 0, "after_update_id": "", "limit": 10}).to_string();
        let (_, imports) = call(block_on(import_updates(&store, body.as_bytes())));
        assert_eq!(imports["transactions"], json!([by_id("i")]));
        assert_eq!(imports["transactions"][0]["offset"], "000000000000000001");
    }

    #[test]
    fn a_migration_without_data_is_a_404_naming_it_and_a_held_one_with_nothing_asked_for_is_empty() {
        let import = |id: &str, m: i64| transaction(id, m, "s", "0001-01-01T00:00:00Z");
        // Migration 0: non-import updates only; 1: import updates only; 2: nothing.
        let store = store(&[transaction("a", 0, "s", &at(5)), import("i", 1)]);
        let before_in = |migration_id: i64| {
            let body = json!({"migration_id": migration_id, "synchronizer_id": "s", "before": at(1), "count": 5});
            call(block_on(updates_before(&store, body.to_string().as_bytes())))
        };
        let imports_of = |migration_id: i64| {
            let body = json!({"migration_id": migration_id, "after_update_id": "", "limit": 5});
            call(block_on(import_updates(&store, body.to_string().as_bytes())))
        };
        for migration_id in [0, 1] {
            assert_eq!(before_in(migration_id), (200, json!({"transactions": []})), "migration {migration_id}");
        }
        assert_eq!(imports_of(0), (200, json!({"transactions": []})));
        assert_eq!(ids(&imports_of(1).1), ["i"]);
        let missing = (404, json!({"error": "No data for migration 2"}));
        assert_eq!(before_in(2), missing);
        assert_eq!(imports_of(2), missing);
    }

    #[test]
    fn the_status_is_complete_only_when_every_held_migration_is() {
        let backfill = |m: i64, complete: bool, imports: bool| json!({"backfill": {"migration_id": m, "complete": complete, "import_updates_complete": imports}});
        let apply = |held: &MemoryStore, record: J| {
            let body = format!("{record}\n");
            block_on(crate::ingest::ingest(body.as_bytes(), held, &Config::default())).expect("ingested");
        };
        assert_eq!(call(block_on(status(&MemoryStore::new()))).1, json!({"complete": false}));
        let held =
            store(&[transaction("a", 0, "s", &at(1)), transaction("b", 1, "s", &at(1)), backfill(0, true, true)]);
        assert_eq!(call(block_on(status(&held))).1, json!({"complete": false}));
        // Every update of migration 1, but not yet every import update.
        apply(&held, backfill(1, true, false));
        assert_eq!(call(block_on(status(&held))).1, json!({"complete": false}));
        apply(&held, backfill(1, true, true));
        assert_eq!(call(block_on(status(&held))).1, json!({"complete": true}));
    }

    #[test]
    fn bad_requests_name_the_field() {
        let store = MemoryStore::new();
        let cases = [
            (json!({}), "page_size is required"),
            (json!({"page_size": 0}), "page_size must be from 1 to 1000, not 0"),
            (json!({"page_size": 1001}), "page_size must be from 1 to 1000, not 1001"),
            (json!({"page_size": 1, "after": 3}), "after must be an object, not a number"),
            (json!({"page_size": 1, "after": {"after_record_time": at(1)}}), "after.after_migration_id is required"),
            (
                json!({"page_size": 1, "after": {"after_migration_id": 0, "after_record_time": "yesterday"}}),
                "after.after_record_time must be an RFC 3339 timestamp",
            ),
            (
                json!({"page_size": 1, "daml_value_encoding": "yaml"}),
                "daml_value_encoding must be compact_json or protobuf_json",
            ),
            (
                json!({"page_size": 1, "daml_value_encoding": "protobuf_json", "ledger_value_encoding": "yaml"}),
                "ledger_value_encoding must be compact_json or protobuf_json",
            ),
            (
                json!({"page_size": 1, "daml_value_encoding": "protobuf_json", "ledger_value_encoding": "compact_json"}),
                "daml_value_encoding and ledger_value_encoding disagree",
            ),
        ];
        for (body, message) in cases {
            let (status, answer) = page(&store, body.clone());
            assert_eq!(status, 400, "{body}");
            assert!(answer["error"].as_str().unwrap().contains(message), "{body}: {answer}");
        }
        let (status, answer) = call(block_on(updates(&store, UpdateApi::V2, br#"{"page_size": 1, "page_size": 2}"#)));
        assert_eq!(status, 400);
        assert!(answer["error"].as_str().unwrap().contains("appears twice"), "{answer}");
    }
}
