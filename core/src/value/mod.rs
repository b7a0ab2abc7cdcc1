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
//! rendering (a JSON object) says the same thing.
//!
//! Rendering writes text directly (`text`, the hot path of ingest, which renders every
//! update's bodies) and hands it to serializers as raw JSON (`render`); the serde form
//! of the table above is kept as the reference the text is tested against. Compact
//! records keep their field order, also in a JSON tree, because the core enables
//! `serde_json`'s `preserve_order` feature (its map is then insertion-ordered, without
//! `std`).
//!
//! [`path`] and [`read`] hold the JSON-path error machinery that the update parser
//! (and any other ingest parser) shares.

pub(crate) mod fast;
mod numeric;
mod parse;
pub mod path;
pub mod read;
pub(crate) mod render;
pub(crate) mod text;

#[cfg(test)]
pub(crate) mod arbitrary;

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;

pub use numeric::{Numeric, NumericError};
pub use parse::TYPES;
pub use path::{JsonPath, PathError, Segment};
pub use render::Encoded;

use crate::time::{Date, Timestamp};

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
