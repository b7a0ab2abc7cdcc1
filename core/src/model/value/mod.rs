//! Typed ledger values: contract arguments, choice arguments and
//! exercise results.
//!
//! The node ingests values in the `protobuf_json` encoding only ([`Value::parse`]),
//! stores them typed, and renders either encoding on request ([`Value::render`]):
//!
//! | type | `protobuf_json` | `compact_json` |
//! |---|---|---|
//! | record | `{"record":{"fields":[{"label":"f","value":V}]}}` | `{"f":V'}` (field order kept) |
//! | variant | `{"variant":{"constructor":"C","value":V}}` | `{"tag":"C","value":V'}` |
//! | enum | `{"enum":{"constructor":"C"}}` | `"C"` |
//! | list | `{"list":{"elements":[V,..]}}` | `[V',..]` |
//! | optional | `{"optional":{}}` / `{"optional":{"value":V}}` | `null` / `V'`; nested: `[]` / `[V']` |
//! | text map | `{"textMap":{"entries":[{"key":"k","value":V}]}}` | `{"k":V'}` |
//! | gen map | `{"genMap":{"entries":[{"key":K,"value":V}]}}` | `[[K',V'],..]` |
//! | int64 | `{"int64":"42"}` | `"42"` |
//! | numeric | `{"numeric":"1.5000000000"}` | `"1.5000000000"` (as ingested) |
//! | text | `{"text":"s"}` | `"s"` |
//! | timestamp | `{"timestamp":"1726839089552807"}` (µs since epoch) | `"2024-09-20T13:31:29.552807Z"` |
//! | date | `{"date":19986}` (days since epoch) | `"2024-09-20"` |
//! | party / contract id | `{"party":"p"}` / `{"contractId":"c"}` | `"p"` / `"c"` |
//! | bool / unit | `{"bool":true}` / `{"unit":{}}` | `true` / `{}` |
//!
//! Parsing is strict: a value object has exactly one key, every record field carries
//! its `label`, and every error is a [`PathError`] naming the offending element. As
//! protobuf's JSON printer omits empty repeated fields, an absent `fields`, `elements`
//! or `entries` is read as empty; rendering always writes them. Record labels and
//! text-map keys must be unique within their record or map, so that the compact
//! rendering (a JSON object) says the same thing; gen-map keys are unique too, as a
//! map's keys are (two keys are the same when they are equal values). Party and contract ids are at most
//! 512 bytes, as ids everywhere in the node ([`crate::model::ids`]).
//!
//! # Where the shape lives
//!
//! A value's shape is written down once, in this module's root: the [`Value`] enum, its one
//! reader ([`Value::read`]) and its one writer (`Value::write`, both encodings).
//!
//! - The reader is generic over a [`Source`]: the same code reads a parsed JSON
//!   document with the path of every problem ([`Value::parse`], through
//!   [`source::Tree`]) and, on ingest's fast path, the text of an ingest line
//!   straight from its bytes, giving up on anything unusual so that the document
//!   reader runs for the error ([`crate::model::json::scan::Cursor`]). See [`source`].
//! - The writer appends JSON text with the keys and punctuation as literals (ingest
//!   renders every update's bodies with it); the `render` module hands that text to serde
//!   serializers as raw JSON ([`Encoded`], [`Value::render`]).
//!
//! The binary form stored with each update has its own writer and reader in [`binary`].
//!
//! Adding a kind of value touches this module's root (the enum variant, its [`TYPES`] entry and
//! [`Value::type_name`], an arm in the reader and one in each encoding of the writer,
//! a tag of the binary form,
//! and a row of the golden table in the tests), the proptest generator
//! (`value::arbitrary`), and the demo generator of the native host, which writes every
//! kind. Compact records keep their field order, also in a JSON tree, because the
//! core enables `serde_json`'s `preserve_order` feature (its map is then
//! insertion-ordered, without `std`).
//!
//! [`path`] and [`read`] hold the JSON-path error machinery that the update parser
//! (and any other ingest parser) shares.

pub mod binary;
mod numeric;
pub mod path;
pub mod read;
pub(crate) mod render;
pub mod source;
mod undecoded;

#[cfg(test)]
pub(crate) mod arbitrary;

use alloc::boxed::Box;
use alloc::collections::BTreeSet;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

pub use numeric::{Numeric, NumericError};
pub use path::{JsonPath, PathError, Segment};
pub use render::Encoded;
pub use source::Source;
pub use undecoded::{UNDECODED, Undecoded, is_fallback};

use self::path::quoted;
use self::render::{each, string};
use self::source::{Repeats, Tree, bounded_string, id, repeated};
use crate::model::json::Json;
use crate::model::json::short::ShortText;
use crate::model::time::{Date, Timestamp};

/// A typed ledger value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// A record: labelled fields, in order.
    Record(Record),
    /// A variant: a constructor and its argument.
    Variant {
        /// The constructor's name.
        constructor: String,
        /// The constructor's argument.
        value: Box<Value>,
    },
    /// An enum: a constructor without argument.
    Enum(String),
    /// A list.
    List(Vec<Value>),
    /// An optional value; a nested optional is `Optional(Some(Optional(..)))`.
    Optional(Option<Box<Value>>),
    /// A map with text keys, in order; keys are unique.
    TextMap(Vec<(String, Value)>),
    /// A map with keys of any type, in order.
    GenMap(Vec<(Value, Value)>),
    /// A 64-bit signed integer.
    Int64(i64),
    /// A decimal number, kept as the text it was ingested as.
    Numeric(Numeric),
    /// A text.
    Text(String),
    /// A point in time, microsecond resolution.
    Timestamp(Timestamp),
    /// A calendar date.
    Date(Date),
    /// A party id.
    Party(String),
    /// A contract id.
    ContractId(String),
    /// A boolean.
    Bool(bool),
    /// The unit value.
    Unit,
    /// A value the upstream it came from could not decode, kept as the upstream
    /// rendered it in both encodings, without labels ([`Undecoded`]). It is not a type
    /// of the ledger, and not in [`TYPES`]: its ingest form is
    /// `{"undecoded": {"protobuf_json": .., "compact_json": ..}}`.
    Undecoded(Box<Undecoded>),
}

/// A record value: labelled fields, in order, labels unique.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Record {
    /// The fields, in order.
    pub fields: Vec<Field>,
}

/// One labelled field of a [`Record`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// The field's name.
    pub label: String,
    /// The field's value.
    pub value: Value,
}

/// The two JSON encodings of ledger values (the `ledger_value_encoding` parameter of `GET /v2/updates/{id}`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Encoding {
    /// `compact_json`, the default: the ledger's HTTP JSON API encoding.
    #[default]
    CompactJson,
    /// `protobuf_json`: verbose and typed, lossless.
    ProtobufJson,
}

impl Encoding {
    /// `compact_json` or `protobuf_json`; anything else is `None`.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "compact_json" => Some(Encoding::CompactJson),
            "protobuf_json" => Some(Encoding::ProtobufJson),
            _ => None,
        }
    }

    /// The encoding's name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Encoding::CompactJson => "compact_json",
            Encoding::ProtobufJson => "protobuf_json",
        }
    }
}

impl Value {
    /// The value's type as named in the `protobuf_json` encoding (`record`, `int64`,
    /// `contractId`, ...).
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Record(_) => "record",
            Value::Variant { .. } => "variant",
            Value::Enum(_) => "enum",
            Value::List(_) => "list",
            Value::Optional(_) => "optional",
            Value::TextMap(_) => "textMap",
            Value::GenMap(_) => "genMap",
            Value::Int64(_) => "int64",
            Value::Numeric(_) => "numeric",
            Value::Text(_) => "text",
            Value::Timestamp(_) => "timestamp",
            Value::Date(_) => "date",
            Value::Party(_) => "party",
            Value::ContractId(_) => "contractId",
            Value::Bool(_) => "bool",
            Value::Unit => "unit",
            Value::Undecoded(_) => UNDECODED,
        }
    }

    /// The record, if this is one.
    pub fn as_record(&self) -> Option<&Record> {
        match self {
            Value::Record(record) => Some(record),
            _ => None,
        }
    }

    /// The integer, if this is an int64.
    pub fn as_int64(&self) -> Option<i64> {
        match self {
            Value::Int64(n) => Some(*n),
            _ => None,
        }
    }

    /// The text, if this is a text.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Value::Text(s) => Some(s),
            _ => None,
        }
    }

    /// The party id, if this is a party.
    pub fn as_party(&self) -> Option<&str> {
        match self {
            Value::Party(s) => Some(s),
            _ => None,
        }
    }

    /// The contract id, if this is a contract id.
    pub fn as_contract_id(&self) -> Option<&str> {
        match self {
            Value::ContractId(s) => Some(s),
            _ => None,
        }
    }

    /// The timestamp, if this is one.
    pub fn as_timestamp(&self) -> Option<Timestamp> {
        match self {
            Value::Timestamp(t) => Some(*t),
            _ => None,
        }
    }

    /// Calls `each` with every undecoded value within this one, in the order they are
    /// written.
    pub fn each_undecoded<'a>(&'a self, each: &mut impl FnMut(&'a Undecoded)) {
        match self {
            Value::Record(record) => record.fields.iter().for_each(|f| f.value.each_undecoded(each)),
            Value::Variant { value, .. } => value.each_undecoded(each),
            Value::List(elements) => elements.iter().for_each(|e| e.each_undecoded(each)),
            Value::Optional(Some(inner)) => inner.each_undecoded(each),
            Value::TextMap(entries) => entries.iter().for_each(|(_, v)| v.each_undecoded(each)),
            Value::GenMap(entries) => entries.iter().for_each(|(k, v)| {
                k.each_undecoded(each);
                v.each_undecoded(each);
            }),
            Value::Undecoded(undecoded) => each(undecoded),
            _ => {}
        }
    }

    /// Follows record labels: `payload.lookup(&["round", "number"])` is the value of
    /// field `number` of the record in field `round`, if every step is a record with
    /// that field.
    pub fn lookup(&self, labels: &[&str]) -> Option<&Value> {
        labels.iter().try_fold(self, |value, label| value.as_record()?.get(label))
    }
}

impl Record {
    /// The value of the first field labelled `label`.
    pub fn get(&self, label: &str) -> Option<&Value> {
        self.fields.iter().find(|f| f.label == label).map(|f| &f.value)
    }

    /// Follows record labels from this record (see [`Value::lookup`]).
    pub fn lookup(&self, labels: &[&str]) -> Option<&Value> {
        let (first, rest) = labels.split_first()?;
        self.get(first)?.lookup(rest)
    }
}

impl From<Record> for Value {
    fn from(record: Record) -> Self {
        Value::Record(record)
    }
}

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

/// The entry of [`TYPES`] that is `key` (a `match`, which finds it quicker than a
/// search of the list).
fn type_named(key: &str) -> Option<&'static str> {
    Some(match key {
        "record" => "record",
        "variant" => "variant",
        "enum" => "enum",
        "list" => "list",
        "optional" => "optional",
        "textMap" => "textMap",
        "genMap" => "genMap",
        "int64" => "int64",
        "numeric" => "numeric",
        "text" => "text",
        "timestamp" => "timestamp",
        "date" => "date",
        "party" => "party",
        "contractId" => "contractId",
        "bool" => "bool",
        "unit" => "unit",
        _ => return None,
    })
}

impl Value {
    /// Parses a value in the `protobuf_json` encoding. `path` is where `json` sits in
    /// its document (push the prefix first); errors name the offending element below it.
    /// On return `path` is as it was.
    pub fn parse(json: &Json<'_>, path: &mut JsonPath) -> Result<Value, PathError> {
        Value::read(&mut Tree::new(json, path))
    }

    /// Reads a value in the `protobuf_json` encoding from `source`.
    pub fn read<'s, S: Source<'s>>(source: &mut S) -> Result<Value, S::Error> {
        let mut object =
            source.object_or(|found| format!("expected a value object such as {{\"text\":\"s\"}}, found {found}"))?;
        let key = source.sole_key(&mut object, |count| {
            format!("a value object has exactly one key, its type (one of {}); found {count}", TYPES.join(", "))
        })?;
        if key == UNDECODED {
            let value = source.entry(&mut object, UNDECODED, Undecoded::read_body)?;
            source.close(object)?;
            return Ok(Value::Undecoded(Box::new(value)));
        }
        let Some(kind) = type_named(key) else {
            return Err(
                source.error(|| format!("unknown value type {}; expected one of {}", quoted(key), TYPES.join(", ")))
            );
        };
        let value = source.entry(&mut object, kind, |source| Value::read_body(source, kind))?;
        source.close(object)?;
        Ok(value)
    }

    /// The body of a value object whose key is `kind`, one of [`TYPES`].
    fn read_body<'s, S: Source<'s>>(source: &mut S, kind: &str) -> Result<Value, S::Error> {
        Ok(match kind {
            "record" => Value::Record(Record::read_body(source)?),
            "variant" => {
                let mut object = source.object()?;
                source.only(&mut object, &["constructor", "value"])?;
                let constructor = source.field(&mut object, "constructor", id)?.into();
                let value = Box::new(source.field(&mut object, "value", Value::read)?);
                source.close(object)?;
                Value::Variant { constructor, value }
            }
            "enum" => {
                let mut object = source.object()?;
                source.only(&mut object, &["constructor"])?;
                let constructor = source.field(&mut object, "constructor", id)?.into();
                source.close(object)?;
                Value::Enum(constructor)
            }
            "list" => {
                let mut object = source.object()?;
                source.only(&mut object, &["elements"])?;
                let elements = repeated(source, &mut object, "elements", |source, _| Value::read(source))?;
                source.close(object)?;
                Value::List(elements)
            }
            "optional" => {
                let mut object = source.object()?;
                source.only(&mut object, &["value"])?;
                let value = source.optional_field(&mut object, "value", Value::read)?;
                source.close(object)?;
                Value::Optional(value.map(Box::new))
            }
            "textMap" => {
                let mut object = source.object()?;
                source.only(&mut object, &["entries"])?;
                let mut keys = Repeats::default();
                let entries = repeated(source, &mut object, "entries", |source, earlier: &[(String, Value)]| {
                    let mut entry = source.object()?;
                    source.only(&mut entry, &["key", "value"])?;
                    let key = source.field(&mut entry, "key", |source| source.string())?;
                    if keys.met(key, earlier.iter().map(|(k, _)| k.as_str())) {
                        return Err(source.error(|| format!("duplicate key {}", quoted(key))));
                    }
                    let value = source.field(&mut entry, "value", Value::read)?;
                    source.close(entry)?;
                    Ok((String::from(key), value))
                })?;
                source.close(object)?;
                Value::TextMap(entries)
            }
            "genMap" => {
                let mut object = source.object()?;
                source.only(&mut object, &["entries"])?;
                let mut keys = GenMapKeys::default();
                let entries = repeated(source, &mut object, "entries", |source, earlier: &[(Value, Value)]| {
                    let mut entry = source.object()?;
                    source.only(&mut entry, &["key", "value"])?;
                    let key = source.field(&mut entry, "key", Value::read)?;
                    if keys.met(&key, earlier) {
                        return Err(source.error(|| {
                            let mut text = String::new();
                            key.write_protobuf(&mut text);
                            format!("duplicate key {text}")
                        }));
                    }
                    let value = source.field(&mut entry, "value", Value::read)?;
                    source.close(entry)?;
                    Ok((key, value))
                })?;
                source.close(object)?;
                Value::GenMap(entries)
            }
            "int64" => Value::Int64(int64_text(source)?),
            "numeric" => {
                let text = source.string()?;
                Value::Numeric(Numeric::parse(text).map_err(|e| source.error(|| e.to_string()))?)
            }
            "text" => Value::Text(source.string()?.into()),
            "timestamp" => {
                let micros = int64_text(source)?;
                Value::Timestamp(
                    Timestamp::from_micros(micros)
                        .map_err(|e| source.error(|| format!("{e}; expected microseconds since the Unix epoch")))?,
                )
            }
            "date" => {
                let days = source.int64()?;
                Value::Date(
                    Date::from_days(days)
                        .map_err(|e| source.error(|| format!("{e}; expected days since the Unix epoch")))?,
                )
            }
            "party" => Value::Party(bounded_string(source)?.into()),
            "contractId" => Value::ContractId(bounded_string(source)?.into()),
            "bool" => Value::Bool(source.boolean()?),
            "unit" => {
                let mut object = source.object()?;
                source.only(&mut object, &[])?;
                source.close(object)?;
                Value::Unit
            }
            // `kind` is one of TYPES, and every entry of TYPES has an arm above.
            other => return Err(source.error(|| format!("unknown value type {}", quoted(other)))),
        })
    }

    /// Appends the value in `encoding`.
    pub(crate) fn write(&self, out: &mut String, encoding: Encoding) {
        match encoding {
            Encoding::CompactJson => self.write_compact(out),
            Encoding::ProtobufJson => self.write_protobuf(out),
        }
    }

    /// Appends the value in `protobuf_json`.
    pub(crate) fn write_protobuf(&self, out: &mut String) {
        self.write_typed(out, false);
    }

    /// Appends the value in its ingest form: `protobuf_json`, an undecoded value as its
    /// ingest object (both renderings).
    pub(crate) fn write_ingest(&self, out: &mut String) {
        self.write_typed(out, true);
    }

    /// Appends the value in `protobuf_json`; an undecoded value as its ingest object
    /// when `ingest`, else as its upstream's `protobuf_json` rendering.
    fn write_typed(&self, out: &mut String, ingest: bool) {
        match self {
            Value::Record(record) => {
                out.push_str(r#"{"record":"#);
                record.write_protobuf_body(out, ingest);
                out.push('}');
            }
            Value::Variant { constructor, value } => {
                out.push_str(r#"{"variant":{"constructor":"#);
                string(out, constructor);
                out.push_str(r#","value":"#);
                value.write_typed(out, ingest);
                out.push_str("}}");
            }
            Value::Enum(constructor) => {
                out.push_str(r#"{"enum":{"constructor":"#);
                string(out, constructor);
                out.push_str("}}");
            }
            Value::List(elements) => {
                out.push_str(r#"{"list":{"elements":["#);
                each(out, elements, |out, element| element.write_typed(out, ingest));
                out.push_str("]}}");
            }
            Value::Optional(None) => out.push_str(r#"{"optional":{}}"#),
            Value::Optional(Some(inner)) => {
                out.push_str(r#"{"optional":{"value":"#);
                inner.write_typed(out, ingest);
                out.push_str("}}");
            }
            Value::TextMap(entries) => {
                out.push_str(r#"{"textMap":{"entries":["#);
                each(out, entries, |out, (key, value)| {
                    out.push_str(r#"{"key":"#);
                    string(out, key);
                    out.push_str(r#","value":"#);
                    value.write_typed(out, ingest);
                    out.push('}');
                });
                out.push_str("]}}");
            }
            Value::GenMap(entries) => {
                out.push_str(r#"{"genMap":{"entries":["#);
                each(out, entries, |out, (key, value)| {
                    out.push_str(r#"{"key":"#);
                    key.write_typed(out, ingest);
                    out.push_str(r#","value":"#);
                    value.write_typed(out, ingest);
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
            Value::Undecoded(undecoded) if ingest => undecoded.write_ingest(out),
            Value::Undecoded(undecoded) => out.push_str(undecoded.protobuf_json()),
        }
    }

    /// Appends the value in `compact_json`.
    pub(crate) fn write_compact(&self, out: &mut String) {
        match self {
            Value::Record(record) => record.write_compact(out),
            Value::Variant { constructor, value } => {
                out.push_str(r#"{"tag":"#);
                string(out, constructor);
                out.push_str(r#","value":"#);
                value.write_compact(out);
                out.push('}');
            }
            Value::List(elements) => {
                out.push('[');
                each(out, elements, |out, element| element.write_compact(out));
                out.push(']');
            }
            Value::Optional(None) => out.push_str("null"),
            Value::Optional(Some(inner)) => match &**inner {
                Value::Optional(nested) => write_nested_optional(out, nested.as_deref()),
                other => other.write_compact(out),
            },
            Value::TextMap(entries) => {
                out.push('{');
                each(out, entries, |out, (key, value)| {
                    string(out, key);
                    out.push(':');
                    value.write_compact(out);
                });
                out.push('}');
            }
            Value::GenMap(entries) => {
                out.push('[');
                each(out, entries, |out, (key, value)| {
                    out.push('[');
                    key.write_compact(out);
                    out.push(',');
                    value.write_compact(out);
                    out.push(']');
                });
                out.push(']');
            }
            Value::Int64(n) => string(out, n.short_text().as_str()),
            Value::Numeric(n) => string(out, n.as_str()),
            Value::Enum(text) | Value::Text(text) | Value::Party(text) | Value::ContractId(text) => {
                string(out, text);
            }
            Value::Timestamp(t) => string(out, t.short_text().as_str()),
            Value::Date(d) => string(out, d.short_text().as_str()),
            Value::Bool(true) => out.push_str("true"),
            Value::Bool(false) => out.push_str("false"),
            Value::Unit => out.push_str("{}"),
            Value::Undecoded(undecoded) => out.push_str(undecoded.compact_json()),
        }
    }
}

/// The content of an optional whose type is itself optional (the Daml-LF JSON
/// encoding): `None` is `[]` and `Some(v)` is `[v']`, where `v'` is again nested if `v`
/// is an optional, so that `Some(None)` and `None` stay apart.
fn write_nested_optional(out: &mut String, value: Option<&Value>) {
    out.push('[');
    match value {
        None => {}
        Some(Value::Optional(nested)) => write_nested_optional(out, nested.as_deref()),
        Some(other) => other.write_compact(out),
    }
    out.push(']');
}

/// Appends `{"<kind>":"text"}`, `open` being `{"<kind>":`.
fn one(out: &mut String, open: &str, text: &str) {
    out.push_str(open);
    string(out, text);
    out.push('}');
}

/// A decimal int64 written as a JSON string: `-?[0-9]+` within the int64 range.
fn int64_text<'s, S: Source<'s>>(source: &mut S) -> Result<i64, S::Error> {
    let text = source.string()?;
    let digits = text.strip_prefix('-').unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(
            source.error(|| format!("expected a decimal integer in a string, such as \"42\"; found {}", quoted(text)))
        );
    }
    text.parse::<i64>().map_err(|_| source.error(|| format!("{text} is out of the int64 range")))
}

/// Whether a gen map's key was met before in the map: compared with the earlier keys
/// while they are few, looked up in a set of their `protobuf_json` text once they are
/// many (two values are equal exactly when their texts are).
#[derive(Debug, Default)]
struct GenMapKeys(Option<BTreeSet<String>>);

impl GenMapKeys {
    /// Whether `key` is among the keys of `earlier` (all the entries read so far),
    /// remembering it.
    fn met(&mut self, key: &Value, earlier: &[(Value, Value)]) -> bool {
        const SCAN: usize = 32;
        let text = |value: &Value| {
            let mut text = String::new();
            value.write_ingest(&mut text);
            text
        };
        if let Some(set) = &mut self.0 {
            return !set.insert(text(key));
        }
        if earlier.len() < SCAN {
            return earlier.iter().any(|(k, _)| k == key);
        }
        let mut set: BTreeSet<String> = earlier.iter().map(|(k, _)| text(k)).collect();
        let repeated = !set.insert(text(key));
        self.0 = Some(set);
        repeated
    }
}

impl Value {
    /// Reads a contract's arguments in the `protobuf_json` encoding: a record, or a
    /// value its upstream could not decode ([`Undecoded`]).
    pub fn read_arguments<'s, S: Source<'s>>(source: &mut S) -> Result<Value, S::Error> {
        match Value::read(source)? {
            value @ (Value::Record(_) | Value::Undecoded(_)) => Ok(value),
            other => Err(source.error(|| format!("expected a record value, found {}", other.type_name()))),
        }
    }
}

impl Record {
    /// Parses a value in the `protobuf_json` encoding that must be a record.
    pub fn parse(json: &Json<'_>, path: &mut JsonPath) -> Result<Record, PathError> {
        Record::read(&mut Tree::new(json, path))
    }

    /// Reads a value in the `protobuf_json` encoding that must be a record.
    pub fn read<'s, S: Source<'s>>(source: &mut S) -> Result<Record, S::Error> {
        match Value::read(source)? {
            Value::Record(record) => Ok(record),
            other => Err(source.error(|| format!("expected a record value, found {}", other.type_name()))),
        }
    }

    /// `{"fields":[{"label":"f","value":V}]}`, labels present and unique.
    fn read_body<'s, S: Source<'s>>(source: &mut S) -> Result<Record, S::Error> {
        let mut object = source.object()?;
        source.only(&mut object, &["fields"])?;
        let mut labels = Repeats::default();
        let fields = repeated(source, &mut object, "fields", |source, earlier: &[Field]| {
            let mut field = source.object()?;
            source.only(&mut field, &["label", "value"])?;
            let label = source.field(&mut field, "label", id)?;
            if labels.met(label, earlier.iter().map(|f| f.label.as_str())) {
                return Err(source.error(|| format!("duplicate label {}", quoted(label))));
            }
            let value = source.field(&mut field, "value", Value::read)?;
            source.close(field)?;
            Ok(Field { label: label.into(), value })
        })?;
        source.close(object)?;
        Ok(Record { fields })
    }

    /// Appends the record, as a value, in `encoding`.
    pub(crate) fn write(&self, out: &mut String, encoding: Encoding) {
        match encoding {
            Encoding::CompactJson => self.write_compact(out),
            Encoding::ProtobufJson => {
                out.push_str(r#"{"record":"#);
                self.write_protobuf_body(out, false);
                out.push('}');
            }
        }
    }

    /// Appends the body of a `protobuf_json` record: `{"fields":[{"label":..,"value":..},..]}`
    /// (its values in their ingest form when `ingest`).
    fn write_protobuf_body(&self, out: &mut String, ingest: bool) {
        out.push_str(r#"{"fields":["#);
        each(out, &self.fields, |out, field| {
            out.push_str(r#"{"label":"#);
            string(out, &field.label);
            out.push_str(r#","value":"#);
            field.value.write_typed(out, ingest);
            out.push('}');
        });
        out.push_str("]}");
    }

    /// Appends a `compact_json` record: an object of its fields, in order.
    fn write_compact(&self, out: &mut String) {
        out.push('{');
        each(out, &self.fields, |out, field| {
            string(out, &field.label);
            out.push(':');
            field.value.write_compact(out);
        });
        out.push('}');
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::json::scan::Cursor;
    use alloc::vec;
    use serde_json::Value as SerdeJson;
    use serde_json::json;

    /// What the cursor reads from `text`, if it takes all of it.
    fn fast(text: &str) -> Option<Value> {
        let mut cursor = Cursor::new(text);
        Value::read(&mut cursor).ok().filter(|_| cursor.at_end())
    }

    fn strict(text: &str) -> Result<Value, String> {
        let json = Json::parse(text.as_bytes()).map_err(|e| alloc::format!("{e}"))?;
        Value::parse(&json, &mut JsonPath::new()).map_err(|e| alloc::format!("{e}"))
    }

    /// Parses `json` as a document and, as text, with the cursor; wherever the cursor
    /// takes the text it must read what the document reader reads.
    fn parse(json: SerdeJson) -> Result<Value, String> {
        let mut path = JsonPath::new();
        let result = Value::parse(&Json::from(&json), &mut path).map_err(|e| e.to_string());
        assert!(path.is_root(), "the path is restored");
        let text = serde_json::to_string(&json).unwrap();
        if let Some(fast) = fast(&text) {
            assert_eq!(Ok(fast), result, "the cursor took {text}");
        }
        result
    }

    fn field(label: &str, value: Value) -> Field {
        Field { label: label.into(), value }
    }

    fn some(v: Value) -> Value {
        Value::Optional(Some(Box::new(v)))
    }

    const NONE: Value = Value::Optional(None);

    fn record(fields: &[(&str, Value)]) -> Value {
        Value::Record(Record { fields: fields.iter().map(|(label, value)| field(label, value.clone())).collect() })
    }

    fn written(value: &Value, encoding: Encoding) -> String {
        let mut out = String::new();
        value.write(&mut out, encoding);
        out
    }

    /// (value, protobuf_json, compact_json): the exact text of every type in both
    /// encodings.
    fn golden() -> Vec<(Value, &'static str, &'static str)> {
        let ts = |micros| Value::Timestamp(Timestamp::from_micros(micros).unwrap());
        let numeric = |text| Value::Numeric(Numeric::parse(text).unwrap());
        vec![
            (Value::Int64(42), r#"{"int64":"42"}"#, r#""42""#),
            (Value::Int64(i64::MIN), r#"{"int64":"-9223372036854775808"}"#, r#""-9223372036854775808""#),
            (numeric("1.5000000000"), r#"{"numeric":"1.5000000000"}"#, r#""1.5000000000""#),
            (numeric("0E-10"), r#"{"numeric":"0E-10"}"#, r#""0E-10""#),
            (numeric("-1e5"), r#"{"numeric":"-1e5"}"#, r#""-1e5""#),
            (Value::Text("s \"q\"".into()), r#"{"text":"s \"q\""}"#, r#""s \"q\"""#),
            (
                Value::Text("tab\there\u{1}\u{1f}\u{7f}é€𝄞\n\\".into()),
                "{\"text\":\"tab\\there\\u0001\\u001f\u{7f}é€𝄞\\n\\\\\"}",
                "\"tab\\there\\u0001\\u001f\u{7f}é€𝄞\\n\\\\\"",
            ),
            (ts(1_726_839_089_552_807), r#"{"timestamp":"1726839089552807"}"#, r#""2024-09-20T13:31:29.552807Z""#),
            (ts(1_726_839_089_000_000), r#"{"timestamp":"1726839089000000"}"#, r#""2024-09-20T13:31:29.000000Z""#),
            (ts(-1), r#"{"timestamp":"-1"}"#, r#""1969-12-31T23:59:59.999999Z""#),
            (ts(Timestamp::MIN.micros()), r#"{"timestamp":"-62135596800000000"}"#, r#""0001-01-01T00:00:00.000000Z""#),
            (Value::Date(Date::from_days(19_986).unwrap()), r#"{"date":19986}"#, r#""2024-09-20""#),
            (Value::Date(Date::from_days(-1).unwrap()), r#"{"date":-1}"#, r#""1969-12-31""#),
            (Value::Party("alice::1220".into()), r#"{"party":"alice::1220"}"#, r#""alice::1220""#),
            (Value::ContractId("00ab".into()), r#"{"contractId":"00ab"}"#, r#""00ab""#),
            (Value::Bool(true), r#"{"bool":true}"#, "true"),
            (Value::Bool(false), r#"{"bool":false}"#, "false"),
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
                record(&[("q\"uote", Value::Unit)]),
                r#"{"record":{"fields":[{"label":"q\"uote","value":{"unit":{}}}]}}"#,
                r#"{"q\"uote":{}}"#,
            ),
            (Value::TextMap(vec![]), r#"{"textMap":{"entries":[]}}"#, "{}"),
            (
                Value::TextMap(vec![("b".into(), Value::Int64(2)), ("a".into(), Value::Int64(1))]),
                r#"{"textMap":{"entries":[{"key":"b","value":{"int64":"2"}},{"key":"a","value":{"int64":"1"}}]}}"#,
                r#"{"b":"2","a":"1"}"#,
            ),
            (Value::GenMap(vec![]), r#"{"genMap":{"entries":[]}}"#, "[]"),
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

    #[test]
    fn every_type_is_written_exactly_in_both_encodings() {
        for (value, protobuf, compact) in golden() {
            assert_eq!(written(&value, Encoding::ProtobufJson), protobuf, "{value:?}");
            assert_eq!(written(&value, Encoding::CompactJson), compact, "{value:?}");
            // Through serde, and into a tree and out, the text is the same.
            for (encoding, text) in [(Encoding::ProtobufJson, protobuf), (Encoding::CompactJson, compact)] {
                assert_eq!(serde_json::to_string(&value.render(encoding)).unwrap(), text);
                assert_eq!(serde_json::to_string(&value.encoded(encoding)).unwrap(), text);
            }
        }
    }

    #[test]
    fn every_golden_text_reads_back_through_both_sources() {
        for (value, protobuf, _) in golden() {
            assert_eq!(strict(protobuf), Ok(value.clone()), "{protobuf}");
            // The cursor leaves strings with escapes to the document reader.
            if !protobuf.contains('\\') {
                assert_eq!(fast(protobuf), Some(value), "{protobuf}");
            }
        }
    }

    #[test]
    fn every_type_name_is_found_and_nothing_else() {
        for kind in TYPES {
            assert_eq!(type_named(kind), Some(kind));
        }
        assert_eq!(type_named("string"), None);
        assert_eq!(type_named("Record"), None);
    }

    #[test]
    fn strings_are_escaped_as_serde_json_escapes_them() {
        for s in ["", "plain", "a\"b", "\\", "tab\there", "\u{1}\u{1f}\u{7f}", "é€𝄞\n", "0123456789abcdef\"x"] {
            let mut out = String::new();
            string(&mut out, s);
            assert_eq!(out, serde_json::to_string(s).unwrap(), "{s:?}");
        }
    }

    #[test]
    fn records_render_alone_as_values() {
        let value = record(&[("b", Value::Unit), ("a", Value::Unit)]);
        let Value::Record(r) = &value else { unreachable!() };
        for encoding in [Encoding::CompactJson, Encoding::ProtobufJson] {
            assert_eq!(r.render(encoding), value.render(encoding));
            assert_eq!(serde_json::to_string(&r.encoded(encoding)).unwrap(), written(&value, encoding));
        }
    }

    #[test]
    fn compact_record_field_order_survives_serialization() {
        let labels = ["zeta", "alpha", "mu", "beta", "omega"];
        let value = record(&labels.map(|l| (l, Value::Unit)));
        let compact = serde_json::to_string(&value.render(Encoding::CompactJson)).unwrap();
        assert_eq!(compact, r#"{"zeta":{},"alpha":{},"mu":{},"beta":{},"omega":{}}"#);
        let reparsed: SerdeJson = serde_json::from_str(&compact).unwrap();
        assert_eq!(serde_json::to_string(&reparsed).unwrap(), compact, "parsing JSON keeps key order too");
    }

    #[test]
    fn many_labels_and_keys_are_checked_for_repeats_too() {
        let fields: Vec<SerdeJson> =
            (0..40).map(|i| json!({"label": alloc::format!("f{}", i % 39), "value": {"unit": {}}})).collect();
        assert_eq!(
            parse(json!({"record": {"fields": fields}})).unwrap_err(),
            "record.fields[39]: duplicate label \"f0\""
        );
        let entries: Vec<SerdeJson> =
            (0..40).map(|i| json!({"key": alloc::format!("k{}", i % 39), "value": {"unit": {}}})).collect();
        assert_eq!(
            parse(json!({"textMap": {"entries": entries}})).unwrap_err(),
            "textMap.entries[39]: duplicate key \"k0\""
        );
        let entries: Vec<SerdeJson> =
            (0..40).map(|i| json!({"key": alloc::format!("k{i}"), "value": {"unit": {}}})).collect();
        assert!(parse(json!({"textMap": {"entries": entries}})).is_ok());
        let key = |i: usize| json!({"record": {"fields": [{"label": "n", "value": {"int64": alloc::format!("{i}")}}]}});
        let entries: Vec<SerdeJson> = (0..40).map(|i| json!({"key": key(i % 39), "value": {"unit": {}}})).collect();
        assert_eq!(
            parse(json!({"genMap": {"entries": entries}})).unwrap_err(),
            r#"genMap.entries[39]: duplicate key {"record":{"fields":[{"label":"n","value":{"int64":"0"}}]}}"#
        );
        let entries: Vec<SerdeJson> = (0..40).map(|i| json!({"key": key(i), "value": {"unit": {}}})).collect();
        assert!(parse(json!({"genMap": {"entries": entries}})).is_ok());
    }

    #[test]
    fn encodings_parse_by_their_wire_names() {
        assert_eq!(Encoding::parse("compact_json"), Some(Encoding::CompactJson));
        assert_eq!(Encoding::parse("protobuf_json"), Some(Encoding::ProtobufJson));
        assert_eq!(Encoding::parse("json"), None);
        assert_eq!(Encoding::parse("COMPACT_JSON"), None);
        assert_eq!(Encoding::default(), Encoding::CompactJson);
        for e in [Encoding::CompactJson, Encoding::ProtobufJson] {
            assert_eq!(Encoding::parse(e.as_str()), Some(e));
        }
    }

    #[test]
    fn lookup_follows_record_labels() {
        let round = Record { fields: alloc::vec![Field { label: "number".into(), value: Value::Int64(7) }] };
        let payload = Value::Record(Record {
            fields: alloc::vec![
                Field { label: "round".into(), value: Value::Record(round.clone()) },
                Field { label: "sv".into(), value: Value::Party("sv1".into()) },
            ],
        });
        assert_eq!(payload.lookup(&["round", "number"]).and_then(Value::as_int64), Some(7));
        assert_eq!(payload.lookup(&["sv"]).and_then(Value::as_party), Some("sv1"));
        assert_eq!(payload.lookup(&["sv", "x"]), None);
        assert_eq!(payload.lookup(&["missing"]), None);
        assert_eq!(payload.lookup(&[]), Some(&payload));
        assert_eq!(round.lookup(&["number"]), Some(&Value::Int64(7)));
        assert_eq!(round.lookup(&[]), None);
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
            (json!({"party": "p".repeat(513)}), "party: is 513 bytes long; ids are at most 512 bytes"),
            (json!({"contractId": "c".repeat(513)}), "contractId: is 513 bytes long; ids are at most 512 bytes"),
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
                json!({"genMap": {"entries": [
                    {"key": {"text": "k"}, "value": {"unit": {}}},
                    {"key": {"text": "j"}, "value": {"unit": {}}},
                    {"key": {"text": "k"}, "value": {"int64": "1"}}
                ]}}),
                r#"genMap.entries[2]: duplicate key {"text":"k"}"#,
            ),
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
        let err = Value::parse(&Json::from(&json), &mut path).unwrap_err();
        assert_eq!(err.to_string(), r#"events_by_id["u1:3"].create_arguments.record.fields[2]: missing label"#);
        assert_eq!(path.to_string(), r#"events_by_id["u1:3"].create_arguments"#);
    }

    #[test]
    fn records_are_required_where_the_format_says_so() {
        let mut path = JsonPath::new();
        path.push(Segment::Field("create_arguments"));
        assert_eq!(
            Record::parse(&Json::from(&json!({"int64": "1"})), &mut path).unwrap_err().to_string(),
            "create_arguments: expected a record value, found int64"
        );
        assert_eq!(Record::parse(&Json::from(&json!({"record": {}})), &mut path), Ok(Record::default()));
    }

    #[test]
    fn every_type_reads_as_the_strict_parser_reads_it() {
        let texts = [
            r#"{"int64":"-42"}"#,
            r#"{"numeric":"0E-10"}"#,
            r#"{"text":""}"#,
            r#"{"timestamp":"1726839089552807"}"#,
            r#"{"date":19986}"#,
            r#"{"party":"alice::1220"}"#,
            r#"{"contractId":"00ab"}"#,
            r#"{"bool":true}"#,
            r#"{"unit":{}}"#,
            r#"{"enum":{"constructor":"Red"}}"#,
            r#"{"variant":{"constructor":"Some","value":{"unit":{}}}}"#,
            r#"{"list":{"elements":[{"int64":"1"},{"int64":"2"}]}}"#,
            r#"{"list":{}}"#,
            r#"{"list":{"elements":null}}"#,
            r#"{"optional":{}}"#,
            r#"{"optional":{"value":null}}"#,
            r#"{"optional":{"value":{"optional":{"value":{"text":"x"}}}}}"#,
            r#"{"textMap":{"entries":[{"key":"","value":{"text":"a"}},{"key":"b","value":{"unit":{}}}]}}"#,
            r#"{"genMap":{"entries":[{"key":{"int64":"1"},"value":{"text":"a"}}]}}"#,
            r#"{ "record" : { "fields" : [ { "value" : {"bool":false}, "label" : "f" } ] } }"#,
            r#"{"record":{}}"#,
        ];
        for text in texts {
            assert_eq!(fast(text), Some(strict(text).unwrap()), "{text}");
        }
    }

    #[test]
    fn what_the_strict_parser_refuses_is_refused() {
        let texts = [
            r#"{}"#,
            r#"{"text":"a","int64":"1"}"#,
            r#"{"colour":"red"}"#,
            r#"{"int64":42}"#,
            r#"{"int64":"4.2"}"#,
            r#"{"int64":"9223372036854775808"}"#,
            r#"{"numeric":"1.2.3"}"#,
            r#"{"timestamp":"999999999999999999"}"#,
            r#"{"date":1.5}"#,
            r#"{"date":99999999}"#,
            r#"{"text":null}"#,
            r#"{"unit":{"a":1}}"#,
            r#"{"enum":{"constructor":""}}"#,
            r#"{"enum":{}}"#,
            r#"{"variant":{"constructor":"A"}}"#,
            r#"{"variant":{"constructor":"A","value":{"unit":{}},"constructor":"B"}}"#,
            r#"{"record":{"fields":[{"value":{"unit":{}}}]}}"#,
            r#"{"record":{"fields":[{"label":"a","value":{"unit":{}}},{"label":"a","value":{"unit":{}}}]}}"#,
            r#"{"record":{"fields":[{"label":"a","value":{"unit":{}},"extra":1}]}}"#,
            r#"{"record":{"fields":{}}}"#,
            r#"{"record":{"rows":[]}}"#,
            r#"{"textMap":{"entries":[{"key":"k","value":{"unit":{}}},{"key":"k","value":{"unit":{}}}]}}"#,
            r#"{"list":{"elements":[{"unit":{}},]}}"#,
            r#"{"list":{"elements":[]},"list":{"elements":[]}}"#,
        ];
        for text in texts {
            assert!(strict(text).is_err(), "the strict parser takes {text}");
            assert_eq!(fast(text), None, "{text}");
        }
    }

    proptest::proptest! {
        #[test]
        fn any_value_round_trips_through_protobuf_json(value in arbitrary::value()) {
            let text = written(&value, Encoding::ProtobufJson);
            proptest::prop_assert_eq!(strict(&text), Ok(value.clone()));
            // The cursor reads it too, leaving only strings with escapes to the document reader.
            match fast(&text) {
                Some(fast) => proptest::prop_assert_eq!(fast, value.clone()),
                None => proptest::prop_assert!(text.contains('\\'), "refused {}", text),
            }
            // Through a tree, as the API writes it.
            let json = value.render(Encoding::ProtobufJson);
            proptest::prop_assert_eq!(Value::parse(&Json::from(&json), &mut JsonPath::new()), Ok(value));
        }

        #[test]
        fn bytes_written_directly_equal_the_tree_written_out(value in arbitrary::value()) {
            for encoding in [Encoding::CompactJson, Encoding::ProtobufJson] {
                let direct = serde_json::to_vec(&value.encoded(encoding)).unwrap();
                proptest::prop_assert_eq!(&direct, &serde_json::to_vec(&value.render(encoding)).unwrap());
                proptest::prop_assert_eq!(&direct, &written(&value, encoding).into_bytes());
                // And the node's writer writes them itself, never handing over to `serde_json`.
                let mut own = Vec::new();
                proptest::prop_assert!(crate::model::json::write::try_write(&mut own, &value.encoded(encoding)).is_ok());
                proptest::prop_assert_eq!(own, direct);
            }
        }

        #[test]
        fn compact_records_list_their_labels_in_order(record in arbitrary::record()) {
            let compact = record.render(Encoding::CompactJson);
            let keys: Vec<&str> = compact.as_object().unwrap().keys().map(String::as_str).collect();
            let labels: Vec<&str> = record.fields.iter().map(|f| f.label.as_str()).collect();
            proptest::prop_assert_eq!(keys, labels);
        }
    }
}
