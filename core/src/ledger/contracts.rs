//! The active contract set, derived at ingest (DESIGN section 5).
//!
//! Every contract the node has seen has a [`ContractRecord`] under `C contract_id`:
//! created (with its compact payload, blob, creation time and the synchronizer it was
//! created on) and possibly archived. An archived contract keeps its record as a
//! tombstone, so that a later import never brings it back. Active contracts are also
//! indexed by qualified template name (`T name contract_id`).
//!
//! Where a contract is ([`location`]) comes from its reassignment events (`R
//! contract_id counter kind`): with c the highest reassignment counter held, the
//! contract is on the target of the assignment with counter c if it is held, and in
//! flight if only the unassignment is; with no reassignment events it is where it was
//! created. One reverse scan of one key answers this, whatever order the events came in.

use alloc::string::String;
use alloc::vec::Vec;

use serde::{Deserialize, Serialize};

use crate::keys::{self, Key};
use crate::ledger::stage::Stage;
use crate::store::{Scan, Store, StoreError};
use crate::update::CreatedEvent;
use crate::value::Encoding;

/// What the node knows of a contract.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContractRecord {
    /// The full template id, `<package-id>:<Module.Path>:<Entity>`.
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

fn decode(contract_id: &str, bytes: &[u8]) -> Result<ContractRecord, StoreError> {
    serde_json::from_slice(bytes)
        .map_err(|e| StoreError::new(alloc::format!("contract {contract_id}: unreadable record: {e}")))
}

fn encode(record: &ContractRecord) -> Vec<u8> {
    // A record of strings and a JSON value always serializes.
    serde_json::to_vec(record).unwrap_or_default()
}

/// Reads a contract's record.
pub async fn read<S: Store>(store: &S, contract_id: &str) -> Result<Option<ContractRecord>, StoreError> {
    match store.get(&contract_key(contract_id)).await? {
        Some(bytes) => decode(contract_id, &bytes).map(Some),
        None => Ok(None),
    }
}

/// Records a created event (from a transaction on `synchronizer_id`, or an
/// assignment to it). A contract already created or archived is left as it is.
pub async fn create<S: Store>(
    stage: &mut Stage<'_, S>,
    event: &CreatedEvent,
    synchronizer_id: &str,
    import: bool,
) -> Result<(), StoreError> {
    let key = contract_key(&event.contract_id);
    let existing = match stage.get(&key).await? {
        Some(bytes) => Some(decode(&event.contract_id, &bytes)?),
        None => None,
    };
    if existing.as_ref().is_some_and(|r| r.created.is_some() || r.archived) {
        return Ok(());
    }
    let record = ContractRecord {
        template_id: event.template_id.as_str().into(),
        created: Some(Creation {
            payload: event.create_arguments.render(Encoding::CompactJson),
            created_at: alloc::format!("{}", event.created_at),
            blob: event.created_event_blob.as_ref().map(|b| String::from(b.as_str())).unwrap_or_default(),
            synchronizer_id: synchronizer_id.into(),
            import,
            package_name: event.package_name.clone(),
        }),
        archived: false,
    };
    stage.put(key, encode(&record));
    stage.put(template_key(event.template_id.qualified_name(), &event.contract_id), Vec::new());
    Ok(())
}

/// Records a consuming exercise on `contract_id` of `template_id`.
pub async fn archive<S: Store>(
    stage: &mut Stage<'_, S>,
    contract_id: &str,
    template_id: &crate::update::TemplateId,
) -> Result<(), StoreError> {
    let key = contract_key(contract_id);
    let mut record = match stage.get(&key).await? {
        Some(bytes) => decode(contract_id, &bytes)?,
        None => ContractRecord { template_id: template_id.as_str().into(), created: None, archived: false },
    };
    if record.archived {
        return Ok(());
    }
    record.archived = true;
    stage.delete(template_key(template_id.qualified_name(), contract_id));
    let qualified = crate::update::TemplateId::parse(&record.template_id).map(|t| String::from(t.qualified_name()));
    if let Ok(name) = qualified {
        stage.delete(template_key(&name, contract_id));
    }
    stage.put(key, encode(&record));
    Ok(())
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
