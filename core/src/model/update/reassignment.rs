//! A contract moving between synchronizers: [`Reassignment`] and its
//! [`ReassignmentEvent`], their reader and writer.

use alloc::string::String;

use super::{CreatedEvent, Form};
use crate::model::json::short::ShortText;
use crate::model::time::Timestamp;
use crate::model::value::render::string;
use crate::model::value::source::{Source, bounded_id, id, timestamp};

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

impl Reassignment {
    /// The fields of a reassignment on the wire, in the order they are written.
    const FIELDS: [&'static str; 4] = ["update_id", "offset", "record_time", "event"];

    /// The fields of `object`, an update that has `event`.
    pub(super) fn read_fields<'s, S: Source<'s>>(source: &mut S, mut object: S::Object) -> Result<Self, S::Error> {
        source.only(&mut object, &Self::FIELDS)?;
        let reassignment = Reassignment {
            update_id: source.field(&mut object, "update_id", bounded_id)?.into(),
            offset: source.field(&mut object, "offset", id)?.into(),
            record_time: source.field(&mut object, "record_time", timestamp)?,
            event: source.field(&mut object, "event", ReassignmentEvent::read)?,
        };
        source.close(object)?;
        Ok(reassignment)
    }

    /// Appends the reassignment in `form`.
    pub(super) fn write(&self, out: &mut String, form: Form) {
        out.push_str(r#"{"update_id":"#);
        string(out, &self.update_id);
        out.push_str(r#","offset":"#);
        string(out, &self.offset);
        out.push_str(r#","record_time":"#);
        string(out, self.record_time.short_text().as_str());
        out.push_str(r#","event":"#);
        match &self.event {
            ReassignmentEvent::Assignment(a) => a.write(out, form),
            ReassignmentEvent::Unassignment(u) => u.write(out),
        }
        out.push('}');
    }
}

impl ReassignmentEvent {
    /// An assignment (it has `created_event`) or an unassignment (it has `contract_id`).
    fn read<'s, S: Source<'s>>(source: &mut S) -> Result<Self, S::Error> {
        let mut object = source.object()?;
        let event = match source.either(&mut object, "created_event", "contract_id") {
            (true, false) => ReassignmentEvent::Assignment(Assignment::read_fields(source, &mut object)?),
            (false, true) => ReassignmentEvent::Unassignment(Unassignment::read_fields(source, &mut object)?),
            (true, true) => {
                return Err(source.error(|| {
                    "a reassignment event has created_event (an assignment) or contract_id (an unassignment), not both"
                }));
            }
            (false, false) => {
                return Err(source.error(
                    || "a reassignment event needs created_event (an assignment) or contract_id (an unassignment)",
                ));
            }
        };
        source.close(object)?;
        Ok(event)
    }

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

impl Assignment {
    /// The fields of an assignment on the wire, in the order they are written.
    const FIELDS: [&'static str; 7] = [
        "submitter",
        "source_synchronizer",
        "target_synchronizer",
        "migration_id",
        "unassign_id",
        "created_event",
        "reassignment_counter",
    ];

    fn read_fields<'s, S: Source<'s>>(source: &mut S, object: &mut S::Object) -> Result<Self, S::Error> {
        source.only(object, &Self::FIELDS)?;
        Ok(Assignment {
            submitter: source.field(object, "submitter", bounded_id)?.into(),
            source_synchronizer: source.field(object, "source_synchronizer", bounded_id)?.into(),
            target_synchronizer: source.field(object, "target_synchronizer", bounded_id)?.into(),
            migration_id: source.field(object, "migration_id", S::int64)?,
            unassign_id: source.field(object, "unassign_id", bounded_id)?.into(),
            created_event: source.field(object, "created_event", CreatedEvent::read)?,
            reassignment_counter: source.field(object, "reassignment_counter", S::int64)?,
        })
    }

    fn write(&self, out: &mut String, form: Form) {
        out.push_str(r#"{"submitter":"#);
        string(out, &self.submitter);
        out.push_str(r#","source_synchronizer":"#);
        string(out, &self.source_synchronizer);
        out.push_str(r#","target_synchronizer":"#);
        string(out, &self.target_synchronizer);
        out.push_str(r#","migration_id":"#);
        out.push_str(self.migration_id.short_text().as_str());
        out.push_str(r#","unassign_id":"#);
        string(out, &self.unassign_id);
        out.push_str(r#","created_event":"#);
        self.created_event.write(out, form);
        out.push_str(r#","reassignment_counter":"#);
        out.push_str(self.reassignment_counter.short_text().as_str());
        out.push('}');
    }
}

impl Unassignment {
    /// The fields of an unassignment on the wire, in the order they are written.
    const FIELDS: [&'static str; 7] = [
        "submitter",
        "source_synchronizer",
        "migration_id",
        "target_synchronizer",
        "unassign_id",
        "reassignment_counter",
        "contract_id",
    ];

    fn read_fields<'s, S: Source<'s>>(source: &mut S, object: &mut S::Object) -> Result<Self, S::Error> {
        source.only(object, &Self::FIELDS)?;
        Ok(Unassignment {
            submitter: source.field(object, "submitter", bounded_id)?.into(),
            source_synchronizer: source.field(object, "source_synchronizer", bounded_id)?.into(),
            migration_id: source.field(object, "migration_id", S::int64)?,
            target_synchronizer: source.field(object, "target_synchronizer", bounded_id)?.into(),
            unassign_id: source.field(object, "unassign_id", bounded_id)?.into(),
            reassignment_counter: source.field(object, "reassignment_counter", S::int64)?,
            contract_id: source.field(object, "contract_id", bounded_id)?.into(),
        })
    }

    fn write(&self, out: &mut String) {
        out.push_str(r#"{"submitter":"#);
        string(out, &self.submitter);
        out.push_str(r#","source_synchronizer":"#);
        string(out, &self.source_synchronizer);
        out.push_str(r#","migration_id":"#);
        out.push_str(self.migration_id.short_text().as_str());
        out.push_str(r#","target_synchronizer":"#);
        string(out, &self.target_synchronizer);
        out.push_str(r#","unassign_id":"#);
        string(out, &self.unassign_id);
        out.push_str(r#","reassignment_counter":"#);
        out.push_str(self.reassignment_counter.short_text().as_str());
        out.push_str(r#","contract_id":"#);
        string(out, &self.contract_id);
        out.push('}');
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixtures;
    use alloc::vec;
    use alloc::vec::Vec;
    use serde_json::Value as Json;
    use serde_json::json;

    #[test]
    fn every_structural_error_of_a_reassignment_names_its_path() {
        let assignment: Vec<fixtures::Case> = vec![
            (
                "/events_by_id",
                Some(json!({})),
                "an update has events_by_id (a transaction) or event (a reassignment), not both",
            ),
            ("/offset", None, "missing offset"),
            ("/offset", Some(json!(42)), "offset: expected a string, found a number"),
            (
                "/migration_id",
                Some(json!(3)),
                "unknown field \"migration_id\"; expected update_id, offset, record_time, event",
            ),
            ("/record_time", Some(json!("now")), "record_time: expected an RFC 3339 timestamp"),
            ("/event", Some(Json::Null), "missing event"),
            ("/event", Some(json!([])), "event: expected an object, found an array"),
            (
                "/event/contract_id",
                Some(json!("c9")),
                "event: a reassignment event has created_event (an assignment) or contract_id (an unassignment), not both",
            ),
            (
                "/event/created_event",
                None,
                "event: a reassignment event needs created_event (an assignment) or contract_id (an unassignment)",
            ),
            ("/event/created_event", Some(json!("c9")), "event.created_event: expected an object, found a string"),
            (
                "/event/reassignment_counter",
                Some(json!("1")),
                "event.reassignment_counter: expected an integer (int64), found a string",
            ),
            ("/event/reassignment_counter", None, "event: missing reassignment_counter"),
            (
                "/event/migration_id",
                Some(json!(-9_223_372_036_854_775_809.0)),
                "event.migration_id: expected an integer (int64), found -9.223372036854776e+18",
            ),
            ("/event/submitter", Some(json!("")), "event.submitter: must not be empty"),
            ("/event/unassign_id", None, "event: missing unassign_id"),
            (
                "/event/extra",
                Some(json!(1)),
                "event: unknown field \"extra\"; expected submitter, source_synchronizer, target_synchronizer, migration_id, unassign_id, created_event, reassignment_counter",
            ),
            (
                "/event/created_event/event_type",
                Some(json!("exercised_event")),
                "event.created_event.event_type: expected created_event, found \"exercised_event\"",
            ),
            ("/event/created_event/event_type", None, "event.created_event: missing event_type"),
            (
                "/event/created_event/create_arguments/record/fields/0/label",
                None,
                "event.created_event.create_arguments.record.fields[0]: missing label",
            ),
            (
                "/event/created_event/created_event_blob",
                Some(json!("Zm9vYg=")),
                "event.created_event.created_event_blob: not valid base64",
            ),
        ];
        fixtures::assert_errors(fixtures::assignment, &assignment);
        let unassignment: Vec<fixtures::Case> = vec![
            ("/event/contract_id", Some(json!("")), "event.contract_id: must not be empty"),
            ("/event/target_synchronizer", None, "event: missing target_synchronizer"),
            (
                "/event/created_at",
                Some(json!("2024-09-20T13:31:29Z")),
                "event: unknown field \"created_at\"; expected submitter, source_synchronizer, migration_id, target_synchronizer, unassign_id, reassignment_counter, contract_id",
            ),
            (
                "/event/reassignment_counter",
                Some(json!(1.0)),
                "event.reassignment_counter: expected an integer (int64), found 1.0",
            ),
        ];
        fixtures::assert_errors(fixtures::unassignment, &unassignment);
    }
}
