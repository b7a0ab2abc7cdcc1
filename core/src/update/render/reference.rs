//! Updates through serde, the way they were rendered before [`super::super::text`]
//! wrote them straight to text: kept as the reference that text is checked against.

use serde::ser::{Serialize, SerializeMap, Serializer};

use crate::update::text::Form;
use crate::update::{CreatedEvent, Event, ExercisedEvent, Reassignment, ReassignmentEvent, Transaction, Update};
use crate::value::render::reference::{RecordReference, Reference as ValueReference, Text};

/// An update in one form through serde.
pub(crate) struct Reference<'a>(pub(crate) &'a Update, pub(crate) Form);

impl Serialize for Reference<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Update::Transaction(t) => transaction(s, t, self.1),
            Update::Reassignment(r) => reassignment(s, r, self.1),
        }
    }
}

fn transaction<S: Serializer>(s: S, t: &Transaction, form: Form) -> Result<S::Ok, S::Error> {
    let mut map = s.serialize_map(None)?;
    map.serialize_entry("update_id", &t.update_id)?;
    map.serialize_entry("migration_id", &t.migration_id)?;
    map.serialize_entry("workflow_id", &t.workflow_id)?;
    map.serialize_entry("record_time", &Text(t.record_time))?;
    map.serialize_entry("synchronizer_id", &t.synchronizer_id)?;
    map.serialize_entry("effective_at", &Text(t.effective_at))?;
    map.serialize_entry("root_event_ids", &t.root_event_ids)?;
    map.serialize_entry("events_by_id", &Events(t, form))?;
    if let Some(hash) = &t.external_transaction_hash {
        map.serialize_entry("external_transaction_hash", hash)?;
    }
    map.end()
}

/// A transaction's `events_by_id`, in key order.
struct Events<'a>(&'a Transaction, Form);

impl Serialize for Events<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.events_by_id.iter().map(|(id, event)| (id, EventForm(event, self.1))))
    }
}

struct EventForm<'a>(&'a Event, Form);

impl Serialize for EventForm<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Event::Created(e) => CreatedForm(e, self.1).serialize(s),
            Event::Exercised(e) => exercised_event(s, e, self.1),
        }
    }
}

struct CreatedForm<'a>(&'a CreatedEvent, Form);

impl Serialize for CreatedForm<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let CreatedForm(e, form) = *self;
        let mut map = s.serialize_map(None)?;
        event_header(
            &mut map,
            "created_event",
            [&e.event_id, &e.contract_id, e.template_id.as_str(), &e.package_name],
        )?;
        map.serialize_entry("create_arguments", &RecordReference(&e.create_arguments, form.encoding))?;
        map.serialize_entry("created_at", &Text(e.created_at))?;
        map.serialize_entry("signatories", &e.signatories)?;
        map.serialize_entry("observers", &e.observers)?;
        if let (true, Some(blob)) = (form.blobs, &e.created_event_blob) {
            map.serialize_entry("created_event_blob", blob.as_str())?;
        }
        map.end()
    }
}

fn exercised_event<S: Serializer>(s: S, e: &ExercisedEvent, form: Form) -> Result<S::Ok, S::Error> {
    let mut map = s.serialize_map(None)?;
    event_header(&mut map, "exercised_event", [&e.event_id, &e.contract_id, e.template_id.as_str(), &e.package_name])?;
    map.serialize_entry("choice", &e.choice)?;
    map.serialize_entry("choice_argument", &ValueReference(&e.choice_argument, form.encoding))?;
    map.serialize_entry("child_event_ids", &e.child_event_ids)?;
    map.serialize_entry("exercise_result", &ValueReference(&e.exercise_result, form.encoding))?;
    map.serialize_entry("consuming", &e.consuming)?;
    map.serialize_entry("acting_parties", &e.acting_parties)?;
    if let Some(interface) = &e.interface_id {
        map.serialize_entry("interface_id", interface.as_str())?;
    }
    map.end()
}

/// The fields every event starts with: its type, then `event_id`, `contract_id`,
/// `template_id` and `package_name` (in `values`).
fn event_header<M: SerializeMap>(map: &mut M, event_type: &str, values: [&str; 4]) -> Result<(), M::Error> {
    map.serialize_entry("event_type", event_type)?;
    for (name, value) in ["event_id", "contract_id", "template_id", "package_name"].into_iter().zip(values) {
        map.serialize_entry(name, value)?;
    }
    Ok(())
}

fn reassignment<S: Serializer>(s: S, r: &Reassignment, form: Form) -> Result<S::Ok, S::Error> {
    let mut map = s.serialize_map(Some(4))?;
    map.serialize_entry("update_id", &r.update_id)?;
    map.serialize_entry("offset", &r.offset)?;
    map.serialize_entry("record_time", &Text(r.record_time))?;
    map.serialize_entry("event", &ReassignmentForm(&r.event, form))?;
    map.end()
}

struct ReassignmentForm<'a>(&'a ReassignmentEvent, Form);

impl Serialize for ReassignmentForm<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(7))?;
        match self.0 {
            ReassignmentEvent::Assignment(a) => {
                map.serialize_entry("submitter", &a.submitter)?;
                map.serialize_entry("source_synchronizer", &a.source_synchronizer)?;
                map.serialize_entry("target_synchronizer", &a.target_synchronizer)?;
                map.serialize_entry("migration_id", &a.migration_id)?;
                map.serialize_entry("unassign_id", &a.unassign_id)?;
                map.serialize_entry("created_event", &CreatedForm(&a.created_event, self.1))?;
                map.serialize_entry("reassignment_counter", &a.reassignment_counter)?;
            }
            ReassignmentEvent::Unassignment(u) => {
                map.serialize_entry("submitter", &u.submitter)?;
                map.serialize_entry("source_synchronizer", &u.source_synchronizer)?;
                map.serialize_entry("migration_id", &u.migration_id)?;
                map.serialize_entry("target_synchronizer", &u.target_synchronizer)?;
                map.serialize_entry("unassign_id", &u.unassign_id)?;
                map.serialize_entry("reassignment_counter", &u.reassignment_counter)?;
                map.serialize_entry("contract_id", &u.contract_id)?;
            }
        }
        map.end()
    }
}
