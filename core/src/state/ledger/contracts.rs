//! The active contract set, derived at ingest.
//!
//! Every contract the node has seen has a [`ContractRecord`] under `C contract_id`:
//! created ([`Creation`]: its template, compact payload, creation time, blob and the
//! synchronizer it was created on) or archived. An archived contract's record is a
//! tombstone, `{"archived":true}` and nothing else, so that a later import never
//! brings it back while neither its payload nor its template is kept: nothing reads
//! them once it is archived, and most of a long history's contracts are. Active
//! contracts are also indexed by qualified template name (`T name contract_id`).
//!
//! A record is stored as one JSON object, written by one writer
//! ([`ContractRecord::write`]) and read by one reader generic over the source
//! ([`ContractRecord::read`]): a created contract's fields flat, in the order of
//! [`Creation::FIELDS`] (`blob` left out when the event had none), or the tombstone.
//! Unknown fields are refused. A stored record that does not read is an internal error
//! that names the contract ([`decode`]), never a default.
//!
//! Where a contract is ([`location`]) comes from its reassignment events, folded at
//! ingest into one record per reassigned contract (`R contract_id`, [`Reassigned`]):
//! with c the highest reassignment counter held, the contract is on the target of the
//! assignment with counter c if it is held, and in flight if only the unassignment is;
//! with no reassignment events it is where it was created. The record keeps c, whether
//! its assignment is held, and that assignment's target, so it is the same whatever
//! order the events came in, and one read of one key answers where the contract is (a
//! reader of many contracts asks for their records and these keys in one `get_many`).

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde::Serialize;

use crate::model::error::Error;
use crate::model::error::StoreError;
use crate::model::json::Json;
use crate::model::json::scan::Cursor;
use crate::model::json::short::ShortText;
use crate::model::json::write::write_str;
use crate::model::time::Timestamp;
use crate::model::update::{Blob, CreatedEvent, TemplateId};
use crate::model::value::path::JsonPath;
use crate::model::value::source::{Tree, bounded_id, id, timestamp};
use crate::model::value::{Encoding, Source};
use crate::storage::keys::{self, Key};
use crate::storage::stage::Stage;
use crate::storage::store::Store;

/// What the node knows of a contract.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ContractRecord {
    /// Created, and not archived as far as the node knows.
    Created(Creation),
    /// Archived by a consuming exercise (a tombstone: nothing else is kept).
    Archived,
}

/// A contract's creation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Creation {
    /// The template of the contract.
    pub template_id: TemplateId,
    /// The create arguments in `compact_json`.
    pub payload: serde_json::Value,
    /// Ledger effective time of the creating transaction.
    pub created_at: Timestamp,
    /// The created event blob as ingested, if the event carried one.
    pub blob: Option<Blob>,
    /// The synchronizer the creating transaction (or first assignment) was on.
    pub synchronizer_id: String,
    /// Whether it came from an import update.
    pub import: bool,
    /// The package name of the created event.
    pub package_name: String,
}

impl ContractRecord {
    /// The fields of a tombstone.
    const TOMBSTONE_FIELDS: [&'static str; 1] = ["archived"];

    /// Whether the contract is active (created and not archived).
    pub fn is_active(&self) -> bool {
        matches!(self, ContractRecord::Created(_))
    }

    /// Its creation, while it is active.
    pub fn creation(&self) -> Option<&Creation> {
        match self {
            ContractRecord::Created(creation) => Some(creation),
            ContractRecord::Archived => None,
        }
    }

    /// Reads a stored record: a tombstone (it has `archived`) or a creation.
    pub fn read<'s, S: Source<'s>>(source: &mut S) -> Result<Self, S::Error> {
        let mut object = source.object()?;
        let record = match source.either(&mut object, "archived", "template_id") {
            (true, _) => {
                source.only(&mut object, &Self::TOMBSTONE_FIELDS)?;
                if !source.field(&mut object, "archived", S::boolean)? {
                    return Err(source.error_at("archived", || "expected true: a tombstone is {\"archived\":true}"));
                }
                ContractRecord::Archived
            }
            (false, _) => {
                source.only(&mut object, &Creation::FIELDS)?;
                ContractRecord::Created(Creation::read_fields(source, &mut object)?)
            }
        };
        source.close(object)?;
        Ok(record)
    }

    /// The record as stored.
    pub fn write(&self) -> Result<Vec<u8>, serde_json::Error> {
        match self {
            ContractRecord::Archived => Ok(TOMBSTONE.to_vec()),
            ContractRecord::Created(c) => write_creation(
                &c.template_id,
                &c.payload,
                c.created_at,
                c.blob.as_ref(),
                &c.synchronizer_id,
                c.import,
                &c.package_name,
            ),
        }
    }
}

impl Creation {
    /// The fields of a created contract's record, in the order they are written.
    pub const FIELDS: [&'static str; 7] =
        ["template_id", "payload", "created_at", "blob", "synchronizer_id", "import", "package_name"];

    /// The fields of an object whose fields are known to be [`Creation::FIELDS`].
    fn read_fields<'s, S: Source<'s>>(source: &mut S, object: &mut S::Object) -> Result<Self, S::Error> {
        Ok(Creation {
            template_id: source.field(object, "template_id", TemplateId::read)?,
            payload: source.field(object, "payload", S::json)?,
            created_at: source.field(object, "created_at", timestamp)?,
            blob: source.optional_field(object, "blob", Blob::read)?,
            synchronizer_id: source.field(object, "synchronizer_id", bounded_id)?.into(),
            import: source.field(object, "import", S::boolean)?,
            package_name: source.field(object, "package_name", id)?.into(),
        })
    }
}

/// The one writer of a created contract's record (a held [`Creation`], or a created
/// event as ingest stores it): its fields in the order of [`Creation::FIELDS`],
/// `payload` written in place, without a tree built for it first.
fn write_creation(
    template_id: &TemplateId,
    payload: &impl Serialize,
    created_at: Timestamp,
    blob: Option<&Blob>,
    synchronizer_id: &str,
    import: bool,
    package_name: &str,
) -> Result<Vec<u8>, serde_json::Error> {
    let mut out = Vec::with_capacity(512);
    out.extend_from_slice(br#"{"template_id":"#);
    write_str(&mut out, template_id.as_str());
    out.extend_from_slice(br#","payload":"#);
    let at = out.len();
    if crate::model::json::write::try_write(&mut out, payload).is_err() {
        // A shape the node's writer leaves to `serde_json` (such as a float).
        out.truncate(at);
        out.extend_from_slice(&serde_json::to_vec(payload)?);
    }
    out.extend_from_slice(br#","created_at":"#);
    write_str(&mut out, created_at.short_text().as_str());
    if let Some(blob) = blob {
        out.extend_from_slice(br#","blob":"#);
        write_str(&mut out, blob.as_str());
    }
    out.extend_from_slice(br#","synchronizer_id":"#);
    write_str(&mut out, synchronizer_id);
    out.extend_from_slice(if import { br#","import":true"# } else { br#","import":false"# });
    out.extend_from_slice(br#","package_name":"#);
    write_str(&mut out, package_name);
    out.push(b'}');
    Ok(out)
}

/// The stored record of `contract_id`, `bytes`: read by the cursor, and by the
/// document reader, which names the problem, when the cursor does not take it. A record
/// that does not read is an internal error naming the contract.
pub fn decode(contract_id: &str, bytes: &[u8]) -> Result<ContractRecord, Error> {
    let unreadable = |problem: &dyn core::fmt::Display| {
        Error::Internal(format!("contract {contract_id}: unreadable stored record: {problem}"))
    };
    let text = core::str::from_utf8(bytes).map_err(|e| unreadable(&e))?;
    let mut cursor = Cursor::new(text);
    if let Ok(record) = ContractRecord::read(&mut cursor)
        && cursor.at_end()
    {
        return Ok(record);
    }
    let json = Json::parse(bytes).map_err(|e| unreadable(&e))?;
    ContractRecord::read(&mut Tree::new(&json, &mut JsonPath::new())).map_err(|e| unreadable(&e))
}

/// `record` of `contract_id` as stored; a record that does not serialize is an error
/// for the batch, never an empty record in the store.
pub fn encode(contract_id: &str, record: &ContractRecord) -> Result<Vec<u8>, Error> {
    record.write().map_err(|e| Error::Internal(format!("contract {contract_id}: writing its record: {e}")))
}

/// The key of a contract's record.
pub fn contract_key(contract_id: &str) -> Vec<u8> {
    Key::new(keys::CONTRACT).str(contract_id).into_bytes()
}

/// The key of a contract's reassignments, folded ([`Reassigned`]).
pub fn reassignment_key(contract_id: &str) -> Vec<u8> {
    Key::new(keys::REASSIGNMENT).str(contract_id).into_bytes()
}

/// A contract's reassignment events held, folded into what decides where it is: the
/// highest reassignment counter, whether the assignment with that counter is held, and
/// its target synchronizer. Stored under [`reassignment_key`] as the counter (8 bytes,
/// big-endian), a byte (1: the assignment is held, 0: only the unassignment) and the
/// target synchronizer's id (empty while only the unassignment is held).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reassigned {
    /// The highest reassignment counter held.
    pub counter: i64,
    /// The target of the assignment with that counter, once it is held.
    pub assigned_to: Option<String>,
}

impl Reassigned {
    /// The record after one more event: an assignment to `target`, or an unassignment
    /// (`None`), with reassignment counter `counter`. Events come in any order; the
    /// highest counter wins, and at one counter the assignment wins.
    pub fn fold(held: Option<Reassigned>, counter: i64, target: Option<&str>) -> Reassigned {
        let event = Reassigned { counter, assigned_to: target.map(String::from) };
        match held {
            None => event,
            Some(held) if counter > held.counter => event,
            Some(held) if counter == held.counter && held.assigned_to.is_none() => event,
            Some(held) => held,
        }
    }

    /// The record as stored.
    pub fn encode(&self) -> Vec<u8> {
        let target = self.assigned_to.as_deref().unwrap_or("");
        let mut bytes = Vec::with_capacity(9 + target.len());
        bytes.extend_from_slice(&self.counter.to_be_bytes());
        bytes.push(u8::from(self.assigned_to.is_some()));
        bytes.extend_from_slice(target.as_bytes());
        bytes
    }

    /// The record stored for `contract_id` as `bytes`; one that does not read is an
    /// error naming the contract.
    pub fn decode(contract_id: &str, bytes: &[u8]) -> Result<Reassigned, StoreError> {
        let unreadable = || StoreError::new(format!("contract {contract_id}: an unreadable reassignment record"));
        let counter = bytes.get(..8).and_then(|b| <[u8; 8]>::try_from(b).ok()).ok_or_else(unreadable)?;
        let target = bytes.get(9..).and_then(|b| core::str::from_utf8(b).ok()).ok_or_else(unreadable)?;
        let assigned_to = match bytes.get(8) {
            Some(1) => Some(String::from(target)),
            Some(0) if target.is_empty() => None,
            _ => return Err(unreadable()),
        };
        Ok(Reassigned { counter: i64::from_be_bytes(counter), assigned_to })
    }
}

/// Reads a contract's record.
pub async fn read<S: Store>(store: &S, contract_id: &str) -> Result<Option<ContractRecord>, Error> {
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
        // Created or archived: either way it stays as it is, once it reads.
        decode(&event.contract_id, &bytes)?;
        return Ok(());
    }
    let record = match prepared {
        Some(record) => record,
        None => creation_record(event, synchronizer_id, import)?,
    };
    stage.put(key, record);
    Ok(())
}

/// The stored record of a contract as `event` creates it, on `synchronizer_id`: the
/// record of its [`Creation`], with the payload written straight from the event. It
/// needs no store, so ingest renders it with the update, before the batch's turn at
/// the store ([`crate::state::ledger::StoredUpdate`]).
pub fn creation_record(event: &CreatedEvent, synchronizer_id: &str, import: bool) -> Result<Vec<u8>, Error> {
    write_creation(
        &event.template_id,
        &event.create_arguments.encoded(Encoding::CompactJson),
        event.created_at,
        event.created_event_blob.as_ref(),
        synchronizer_id,
        import,
        &event.package_name,
    )
    .map_err(|e| Error::Internal(format!("contract {}: writing its record: {e}", event.contract_id)))
}

/// Records a consuming exercise on `contract_id`: its record becomes a tombstone. The
/// creation it replaces, if it held one, is returned: derived state that lists the
/// contract finds its entry from it ([`crate::state`]).
pub async fn archive<S: Store>(stage: &mut Stage<'_, S>, contract_id: &str) -> Result<Option<Creation>, Error> {
    let key = contract_key(contract_id);
    let held = match stage.get(&key).await? {
        Some(bytes) => match decode(contract_id, &bytes)? {
            ContractRecord::Archived => return Ok(None),
            ContractRecord::Created(creation) => Some(creation),
        },
        None => None,
    };
    stage.put(key, TOMBSTONE.to_vec());
    Ok(held)
}

/// The record of an archived contract, as stored: [`ContractRecord::Archived`].
pub const TOMBSTONE: &[u8] = br#"{"archived":true}"#;

/// Where a contract is now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// Assigned to this synchronizer.
    On(String),
    /// Unassigned and not yet assigned: being reassigned.
    InFlight,
}

/// Where `contract_id`, created as `creation`, is, from its reassignment events: one
/// store read.
pub async fn location<S: Store>(store: &S, contract_id: &str, creation: &Creation) -> Result<Location, StoreError> {
    location_from(store, contract_id, &creation.synchronizer_id).await
}

/// Where `contract_id`, created on (or first assigned to) `created_on`, is, from its
/// reassignment events: one store read.
pub async fn location_from<S: Store>(store: &S, contract_id: &str, created_on: &str) -> Result<Location, StoreError> {
    let held = store.get(&reassignment_key(contract_id)).await?;
    location_of(contract_id, created_on, held.as_deref())
}

/// Where `contract_id`, created on (or first assigned to) `created_on`, is, given what
/// its [`reassignment_key`] holds (`None`: it was never reassigned).
pub fn location_of(contract_id: &str, created_on: &str, reassigned: Option<&[u8]>) -> Result<Location, StoreError> {
    let Some(bytes) = reassigned else { return Ok(Location::On(created_on.into())) };
    Ok(match Reassigned::decode(contract_id, bytes)?.assigned_to {
        Some(synchronizer) => Location::On(synchronizer),
        None => Location::InFlight,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::update::{Event, Update};
    use crate::storage::exec::block_on;
    use crate::storage::store::MemoryStore;
    use proptest::prelude::*;

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

    fn put(store: &MemoryStore, contract_id: &str, bytes: &[u8]) {
        let mut batch = crate::storage::store::WriteBatch::new();
        batch.put(contract_key(contract_id), bytes.to_vec());
        block_on(store.write(&batch)).expect("written");
    }

    /// The record read by the document reader alone.
    fn strict(bytes: &[u8]) -> Result<ContractRecord, crate::model::value::PathError> {
        let json = Json::parse(bytes).expect("JSON");
        ContractRecord::read(&mut Tree::new(&json, &mut JsonPath::new()))
    }

    /// The record read by the cursor alone, if it takes it.
    fn fast(bytes: &[u8]) -> Option<ContractRecord> {
        let mut cursor = Cursor::new(core::str::from_utf8(bytes).expect("UTF-8"));
        ContractRecord::read(&mut cursor).ok().filter(|_| cursor.at_end())
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
        let creation = record.creation().expect("a creation").clone();
        assert_eq!(creation.payload, event.create_arguments.render(Encoding::CompactJson));
        assert_eq!(creation.payload["note"], "a \"quoted\" line\n");
        assert_eq!(creation.created_at, event.created_at);
        assert_eq!(creation.template_id, event.template_id);
        assert_eq!(creation.blob.as_ref().map(Blob::as_str), Some("AAEC"));
        assert_eq!((creation.synchronizer_id.as_str(), creation.import), ("s", true));
        assert_eq!(creation.package_name, "p");
        assert!(record.is_active());
        let held = block_on(store.get(&contract_key(&event.contract_id))).expect("readable");
        assert_eq!(held.as_deref(), Some(record.write().unwrap().as_slice()), "one writer for both");

        let mut stage = Stage::new(&store);
        let replaced = block_on(archive(&mut stage, &event.contract_id)).expect("archived");
        assert_eq!(replaced, Some(creation), "the creation is handed back");
        block_on(store.write(&stage.into_batch())).expect("written");
        let mut again = Stage::new(&store);
        let replaced = block_on(archive(&mut again, &event.contract_id)).expect("archived");
        assert_eq!((replaced, again.is_empty()), (None, true), "archiving twice changes nothing");
        assert_eq!(stored(&store, &event.contract_id), ContractRecord::Archived);
        let tombstone = block_on(store.get(&contract_key(&event.contract_id))).expect("readable");
        assert_eq!(tombstone.as_deref(), Some(TOMBSTONE), "the issue 23 tombstone");
        assert_eq!(ContractRecord::Archived.write().unwrap(), TOMBSTONE, "the tombstone is a record as written");
    }

    #[test]
    fn a_created_record_is_stored_flat_and_without_a_missing_blob() {
        let mut event = created();
        let bytes = creation_record(&event, "s", false).unwrap();
        let text = core::str::from_utf8(&bytes).unwrap();
        assert_eq!(
            text,
            r#"{"template_id":"p:M:T","payload":{"note":"a \"quoted\" line\n","n":"7"},"created_at":"2024-01-01T00:00:00.500000Z","blob":"AAEC","synchronizer_id":"s","import":false,"package_name":"p"}"#
        );
        event.created_event_blob = None;
        let bytes = creation_record(&event, "s", false).unwrap();
        assert!(!core::str::from_utf8(&bytes).unwrap().contains("blob"));
        assert_eq!(decode("c", &bytes).unwrap().creation().unwrap().blob, None);
    }

    #[test]
    fn an_archive_before_the_create_leaves_a_tombstone_that_the_create_keeps() {
        let store = MemoryStore::new();
        let event = created();
        for step in 0..2 {
            let mut stage = Stage::new(&store);
            if step == 0 {
                let replaced = block_on(archive(&mut stage, &event.contract_id)).expect("archived");
                assert_eq!(replaced, None, "no creation was held");
            } else {
                block_on(create(&mut stage, &event, "s", false, None)).expect("created");
            }
            block_on(store.write(&stage.into_batch())).expect("written");
        }
        assert_eq!(stored(&store, &event.contract_id), ContractRecord::Archived);
    }

    #[test]
    fn a_record_with_an_unknown_key_is_refused_by_the_reader() {
        let mut record: serde_json::Value =
            serde_json::from_slice(&creation_record(&created(), "s", false).unwrap()).unwrap();
        record["colour"] = "red".into();
        let bytes = serde_json::to_vec(&record).unwrap();
        assert_eq!(fast(&bytes), None);
        let error = strict(&bytes).unwrap_err();
        assert!(alloc::format!("{error}").starts_with(r#"unknown field "colour"; expected template_id, "#), "{error}");
        // A tombstone is the fact of the archive alone.
        let kept_template = br#"{"template_id":"p:M:T","archived":true}"#;
        assert_eq!(fast(kept_template), None);
        let error = strict(kept_template).unwrap_err();
        assert_eq!(alloc::format!("{error}"), r#"unknown field "template_id"; expected archived"#);
        assert!(strict(br#"{"archived":false}"#).is_err());
    }

    #[test]
    fn an_unreadable_stored_record_is_an_internal_error_naming_the_contract() {
        let store = MemoryStore::new();
        let event = created();
        let good = creation_record(&event, "s", false).unwrap();
        let text = core::str::from_utf8(&good).unwrap();
        let cases = [
            (text.replace("2024-01-01T00:00:00.500000Z", "yesterday"), "created_at"),
            (text.replace(r#""template_id":"p:M:T""#, r#""template_id":"T""#), "template_id"),
            (text.replace(r#""AAEC""#, r#""A""#), "blob"),
            (text.replace(r#","package_name":"p""#, ""), "missing package_name"),
            (String::from("{\"archived\":true"), "EOF"),
        ];
        for (bytes, problem) in cases {
            put(&store, "c1", bytes.as_bytes());
            let error = block_on(read(&store, "c1")).expect_err("unreadable");
            assert_eq!(error.status(), 500, "{error:?}");
            let Error::Internal(message) = &error else { panic!("{error:?}") };
            assert!(message.starts_with("contract c1: unreadable stored record: "), "{message}");
            assert!(message.contains(problem), "{message}");
            // Neither a create nor an archive writes over it.
            let mut stage = Stage::new(&store);
            let mut renamed = event.clone();
            renamed.contract_id = "c1".into();
            assert_eq!(block_on(create(&mut stage, &renamed, "s", false, None)), Err(error.clone()));
            assert_eq!(block_on(archive(&mut stage, "c1")), Err(error));
        }
    }

    /// Any record: a tombstone, or a creation with any payload and odd strings.
    fn any_record() -> impl Strategy<Value = ContractRecord> {
        let creation = (
            ("[a-z0-9#]{1,8}", "[A-Z][a-zA-Z.]{0,6}", "\\PC{1,6}"),
            crate::model::value::arbitrary::record(),
            Timestamp::MIN.micros()..=Timestamp::MAX.micros(),
            proptest::option::of(proptest::collection::vec(any::<u8>(), 0..12)),
            ("\\PC{1,16}", any::<bool>(), "\\PC{1,8}"),
        )
            .prop_filter_map("a template id", |((package, module, entity), payload, micros, blob, rest)| {
                let template_id = TemplateId::parse(&alloc::format!("{package}:{module}:{entity}")).ok()?;
                let (synchronizer_id, import, package_name) = rest;
                Some(Creation {
                    template_id,
                    payload: payload.render(Encoding::CompactJson),
                    created_at: Timestamp::from_micros(micros).ok()?,
                    blob: blob.map(|bytes| Blob::encode(&bytes)),
                    synchronizer_id,
                    import,
                    package_name,
                })
            });
        prop_oneof![1 => Just(ContractRecord::Archived), 8 => creation.prop_map(ContractRecord::Created)]
    }

    #[test]
    fn where_a_contract_is_follows_its_highest_reassignment_counter() {
        let fold = |events: &[(i64, Option<&str>)]| {
            events.iter().fold(None, |held, (counter, target)| Some(Reassigned::fold(held, *counter, *target)))
        };
        let at = |events: &[(i64, Option<&str>)]| {
            let record = fold(events).map(|record| record.encode());
            location_of("c", "created-on", record.as_deref()).unwrap()
        };
        assert_eq!(at(&[]), Location::On("created-on".into()));
        assert_eq!(at(&[(0, None)]), Location::InFlight);
        assert_eq!(at(&[(0, None), (0, Some("s2"))]), Location::On("s2".into()));
        assert_eq!(at(&[(0, Some("s2")), (0, None)]), Location::On("s2".into()), "the assignment wins its counter");
        assert_eq!(at(&[(1, None), (0, Some("s2")), (0, None)]), Location::InFlight, "whatever the order");
        assert_eq!(at(&[(1, Some("s3")), (0, Some("s2")), (1, None)]), Location::On("s3".into()));
    }

    #[test]
    fn an_unreadable_reassignment_record_is_an_error_naming_the_contract() {
        for bytes in [&b""[..], b"\0\0\0\0\0\0\0\x01", b"\0\0\0\0\0\0\0\x01\x02s", b"\0\0\0\0\0\0\0\x01\0s"] {
            let error = location_of("c1", "s", Some(bytes)).unwrap_err();
            assert!(alloc::format!("{error}").contains("contract c1"), "{error}");
        }
    }

    proptest! {
        #[test]
        fn reassignments_fold_to_one_record_whatever_their_order(
            held in proptest::collection::btree_map(0i64..6, (any::<bool>(), any::<bool>()), 0..6),
            seed in any::<u64>(),
        ) {
            // Each counter's unassignment and assignment, if held; assignment c goes to s{c}.
            let targets: Vec<String> = (0..6).map(|c| alloc::format!("s{c}")).collect();
            let mut events: Vec<(i64, Option<&str>)> = Vec::new();
            for (counter, (unassigned, assigned)) in &held {
                if *unassigned { events.push((*counter, None)); }
                if *assigned { events.push((*counter, Some(targets[*counter as usize].as_str()))); }
            }
            let fold = |events: &[(i64, Option<&str>)]| {
                events.iter().fold(None, |held, (counter, target)| Some(Reassigned::fold(held, *counter, *target)))
            };
            let in_order = fold(&events);
            let mut shuffled = events.clone();
            let mut state = seed | 1;
            for i in (1..shuffled.len()).rev() {
                state ^= state << 13; state ^= state >> 7; state ^= state << 17;
                shuffled.swap(i, (state % (i as u64 + 1)) as usize);
            }
            prop_assert_eq!(fold(&shuffled), in_order.clone());
            // The rule: the highest counter, and its assignment if held.
            let want = events.iter().map(|(c, _)| *c).max().map(|counter| Reassigned {
                counter,
                assigned_to: events.iter().find(|(c, t)| *c == counter && t.is_some()).and_then(|(_, t)| t.map(String::from)),
            });
            prop_assert_eq!(in_order.clone(), want);
            if let Some(record) = in_order {
                prop_assert_eq!(Reassigned::decode("c", &record.encode()), Ok(record));
            }
        }

        #[test]
        fn any_record_round_trips_through_its_writer_and_reader(record in any_record()) {
            let bytes = record.write().unwrap();
            prop_assert_eq!(decode("c", &bytes), Ok(record.clone()));
            prop_assert_eq!(strict(&bytes), Ok(record.clone()));
            // The cursor reads it too, leaving only strings with escapes to the document reader.
            match fast(&bytes) {
                Some(fast) => prop_assert_eq!(fast, record.clone()),
                None => prop_assert!(bytes.contains(&b'\\'), "refused {}", String::from_utf8_lossy(&bytes)),
            }
            prop_assert_eq!(encode("c", &decode("c", &bytes).unwrap()).unwrap(), bytes);
        }
    }
}
