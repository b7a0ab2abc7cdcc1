//! The fast path of update ingest: an ingest line straight to a typed [`Update`].
//!
//! Ingest spends most of its time reading updates, and reading one through a JSON
//! document first ([`Update::parse`]) builds and drops a tree as large as the update. This
//! path reads the line once, into the typed update, with the rules of the strict parser
//! ([`super::parse`]): known fields only, each once; `null` read as absent; ids non-empty,
//! and those of the bounded kinds (update, contract, party, synchronizer ids) at most
//! [`MAX_ID_BYTES`](crate::ids::MAX_ID_BYTES) bytes; event ids `<update_id>:<n>` equal
//! to their keys; the event tree checked by the same function. It gives up (`None`) on anything it does not take, and the caller then
//! runs the strict parser, which names the problem (or, for input only the strict
//! parser reads, such as strings with escapes, takes it). So errors are always the
//! strict parser's, and the two agree on every update this path takes.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;

use super::parse::{CREATED_EVENT, EXERCISED_EVENT, REASSIGNMENT, TRANSACTION, check_tree};
use super::{
    Assignment, Blob, CreatedEvent, Event, ExercisedEvent, Reassignment, ReassignmentEvent, TemplateId, Transaction,
    Unassignment, Update, is_event_id_of,
};
use crate::ids::MAX_ID_BYTES;
use crate::json::scan::{Cursor, once};
use crate::time::Timestamp;
use crate::value::{JsonPath, Record, Value};

/// An ingest line `{"update": <update>}`, if this path takes it.
pub(crate) fn update_line(line: &[u8]) -> Option<Update> {
    let text = core::str::from_utf8(line).ok()?;
    let mut c = Cursor::new(text);
    let mut update = None;
    c.object(|c, kind| match kind {
        "update" => once(&mut update, self::update(c)?),
        _ => None,
    })?;
    c.at_end().then_some(update?)
}

/// The fields of a transaction or a reassignment, as read.
#[derive(Default)]
struct UpdateFields<'a> {
    /// Every key read, for [`only`].
    keys: Vec<&'a str>,
    update_id: Option<&'a str>,
    migration_id: Option<i64>,
    workflow_id: Option<&'a str>,
    record_time: Option<Timestamp>,
    synchronizer_id: Option<&'a str>,
    effective_at: Option<Timestamp>,
    root_event_ids: Option<Vec<String>>,
    events_by_id: Option<Vec<(&'a str, Event)>>,
    external_transaction_hash: Option<Option<&'a str>>,
    offset: Option<&'a str>,
    event: Option<ReassignmentEvent>,
}

fn update(c: &mut Cursor<'_>) -> Option<Update> {
    let mut f = UpdateFields { keys: Vec::with_capacity(TRANSACTION.len()), ..UpdateFields::default() };
    c.object(|c, key| {
        f.keys.push(key);
        match key {
            "update_id" => once(&mut f.update_id, bounded_id(c)?),
            "migration_id" => once(&mut f.migration_id, c.integer()?),
            "workflow_id" => once(&mut f.workflow_id, c.string()?),
            "record_time" => once(&mut f.record_time, timestamp(c)?),
            "synchronizer_id" => once(&mut f.synchronizer_id, bounded_id(c)?),
            "effective_at" => once(&mut f.effective_at, timestamp(c)?),
            "root_event_ids" => once(&mut f.root_event_ids, strings(c)?),
            "events_by_id" => once(&mut f.events_by_id, events(c)?),
            "external_transaction_hash" if c.null() => once(&mut f.external_transaction_hash, None),
            "external_transaction_hash" => once(&mut f.external_transaction_hash, Some(c.string()?)),
            "offset" => once(&mut f.offset, crate::value::source::id(c).ok()?),
            "event" => once(&mut f.event, reassignment_event(c)?),
            _ => None,
        }
    })?;
    if f.events_by_id.is_some() { transaction(f).map(Update::Transaction) } else { reassignment(f) }
}

fn transaction(f: UpdateFields<'_>) -> Option<Transaction> {
    only(&f.keys, &TRANSACTION)?;
    let update_id = f.update_id?;
    let mut events_by_id = BTreeMap::new();
    for (key, event) in f.events_by_id? {
        if !is_event_id_of(key, update_id) || event.event_id() != key {
            return None;
        }
        if events_by_id.insert(String::from(key), event).is_some() {
            return None;
        }
    }
    if events_by_id.is_empty() {
        return None;
    }
    let transaction = Transaction {
        update_id: update_id.into(),
        migration_id: f.migration_id?,
        workflow_id: f.workflow_id?.into(),
        record_time: f.record_time?,
        synchronizer_id: f.synchronizer_id?.into(),
        effective_at: f.effective_at?,
        root_event_ids: f.root_event_ids?,
        events_by_id,
        external_transaction_hash: f.external_transaction_hash.flatten().map(String::from),
    };
    check_tree(&transaction, &JsonPath::new()).ok()?;
    Some(transaction)
}

fn reassignment(f: UpdateFields<'_>) -> Option<Update> {
    only(&f.keys, &REASSIGNMENT)?;
    Some(Update::Reassignment(
        Reassignment {
            update_id: f.update_id?.into(),
            offset: f.offset?.into(),
            record_time: f.record_time?,
            event: f.event?,
        }
        .into(),
    ))
}

/// `events_by_id`, in document order, keys not yet checked.
fn events<'a>(c: &mut Cursor<'a>) -> Option<Vec<(&'a str, Event)>> {
    let mut events = Vec::new();
    c.object(|c, key| {
        events.push((key, event(c)?));
        Some(())
    })?;
    Some(events)
}

/// The fields of a created or exercised event, as read.
#[derive(Default)]
struct EventFields<'a> {
    /// Every key read, for [`only`].
    keys: Vec<&'a str>,
    event_type: Option<&'a str>,
    event_id: Option<&'a str>,
    contract_id: Option<&'a str>,
    template_id: Option<TemplateId>,
    package_name: Option<&'a str>,
    create_arguments: Option<Record>,
    created_at: Option<Timestamp>,
    signatories: Option<Vec<String>>,
    observers: Option<Vec<String>>,
    created_event_blob: Option<Option<Blob>>,
    choice: Option<&'a str>,
    choice_argument: Option<Value>,
    child_event_ids: Option<Vec<String>>,
    exercise_result: Option<Value>,
    consuming: Option<bool>,
    acting_parties: Option<Vec<String>>,
    interface_id: Option<Option<TemplateId>>,
}

fn event_fields<'a>(c: &mut Cursor<'a>) -> Option<EventFields<'a>> {
    let mut f = EventFields { keys: Vec::with_capacity(EXERCISED_EVENT.len()), ..EventFields::default() };
    c.object(|c, key| {
        f.keys.push(key);
        match key {
            "event_type" => once(&mut f.event_type, c.string()?),
            "event_id" => once(&mut f.event_id, crate::value::source::id(c).ok()?),
            "contract_id" => once(&mut f.contract_id, bounded_id(c)?),
            "template_id" => once(&mut f.template_id, template_id(c)?),
            "package_name" => once(&mut f.package_name, crate::value::source::id(c).ok()?),
            "create_arguments" => once(&mut f.create_arguments, crate::value::Record::read(c).ok()?),
            "created_at" => once(&mut f.created_at, timestamp(c)?),
            "signatories" => once(&mut f.signatories, bounded_strings(c)?),
            "observers" => once(&mut f.observers, bounded_strings(c)?),
            "created_event_blob" if c.null() => once(&mut f.created_event_blob, None),
            "created_event_blob" => once(&mut f.created_event_blob, Some(Blob::parse(c.string()?).ok()?)),
            "choice" => once(&mut f.choice, crate::value::source::id(c).ok()?),
            "choice_argument" => once(&mut f.choice_argument, Value::read(c).ok()?),
            "child_event_ids" => once(&mut f.child_event_ids, strings(c)?),
            "exercise_result" => once(&mut f.exercise_result, Value::read(c).ok()?),
            "consuming" => once(&mut f.consuming, c.boolean()?),
            "acting_parties" => once(&mut f.acting_parties, bounded_strings(c)?),
            "interface_id" if c.null() => once(&mut f.interface_id, None),
            "interface_id" => once(&mut f.interface_id, Some(template_id(c)?)),
            _ => None,
        }
    })?;
    Some(f)
}

fn event(c: &mut Cursor<'_>) -> Option<Event> {
    let f = event_fields(c)?;
    match f.event_type? {
        "created_event" => created(f).map(Event::Created),
        "exercised_event" => exercised(f).map(Event::Exercised),
        _ => None,
    }
}

/// An assignment's `created_event`: a created event, `event_type` included.
fn created_event_of(c: &mut Cursor<'_>) -> Option<CreatedEvent> {
    let f = event_fields(c)?;
    if f.event_type? != "created_event" {
        return None;
    }
    created(f)
}

fn created(f: EventFields<'_>) -> Option<CreatedEvent> {
    only(&f.keys, &CREATED_EVENT)?;
    Some(CreatedEvent {
        event_id: f.event_id?.into(),
        contract_id: f.contract_id?.into(),
        template_id: f.template_id?,
        package_name: f.package_name?.into(),
        create_arguments: f.create_arguments?,
        created_at: f.created_at?,
        signatories: f.signatories?,
        observers: f.observers?,
        created_event_blob: f.created_event_blob.flatten(),
    })
}

fn exercised(f: EventFields<'_>) -> Option<ExercisedEvent> {
    only(&f.keys, &EXERCISED_EVENT)?;
    Some(ExercisedEvent {
        event_id: f.event_id?.into(),
        contract_id: f.contract_id?.into(),
        template_id: f.template_id?,
        package_name: f.package_name?.into(),
        choice: f.choice?.into(),
        choice_argument: f.choice_argument?,
        child_event_ids: f.child_event_ids?,
        exercise_result: f.exercise_result?,
        consuming: f.consuming?,
        acting_parties: f.acting_parties?,
        interface_id: f.interface_id.flatten(),
    })
}

/// A reassignment's `event`: an assignment (with `created_event`) or an unassignment
/// (with `contract_id`).
fn reassignment_event(c: &mut Cursor<'_>) -> Option<ReassignmentEvent> {
    let (mut submitter, mut source, mut target, mut migration_id) = (None, None, None, None);
    let (mut unassign_id, mut created_event, mut counter, mut contract_id) = (None, None, None, None);
    c.object(|c, key| match key {
        "submitter" => once(&mut submitter, bounded_id(c)?),
        "source_synchronizer" => once(&mut source, bounded_id(c)?),
        "target_synchronizer" => once(&mut target, bounded_id(c)?),
        "migration_id" => once(&mut migration_id, c.integer()?),
        "unassign_id" => once(&mut unassign_id, bounded_id(c)?),
        "created_event" => once(&mut created_event, created_event_of(c)?),
        "reassignment_counter" => once(&mut counter, c.integer()?),
        "contract_id" => once(&mut contract_id, bounded_id(c)?),
        _ => None,
    })?;
    let (submitter, source, target): (String, String, String) = (submitter?.into(), source?.into(), target?.into());
    let (migration_id, unassign_id, reassignment_counter) = (migration_id?, String::from(unassign_id?), counter?);
    Some(match (created_event, contract_id) {
        (Some(created_event), None) => ReassignmentEvent::Assignment(Assignment {
            submitter,
            source_synchronizer: source,
            target_synchronizer: target,
            migration_id,
            unassign_id,
            created_event,
            reassignment_counter,
        }),
        (None, Some(contract_id)) => ReassignmentEvent::Unassignment(Unassignment {
            submitter,
            source_synchronizer: source,
            migration_id,
            target_synchronizer: target,
            unassign_id,
            reassignment_counter,
            contract_id: contract_id.into(),
        }),
        _ => return None,
    })
}

/// Whether every key read is one of `known`, the strict parser's fields of the type.
fn only(keys: &[&str], known: &[&str]) -> Option<()> {
    keys.iter().all(|key| known.contains(key)).then_some(())
}

fn timestamp(c: &mut Cursor<'_>) -> Option<Timestamp> {
    Timestamp::parse(c.string()?).ok()
}

fn template_id(c: &mut Cursor<'_>) -> Option<TemplateId> {
    TemplateId::parse(c.string()?).ok()
}

/// An array of strings.
fn strings(c: &mut Cursor<'_>) -> Option<Vec<String>> {
    let mut out = Vec::new();
    c.array(|c| {
        out.push(String::from(c.string()?));
        Some(())
    })?;
    Some(out)
}

/// An id of a bounded kind: non-empty and at most [`MAX_ID_BYTES`] bytes. A longer one
/// is left to the strict parser, which names the field.
fn bounded_id<'a>(c: &mut Cursor<'a>) -> Option<&'a str> {
    crate::value::source::id(c).ok().filter(|id| id.len() <= MAX_ID_BYTES)
}

/// An array of strings of at most [`MAX_ID_BYTES`] bytes each (party ids).
fn bounded_strings(c: &mut Cursor<'_>) -> Option<Vec<String>> {
    let mut out = Vec::new();
    c.array(|c| {
        out.push(String::from(c.string().filter(|s| s.len() <= MAX_ID_BYTES)?));
        Some(())
    })?;
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::super::fixtures;
    use super::*;
    use serde_json::json;

    fn line(update: &serde_json::Value) -> alloc::vec::Vec<u8> {
        serde_json::to_vec(&json!({ "update": update })).unwrap()
    }

    #[test]
    fn every_kind_of_update_takes_the_fast_path() {
        // (That what it builds is what the strict parser builds, the strict parser's
        // tests check: they parse every update both ways.)
        for update in [fixtures::transaction(), fixtures::import(), fixtures::assignment(), fixtures::unassignment()] {
            assert!(update_line(&line(&update)).is_some(), "{update}");
        }
        let spaced = serde_json::to_vec_pretty(&json!({ "update": fixtures::transaction() })).unwrap();
        assert!(update_line(&spaced).is_some());
    }

    #[test]
    fn lines_the_strict_path_must_judge_are_left_to_it() {
        let tx = fixtures::transaction();
        let text = String::from_utf8(line(&tx)).unwrap();
        let cases = [
            alloc::format!("{text} x"),
            alloc::format!(r#"{{"update":{tx},"update":{tx}}}"#),
            alloc::format!(r#"{{"topology":{tx}}}"#),
            text.replacen("\"u1\"", "\"u\\u0031\"", 1),
            text.replacen("\"workflow_id\":\"\"", "\"workflow_id\":\"\",\"workflow_id\":\"\"", 1),
            // Ids over the limit: the strict parser names the field.
            text.replacen("\"c3\"", &alloc::format!("\"{}\"", "c".repeat(513)), 1),
            text.replacen("\"sv1::1220\"]", &alloc::format!("\"{}\"]", "p".repeat(513)), 1),
            text.replacen("\"global-domain::1220aa\"", &alloc::format!("\"{}\"", "d".repeat(513)), 1),
        ];
        for case in cases {
            assert_eq!(update_line(case.as_bytes()), None, "{case}");
        }
        assert_eq!(update_line(b"{\"update\":{}}\xff"), None);
    }
}
