//! An update's binary form: what the node stores of each update, once, and renders
//! either JSON encoding from on read ([`crate::state::ledger::updates`]).
//!
//! It holds everything a response body shows and nothing else: created events'
//! blobs are left out, as response bodies leave them out (the contracts' own records
//! keep them), so an update read back from it has no blob. Parts are written in the
//! order of the types' fields with the primitives of [`crate::model::binary`]; values
//! in their own binary form ([`crate::model::value::binary`]):
//!
//! - first a version byte ([`FORM_VERSION`]), then a kind byte: transaction or
//!   reassignment;
//! - a transaction: update id, migration id, workflow id, record time, synchronizer id,
//!   effective time, root event ids, the events in `events_by_id` order, and the
//!   external transaction hash if any;
//! - an event: a kind byte (created or exercised), then its fields; a created event's
//!   event id is its `events_by_id` key, so it is written once;
//! - a reassignment: update id, offset, record time, then a kind byte (assignment or
//!   unassignment) and the event's fields;
//! - an event id `<update_id>:<n>` is written as its suffix `n` after a flag byte, so
//!   the update id, a third of a small transaction's bytes, is not repeated; any other
//!   id is written whole after a zero flag.
//!
//! Times are signed microseconds, so a form reads back exactly the update written:
//! [`Update::from_binary`] of [`Update::to_binary`] is the update without its blobs
//! (the property tests hold it to that over generated updates).

use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use super::{
    Assignment, CreatedEvent, Event, ExercisedEvent, Reassignment, ReassignmentEvent, TemplateId, Transaction,
    Unassignment, Update,
};
use crate::model::binary::{Reader, Writer};
use crate::model::time::Timestamp;
use crate::model::value::Value;

/// The first byte of every form this build writes; a form with another is unreadable.
pub const FORM_VERSION: u8 = 1;

const TRANSACTION: u8 = 0;
const REASSIGNMENT: u8 = 1;
const CREATED: u8 = 0;
const EXERCISED: u8 = 1;
const ASSIGNMENT: u8 = 0;
const UNASSIGNMENT: u8 = 1;

impl Update {
    /// The update's binary form, without blobs (see the module docs).
    pub fn to_binary(&self) -> Vec<u8> {
        let mut out = Writer::with_capacity(2048);
        out.byte(FORM_VERSION);
        match self {
            Update::Transaction(tx) => {
                out.byte(TRANSACTION);
                tx.write_binary(&mut out);
            }
            Update::Reassignment(r) => {
                out.byte(REASSIGNMENT);
                r.write_binary(&mut out);
            }
        }
        out.into_bytes()
    }

    /// The update a binary form holds, if `bytes` is one this build wrote, whole.
    pub fn from_binary(bytes: &[u8]) -> Option<Update> {
        let mut input = Reader::new(bytes);
        if input.byte()? != FORM_VERSION {
            return None;
        }
        let update = match input.byte()? {
            TRANSACTION => Update::Transaction(Transaction::read_binary(&mut input)?),
            REASSIGNMENT => Update::Reassignment(Box::new(Reassignment::read_binary(&mut input)?)),
            _ => return None,
        };
        input.at_end().then_some(update)
    }
}

/// Appends an event id, relative to `update_id` when it is `<update_id>:<n>`.
fn write_event_id(out: &mut Writer, update_id: &str, event_id: &str) {
    match event_id.strip_prefix(update_id).and_then(|rest| rest.strip_prefix(':')) {
        Some(suffix) => {
            out.byte(1);
            out.text(suffix);
        }
        None => {
            out.byte(0);
            out.text(event_id);
        }
    }
}

fn read_event_id(input: &mut Reader<'_>, update_id: &str) -> Option<String> {
    match input.byte()? {
        0 => input.text(),
        1 => Some(format!("{update_id}:{}", input.str()?)),
        _ => None,
    }
}

fn write_event_ids(out: &mut Writer, update_id: &str, ids: &[String]) {
    out.count(ids.len());
    ids.iter().for_each(|id| write_event_id(out, update_id, id));
}

fn read_event_ids(input: &mut Reader<'_>, update_id: &str) -> Option<Vec<String>> {
    let len = input.count()?;
    (0..len).map(|_| read_event_id(input, update_id)).collect()
}

fn write_value(out: &mut Writer, value: &Value) {
    value.write_binary(out);
}

fn read_time(input: &mut Reader<'_>) -> Option<Timestamp> {
    Timestamp::from_micros(input.signed()?).ok()
}

fn read_template(input: &mut Reader<'_>) -> Option<TemplateId> {
    TemplateId::parse(input.str()?).ok()
}

impl Transaction {
    fn write_binary(&self, out: &mut Writer) {
        let id = self.update_id.as_str();
        out.text(id);
        out.signed(self.migration_id);
        out.text(&self.workflow_id);
        out.signed(self.record_time.micros());
        out.text(&self.synchronizer_id);
        out.signed(self.effective_at.micros());
        write_event_ids(out, id, &self.root_event_ids);
        out.count(self.events_by_id.len());
        for (event_id, event) in &self.events_by_id {
            write_event_id(out, id, event_id);
            match event {
                Event::Created(created) => {
                    out.byte(CREATED);
                    created.write_binary_fields(out);
                }
                Event::Exercised(exercised) => {
                    out.byte(EXERCISED);
                    exercised.write_binary_fields(out, id);
                }
            }
        }
        out.optional_text(self.external_transaction_hash.as_deref());
    }

    fn read_binary(input: &mut Reader<'_>) -> Option<Transaction> {
        let update_id = input.text()?;
        let migration_id = input.signed()?;
        let workflow_id = input.text()?;
        let record_time = read_time(input)?;
        let synchronizer_id = input.text()?;
        let effective_at = read_time(input)?;
        let root_event_ids = read_event_ids(input, &update_id)?;
        let mut events_by_id = BTreeMap::new();
        for _ in 0..input.count()? {
            let event_id = read_event_id(input, &update_id)?;
            let event = match input.byte()? {
                CREATED => Event::Created(CreatedEvent::read_binary_fields(input, event_id.clone())?),
                EXERCISED => Event::Exercised(ExercisedEvent::read_binary_fields(input, event_id.clone(), &update_id)?),
                _ => return None,
            };
            events_by_id.insert(event_id, event);
        }
        let external_transaction_hash = input.optional_text()?;
        Some(Transaction {
            update_id,
            migration_id,
            workflow_id,
            record_time,
            synchronizer_id,
            effective_at,
            root_event_ids,
            events_by_id,
            external_transaction_hash,
        })
    }
}

impl CreatedEvent {
    /// Every field but the event id (written by whoever holds the event) and the blob.
    fn write_binary_fields(&self, out: &mut Writer) {
        out.text(&self.contract_id);
        out.text(self.template_id.as_str());
        out.text(&self.package_name);
        write_value(out, &self.create_arguments);
        out.signed(self.created_at.micros());
        out.texts(&self.signatories);
        out.texts(&self.observers);
    }

    fn read_binary_fields(input: &mut Reader<'_>, event_id: String) -> Option<CreatedEvent> {
        Some(CreatedEvent {
            event_id,
            contract_id: input.text()?,
            template_id: read_template(input)?,
            package_name: input.text()?,
            create_arguments: Value::read_binary(input)?,
            created_at: read_time(input)?,
            signatories: input.texts()?,
            observers: input.texts()?,
            created_event_blob: None,
        })
    }
}

impl ExercisedEvent {
    /// Every field but the event id; child event ids relative to `update_id`.
    fn write_binary_fields(&self, out: &mut Writer, update_id: &str) {
        out.text(&self.contract_id);
        out.text(self.template_id.as_str());
        out.text(&self.package_name);
        out.text(&self.choice);
        write_value(out, &self.choice_argument);
        write_event_ids(out, update_id, &self.child_event_ids);
        write_value(out, &self.exercise_result);
        out.byte(u8::from(self.consuming));
        out.texts(&self.acting_parties);
        out.optional_text(self.interface_id.as_ref().map(TemplateId::as_str));
    }

    fn read_binary_fields(input: &mut Reader<'_>, event_id: String, update_id: &str) -> Option<ExercisedEvent> {
        Some(ExercisedEvent {
            event_id,
            contract_id: input.text()?,
            template_id: read_template(input)?,
            package_name: input.text()?,
            choice: input.text()?,
            choice_argument: Value::read_binary(input)?,
            child_event_ids: read_event_ids(input, update_id)?,
            exercise_result: Value::read_binary(input)?,
            consuming: input.flag()?,
            acting_parties: input.texts()?,
            interface_id: match input.optional_text()? {
                None => None,
                Some(text) => Some(TemplateId::parse(&text).ok()?),
            },
        })
    }
}

impl Reassignment {
    fn write_binary(&self, out: &mut Writer) {
        out.text(&self.update_id);
        out.text(&self.offset);
        out.signed(self.record_time.micros());
        match &self.event {
            ReassignmentEvent::Assignment(a) => {
                out.byte(ASSIGNMENT);
                out.text(&a.submitter);
                out.text(&a.source_synchronizer);
                out.text(&a.target_synchronizer);
                out.signed(a.migration_id);
                out.text(&a.unassign_id);
                write_event_id(out, &self.update_id, &a.created_event.event_id);
                a.created_event.write_binary_fields(out);
                out.signed(a.reassignment_counter);
            }
            ReassignmentEvent::Unassignment(u) => {
                out.byte(UNASSIGNMENT);
                out.text(&u.submitter);
                out.text(&u.source_synchronizer);
                out.signed(u.migration_id);
                out.text(&u.target_synchronizer);
                out.text(&u.unassign_id);
                out.signed(u.reassignment_counter);
                out.text(&u.contract_id);
            }
        }
    }

    fn read_binary(input: &mut Reader<'_>) -> Option<Reassignment> {
        let update_id = input.text()?;
        let offset = input.text()?;
        let record_time = read_time(input)?;
        let event = match input.byte()? {
            ASSIGNMENT => ReassignmentEvent::Assignment(Assignment {
                submitter: input.text()?,
                source_synchronizer: input.text()?,
                target_synchronizer: input.text()?,
                migration_id: input.signed()?,
                unassign_id: input.text()?,
                created_event: {
                    let event_id = read_event_id(input, &update_id)?;
                    CreatedEvent::read_binary_fields(input, event_id)?
                },
                reassignment_counter: input.signed()?,
            }),
            UNASSIGNMENT => ReassignmentEvent::Unassignment(Unassignment {
                submitter: input.text()?,
                source_synchronizer: input.text()?,
                migration_id: input.signed()?,
                target_synchronizer: input.text()?,
                unassign_id: input.text()?,
                reassignment_counter: input.signed()?,
                contract_id: input.text()?,
            }),
            _ => return None,
        };
        Some(Reassignment { update_id, offset, record_time, event })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::update::fixtures::{self, any_update, parse_both};
    use crate::model::value::Encoding;
    use proptest::prelude::*;

    fn without_blobs(mut update: Update) -> Update {
        update.created_events_mut().into_iter().for_each(|event| event.created_event_blob = None);
        update
    }

    proptest! {
        #[test]
        fn every_update_reads_back_as_written_but_for_its_blobs(update in any_update()) {
            let form = update.to_binary();
            prop_assert_eq!(Update::from_binary(&form), Some(without_blobs(update.clone())));
        }

        #[test]
        fn both_bodies_render_from_the_form_as_from_the_update(update in any_update()) {
            let read = Update::from_binary(&update.to_binary()).expect("readable");
            for encoding in [Encoding::CompactJson, Encoding::ProtobufJson] {
                prop_assert_eq!(read.body_text(encoding), update.body_text(encoding));
            }
        }

        #[test]
        fn a_form_cut_short_or_lengthened_is_unreadable(update in any_update(), cut in any::<prop::sample::Index>()) {
            let form = update.to_binary();
            prop_assert_eq!(Update::from_binary(&form[..cut.index(form.len())]), None);
            let mut longer = form.clone();
            longer.push(0);
            prop_assert_eq!(Update::from_binary(&longer), None);
        }
    }

    #[test]
    fn the_sample_updates_read_back_and_are_far_smaller_than_their_two_bodies() {
        for json in [fixtures::transaction(), fixtures::import(), fixtures::assignment(), fixtures::unassignment()] {
            let update = parse_both(&json).expect("a sample parses");
            let form = update.to_binary();
            assert_eq!(Update::from_binary(&form), Some(without_blobs(update.clone())));
            let bodies = update.body_text(Encoding::CompactJson).len() + update.body_text(Encoding::ProtobufJson).len();
            assert!(form.len() * 3 < bodies, "{} bytes of form against {bodies} of bodies", form.len());
        }
    }

    #[test]
    fn a_form_of_another_version_or_kind_is_unreadable() {
        let form = parse_both(&fixtures::transaction()).expect("parses").to_binary();
        let mut other = form.clone();
        other[0] = FORM_VERSION + 1;
        assert_eq!(Update::from_binary(&other), None);
        other[0] = FORM_VERSION;
        other[1] = 7;
        assert_eq!(Update::from_binary(&other), None);
    }
}
