//! Updates: the items of the ledger's update history (`UpdateHistoryItemV2` in the OpenAPI document), as ingested ([`crate::ingest`]).
//!
//! An [`Update`] is a [`Transaction`] (a tree of created and exercised events) or a
//! [`Reassignment`] (a contract's unassignment from one synchronizer or its assignment
//! to another). The node learns updates from the ingest stream and serves them from
//! `GET /v2/updates/{id}`:
//!
//! - [`Update::parse`] reads the ingest form: the `protobuf_json` body of
//!   `GET /v2/updates/{id}`, where created events may also carry a base64
//!   `created_event_blob`. Every problem is a [`PathError`] naming the element, such as
//!   `events_by_id["u1:3"].create_arguments.record.fields[2]: missing label`.
//! - [`Update::render`] writes the response body in either value encoding: optional
//!   fields omitted, `events_by_id` sorted by key, timestamps normalised to
//!   `YYYY-MM-DDTHH:MM:SS.ffffffZ`, and no blobs (they are ingest-only).
//! - [`Update::to_ingest_json`] writes the ingest form back, blobs included. It is
//!   canonical, so two ingests of one update compare equal as JSON, and parsing it gives
//!   the same update back.
//!
//! A parsed transaction is well formed: its event ids are `<update_id>:<n>` and equal
//! their keys, and `root_event_ids` and `child_event_ids` reference every event of
//! `events_by_id` exactly once, so the events form a forest
//! ([`Transaction::events_in_order`] walks it in execution order).
//!
//! Every parsed update's ids are bounded ([`crate::ids`]): its update id, synchronizer
//! ids, contract ids, unassign id and party ids (submitters, signatories, observers,
//! acting parties) are at most [`MAX_ID_BYTES`](crate::ids::MAX_ID_BYTES) bytes each.
//!
//! An import update is a transaction whose record time is `0001-01-01T00:00:00.000000Z`
//! ([`Timestamp::MIN`]): the state of the previous migration re-imported after a hard
//! migration ([`Update::is_import`]).

mod blob;
pub(crate) mod fast;
mod ids;
mod parse;
mod render;
mod text;

#[cfg(test)]
mod fixtures;

use alloc::boxed::Box;
use alloc::collections::{BTreeMap, BTreeSet};
use alloc::string::String;
use alloc::vec::Vec;

pub use blob::{Base64Error, Blob};
pub use ids::{TemplateId, TemplateIdError, is_event_id_of};

use crate::time::Timestamp;
pub use crate::value::Encoding;
use crate::value::{PathError, Record, Value};

/// One item of update history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Update {
    /// A transaction: a tree of events on one synchronizer.
    Transaction(Transaction),
    /// A contract moving between synchronizers (boxed: it holds a whole created event,
    /// twice the size of a transaction's fields).
    Reassignment(Box<Reassignment>),
}

/// A transaction item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transaction {
    /// Id of the update (a contract id, for an import update).
    pub update_id: String,
    /// Migration id of the synchronizer.
    pub migration_id: i64,
    /// Workflow id; empty when none was set.
    pub workflow_id: String,
    /// When the transaction was sequenced; [`Timestamp::MIN`] for an import update.
    pub record_time: Timestamp,
    /// The synchronizer that sequenced it.
    pub synchronizer_id: String,
    /// Ledger effective time.
    pub effective_at: Timestamp,
    /// Roots of the event tree, in execution order.
    pub root_event_ids: Vec<String>,
    /// Every event, by event id (sorted, as on the wire).
    pub events_by_id: BTreeMap<String, Event>,
    /// For an externally signed transaction, the hash the external party signed.
    pub external_transaction_hash: Option<String>,
}

/// A node of a transaction's event tree, told apart on the wire by `event_type`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// `created_event`: a contract was created.
    Created(CreatedEvent),
    /// `exercised_event`: a choice was exercised on a contract.
    Exercised(ExercisedEvent),
}

/// A contract's creation (`CreatedEvent` in the OpenAPI document).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreatedEvent {
    /// Id of this event: `<update_id>:<n>` inside a transaction.
    pub event_id: String,
    /// Id of the created contract.
    pub contract_id: String,
    /// Template of the created contract.
    pub template_id: TemplateId,
    /// Package name of the created contract.
    pub package_name: String,
    /// The contract's arguments (its payload).
    pub create_arguments: Record,
    /// Ledger effective time of the creating transaction.
    pub created_at: Timestamp,
    /// Party ids of the signatories.
    pub signatories: Vec<String>,
    /// Party ids of the observers.
    pub observers: Vec<String>,
    /// The serialized created event, as ingested; never rendered by `GET /v2/updates`.
    pub created_event_blob: Option<Blob>,
}

/// A choice exercised on a contract.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExercisedEvent {
    /// Id of this event, `<update_id>:<n>`.
    pub event_id: String,
    /// The contract the choice was exercised on.
    pub contract_id: String,
    /// The contract's template.
    pub template_id: TemplateId,
    /// Package name of the template.
    pub package_name: String,
    /// The choice's name, unqualified.
    pub choice: String,
    /// The choice's argument.
    pub choice_argument: Value,
    /// Immediate children, in execution order.
    pub child_event_ids: Vec<String>,
    /// The choice's result.
    pub exercise_result: Value,
    /// Whether the choice archived the contract.
    pub consuming: bool,
    /// Party ids of the acting parties.
    pub acting_parties: Vec<String>,
    /// The interface the choice was exercised through, if any.
    pub interface_id: Option<TemplateId>,
}

/// A reassignment item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reassignment {
    /// Id of the update.
    pub update_id: String,
    /// Absolute offset, ingested and echoed unchanged.
    pub offset: String,
    /// When the reassignment was sequenced.
    pub record_time: Timestamp,
    /// The unassignment or assignment.
    pub event: ReassignmentEvent,
}

/// The event of a reassignment; on the wire an assignment has `created_event` and an
/// unassignment has `contract_id`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReassignmentEvent {
    /// The contract arrives on `target_synchronizer`.
    Assignment(Assignment),
    /// The contract leaves `source_synchronizer`.
    Unassignment(Unassignment),
}

/// A contract assigned to its target synchronizer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assignment {
    /// Party that submitted the reassignment.
    pub submitter: String,
    /// Synchronizer the contract was reassigned from.
    pub source_synchronizer: String,
    /// Synchronizer the contract was reassigned to.
    pub target_synchronizer: String,
    /// Migration id of the target synchronizer.
    pub migration_id: i64,
    /// Id of the corresponding unassignment.
    pub unassign_id: String,
    /// The contract, as created.
    pub created_event: CreatedEvent,
    /// Equal on matching assignment and unassignment; 0 at creation.
    pub reassignment_counter: i64,
}

/// A contract unassigned from its source synchronizer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unassignment {
    /// Party that submitted the reassignment.
    pub submitter: String,
    /// Synchronizer the contract was reassigned from.
    pub source_synchronizer: String,
    /// Migration id of the source synchronizer.
    pub migration_id: i64,
    /// Synchronizer the contract was reassigned to.
    pub target_synchronizer: String,
    /// Id of this unassignment, later matched by an assignment.
    pub unassign_id: String,
    /// Equal on matching assignment and unassignment; 0 at creation.
    pub reassignment_counter: i64,
    /// The unassigned contract.
    pub contract_id: String,
}

impl Update {
    /// Parses the ingest form of an update; see the module docs.
    pub fn parse(json: &crate::json::Json<'_>) -> Result<Update, PathError> {
        parse::update(json, &mut crate::value::JsonPath::new())
    }

    /// The update's id.
    pub fn id(&self) -> &str {
        match self {
            Update::Transaction(t) => &t.update_id,
            Update::Reassignment(r) => &r.update_id,
        }
    }

    /// When the update was sequenced.
    pub fn record_time(&self) -> Timestamp {
        match self {
            Update::Transaction(t) => t.record_time,
            Update::Reassignment(r) => r.record_time,
        }
    }

    /// The migration id the update counts under: a transaction's own, an assignment's
    /// (its target's) or an unassignment's (its source's).
    pub fn migration_id(&self) -> i64 {
        match self {
            Update::Transaction(t) => t.migration_id,
            Update::Reassignment(r) => match &r.event {
                ReassignmentEvent::Assignment(a) => a.migration_id,
                ReassignmentEvent::Unassignment(u) => u.migration_id,
            },
        }
    }

    /// The synchronizer the update counts for (migration info, the history stream): a
    /// transaction's, an assignment's target, an unassignment's source.
    pub fn synchronizer_id(&self) -> &str {
        match self {
            Update::Transaction(t) => &t.synchronizer_id,
            Update::Reassignment(r) => match &r.event {
                ReassignmentEvent::Assignment(a) => &a.target_synchronizer,
                ReassignmentEvent::Unassignment(u) => &u.source_synchronizer,
            },
        }
    }

    /// Its created events, to change: a transaction's, or an assignment's one.
    pub fn created_events_mut(&mut self) -> Vec<&mut CreatedEvent> {
        match self {
            Update::Transaction(t) => t
                .events_by_id
                .values_mut()
                .filter_map(|event| match event {
                    Event::Created(created) => Some(created),
                    Event::Exercised(_) => None,
                })
                .collect(),
            Update::Reassignment(r) => match &mut r.event {
                ReassignmentEvent::Assignment(a) => alloc::vec![&mut a.created_event],
                ReassignmentEvent::Unassignment(_) => Vec::new(),
            },
        }
    }

    /// Whether this is an import update (a transaction recorded at [`Timestamp::MIN`]).
    pub fn is_import(&self) -> bool {
        matches!(self, Update::Transaction(t) if t.is_import())
    }

    /// The transaction, if this is one.
    pub fn as_transaction(&self) -> Option<&Transaction> {
        match self {
            Update::Transaction(t) => Some(t),
            Update::Reassignment(_) => None,
        }
    }

    /// The reassignment, if this is one.
    pub fn as_reassignment(&self) -> Option<&Reassignment> {
        match self {
            Update::Reassignment(r) => Some(r),
            Update::Transaction(_) => None,
        }
    }
}

impl Transaction {
    /// Whether this is an import update (recorded at [`Timestamp::MIN`]).
    pub fn is_import(&self) -> bool {
        self.record_time == Timestamp::MIN
    }

    /// The events in execution order: a depth-first, pre-order walk from the roots.
    /// Each event comes once; events that the roots do not reach (which a parsed
    /// transaction cannot have) are left out.
    pub fn events_in_order(&self) -> Vec<&Event> {
        let mut out = Vec::with_capacity(self.events_by_id.len());
        // Events seen, by address: ids are long and share the update id as a prefix.
        let mut seen = BTreeSet::new();
        let mut stack: Vec<&str> = self.root_event_ids.iter().rev().map(String::as_str).collect();
        while let Some(id) = stack.pop() {
            let Some(event) = self.events_by_id.get(id) else {
                continue;
            };
            if !seen.insert(core::ptr::from_ref(event)) {
                continue;
            }
            out.push(event);
            if let Event::Exercised(e) = event {
                stack.extend(e.child_event_ids.iter().rev().map(String::as_str));
            }
        }
        out
    }
}

impl Event {
    /// The event's id.
    pub fn event_id(&self) -> &str {
        match self {
            Event::Created(e) => &e.event_id,
            Event::Exercised(e) => &e.event_id,
        }
    }

    /// The contract created or exercised on.
    pub fn contract_id(&self) -> &str {
        match self {
            Event::Created(e) => &e.contract_id,
            Event::Exercised(e) => &e.contract_id,
        }
    }

    /// The contract's template.
    pub fn template_id(&self) -> &TemplateId {
        match self {
            Event::Created(e) => &e.template_id,
            Event::Exercised(e) => &e.template_id,
        }
    }

    /// The `event_type` on the wire: `created_event` or `exercised_event`.
    pub fn event_type(&self) -> &'static str {
        match self {
            Event::Created(_) => "created_event",
            Event::Exercised(_) => "exercised_event",
        }
    }
}

impl ReassignmentEvent {
    /// The contract reassigned.
    pub fn contract_id(&self) -> &str {
        match self {
            ReassignmentEvent::Assignment(a) => &a.created_event.contract_id,
            ReassignmentEvent::Unassignment(u) => &u.contract_id,
        }
    }

    /// The reassignment counter.
    pub fn reassignment_counter(&self) -> i64 {
        match self {
            ReassignmentEvent::Assignment(a) => a.reassignment_counter,
            ReassignmentEvent::Unassignment(u) => u.reassignment_counter,
        }
    }
}
