//! The export endpoints: what a follower needs from its upstream beyond the public
//! history stream ([`crate::follow`]). Both take the admin token.
//!
//! | method | path | answers |
//! |---|---|---|
//! | POST | `/v0/admin/export/state` | [`State`]: where the node's history ends, its import updates, backfill, roll-forward plan and a page of party hosting |
//! | POST | `/v0/admin/export/blobs` | [`Blobs`]: the created-event blobs of the held active contracts among the ids asked for |
//! | POST | `/v0/admin/export/sought-blobs` | [`SoughtPage`]: a page of the active contracts held without the blob a read shows them with |
//!
//! `POST /v0/admin/export/state` takes `{"topology_after": {"synchronizer_id",
//! "party_id"} | null}` (an empty body is `{}`) and answers at most [`TOPOLOGY_PAGE`]
//! hosting records after that key, in key order; `topology_next` is the key to ask from
//! next, `null` on the last page. The other fields are whole on every page: a node holds
//! few migrations. `POST /v0/admin/export/blobs` takes `{"contract_ids": [...]}`, at most
//! [`MAX_CONTRACT_IDS`] ids, and leaves out contracts it does not hold, archived ones
//! (whose blobs are not kept) and those ingested without a blob. It answers each id
//! once, in the order first asked, however often the request repeats it: the answer
//! is a set of blobs that a client looks up by contract id, a repeat asks for nothing
//! more, and refusing it would fail a follower's whole page over a harmless repeat.
//!
//! `POST /v0/admin/export/sought-blobs` takes `{"after": contract_id | null}` (an empty
//! body is `{}`) and answers at most [`SOUGHT_PAGE`] of the contracts waiting for a blob
//! ([`crate::state::blobs`]) after that id, in id order, each with its template, its
//! payload (`compact_json`; for an archived transfer command, whose status entry still
//! shows it, its `sender` and `nonce`), the contract whose choice contexts disclose it (a locked
//! coin's transfer instruction or allocation) and when its blob was last sought; `next`
//! is the id to ask after next, `null` on the last page. A public follower reads it to
//! know which blobs to ask its upstreams for ([`crate::follow`]).
//!
//! Store reads: the state is one reverse scan of the stream index, two scans per
//! migration holding import updates (plus one that finds none), one scan of the backfill
//! records, one get and one scan of hosting: bounded by the number of migrations. The
//! blobs are one `get_many`.

use alloc::collections::BTreeSet;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde::{Deserialize, Serialize};

use crate::api::history;
use crate::api::http::Response;
use crate::model::error::Error;
use crate::model::ids;
use crate::model::json::Json;
use crate::model::time::Timestamp;
use crate::state::ledger::contracts::{self, ContractRecord, Creation, contract_key};
use crate::state::network::{self, RollForwardLsu};
use crate::storage::keys::{self, Key};
use crate::storage::store::{Scan, Store, key_after, prefix_end};

/// Most hosting records one state page holds.
pub const TOPOLOGY_PAGE: u32 = 1000;
/// Most contract ids one blobs request may name.
pub const MAX_CONTRACT_IDS: usize = 1000;
/// Most contracts one page of the contracts waiting for a blob holds.
pub const SOUGHT_PAGE: u32 = 1000;

/// A position in the history stream: strictly after this migration id and record time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Position {
    /// The migration id.
    pub after_migration_id: i64,
    /// The record time, `YYYY-MM-DDTHH:MM:SS.ffffffZ`.
    pub after_record_time: String,
}

impl Position {
    /// The position just before this one's group: a page from there starts with the
    /// group of updates at this migration id and record time.
    pub fn at_group(&self) -> Position {
        let before = Timestamp::parse(&self.after_record_time)
            .ok()
            .and_then(|t| t.micros().checked_sub(1))
            .and_then(|micros| Timestamp::from_micros(micros).ok());
        match before {
            Some(time) => {
                Position { after_migration_id: self.after_migration_id, after_record_time: format!("{time}") }
            }
            None => self.clone(),
        }
    }
}

/// The last import update a node holds for one migration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImportEnd {
    /// The migration id.
    pub migration_id: i64,
    /// Its largest import update id.
    pub last_update_id: String,
}

/// A backfill record as ingest takes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BackfillRecord {
    /// The migration.
    pub migration_id: i64,
    /// Whether the node has every non-import update of the migration.
    pub complete: bool,
    /// Whether the node has every import update of the migration.
    pub import_updates_complete: bool,
}

/// A hosting record as ingest takes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hosting {
    /// The synchronizer.
    pub synchronizer_id: String,
    /// The party.
    pub party_id: String,
    /// The participants hosting it there (empty only for a learned hosting: the party
    /// is not hosted there).
    pub participant_ids: Vec<String>,
    /// When it was learned from an upstream, for a hosting a follower learned
    /// ([`network::Topology`]); absent for one the network records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub learned_at: Option<String>,
}

/// A hosting key: where a page of hosting records ends.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct HostingKey {
    /// The synchronizer.
    pub synchronizer_id: String,
    /// The party.
    pub party_id: String,
}

impl Hosting {
    /// Its key.
    pub fn key(&self) -> HostingKey {
        HostingKey { synchronizer_id: self.synchronizer_id.clone(), party_id: self.party_id.clone() }
    }
}

/// The body of a 200 from `POST /v0/admin/export/state`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct State {
    /// The stream position of the last non-import update held (`null`: none).
    pub stream_position: Option<Position>,
    /// The last import update of every migration that has import updates.
    pub import_updates: Vec<ImportEnd>,
    /// Every backfill record.
    pub backfill: Vec<BackfillRecord>,
    /// The planned roll-forward upgrade.
    pub roll_forward_lsu: Option<RollForwardLsu>,
    /// A page of hosting records, in key order.
    pub topology: Vec<Hosting>,
    /// Where the next page starts (`null`: this was the last).
    pub topology_next: Option<HostingKey>,
}

/// The body of a 200 from `POST /v0/admin/export/blobs`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Blobs {
    /// The blobs found, in the order the ids were asked for.
    pub blobs: Vec<Blob>,
}

/// One contract's created-event blob.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Blob {
    /// The contract.
    pub contract_id: String,
    /// Its created-event blob (base64), as ingested.
    pub created_event_blob: String,
}

/// `POST /v0/admin/export/state`.
pub async fn state<S: Store>(store: &S, body: &[u8]) -> Result<Response, Error> {
    let after = topology_after(body)?;
    Ok(Response::ok(&read_state(store, after.as_ref()).await?))
}

/// The state, with the page of hosting records after `topology_after`.
pub async fn read_state<S: Store>(store: &S, topology_after: Option<&HostingKey>) -> Result<State, Error> {
    let (topology, topology_next) = hosting_page(store, topology_after).await?;
    Ok(State {
        stream_position: stream_position(store).await?,
        import_updates: import_ends(store).await?,
        backfill: backfill(store).await?,
        roll_forward_lsu: roll_forward(store).await?,
        topology,
        topology_next,
    })
}

fn topology_after(body: &[u8]) -> Result<Option<HostingKey>, Error> {
    const SHAPE: &str = "the body must be a JSON object such as {\"topology_after\": null} or \
                         {\"topology_after\": {\"synchronizer_id\": \"...\", \"party_id\": \"...\"}}";
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    let json = Json::parse(body).map_err(|e| Error::BadRequest(format!("{SHAPE}; it is not valid JSON: {e}")))?;
    let object = json.as_object().ok_or_else(|| Error::BadRequest(SHAPE.into()))?;
    if let Some(key) = object.keys().find(|k| *k != "topology_after") {
        return Err(Error::BadRequest(format!("unknown field {key:?}; {SHAPE}")));
    }
    let after = match object.get("topology_after") {
        None | Some(Json::Null) => return Ok(None),
        Some(Json::Object(after)) => after,
        Some(_) => return Err(Error::BadRequest(format!("topology_after must be an object or null; {SHAPE}"))),
    };
    let field = |name: &str| -> Result<String, Error> {
        let value = after
            .get(name)
            .and_then(Json::as_str)
            .ok_or_else(|| Error::BadRequest(format!("topology_after.{name} must be a string; {SHAPE}")))?;
        ids::check_id(name, value)?;
        Ok(value.into())
    };
    Ok(Some(HostingKey { synchronizer_id: field("synchronizer_id")?, party_id: field("party_id")? }))
}

/// The stream position of the last non-import update held.
async fn stream_position<S: Store>(store: &S) -> Result<Option<Position>, Error> {
    let scan = Scan::prefix(&[keys::STREAM], 1).reversed();
    let Some((key, _)) = store.scan(&scan).await?.into_iter().next() else { return Ok(None) };
    let unreadable = || Error::Internal(format!("an unreadable history index key ({} bytes)", key.len()));
    let migration_id = keys::decode_i64(&key, 1).ok_or_else(unreadable)?;
    let micros = keys::decode_i64(&key, 9).ok_or_else(unreadable)?;
    let time = Timestamp::from_micros(micros).map_err(|_| unreadable())?;
    Ok(Some(Position { after_migration_id: migration_id, after_record_time: format!("{time}") }))
}

/// The last import update of each migration holding import updates.
async fn import_ends<S: Store>(store: &S) -> Result<Vec<ImportEnd>, Error> {
    let mut ends = Vec::new();
    for migration_id in history::import_migrations(store).await? {
        let prefix = Key::new(keys::IMPORT_UPDATE).i64(migration_id).into_bytes();
        let Some((last, _)) = store.scan(&Scan::prefix(&prefix, 1).reversed()).await?.into_iter().next() else {
            continue;
        };
        let (last_update_id, _) = last
            .get(prefix.len()..)
            .and_then(keys::decode_str)
            .ok_or_else(|| Error::Internal("an unreadable import update key".into()))?;
        ends.push(ImportEnd { migration_id, last_update_id });
    }
    Ok(ends)
}

/// Every backfill record.
async fn backfill<S: Store>(store: &S) -> Result<Vec<BackfillRecord>, Error> {
    let entries = store.scan(&Scan::prefix(&[keys::BACKFILL], history::MAX_MIGRATIONS)).await?;
    entries
        .iter()
        .map(|(key, value)| {
            let migration_id =
                keys::decode_i64(key, 1).ok_or_else(|| Error::Internal("an unreadable backfill record".into()))?;
            let b = network::stored_backfill(value)?;
            Ok(BackfillRecord {
                migration_id,
                complete: b.complete,
                import_updates_complete: b.import_updates_complete,
            })
        })
        .collect()
}

/// The planned roll-forward upgrade.
async fn roll_forward<S: Store>(store: &S) -> Result<Option<RollForwardLsu>, Error> {
    match store.get(&network::roll_forward_key()).await? {
        Some(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|_| Error::Internal("an unreadable roll-forward record".into())),
        None => Ok(None),
    }
}

/// A page of hosting records after `after`, and where the next starts.
async fn hosting_page<S: Store>(
    store: &S,
    after: Option<&HostingKey>,
) -> Result<(Vec<Hosting>, Option<HostingKey>), Error> {
    let prefix = [keys::HOSTING];
    let start = match after {
        Some(key) => key_after(&network::hosting_key(&key.synchronizer_id, &key.party_id)),
        None => prefix.to_vec(),
    };
    let scan = Scan { start, end: prefix_end(&prefix), limit: TOPOLOGY_PAGE, reverse: false };
    let entries = store.scan(&scan).await?;
    let full = entries.len() == TOPOLOGY_PAGE as usize;
    let page = entries
        .iter()
        .map(|(key, value)| {
            let unreadable = || Error::Internal("an unreadable hosting record".into());
            let (synchronizer_id, rest) = key.get(1..).and_then(keys::decode_str).ok_or_else(unreadable)?;
            let (party_id, _) = keys::decode_str(rest).ok_or_else(unreadable)?;
            let stored = network::StoredHosting::decode(value)?;
            let learned_at = stored.learned_at.map(|at| format!("{at}"));
            Ok(Hosting { synchronizer_id, party_id, participant_ids: stored.participant_ids, learned_at })
        })
        .collect::<Result<Vec<_>, Error>>()?;
    let next = if full { page.last().map(Hosting::key) } else { None };
    Ok((page, next))
}

/// `POST /v0/admin/export/blobs`.
pub async fn blobs<S: Store>(store: &S, body: &[u8]) -> Result<Response, Error> {
    const SHAPE: &str = "the body must be a JSON object such as {\"contract_ids\": [\"...\"]}";
    let json = Json::parse(body).map_err(|e| Error::BadRequest(format!("{SHAPE}; it is not valid JSON: {e}")))?;
    let object = json.as_object().ok_or_else(|| Error::BadRequest(SHAPE.into()))?;
    if let Some(key) = object.keys().find(|k| *k != "contract_ids") {
        return Err(Error::BadRequest(format!("unknown field {key:?}; {SHAPE}")));
    }
    let ids = object
        .get("contract_ids")
        .and_then(Json::as_array)
        .ok_or_else(|| Error::BadRequest(format!("contract_ids must be an array of strings; {SHAPE}")))?;
    if ids.len() > MAX_CONTRACT_IDS {
        return Err(Error::BadRequest(format!(
            "contract_ids names {} contracts; at most {MAX_CONTRACT_IDS} a request",
            ids.len()
        )));
    }
    let ids = ids
        .iter()
        .enumerate()
        .map(|(index, id)| {
            let id = id.as_str().ok_or_else(|| Error::BadRequest(format!("contract_ids[{index}] must be a string")))?;
            ids::check_id(&format!("contract_ids[{index}]"), id)?;
            Ok(id)
        })
        .collect::<Result<Vec<&str>, Error>>()?;
    Ok(Response::ok(&read_blobs(store, &ids).await?))
}

/// The blobs of the held active contracts among `ids`, each once, in the order first
/// named.
pub async fn read_blobs<S: Store>(store: &S, ids: &[&str]) -> Result<Blobs, Error> {
    let mut asked = BTreeSet::new();
    let ids: Vec<&str> = ids.iter().copied().filter(|id| asked.insert(*id)).collect();
    let keys: Vec<Vec<u8>> = ids.iter().map(|id| contract_key(id)).collect();
    let keys: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
    let found = store.get_many(&keys).await?;
    let mut blobs = Vec::new();
    for (id, bytes) in ids.iter().zip(found) {
        let Some(bytes) = bytes else { continue };
        if let ContractRecord::Created(Creation { blob: Some(blob), .. }) = contracts::decode(id, &bytes)?
            && !blob.as_str().is_empty()
        {
            blobs.push(Blob { contract_id: (*id).into(), created_event_blob: blob.as_str().into() });
        }
    }
    Ok(Blobs { blobs })
}

/// The body of a 200 from `POST /v0/admin/export/sought-blobs`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SoughtPage {
    /// Contracts waiting for a blob, in contract id order.
    pub contracts: Vec<SoughtContract>,
    /// The id to ask after for the next page (`null`: this was the last).
    pub next: Option<String>,
}

/// An active contract held without the blob a read shows it with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SoughtContract {
    /// The contract.
    pub contract_id: String,
    /// Its template.
    pub template_id: String,
    /// Its create arguments in `compact_json`.
    pub payload: serde_json::Value,
    /// The contract whose choice contexts disclose it, for a locked coin.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<Via>,
    /// When its blob was last asked for and none was disclosed; absent: never.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sought_at: Option<String>,
}

/// The contract whose choice contexts disclose a locked coin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Via {
    /// Its id.
    pub contract_id: String,
    /// Its template (a transfer instruction's or a coin allocation's).
    pub template_id: String,
}

/// `POST /v0/admin/export/sought-blobs`.
pub async fn sought_blobs<S: Store>(store: &S, body: &[u8]) -> Result<Response, Error> {
    const SHAPE: &str = "the body must be a JSON object such as {\"after\": null} or {\"after\": \"<contract id>\"}";
    let after = if body.iter().all(u8::is_ascii_whitespace) {
        None
    } else {
        let json = Json::parse(body).map_err(|e| Error::BadRequest(format!("{SHAPE}; it is not valid JSON: {e}")))?;
        let object = json.as_object().ok_or_else(|| Error::BadRequest(SHAPE.into()))?;
        if let Some(key) = object.keys().find(|k| *k != "after") {
            return Err(Error::BadRequest(format!("unknown field {key:?}; {SHAPE}")));
        }
        match object.get("after") {
            None | Some(Json::Null) => None,
            Some(after) => {
                let id = after
                    .as_str()
                    .ok_or_else(|| Error::BadRequest(format!("after must be a contract id or null; {SHAPE}")))?;
                ids::check_id("after", id)?;
                Some(String::from(id))
            }
        }
    };
    Ok(Response::ok(&read_sought(store, after.as_deref()).await?))
}

/// The page of the contracts waiting for a blob after `after`: one scan and one
/// `get_many` of their records and of those of the contracts that disclose them.
pub async fn read_sought<S: Store>(store: &S, after: Option<&str>) -> Result<SoughtPage, Error> {
    let entries = crate::state::blobs::sought_page(store, after, SOUGHT_PAGE).await?;
    let next = (entries.len() == SOUGHT_PAGE as usize).then(|| entries.last().map(|(id, _)| id.clone())).flatten();
    let mut wanted: Vec<&str> = entries.iter().map(|(id, _)| id.as_str()).collect();
    wanted.extend(entries.iter().filter_map(|(_, sought)| sought.via.as_deref()));
    let keys: Vec<Vec<u8>> = wanted.iter().map(|id| contract_key(id)).collect();
    let keys: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
    let mut held = alloc::collections::BTreeMap::new();
    for (id, bytes) in wanted.iter().zip(store.get_many(&keys).await?) {
        if let Some(bytes) = bytes
            && let ContractRecord::Created(creation) = contracts::decode(id, &bytes)?
        {
            held.insert(*id, creation);
        }
    }
    let mut page = Vec::with_capacity(entries.len());
    for (id, sought) in &entries {
        let (template_id, payload) = match (held.get(id.as_str()), &sought.transfer_command) {
            (Some(creation), _) => (creation.template_id.as_str().into(), creation.payload.clone()),
            // An archived transfer command: what its status entry is asked by.
            (None, Some(command)) => (
                command.template_id.clone(),
                serde_json::json!({ "sender": command.sender, "nonce": format!("{}", command.nonce) }),
            ),
            (None, None) => continue,
        };
        let via = sought.via.as_deref().and_then(|via| {
            held.get(via).map(|c| Via { contract_id: via.into(), template_id: c.template_id.as_str().into() })
        });
        page.push(SoughtContract {
            contract_id: id.clone(),
            template_id,
            payload,
            via,
            sought_at: sought.sought_at.clone(),
        });
    }
    Ok(SoughtPage { contracts: page, next })
}
