//! The active contract set, derived at ingest.
//!
//! Every contract the node has seen has a [`ContractRecord`] under `C contract_id`:
//! created (with its compact payload, blob, creation time and the synchronizer it was
//! created on) and possibly archived. An archived contract's record becomes a
//! tombstone, `{"archived":true}` and nothing else, so that a later import never
//! brings it back while neither its payload nor its template is kept: nothing reads
//! them once it is archived, and most of a long history's contracts are. (Tombstones
//! written before kept the template id; they read the same.) Active contracts are also
//! indexed by qualified template name (`T name contract_id`).
//!
//! Where a contract is ([`location`]) comes from its reassignment events (`R
//! contract_id counter kind`): with c the highest reassignment counter held, the
//! contract is on the target of the assignment with counter c if it is held, and in
//! flight if only the unassignment is; with no reassignment events it is where it was
//! created. One reverse scan of one key answers this, whatever order the events came in.

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::model::error::Error;
use crate::model::error::StoreError;
use crate::model::update::CreatedEvent;
use crate::model::value::Encoding;
use crate::storage::keys::{self, Key};
use crate::storage::stage::Stage;
use crate::storage::store::{Scan, Store};

/// What the node knows of a contract.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContractRecord {
    /// The full template id, `<package-id>:<Module.Path>:<Entity>`; empty in a
    /// tombstone.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub template_id: String,
    /// The creation, once seen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created: Option<Creation>,
    /// Whether a consuming exercise archived it.
    #[serde(default)]
    pub archived: bool,
}

/// A contract's creation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Creation {
    /// The create arguments in `compact_json`.
    pub payload: serde_json::Value,
    /// Ledger effective time of the creating transaction (RFC 3339).
    pub created_at: String,
    /// The created event blob as ingested; empty when none was given.
    pub blob: String,
    /// The synchronizer the creating transaction (or first assignment) was on.
    pub synchronizer_id: String,
    /// Whether it came from an import update.
    pub import: bool,
    /// The package name of the created event; empty for records stored before it was kept.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub package_name: String,
}

impl ContractRecord {
    /// Whether the contract is active (created and not archived).
    pub fn is_active(&self) -> bool {
        self.created.is_some() && !self.archived
    }
}

/// The key of a contract's record.
pub fn contract_key(contract_id: &str) -> Vec<u8> {
    Key::new(keys::CONTRACT).str(contract_id).into_bytes()
}

/// The key of an active contract in the template index.
pub fn template_key(qualified_name: &str, contract_id: &str) -> Vec<u8> {
    Key::new(keys::TEMPLATE).str(qualified_name).str(contract_id).into_bytes()
}

/// The prefix of every active contract of a template.
pub fn template_prefix(qualified_name: &str) -> Vec<u8> {
    Key::new(keys::TEMPLATE).str(qualified_name).into_bytes()
}

/// The key of a reassignment event of a contract.
pub fn reassignment_key(contract_id: &str, counter: i64, assignment: bool) -> Vec<u8> {
    Key::new(keys::REASSIGNMENT).str(contract_id).i64(counter).byte(u8::from(assignment)).into_bytes()
}

/// A stored record of `contract_id`, as a [`ContractRecord`] or as a [`Stored`] one.
fn decode<'a, T: Deserialize<'a>>(contract_id: &str, bytes: &'a [u8]) -> Result<T, StoreError> {
    serde_json::from_slice(bytes)
        .map_err(|e| StoreError::new(alloc::format!("contract {contract_id}: unreadable record: {e}")))
}

/// A record as stored; a record that does not serialize is an error for the batch,
/// never an empty record in the store.
fn encode(contract_id: &str, record: &impl Serialize) -> Result<Vec<u8>, Error> {
    crate::model::json::write::to_vec(record)
        .map_err(|e| Error::Internal(alloc::format!("contract {contract_id}: writing its record: {e}")))
}

/// A contract record as ingest writes it: the fields of [`ContractRecord`], in its
/// order, with a payload that is written without being built as a JSON tree first
/// (when created) or read as JSON text without being parsed (by an archive).
/// Unknown fields are refused rather than ignored, so that a field added to
/// [`ContractRecord`] but not here is an error.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Written<'a, P> {
    #[serde(borrow, default, skip_serializing_if = "is_empty")]
    template_id: Cow<'a, str>,
    #[serde(default = "none", skip_serializing_if = "Option::is_none")]
    created: Option<WrittenCreation<'a, P>>,
    #[serde(default)]
    archived: bool,
}

/// Whether `text` is empty: a template id a tombstone leaves out.
#[expect(clippy::ptr_arg, reason = "serde's skip_serializing_if passes the field itself")]
fn is_empty(text: &Cow<'_, str>) -> bool {
    text.is_empty()
}

/// `None`, as a field default that asks nothing of `P` (`#[serde(default)]` would
/// require `P: Default`).
fn none<T>() -> Option<T> {
    None
}

/// The fields of [`Creation`], in its order.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct WrittenCreation<'a, P> {
    payload: P,
    #[serde(borrow)]
    created_at: Cow<'a, str>,
    #[serde(borrow)]
    blob: Cow<'a, str>,
    #[serde(borrow)]
    synchronizer_id: Cow<'a, str>,
    import: bool,
    #[serde(borrow, default, skip_serializing_if = "str::is_empty")]
    package_name: Cow<'a, str>,
}

/// A stored record whose payload is left as JSON text: enough to archive it.
type Stored<'a> = Written<'a, &'a RawValue>;

/// Reads a contract's record.
pub async fn read<S: Store>(store: &S, contract_id: &str) -> Result<Option<ContractRecord>, StoreError> {
    match store.get(&contract_key(contract_id)).await? {
        Some(bytes) => decode(contract_id, &bytes).map(Some),
        None => Ok(None),
    }
}

/// Records a created event (from a transaction on `synchronizer_id`, or an
/// assignment to it), whose record, if already rendered, is `prepared`
/// ([`creation_record`]). A contract already created or archived is left as it is.
pub async fn create<S: Store>(
    stage: &mut Stage<'_, S>,
    event: &CreatedEvent,
    synchronizer_id: &str,
    import: bool,
    prepared: Option<Vec<u8>>,
) -> Result<(), Error> {
    let key = contract_key(&event.contract_id);
    if let Some(bytes) = stage.get(&key).await? {
        let existing: Stored<'_> = decode(&event.contract_id, &bytes)?;
        if existing.created.is_some() || existing.archived {
            return Ok(());
        }
    }
    let record = match prepared {
        Some(record) => record,
        None => creation_record(event, synchronizer_id, import)?,
    };
    stage.put(key, record);
    // A contract is in the template index only while its record says it is created,
    // so the store does not hold this key: archived in this same batch, it is not
    // written at all.
    stage.put_new(template_key(event.template_id.qualified_name(), &event.contract_id), Vec::new());
    Ok(())
}

/// The stored record of a contract as `event` creates it, on `synchronizer_id`. It
/// needs no store, so ingest renders it with the update, before the batch's turn at
/// the store ([`crate::state::ledger::StoredUpdate`]).
pub fn creation_record(event: &CreatedEvent, synchronizer_id: &str, import: bool) -> Result<Vec<u8>, Error> {
    let created_at = crate::model::json::short::ShortText::short_text(&event.created_at);
    encode(
        &event.contract_id,
        &Written {
            template_id: event.template_id.as_str().into(),
            created: Some(WrittenCreation {
                payload: event.create_arguments.encoded(Encoding::CompactJson),
                created_at: created_at.as_str().into(),
                blob: event.created_event_blob.as_ref().map_or("", |b| b.as_str()).into(),
                synchronizer_id: synchronizer_id.into(),
                import,
                package_name: event.package_name.as_str().into(),
            }),
            archived: false,
        },
    )
}

/// Records a consuming exercise on `contract_id` of `template_id`: its record becomes
/// a tombstone (archived, without creation or template id). The record it replaces, if
/// that held the contract's creation, is returned: derived state that lists the
/// contract finds its entry from it ([`crate::state`]).
pub async fn archive<S: Store>(
    stage: &mut Stage<'_, S>,
    contract_id: &str,
    template_id: &crate::model::update::TemplateId,
) -> Result<Option<Vec<u8>>, StoreError> {
    let key = contract_key(contract_id);
    let bytes = stage.get(&key).await?;
    let (held_template, created) = match &bytes {
        Some(bytes) => {
            let record = decode::<Stored<'_>>(contract_id, bytes)?;
            if record.archived {
                return Ok(None);
            }
            (Some(String::from(record.template_id)), record.created.is_some())
        }
        None => (None, false),
    };
    stage.delete(template_key(template_id.qualified_name(), contract_id));
    let held_name = held_template.as_deref().and_then(|t| crate::model::update::TemplateId::parse(t).ok());
    if let Some(held) = &held_name
        && held.qualified_name() != template_id.qualified_name()
    {
        stage.delete(template_key(held.qualified_name(), contract_id));
    }
    stage.put(key, tombstone());
    Ok(bytes.filter(|_| created))
}

/// The record of an archived contract, as stored: a [`ContractRecord`] archived,
/// without creation or template id.
pub const TOMBSTONE: &[u8] = br#"{"archived":true}"#;

/// The record of an archived contract.
fn tombstone() -> Vec<u8> {
    TOMBSTONE.to_vec()
}

/// Where a contract is now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// Assigned to this synchronizer.
    On(String),
    /// Unassigned and not yet assigned: being reassigned.
    InFlight,
}

/// Where `record` (of `contract_id`) is, from its reassignment events: one store read.
pub async fn location<S: Store>(store: &S, contract_id: &str, record: &ContractRecord) -> Result<Location, StoreError> {
    let prefix = Key::new(keys::REASSIGNMENT).str(contract_id).into_bytes();
    let latest = store.scan(&Scan::prefix(&prefix, 1).reversed()).await?;
    match latest.into_iter().next() {
        Some((key, synchronizer)) => {
            if key.last() == Some(&1) {
                let synchronizer = String::from_utf8(synchronizer)
                    .map_err(|_| StoreError::new(alloc::format!("contract {contract_id}: unreadable reassignment")))?;
                Ok(Location::On(synchronizer))
            } else {
                Ok(Location::InFlight)
            }
        }
        None => Ok(Location::On(record.created.as_ref().map(|c| c.synchronizer_id.clone()).unwrap_or_default())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::update::{Event, Update};
    use crate::storage::exec::block_on;
    use crate::storage::store::MemoryStore;

    /// A created event whose payload and strings need escaping.
    fn created() -> CreatedEvent {
        let update = Update::parse(&crate::model::json::Json::from(&serde_json::json!({
            "update_id": "u", "migration_id": 0, "workflow_id": "", "record_time": "2024-01-01T00:00:00Z",
            "synchronizer_id": "s", "effective_at": "2024-01-01T00:00:00Z", "root_event_ids": ["u:0"],
            "events_by_id": {"u:0": {
                "event_type": "created_event", "event_id": "u:0", "contract_id": "c\"1", "template_id": "p:M:T",
                "package_name": "p", "created_at": "2024-01-01T00:00:00.5Z", "signatories": [], "observers": [],
                "created_event_blob": "AAEC",
                "create_arguments": {"record": {"fields": [
                    {"label": "note", "value": {"text": "a \"quoted\" line\n"}},
                    {"label": "n", "value": {"int64": "7"}}
                ]}}
            }}
        })))
        .expect("a valid transaction");
        let Update::Transaction(tx) = update else { panic!("a transaction") };
        match tx.events_by_id.into_values().next() {
            Some(Event::Created(created)) => created,
            other => panic!("{other:?}"),
        }
    }

    fn stored(store: &MemoryStore, id: &str) -> ContractRecord {
        block_on(read(store, id)).expect("readable").expect("present")
    }

    #[test]
    fn a_created_record_reads_back_and_archiving_keeps_its_payload() {
        let store = MemoryStore::new();
        let event = created();
        let mut stage = Stage::new(&store);
        block_on(create(&mut stage, &event, "s", true, None)).expect("created");
        let batch = stage.into_batch();
        // A record rendered ahead (as ingest does) is the record rendered here.
        let mut ahead = Stage::new(&store);
        block_on(create(&mut ahead, &event, "s", true, Some(creation_record(&event, "s", true).unwrap())))
            .expect("created");
        assert_eq!(ahead.into_batch(), batch);
        block_on(store.write(&batch)).expect("written");
        let record = stored(&store, &event.contract_id);
        let creation = record.created.clone().expect("a creation");
        assert_eq!(creation.payload, event.create_arguments.render(Encoding::CompactJson));
        assert_eq!(creation.payload["note"], "a \"quoted\" line\n");
        assert_eq!(creation.created_at, "2024-01-01T00:00:00.500000Z");
        assert_eq!((creation.blob.as_str(), creation.synchronizer_id.as_str(), creation.import), ("AAEC", "s", true));
        assert_eq!(creation.package_name, "p");
        assert!(record.is_active());
        let index_key = template_key(event.template_id.qualified_name(), &event.contract_id);
        assert_eq!(block_on(store.get(&index_key)).expect("readable"), Some(Vec::new()), "indexed as active");

        let held = block_on(store.get(&contract_key(&event.contract_id))).expect("readable");
        let mut stage = Stage::new(&store);
        let replaced = block_on(archive(&mut stage, &event.contract_id, &event.template_id)).expect("archived");
        assert_eq!(replaced, held, "the record with the creation is handed back");
        block_on(store.write(&stage.into_batch())).expect("written");
        let mut again = Stage::new(&store);
        let replaced = block_on(archive(&mut again, &event.contract_id, &event.template_id)).expect("archived");
        assert_eq!((replaced, again.is_empty()), (None, true), "archiving twice changes nothing");
        let archived = stored(&store, &event.contract_id);
        assert!(archived.archived);
        assert_eq!(archived.created, None, "a tombstone keeps no creation");
        assert_eq!(archived.template_id, "", "nor a template");
        let tombstone = block_on(store.get(&contract_key(&event.contract_id))).expect("readable");
        assert_eq!(tombstone.as_deref(), Some(TOMBSTONE), "the issue 23 tombstone");
        let written: Stored<'_> = Written { template_id: "".into(), created: None, archived: true };
        assert_eq!(encode("c", &written).unwrap(), TOMBSTONE, "the tombstone is a record as ingest writes one");
        assert_eq!(block_on(store.get(&index_key)).expect("readable"), None, "no longer indexed as active");
    }

    #[test]
    fn a_record_is_written_back_byte_for_byte_with_every_field() {
        let record = ContractRecord {
            template_id: "p:M:T".into(),
            created: Some(Creation {
                payload: serde_json::json!({"b": [1, {"c": "d\"e"}], "a": null}),
                created_at: "2024-01-01T00:00:00.000000Z".into(),
                blob: "AAEC".into(),
                synchronizer_id: "s".into(),
                import: true,
                package_name: "p".into(),
            }),
            archived: true,
        };
        let bytes = serde_json::to_vec(&record).expect("a record");
        let stored: Stored<'_> = decode("c", &bytes).expect("every field is known");
        assert_eq!(encode("c", &stored).unwrap(), bytes);
        let mut extra: serde_json::Value = serde_json::from_slice(&bytes).expect("JSON");
        extra["created"]["colour"] = "red".into();
        let extra = serde_json::to_vec(&extra).expect("JSON");
        assert!(decode::<Stored<'_>>("c", &extra).is_err(), "an unknown field is refused, not dropped");
    }

    #[test]
    fn an_archive_before_the_create_leaves_a_tombstone_that_the_create_keeps() {
        let store = MemoryStore::new();
        let event = created();
        for step in 0..2 {
            let mut stage = Stage::new(&store);
            if step == 0 {
                let replaced = block_on(archive(&mut stage, &event.contract_id, &event.template_id)).expect("archived");
                assert_eq!(replaced, None, "no creation was held");
            } else {
                block_on(create(&mut stage, &event, "s", false, None)).expect("created");
            }
            block_on(store.write(&stage.into_batch())).expect("written");
        }
        let record = stored(&store, &event.contract_id);
        assert_eq!(record, ContractRecord { template_id: String::new(), created: None, archived: true });
    }

    #[test]
    fn a_tombstone_that_kept_its_template_still_keeps_the_contract_archived() {
        let store = MemoryStore::new();
        let event = created();
        let old = br#"{"template_id":"p:M:T","archived":true}"#.to_vec();
        let mut batch = crate::storage::store::WriteBatch::new();
        batch.put(contract_key(&event.contract_id), old.clone());
        block_on(store.write(&batch)).expect("written");
        let mut stage = Stage::new(&store);
        block_on(create(&mut stage, &event, "s", false, None)).expect("created");
        let replaced = block_on(archive(&mut stage, &event.contract_id, &event.template_id)).expect("archived");
        assert_eq!((replaced, stage.is_empty()), (None, true), "neither the create nor the archive writes");
        assert!(!stored(&store, &event.contract_id).is_active());
    }
}
