//! Rendering values in either encoding (the table in the module docs of [`super`]).

use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde_json::{Map, Value as Json, json};

use super::{Encoding, Record, Value};

impl Value {
    /// The value in `encoding`. Compact records keep their field order (the map is
    /// insertion-ordered); a record with a repeated label, which parsing refuses, keeps
    /// the last value under the first position.
    pub fn render(&self, encoding: Encoding) -> Json {
        match encoding {
            Encoding::CompactJson => compact(self),
            Encoding::ProtobufJson => protobuf(self),
        }
    }
}

impl Record {
    /// The record, as a value, in `encoding`.
    pub fn render(&self, encoding: Encoding) -> Json {
        match encoding {
            Encoding::CompactJson => compact_record(self),
            Encoding::ProtobufJson => json!({ "record": protobuf_record(self) }),
        }
    }
}

fn protobuf(value: &Value) -> Json {
    match value {
        Value::Record(record) => json!({ "record": protobuf_record(record) }),
        Value::Variant { constructor, value } => {
            json!({ "variant": { "constructor": constructor, "value": protobuf(value) } })
        }
        Value::Enum(constructor) => json!({ "enum": { "constructor": constructor } }),
        Value::List(elements) => {
            json!({ "list": { "elements": elements.iter().map(protobuf).collect::<Vec<_>>() } })
        }
        Value::Optional(None) => json!({ "optional": {} }),
        Value::Optional(Some(inner)) => json!({ "optional": { "value": protobuf(inner) } }),
        Value::TextMap(entries) => {
            let entries: Vec<Json> = entries.iter().map(|(k, v)| json!({ "key": k, "value": protobuf(v) })).collect();
            json!({ "textMap": { "entries": entries } })
        }
        Value::GenMap(entries) => {
            let entries: Vec<Json> =
                entries.iter().map(|(k, v)| json!({ "key": protobuf(k), "value": protobuf(v) })).collect();
            json!({ "genMap": { "entries": entries } })
        }
        Value::Int64(n) => json!({ "int64": n.to_string() }),
        Value::Numeric(n) => json!({ "numeric": n.as_str() }),
        Value::Text(s) => json!({ "text": s }),
        Value::Timestamp(t) => json!({ "timestamp": t.micros().to_string() }),
        Value::Date(d) => json!({ "date": d.days() }),
        Value::Party(p) => json!({ "party": p }),
        Value::ContractId(c) => json!({ "contractId": c }),
        Value::Bool(b) => json!({ "bool": b }),
        Value::Unit => json!({ "unit": {} }),
    }
}

fn protobuf_record(record: &Record) -> Json {
    let fields: Vec<Json> =
        record.fields.iter().map(|f| json!({ "label": f.label, "value": protobuf(&f.value) })).collect();
    json!({ "fields": fields })
}

fn compact(value: &Value) -> Json {
    match value {
        Value::Record(record) => compact_record(record),
        Value::Variant { constructor, value } => {
            json!({ "tag": constructor, "value": compact(value) })
        }
        Value::Enum(constructor) => Json::String(constructor.clone()),
        Value::List(elements) => Json::Array(elements.iter().map(compact).collect()),
        Value::Optional(None) => Json::Null,
        Value::Optional(Some(inner)) => match &**inner {
            Value::Optional(nested) => compact_nested_optional(nested.as_deref()),
            other => compact(other),
        },
        Value::TextMap(entries) => {
            Json::Object(entries.iter().map(|(k, v)| (k.clone(), compact(v))).collect::<Map<String, Json>>())
        }
        Value::GenMap(entries) => {
            Json::Array(entries.iter().map(|(k, v)| Json::Array(alloc::vec![compact(k), compact(v)])).collect())
        }
        Value::Int64(n) => Json::String(n.to_string()),
        Value::Numeric(n) => Json::String(n.as_str().into()),
        Value::Text(s) | Value::Party(s) | Value::ContractId(s) => Json::String(s.clone()),
        Value::Timestamp(t) => Json::String(t.to_string()),
        Value::Date(d) => Json::String(d.to_string()),
        Value::Bool(b) => Json::Bool(*b),
        Value::Unit => Json::Object(Map::new()),
    }
}

/// The content of an optional whose type is itself optional (Daml-LF JSON encoding):
/// `None` is `[]` and `Some(v)` is `[v']`, where `v'` is again nested if `v` is an
/// optional, so that `Some(None)` and `None` stay apart.
fn compact_nested_optional(content: Option<&Value>) -> Json {
    match content {
        None => Json::Array(Vec::new()),
        Some(Value::Optional(nested)) => Json::Array(alloc::vec![compact_nested_optional(nested.as_deref())]),
        Some(other) => Json::Array(alloc::vec![compact(other)]),
    }
}

fn compact_record(record: &Record) -> Json {
    Json::Object(record.fields.iter().map(|f| (f.label.clone(), compact(&f.value))).collect::<Map<String, Json>>())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{Date, Timestamp};
    use crate::value::{Field, JsonPath, Numeric};
    use alloc::boxed::Box;
    use alloc::vec;

    fn some(v: Value) -> Value {
        Value::Optional(Some(Box::new(v)))
    }

    const NONE: Value = Value::Optional(None);

    fn record(fields: &[(&str, Value)]) -> Value {
        Value::Record(Record {
            fields: fields
                .iter()
                .map(|(label, value)| Field { label: (*label).into(), value: value.clone() })
                .collect(),
        })
    }

    /// (value, protobuf_json, compact_json), compared as serialized text so that key
    /// order counts.
    fn table() -> Vec<(Value, &'static str, &'static str)> {
        let ts = |micros| Value::Timestamp(Timestamp::from_micros(micros).unwrap());
        let numeric = |text| Value::Numeric(Numeric::parse(text).unwrap());
        vec![
            (Value::Int64(42), r#"{"int64":"42"}"#, r#""42""#),
            (Value::Int64(i64::MIN), r#"{"int64":"-9223372036854775808"}"#, r#""-9223372036854775808""#),
            (numeric("1.5000000000"), r#"{"numeric":"1.5000000000"}"#, r#""1.5000000000""#),
            (numeric("0E-10"), r#"{"numeric":"0E-10"}"#, r#""0E-10""#),
            (numeric("-1e5"), r#"{"numeric":"-1e5"}"#, r#""-1e5""#),
            (Value::Text("s \"q\"".into()), r#"{"text":"s \"q\""}"#, r#""s \"q\"""#),
            (ts(1_726_839_089_552_807), r#"{"timestamp":"1726839089552807"}"#, r#""2024-09-20T13:31:29.552807Z""#),
            (ts(1_726_839_089_000_000), r#"{"timestamp":"1726839089000000"}"#, r#""2024-09-20T13:31:29.000000Z""#),
            (ts(-1), r#"{"timestamp":"-1"}"#, r#""1969-12-31T23:59:59.999999Z""#),
            (ts(Timestamp::MIN.micros()), r#"{"timestamp":"-62135596800000000"}"#, r#""0001-01-01T00:00:00.000000Z""#),
            (Value::Date(Date::from_days(19_986).unwrap()), r#"{"date":19986}"#, r#""2024-09-20""#),
            (Value::Date(Date::from_days(-1).unwrap()), r#"{"date":-1}"#, r#""1969-12-31""#),
            (Value::Party("alice::1220".into()), r#"{"party":"alice::1220"}"#, r#""alice::1220""#),
            (Value::ContractId("00ab".into()), r#"{"contractId":"00ab"}"#, r#""00ab""#),
            (Value::Bool(true), r#"{"bool":true}"#, "true"),
            (Value::Unit, r#"{"unit":{}}"#, "{}"),
            (Value::Enum("Red".into()), r#"{"enum":{"constructor":"Red"}}"#, r#""Red""#),
            (
                Value::Variant { constructor: "Lock".into(), value: Box::new(Value::Int64(1)) },
                r#"{"variant":{"constructor":"Lock","value":{"int64":"1"}}}"#,
                r#"{"tag":"Lock","value":"1"}"#,
            ),
            (Value::List(vec![]), r#"{"list":{"elements":[]}}"#, "[]"),
            (
                Value::List(vec![Value::Int64(1), Value::Bool(false)]),
                r#"{"list":{"elements":[{"int64":"1"},{"bool":false}]}}"#,
                r#"["1",false]"#,
            ),
            (
                record(&[("z", Value::Int64(1)), ("a", Value::Text("x".into())), ("m", Value::Unit)]),
                r#"{"record":{"fields":[{"label":"z","value":{"int64":"1"}},{"label":"a","value":{"text":"x"}},{"label":"m","value":{"unit":{}}}]}}"#,
                r#"{"z":"1","a":"x","m":{}}"#,
            ),
            (record(&[]), r#"{"record":{"fields":[]}}"#, "{}"),
            (
                Value::TextMap(vec![("b".into(), Value::Int64(2)), ("a".into(), Value::Int64(1))]),
                r#"{"textMap":{"entries":[{"key":"b","value":{"int64":"2"}},{"key":"a","value":{"int64":"1"}}]}}"#,
                r#"{"b":"2","a":"1"}"#,
            ),
            (
                Value::GenMap(vec![
                    (Value::Int64(1), Value::Text("x".into())),
                    (record(&[("k", Value::Unit)]), Value::Bool(true)),
                ]),
                r#"{"genMap":{"entries":[{"key":{"int64":"1"},"value":{"text":"x"}},{"key":{"record":{"fields":[{"label":"k","value":{"unit":{}}}]}},"value":{"bool":true}}]}}"#,
                r#"[["1","x"],[{"k":{}},true]]"#,
            ),
            // Optionals, as in the Daml-LF JSON encoding.
            (NONE, r#"{"optional":{}}"#, "null"),
            (some(Value::Int64(42)), r#"{"optional":{"value":{"int64":"42"}}}"#, r#""42""#),
            (some(NONE), r#"{"optional":{"value":{"optional":{}}}}"#, "[]"),
            (
                some(some(Value::Int64(42))),
                r#"{"optional":{"value":{"optional":{"value":{"int64":"42"}}}}}"#,
                r#"["42"]"#,
            ),
            (some(some(NONE)), r#"{"optional":{"value":{"optional":{"value":{"optional":{}}}}}}"#, "[[]]"),
            (
                some(some(some(Value::Int64(42)))),
                r#"{"optional":{"value":{"optional":{"value":{"optional":{"value":{"int64":"42"}}}}}}}"#,
                r#"[["42"]]"#,
            ),
            (
                some(some(Value::List(vec![NONE, some(Value::Unit)]))),
                r#"{"optional":{"value":{"optional":{"value":{"list":{"elements":[{"optional":{}},{"optional":{"value":{"unit":{}}}}]}}}}}}"#,
                r#"[[null,{}]]"#,
            ),
            (
                record(&[("o", NONE), ("p", some(Value::Party("p".into()))), ("q", some(NONE))]),
                r#"{"record":{"fields":[{"label":"o","value":{"optional":{}}},{"label":"p","value":{"optional":{"value":{"party":"p"}}}},{"label":"q","value":{"optional":{"value":{"optional":{}}}}}]}}"#,
                r#"{"o":null,"p":"p","q":[]}"#,
            ),
        ]
    }

    fn text(json: &Json) -> String {
        serde_json::to_string(json).unwrap()
    }

    #[test]
    fn every_type_renders_in_both_encodings() {
        for (value, protobuf, compact) in table() {
            assert_eq!(text(&value.render(Encoding::ProtobufJson)), protobuf, "{value:?}");
            assert_eq!(text(&value.render(Encoding::CompactJson)), compact, "{value:?}");
        }
    }

    #[test]
    fn the_protobuf_rendering_parses_back() {
        for (value, protobuf, _) in table() {
            let json: Json = serde_json::from_str(protobuf).unwrap();
            assert_eq!(Value::parse(&json, &mut JsonPath::new()), Ok(value));
        }
    }

    #[test]
    fn records_render_alone_as_values() {
        let value = record(&[("b", Value::Unit), ("a", Value::Unit)]);
        let Value::Record(r) = &value else { unreachable!() };
        for encoding in [Encoding::CompactJson, Encoding::ProtobufJson] {
            assert_eq!(text(&r.render(encoding)), text(&value.render(encoding)));
        }
    }

    #[test]
    fn compact_record_field_order_survives_serialization() {
        let labels = ["zeta", "alpha", "mu", "beta", "omega"];
        let value = record(&labels.map(|l| (l, Value::Unit)));
        let compact = text(&value.render(Encoding::CompactJson));
        assert_eq!(compact, r#"{"zeta":{},"alpha":{},"mu":{},"beta":{},"omega":{}}"#);
        let reparsed: Json = serde_json::from_str(&compact).unwrap();
        assert_eq!(text(&reparsed), compact, "parsing JSON keeps key order too");
    }

    proptest::proptest! {
        #[test]
        fn any_value_round_trips_through_protobuf_json(value in crate::value::arbitrary::value()) {
            let json = value.render(Encoding::ProtobufJson);
            proptest::prop_assert_eq!(Value::parse(&json, &mut JsonPath::new()), Ok(value.clone()));
            // Through bytes as well, as ingest sees it.
            let bytes = serde_json::to_vec(&json).unwrap();
            let json: Json = serde_json::from_slice(&bytes).unwrap();
            proptest::prop_assert_eq!(Value::parse(&json, &mut JsonPath::new()), Ok(value));
        }

        #[test]
        fn compact_records_list_their_labels_in_order(record in crate::value::arbitrary::record()) {
            let compact = record.render(Encoding::CompactJson);
            let keys: Vec<&str> = compact.as_object().unwrap().keys().map(String::as_str).collect();
            let labels: Vec<&str> = record.fields.iter().map(|f| f.label.as_str()).collect();
            proptest::prop_assert_eq!(keys, labels);
        }
    }
}
