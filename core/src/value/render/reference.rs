//! Both encodings through serde, the way values were rendered before
//! [`super::super::text`] wrote them straight to text: kept as the reference that text
//! is checked against, since a serializer's maps and sequences can only produce
//! well-formed JSON.

use alloc::string::String;
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};

use crate::json::short::ShortText;
use crate::value::{Encoding, Record, Value};

/// A value in one encoding through serde: the reference [`super::super::text`] is checked
/// against.
pub(crate) struct Reference<'a>(pub(crate) &'a Value, pub(crate) Encoding);

/// A record, as a value, in one encoding through serde.
pub(crate) struct RecordReference<'a>(pub(crate) &'a Record, pub(crate) Encoding);

impl Serialize for RecordReference<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.1 {
            Encoding::CompactJson => CompactRecord(self.0).serialize(serializer),
            Encoding::ProtobufJson => one(serializer, "record", &ProtobufRecord(self.0)),
        }
    }
}

impl Serialize for Reference<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.1 {
            Encoding::CompactJson => Compact(self.0).serialize(serializer),
            Encoding::ProtobufJson => Protobuf(self.0).serialize(serializer),
        }
    }
}

/// Writes a one-entry object `{key: value}`.
fn one<S: Serializer>(serializer: S, key: &str, value: &impl Serialize) -> Result<S::Ok, S::Error> {
    let mut map = serializer.serialize_map(Some(1))?;
    map.serialize_entry(key, value)?;
    map.end()
}

/// Writes `{key: {inner_key: value}}`.
fn two<S: Serializer>(
    serializer: S,
    key: &str,
    inner_key: &'static str,
    value: impl Serialize,
) -> Result<S::Ok, S::Error> {
    one(serializer, key, &One(inner_key, value))
}

/// A one-entry object.
struct One<V>(&'static str, V);

impl<V: Serialize> Serialize for One<V> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        one(serializer, self.0, &self.1)
    }
}

/// The empty object `{}`.
struct Empty;

impl Serialize for Empty {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_map(Some(0))?.end()
    }
}

/// A sequence written element by element.
struct Elements<'a, T, F>(&'a [T], F);

impl<'a, T, F, E> Serialize for Elements<'a, T, F>
where
    F: Fn(&'a T) -> E,
    E: Serialize,
{
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.0.len()))?;
        for element in self.0 {
            seq.serialize_element(&(self.1)(element))?;
        }
        seq.end()
    }
}

struct Protobuf<'a>(&'a Value);

impl Serialize for Protobuf<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Value::Record(record) => one(s, "record", &ProtobufRecord(record)),
            Value::Variant { constructor, value } => one(s, "variant", &ProtobufVariant(constructor, value)),
            Value::Enum(constructor) => two(s, "enum", "constructor", constructor),
            Value::List(elements) => two(s, "list", "elements", Elements(elements, Protobuf)),
            Value::Optional(None) => one(s, "optional", &Empty),
            Value::Optional(Some(inner)) => two(s, "optional", "value", Protobuf(inner)),
            Value::TextMap(entries) => two(s, "textMap", "entries", Elements(entries, protobuf_text_entry)),
            Value::GenMap(entries) => two(s, "genMap", "entries", Elements(entries, protobuf_gen_entry)),
            Value::Int64(n) => one(s, "int64", &Text(*n)),
            Value::Numeric(n) => one(s, "numeric", &n.as_str()),
            Value::Text(text) => one(s, "text", text),
            Value::Timestamp(t) => one(s, "timestamp", &Text(t.micros())),
            Value::Date(d) => one(s, "date", &d.days()),
            Value::Party(p) => one(s, "party", p),
            Value::ContractId(c) => one(s, "contractId", c),
            Value::Bool(b) => one(s, "bool", b),
            Value::Unit => one(s, "unit", &Empty),
        }
    }
}

/// The body of a protobuf record: `{"fields":[{"label":..,"value":..},..]}`.
struct ProtobufRecord<'a>(&'a Record);

impl Serialize for ProtobufRecord<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        one(s, "fields", &Elements(&self.0.fields, protobuf_field))
    }
}

fn protobuf_field(field: &crate::value::Field) -> ProtobufField<'_> {
    ProtobufField(&field.label, Protobuf(&field.value))
}

fn protobuf_text_entry((key, value): &(String, Value)) -> ProtobufEntry<&String, Protobuf<'_>> {
    ProtobufEntry(key, Protobuf(value))
}

fn protobuf_gen_entry((key, value): &(Value, Value)) -> ProtobufEntry<Protobuf<'_>, Protobuf<'_>> {
    ProtobufEntry(Protobuf(key), Protobuf(value))
}

fn compact_gen_entry((key, value): &(Value, Value)) -> (Compact<'_>, Compact<'_>) {
    (Compact(key), Compact(value))
}

struct ProtobufField<'a>(&'a str, Protobuf<'a>);

impl Serialize for ProtobufField<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(2))?;
        map.serialize_entry("label", self.0)?;
        map.serialize_entry("value", &self.1)?;
        map.end()
    }
}

struct ProtobufVariant<'a>(&'a str, &'a Value);

impl Serialize for ProtobufVariant<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(2))?;
        map.serialize_entry("constructor", self.0)?;
        map.serialize_entry("value", &Protobuf(self.1))?;
        map.end()
    }
}

struct ProtobufEntry<K, V>(K, V);

impl<K: Serialize, V: Serialize> Serialize for ProtobufEntry<K, V> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(2))?;
        map.serialize_entry("key", &self.0)?;
        map.serialize_entry("value", &self.1)?;
        map.end()
    }
}

struct Compact<'a>(&'a Value);

impl Serialize for Compact<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Value::Record(record) => CompactRecord(record).serialize(s),
            Value::Variant { constructor, value } => {
                let mut map = s.serialize_map(Some(2))?;
                map.serialize_entry("tag", constructor)?;
                map.serialize_entry("value", &Compact(value))?;
                map.end()
            }
            Value::Enum(constructor) => s.serialize_str(constructor),
            Value::List(elements) => Elements(elements, Compact).serialize(s),
            Value::Optional(None) => s.serialize_unit(),
            Value::Optional(Some(inner)) => match &**inner {
                Value::Optional(nested) => NestedOptional(nested.as_deref()).serialize(s),
                other => Compact(other).serialize(s),
            },
            Value::TextMap(entries) => s.collect_map(entries.iter().map(|(k, v)| (k, Compact(v)))),
            Value::GenMap(entries) => Elements(entries, compact_gen_entry).serialize(s),
            Value::Int64(n) => Text(*n).serialize(s),
            Value::Numeric(n) => s.serialize_str(n.as_str()),
            Value::Text(text) | Value::Party(text) | Value::ContractId(text) => s.serialize_str(text),
            Value::Timestamp(t) => Text(*t).serialize(s),
            Value::Date(d) => Text(*d).serialize(s),
            Value::Bool(b) => s.serialize_bool(*b),
            Value::Unit => Empty.serialize(s),
        }
    }
}

/// The content of an optional whose type is itself optional (Daml-LF JSON encoding):
/// `None` is `[]` and `Some(v)` is `[v']`, where `v'` is again nested if `v` is an
/// optional, so that `Some(None)` and `None` stay apart.
struct NestedOptional<'a>(Option<&'a Value>);

impl Serialize for NestedOptional<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            None => s.serialize_seq(Some(0))?.end(),
            Some(Value::Optional(nested)) => {
                let mut seq = s.serialize_seq(Some(1))?;
                seq.serialize_element(&NestedOptional(nested.as_deref()))?;
                seq.end()
            }
            Some(other) => {
                let mut seq = s.serialize_seq(Some(1))?;
                seq.serialize_element(&Compact(other))?;
                seq.end()
            }
        }
    }
}

/// A compact record: an object of its fields, in order.
struct CompactRecord<'a>(&'a Record);

impl Serialize for CompactRecord<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.fields.iter().map(|f| (&f.label, Compact(&f.value))))
    }
}

/// Something written as the JSON string of its short text form.
pub(crate) struct Text<T>(pub(crate) T);

impl<T: ShortText> Serialize for Text<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.0.short_text().as_str())
    }
}
