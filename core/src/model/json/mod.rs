//! A JSON document that borrows from the bytes it was parsed from.
//!
//! Ingest reads megabytes of JSON per batch, and every value is looked at once, to be
//! checked and turned into the typed model. `serde_json::Value` would allocate a
//! `String` for every key and string and a map for every object; [`Json`] borrows
//! strings from the input (copying only those with escapes) and keeps an object's
//! entries in a `Vec`, in document order. `serde_json` still does the lexing, so what
//! counts as JSON, and the messages about what does not, are its own.
//!
//! Parsing is strict where `serde_json::Value` is lenient: a key repeated within one
//! object is refused rather than silently keeping the last value.
//!
//! Floats are read as `serde_json` reads them by default, to within a few steps of the
//! nearest `f64` (its correctly rounded reader costs the worker 11 KB compressed, and
//! the node keeps no float it reads: amounts and numerics are decimal strings), and
//! written exactly, in the shortest form that reads back as the same `f64`.
//!
//! [`write`](mod@write) is the other direction: the writer that renders the node's JSON.

pub mod scan;
pub mod short;
pub mod write;

use alloc::borrow::Cow;
use alloc::collections::BTreeSet;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

/// A JSON element.
#[derive(Debug, Clone, PartialEq)]
pub enum Json<'a> {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number.
    Number(Number),
    /// A string: borrowed from the input unless it had escapes.
    String(Cow<'a, str>),
    /// An array.
    Array(Vec<Json<'a>>),
    /// An object.
    Object(Object<'a>),
}

/// A JSON number, as `serde_json` reads it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Number {
    /// A non-negative integer.
    Unsigned(u64),
    /// A negative integer.
    Negative(i64),
    /// Any other number.
    Float(f64),
}

/// A JSON object: its entries in document order, keys unique.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Object<'a> {
    entries: Vec<(Cow<'a, str>, Json<'a>)>,
}

impl<'a> Json<'a> {
    /// Parses one JSON document from `bytes`, borrowing from them.
    pub fn parse(bytes: &'a [u8]) -> Result<Json<'a>, serde_json::Error> {
        serde_json::from_slice(bytes)
    }

    /// The object, if this is one.
    pub fn as_object(&self) -> Option<&Object<'a>> {
        match self {
            Json::Object(object) => Some(object),
            _ => None,
        }
    }

    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::String(s) => Some(s),
            _ => None,
        }
    }

    /// The elements, if this is an array.
    pub fn as_array(&self) -> Option<&[Json<'a>]> {
        match self {
            Json::Array(elements) => Some(elements),
            _ => None,
        }
    }

    /// The boolean, if this is one.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Json::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// Whether this is `null`.
    pub fn is_null(&self) -> bool {
        matches!(self, Json::Null)
    }

    /// The same document, owning its strings.
    pub fn into_owned(self) -> Json<'static> {
        match self {
            Json::Null => Json::Null,
            Json::Bool(b) => Json::Bool(b),
            Json::Number(n) => Json::Number(n),
            Json::String(s) => Json::String(Cow::Owned(s.into_owned())),
            Json::Array(elements) => Json::Array(elements.into_iter().map(Json::into_owned).collect()),
            Json::Object(object) => Json::Object(Object {
                entries: object
                    .entries
                    .into_iter()
                    .map(|(k, v)| (Cow::Owned(k.into_owned()), v.into_owned()))
                    .collect(),
            }),
        }
    }
}

impl Number {
    /// The number as an `i64`, if it is an integer in range.
    pub fn as_i64(self) -> Option<i64> {
        match self {
            Number::Unsigned(n) => i64::try_from(n).ok(),
            Number::Negative(n) => Some(n),
            Number::Float(_) => None,
        }
    }

    /// Whether the number is a non-negative integer (in the `u64` range).
    pub fn is_u64(self) -> bool {
        matches!(self, Number::Unsigned(_))
    }
}

impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Number::Unsigned(n) => write!(f, "{n}"),
            Number::Negative(n) => write!(f, "{n}"),
            // As serde_json writes it (every float parsed from JSON is finite).
            Number::Float(n) => match serde_json::Number::from_f64(*n) {
                Some(n) => write!(f, "{n}"),
                None => write!(f, "{n:?}"),
            },
        }
    }
}

impl<'a> Object<'a> {
    /// The number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the object has no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The value under `key`.
    pub fn get(&self, key: &str) -> Option<&Json<'a>> {
        self.entries.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Whether `key` is present (even as `null`).
    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// The entries, in document order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Json<'a>)> {
        self.entries.iter().map(|(k, v)| (k.as_ref(), v))
    }

    /// The keys, in document order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|(k, _)| k.as_ref())
    }

    /// The entries, taken.
    pub fn into_entries(self) -> Vec<(Cow<'a, str>, Json<'a>)> {
        self.entries
    }
}

impl<'a> From<&'a serde_json::Value> for Json<'a> {
    /// A view of a `serde_json` tree (its keys are unique already).
    fn from(value: &'a serde_json::Value) -> Self {
        match value {
            serde_json::Value::Null => Json::Null,
            serde_json::Value::Bool(b) => Json::Bool(*b),
            serde_json::Value::Number(n) => Json::Number(match (n.as_u64(), n.as_i64()) {
                (Some(u), _) => Number::Unsigned(u),
                (None, Some(i)) => Number::Negative(i),
                (None, None) => Number::Float(n.as_f64().unwrap_or(f64::NAN)),
            }),
            serde_json::Value::String(s) => Json::String(Cow::Borrowed(s)),
            serde_json::Value::Array(elements) => Json::Array(elements.iter().map(Json::from).collect()),
            serde_json::Value::Object(map) => Json::Object(Object {
                entries: map.iter().map(|(k, v)| (Cow::Borrowed(k.as_str()), Json::from(v))).collect(),
            }),
        }
    }
}

impl serde::Serialize for Json<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Json::Null => serializer.serialize_unit(),
            Json::Bool(b) => serializer.serialize_bool(*b),
            Json::Number(Number::Unsigned(n)) => serializer.serialize_u64(*n),
            Json::Number(Number::Negative(n)) => serializer.serialize_i64(*n),
            Json::Number(Number::Float(n)) => serializer.serialize_f64(*n),
            Json::String(s) => serializer.serialize_str(s),
            Json::Array(elements) => serializer.collect_seq(elements),
            Json::Object(object) => serializer.collect_map(object.iter()),
        }
    }
}

impl<'de> Deserialize<'de> for Json<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(JsonVisitor)
    }
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_unit<E>(self) -> Result<Json<'de>, E> {
        Ok(Json::Null)
    }

    fn visit_bool<E>(self, b: bool) -> Result<Json<'de>, E> {
        Ok(Json::Bool(b))
    }

    fn visit_u64<E>(self, n: u64) -> Result<Json<'de>, E> {
        Ok(Json::Number(Number::Unsigned(n)))
    }

    fn visit_i64<E>(self, n: i64) -> Result<Json<'de>, E> {
        Ok(Json::Number(if n < 0 { Number::Negative(n) } else { Number::Unsigned(n.unsigned_abs()) }))
    }

    fn visit_f64<E>(self, n: f64) -> Result<Json<'de>, E> {
        Ok(Json::Number(Number::Float(n)))
    }

    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Json<'de>, E> {
        Ok(Json::String(Cow::Borrowed(s)))
    }

    fn visit_str<E>(self, s: &str) -> Result<Json<'de>, E> {
        Ok(Json::String(Cow::Owned(String::from(s))))
    }

    fn visit_string<E>(self, s: String) -> Result<Json<'de>, E> {
        Ok(Json::String(Cow::Owned(s)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json<'de>, A::Error> {
        let mut elements = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
        while let Some(element) = seq.next_element()? {
            elements.push(element);
        }
        Ok(Json::Array(elements))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json<'de>, A::Error> {
        let mut entries: Vec<(Cow<'de, str>, Json<'de>)> = Vec::new();
        // Large objects check for repeated keys through a set; small ones by scanning.
        let mut seen: Option<BTreeSet<Cow<'de, str>>> = None;
        while let Some(Key(key)) = map.next_key()? {
            let repeated = match &mut seen {
                Some(seen) => !seen.insert(key.clone()),
                None => entries.iter().any(|(k, _)| *k == key),
            };
            if repeated {
                return Err(de::Error::custom(format_args!("the key {key:?} appears twice in one object")));
            }
            entries.push((key, map.next_value()?));
            if seen.is_none() && entries.len() >= 32 {
                seen = Some(entries.iter().map(|(k, _)| k.clone()).collect());
            }
        }
        Ok(Json::Object(Object { entries }))
    }
}

/// An object key, borrowed from the input unless it had escapes.
struct Key<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object key")
            }

            fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(s)))
            }

            fn visit_str<E>(self, s: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(String::from(s))))
            }

            fn visit_string<E>(self, s: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(s)))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_without_escapes_are_borrowed() {
        let json = Json::parse(br#"{"a":"plain","b\n":"esc\"aped","n":[1,-2,1.5,null,true]}"#).unwrap();
        let object = json.as_object().unwrap();
        assert!(matches!(object.get("a"), Some(Json::String(Cow::Borrowed("plain")))));
        assert!(matches!(object.get("b\n"), Some(Json::String(Cow::Owned(s))) if s == "esc\"aped"));
        assert_eq!(object.keys().collect::<Vec<_>>(), ["a", "b\n", "n"]);
        let numbers = object.get("n").and_then(Json::as_array).unwrap();
        assert_eq!(numbers[0], Json::Number(Number::Unsigned(1)));
        assert_eq!(numbers[1], Json::Number(Number::Negative(-2)));
        assert_eq!(numbers[2], Json::Number(Number::Float(1.5)));
        assert!(numbers[3].is_null());
        assert_eq!(numbers[4].as_bool(), Some(true));
    }

    #[test]
    fn a_float_is_written_as_exactly_the_float_read() {
        // The first was found by the json_body fuzz target: below f64's normal range,
        // reading the written text again lands six steps away, so it is the writer
        // that is held exact.
        for text in [
            "22202222222000000000000000000000000000000001681803602e-361",
            "1.5",
            "-0.1",
            "5e-324",
            "1.7976931348623157e308",
        ] {
            let Json::Number(Number::Float(read)) = Json::parse(text.as_bytes()).unwrap() else {
                panic!("{text}: not a float")
            };
            let written = String::from_utf8(write::to_vec(&Json::Number(Number::Float(read))).unwrap()).unwrap();
            assert_eq!(written.parse::<f64>(), Ok(read), "{text} written as {written}");
        }
    }

    #[test]
    fn repeated_keys_are_refused_in_small_and_large_objects() {
        let err = Json::parse(br#"{"text":"a","text":"b"}"#).unwrap_err();
        assert!(alloc::format!("{err}").starts_with("the key \"text\" appears twice in one object"), "{err}");
        let mut large = String::from("{");
        for i in 0..40 {
            large.push_str(&alloc::format!("\"k{i}\":{i},"));
        }
        large.push_str("\"k35\":0}");
        assert!(Json::parse(large.as_bytes()).is_err());
        assert!(Json::parse(large.replace("\"k35\":0", "\"k99\":0").as_bytes()).is_ok());
    }

    #[test]
    fn integers_report_their_range() {
        let n = |text: &str| match Json::parse(text.as_bytes()).unwrap() {
            Json::Number(n) => n,
            other => panic!("{other:?}"),
        };
        assert_eq!(n("-9223372036854775808").as_i64(), Some(i64::MIN));
        assert_eq!(n("9223372036854775808").as_i64(), None);
        assert!(n("9223372036854775808").is_u64());
        assert_eq!(n("1.0").as_i64(), None);
        assert_eq!(alloc::format!("{}", n("1.0")), "1.0");
    }

    #[test]
    fn a_serde_json_tree_is_viewed_as_is() {
        let value = serde_json::json!({"a": [1, -1, 0.5, "s", null, false], "b": {}});
        let text = serde_json::to_vec(&value).unwrap();
        assert_eq!(Json::from(&value), Json::parse(&text).unwrap());
        assert_eq!(serde_json::to_vec(&Json::parse(&text).unwrap()).unwrap(), text, "written back as read");
    }
}
