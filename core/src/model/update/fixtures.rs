//! Test fixtures: sample updates in the ingest form, a way to edit them, and proptest
//! strategies for updates and for arbitrary JSON.

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use proptest::prelude::*;
use serde_json::{Value as Json, json};

use super::{
    Assignment, Blob, CreatedEvent, Event, ExercisedEvent, Reassignment, ReassignmentEvent, TemplateId, Transaction,
    Unassignment, Update,
};
use crate::model::time::Timestamp;
use crate::model::value::arbitrary;

/// A transaction: root `u1:0` (exercised, consuming) with children `u1:1` (created, with
/// a blob) and `u1:2` (exercised through an interface, no children), and root `u1:3`
/// (created). Timestamps are written in several RFC 3339 styles.
pub(super) fn transaction() -> Json {
    json!({
        "update_id": "u1",
        "migration_id": 3,
        "workflow_id": "",
        "record_time": "2024-09-20T13:31:29.552807Z",
        "synchronizer_id": "global-domain::1220aa",
        "effective_at": "2024-09-20T15:31:29.5+02:00",
        "root_event_ids": ["u1:0", "u1:3"],
        "events_by_id": {
            "u1:0": {
                "event_type": "exercised_event",
                "event_id": "u1:0",
                "contract_id": "c0",
                "template_id": "pkg0:Platform.Round:OpenMiningRound",
                "package_name": "platform",
                "choice": "Round_Close",
                "choice_argument": {"record": {"fields": [
                    {"label": "reason", "value": {"text": "done"}}
                ]}},
                "child_event_ids": ["u1:1", "u1:2"],
                "exercise_result": {"contractId": "c1"},
                "consuming": true,
                "acting_parties": ["dso::1220"]
            },
            "u1:1": {
                "event_type": "created_event",
                "event_id": "u1:1",
                "contract_id": "c1",
                "template_id": "pkg0:Platform.Round:ClosedMiningRound",
                "package_name": "platform",
                "create_arguments": {"record": {"fields": [
                    {"label": "round", "value": {"record": {"fields": [
                        {"label": "number", "value": {"int64": "7"}}
                    ]}}},
                    {"label": "dso", "value": {"party": "dso::1220"}},
                    {"label": "closedAt", "value": {"timestamp": "1726839089552807"}}
                ]}},
                "created_at": "2024-09-20T13:31:29.5Z",
                "signatories": ["dso::1220"],
                "observers": [],
                "created_event_blob": "AAEC"
            },
            "u1:2": {
                "event_type": "exercised_event",
                "event_id": "u1:2",
                "contract_id": "c2",
                "template_id": "pkg0:Platform.Coin:Coin",
                "package_name": "platform",
                "choice": "Holding_Fetch",
                "choice_argument": {"unit": {}},
                "child_event_ids": [],
                "exercise_result": {"optional": {"value": {"optional": {}}}},
                "consuming": false,
                "acting_parties": ["alice::1220", "dso::1220"],
                "interface_id": "pkg1:Splice.Api.Holding:Holding"
            },
            "u1:3": {
                "event_type": "created_event",
                "event_id": "u1:3",
                "contract_id": "c3",
                "template_id": "pkg0:Platform.DSO.CoinPrice:CoinPriceVote",
                "package_name": "platform",
                "create_arguments": {"record": {"fields": [
                    {"label": "sv", "value": {"party": "sv1::1220"}},
                    {"label": "price", "value": {"optional": {"value": {"numeric": "0E-10"}}}},
                    {"label": "day", "value": {"date": 19986}}
                ]}},
                "created_at": "2024-09-20T13:31:29.500000Z",
                "signatories": ["dso::1220"],
                "observers": ["sv1::1220"]
            }
        }
    })
}

/// An import update: one created event, recorded at `0001-01-01T00:00:00Z`.
pub(super) fn import() -> Json {
    json!({
        "update_id": "00c3",
        "migration_id": 4,
        "workflow_id": "",
        "record_time": "0001-01-01T00:00:00.000000Z",
        "synchronizer_id": "global-domain::1220aa",
        "effective_at": "2024-09-20T13:31:29.5Z",
        "root_event_ids": ["00c3:0"],
        "events_by_id": {
            "00c3:0": {
                "event_type": "created_event",
                "event_id": "00c3:0",
                "contract_id": "00c3",
                "template_id": "pkg0:Platform.CoinRules:CoinRules",
                "package_name": "platform",
                "create_arguments": {"record": {}},
                "created_at": "2024-01-01T00:00:00Z",
                "signatories": ["dso::1220"],
                "observers": []
            }
        }
    })
}

/// An assignment of contract `c9` to `sync-b`.
pub(super) fn assignment() -> Json {
    json!({
        "update_id": "r1",
        "offset": "000000000000000042",
        "record_time": "2024-09-20T13:31:30Z",
        "event": {
            "submitter": "alice::1220",
            "source_synchronizer": "sync-a",
            "target_synchronizer": "sync-b",
            "migration_id": 3,
            "unassign_id": "un1",
            "created_event": {
                "event_type": "created_event",
                "event_id": "r1:0",
                "contract_id": "c9",
                "template_id": "pkg0:Platform.Coin:LockedCoin",
                "package_name": "platform",
                "create_arguments": {"record": {"fields": [
                    {"label": "owner", "value": {"party": "alice::1220"}},
                    {"label": "amount", "value": {"numeric": "-1.5000000000"}}
                ]}},
                "created_at": "2024-09-19T00:00:00Z",
                "signatories": ["alice::1220"],
                "observers": [],
                "created_event_blob": "Zm9vYg=="
            },
            "reassignment_counter": 1
        }
    })
}

/// An unassignment of contract `c9` from `sync-a`.
pub(super) fn unassignment() -> Json {
    json!({
        "update_id": "r0",
        "offset": "41",
        "record_time": "2024-09-20T13:31:29.999999Z",
        "event": {
            "submitter": "alice::1220",
            "source_synchronizer": "sync-a",
            "migration_id": 3,
            "target_synchronizer": "sync-b",
            "unassign_id": "un1",
            "reassignment_counter": 1,
            "contract_id": "c9"
        }
    })
}

/// `json` with the element at the JSON pointer `pointer` replaced by `value`, or removed
/// when `value` is `None`.
pub(super) fn edit(mut json: Json, pointer: &str, value: Option<Json>) -> Json {
    let (parent, last) = pointer.rsplit_once('/').expect("a pointer below the root");
    let container = json.pointer_mut(parent).expect("the parent exists");
    match (container, value) {
        (Json::Object(map), Some(value)) => {
            map.insert(last.into(), value);
        }
        (Json::Object(map), None) => {
            map.remove(last).expect("the field exists");
        }
        (Json::Array(items), Some(value)) => {
            let index: usize = last.parse().expect("an index");
            if index == items.len() {
                items.push(value);
            } else {
                items[index] = value;
            }
        }
        (Json::Array(items), None) => {
            items.remove(last.parse().expect("an index"));
        }
        _ => panic!("{parent} is not a container"),
    }
    json
}

/// Every JSON pointer into `json`, the root excluded.
pub(super) fn pointers(json: &Json) -> Vec<String> {
    fn walk(json: &Json, at: &str, out: &mut Vec<String>) {
        let children: Vec<(String, &Json)> = match json {
            Json::Object(map) => map.iter().map(|(k, v)| (k.clone(), v)).collect(),
            Json::Array(items) => items.iter().enumerate().map(|(i, v)| (format!("{i}"), v)).collect(),
            _ => Vec::new(),
        };
        for (key, child) in children {
            let pointer = format!("{at}/{key}");
            out.push(pointer.clone());
            walk(child, &pointer, out);
        }
    }
    let mut out = Vec::new();
    walk(json, "", &mut out);
    out
}

/// Arbitrary JSON whose keys come from the update and value vocabulary, so that it
/// reaches deep into the parsers.
pub(super) fn any_json() -> impl Strategy<Value = Json> {
    const KEYS: &[&str] = &[
        "update_id",
        "migration_id",
        "record_time",
        "events_by_id",
        "event",
        "event_type",
        "event_id",
        "child_event_ids",
        "root_event_ids",
        "created_event",
        "contract_id",
        "record",
        "fields",
        "label",
        "value",
        "list",
        "elements",
        "optional",
        "int64",
        "timestamp",
        "date",
        "u1:0",
        "u1:1",
        "unit",
        "textMap",
        "entries",
        "key",
    ];
    let leaf = prop_oneof![
        Just(Json::Null),
        any::<bool>().prop_map(Json::Bool),
        any::<i64>().prop_map(Json::from),
        any::<f64>().prop_map(Json::from),
        proptest::sample::select(KEYS).prop_map(Json::from),
        "[a-z0-9:=.+-]{0,8}".prop_map(Json::String),
    ];
    leaf.prop_recursive(5, 64, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Json::Array),
            proptest::collection::vec((proptest::sample::select(KEYS), inner), 0..6)
                .prop_map(|entries| Json::Object(entries.into_iter().map(|(k, v)| (k.into(), v)).collect())),
        ]
    })
}

fn timestamp() -> impl Strategy<Value = Timestamp> {
    (Timestamp::MIN.micros()..=Timestamp::MAX.micros()).prop_map(|m| Timestamp::from_micros(m).expect("in range"))
}

fn template_id() -> impl Strategy<Value = TemplateId> {
    "[0-9a-f]{1,8}:[A-Z][a-z]{0,5}(\\.[A-Z][a-z]{0,5}){0,2}:[A-Z][a-zA-Z]{0,8}"
        .prop_map(|text| TemplateId::parse(&text).expect("the regex matches template ids"))
}

fn parties() -> impl Strategy<Value = Vec<String>> {
    proptest::collection::vec("[a-z]{1,5}::1220[0-9a-f]{0,4}", 0..3)
}

fn blob() -> impl Strategy<Value = Option<Blob>> {
    proptest::option::of(proptest::collection::vec(any::<u8>(), 0..12))
        .prop_map(|bytes| bytes.map(|b| Blob::parse(&super::blob::encode(&b)).expect("encoded")))
}

fn created_event(event_id: String) -> impl Strategy<Value = CreatedEvent> {
    ("[0-9a-f]{2,10}", template_id(), arbitrary::record(), timestamp(), parties(), parties(), blob()).prop_map(
        move |(contract_id, template_id, create_arguments, created_at, signatories, observers, blob)| CreatedEvent {
            event_id: event_id.clone(),
            contract_id,
            template_id,
            package_name: "platform".into(),
            create_arguments: crate::model::value::Value::Record(create_arguments),
            created_at,
            signatories,
            observers,
            created_event_blob: blob,
        },
    )
}

/// A transaction: root `<id>:0` is an exercised event whose children are created events
/// `<id>:1..`, and a last created event is a second root.
fn transaction_update() -> impl Strategy<Value = Update> {
    ("[a-z0-9]{1,6}", 1usize..12).prop_flat_map(|(update_id, children)| {
        let created: Vec<_> = (1..=children + 1).map(|i| created_event(format!("{update_id}:{i}"))).collect();
        (
            Just(update_id),
            any::<i64>(),
            "\\PC{0,6}",
            timestamp(),
            timestamp(),
            created,
            (arbitrary::value(), arbitrary::value(), any::<bool>(), parties()),
            proptest::option::of(template_id()),
            proptest::option::of("[0-9a-f]{0,8}"),
        )
            .prop_map(
                |(
                    update_id,
                    migration_id,
                    workflow_id,
                    record_time,
                    effective_at,
                    mut created,
                    exercise,
                    interface_id,
                    hash,
                )| {
                    let (choice_argument, exercise_result, consuming, acting_parties) = exercise;
                    let last = created.pop().expect("at least two created events");
                    let root = ExercisedEvent {
                        event_id: format!("{update_id}:0"),
                        contract_id: "c0".into(),
                        template_id: TemplateId::parse("p:M:E").expect("valid"),
                        package_name: "platform".into(),
                        choice: "Choice".into(),
                        choice_argument,
                        child_event_ids: created.iter().map(|e| e.event_id.clone()).collect(),
                        exercise_result,
                        consuming,
                        acting_parties,
                        interface_id,
                    };
                    let mut events_by_id = BTreeMap::new();
                    let root_event_ids = vec![root.event_id.clone(), last.event_id.clone()];
                    events_by_id.insert(root.event_id.clone(), Event::Exercised(root));
                    for e in created.into_iter().chain([last]) {
                        events_by_id.insert(e.event_id.clone(), Event::Created(e));
                    }
                    Update::Transaction(Transaction {
                        update_id,
                        migration_id,
                        workflow_id,
                        record_time,
                        synchronizer_id: "sync".into(),
                        effective_at,
                        root_event_ids,
                        events_by_id,
                        external_transaction_hash: hash,
                    })
                },
            )
    })
}

fn reassignment_update() -> impl Strategy<Value = Update> {
    let assignment = (any::<i64>(), any::<i64>(), created_event("r:0".into())).prop_map(
        |(migration_id, reassignment_counter, created_event)| {
            ReassignmentEvent::Assignment(Assignment {
                submitter: "alice".into(),
                source_synchronizer: "a".into(),
                target_synchronizer: "b".into(),
                migration_id,
                unassign_id: "un".into(),
                created_event,
                reassignment_counter,
            })
        },
    );
    let unassignment =
        (any::<i64>(), any::<i64>(), "[0-9a-f]{1,8}").prop_map(|(migration_id, reassignment_counter, contract_id)| {
            ReassignmentEvent::Unassignment(Unassignment {
                submitter: "alice".into(),
                source_synchronizer: "a".into(),
                migration_id,
                target_synchronizer: "b".into(),
                unassign_id: "un".into(),
                reassignment_counter,
                contract_id,
            })
        });
    ("[a-z0-9]{1,6}", "[0-9]{1,18}", timestamp(), prop_oneof![assignment, unassignment]).prop_map(
        |(update_id, offset, record_time, event)| {
            Update::Reassignment(Reassignment { update_id, offset, record_time, event }.into())
        },
    )
}

/// Any update.
pub(super) fn any_update() -> impl Strategy<Value = Update> {
    prop_oneof![transaction_update(), reassignment_update()]
}

/// Parses `update` as the strict parser does and, as an ingest line, as the fast path
/// does; whenever the fast path takes the line it must build what the strict parser
/// builds. The strict parser's result, its error as text.
pub(super) fn parse_both(update: &Json) -> Result<Update, String> {
    let strict =
        Update::parse(&crate::model::json::Json::from(update)).map_err(|e| alloc::string::ToString::to_string(&e));
    let line = serde_json::to_vec(&serde_json::json!({ "update": update })).unwrap();
    if let Some(fast) = super::fast::update_line(&line) {
        assert_eq!(Ok(fast), strict, "the fast path took {}", String::from_utf8_lossy(&line));
    }
    strict
}

/// The error of `update`, which must not parse (through both readers: [`parse_both`]).
pub(super) fn parse_error(update: &Json) -> String {
    match parse_both(update) {
        Err(e) => e,
        Ok(u) => panic!("parsed: {u:?}"),
    }
}

/// A structural error case: a JSON pointer into a fixture, what replaces the element
/// there (`None`: it is removed), and how the error must start.
pub(super) type Case = (&'static str, Option<Json>, &'static str);

/// Checks that each case, applied to `base`, fails to parse with its error.
pub(super) fn assert_errors(base: impl Fn() -> Json, cases: &[Case]) {
    for (pointer, replacement, want) in cases {
        let got = parse_error(&edit(base(), pointer, replacement.clone()));
        assert!(got.starts_with(want), "{pointer} = {replacement:?}:\n  got  {got}\n  want {want}");
    }
}
