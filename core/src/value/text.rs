//! Values written straight to JSON text, in either encoding.
//!
//! The [`Serialize`](serde::Serialize) implementation in [`super::render`] is the
//! reference: it feeds any serializer, and writes every object through serde's map
//! machinery, one key and one value at a time. The update bodies stored at ingest hold
//! a ledger value or two per event, and writing them that way was a large part of
//! rendering. These functions write the same text (byte for byte: a property test
//! compares them on arbitrary values) with the keys and punctuation as literals, and
//! [`super::render::Encoded`] hands the text on to the serializer as raw JSON.

use alloc::string::String;

use super::{Record, Value};
use crate::json::short::ShortText;
use crate::json::write::first_escape;

/// Appends `value` in `protobuf_json`.
pub(crate) fn protobuf(out: &mut String, value: &Value) {
    match value {
        Value::Record(record) => {
            out.push_str(r#"{"record":"#);
            protobuf_record(out, record);
            out.push('}');
        }
        Value::Variant { constructor, value } => {
            out.push_str(r#"{"variant":{"constructor":"#);
            string(out, constructor);
            out.push_str(r#","value":"#);
            protobuf(out, value);
            out.push_str("}}");
        }
        Value::Enum(constructor) => {
            out.push_str(r#"{"enum":{"constructor":"#);
            string(out, constructor);
            out.push_str("}}");
        }
        Value::List(elements) => {
            out.push_str(r#"{"list":{"elements":["#);
            each(out, elements, protobuf);
            out.push_str("]}}");
        }
        Value::Optional(None) => out.push_str(r#"{"optional":{}}"#),
        Value::Optional(Some(inner)) => {
            out.push_str(r#"{"optional":{"value":"#);
            protobuf(out, inner);
            out.push_str("}}");
        }
        Value::TextMap(entries) => {
            out.push_str(r#"{"textMap":{"entries":["#);
            each(out, entries, |out, (key, value)| {
                out.push_str(r#"{"key":"#);
                string(out, key);
                out.push_str(r#","value":"#);
                protobuf(out, value);
                out.push('}');
            });
            out.push_str("]}}");
        }
        Value::GenMap(entries) => {
            out.push_str(r#"{"genMap":{"entries":["#);
            each(out, entries, |out, (key, value)| {
                out.push_str(r#"{"key":"#);
                protobuf(out, key);
                out.push_str(r#","value":"#);
                protobuf(out, value);
                out.push('}');
            });
            out.push_str("]}}");
        }
        Value::Int64(n) => one(out, r#"{"int64":"#, n.short_text().as_str()),
        Value::Numeric(n) => one(out, r#"{"numeric":"#, n.as_str()),
        Value::Text(text) => one(out, r#"{"text":"#, text),
        Value::Timestamp(t) => one(out, r#"{"timestamp":"#, t.micros().short_text().as_str()),
        Value::Date(d) => {
            out.push_str(r#"{"date":"#);
            out.push_str(i64::from(d.days()).short_text().as_str());
            out.push('}');
        }
        Value::Party(party) => one(out, r#"{"party":"#, party),
        Value::ContractId(id) => one(out, r#"{"contractId":"#, id),
        Value::Bool(true) => out.push_str(r#"{"bool":true}"#),
        Value::Bool(false) => out.push_str(r#"{"bool":false}"#),
        Value::Unit => out.push_str(r#"{"unit":{}}"#),
    }
}

/// Appends the body of a `protobuf_json` record: `{"fields":[{"label":..,"value":..},..]}`.
pub(crate) fn protobuf_record(out: &mut String, record: &Record) {
    out.push_str(r#"{"fields":["#);
    each(out, &record.fields, |out, field| {
        out.push_str(r#"{"label":"#);
        string(out, &field.label);
        out.push_str(r#","value":"#);
        protobuf(out, &field.value);
        out.push('}');
    });
    out.push_str("]}");
}

/// Appends `value` in `compact_json`.
pub(crate) fn compact(out: &mut String, value: &Value) {
    match value {
        Value::Record(record) => compact_record(out, record),
        Value::Variant { constructor, value } => {
            out.push_str(r#"{"tag":"#);
            string(out, constructor);
            out.push_str(r#","value":"#);
            compact(out, value);
            out.push('}');
        }
        Value::List(elements) => {
            out.push('[');
            each(out, elements, compact);
            out.push(']');
        }
        Value::Optional(None) => out.push_str("null"),
        Value::Optional(Some(inner)) => match &**inner {
            Value::Optional(nested) => nested_optional(out, nested.as_deref()),
            other => compact(out, other),
        },
        Value::TextMap(entries) => {
            out.push('{');
            each(out, entries, |out, (key, value)| {
                string(out, key);
                out.push(':');
                compact(out, value);
            });
            out.push('}');
        }
        Value::GenMap(entries) => {
            out.push('[');
            each(out, entries, |out, (key, value)| {
                out.push('[');
                compact(out, key);
                out.push(',');
                compact(out, value);
                out.push(']');
            });
            out.push(']');
        }
        Value::Int64(n) => string(out, n.short_text().as_str()),
        Value::Numeric(n) => string(out, n.as_str()),
        Value::Enum(text) | Value::Text(text) | Value::Party(text) | Value::ContractId(text) => string(out, text),
        Value::Timestamp(t) => string(out, t.short_text().as_str()),
        Value::Date(d) => string(out, d.short_text().as_str()),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Unit => out.push_str("{}"),
    }
}

/// Appends a `compact_json` record: an object of its fields, in order.
pub(crate) fn compact_record(out: &mut String, record: &Record) {
    out.push('{');
    each(out, &record.fields, |out, field| {
        string(out, &field.label);
        out.push(':');
        compact(out, &field.value);
    });
    out.push('}');
}

/// The content of an optional whose type is itself optional: `None` is `[]` and
/// `Some(v)` is `[v']` (see `NestedOptional` in [`super::render`]).
fn nested_optional(out: &mut String, value: Option<&Value>) {
    out.push('[');
    match value {
        None => {}
        Some(Value::Optional(nested)) => nested_optional(out, nested.as_deref()),
        Some(other) => compact(out, other),
    }
    out.push(']');
}

/// Appends `items`, each written by `item`, separated by commas.
fn each<T>(out: &mut String, items: &[T], mut item: impl FnMut(&mut String, &T)) {
    for (n, element) in items.iter().enumerate() {
        if n > 0 {
            out.push(',');
        }
        item(out, element);
    }
}

/// Appends `{"<kind>":"text"}`, `open` being `{"<kind>":`.
fn one(out: &mut String, open: &str, text: &str) {
    out.push_str(open);
    string(out, text);
    out.push('}');
}

/// Appends `s` as a JSON string, quotes included, with `serde_json`'s escapes.
pub(crate) fn string(out: &mut String, s: &str) {
    out.push('"');
    let mut rest = s;
    while let Some(at) = first_escape(rest.as_bytes()) {
        // A byte to escape is ASCII, so the text splits around it on char boundaries.
        let (run, tail) = rest.split_at(at);
        out.push_str(run);
        let mut chars = tail.chars();
        if let Some(c) = chars.next() {
            escape(out, c);
        }
        rest = chars.as_str();
    }
    out.push_str(rest);
    out.push('"');
}

/// Appends the escape of `c`, a character below U+0020, `"` or `\`.
fn escape(out: &mut String, c: char) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let short = match c {
        '"' => '"',
        '\\' => '\\',
        '\u{8}' => 'b',
        '\u{c}' => 'f',
        '\n' => 'n',
        '\r' => 'r',
        '\t' => 't',
        _ => {
            let byte = u32::from(c);
            out.push_str("\\u00");
            for nibble in [byte >> 4, byte & 0xf] {
                out.push(char::from(HEX[(nibble & 0xf) as usize]));
            }
            return;
        }
    };
    out.push('\\');
    out.push(short);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Encoding;
    use proptest::prelude::*;

    fn through_serde(value: &Value, encoding: Encoding) -> String {
        let text = serde_json::to_vec(&super::super::render::reference::Reference(value, encoding)).unwrap();
        String::from_utf8(text).unwrap()
    }

    #[test]
    fn strings_are_escaped_as_serde_json_escapes_them() {
        for s in ["", "plain", "a\"b", "\\", "tab\there", "\u{1}\u{1f}\u{7f}", "é€𝄞\n", "0123456789abcdef\"x"] {
            let mut out = String::new();
            string(&mut out, s);
            assert_eq!(out, serde_json::to_string(s).unwrap(), "{s:?}");
        }
    }

    proptest! {
        #[test]
        fn both_encodings_are_written_as_the_serializer_writes_them(value in crate::value::arbitrary::value()) {
            let mut out = String::new();
            protobuf(&mut out, &value);
            prop_assert_eq!(&out, &through_serde(&value, Encoding::ProtobufJson));
            out.clear();
            compact(&mut out, &value);
            prop_assert_eq!(&out, &through_serde(&value, Encoding::CompactJson));
        }
    }
}
