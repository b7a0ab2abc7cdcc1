//! Rendering values in either encoding (the table in the module docs of [`super`]).
//!
//! Rendering is a [`Serialize`] implementation ([`Encoded`]), so a value goes into a
//! larger document being serialized, without an intermediate `serde_json::Value` tree;
//! [`Value::render`] builds such a tree for callers that want one. The text is written
//! by the value's writer ([`Value::write`]) and handed to the serializer as raw JSON
//! (as `serde_json::value::RawValue` is), which this crate's writer and `serde_json`
//! copy as it is. The JSON strings and lists every writer writes are here.

use alloc::string::String;
use serde::ser::{Serialize, SerializeStruct, Serializer};
use serde_json::Value as Json;

use super::{Encoding, Record, Value};
use crate::model::json::write::{RAW_VALUE, first_escape};

/// A value, or a record, written in one encoding: serializing it writes the encoding.
#[derive(Debug, Clone, Copy)]
pub struct Encoded<'a, T> {
    value: &'a T,
    encoding: Encoding,
}

impl Value {
    /// The value in `encoding`, to serialize.
    pub fn encoded(&self, encoding: Encoding) -> Encoded<'_, Value> {
        Encoded { value: self, encoding }
    }

    /// The value in `encoding`, as a JSON tree. Compact records keep their field order
    /// (the map is insertion-ordered).
    pub fn render(&self, encoding: Encoding) -> Json {
        to_json(&self.encoded(encoding))
    }
}

impl Record {
    /// The record, as a value, in `encoding`, to serialize.
    pub fn encoded(&self, encoding: Encoding) -> Encoded<'_, Record> {
        Encoded { value: self, encoding }
    }

    /// The record, as a value, in `encoding`, as a JSON tree.
    pub fn render(&self, encoding: Encoding) -> Json {
        to_json(&self.encoded(encoding))
    }
}

/// Serializes `value` into a JSON tree; writing strings, numbers and maps into a tree
/// cannot fail.
pub(crate) fn to_json(value: &impl Serialize) -> Json {
    serde_json::to_value(value).unwrap_or(Json::Null)
}

impl Serialize for Encoded<'_, Value> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut text = String::with_capacity(256);
        self.value.write(&mut text, self.encoding);
        raw(serializer, &text)
    }
}

impl Serialize for Encoded<'_, Record> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut text = String::with_capacity(256);
        self.value.write(&mut text, self.encoding);
        raw(serializer, &text)
    }
}

/// Serializes `text`, which is JSON, as raw JSON text: as `serde_json`'s `RawValue`
/// serializes.
pub(crate) fn raw<S: Serializer>(serializer: S, text: &str) -> Result<S::Ok, S::Error> {
    let mut raw = serializer.serialize_struct(RAW_VALUE, 1)?;
    raw.serialize_field(RAW_VALUE, text)?;
    raw.end()
}

/// Appends `items`, each written by `item`, separated by commas.
pub(crate) fn each<T>(out: &mut String, items: &[T], mut item: impl FnMut(&mut String, &T)) {
    for (n, element) in items.iter().enumerate() {
        if n > 0 {
            out.push(',');
        }
        item(out, element);
    }
}

/// Appends a JSON array of strings.
pub(crate) fn strings(out: &mut String, items: &[String]) {
    out.push('[');
    each(out, items, |out, item| string(out, item));
    out.push(']');
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
