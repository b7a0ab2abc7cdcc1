//! A value its upstream could not decode: [`Undecoded`], kept as the upstream rendered
//! it in both encodings.
//!
//! The network's Scan stores values without record labels and writes `compact_json`
//! through the codegen's JSON codec of the value's template; when that codec cannot
//! decode a value (a package it does not know), it writes the fallback
//! `{"error": <the codec's message>, "value": <the value in the label-less compressed
//! form>}` instead (`encodeValueFallback` of `ScanHttpEncodings.scala`, used by
//! `CompactJsonScanHttpEncodings` for a contract's payload, a choice argument and an
//! exercise result, in `hyperledger-labs/splice`,
//! `apps/scan/src/main/scala/org/lfdecentralizedtrust/splice/scan/admin/http/`). Its
//! `protobuf_json` rendering (`ProtobufJsonScanHttpEncodings`) is the typed value,
//! without labels. A follower cannot learn the labels of such a value, and a label it
//! made up would be a lie, so the value is stored as the two renderings the upstream
//! sent, and served back as they are: `protobuf_json` as the typed rendering,
//! `compact_json` as the fallback object.
//!
//! Its ingest form is a value object of its own:
//! `{"undecoded": {"protobuf_json": V, "compact_json": {"error": E, "value": X}}}`,
//! where `V` is a `protobuf_json` value whose record fields may lack their labels (it is
//! read as every other value is, but for the labels, so a malformed one is refused
//! naming its path) and the compact rendering is the network's fallback object: exactly
//! `error`, a string, and `value`. Both are kept as JSON text, written the way the
//! node writes all JSON (no whitespace, keys in the order received).

use alloc::format;
use alloc::string::String;

use serde_json::Value as Json;

use super::Value;
use super::path::{JsonPath, PathError, Segment, quoted};
use super::render::string;
use super::source::Source;

/// The key of an undecoded value's object in the ingest form.
pub const UNDECODED: &str = "undecoded";

/// A value its upstream could not decode: its two renderings, as the upstream sent
/// them (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Undecoded {
    /// The `protobuf_json` rendering, JSON text.
    protobuf: String,
    /// The `compact_json` rendering, `{"error": .., "value": ..}`, JSON text.
    compact: String,
}

impl Undecoded {
    /// Reads the body of `{"undecoded": ...}` from `source`.
    pub(super) fn read_body<'s, S: Source<'s>>(source: &mut S) -> Result<Undecoded, S::Error> {
        let mut object = source.object()?;
        source.only(&mut object, &["protobuf_json", "compact_json"])?;
        let protobuf = source.field(&mut object, "protobuf_json", |source| {
            let json = source.json()?;
            source.check(|path| check_typed(&json, path))?;
            Ok(json)
        })?;
        let compact = source.field(&mut object, "compact_json", |source| {
            let json = source.json()?;
            source.check(|path| check_fallback(&json, path))?;
            Ok(json)
        })?;
        source.close(object)?;
        Ok(Undecoded { protobuf: text(&protobuf), compact: text(&compact) })
    }

    /// An undecoded value from renderings this node wrote before (its stored form,
    /// [`super::binary`]), which are not checked again.
    pub(super) fn from_renderings(protobuf: String, compact: String) -> Undecoded {
        Undecoded { protobuf, compact }
    }

    /// The `protobuf_json` rendering.
    pub fn protobuf_json(&self) -> &str {
        &self.protobuf
    }

    /// The `compact_json` rendering.
    pub fn compact_json(&self) -> &str {
        &self.compact
    }

    /// Appends the ingest form, `{"undecoded":{"protobuf_json":..,"compact_json":..}}`.
    pub(super) fn write_ingest(&self, out: &mut String) {
        out.push_str(r#"{"undecoded":{"protobuf_json":"#);
        out.push_str(&self.protobuf);
        out.push_str(r#","compact_json":"#);
        out.push_str(&self.compact);
        out.push_str("}}");
    }
}

/// `json` as the node writes JSON.
fn text(json: &Json) -> String {
    let mut out = String::new();
    write(&mut out, json);
    out
}

/// Appends `json` with no whitespace, strings escaped as every writer of the node
/// escapes them, object keys in their order.
fn write(out: &mut String, json: &Json) {
    match json {
        Json::Null => out.push_str("null"),
        Json::Bool(true) => out.push_str("true"),
        Json::Bool(false) => out.push_str("false"),
        Json::Number(n) => out.push_str(&format!("{n}")),
        Json::String(s) => string(out, s),
        Json::Array(elements) => {
            out.push('[');
            for (n, element) in elements.iter().enumerate() {
                if n > 0 {
                    out.push(',');
                }
                write(out, element);
            }
            out.push(']');
        }
        Json::Object(entries) => {
            out.push('{');
            for (n, (key, value)) in entries.iter().enumerate() {
                if n > 0 {
                    out.push(',');
                }
                string(out, key);
                out.push(':');
                write(out, value);
            }
            out.push('}');
        }
    }
}

/// Checks that `json` is a `protobuf_json` value but for record labels: it must read
/// as one once every record field without a label is given one no ledger label can be
/// (`#0`, `#1`, ...). The labels are the check's only; the value is kept as it came.
fn check_typed(json: &Json, path: &JsonPath) -> Result<(), PathError> {
    let mut labelled = json.clone();
    label_positions(&mut labelled);
    let mut path = path.clone();
    Value::parse(&crate::model::json::Json::from(&labelled), &mut path).map(drop)
}

/// Gives every record field without a `label` the label `#<its index>`. Inside a
/// value, an object with a `record` key is a value object (the bodies of the other
/// kinds have no such key), so the walk needs no knowledge of the kinds.
fn label_positions(json: &mut Json) {
    match json {
        Json::Object(object) => {
            if let Some(fields) =
                object.get_mut("record").and_then(|r| r.get_mut("fields")).and_then(Json::as_array_mut)
            {
                for (n, field) in fields.iter_mut().enumerate() {
                    if let Some(field) = field.as_object_mut()
                        && !field.contains_key("label")
                    {
                        field.insert("label".into(), Json::String(format!("#{n}")));
                    }
                }
            }
            object.values_mut().for_each(label_positions);
        }
        Json::Array(elements) => elements.iter_mut().for_each(label_positions),
        _ => {}
    }
}

/// Checks that `json` is the network's fallback object: `error`, a string, then
/// `value`, and nothing else.
fn check_fallback(json: &Json, path: &JsonPath) -> Result<(), PathError> {
    const SHAPE: &str = "expected the fallback object {\"error\": <text>, \"value\": <value>}";
    let Some(object) = json.as_object() else { return Err(path.error(format!("{SHAPE}, found no object"))) };
    if let Some(key) = object.keys().find(|k| *k != "error" && *k != "value") {
        return Err(path.error(format!("unknown field {}; {SHAPE}", quoted(key))));
    }
    match (object.get("error"), object.get("value")) {
        (Some(Json::String(_)), Some(_)) => Ok(()),
        (Some(Json::String(_)), None) => Err(path.error(format!("missing value; {SHAPE}"))),
        (Some(_), _) => Err(path.error_at(Segment::Field("error"), "expected a string")),
        (None, _) => Err(path.error(format!("missing error; {SHAPE}"))),
    }
}

/// Whether `compact` is the network's fallback rendering of a value it could not
/// decode (`{"error": <text>, "value": ..}`, nothing else).
pub fn is_fallback(compact: &Json) -> bool {
    check_fallback(compact, &JsonPath::new()).is_ok()
}

#[cfg(test)]
mod tests {
    use alloc::string::ToString;

    use serde_json::json;

    use super::*;
    use crate::model::json::scan::Cursor;
    use crate::model::value::Encoding;

    fn parsed(json: &Json) -> Result<Value, String> {
        let mut path = JsonPath::new();
        path.push(Segment::Field("choice_argument"));
        Value::parse(&crate::model::json::Json::from(json), &mut path).map_err(|e| e.to_string())
    }

    fn written(value: &Value, ingest: bool, encoding: Encoding) -> String {
        let mut out = String::new();
        match ingest {
            true => value.write_ingest(&mut out),
            false => value.write(&mut out, encoding),
        }
        out
    }

    #[test]
    fn an_undecoded_value_is_served_as_received_in_each_encoding_and_its_ingest_form_reads_back() {
        let protobuf = json!({"record": {"fields": [{"value": {"party": "alice::1220"}}, {"value": {"record": {}}}]}});
        let compact = json!({"error": "no codec for p:M:T (\"x\")", "value": ["alice::1220", {}]});
        let ingest = json!({"undecoded": {"protobuf_json": protobuf, "compact_json": compact}});
        let value = parsed(&ingest).expect("an undecoded value");
        assert_eq!(written(&value, false, Encoding::ProtobufJson), protobuf.to_string());
        assert_eq!(written(&value, false, Encoding::CompactJson), compact.to_string());
        let text = written(&value, true, Encoding::ProtobufJson);
        assert_eq!(text, ingest.to_string());
        // The ingest form reads back to the same value, through either source (the
        // cursor gives up on strings with escapes, leaving them to the document reader).
        assert_eq!(parsed(&serde_json::from_str(&text).expect("JSON")), Ok(value.clone()));
        let plain = text.replace(r#" (\"x\")"#, "");
        let mut cursor = Cursor::new(&plain);
        let fast = Value::read(&mut cursor).ok().filter(|_| cursor.at_end());
        assert_eq!(fast.map(|v| written(&v, true, Encoding::ProtobufJson)), Some(plain));
        // Inside a record it is written the same way; a served rendering of the record
        // holds the upstream's.
        let outer = Value::Record(crate::model::value::Record {
            fields: alloc::vec![crate::model::value::Field { label: "inner".into(), value }],
        });
        assert_eq!(written(&outer, false, Encoding::CompactJson), format!("{{\"inner\":{compact}}}"));
        assert!(written(&outer, true, Encoding::ProtobufJson).contains("\"undecoded\""));
    }

    #[test]
    fn a_malformed_undecoded_value_is_refused_naming_its_path() {
        let fallback = json!({"error": "e", "value": 1});
        let cases = [
            (
                json!({"undecoded": {"protobuf_json": {"int64": "x"}, "compact_json": fallback}}),
                "choice_argument.undecoded.protobuf_json.int64: expected a decimal integer in a string, such as \"42\"; found \"x\"",
            ),
            (
                json!({"undecoded": {"protobuf_json": {"record": {"fields": [{"value": {"sv": 1}}]}}, "compact_json": fallback}}),
                "choice_argument.undecoded.protobuf_json.record.fields[0].value: unknown value type \"sv\"",
            ),
            (
                json!({"undecoded": {"protobuf_json": {"unit": {}}, "compact_json": {"error": "e"}}}),
                "choice_argument.undecoded.compact_json: missing value",
            ),
            (
                json!({"undecoded": {"protobuf_json": {"unit": {}}, "compact_json": {"error": 1, "value": 1}}}),
                "choice_argument.undecoded.compact_json.error: expected a string",
            ),
            (
                json!({"undecoded": {"protobuf_json": {"unit": {}}, "compact_json": {"error": "e", "value": 1, "x": 2}}}),
                "choice_argument.undecoded.compact_json: unknown field \"x\"",
            ),
            (json!({"undecoded": {"protobuf_json": {"unit": {}}}}), "choice_argument.undecoded: missing compact_json"),
        ];
        for (json, expected) in cases {
            let error = parsed(&json).expect_err("refused");
            assert!(error.starts_with(expected), "{error}");
        }
    }
}
