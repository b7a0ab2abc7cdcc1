//! A transaction: [`Transaction`] and its tree of [`Event`]s, their reader and writer,
//! and the check that the events form a forest.

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use super::{CreatedEvent, ExercisedEvent, Form, TemplateId, is_event_id_of};
use crate::model::json::short::ShortText;
use crate::model::time::Timestamp;
use crate::model::value::path::quoted;
use crate::model::value::render::{string, strings};
use crate::model::value::source::{Source, bounded_id, strings as read_strings, timestamp};
use crate::model::value::{JsonPath, PathError, Segment};

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

impl Transaction {
    /// The fields of a transaction on the wire, in the order they are written.
    pub(super) const FIELDS: [&'static str; 9] = [
        "update_id",
        "migration_id",
        "workflow_id",
        "record_time",
        "synchronizer_id",
        "effective_at",
        "root_event_ids",
        "events_by_id",
        "external_transaction_hash",
    ];

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

    /// The fields of `object`, an update that has `events_by_id`; the event tree is
    /// checked once they are read.
    pub(super) fn read_fields<'s, S: Source<'s>>(source: &mut S, mut object: S::Object) -> Result<Self, S::Error> {
        source.only(&mut object, &Self::FIELDS)?;
        let update_id = source.field(&mut object, "update_id", bounded_id)?;
        let transaction = Transaction {
            update_id: update_id.into(),
            migration_id: source.field(&mut object, "migration_id", S::int64)?,
            workflow_id: source.field(&mut object, "workflow_id", S::string)?.into(),
            record_time: source.field(&mut object, "record_time", timestamp)?,
            synchronizer_id: source.field(&mut object, "synchronizer_id", bounded_id)?.into(),
            effective_at: source.field(&mut object, "effective_at", timestamp)?,
            root_event_ids: source.field(&mut object, "root_event_ids", read_strings)?,
            events_by_id: source.field(&mut object, "events_by_id", |source| read_events(source, update_id))?,
            external_transaction_hash: source
                .optional_field(&mut object, "external_transaction_hash", S::string)?
                .map(String::from),
        };
        source.close(object)?;
        source.check(|path| check_tree(&transaction, path))?;
        Ok(transaction)
    }

    /// Appends the transaction in `form`.
    pub(super) fn write(&self, out: &mut String, form: Form) {
        out.push_str(r#"{"update_id":"#);
        string(out, &self.update_id);
        out.push_str(r#","migration_id":"#);
        out.push_str(self.migration_id.short_text().as_str());
        out.push_str(r#","workflow_id":"#);
        string(out, &self.workflow_id);
        out.push_str(r#","record_time":"#);
        string(out, self.record_time.short_text().as_str());
        out.push_str(r#","synchronizer_id":"#);
        string(out, &self.synchronizer_id);
        out.push_str(r#","effective_at":"#);
        string(out, self.effective_at.short_text().as_str());
        out.push_str(r#","root_event_ids":"#);
        strings(out, &self.root_event_ids);
        out.push_str(r#","events_by_id":{"#);
        for (n, (id, event)) in self.events_by_id.iter().enumerate() {
            if n > 0 {
                out.push(',');
            }
            string(out, id);
            out.push(':');
            event.write(out, form);
        }
        out.push('}');
        if let Some(hash) = &self.external_transaction_hash {
            out.push_str(r#","external_transaction_hash":"#);
            string(out, hash);
        }
        out.push('}');
    }
}

/// `events_by_id`: non-empty, keys `<update_id>:<n>`, each event's id equal to its key.
fn read_events<'s, S: Source<'s>>(source: &mut S, update_id: &str) -> Result<BTreeMap<String, Event>, S::Error> {
    let mut events = BTreeMap::new();
    source.entries(|source, key| {
        if !is_event_id_of(key, update_id) {
            return Err(source.error(|| {
                format!(
                    "event ids are <update_id>:<n> with n a non-negative integer; expected {}",
                    quoted(&format!("{update_id}:<n>"))
                )
            }));
        }
        let event = Event::read(source)?;
        if event.event_id() != key {
            return Err(source.error_at("event_id", || format!("must equal its key in events_by_id, {}", quoted(key))));
        }
        // A parsed document has no repeated keys; text read straight may.
        if events.insert(String::from(key), event).is_some() {
            return Err(source.error(|| format!("the key {} appears twice in one object", quoted(key))));
        }
        Ok(())
    })?;
    if events.is_empty() {
        return Err(source.error(|| "a transaction has at least one event"));
    }
    Ok(events)
}

impl Event {
    /// A created or exercised event, by its `event_type`.
    fn read<'s, S: Source<'s>>(source: &mut S) -> Result<Self, S::Error> {
        let mut object = source.object()?;
        let event_type = source.field(&mut object, "event_type", S::string)?;
        let event = match event_type {
            "created_event" => {
                source.only(&mut object, &CreatedEvent::FIELDS)?;
                Event::Created(CreatedEvent::read_fields(source, &mut object)?)
            }
            "exercised_event" => {
                source.only(&mut object, &ExercisedEvent::FIELDS)?;
                Event::Exercised(ExercisedEvent::read_fields(source, &mut object)?)
            }
            other => {
                return Err(source.error_at("event_type", || {
                    format!("unknown event type {}; expected created_event or exercised_event", quoted(other))
                }));
            }
        };
        source.close(object)?;
        Ok(event)
    }

    /// Appends the event in `form`.
    fn write(&self, out: &mut String, form: Form) {
        match self {
            Event::Created(e) => e.write(out, form),
            Event::Exercised(e) => e.write(out, form),
        }
    }

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

/// Every reference names an event, and the references make a forest that covers every
/// event exactly once (so the tree has no cycles and no orphans).
fn check_tree(transaction: &Transaction, path: &JsonPath) -> Result<(), PathError> {
    let events = &transaction.events_by_id;
    let roots = &transaction.root_event_ids;
    let missing = |id: &str| format!("no event {} in events_by_id", quoted(id));
    for (index, id) in roots.iter().enumerate() {
        if !events.contains_key(id) {
            return Err(reference_path(path, None, index).error(missing(id)));
        }
    }
    for (key, event) in events {
        if let Event::Exercised(e) = event {
            for (index, id) in e.child_event_ids.iter().enumerate() {
                if !events.contains_key(id) {
                    return Err(reference_path(path, Some(key), index).error(missing(id)));
                }
            }
        }
    }
    // Walk from the roots; an event reached twice is referenced twice.
    let mut seen = BTreeSet::new();
    let mut stack: Vec<(&str, Option<&str>, usize)> =
        roots.iter().enumerate().rev().map(|(index, id)| (id.as_str(), None, index)).collect();
    while let Some((id, parent, index)) = stack.pop() {
        if !seen.insert(id) {
            return Err(reference_path(path, parent, index).error(format!(
                "event {} is referenced more than once; the events of a transaction form a tree",
                quoted(id)
            )));
        }
        if let Some(Event::Exercised(e)) = events.get(id) {
            let children = e.child_event_ids.iter().enumerate().rev();
            stack.extend(children.map(|(index, child)| (child.as_str(), Some(id), index)));
        }
    }
    match events.keys().find(|key| !seen.contains(key.as_str())) {
        Some(orphan) => {
            let mut at = path.clone();
            at.push(Segment::Field("events_by_id"));
            Err(at.error_at(Segment::Key(orphan.clone()), "not reachable from root_event_ids through child_event_ids"))
        }
        None => Ok(()),
    }
}

/// `root_event_ids[index]`, or `events_by_id["parent"].child_event_ids[index]`.
fn reference_path(path: &JsonPath, parent: Option<&str>, index: usize) -> JsonPath {
    let mut at = path.clone();
    match parent {
        None => at.push(Segment::Field("root_event_ids")),
        Some(parent) => {
            at.push(Segment::Field("events_by_id"));
            at.push(Segment::Key(parent.into()));
            at.push(Segment::Field("child_event_ids"));
        }
    }
    at.push(Segment::Index(index));
    at
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{self, edit};
    use alloc::vec;
    use alloc::vec::Vec;
    use serde_json::Value as Json;
    use serde_json::json;

    #[test]
    fn every_structural_error_of_a_transaction_names_its_path() {
        let cases: Vec<fixtures::Case> = vec![
            (
                "/offset",
                Some(json!("1")),
                "unknown field \"offset\"; expected update_id, migration_id, workflow_id, record_time, synchronizer_id, effective_at, root_event_ids, events_by_id, external_transaction_hash",
            ),
            (
                "/event",
                Some(json!({})),
                "an update has events_by_id (a transaction) or event (a reassignment), not both",
            ),
            ("/update_id", None, "missing update_id"),
            ("/update_id", Some(json!("")), "update_id: must not be empty"),
            ("/update_id", Some(json!(7)), "update_id: expected a string, found a number"),
            ("/migration_id", None, "missing migration_id"),
            ("/migration_id", Some(json!("3")), "migration_id: expected an integer (int64), found a string"),
            ("/migration_id", Some(json!(3.5)), "migration_id: expected an integer (int64), found 3.5"),
            (
                "/migration_id",
                Some(json!(9_223_372_036_854_775_808u64)),
                "migration_id: 9223372036854775808 is out of the int64 range",
            ),
            ("/workflow_id", None, "missing workflow_id"),
            ("/workflow_id", Some(Json::Null), "missing workflow_id"),
            (
                "/record_time",
                Some(json!("2024-09-20 13:31")),
                "record_time: expected an RFC 3339 timestamp such as 2024-09-20T13:31:29.552807Z",
            ),
            (
                "/record_time",
                Some(json!("2024-09-20T13:31:29.1234567Z")),
                "record_time: 2024-09-20T13:31:29.1234567Z has a nonzero digit beyond the microsecond; \
                 times have microsecond resolution",
            ),
            ("/record_time", Some(json!(1_726_839_089_552_807i64)), "record_time: expected a string, found a number"),
            ("/synchronizer_id", Some(json!("")), "synchronizer_id: must not be empty"),
            ("/effective_at", None, "missing effective_at"),
            ("/effective_at", Some(json!("2023-02-29T00:00:00Z")), "effective_at: expected an RFC 3339 timestamp"),
            (
                "/external_transaction_hash",
                Some(json!(1)),
                "external_transaction_hash: expected a string, found a number",
            ),
            ("/root_event_ids", Some(json!("u1:0")), "root_event_ids: expected an array, found a string"),
            ("/root_event_ids/1", Some(json!(3)), "root_event_ids[1]: expected a string, found a number"),
            ("/root_event_ids/1", Some(json!("u1:9")), "root_event_ids[1]: no event \"u1:9\" in events_by_id"),
            (
                "/root_event_ids/2",
                Some(json!("u1:1")),
                "root_event_ids[2]: event \"u1:1\" is referenced more than once; the events of a transaction form a tree",
            ),
            (
                "/root_event_ids/1",
                None,
                "events_by_id[\"u1:3\"]: not reachable from root_event_ids through child_event_ids",
            ),
            ("/events_by_id", Some(json!({})), "events_by_id: a transaction has at least one event"),
            ("/events_by_id", Some(json!([])), "events_by_id: expected an object, found an array"),
            (
                "/events_by_id/u2:4",
                Some(json!({})),
                "events_by_id[\"u2:4\"]: event ids are <update_id>:<n> with n a non-negative integer; expected \"u1:<n>\"",
            ),
            ("/events_by_id/u1:x", Some(json!({})), "events_by_id[\"u1:x\"]: event ids are <update_id>:<n>"),
            (
                "/events_by_id/u1:3",
                Some(json!("created")),
                "events_by_id[\"u1:3\"]: expected an object, found a string",
            ),
            (
                "/events_by_id/u1:3/event_id",
                Some(json!("u1:4")),
                "events_by_id[\"u1:3\"].event_id: must equal its key in events_by_id, \"u1:3\"",
            ),
            ("/events_by_id/u1:3/event_id", None, "events_by_id[\"u1:3\"]: missing event_id"),
            ("/events_by_id/u1:3/event_type", None, "events_by_id[\"u1:3\"]: missing event_type"),
            (
                "/events_by_id/u1:3/event_type",
                Some(json!(1)),
                "events_by_id[\"u1:3\"].event_type: expected a string, found a number",
            ),
            (
                "/events_by_id/u1:3/event_type",
                Some(json!("archived_event")),
                "events_by_id[\"u1:3\"].event_type: unknown event type \"archived_event\"; expected created_event or exercised_event",
            ),
            (
                "/events_by_id/u1:3/choice",
                Some(json!("x")),
                "events_by_id[\"u1:3\"]: unknown field \"choice\"; expected event_type, event_id, contract_id, template_id, package_name, create_arguments, created_at, signatories, observers, created_event_blob",
            ),
            (
                "/events_by_id/u1:3/contract_id",
                Some(json!("")),
                "events_by_id[\"u1:3\"].contract_id: must not be empty",
            ),
            (
                "/events_by_id/u1:3/template_id",
                Some(json!("Platform.Round:OpenMiningRound")),
                "events_by_id[\"u1:3\"].template_id: expected a template id <package-id>:<Module.Path>:<Entity>",
            ),
            ("/events_by_id/u1:3/package_name", None, "events_by_id[\"u1:3\"]: missing package_name"),
            (
                "/events_by_id/u1:3/create_arguments",
                Some(json!({"int64": "1"})),
                "events_by_id[\"u1:3\"].create_arguments: expected a record value, found int64",
            ),
            (
                "/events_by_id/u1:3/create_arguments",
                Some(json!({"sv": "sv1"})),
                "events_by_id[\"u1:3\"].create_arguments: unknown value type \"sv\"",
            ),
            (
                "/events_by_id/u1:3/create_arguments/record/fields/2/label",
                None,
                "events_by_id[\"u1:3\"].create_arguments.record.fields[2]: missing label",
            ),
            (
                "/events_by_id/u1:3/create_arguments/record/fields/1/value/optional/value/numeric",
                Some(json!("1,5")),
                "events_by_id[\"u1:3\"].create_arguments.record.fields[1].value.optional.value.numeric: expected a decimal number",
            ),
            (
                "/events_by_id/u1:3/created_at",
                Some(json!("")),
                "events_by_id[\"u1:3\"].created_at: expected an RFC 3339 timestamp",
            ),
            (
                "/events_by_id/u1:3/signatories/0",
                Some(json!(null)),
                "events_by_id[\"u1:3\"].signatories[0]: expected a string, found null",
            ),
            ("/events_by_id/u1:3/observers", None, "events_by_id[\"u1:3\"]: missing observers"),
            (
                "/events_by_id/u1:1/created_event_blob",
                Some(json!("AA-C")),
                "events_by_id[\"u1:1\"].created_event_blob: not valid base64 (standard alphabet with = padding): character outside the base64 alphabet at byte 2",
            ),
            (
                "/events_by_id/u1:1/created_event_blob",
                Some(json!("AAE")),
                "events_by_id[\"u1:1\"].created_event_blob: not valid base64 (standard alphabet with = padding): length is not a multiple of 4 at byte 3",
            ),
            (
                "/events_by_id/u1:1/created_event_blob",
                Some(json!(["AAEC"])),
                "events_by_id[\"u1:1\"].created_event_blob: expected a string, found an array",
            ),
            (
                "/events_by_id/u1:0/created_event_blob",
                Some(json!("AAEC")),
                "events_by_id[\"u1:0\"]: unknown field \"created_event_blob\"; expected event_type",
            ),
            ("/events_by_id/u1:0/choice", Some(json!("")), "events_by_id[\"u1:0\"].choice: must not be empty"),
            (
                "/events_by_id/u1:0/choice_argument",
                Some(json!({})),
                "events_by_id[\"u1:0\"].choice_argument: a value object has exactly one key",
            ),
            (
                "/events_by_id/u1:0/choice_argument/record/fields/0",
                Some(json!({"label": "reason"})),
                "events_by_id[\"u1:0\"].choice_argument.record.fields[0]: missing value",
            ),
            ("/events_by_id/u1:0/exercise_result", None, "events_by_id[\"u1:0\"]: missing exercise_result"),
            (
                "/events_by_id/u1:0/consuming",
                Some(json!("yes")),
                "events_by_id[\"u1:0\"].consuming: expected a boolean, found a string",
            ),
            (
                "/events_by_id/u1:0/acting_parties",
                Some(json!({})),
                "events_by_id[\"u1:0\"].acting_parties: expected an array, found an object",
            ),
            ("/events_by_id/u1:0/child_event_ids", None, "events_by_id[\"u1:0\"]: missing child_event_ids"),
            (
                "/events_by_id/u1:0/child_event_ids/1",
                Some(json!("u1:7")),
                "events_by_id[\"u1:0\"].child_event_ids[1]: no event \"u1:7\" in events_by_id",
            ),
            // The walk meets u1:3 first under u1:0, then as the second root.
            (
                "/events_by_id/u1:0/child_event_ids/2",
                Some(json!("u1:3")),
                "root_event_ids[1]: event \"u1:3\" is referenced more than once",
            ),
            (
                "/events_by_id/u1:2/child_event_ids/0",
                Some(json!("u1:0")),
                "events_by_id[\"u1:2\"].child_event_ids[0]: event \"u1:0\" is referenced more than once",
            ),
            (
                "/events_by_id/u1:2/child_event_ids/0",
                Some(json!("u1:2")),
                "events_by_id[\"u1:2\"].child_event_ids[0]: event \"u1:2\" is referenced more than once",
            ),
            (
                "/events_by_id/u1:2/interface_id",
                Some(json!("Holding")),
                "events_by_id[\"u1:2\"].interface_id: expected a template id",
            ),
            (
                "/events_by_id/u1:2/exercise_result/optional/value/optional",
                Some(json!({"value": {"int64": "1e3"}})),
                "events_by_id[\"u1:2\"].exercise_result.optional.value.optional.value.int64: expected a decimal integer in a string",
            ),
        ];
        fixtures::assert_errors(fixtures::transaction, &cases);
    }

    #[test]
    fn cycles_away_from_the_roots_are_orphans() {
        // u1:2 -> u1:2 is a cycle no root reaches once u1:0 no longer lists u1:2.
        let tx = edit(fixtures::transaction(), "/events_by_id/u1:0/child_event_ids/1", None);
        let tx = edit(tx, "/events_by_id/u1:2/child_event_ids/0", Some(json!("u1:2")));
        assert_eq!(
            fixtures::parse_error(&tx),
            "events_by_id[\"u1:2\"]: not reachable from root_event_ids through child_event_ids"
        );
    }
}
