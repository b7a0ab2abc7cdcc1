//! A [`Value`]'s binary form: one tag byte for its kind, then its parts with the
//! primitives of [`crate::model::binary`]. It is the value inside an update's stored
//! form ([`crate::model::update::binary`]), from which both JSON encodings are rendered
//! on read.
//!
//! | kind | tag | then |
//! |---|---|---|
//! | record | 0 | field count, then each field's label and value |
//! | variant | 1 | constructor, value |
//! | enum | 2 | constructor |
//! | list | 3 | count, elements |
//! | optional, none / some | 4 / 5 | — / value |
//! | text map | 6 | count, then each key and value |
//! | gen map | 7 | count, then each key value and value |
//! | int64 | 8 | signed integer |
//! | numeric | 9 | its text as ingested |
//! | text, party, contract id | 10, 13, 14 | text |
//! | timestamp | 11 | signed microseconds since the epoch |
//! | date | 12 | signed days since the epoch |
//! | bool false / true | 15 / 16 | — |
//! | unit | 17 | — |
//! | undecoded | 18 | its `protobuf_json` and `compact_json` renderings, as texts |
//!
//! Reading trusts what the node wrote: labels are not checked for uniqueness again, but
//! every text is UTF-8, every numeric a decimal and every time within range, or the
//! form is unreadable (`None`).

use alloc::boxed::Box;
use alloc::vec::Vec;

use super::{Field, Numeric, Record, Undecoded, Value};
use crate::model::binary::{Reader, Writer};
use crate::model::time::{Date, Timestamp};

const RECORD: u8 = 0;
const VARIANT: u8 = 1;
const ENUM: u8 = 2;
const LIST: u8 = 3;
const NONE: u8 = 4;
const SOME: u8 = 5;
const TEXT_MAP: u8 = 6;
const GEN_MAP: u8 = 7;
const INT64: u8 = 8;
const NUMERIC: u8 = 9;
const TEXT: u8 = 10;
const TIMESTAMP: u8 = 11;
const DATE: u8 = 12;
const PARTY: u8 = 13;
const CONTRACT_ID: u8 = 14;
const FALSE: u8 = 15;
const TRUE: u8 = 16;
const UNIT: u8 = 17;
const UNDECODED: u8 = 18;

impl Value {
    /// Appends the value's binary form.
    pub fn write_binary(&self, out: &mut Writer) {
        match self {
            Value::Record(record) => {
                out.byte(RECORD);
                record.write_fields(out);
            }
            Value::Variant { constructor, value } => {
                out.byte(VARIANT);
                out.text(constructor);
                value.write_binary(out);
            }
            Value::Enum(constructor) => {
                out.byte(ENUM);
                out.text(constructor);
            }
            Value::List(elements) => {
                out.byte(LIST);
                out.count(elements.len());
                elements.iter().for_each(|element| element.write_binary(out));
            }
            Value::Optional(None) => out.byte(NONE),
            Value::Optional(Some(value)) => {
                out.byte(SOME);
                value.write_binary(out);
            }
            Value::TextMap(entries) => {
                out.byte(TEXT_MAP);
                out.count(entries.len());
                for (key, value) in entries {
                    out.text(key);
                    value.write_binary(out);
                }
            }
            Value::GenMap(entries) => {
                out.byte(GEN_MAP);
                out.count(entries.len());
                for (key, value) in entries {
                    key.write_binary(out);
                    value.write_binary(out);
                }
            }
            Value::Int64(n) => {
                out.byte(INT64);
                out.signed(*n);
            }
            Value::Numeric(n) => {
                out.byte(NUMERIC);
                out.text(n.as_str());
            }
            Value::Text(text) => {
                out.byte(TEXT);
                out.text(text);
            }
            Value::Timestamp(ts) => {
                out.byte(TIMESTAMP);
                out.signed(ts.micros());
            }
            Value::Date(date) => {
                out.byte(DATE);
                out.signed(i64::from(date.days()));
            }
            Value::Party(party) => {
                out.byte(PARTY);
                out.text(party);
            }
            Value::ContractId(id) => {
                out.byte(CONTRACT_ID);
                out.text(id);
            }
            Value::Bool(false) => out.byte(FALSE),
            Value::Bool(true) => out.byte(TRUE),
            Value::Unit => out.byte(UNIT),
            Value::Undecoded(undecoded) => {
                out.byte(UNDECODED);
                out.text(undecoded.protobuf_json());
                out.text(undecoded.compact_json());
            }
        }
    }

    /// Takes a value's binary form back.
    pub fn read_binary(input: &mut Reader<'_>) -> Option<Value> {
        Some(match input.byte()? {
            RECORD => Value::Record(Record::read_fields(input)?),
            VARIANT => {
                let constructor = input.text()?;
                Value::Variant { constructor, value: Box::new(Value::read_binary(input)?) }
            }
            ENUM => Value::Enum(input.text()?),
            LIST => {
                let len = input.count()?;
                Value::List((0..len).map(|_| Value::read_binary(input)).collect::<Option<_>>()?)
            }
            NONE => Value::Optional(None),
            SOME => Value::Optional(Some(Box::new(Value::read_binary(input)?))),
            TEXT_MAP => {
                let len = input.count()?;
                let entries = (0..len).map(|_| Some((input.text()?, Value::read_binary(input)?)));
                Value::TextMap(entries.collect::<Option<_>>()?)
            }
            GEN_MAP => {
                let len = input.count()?;
                let entries = (0..len).map(|_| Some((Value::read_binary(input)?, Value::read_binary(input)?)));
                Value::GenMap(entries.collect::<Option<_>>()?)
            }
            INT64 => Value::Int64(input.signed()?),
            NUMERIC => Value::Numeric(Numeric::parse(input.str()?).ok()?),
            TEXT => Value::Text(input.text()?),
            TIMESTAMP => Value::Timestamp(Timestamp::from_micros(input.signed()?).ok()?),
            DATE => Value::Date(Date::from_days(input.signed()?).ok()?),
            PARTY => Value::Party(input.text()?),
            CONTRACT_ID => Value::ContractId(input.text()?),
            FALSE => Value::Bool(false),
            TRUE => Value::Bool(true),
            UNIT => Value::Unit,
            UNDECODED => {
                let protobuf = input.text()?;
                let compact = input.text()?;
                Value::Undecoded(Box::new(Undecoded::from_renderings(protobuf, compact)))
            }
            _ => return None,
        })
    }
}

impl Record {
    /// Appends the field count, then each field's label and value.
    fn write_fields(&self, out: &mut Writer) {
        out.count(self.fields.len());
        for field in &self.fields {
            out.text(&field.label);
            field.value.write_binary(out);
        }
    }

    fn read_fields(input: &mut Reader<'_>) -> Option<Record> {
        let len = input.count()?;
        let fields: Vec<Field> = (0..len)
            .map(|_| Some(Field { label: input.text()?, value: Value::read_binary(input)? }))
            .collect::<Option<_>>()?;
        Some(Record { fields })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::value::arbitrary;
    use proptest::prelude::*;

    fn round_trip(value: &Value) -> Option<Value> {
        let mut out = Writer::default();
        value.write_binary(&mut out);
        let bytes = out.into_bytes();
        let mut input = Reader::new(&bytes);
        let read = Value::read_binary(&mut input)?;
        input.at_end().then_some(read)
    }

    proptest! {
        #[test]
        fn every_value_reads_back_as_written(value in arbitrary::value()) {
            prop_assert_eq!(round_trip(&value), Some(value));
        }

        #[test]
        fn a_truncated_form_never_reads_as_a_whole_value(value in arbitrary::value(), cut in any::<prop::sample::Index>()) {
            let mut out = Writer::default();
            value.write_binary(&mut out);
            let bytes = out.into_bytes();
            let cut = cut.index(bytes.len());
            let mut input = Reader::new(&bytes[..cut]);
            prop_assert!(Value::read_binary(&mut input).is_none());
        }
    }

    #[test]
    fn an_undecoded_value_keeps_both_renderings() {
        let undecoded = Undecoded::from_renderings(r#"{"int64":"1"}"#.into(), r#"{"error":"e","value":1}"#.into());
        let value = Value::Undecoded(Box::new(undecoded));
        assert_eq!(round_trip(&value), Some(value));
    }

    #[test]
    fn an_unknown_tag_or_an_out_of_range_time_is_unreadable() {
        assert_eq!(Value::read_binary(&mut Reader::new(&[99])), None);
        let mut out = Writer::default();
        out.byte(TIMESTAMP);
        out.signed(i64::MAX);
        assert_eq!(Value::read_binary(&mut Reader::new(&out.into_bytes())), None);
        assert_eq!(Value::read_binary(&mut Reader::new(&[NUMERIC, 1, b'x'])), None);
    }
}
