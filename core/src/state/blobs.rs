//! Blobs that come after their contract: the created-event blobs a follower of a
//! public upstream takes once the contract is held, and the contracts still waiting
//! for one.
//!
//! The network's update stream carries no `created_event_blob`, so a follower of its
//! public Scan API holds every contract without one at first, and takes the blobs
//! its reads show later, from the endpoints that disclose them ([`crate::follow`]).
//! Two pieces of state serve that:
//!
//! - **The `blob` ingest record** ([`BlobRecord`]), `{"blob": {"contract_id",
//!   "created_event_blob"}}`, gives a held contract its blob: the contract's record
//!   takes it, and so does every rendering of the contract that derived state keeps
//!   (the contracts a validator and a wallet read, [`crate::state::scan`]; the closed
//!   rounds, [`crate::state::rounds`]; the price votes, [`crate::state::votes`]), so
//!   every read shows it as if the contract had come with it. A contract held with the
//!   same blob is unchanged; one held with another blob is a 409 (the same rule as an
//!   update sent again with another blob); a contract not held, or archived (no node
//!   keeps an archived contract's blob), takes nothing. `{"blob": {"contract_id",
//!   "sought_at"}}` notes instead that the blob was asked for at that time and no
//!   endpoint disclosed it.
//! - **The contracts waiting for a blob** (`b contract_id`, [`Sought`]), kept at
//!   ingest by the projection [`SoughtBlobs`]: every active contract held without a
//!   blob that a read of the node renders with its blob, so one that some endpoint of
//!   the network may disclose: the contracts of [`crate::state::scan`]'s kinds that a
//!   read shows as contracts, closed rounds, price votes, the external party config state, and the locked coin of
//!   each transfer instruction and coin allocation (`via` names the instruction or
//!   allocation, whose choice contexts disclose it). An entry goes when its contract
//!   takes a blob or is archived. A node fed by ingest with the blobs holds none.
//!
//! Neither changes an update as stored: an update's blobs are an attachment (see
//! [`crate::state::ledger::updates`]), and a contract's record is where every read takes
//! them from.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde::{Deserialize, Serialize};

use crate::model::error::Error;
use crate::model::json::Json;
use crate::model::names::TemplateNames;
use crate::model::time::Timestamp;
use crate::model::update::{Blob, CreatedEvent, Event, Update};
use crate::model::value::PathError;
use crate::model::value::path::{JsonPath, Segment};
use crate::model::value::read::{self, StrictObject};
use crate::state::ledger::{Archived, ContractRecord, contracts};
use crate::state::projection::Projection;
use crate::state::scan::{Kind, ScanTemplates};
use crate::storage::keys::{self, Key};
use crate::storage::stage::Stage;
use crate::storage::store::Store;

/// `{"blob": {...}}`: a held contract's blob, or a note that none was disclosed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlobRecord {
    /// The contract.
    pub contract_id: String,
    /// What the record says of it.
    pub news: BlobNews,
}

/// What a [`BlobRecord`] says of its contract.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BlobNews {
    /// Its created-event blob.
    Blob(Blob),
    /// No endpoint disclosed its blob when asked at this time.
    SoughtAt(Timestamp),
}

impl BlobRecord {
    /// Parses the record's payload: `contract_id` and exactly one of
    /// `created_event_blob` (standard base64, not empty) and `sought_at`.
    pub fn parse(json: &Json<'_>) -> Result<Self, PathError> {
        let mut path = JsonPath::default();
        let object = StrictObject::new(json, &["contract_id", "created_event_blob", "sought_at"], &path)?;
        let contract_id = object.bounded_id("contract_id", &mut path)?.into();
        let news = match (object.optional("created_event_blob"), object.optional("sought_at")) {
            (Some(blob), None) => {
                let text = read::string(blob, &path)?;
                let blob = Blob::parse(text).ok().filter(|_| !text.is_empty()).ok_or_else(|| {
                    path.error_at(Segment::Field("created_event_blob"), "expected a blob: standard base64, not empty")
                })?;
                BlobNews::Blob(blob)
            }
            (None, Some(_)) => BlobNews::SoughtAt(object.timestamp("sought_at", &mut path)?),
            _ => {
                return Err(
                    path.error_at(Segment::Field("created_event_blob"), "give one of created_event_blob and sought_at")
                );
            }
        };
        Ok(BlobRecord { contract_id, news })
    }

    /// The record as ingest takes it.
    pub fn to_json(&self) -> serde_json::Value {
        match &self.news {
            BlobNews::Blob(blob) => {
                serde_json::json!({"contract_id": self.contract_id, "created_event_blob": blob.as_str()})
            }
            BlobNews::SoughtAt(at) => {
                serde_json::json!({"contract_id": self.contract_id, "sought_at": format!("{at}")})
            }
        }
    }
}

/// A contract waiting for a blob, as stored under `b contract_id`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sought {
    /// The transfer instruction or coin allocation whose choice contexts disclose it,
    /// for a locked coin.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
    /// When its blob was last asked for and none was disclosed; absent: never asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sought_at: Option<String>,
    /// For a transfer command, where its status entry is: the entry shows the contract
    /// with its blob after the contract is archived, so the contract waits for its blob
    /// until it is asked for once after that.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transfer_command: Option<CommandEntry>,
}

/// Where a transfer command's status entry is, and what a follower asks for it by.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandEntry {
    /// The transfer command's template.
    pub template_id: String,
    /// Its sender.
    pub sender: String,
    /// Its nonce.
    pub nonce: i64,
    /// Its creation time, in microseconds since the epoch.
    pub created_at: i64,
}

impl CommandEntry {
    /// The entry of `created`, a transfer command; `None` when its payload lacks a
    /// `sender` or a `nonce` (it has no status entry).
    fn of(created: &CreatedEvent) -> Option<Self> {
        Some(CommandEntry {
            template_id: created.template_id.as_str().into(),
            sender: created.create_arguments.lookup(&["sender"])?.as_party()?.into(),
            nonce: created.create_arguments.lookup(&["nonce"])?.as_int64()?,
            created_at: created.created_at.micros(),
        })
    }
}

impl Sought {
    /// The entry stored for `contract_id` as `bytes`; one that does not read is an
    /// internal error naming the contract.
    pub fn decode(contract_id: &str, bytes: &[u8]) -> Result<Self, Error> {
        serde_json::from_slice(bytes)
            .map_err(|e| Error::Internal(format!("contract {contract_id}: an unreadable sought-blob entry: {e}")))
    }

    fn encode(&self) -> Vec<u8> {
        // Two optional strings: serializing cannot fail.
        serde_json::to_vec(self).unwrap_or_else(|_| b"{}".to_vec())
    }
}

/// The key of a contract waiting for a blob.
pub fn sought_key(contract_id: &str) -> Vec<u8> {
    Key::new(keys::BLOB_SOUGHT).str(contract_id).into_bytes()
}

/// The templates whose contracts a read renders with their blob, as the configured
/// names spell them.
#[derive(Debug, Clone, Copy)]
pub struct SoughtBlobs<'n> {
    names: &'n TemplateNames,
    scan: &'n ScanTemplates,
}

impl<'n> SoughtBlobs<'n> {
    /// The entries of the templates `names` and `scan` name.
    pub fn new(names: &'n TemplateNames, scan: &'n ScanTemplates) -> Self {
        SoughtBlobs { names, scan }
    }

    /// Whether a read renders a contract of `qualified_name` with its blob: the kinds
    /// of [`crate::state::scan`] but those no read shows as a contract (an ANS entry is
    /// answered without its blob, summarizing rounds and coin allocations are read only
    /// for what they hold), closed rounds, price votes, the external party config
    /// state and transfer commands (their status entries).
    fn rendered(&self, qualified_name: &str) -> bool {
        let shown = |kind| !matches!(kind, Kind::AnsEntry | Kind::SummarizingRound | Kind::CoinAllocation);
        self.scan.kind(qualified_name).is_some_and(shown)
            || [&self.names.closed_round, &self.names.price_vote, &self.names.external_party_config]
                .iter()
                .any(|name| *name == qualified_name)
            || qualified_name == self.scan.transfer_command()
    }

    /// Whether contracts of `qualified_name` hold a locked coin whose blob their choice
    /// contexts disclose.
    fn locks(&self, qualified_name: &str) -> bool {
        qualified_name == self.names.transfer_instruction
            || self.scan.kind(qualified_name) == Some(Kind::CoinAllocation)
    }

    /// The contracts `update` creates without a blob that may be waiting for one, each
    /// with its entry but for `sought_at`: the contract whose contexts disclose it (a
    /// locked coin's), or where its status entry is (a transfer command's).
    fn candidates<'u>(&'u self, update: &'u Update) -> impl Iterator<Item = (&'u str, Sought)> + 'u {
        update.created_events().into_iter().flat_map(move |created| {
            let name = created.template_id.qualified_name();
            let own = (created.created_event_blob.is_none() && self.rendered(name)).then(|| {
                let transfer_command =
                    (name == self.scan.transfer_command()).then(|| CommandEntry::of(created)).flatten();
                (created.contract_id.as_str(), Sought { transfer_command, ..Sought::default() })
            });
            let locked = self
                .locks(name)
                .then(|| locked_coin(created, &self.names.locked_coin_field))
                .flatten()
                .map(|coin| (coin, Sought { via: Some(created.contract_id.clone()), ..Sought::default() }));
            own.into_iter().chain(locked)
        })
    }
}

/// The locked coin `created` (a transfer instruction or coin allocation) names.
fn locked_coin<'e>(created: &'e CreatedEvent, field: &str) -> Option<&'e str> {
    created.create_arguments.lookup(&[field]).and_then(|value| value.as_contract_id())
}

impl Projection for SoughtBlobs<'_> {
    /// The records and entries of the contracts that may be waiting.
    fn keys_read<'a>(&'a self, update: &'a Update) -> impl Iterator<Item = Vec<u8>> + 'a {
        self.candidates(update).flat_map(|(id, _)| [contracts::contract_key(id), sought_key(id)])
    }

    async fn apply<S: Store>(
        &self,
        stage: &mut Stage<'_, S>,
        update: &Update,
        archived: &Archived<'_>,
    ) -> Result<(), Error> {
        for (contract_id, sought) in self.candidates(update) {
            let key = sought_key(contract_id);
            if stage.get(&key).await?.is_some() {
                continue;
            }
            // Held without a blob, whatever this update sent (a contract created
            // before keeps what it was created with). A transfer command archived by
            // this same update still shows in its status entry.
            let held = match archived.creation(contract_id) {
                Some(creation) => Some(creation.blob.is_none()),
                None => match stage.get(&contracts::contract_key(contract_id)).await? {
                    Some(bytes) => contracts::decode(contract_id, &bytes)?.creation().map(|c| c.blob.is_none()),
                    None => None,
                },
            };
            if held == Some(true) && (archived.creation(contract_id).is_none() || sought.transfer_command.is_some()) {
                stage.put(key, sought.encode());
            }
        }
        // An archived contract held without a blob is waiting no more, but for a
        // transfer command, whose status entry still shows it.
        let events = update.as_transaction().into_iter().flat_map(|tx| tx.events_by_id.values());
        for event in events {
            if let Event::Exercised(exercised) = event
                && exercised.consuming
                && let Some(creation) = archived.creation(&exercised.contract_id)
                && creation.blob.is_none()
                && let name = creation.template_id.qualified_name()
                && (self.rendered(name) || name == self.names.locked_coin)
                && name != self.scan.transfer_command()
            {
                stage.delete(sought_key(&exercised.contract_id));
            }
        }
        Ok(())
    }
}

/// What applying a [`BlobRecord`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlobOutcome {
    /// The contract took its blob, or the time it was sought was noted.
    Applied,
    /// Nothing changed: the contract holds that blob, or is not held or not active, or
    /// (a note) is not waiting for one.
    Unchanged,
}

/// The keys applying `record` reads.
pub fn keys_read(record: &BlobRecord) -> [Vec<u8>; 2] {
    [contracts::contract_key(&record.contract_id), sought_key(&record.contract_id)]
}

/// Applies `record` (module docs): the contract's record and every rendering of it
/// that `names` and `scan` say derived state keeps.
pub async fn apply<S: Store>(
    stage: &mut Stage<'_, S>,
    record: &BlobRecord,
    names: &TemplateNames,
    scan: &ScanTemplates,
) -> Result<BlobOutcome, Error> {
    let id = record.contract_id.as_str();
    let key = sought_key(id);
    let sought = match stage.get(&key).await? {
        Some(bytes) => Some(Sought::decode(id, &bytes)?),
        None => None,
    };
    let held = match stage.get(&contracts::contract_key(id)).await? {
        Some(bytes) => Some(contracts::decode(id, &bytes)?),
        None => None,
    };
    let blob = match &record.news {
        BlobNews::SoughtAt(at) => {
            let Some(sought) = sought else { return Ok(BlobOutcome::Unchanged) };
            // Asked for once after it was archived (a transfer command's status
            // entry), it waits no more.
            match held {
                Some(ContractRecord::Created(_)) => {
                    stage.put(key, Sought { sought_at: Some(format!("{at}")), ..sought }.encode());
                }
                _ => stage.delete(key),
            }
            return Ok(BlobOutcome::Applied);
        }
        BlobNews::Blob(blob) => blob,
    };
    let command = sought.and_then(|sought| sought.transfer_command);
    let status_entry = async |stage: &mut Stage<'_, S>| match &command {
        Some(c) => {
            crate::state::scan::transfer_commands::attach_blob(stage, &c.sender, c.nonce, c.created_at, id, blob).await
        }
        None => Ok(false),
    };
    let Some(ContractRecord::Created(mut creation)) = held else {
        // Archived, or not held: only a transfer command's status entry shows it.
        if !status_entry(stage).await? {
            return Ok(BlobOutcome::Unchanged);
        }
        stage.delete(key);
        return Ok(BlobOutcome::Applied);
    };
    match &creation.blob {
        Some(held) if held == blob => return Ok(BlobOutcome::Unchanged),
        Some(_) => {
            return Err(Error::Conflict(format!(
                "contract {id} is held with another created-event blob than the one given"
            )));
        }
        None => {}
    }
    creation.blob = Some(blob.clone());
    let name = String::from(creation.template_id.qualified_name());
    stage.put(contracts::contract_key(id), contracts::encode(id, &ContractRecord::Created(creation))?);
    stage.delete(key);
    // Every rendering of the contract, again from its record.
    status_entry(stage).await?;
    let none = Archived::default();
    if let Some(kind) = scan.kind(&name) {
        crate::state::scan::sync(stage, kind, id, &none).await?;
    }
    if name == names.closed_round {
        crate::state::rounds::sync_closed_round(stage, id, &none).await?;
    }
    if name == names.price_vote {
        crate::state::votes::sync_vote(stage, id, &none).await?;
    }
    Ok(BlobOutcome::Applied)
}

/// A page of the contracts waiting for a blob, after `after`, at most `limit`, in
/// contract id order: each with its entry.
pub async fn sought_page<S: Store>(store: &S, after: Option<&str>, limit: u32) -> Result<Vec<(String, Sought)>, Error> {
    use crate::storage::store::{Scan, key_after, prefix_end};
    let prefix = [keys::BLOB_SOUGHT];
    let start = match after {
        Some(id) => key_after(&sought_key(id)),
        None => prefix.to_vec(),
    };
    let scan = Scan { start, end: prefix_end(&prefix), limit, reverse: false };
    store
        .scan(&scan)
        .await?
        .iter()
        .map(|(key, value)| {
            let (id, _) = key
                .get(1..)
                .and_then(keys::decode_str)
                .ok_or_else(|| Error::Internal("an unreadable sought-blob key".into()))?;
            let sought = Sought::decode(&id, value)?;
            Ok((id, sought))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use alloc::string::ToString;

    use super::*;

    fn parse(text: &str) -> Result<BlobRecord, PathError> {
        BlobRecord::parse(&Json::parse(text.as_bytes()).expect("JSON"))
    }

    #[test]
    fn a_blob_record_holds_a_blob_or_the_time_it_was_sought_and_never_both() {
        let blob = parse(r#"{"contract_id": "c1", "created_event_blob": "AAEC"}"#).expect("a blob");
        assert_eq!(blob.news, BlobNews::Blob(Blob::parse("AAEC").unwrap()));
        assert_eq!(parse(&blob.to_json().to_string()).expect("its own form"), blob);
        let sought = parse(r#"{"contract_id": "c1", "sought_at": "2024-01-01T00:00:00Z"}"#).expect("a note");
        assert_eq!(parse(&sought.to_json().to_string()).expect("its own form"), sought);
        for (text, problem) in [
            (r#"{"contract_id": "c1"}"#, "give one of"),
            (
                r#"{"contract_id": "c1", "created_event_blob": "AAEC", "sought_at": "2024-01-01T00:00:00Z"}"#,
                "give one of",
            ),
            (r#"{"contract_id": "c1", "created_event_blob": ""}"#, "not empty"),
            (r#"{"contract_id": "c1", "created_event_blob": "A"}"#, "base64"),
            (r#"{"contract_id": "c1", "blob": "AAEC"}"#, "blob"),
        ] {
            let error = parse(text).expect_err(text).to_string();
            assert!(error.contains(problem), "{text}: {error}");
        }
    }

    #[test]
    fn a_sought_entry_writes_only_what_it_holds() {
        assert_eq!(Sought::default().encode(), b"{}");
        let entry = Sought {
            via: Some("i1".into()),
            sought_at: Some("2024-01-01T00:00:00.000000Z".into()),
            transfer_command: None,
        };
        assert_eq!(Sought::decode("c", &entry.encode()).unwrap(), entry);
        assert!(sought_key("a") < sought_key("b"));
    }
}
