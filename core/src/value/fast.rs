//! The fast path of [`Value::parse`]: `protobuf_json` text straight to a typed value.
//!
//! It accepts what the strict parser ([`super::parse`]) accepts, with the same rules
//! (one key per value object, labels present and unique, `null` read as absent, an
//! absent list empty), and gives up (`None`) on anything else, including input the
//! strict parser would take but this one does not read, such as strings with escapes.
//! The caller then runs the strict parser for its verdict or its error.

use alloc::boxed::Box;
use alloc::collections::BTreeSet;
use alloc::string::String;
use alloc::vec::Vec;

use super::parse::decimal_i64;
use super::{Field, Numeric, Record, Value};
use crate::json::scan::{Cursor, once};
use crate::time::{Date, Timestamp};

/// A value object: `{"<type>": body}`.
pub(crate) fn value(c: &mut Cursor<'_>) -> Option<Value> {
    let mut value = None;
    c.object(|c, kind| {
        let body = body(c, kind)?;
        once(&mut value, body)
    })?;
    value
}

/// A value object that must be a record.
pub(crate) fn record(c: &mut Cursor<'_>) -> Option<Record> {
    match value(c)? {
        Value::Record(record) => Some(record),
        _ => None,
    }
}

/// A non-empty string.
pub(crate) fn id<'a>(c: &mut Cursor<'a>) -> Option<&'a str> {
    c.string().filter(|s| !s.is_empty())
}

/// The body of a value object whose key is `kind`.
fn body<'a>(c: &mut Cursor<'a>, kind: &str) -> Option<Value> {
    Some(match kind {
        "record" => Value::Record(record_body(c)?),
        "variant" => {
            let (constructor, value) = named_value(c, "constructor")?;
            Value::Variant { constructor: constructor.into(), value: Box::new(value) }
        }
        "enum" => {
            let mut constructor = None;
            c.object(|c, key| match key {
                "constructor" => once(&mut constructor, id(c)?),
                _ => None,
            })?;
            Value::Enum(constructor?.into())
        }
        "list" => Value::List(repeated(c, "elements", |c, out: &mut Vec<Value>| {
            out.push(value(c)?);
            Some(())
        })?),
        "optional" => {
            let mut inner: Option<Option<Value>> = None;
            c.object(|c, key| match key {
                "value" if c.null() => once(&mut inner, None),
                "value" => once(&mut inner, Some(value(c)?)),
                _ => None,
            })?;
            Value::Optional(inner.flatten().map(Box::new))
        }
        "textMap" => {
            let mut keys = BTreeSet::new();
            Value::TextMap(repeated(c, "entries", |c, out: &mut Vec<(String, Value)>| {
                let (mut key, mut value) = (None, None);
                c.object(|c, name| match name {
                    "key" => once(&mut key, c.string()?),
                    "value" => once(&mut value, self::value(c)?),
                    _ => None,
                })?;
                let key = key?;
                keys.insert(key).then_some(())?;
                out.push((key.into(), value?));
                Some(())
            })?)
        }
        "genMap" => Value::GenMap(repeated(c, "entries", |c, out: &mut Vec<(Value, Value)>| {
            let (mut key, mut value) = (None, None);
            c.object(|c, name| match name {
                "key" => once(&mut key, self::value(c)?),
                "value" => once(&mut value, self::value(c)?),
                _ => None,
            })?;
            out.push((key?, value?));
            Some(())
        })?),
        "int64" => Value::Int64(decimal_i64(c.string()?)?),
        "numeric" => Value::Numeric(Numeric::parse(c.string()?).ok()?),
        "text" => Value::Text(c.string()?.into()),
        "timestamp" => Value::Timestamp(Timestamp::from_micros(decimal_i64(c.string()?)?).ok()?),
        "date" => Value::Date(Date::from_days(c.integer()?).ok()?),
        "party" => Value::Party(c.string()?.into()),
        "contractId" => Value::ContractId(c.string()?.into()),
        "bool" => Value::Bool(c.boolean()?),
        "unit" => {
            c.object(|_, _| None)?;
            Value::Unit
        }
        _ => return None,
    })
}

/// `{"fields":[{"label":"f","value":V}]}`, labels present and unique.
fn record_body(c: &mut Cursor<'_>) -> Option<Record> {
    let fields = repeated(c, "fields", |c, out: &mut Vec<Field>| {
        let (label, value) = named_value(c, "label")?;
        // Records are small: a scan of the labels so far is quicker than a set.
        if out.iter().any(|f| f.label == label) {
            return None;
        }
        out.push(Field { label: label.into(), value });
        Some(())
    })?;
    Some(Record { fields })
}

/// `{"<name>":"n","value":V}` with `n` non-empty: a variant's body, a record's field.
fn named_value<'a>(c: &mut Cursor<'a>, name: &str) -> Option<(&'a str, Value)> {
    let (mut named, mut value) = (None, None);
    c.object(|c, key| match key {
        _ if key == name => once(&mut named, id(c)?),
        "value" => once(&mut value, self::value(c)?),
        _ => None,
    })?;
    Some((named?, value?))
}

/// An object whose one allowed key, `name`, holds an array of items, each read by
/// `item`; an absent or `null` array is empty.
fn repeated<'a, T>(
    c: &mut Cursor<'a>,
    name: &str,
    mut item: impl FnMut(&mut Cursor<'a>, &mut Vec<T>) -> Option<()>,
) -> Option<Vec<T>> {
    let mut items: Option<Vec<T>> = None;
    c.object(|c, key| {
        if key != name || items.is_some() {
            return None;
        }
        let mut out = Vec::new();
        if !c.null() {
            c.array(|c| item(c, &mut out))?;
        }
        items = Some(out);
        Some(())
    })?;
    Some(items.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::Json;
    use crate::value::JsonPath;
    use proptest::prelude::*;

    /// The fast path's verdict, which must agree with the strict parser's wherever it
    /// gives one.
    fn fast(text: &str) -> Option<Value> {
        let mut c = Cursor::new(text);
        value(&mut c).filter(|_| c.at_end())
    }

    fn strict(text: &str) -> Result<Value, String> {
        let json = Json::parse(text.as_bytes()).map_err(|e| alloc::format!("{e}"))?;
        Value::parse(&json, &mut JsonPath::new()).map_err(|e| alloc::format!("{e}"))
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

    proptest! {
        #[test]
        fn the_fast_path_reads_rendered_values_back(value in crate::value::arbitrary::value()) {
            let text = crate::json::write::to_vec(&value.encoded(crate::value::Encoding::ProtobufJson));
            let text = core::str::from_utf8(&text).unwrap();
            let strict = strict(text).unwrap();
            // Strings with escapes are left to the strict path.
            if let Some(fast) = fast(text) {
                prop_assert_eq!(fast, strict);
            } else {
                prop_assert!(text.contains('\\'), "refused {}", text);
            }
        }
    }
}
