//! What the node knows of the network besides its update history: party hosting
//! (topology), history completeness (backfill), the planned roll-forward upgrade and
//! the onboarded wallet users. Each comes from its own ingest record kind and replaces
//! the state it names. Their ids (synchronizer, party, participant and user ids) are at
//! most [`MAX_ID_BYTES`](crate::model::ids::MAX_ID_BYTES) bytes, like every id the node takes in.
//!
//! The synchronizers the node knows come from topology records and from updates: the
//! latter through [`KnownSynchronizers`], a [`Projection`] of the ledger.
//!
//! Their keys are listed in [`crate::storage::keys`].

use alloc::string::String;
use alloc::vec::Vec;

use crate::model::json::Json;
use serde::{Deserialize, Serialize};

use crate::model::error::Error;
use crate::model::time::Timestamp;
use crate::model::update::{ReassignmentEvent, Update};
use crate::model::value::PathError;
use crate::model::value::path::{JsonPath, Segment};
use crate::model::value::read::{self, StrictObject};
use crate::state::ledger::Archived;
use crate::state::projection::Projection;
use crate::storage::keys::{self, Key};
use crate::storage::stage::Stage;
use crate::storage::store::Store;

/// `{"topology": {...}}`: a party's hosting on a synchronizer.
///
/// Without `learned_at` it is the hosting as the network records it, and an empty list
/// removes the party's hosting there. With `learned_at` it is a hosting a follower
/// learned from its upstreams' `participant-id` at that time, which it asks again once
/// it is older than its lifetime ([`crate::follow`]); it is kept even when empty (the
/// upstreams said the party is not hosted there, which is remembered so that it is not
/// asked again before then), and the earliest time, `0001-01-01T00:00:00.000000Z`,
/// marks a party seen but not asked yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Topology {
    /// The synchronizer.
    pub synchronizer_id: String,
    /// The party.
    pub party_id: String,
    /// The participants hosting it there (empty: not hosted).
    pub participant_ids: Vec<String>,
    /// When the hosting was learned from an upstream; `None` for one the network
    /// records.
    pub learned_at: Option<Timestamp>,
}

/// A hosting as stored under [`hosting_key`]: its participants, and when it was
/// learned (see [`Topology`]). Stored as the JSON array of participants for one the
/// network records, as `{"participant_ids": [...], "learned_at": micros}` for a
/// learned one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredHosting {
    /// The participants hosting the party (empty: not hosted).
    pub participant_ids: Vec<String>,
    /// When it was learned, for a learned hosting.
    pub learned_at: Option<Timestamp>,
}

/// The stored form of a learned hosting.
#[derive(Serialize, Deserialize)]
struct Learned {
    participant_ids: Vec<String>,
    learned_at: i64,
}

impl StoredHosting {
    /// Reads a stored hosting.
    pub fn decode(bytes: &[u8]) -> Result<Self, Error> {
        let unreadable = || Error::Internal("an unreadable hosting record".into());
        if bytes.first() == Some(&b'[') {
            let participant_ids = serde_json::from_slice(bytes).map_err(|_| unreadable())?;
            return Ok(StoredHosting { participant_ids, learned_at: None });
        }
        let learned: Learned = serde_json::from_slice(bytes).map_err(|_| unreadable())?;
        let learned_at = Timestamp::from_micros(learned.learned_at).map_err(|_| unreadable())?;
        Ok(StoredHosting { participant_ids: learned.participant_ids, learned_at: Some(learned_at) })
    }

    /// The stored form.
    fn encode(&self) -> Result<Vec<u8>, Error> {
        match self.learned_at {
            None => to_json(&self.participant_ids),
            Some(at) => to_json(&Learned { participant_ids: self.participant_ids.clone(), learned_at: at.micros() }),
        }
    }
}

/// `{"backfill": {...}}`: how complete the node's history of a migration is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Backfill {
    /// The migration.
    #[serde(skip)]
    pub migration_id: i64,
    /// Whether the node has every non-import update of the migration.
    pub complete: bool,
    /// Whether the node has every import update of the migration.
    pub import_updates_complete: bool,
}

/// The planned roll-forward upgrade (`RollForwardLsu` in the OpenAPI document).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RollForwardLsu {
    /// When to upgrade (RFC 3339, normalised).
    pub upgrade_time: String,
    /// The current physical synchronizer.
    pub current_physical_synchronizer_id: String,
    /// Its successor.
    pub successor_physical_synchronizer_id: String,
}

/// `{"wallet_user": {...}}`: a wallet user and the party it acts for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalletUser {
    /// The ledger API user (the JWT subject).
    pub user_id: String,
    /// The party.
    pub party_id: String,
}

impl Topology {
    /// Parses the record's payload.
    pub fn parse(json: &Json<'_>) -> Result<Self, PathError> {
        let mut path = JsonPath::default();
        let object = StrictObject::new(json, &["synchronizer_id", "party_id", "participant_ids", "learned_at"], &path)?;
        let participant_ids = object.bounded_strings("participant_ids", &mut path)?;
        for (index, id) in participant_ids.iter().enumerate() {
            let problem = if id.is_empty() {
                "empty participant id"
            } else if participant_ids.iter().take(index).any(|other| other == id) {
                "a participant listed twice"
            } else {
                continue;
            };
            return path.with(Segment::Field("participant_ids"), |p| Err(p.error_at(Segment::Index(index), problem)));
        }
        Ok(Topology {
            synchronizer_id: object.bounded_id("synchronizer_id", &mut path)?.into(),
            party_id: object.bounded_id("party_id", &mut path)?.into(),
            participant_ids,
            learned_at: object.optional_field("learned_at", &mut path, |j, p| read::timestamp(j, p))?,
        })
    }
}

impl Backfill {
    /// Parses the record's payload.
    pub fn parse(json: &Json<'_>) -> Result<Self, PathError> {
        let mut path = JsonPath::default();
        let object = StrictObject::new(json, &["migration_id", "complete", "import_updates_complete"], &path)?;
        let migration_id = object.int64("migration_id", &mut path)?;
        if migration_id < 0 {
            return Err(path.error_at(Segment::Field("migration_id"), "a migration id is not negative"));
        }
        Ok(Backfill {
            migration_id,
            complete: object.boolean("complete", &mut path)?,
            import_updates_complete: object.boolean("import_updates_complete", &mut path)?,
        })
    }
}

impl RollForwardLsu {
    /// Parses the record's payload (`null`: none planned).
    pub fn parse(json: &Json<'_>) -> Result<Option<Self>, PathError> {
        if json.is_null() {
            return Ok(None);
        }
        let mut path = JsonPath::default();
        let object = StrictObject::new(
            json,
            &["upgradeTime", "currentPhysicalSynchronizerId", "successorPhysicalSynchronizerId"],
            &path,
        )?;
        Ok(Some(RollForwardLsu {
            upgrade_time: alloc::format!("{}", object.timestamp("upgradeTime", &mut path)?),
            current_physical_synchronizer_id: object.bounded_id("currentPhysicalSynchronizerId", &mut path)?.into(),
            successor_physical_synchronizer_id: object.bounded_id("successorPhysicalSynchronizerId", &mut path)?.into(),
        }))
    }
}

impl WalletUser {
    /// Parses the record's payload.
    pub fn parse(json: &Json<'_>) -> Result<Self, PathError> {
        let mut path = JsonPath::default();
        let object = StrictObject::new(json, &["user_id", "party_id"], &path)?;
        Ok(WalletUser {
            user_id: object.bounded_id("user_id", &mut path)?.into(),
            party_id: object.bounded_id("party_id", &mut path)?.into(),
        })
    }
}

/// The key of a party's hosting on a synchronizer.
pub fn hosting_key(synchronizer_id: &str, party_id: &str) -> Vec<u8> {
    Key::new(keys::HOSTING).str(synchronizer_id).str(party_id).into_bytes()
}

/// The key marking a synchronizer as known.
pub fn synchronizer_key(synchronizer_id: &str) -> Vec<u8> {
    Key::new(keys::SYNCHRONIZER).str(synchronizer_id).into_bytes()
}

/// The key of a migration's backfill record.
pub fn backfill_key(migration_id: i64) -> Vec<u8> {
    Key::new(keys::BACKFILL).i64(migration_id).into_bytes()
}

/// The key of the roll-forward record.
pub fn roll_forward_key() -> Vec<u8> {
    Key::new(keys::ROLL_FORWARD).into_bytes()
}

/// The key of a wallet user.
pub fn wallet_user_key(user_id: &str) -> Vec<u8> {
    Key::new(keys::WALLET_USER).str(user_id).into_bytes()
}

/// The stored JSON of a record. Serializing these plain structures does not fail; if it
/// ever did, the batch fails rather than store an empty value.
fn to_json<T: Serialize>(value: &T) -> Result<Vec<u8>, Error> {
    serde_json::to_vec(value).map_err(|e| Error::Internal(alloc::format!("serializing a network record: {e}")))
}

/// Stages a topology record.
pub fn apply_topology<S: Store>(stage: &mut Stage<'_, S>, record: &Topology) -> Result<(), Error> {
    let key = hosting_key(&record.synchronizer_id, &record.party_id);
    if record.participant_ids.is_empty() && record.learned_at.is_none() {
        stage.delete(key);
    } else {
        let stored = StoredHosting { participant_ids: record.participant_ids.clone(), learned_at: record.learned_at };
        stage.put(key, stored.encode()?);
    }
    stage.put(synchronizer_key(&record.synchronizer_id), Vec::new());
    Ok(())
}

/// A backfill record as [`apply_backfill`] stored it (its migration id is the key's,
/// and is left 0 here).
pub fn stored_backfill(bytes: &[u8]) -> Result<Backfill, Error> {
    serde_json::from_slice(bytes).map_err(|e| Error::Internal(alloc::format!("an unreadable backfill record: {e}")))
}

/// Stages a backfill record.
pub fn apply_backfill<S: Store>(stage: &mut Stage<'_, S>, record: &Backfill) -> Result<(), Error> {
    stage.put(backfill_key(record.migration_id), to_json(record)?);
    Ok(())
}

/// Stages a roll-forward record.
pub fn apply_roll_forward<S: Store>(stage: &mut Stage<'_, S>, record: &Option<RollForwardLsu>) -> Result<(), Error> {
    match record {
        Some(plan) => stage.put(roll_forward_key(), to_json(plan)?),
        None => stage.delete(roll_forward_key()),
    }
    Ok(())
}

/// Stages a wallet user record.
pub fn apply_wallet_user<S: Store>(stage: &mut Stage<'_, S>, record: &WalletUser) {
    stage.put(wallet_user_key(&record.user_id), record.party_id.clone().into_bytes());
}

/// The synchronizers the node knows from its updates (`S synchronizer_id`, which
/// topology records write too): a transaction's synchronizer, and both the source and
/// the target of a reassignment. The wallet accepts requests only on a known
/// synchronizer.
#[derive(Debug, Clone, Copy, Default)]
pub struct KnownSynchronizers;

impl Projection for KnownSynchronizers {
    fn keys_read<'a>(&'a self, _update: &'a Update) -> impl Iterator<Item = Vec<u8>> + 'a {
        core::iter::empty()
    }

    async fn apply<S: Store>(
        &self,
        stage: &mut Stage<'_, S>,
        update: &Update,
        _archived: &Archived<'_>,
    ) -> Result<(), Error> {
        let mut known = |synchronizer_id: &str| stage.put(synchronizer_key(synchronizer_id), Vec::new());
        match update {
            Update::Transaction(tx) => known(&tx.synchronizer_id),
            Update::Reassignment(r) => {
                let (source, target) = match &r.event {
                    ReassignmentEvent::Assignment(a) => (&a.source_synchronizer, &a.target_synchronizer),
                    ReassignmentEvent::Unassignment(u) => (&u.source_synchronizer, &u.target_synchronizer),
                };
                known(source);
                known(target);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    fn json(value: serde_json::Value) -> Json<'static> {
        Json::from(&value).into_owned()
    }

    #[test]
    fn ids_over_512_bytes_in_network_records_are_refused_naming_the_field() {
        let long = "x".repeat(513);
        let too_long = "is 513 bytes long; ids are at most 512 bytes";
        let topology = |synchronizer: &str, party: &str, participant: &str| {
            Topology::parse(&json(serde_json::json!({
                "synchronizer_id": synchronizer, "party_id": party, "participant_ids": ["p::1", participant]
            })))
            .map_err(|e| e.to_string())
        };
        assert!(topology("d::1", "a::1", &"p".repeat(512)).is_ok());
        assert_eq!(topology(&long, "a::1", "p::2"), Err(alloc::format!("synchronizer_id: {too_long}")));
        assert_eq!(topology("d::1", &long, "p::2"), Err(alloc::format!("party_id: {too_long}")));
        assert_eq!(topology("d::1", "a::1", &long), Err(alloc::format!("participant_ids[1]: {too_long}")));
        assert_eq!(topology("d::1", "a::1", "p::1"), Err("participant_ids[1]: a participant listed twice".to_string()));
        let user = |user: &str, party: &str| {
            WalletUser::parse(&json(serde_json::json!({"user_id": user, "party_id": party}))).map_err(|e| e.to_string())
        };
        assert!(user(&"u".repeat(512), "a::1").is_ok());
        assert_eq!(user(&long, "a::1"), Err(alloc::format!("user_id: {too_long}")));
        assert_eq!(user("alice", &long), Err(alloc::format!("party_id: {too_long}")));
        let plan = RollForwardLsu::parse(&json(serde_json::json!({
            "upgradeTime": "2030-01-01T00:00:00Z",
            "currentPhysicalSynchronizerId": "d::1",
            "successorPhysicalSynchronizerId": long,
        })));
        assert_eq!(plan.unwrap_err().to_string(), alloc::format!("successorPhysicalSynchronizerId: {too_long}"));
    }
}
