//! Updates written straight to JSON text: the stored `GET /v2/updates/{id}` bodies.
//!
//! Like values ([`crate::value::text`]), an update has a [`Serialize`](serde::Serialize)
//! form ([`super::render`]), and this writes the same text (byte for byte: a property
//! test compares them on arbitrary updates) with the keys and punctuation as literals.
//! Ingest renders every update twice with it, once an encoding.

use alloc::string::String;

use super::{CreatedEvent, Encoding, Event, ExercisedEvent, Reassignment, ReassignmentEvent, Transaction, Update};
use crate::json::short::ShortText;
use crate::time::Timestamp;
use crate::value::render::{string, strings};

/// How to write an update: the value encoding, and whether blobs are written (the
/// canonical ingest form writes them, a response body does not).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Form {
    pub(crate) encoding: Encoding,
    pub(crate) blobs: bool,
}

/// Appends `update` in `form`.
pub(crate) fn update(out: &mut String, update: &Update, form: Form) {
    match update {
        Update::Transaction(t) => transaction(out, t, form),
        Update::Reassignment(r) => reassignment(out, r, form),
    }
}

fn transaction(out: &mut String, t: &Transaction, form: Form) {
    out.push_str(r#"{"update_id":"#);
    string(out, &t.update_id);
    out.push_str(r#","migration_id":"#);
    integer(out, t.migration_id);
    out.push_str(r#","workflow_id":"#);
    string(out, &t.workflow_id);
    out.push_str(r#","record_time":"#);
    time(out, t.record_time);
    out.push_str(r#","synchronizer_id":"#);
    string(out, &t.synchronizer_id);
    out.push_str(r#","effective_at":"#);
    time(out, t.effective_at);
    out.push_str(r#","root_event_ids":"#);
    strings(out, &t.root_event_ids);
    out.push_str(r#","events_by_id":{"#);
    for (n, (id, event)) in t.events_by_id.iter().enumerate() {
        if n > 0 {
            out.push(',');
        }
        string(out, id);
        out.push(':');
        match event {
            Event::Created(e) => created(out, e, form),
            Event::Exercised(e) => exercised(out, e, form),
        }
    }
    out.push('}');
    if let Some(hash) = &t.external_transaction_hash {
        out.push_str(r#","external_transaction_hash":"#);
        string(out, hash);
    }
    out.push('}');
}

fn created(out: &mut String, e: &CreatedEvent, form: Form) {
    header(out, "created_event", [&e.event_id, &e.contract_id, e.template_id.as_str(), &e.package_name]);
    out.push_str(r#","create_arguments":"#);
    e.create_arguments.write(out, form.encoding);
    out.push_str(r#","created_at":"#);
    time(out, e.created_at);
    out.push_str(r#","signatories":"#);
    strings(out, &e.signatories);
    out.push_str(r#","observers":"#);
    strings(out, &e.observers);
    if let (true, Some(blob)) = (form.blobs, &e.created_event_blob) {
        out.push_str(r#","created_event_blob":"#);
        string(out, blob.as_str());
    }
    out.push('}');
}

fn exercised(out: &mut String, e: &ExercisedEvent, form: Form) {
    header(out, "exercised_event", [&e.event_id, &e.contract_id, e.template_id.as_str(), &e.package_name]);
    out.push_str(r#","choice":"#);
    string(out, &e.choice);
    out.push_str(r#","choice_argument":"#);
    value(out, &e.choice_argument, form);
    out.push_str(r#","child_event_ids":"#);
    strings(out, &e.child_event_ids);
    out.push_str(r#","exercise_result":"#);
    value(out, &e.exercise_result, form);
    out.push_str(if e.consuming { r#","consuming":true"# } else { r#","consuming":false"# });
    out.push_str(r#","acting_parties":"#);
    strings(out, &e.acting_parties);
    if let Some(interface) = &e.interface_id {
        out.push_str(r#","interface_id":"#);
        string(out, interface.as_str());
    }
    out.push('}');
}

/// Opens an event's object with its type, then `event_id`, `contract_id`,
/// `template_id` and `package_name` (in `values`).
fn header(out: &mut String, event_type: &str, values: [&str; 4]) {
    out.push_str(r#"{"event_type":"#);
    string(out, event_type);
    for (name, value) in
        [r#","event_id":"#, r#","contract_id":"#, r#","template_id":"#, r#","package_name":"#].into_iter().zip(values)
    {
        out.push_str(name);
        string(out, value);
    }
}

fn reassignment(out: &mut String, r: &Reassignment, form: Form) {
    out.push_str(r#"{"update_id":"#);
    string(out, &r.update_id);
    out.push_str(r#","offset":"#);
    string(out, &r.offset);
    out.push_str(r#","record_time":"#);
    time(out, r.record_time);
    out.push_str(r#","event":"#);
    match &r.event {
        ReassignmentEvent::Assignment(a) => {
            out.push_str(r#"{"submitter":"#);
            string(out, &a.submitter);
            out.push_str(r#","source_synchronizer":"#);
            string(out, &a.source_synchronizer);
            out.push_str(r#","target_synchronizer":"#);
            string(out, &a.target_synchronizer);
            out.push_str(r#","migration_id":"#);
            integer(out, a.migration_id);
            out.push_str(r#","unassign_id":"#);
            string(out, &a.unassign_id);
            out.push_str(r#","created_event":"#);
            created(out, &a.created_event, form);
            out.push_str(r#","reassignment_counter":"#);
            integer(out, a.reassignment_counter);
        }
        ReassignmentEvent::Unassignment(u) => {
            out.push_str(r#"{"submitter":"#);
            string(out, &u.submitter);
            out.push_str(r#","source_synchronizer":"#);
            string(out, &u.source_synchronizer);
            out.push_str(r#","migration_id":"#);
            integer(out, u.migration_id);
            out.push_str(r#","target_synchronizer":"#);
            string(out, &u.target_synchronizer);
            out.push_str(r#","unassign_id":"#);
            string(out, &u.unassign_id);
            out.push_str(r#","reassignment_counter":"#);
            integer(out, u.reassignment_counter);
            out.push_str(r#","contract_id":"#);
            string(out, &u.contract_id);
        }
    }
    out.push_str("}}");
}

fn value(out: &mut String, value: &crate::value::Value, form: Form) {
    value.write(out, form.encoding);
}

fn integer(out: &mut String, n: i64) {
    out.push_str(n.short_text().as_str());
}

fn time(out: &mut String, t: Timestamp) {
    string(out, t.short_text().as_str());
}
