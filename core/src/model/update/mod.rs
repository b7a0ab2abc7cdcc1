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
//! Every parsed update's ids are bounded ([`crate::model::ids`]): its update id, synchronizer
//! ids, contract ids, unassign id and party ids (submitters, signatories, observers,
//! acting parties) are at most [`MAX_ID_BYTES`](crate::model::ids::MAX_ID_BYTES) bytes each.
//!
//! An import update is a transaction whose record time is `0001-01-01T00:00:00.000000Z`
//! ([`Timestamp::MIN`]): the state of the previous migration re-imported after a hard
//! migration ([`Update::is_import`]).
//!
//! # Where the shape lives
//!
//! Each type is declared once, in its own module, with its one reader and its one
//! writer: [`Transaction`] and [`Event`] in `transaction` (with the check of the
//! event tree), [`CreatedEvent`] in `created`, [`ExercisedEvent`] in `exercised`,
//! [`Reassignment`] and its events in `reassignment`; [`Update`] here tells a
//! transaction from a reassignment.
//!
//! - A reader is generic over a [`Source`]: the same code reads
//!   a parsed JSON document with the path of every problem ([`Update::parse`]) and an
//!   ingest line straight from its bytes (`fast::update_line`), which gives up on
//!   anything unusual so that the document reader runs for the error. A reader names
//!   the type's fields on the wire (its `FIELDS`, refusing any other) and reads them
//!   in the order they are written, so the first problem in that order is the one
//!   reported ([`Update::read`]).
//! - A writer appends JSON text with the keys and punctuation as literals, in one
//!   form: a value encoding, and whether created-event blobs are written (the
//!   canonical ingest form writes them, a response body does not). A read renders the
//!   body it serves with it ([`Update::body_text`]).
//! - The binary form the node stores of each update has its own writer and reader,
//!   all in [`binary`] (and [`crate::model::value::binary`] for values), as it follows
//!   the types' fields in order rather than any wire shape.
//!
//! Adding a field to a type touches its module (the struct, its `FIELDS`, one line of
//! the reader, one of the writer), the binary form (a line of each of its writer and
//! reader, and a new [`binary::FORM_VERSION`] with the layout version), the sample
//! updates and generators of the tests (`fixtures`), and whatever builds the type by
//! hand (the demo generator of the native host).

pub mod binary;
mod blob;
mod created;
mod exercised;
mod ids;
mod reassignment;
mod transaction;

#[cfg(test)]
mod fixtures;

use alloc::boxed::Box;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use serde::ser::{Serialize, Serializer};
use serde_json::Value as Json;

pub use blob::{Base64Error, Blob};
pub use created::CreatedEvent;
pub use exercised::ExercisedEvent;
pub use ids::{TemplateId, TemplateIdError, is_event_id_of};
pub use reassignment::{Assignment, Reassignment, ReassignmentEvent, Unassignment};
pub use transaction::{Event, Transaction};

use crate::model::time::Timestamp;
pub use crate::model::value::Encoding;
use crate::model::value::render::{raw, to_json};
use crate::model::value::source::Tree;
use crate::model::value::{JsonPath, PathError, Source};

/// The fast path of update ingest: an ingest line straight to a typed [`Update`].
///
/// Ingest spends most of its time reading updates, and reading one through a JSON
/// document first ([`Update::parse`]) builds and drops a tree as large as the update.
/// [`update_line`](fast::update_line) reads the line once, into the typed update, with
/// the readers [`Update::parse`] uses, and gives up (`None`) on anything they would
/// refuse and on anything the byte reader does not read (such as strings with
/// escapes); the caller then runs [`Update::parse`], which names the problem or takes
/// the update. So errors are always the document reader's, and the two agree on every
/// update this path takes (the property tests check this on generated updates, the
/// `ingest_line` fuzz target on arbitrary bytes).
pub mod fast {
    use super::Update;
    use crate::model::json::scan::{Cursor, once};

    /// An ingest line `{"update": <update>}`, if this path takes it.
    pub fn update_line(line: &[u8]) -> Option<Update> {
        let text = core::str::from_utf8(line).ok()?;
        let mut cursor = Cursor::new(text);
        let mut update = None;
        cursor.object(|cursor, key| match key {
            "update" => once(&mut update, Update::read(cursor).ok()?),
            _ => None,
        })?;
        cursor.at_end().then_some(update?)
    }
}

/// One item of update history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Update {
    /// A transaction: a tree of events on one synchronizer.
    Transaction(Transaction),
    /// A contract moving between synchronizers (boxed: it holds a whole created event,
    /// twice the size of a transaction's fields).
    Reassignment(Box<Reassignment>),
}

/// How to write an update: the value encoding, and whether it is the canonical ingest
/// form, which writes blobs and an undecoded value's both renderings (a response body
/// writes neither: no blob, and an undecoded value as the upstream rendered it in the
/// encoding).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Form {
    pub(crate) encoding: Encoding,
    pub(crate) ingest: bool,
}

impl Form {
    /// Appends `value` in this form.
    pub(crate) fn value(self, out: &mut String, value: &crate::model::value::Value) {
        match self.ingest {
            true => value.write_ingest(out),
            false => value.write(out, self.encoding),
        }
    }
}

/// An update written in one form: serializing it writes that form.
#[derive(Debug, Clone, Copy)]
pub struct Rendered<'a> {
    update: &'a Update,
    form: Form,
}

impl Update {
    /// Parses the ingest form of an update; see the module docs.
    pub fn parse(json: &crate::model::json::Json<'_>) -> Result<Update, PathError> {
        Update::read(&mut Tree::new(json, &mut JsonPath::new()))
    }

    /// Reads the ingest form of an update from `source`: a transaction (it has
    /// `events_by_id`) or a reassignment (it has `event`).
    pub fn read<'s, S: Source<'s>>(source: &mut S) -> Result<Update, S::Error> {
        let mut object = source
            .object_or(|found| format!("an update is an object (a transaction or a reassignment), found {found}"))?;
        match source.either(&mut object, "events_by_id", "event") {
            (true, false) => Transaction::read_fields(source, object).map(Update::Transaction),
            (false, true) => Reassignment::read_fields(source, object).map(|r| Update::Reassignment(r.into())),
            (true, true) => {
                Err(source.error(|| "an update has events_by_id (a transaction) or event (a reassignment), not both"))
            }
            (false, false) => {
                Err(source.error(|| "an update needs events_by_id (a transaction) or event (a reassignment)"))
            }
        }
    }

    /// Appends the update in `form`.
    pub(crate) fn write(&self, out: &mut String, form: Form) {
        match self {
            Update::Transaction(t) => t.write(out, form),
            Update::Reassignment(r) => r.write(out, form),
        }
    }

    /// The `GET /v2/updates/{id}` body with values in `encoding`, to serialize:
    /// optional fields omitted, `events_by_id` sorted by key, timestamps as
    /// `YYYY-MM-DDTHH:MM:SS.ffffffZ`, and no `created_event_blob`.
    pub fn encoded(&self, encoding: Encoding) -> Rendered<'_> {
        Rendered { update: self, form: Form { encoding, ingest: false } }
    }

    /// The `GET /v2/updates/{id}` body with values in `encoding` ([`Update::encoded`]),
    /// as text.
    pub fn body_text(&self, encoding: Encoding) -> String {
        let mut out = String::with_capacity(4096);
        self.write(&mut out, Form { encoding, ingest: false });
        out
    }

    /// The `GET /v2/updates/{id}` body with values in `encoding`, as a JSON tree.
    pub fn render(&self, encoding: Encoding) -> Json {
        to_json(&self.encoded(encoding))
    }

    /// The canonical ingest form: `protobuf_json` values and blobs. Parsing it gives
    /// this update back, and two updates are equal exactly when their ingest forms are.
    pub fn to_ingest_json(&self) -> Json {
        to_json(&Rendered { update: self, form: Form { encoding: Encoding::ProtobufJson, ingest: true } })
    }

    /// The canonical ingest form ([`Update::to_ingest_json`]) as text: what an
    /// `{"update": ...}` ingest record holds.
    pub fn ingest_text(&self) -> String {
        let mut out = String::with_capacity(4096);
        self.write(&mut out, Form { encoding: Encoding::ProtobufJson, ingest: true });
        out
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

    /// Its created events: a transaction's, or an assignment's one.
    pub fn created_events(&self) -> Vec<&CreatedEvent> {
        match self {
            Update::Transaction(t) => t
                .events_by_id
                .values()
                .filter_map(|event| match event {
                    Event::Created(created) => Some(created),
                    Event::Exercised(_) => None,
                })
                .collect(),
            Update::Reassignment(r) => match &r.event {
                ReassignmentEvent::Assignment(a) => alloc::vec![&a.created_event],
                ReassignmentEvent::Unassignment(_) => Vec::new(),
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

impl Serialize for Rendered<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut out = String::with_capacity(4096);
        self.update.write(&mut out, self.form);
        raw(s, &out)
    }
}

#[cfg(test)]
mod tests {
    use super::fast::update_line;
    use super::fixtures::{self, edit};
    use super::*;
    use crate::model::value::Value;
    use alloc::string::ToString;
    use alloc::vec;
    use serde_json::Value as Json;
    use serde_json::json;

    fn text(json: &Json) -> String {
        serde_json::to_string(json).unwrap()
    }

    fn parse(json: &Json) -> Update {
        Update::parse(&crate::model::json::Json::from(json)).unwrap()
    }

    /// The transaction fixture as `GET /v2/updates` writes it in protobuf_json:
    /// timestamps normalised, no blob.
    fn normalised_transaction() -> Json {
        let json = edit(fixtures::transaction(), "/effective_at", Some(json!("2024-09-20T13:31:29.500000Z")));
        let json = edit(json, "/events_by_id/u1:1/created_at", Some(json!("2024-09-20T13:31:29.500000Z")));
        edit(json, "/events_by_id/u1:1/created_event_blob", None)
    }

    fn line(update: &serde_json::Value) -> alloc::vec::Vec<u8> {
        serde_json::to_vec(&json!({ "update": update })).unwrap()
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

    #[test]
    fn what_is_not_an_update_is_refused() {
        assert_eq!(
            fixtures::parse_error(&json!([])),
            "an update is an object (a transaction or a reassignment), found an array"
        );
        assert_eq!(
            fixtures::parse_error(&json!(null)),
            "an update is an object (a transaction or a reassignment), found null"
        );
        assert_eq!(
            fixtures::parse_error(&json!({})),
            "an update needs events_by_id (a transaction) or event (a reassignment)"
        );
        assert_eq!(
            fixtures::parse_error(&json!({"update_id": "u1"})),
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
            let got = fixtures::parse_error(&edit(fixtures::transaction(), pointer, Some(long.clone())));
            assert_eq!(got, alloc::format!("{field}: {too_long}"), "{pointer}");
        }
        let got = fixtures::parse_error(&transaction_with_id(&"u".repeat(513)));
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
            let got = fixtures::parse_error(&edit(base, pointer, Some(long.clone())));
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
        assert!(update_line(&line).is_some());
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

    #[test]
    fn a_transaction_renders_compact_json_exactly() {
        let want = json!({
            "update_id": "u1",
            "migration_id": 3,
            "workflow_id": "",
            "record_time": "2024-09-20T13:31:29.552807Z",
            "synchronizer_id": "global-domain::1220aa",
            "effective_at": "2024-09-20T13:31:29.500000Z",
            "root_event_ids": ["u1:0", "u1:3"],
            "events_by_id": {
                "u1:0": {
                    "event_type": "exercised_event",
                    "event_id": "u1:0",
                    "contract_id": "c0",
                    "template_id": "pkg0:Platform.Round:OpenMiningRound",
                    "package_name": "platform",
                    "choice": "Round_Close",
                    "choice_argument": {"reason": "done"},
                    "child_event_ids": ["u1:1", "u1:2"],
                    "exercise_result": "c1",
                    "consuming": true,
                    "acting_parties": ["dso::1220"]
                },
                "u1:1": {
                    "event_type": "created_event",
                    "event_id": "u1:1",
                    "contract_id": "c1",
                    "template_id": "pkg0:Platform.Round:ClosedMiningRound",
                    "package_name": "platform",
                    "create_arguments": {
                        "round": {"number": "7"},
                        "dso": "dso::1220",
                        "closedAt": "2024-09-20T13:31:29.552807Z"
                    },
                    "created_at": "2024-09-20T13:31:29.500000Z",
                    "signatories": ["dso::1220"],
                    "observers": []
                },
                "u1:2": {
                    "event_type": "exercised_event",
                    "event_id": "u1:2",
                    "contract_id": "c2",
                    "template_id": "pkg0:Platform.Coin:Coin",
                    "package_name": "platform",
                    "choice": "Holding_Fetch",
                    "choice_argument": {},
                    "child_event_ids": [],
                    "exercise_result": [],
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
                    "create_arguments": {"sv": "sv1::1220", "price": "0E-10", "day": "2024-09-20"},
                    "created_at": "2024-09-20T13:31:29.500000Z",
                    "signatories": ["dso::1220"],
                    "observers": ["sv1::1220"]
                }
            }
        });
        let got = parse(&fixtures::transaction()).render(Encoding::CompactJson);
        assert_eq!(text(&got), text(&want));
    }

    #[test]
    fn a_transaction_renders_protobuf_json_normalised_and_without_blobs() {
        let update = parse(&fixtures::transaction());
        let got = update.render(Encoding::ProtobufJson);
        assert_eq!(got, normalised_transaction());
        assert!(!text(&got).contains("created_event_blob"));
        assert!(!text(&got).contains("null"));
    }

    #[test]
    fn reassignments_render_in_both_encodings() {
        let assignment = parse(&fixtures::assignment());
        let compact = json!({
            "update_id": "r1",
            "offset": "000000000000000042",
            "record_time": "2024-09-20T13:31:30.000000Z",
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
                    "create_arguments": {"owner": "alice::1220", "amount": "-1.5000000000"},
                    "created_at": "2024-09-19T00:00:00.000000Z",
                    "signatories": ["alice::1220"],
                    "observers": []
                },
                "reassignment_counter": 1
            }
        });
        assert_eq!(text(&assignment.render(Encoding::CompactJson)), text(&compact));
        let protobuf = edit(fixtures::assignment(), "/record_time", Some(json!("2024-09-20T13:31:30.000000Z")));
        let protobuf = edit(protobuf, "/event/created_event/created_at", Some(json!("2024-09-19T00:00:00.000000Z")));
        let protobuf = edit(protobuf, "/event/created_event/created_event_blob", None);
        assert_eq!(assignment.render(Encoding::ProtobufJson), protobuf);

        // An unassignment carries no values: both encodings are the ingested JSON.
        let unassignment = parse(&fixtures::unassignment());
        for encoding in [Encoding::CompactJson, Encoding::ProtobufJson] {
            assert_eq!(text(&unassignment.render(encoding)), text(&fixtures::unassignment()));
        }
    }

    #[test]
    fn events_by_id_keys_come_out_sorted() {
        let mut json = fixtures::import();
        let event = json.pointer("/events_by_id/00c3:0").unwrap().clone();
        let mut ten = event.clone();
        ten["event_id"] = json!("00c3:10");
        let mut two = event;
        two["event_id"] = json!("00c3:2");
        json["events_by_id"] = json!({"00c3:2": two, "00c3:10": ten});
        json["root_event_ids"] = json!(["00c3:2", "00c3:10"]);
        let update = parse(&json);
        for encoding in [Encoding::CompactJson, Encoding::ProtobufJson] {
            let rendered = update.render(encoding);
            let keys: Vec<&String> = rendered["events_by_id"].as_object().unwrap().keys().collect();
            assert_eq!(keys, ["00c3:10", "00c3:2"]);
            assert_eq!(rendered["root_event_ids"], json!(["00c3:2", "00c3:10"]), "roots keep their order");
        }
    }

    #[test]
    fn optional_fields_are_omitted_never_null() {
        let update = parse(&fixtures::transaction());
        let rendered = update.render(Encoding::CompactJson);
        assert!(rendered.get("external_transaction_hash").is_none());
        assert!(rendered["events_by_id"]["u1:0"].get("interface_id").is_none());
        let with_hash = edit(fixtures::transaction(), "/external_transaction_hash", Some(json!("ab12")));
        let rendered = parse(&with_hash).render(Encoding::CompactJson);
        assert_eq!(rendered["external_transaction_hash"], json!("ab12"));
        let ingest = parse(&fixtures::import()).to_ingest_json();
        assert!(ingest["events_by_id"]["00c3:0"].get("created_event_blob").is_none());
    }

    #[test]
    fn the_ingest_form_round_trips_and_is_canonical() {
        for fixture in [fixtures::transaction(), fixtures::import(), fixtures::assignment(), fixtures::unassignment()] {
            let update = parse(&fixture);
            let ingest = update.to_ingest_json();
            assert_eq!(parse(&ingest), update);
            assert_eq!(text(&parse(&ingest).to_ingest_json()), text(&ingest));
            // The rendered protobuf form is the ingest form without blobs.
            let mut without_blobs = ingest.clone();
            for pointer in ["/events_by_id/u1:1/created_event_blob", "/event/created_event/created_event_blob"] {
                if without_blobs.pointer(pointer).is_some() {
                    without_blobs = edit(without_blobs, pointer, None);
                }
            }
            assert_eq!(update.render(Encoding::ProtobufJson), without_blobs);
        }
        let ingest = parse(&fixtures::transaction()).to_ingest_json();
        assert_eq!(ingest["events_by_id"]["u1:1"]["created_event_blob"], json!("AAEC"));
        assert_eq!(
            ingest,
            edit(normalised_transaction(), "/events_by_id/u1:1/created_event_blob", Some(json!("AAEC")))
        );
    }

    #[test]
    fn the_same_update_written_differently_has_one_ingest_form() {
        let original = parse(&fixtures::transaction()).to_ingest_json();
        let rewritten = edit(fixtures::transaction(), "/record_time", Some(json!("2024-09-20T15:31:29.552807+02:00")));
        let rewritten = edit(
            rewritten,
            "/events_by_id/u1:3/create_arguments/record/fields/0/value/party",
            Some(json!("sv1::1220")),
        );
        assert_eq!(text(&parse(&rewritten).to_ingest_json()), text(&original));
        let changed = edit(fixtures::transaction(), "/workflow_id", Some(json!("wf")));
        assert_ne!(parse(&changed).to_ingest_json(), original);
        let changed_blob = edit(fixtures::transaction(), "/events_by_id/u1:1/created_event_blob", Some(json!("AAED")));
        assert_ne!(parse(&changed_blob).to_ingest_json(), original);
    }

    #[test]
    fn an_assignment_is_written_exactly_in_every_form() {
        let update = parse(&fixtures::assignment());
        let head = r#"{"update_id":"r1","offset":"000000000000000042","record_time":"2024-09-20T13:31:30.000000Z","event":{"submitter":"alice::1220","source_synchronizer":"sync-a","target_synchronizer":"sync-b","migration_id":3,"unassign_id":"un1","created_event":{"event_type":"created_event","event_id":"r1:0","contract_id":"c9","template_id":"pkg0:Platform.Coin:LockedCoin","package_name":"platform","create_arguments":"#;
        let protobuf_arguments = r#"{"record":{"fields":[{"label":"owner","value":{"party":"alice::1220"}},{"label":"amount","value":{"numeric":"-1.5000000000"}}]}}"#;
        let compact_arguments = r#"{"owner":"alice::1220","amount":"-1.5000000000"}"#;
        let parties = r#","created_at":"2024-09-19T00:00:00.000000Z","signatories":["alice::1220"],"observers":[]"#;
        let tail = r#"},"reassignment_counter":1}}"#;
        let blob = r#","created_event_blob":"Zm9vYg==""#;
        assert_eq!(update.ingest_text(), [head, protobuf_arguments, parties, blob, tail].concat());
        assert_eq!(update.body_text(Encoding::ProtobufJson), [head, protobuf_arguments, parties, tail].concat());
        assert_eq!(update.body_text(Encoding::CompactJson), [head, compact_arguments, parties, tail].concat());
    }

    #[test]
    fn an_unassignment_and_a_transaction_are_written_exactly() {
        let unassignment = r#"{"update_id":"r0","offset":"41","record_time":"2024-09-20T13:31:29.999999Z","event":{"submitter":"alice::1220","source_synchronizer":"sync-a","migration_id":3,"target_synchronizer":"sync-b","unassign_id":"un1","reassignment_counter":1,"contract_id":"c9"}}"#;
        let update = parse(&fixtures::unassignment());
        for text in
            [update.ingest_text(), update.body_text(Encoding::CompactJson), update.body_text(Encoding::ProtobufJson)]
        {
            assert_eq!(text, unassignment);
        }
        let import = r#"{"update_id":"00c3","migration_id":4,"workflow_id":"","record_time":"0001-01-01T00:00:00.000000Z","synchronizer_id":"global-domain::1220aa","effective_at":"2024-09-20T13:31:29.500000Z","root_event_ids":["00c3:0"],"events_by_id":{"00c3:0":{"event_type":"created_event","event_id":"00c3:0","contract_id":"00c3","template_id":"pkg0:Platform.CoinRules:CoinRules","package_name":"platform","create_arguments":{"record":{"fields":[]}},"created_at":"2024-01-01T00:00:00.000000Z","signatories":["dso::1220"],"observers":[]}}}"#;
        let update = parse(&fixtures::import());
        assert_eq!(update.ingest_text(), import);
        assert_eq!(update.body_text(Encoding::CompactJson), import.replace(r#"{"record":{"fields":[]}}"#, "{}"));
        let exercised = r#""u1:2":{"event_type":"exercised_event","event_id":"u1:2","contract_id":"c2","template_id":"pkg0:Platform.Coin:Coin","package_name":"platform","choice":"Holding_Fetch","choice_argument":{"unit":{}},"child_event_ids":[],"exercise_result":{"optional":{"value":{"optional":{}}}},"consuming":false,"acting_parties":["alice::1220","dso::1220"],"interface_id":"pkg1:Splice.Api.Holding:Holding"}"#;
        let with_hash = edit(fixtures::transaction(), "/external_transaction_hash", Some(json!("ab12")));
        let text = parse(&with_hash).body_text(Encoding::ProtobufJson);
        assert!(text.contains(exercised), "{text}");
        assert!(text.ends_with(r#"}},"external_transaction_hash":"ab12"}"#), "{text}");
    }

    /// `json` with every value of an event (`create_arguments`, `choice_argument`,
    /// `exercise_result`) given in `protobuf_json` replaced by its `compact_json`.
    fn compact_values(mut json: Json) -> Json {
        fn compact(event: &mut Json) {
            for name in ["create_arguments", "choice_argument", "exercise_result"] {
                if let Some(value) = event.get_mut(name) {
                    let parsed = Value::parse(&crate::model::json::Json::from(&*value), &mut JsonPath::new()).unwrap();
                    *value = parsed.render(Encoding::CompactJson);
                }
            }
        }
        if let Some(events) = json.get_mut("events_by_id").and_then(Json::as_object_mut) {
            events.values_mut().for_each(compact);
        }
        if let Some(created) = json.pointer_mut("/event/created_event") {
            compact(created);
        }
        json
    }

    /// `json` without its `created_event_blob`s.
    fn without_blobs(mut json: Json) -> Json {
        if let Some(events) = json.get_mut("events_by_id").and_then(Json::as_object_mut) {
            events.values_mut().filter_map(Json::as_object_mut).for_each(|e| drop(e.remove("created_event_blob")));
        }
        if let Some(created) = json.pointer_mut("/event/created_event").and_then(Json::as_object_mut) {
            created.remove("created_event_blob");
        }
        json
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

        #[test]
        fn any_update_reads_back_from_its_ingest_text_through_both_sources(update in fixtures::any_update()) {
            let text = update.ingest_text();
            let json = crate::model::json::Json::parse(text.as_bytes()).unwrap();
            proptest::prop_assert_eq!(Update::parse(&json), Ok(update.clone()));
            let line = alloc::format!(r#"{{"update":{text}}}"#);
            match update_line(line.as_bytes()) {
                Some(fast) => proptest::prop_assert_eq!(fast, update),
                // Strings with escapes are left to the document reader.
                None => proptest::prop_assert!(text.contains('\\'), "refused {}", text),
            }
        }

        #[test]
        fn the_bodies_are_the_ingest_form_without_blobs_in_either_encoding(update in fixtures::any_update()) {
            let ingest: Json = serde_json::from_str(&update.ingest_text()).unwrap();
            let protobuf: Json = serde_json::from_str(&update.body_text(Encoding::ProtobufJson)).unwrap();
            let compact: Json = serde_json::from_str(&update.body_text(Encoding::CompactJson)).unwrap();
            proptest::prop_assert_eq!(&protobuf, &without_blobs(ingest));
            proptest::prop_assert_eq!(&compact, &compact_values(protobuf));
            // The text is as compact as serde_json writes it, keys in the order written.
            proptest::prop_assert_eq!(serde_json::to_string(&compact).unwrap(), update.body_text(Encoding::CompactJson));
        }

        #[test]
        fn any_update_round_trips_through_its_ingest_form(update in fixtures::any_update()) {
            let ingest = update.to_ingest_json();
            proptest::prop_assert_eq!(fixtures::parse_both(&ingest), Ok(update.clone()));
            let bytes = serde_json::to_vec(&ingest).unwrap();
            let reread: Json = serde_json::from_slice(&bytes).unwrap();
            proptest::prop_assert_eq!(Update::parse(&crate::model::json::Json::from(&reread)), Ok(update.clone()));
            // Bytes written directly are the tree written out.
            for encoding in [Encoding::CompactJson, Encoding::ProtobufJson] {
                let direct = serde_json::to_vec(&update.encoded(encoding)).unwrap();
                proptest::prop_assert_eq!(&direct, &serde_json::to_vec(&update.render(encoding)).unwrap());
                // And the node's writer writes them itself, never handing over to `serde_json`.
                let mut own = Vec::new();
                proptest::prop_assert!(crate::model::json::write::try_write(&mut own, &update.encoded(encoding)).is_ok());
                proptest::prop_assert_eq!(own, direct);
            }
            // Rendering in either encoding never fails and never writes null fields.
            let rendered = text(&update.render(Encoding::CompactJson));
            proptest::prop_assert!(!rendered.contains("created_event_blob"));
        }
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

    #[test]
    fn many_unknown_keys_are_refused_by_both_readers_in_linear_time() {
        // 200,000 keys before the field that says what the object is: checking each
        // against the ones before it would take hours.
        let keys: String = (0..200_000).map(|n| alloc::format!("\"k{n}\":0,")).collect();
        let text = String::from_utf8(line(&fixtures::transaction())).unwrap();
        let in_update = text.replacen("{\"update\":{", &alloc::format!("{{\"update\":{{{keys}"), 1);
        let in_event = text.replacen("\"event_type\":", &alloc::format!("{keys}\"event_type\":"), 1);
        for (case, refusal) in [
            (in_update, r#"unknown field "k0"; expected update_id, "#),
            (in_event, r#"events_by_id["u1:0"]: unknown field "k0"; expected event_type, "#),
        ] {
            assert_eq!(update_line(case.as_bytes()), None);
            let json = crate::model::json::Json::parse(case.as_bytes()).unwrap();
            let payload = json.as_object().and_then(|o| o.get("update")).unwrap();
            let error = Update::parse(payload).unwrap_err().to_string();
            assert!(error.starts_with(refusal), "{error}");
        }
    }
}
