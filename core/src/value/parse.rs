//! Parsing the `protobuf_json` encoding, strictly, with the path of every problem.

use alloc::boxed::Box;
use alloc::collections::BTreeSet;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use crate::json::Json;

use super::path::{JsonPath, PathError, Segment, quoted};
use super::read::{self, StrictObject};
use super::{Field, Numeric, Record, Value};
use crate::time::{Date, Timestamp};

/// The keys of a value object, one per type: the names [`Value::type_name`] gives.
pub const TYPES: [&str; 16] = [
    "record",
    "variant",
    "enum",
    "list",
    "optional",
    "textMap",
    "genMap",
    "int64",
    "numeric",
    "text",
    "timestamp",
    "date",
    "party",
    "contractId",
    "bool",
    "unit",
];

impl Value {
    /// Parses a value in the `protobuf_json` encoding. `path` is where `json` sits in
    /// its document (push the prefix first); errors name the offending element below it.
    /// On return `path` is as it was.
    pub fn parse(json: &Json<'_>, path: &mut JsonPath) -> Result<Value, PathError> {
        let map = json.as_object().ok_or_else(|| {
            path.error(format!("expected a value object such as {{\"text\":\"s\"}}, found {}", read::describe(json)))
        })?;
        let mut entries = map.iter();
        let (Some((key, body)), None) = (entries.next(), entries.next()) else {
            return Err(path.error(format!(
                "a value object has exactly one key, its type (one of {}); found {}",
                TYPES.join(", "),
                map.len()
            )));
        };
        let Some(kind) = TYPES.iter().copied().find(|t| *t == key) else {
            return Err(path.error(format!(
                "unknown value type {}; expected one of {}",
                quoted(key),
                TYPES.join(", ")
            )));
        };
        path.with(Segment::Field(kind), |p| parse_body(kind, body, p))
    }
}

impl Record {
    /// Parses a value in the `protobuf_json` encoding that must be a record (such as a
    /// contract's `create_arguments`).
    pub fn parse(json: &Json<'_>, path: &mut JsonPath) -> Result<Record, PathError> {
        match Value::parse(json, path)? {
            Value::Record(record) => Ok(record),
            other => Err(path.error(format!("expected a record value, found {}", other.type_name()))),
        }
    }
}

/// The body of a value object whose key is `kind`; `path` already ends in `kind`.
fn parse_body(kind: &str, body: &Json<'_>, path: &mut JsonPath) -> Result<Value, PathError> {
    Ok(match kind {
        "record" => Value::Record(record(body, path)?),
        "variant" => {
            let obj = StrictObject::new(body, &["constructor", "value"], path)?;
            Value::Variant {
                constructor: obj.id("constructor", path)?.into(),
                value: Box::new(obj.field("value", path, Value::parse)?),
            }
        }
        "enum" => {
            let obj = StrictObject::new(body, &["constructor"], path)?;
            Value::Enum(obj.id("constructor", path)?.into())
        }
        "list" => {
            let obj = StrictObject::new(body, &["elements"], path)?;
            Value::List(repeated(&obj, "elements", path, Value::parse)?)
        }
        "optional" => {
            let obj = StrictObject::new(body, &["value"], path)?;
            Value::Optional(obj.optional_field("value", path, Value::parse)?.map(Box::new))
        }
        "textMap" => Value::TextMap(text_map(body, path)?),
        "genMap" => {
            let obj = StrictObject::new(body, &["entries"], path)?;
            Value::GenMap(repeated(&obj, "entries", path, |entry, p| {
                let entry = StrictObject::new(entry, &["key", "value"], p)?;
                Ok((entry.field("key", p, Value::parse)?, entry.field("value", p, Value::parse)?))
            })?)
        }
        "int64" => Value::Int64(int64_text(read::string(body, path)?, path)?),
        "numeric" => Value::Numeric(Numeric::parse(read::string(body, path)?).map_err(|e| path.error(format!("{e}")))?),
        "text" => Value::Text(read::string(body, path)?.into()),
        "timestamp" => {
            let micros = int64_text(read::string(body, path)?, path)?;
            Value::Timestamp(
                Timestamp::from_micros(micros)
                    .map_err(|e| path.error(format!("{e}; expected microseconds since the Unix epoch")))?,
            )
        }
        "date" => {
            let days = read::int64(body, path)?;
            Value::Date(
                Date::from_days(days).map_err(|e| path.error(format!("{e}; expected days since the Unix epoch")))?,
            )
        }
        "party" => Value::Party(read::string(body, path)?.into()),
        "contractId" => Value::ContractId(read::string(body, path)?.into()),
        "bool" => Value::Bool(read::boolean(body, path)?),
        "unit" => {
            StrictObject::new(body, &[], path)?;
            Value::Unit
        }
        // `kind` comes from TYPES, and every entry of TYPES has an arm above.
        other => {
            return Err(path.error(format!("unknown value type {}", quoted(other))));
        }
    })
}

/// `{"fields":[{"label":"f","value":V}]}`, labels present and unique.
fn record(body: &Json<'_>, path: &mut JsonPath) -> Result<Record, PathError> {
    let obj = StrictObject::new(body, &["fields"], path)?;
    let mut labels = BTreeSet::new();
    let fields = repeated(&obj, "fields", path, |field, p| {
        let field = StrictObject::new(field, &["label", "value"], p)?;
        let label = field.id("label", p)?;
        if !labels.insert(label) {
            return Err(p.error(format!("duplicate label {}", quoted(label))));
        }
        Ok(Field { label: label.into(), value: field.field("value", p, Value::parse)? })
    })?;
    Ok(Record { fields })
}

/// `{"entries":[{"key":"k","value":V}]}`, keys unique.
fn text_map(body: &Json<'_>, path: &mut JsonPath) -> Result<Vec<(String, Value)>, PathError> {
    let obj = StrictObject::new(body, &["entries"], path)?;
    let mut keys = BTreeSet::new();
    repeated(&obj, "entries", path, |entry, p| {
        let entry = StrictObject::new(entry, &["key", "value"], p)?;
        let key = entry.string("key", p)?;
        if !keys.insert(key) {
            return Err(p.error(format!("duplicate key {}", quoted(key))));
        }
        Ok((String::from(key), entry.field("value", p, Value::parse)?))
    })
}

/// The elements of the array field `name` of `obj`, each read by `item` at its index;
/// an absent field (as protobuf's JSON printer writes an empty list) is empty.
fn repeated<'a, T>(
    obj: &StrictObject<'a>,
    name: &'static str,
    path: &mut JsonPath,
    mut item: impl FnMut(&'a Json<'a>, &mut JsonPath) -> Result<T, PathError>,
) -> Result<Vec<T>, PathError> {
    let items = obj.optional_field(name, path, |json, p| read::array(json, p))?;
    let items = items.unwrap_or_default();
    path.with(Segment::Field(name), |p| {
        let mut out = Vec::with_capacity(items.len());
        for (i, json) in items.iter().enumerate() {
            out.push(p.with(Segment::Index(i), |p| item(json, p))?);
        }
        Ok(out)
    })
}

/// A decimal int64 written as a JSON string: `-?[0-9]+` within the int64 range.
fn int64_text(text: &str, path: &JsonPath) -> Result<i64, PathError> {
    if !is_decimal_integer(text) {
        return Err(
            path.error(format!("expected a decimal integer in a string, such as \"42\"; found {}", quoted(text)))
        );
    }
    text.parse::<i64>().map_err(|_| path.error(format!("{text} is out of the int64 range")))
}

/// Whether `text` is `-?[0-9]+`.
fn is_decimal_integer(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// [`int64_text`] without the error: the int64 `text` writes, if it is one.
pub(super) fn decimal_i64(text: &str) -> Option<i64> {
    if is_decimal_integer(text) { text.parse().ok() } else { None }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;
    use alloc::vec;
    use serde_json::Value as Json;
    use serde_json::json;

    fn parse(json: Json) -> Result<Value, String> {
        let mut path = JsonPath::new();
        let result = Value::parse(&crate::json::Json::from(&json), &mut path).map_err(|e| e.to_string());
        assert!(path.is_root(), "the path is restored");
        result
    }

    fn field(label: &str, value: Value) -> Field {
        Field { label: label.into(), value }
    }

    #[test]
    fn every_type_parses() {
        let ts = Timestamp::from_micros(1_726_839_089_552_807).unwrap();
        let cases = [
            (json!({"int64": "42"}), Value::Int64(42)),
            (json!({"int64": "-9223372036854775808"}), Value::Int64(i64::MIN)),
            (json!({"numeric": "0E-10"}), Value::Numeric(Numeric::parse("0E-10").unwrap())),
            (json!({"text": ""}), Value::Text("".into())),
            (json!({"timestamp": "1726839089552807"}), Value::Timestamp(ts)),
            (json!({"date": 19986}), Value::Date(Date::from_days(19_986).unwrap())),
            (json!({"party": "alice::1220"}), Value::Party("alice::1220".into())),
            (json!({"contractId": "00ab"}), Value::ContractId("00ab".into())),
            (json!({"bool": false}), Value::Bool(false)),
            (json!({"unit": {}}), Value::Unit),
            (json!({"enum": {"constructor": "Red"}}), Value::Enum("Red".into())),
            (
                json!({"variant": {"constructor": "Some", "value": {"unit": {}}}}),
                Value::Variant { constructor: "Some".into(), value: Box::new(Value::Unit) },
            ),
            (
                json!({"list": {"elements": [{"int64": "1"}, {"text": "a"}]}}),
                Value::List(vec![Value::Int64(1), Value::Text("a".into())]),
            ),
            (json!({"list": {}}), Value::List(vec![])),
            (json!({"optional": {}}), Value::Optional(None)),
            (json!({"optional": {"value": {"optional": {}}}}), Value::Optional(Some(Box::new(Value::Optional(None))))),
            (
                json!({"textMap": {"entries": [{"key": "b", "value": {"int64": "2"}}, {"key": "a", "value": {"int64": "1"}}]}}),
                Value::TextMap(vec![("b".into(), Value::Int64(2)), ("a".into(), Value::Int64(1))]),
            ),
            (json!({"textMap": {}}), Value::TextMap(vec![])),
            (
                json!({"genMap": {"entries": [{"key": {"int64": "1"}, "value": {"text": "x"}}]}}),
                Value::GenMap(vec![(Value::Int64(1), Value::Text("x".into()))]),
            ),
            (
                json!({"record": {"fields": [
                    {"label": "z", "value": {"int64": "1"}},
                    {"label": "a", "value": {"record": {}}}
                ]}}),
                Value::Record(Record {
                    fields: vec![field("z", Value::Int64(1)), field("a", Value::Record(Record::default()))],
                }),
            ),
        ];
        for (json, want) in cases {
            assert_eq!(parse(json.clone()), Ok(want), "{json}");
        }
    }

    #[test]
    fn every_problem_names_its_path() {
        let cases = [
            (json!("s"), "expected a value object such as {\"text\":\"s\"}, found a string"),
            (
                json!({}),
                "a value object has exactly one key, its type (one of record, variant, enum, list, optional, textMap, genMap, int64, numeric, text, timestamp, date, party, contractId, bool, unit); found 0",
            ),
            (json!({"text": "a", "bool": true}), "a value object has exactly one key"),
            (json!({"string": "a"}), "unknown value type \"string\"; expected one of record"),
            (json!({"int64": 42}), "int64: expected a string, found a number"),
            (json!({"int64": "4.2"}), "int64: expected a decimal integer in a string, such as \"42\"; found \"4.2\""),
            (json!({"int64": "+1"}), "int64: expected a decimal integer"),
            (json!({"int64": ""}), "int64: expected a decimal integer"),
            (json!({"int64": "9223372036854775808"}), "int64: 9223372036854775808 is out of the int64 range"),
            (json!({"numeric": "1.5.0"}), "numeric: expected a decimal number such as 1.5000000000"),
            (json!({"numeric": 1.5}), "numeric: expected a string, found a number"),
            (json!({"timestamp": "2024-09-20T13:31:29Z"}), "timestamp: expected a decimal integer in a string"),
            (json!({"timestamp": 1726839089552807i64}), "timestamp: expected a string, found a number"),
            (
                json!({"timestamp": "253402300800000000"}),
                "timestamp: timestamp out of range (years 1 to 9999); expected microseconds since the Unix epoch",
            ),
            (json!({"timestamp": "-62135596800000001"}), "timestamp: timestamp out of range"),
            (json!({"date": "19986"}), "date: expected an integer (int64), found a string"),
            (json!({"date": 2932897}), "date: date out of range (years 1 to 9999); expected days since the Unix epoch"),
            (json!({"date": 1.5}), "date: expected an integer (int64), found 1.5"),
            (json!({"bool": "true"}), "bool: expected a boolean, found a string"),
            (json!({"unit": {"x": 1}}), "unit: unknown field \"x\"; expected no fields"),
            (json!({"unit": null}), "unit: expected an object, found null"),
            (json!({"party": 1}), "party: expected a string, found a number"),
            (json!({"contractId": null}), "contractId: expected a string, found null"),
            (json!({"text": ["a"]}), "text: expected a string, found an array"),
            (json!({"enum": {}}), "enum: missing constructor"),
            (json!({"enum": {"constructor": ""}}), "enum.constructor: must not be empty"),
            (json!({"enum": "Red"}), "enum: expected an object, found a string"),
            (json!({"variant": {"constructor": "C"}}), "variant: missing value"),
            (
                json!({"variant": {"constructor": "C", "value": {"int64": "x"}}}),
                "variant.value.int64: expected a decimal integer",
            ),
            (json!({"variant": {"value": {"unit": {}}}}), "variant: missing constructor"),
            (json!({"list": {"elements": {}}}), "list.elements: expected an array, found an object"),
            (json!({"list": {"elements": [{"unit": {}}, 5]}}), "list.elements[1]: expected a value object"),
            (json!({"list": {"values": []}}), "list: unknown field \"values\"; expected elements"),
            (json!({"optional": {"value": {}}}), "optional.value: a value object has exactly one key"),
            (json!({"optional": {"val": {}}}), "optional: unknown field \"val\"; expected value"),
            (json!({"record": {"fields": [{"value": {"unit": {}}}]}}), "record.fields[0]: missing label"),
            (
                json!({"record": {"fields": [{"label": null, "value": {"unit": {}}}]}}),
                "record.fields[0]: missing label",
            ),
            (
                json!({"record": {"fields": [{"label": 1, "value": {"unit": {}}}]}}),
                "record.fields[0].label: expected a string, found a number",
            ),
            (
                json!({"record": {"fields": [{"label": "", "value": {"unit": {}}}]}}),
                "record.fields[0].label: must not be empty",
            ),
            (json!({"record": {"fields": [{"label": "a"}]}}), "record.fields[0]: missing value"),
            (
                json!({"record": {"fields": [
                    {"label": "a", "value": {"unit": {}}},
                    {"label": "a", "value": {"unit": {}}}
                ]}}),
                "record.fields[1]: duplicate label \"a\"",
            ),
            (json!({"record": {"recordId": {}, "fields": []}}), "record: unknown field \"recordId\"; expected fields"),
            (
                json!({"record": {"fields": [{"label": "a", "value": {"unit": {}}, "x": 1}]}}),
                "record.fields[0]: unknown field \"x\"; expected label, value",
            ),
            (
                json!({"textMap": {"entries": [{"key": "k", "value": {"unit": {}}}, {"key": "k", "value": {"unit": {}}}]}}),
                "textMap.entries[1]: duplicate key \"k\"",
            ),
            (
                json!({"textMap": {"entries": [{"key": 1, "value": {"unit": {}}}]}}),
                "textMap.entries[0].key: expected a string, found a number",
            ),
            (json!({"textMap": {"entries": [{"value": {"unit": {}}}]}}), "textMap.entries[0]: missing key"),
            (
                json!({"genMap": {"entries": [{"key": "k", "value": {"unit": {}}}]}}),
                "genMap.entries[0].key: expected a value object",
            ),
            (json!({"genMap": {"entries": [{"key": {"unit": {}}}]}}), "genMap.entries[0]: missing value"),
            (
                json!({"record": {"fields": [{"label": "a", "value": {"list": {"elements": [{"record": {"fields": [{"label": "b", "value": {"textMap": {"entries": [{"key": "k", "value": {"int64": "x"}}]}}}]}}]}}}]}}),
                "record.fields[0].value.list.elements[0].record.fields[0].value.textMap.entries[0].value.int64: expected a decimal integer",
            ),
        ];
        for (json, want) in cases {
            match parse(json.clone()) {
                Err(message) => assert!(message.starts_with(want), "{json}:\n  got  {message}\n  want {want}"),
                Ok(v) => panic!("{json} parsed as {v:?}"),
            }
        }
    }

    #[test]
    fn a_prefix_path_is_kept_and_restored() {
        let mut path = JsonPath::new();
        path.push(Segment::Field("events_by_id"));
        path.push(Segment::Key("u1:3".into()));
        path.push(Segment::Field("create_arguments"));
        let json = json!({"record": {"fields": [
            {"label": "a", "value": {"unit": {}}},
            {"label": "b", "value": {"unit": {}}},
            {"value": {"unit": {}}}
        ]}});
        let err = Value::parse(&crate::json::Json::from(&json), &mut path).unwrap_err();
        assert_eq!(err.to_string(), r#"events_by_id["u1:3"].create_arguments.record.fields[2]: missing label"#);
        assert_eq!(path.to_string(), r#"events_by_id["u1:3"].create_arguments"#);
    }

    #[test]
    fn records_are_required_where_the_format_says_so() {
        let mut path = JsonPath::new();
        path.push(Segment::Field("create_arguments"));
        assert_eq!(
            Record::parse(&crate::json::Json::from(&json!({"int64": "1"})), &mut path).unwrap_err().to_string(),
            "create_arguments: expected a record value, found int64"
        );
        assert_eq!(Record::parse(&crate::json::Json::from(&json!({"record": {}})), &mut path), Ok(Record::default()));
    }
}
