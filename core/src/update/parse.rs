//! Parsing the ingest form of updates, with the structural checks of the module docs.

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use crate::json::Json;

use super::{
    Assignment, Blob, CreatedEvent, Event, ExercisedEvent, Reassignment, ReassignmentEvent, TemplateId, Transaction,
    Unassignment, Update, is_event_id_of,
};
use crate::value::path::quoted;
use crate::value::read::{self, StrictObject};
use crate::value::{JsonPath, PathError, Record, Segment, Value};

pub(super) const TRANSACTION: [&str; 9] = [
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

pub(super) const CREATED_EVENT: [&str; 10] = [
    "event_type",
    "event_id",
    "contract_id",
    "template_id",
    "package_name",
    "create_arguments",
    "created_at",
    "signatories",
    "observers",
    "created_event_blob",
];

pub(super) const EXERCISED_EVENT: [&str; 12] = [
    "event_type",
    "event_id",
    "contract_id",
    "template_id",
    "package_name",
    "choice",
    "choice_argument",
    "child_event_ids",
    "exercise_result",
    "consuming",
    "acting_parties",
    "interface_id",
];

pub(super) const REASSIGNMENT: [&str; 4] = ["update_id", "offset", "record_time", "event"];

const ASSIGNMENT: [&str; 7] = [
    "submitter",
    "source_synchronizer",
    "target_synchronizer",
    "migration_id",
    "unassign_id",
    "created_event",
    "reassignment_counter",
];

const UNASSIGNMENT: [&str; 7] = [
    "submitter",
    "source_synchronizer",
    "migration_id",
    "target_synchronizer",
    "unassign_id",
    "reassignment_counter",
    "contract_id",
];

/// A transaction (it has `events_by_id`) or a reassignment (it has `event`).
pub(super) fn update(json: &Json<'_>, path: &mut JsonPath) -> Result<Update, PathError> {
    let map = json.as_object().ok_or_else(|| {
        path.error(format!("an update is an object (a transaction or a reassignment), found {}", read::describe(json)))
    })?;
    match (map.contains_key("events_by_id"), map.contains_key("event")) {
        (true, false) => transaction(json, path).map(Update::Transaction),
        (false, true) => reassignment(json, path).map(|r| Update::Reassignment(r.into())),
        (true, true) => {
            Err(path.error("an update has events_by_id (a transaction) or event (a reassignment), not both"))
        }
        (false, false) => Err(path.error("an update needs events_by_id (a transaction) or event (a reassignment)")),
    }
}

fn transaction(json: &Json<'_>, path: &mut JsonPath) -> Result<Transaction, PathError> {
    let obj = StrictObject::new(json, &TRANSACTION, path)?;
    let update_id = obj.bounded_id("update_id", path)?;
    let transaction = Transaction {
        update_id: update_id.into(),
        migration_id: obj.int64("migration_id", path)?,
        workflow_id: obj.string("workflow_id", path)?.into(),
        record_time: obj.timestamp("record_time", path)?,
        synchronizer_id: obj.bounded_id("synchronizer_id", path)?.into(),
        effective_at: obj.timestamp("effective_at", path)?,
        root_event_ids: obj.strings("root_event_ids", path)?,
        events_by_id: obj.field("events_by_id", path, |j, p| events(j, update_id, p))?,
        external_transaction_hash: obj
            .optional_field("external_transaction_hash", path, |j, p| read::string(j, p).map(String::from))?,
    };
    check_tree(&transaction, path)?;
    Ok(transaction)
}

/// `events_by_id`: non-empty, keys `<update_id>:<n>`, each event's id equal to its key.
fn events(json: &Json<'_>, update_id: &str, path: &mut JsonPath) -> Result<BTreeMap<String, Event>, PathError> {
    let map = read::object(json, path)?;
    if map.is_empty() {
        return Err(path.error("a transaction has at least one event"));
    }
    let mut events = BTreeMap::new();
    for (key, json) in map.iter() {
        let event = path.with(Segment::Key(key.into()), |p| {
            if !is_event_id_of(key, update_id) {
                return Err(p.error(format!(
                    "event ids are <update_id>:<n> with n a non-negative integer; expected {}",
                    quoted(&format!("{update_id}:<n>"))
                )));
            }
            let event = event(json, p)?;
            if event.event_id() != key {
                return Err(p.error_at(
                    Segment::Field("event_id"),
                    format!("must equal its key in events_by_id, {}", quoted(key)),
                ));
            }
            Ok(event)
        })?;
        events.insert(String::from(key), event);
    }
    Ok(events)
}

/// A created or exercised event, by its `event_type`.
fn event(json: &Json<'_>, path: &mut JsonPath) -> Result<Event, PathError> {
    let map = read::object(json, path)?;
    let event_type = match map.get("event_type").filter(|j| !j.is_null()) {
        Some(j) => path.with(Segment::Field("event_type"), |p| read::string(j, p))?,
        None => return Err(path.error("missing event_type")),
    };
    match event_type {
        "created_event" => created_event(json, path).map(Event::Created),
        "exercised_event" => exercised_event(json, path).map(Event::Exercised),
        other => Err(path.error_at(
            Segment::Field("event_type"),
            format!("unknown event type {}; expected created_event or exercised_event", quoted(other)),
        )),
    }
}

fn created_event(json: &Json<'_>, path: &mut JsonPath) -> Result<CreatedEvent, PathError> {
    let obj = StrictObject::new(json, &CREATED_EVENT, path)?;
    expect_event_type(&obj, "created_event", path)?;
    Ok(CreatedEvent {
        event_id: obj.id("event_id", path)?.into(),
        contract_id: obj.bounded_id("contract_id", path)?.into(),
        template_id: obj.field("template_id", path, template_id)?,
        package_name: obj.id("package_name", path)?.into(),
        create_arguments: obj.field("create_arguments", path, Record::parse)?,
        created_at: obj.timestamp("created_at", path)?,
        signatories: obj.bounded_strings("signatories", path)?,
        observers: obj.bounded_strings("observers", path)?,
        created_event_blob: obj.optional_field("created_event_blob", path, blob)?,
    })
}

fn exercised_event(json: &Json<'_>, path: &mut JsonPath) -> Result<ExercisedEvent, PathError> {
    let obj = StrictObject::new(json, &EXERCISED_EVENT, path)?;
    expect_event_type(&obj, "exercised_event", path)?;
    Ok(ExercisedEvent {
        event_id: obj.id("event_id", path)?.into(),
        contract_id: obj.bounded_id("contract_id", path)?.into(),
        template_id: obj.field("template_id", path, template_id)?,
        package_name: obj.id("package_name", path)?.into(),
        choice: obj.id("choice", path)?.into(),
        choice_argument: obj.field("choice_argument", path, Value::parse)?,
        child_event_ids: obj.strings("child_event_ids", path)?,
        exercise_result: obj.field("exercise_result", path, Value::parse)?,
        consuming: obj.boolean("consuming", path)?,
        acting_parties: obj.bounded_strings("acting_parties", path)?,
        interface_id: obj.optional_field("interface_id", path, template_id)?,
    })
}

fn expect_event_type(obj: &StrictObject<'_>, expected: &'static str, path: &mut JsonPath) -> Result<(), PathError> {
    let found = obj.string("event_type", path)?;
    if found == expected {
        Ok(())
    } else {
        Err(path.error_at(Segment::Field("event_type"), format!("expected {expected}, found {}", quoted(found))))
    }
}

fn template_id(json: &Json<'_>, path: &mut JsonPath) -> Result<TemplateId, PathError> {
    TemplateId::parse(read::string(json, path)?).map_err(|e| path.error(e.to_string()))
}

fn blob(json: &Json<'_>, path: &mut JsonPath) -> Result<Blob, PathError> {
    Blob::parse(read::string(json, path)?).map_err(|e| path.error(e.to_string()))
}

/// Every reference names an event, and the references make a forest that covers every
/// event exactly once (so the tree has no cycles and no orphans).
pub(super) fn check_tree(transaction: &Transaction, path: &JsonPath) -> Result<(), PathError> {
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

fn reassignment(json: &Json<'_>, path: &mut JsonPath) -> Result<Reassignment, PathError> {
    let obj = StrictObject::new(json, &REASSIGNMENT, path)?;
    Ok(Reassignment {
        update_id: obj.bounded_id("update_id", path)?.into(),
        offset: obj.id("offset", path)?.into(),
        record_time: obj.timestamp("record_time", path)?,
        event: obj.field("event", path, reassignment_event)?,
    })
}

/// An assignment (it has `created_event`) or an unassignment (it has `contract_id`).
fn reassignment_event(json: &Json<'_>, path: &mut JsonPath) -> Result<ReassignmentEvent, PathError> {
    let map = read::object(json, path)?;
    match (map.contains_key("created_event"), map.contains_key("contract_id")) {
        (true, false) => {
            let obj = StrictObject::new(json, &ASSIGNMENT, path)?;
            Ok(ReassignmentEvent::Assignment(Assignment {
                submitter: obj.bounded_id("submitter", path)?.into(),
                source_synchronizer: obj.bounded_id("source_synchronizer", path)?.into(),
                target_synchronizer: obj.bounded_id("target_synchronizer", path)?.into(),
                migration_id: obj.int64("migration_id", path)?,
                unassign_id: obj.bounded_id("unassign_id", path)?.into(),
                created_event: obj.field("created_event", path, created_event)?,
                reassignment_counter: obj.int64("reassignment_counter", path)?,
            }))
        }
        (false, true) => {
            let obj = StrictObject::new(json, &UNASSIGNMENT, path)?;
            Ok(ReassignmentEvent::Unassignment(Unassignment {
                submitter: obj.bounded_id("submitter", path)?.into(),
                source_synchronizer: obj.bounded_id("source_synchronizer", path)?.into(),
                migration_id: obj.int64("migration_id", path)?,
                target_synchronizer: obj.bounded_id("target_synchronizer", path)?.into(),
                unassign_id: obj.bounded_id("unassign_id", path)?.into(),
                reassignment_counter: obj.int64("reassignment_counter", path)?,
                contract_id: obj.bounded_id("contract_id", path)?.into(),
            }))
        }
        (true, true) => Err(path.error(
            "a reassignment event has created_event (an assignment) or contract_id (an unassignment), not both",
        )),
        (false, false) => {
            Err(path.error("a reassignment event needs created_event (an assignment) or contract_id (an unassignment)"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{self, edit};
    use super::*;
    use crate::time::Timestamp;
    use alloc::vec;
    use serde_json::Value as Json;
    use serde_json::json;

    fn error(json: Json) -> String {
        match fixtures::parse_both(&json) {
            Err(e) => e,
            Ok(u) => panic!("parsed: {u:?}"),
        }
    }

    #[test]
    fn a_transaction_parses_with_its_tree() {
        let Update::Transaction(t) = fixtures::parse_both(&fixtures::transaction()).unwrap() else {
            panic!("a transaction");
        };
        assert_eq!(t.update_id, "u1");
        assert_eq!(t.migration_id, 3);
        assert_eq!(t.workflow_id, "");
        assert_eq!(t.record_time.micros(), 1_726_839_089_552_807);
        assert_eq!(t.effective_at.micros(), 1_726_839_089_500_000);
        assert_eq!(t.synchronizer_id, "global-domain::1220aa");
        assert_eq!(t.external_transaction_hash, None);
        assert!(!t.is_import());
        let order: Vec<&str> = t.events_in_order().iter().map(|e| e.event_id()).collect();
        assert_eq!(order, ["u1:0", "u1:1", "u1:2", "u1:3"]);
        let Some(Event::Created(created)) = t.events_by_id.get("u1:1") else {
            panic!("u1:1 is a created event");
        };
        assert_eq!(created.template_id.qualified_name(), "Platform.Round:ClosedMiningRound");
        assert_eq!(created.create_arguments.lookup(&["round", "number"]).and_then(Value::as_int64), Some(7));
        assert_eq!(created.created_event_blob.as_ref().map(Blob::as_str), Some("AAEC"));
        let Some(Event::Exercised(exercised)) = t.events_by_id.get("u1:2") else {
            panic!("u1:2 is an exercised event");
        };
        assert!(!exercised.consuming);
        assert_eq!(exercised.interface_id.as_ref().map(TemplateId::as_str), Some("pkg1:Splice.Api.Holding:Holding"));
    }

    #[test]
    fn helpers_answer_for_every_kind_of_update() {
        let tx = fixtures::parse_both(&fixtures::transaction()).unwrap();
        let import = fixtures::parse_both(&fixtures::import()).unwrap();
        let assign = fixtures::parse_both(&fixtures::assignment()).unwrap();
        let unassign = fixtures::parse_both(&fixtures::unassignment()).unwrap();
        let cases = [
            (&tx, "u1", 3, "global-domain::1220aa", false),
            (&import, "00c3", 4, "global-domain::1220aa", true),
            (&assign, "r1", 3, "sync-b", false),
            (&unassign, "r0", 3, "sync-a", false),
        ];
        for (update, id, migration, synchronizer, is_import) in cases {
            assert_eq!(update.id(), id);
            assert_eq!(update.migration_id(), migration);
            assert_eq!(update.synchronizer_id(), synchronizer);
            assert_eq!(update.is_import(), is_import, "{id}");
        }
        assert_eq!(import.record_time(), Timestamp::MIN);
        assert!(tx.as_transaction().is_some() && tx.as_reassignment().is_none());
        let r = assign.as_reassignment().unwrap();
        assert_eq!(r.offset, "000000000000000042");
        assert_eq!(r.event.contract_id(), "c9");
        assert_eq!(r.event.reassignment_counter(), 1);
        assert!(matches!(r.event, ReassignmentEvent::Assignment(_)));
        let r = unassign.as_reassignment().unwrap();
        assert_eq!(r.event.contract_id(), "c9");
        assert!(matches!(r.event, ReassignmentEvent::Unassignment(_)));
    }

    #[test]
    fn optional_fields_may_be_null() {
        let tx = edit(fixtures::transaction(), "/external_transaction_hash", Some(Json::Null));
        let tx = edit(tx, "/events_by_id/u1:2/interface_id", Some(Json::Null));
        let tx = edit(tx, "/events_by_id/u1:1/created_event_blob", Some(Json::Null));
        let Update::Transaction(t) = fixtures::parse_both(&tx).unwrap() else { unreachable!() };
        assert_eq!(t.external_transaction_hash, None);
        let with_hash = edit(fixtures::transaction(), "/external_transaction_hash", Some(json!("ab")));
        let Update::Transaction(t) = fixtures::parse_both(&with_hash).unwrap() else { unreachable!() };
        assert_eq!(t.external_transaction_hash.as_deref(), Some("ab"));
    }

    /// (pointer, replacement or removal, error).
    type Case = (&'static str, Option<Json>, &'static str);

    #[test]
    fn every_structural_error_of_a_transaction_names_its_path() {
        let cases: Vec<Case> = vec![
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
        for (pointer, replacement, want) in cases {
            let got = error(edit(fixtures::transaction(), pointer, replacement.clone()));
            assert!(got.starts_with(want), "{pointer} = {replacement:?}:\n  got  {got}\n  want {want}");
        }
    }

    #[test]
    fn cycles_away_from_the_roots_are_orphans() {
        // u1:2 -> u1:2 is a cycle no root reaches once u1:0 no longer lists u1:2.
        let tx = edit(fixtures::transaction(), "/events_by_id/u1:0/child_event_ids/1", None);
        let tx = edit(tx, "/events_by_id/u1:2/child_event_ids/0", Some(json!("u1:2")));
        assert_eq!(error(tx), "events_by_id[\"u1:2\"]: not reachable from root_event_ids through child_event_ids");
    }

    #[test]
    fn every_structural_error_of_a_reassignment_names_its_path() {
        let assignment: Vec<Case> = vec![
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
        for (pointer, replacement, want) in assignment {
            let got = error(edit(fixtures::assignment(), pointer, replacement.clone()));
            assert!(got.starts_with(want), "{pointer} = {replacement:?}:\n  got  {got}\n  want {want}");
        }
        let unassignment: Vec<Case> = vec![
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
        for (pointer, replacement, want) in unassignment {
            let got = error(edit(fixtures::unassignment(), pointer, replacement.clone()));
            assert!(got.starts_with(want), "{pointer} = {replacement:?}:\n  got  {got}\n  want {want}");
        }
    }

    #[test]
    fn what_is_not_an_update_is_refused() {
        assert_eq!(error(json!([])), "an update is an object (a transaction or a reassignment), found an array");
        assert_eq!(error(json!(null)), "an update is an object (a transaction or a reassignment), found null");
        assert_eq!(error(json!({})), "an update needs events_by_id (a transaction) or event (a reassignment)");
        assert_eq!(
            error(json!({"update_id": "u1"})),
            "an update needs events_by_id (a transaction) or event (a reassignment)"
        );
    }

    /// A transaction whose update id is `id` (its event ids follow it).
    fn transaction_with_id(id: &str) -> Json {
        let text = fixtures::transaction().to_string().replace("\"u1", &alloc::format!("\"{id}"));
        serde_json::from_str(&text).unwrap()
    }

    #[test]
    fn every_id_over_512_bytes_is_refused_naming_its_field() {
        let long = json!("x".repeat(513));
        let too_long = "is 513 bytes long; ids are at most 512 bytes";
        let transaction: Vec<(&str, &str)> = vec![
            ("/synchronizer_id", "synchronizer_id"),
            ("/events_by_id/u1:3/contract_id", "events_by_id[\"u1:3\"].contract_id"),
            ("/events_by_id/u1:0/contract_id", "events_by_id[\"u1:0\"].contract_id"),
            ("/events_by_id/u1:3/signatories/0", "events_by_id[\"u1:3\"].signatories[0]"),
            ("/events_by_id/u1:3/observers/0", "events_by_id[\"u1:3\"].observers[0]"),
            ("/events_by_id/u1:2/acting_parties/1", "events_by_id[\"u1:2\"].acting_parties[1]"),
        ];
        for (pointer, field) in transaction {
            let got = error(edit(fixtures::transaction(), pointer, Some(long.clone())));
            assert_eq!(got, alloc::format!("{field}: {too_long}"), "{pointer}");
        }
        let got = error(transaction_with_id(&"u".repeat(513)));
        assert_eq!(got, alloc::format!("update_id: {too_long}"));
        let reassignment: Vec<(Json, &str, &str)> = vec![
            (fixtures::assignment(), "/update_id", "update_id"),
            (fixtures::assignment(), "/event/submitter", "event.submitter"),
            (fixtures::assignment(), "/event/source_synchronizer", "event.source_synchronizer"),
            (fixtures::assignment(), "/event/target_synchronizer", "event.target_synchronizer"),
            (fixtures::assignment(), "/event/unassign_id", "event.unassign_id"),
            (fixtures::assignment(), "/event/created_event/contract_id", "event.created_event.contract_id"),
            (fixtures::unassignment(), "/event/contract_id", "event.contract_id"),
            (fixtures::unassignment(), "/event/source_synchronizer", "event.source_synchronizer"),
            (fixtures::unassignment(), "/event/target_synchronizer", "event.target_synchronizer"),
            (fixtures::unassignment(), "/event/submitter", "event.submitter"),
            (fixtures::unassignment(), "/event/unassign_id", "event.unassign_id"),
        ];
        for (base, pointer, field) in reassignment {
            let got = error(edit(base, pointer, Some(long.clone())));
            assert_eq!(got, alloc::format!("{field}: {too_long}"), "{pointer}");
        }
    }

    #[test]
    fn ids_of_512_bytes_are_taken_by_both_parsers() {
        let id = "x".repeat(512);
        let mut tx = transaction_with_id(&"u".repeat(512));
        for pointer in ["/synchronizer_id", "/events_by_id/u1:3/contract_id", "/events_by_id/u1:3/observers/0"] {
            let pointer = pointer.replace("u1", &"u".repeat(512));
            tx = edit(tx, &pointer, Some(json!(id)));
        }
        let line = serde_json::to_vec(&json!({ "update": tx })).unwrap();
        // parse_both checks that the fast path, when it takes a line, agrees.
        assert!(super::super::fast::update_line(&line).is_some());
        let update = fixtures::parse_both(&tx).unwrap();
        assert_eq!(update.id().len(), 512);
        assert_eq!(update.synchronizer_id(), id);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(128))]

        #[test]
        fn arbitrary_json_never_panics(json in fixtures::any_json()) {
            let _ = fixtures::parse_both(&json);
            let _ = fixtures::parse_both(&json!({"update_id": "u1", "events_by_id": json.clone()}));
            let _ = fixtures::parse_both(&json!({"event": json}));
        }

        #[test]
        fn any_element_replaced_never_panics(
            index in proptest::num::usize::ANY,
            replacement in fixtures::any_json(),
            which in 0usize..3,
        ) {
            let base = [fixtures::transaction(), fixtures::assignment(), fixtures::unassignment()]
                .into_iter()
                .nth(which)
                .unwrap();
            let pointers = fixtures::pointers(&base);
            let pointer = &pointers[index % pointers.len()];
            let edited = edit(base, pointer, Some(replacement));
            if let Err(e) = fixtures::parse_both(&edited) {
                proptest::prop_assert!(!e.is_empty());
            }
        }
    }
}
