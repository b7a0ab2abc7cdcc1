//! Rendering updates: the `GET /v2/updates/{id}` body and the canonical ingest form.
//!
//! Like values ([`crate::value::Encoded`]), an update renders through [`Serialize`]:
//! into a JSON tree for callers that want one, or into a larger document. The text is
//! written by [`super::text`] (which ingest calls directly for the stored bodies) and
//! handed on as raw JSON; the serde form in `reference` is what it is checked against.

use alloc::string::String;
use serde::ser::{Serialize, Serializer};
use serde_json::Value as Json;

use super::text::{self, Form};
use super::{Encoding, Update};
use crate::value::render::{raw, to_json};

/// An update written in one form: serializing it writes that form.
#[derive(Debug, Clone, Copy)]
pub struct Rendered<'a> {
    update: &'a Update,
    form: Form,
}

impl Update {
    /// The `GET /v2/updates/{id}` body with values in `encoding`, to serialize:
    /// optional fields omitted, `events_by_id` sorted by key, timestamps as
    /// `YYYY-MM-DDTHH:MM:SS.ffffffZ`, and no `created_event_blob`.
    pub fn encoded(&self, encoding: Encoding) -> Rendered<'_> {
        Rendered { update: self, form: Form { encoding, blobs: false } }
    }

    /// The `GET /v2/updates/{id}` body with values in `encoding` ([`Update::encoded`]),
    /// as text.
    pub fn body_text(&self, encoding: Encoding) -> String {
        let mut out = String::with_capacity(4096);
        text::update(&mut out, self, Form { encoding, blobs: false });
        out
    }

    /// The `GET /v2/updates/{id}` body with values in `encoding`, as a JSON tree.
    pub fn render(&self, encoding: Encoding) -> Json {
        to_json(&self.encoded(encoding))
    }

    /// The canonical ingest form: `protobuf_json` values and blobs. Parsing it gives
    /// this update back, and two updates are equal exactly when their ingest forms are.
    pub fn to_ingest_json(&self) -> Json {
        to_json(&Rendered { update: self, form: Form { encoding: Encoding::ProtobufJson, blobs: true } })
    }

    /// The canonical ingest form ([`Update::to_ingest_json`]) as text: what an
    /// `{"update": ...}` ingest record holds.
    pub fn ingest_text(&self) -> String {
        let mut out = String::with_capacity(4096);
        text::update(&mut out, self, Form { encoding: Encoding::ProtobufJson, blobs: true });
        out
    }
}

impl Serialize for Rendered<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut out = String::with_capacity(4096);
        text::update(&mut out, self.update, self.form);
        raw(s, &out)
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{self, edit};
    use super::*;
    use alloc::string::String;
    use alloc::vec::Vec;
    use serde_json::Value as Json;
    use serde_json::json;

    fn text(json: &Json) -> String {
        serde_json::to_string(json).unwrap()
    }

    fn parse(json: &Json) -> Update {
        Update::parse(&crate::json::Json::from(json)).unwrap()
    }

    /// The transaction fixture as `GET /v2/updates` writes it in protobuf_json:
    /// timestamps normalised, no blob.
    fn normalised_transaction() -> Json {
        let json = edit(fixtures::transaction(), "/effective_at", Some(json!("2024-09-20T13:31:29.500000Z")));
        let json = edit(json, "/events_by_id/u1:1/created_at", Some(json!("2024-09-20T13:31:29.500000Z")));
        edit(json, "/events_by_id/u1:1/created_event_blob", None)
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

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

        #[test]
        fn any_update_round_trips_through_its_ingest_form(update in fixtures::any_update()) {
            let ingest = update.to_ingest_json();
            proptest::prop_assert_eq!(fixtures::parse_both(&ingest), Ok(update.clone()));
            let bytes = serde_json::to_vec(&ingest).unwrap();
            let reread: Json = serde_json::from_slice(&bytes).unwrap();
            proptest::prop_assert_eq!(Update::parse(&crate::json::Json::from(&reread)), Ok(update.clone()));
            // Bytes written directly are the tree written out.
            for encoding in [Encoding::CompactJson, Encoding::ProtobufJson] {
                let direct = serde_json::to_vec(&update.encoded(encoding)).unwrap();
                proptest::prop_assert_eq!(&direct, &serde_json::to_vec(&update.render(encoding)).unwrap());
                // And the node's writer writes them itself, never handing over to `serde_json`.
                let mut own = Vec::new();
                proptest::prop_assert!(crate::json::write::try_write(&mut own, &update.encoded(encoding)).is_ok());
                proptest::prop_assert_eq!(own, direct);
            }
            // Rendering in either encoding never fails and never writes null fields.
            let rendered = text(&update.render(Encoding::CompactJson));
            proptest::prop_assert!(!rendered.contains("created_event_blob"));
        }
    }
}
