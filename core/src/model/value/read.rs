//! Strict readers for JSON input: the expected JSON type or an error naming the path.
//!
//! [`StrictObject`] reads an object whose fields are all known (anything else is
//! refused); the free functions check one element's JSON type. Errors read
//! `<path>: expected a string, found a number`, `<path>: missing update_id` or
//! `<path>: unknown field "colour"; expected update_id, migration_id, ...`.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use crate::model::json::{Json, Object};

use super::path::{JsonPath, PathError, Segment, quoted};
use crate::model::time::Timestamp;

/// What kind of JSON element `json` is, with its article, for error messages.
pub fn describe(json: &Json<'_>) -> &'static str {
    match json {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "an array",
        Json::Object(_) => "an object",
    }
}

/// `json` as a string.
pub fn string<'j>(json: &'j Json<'_>, path: &JsonPath) -> Result<&'j str, PathError> {
    json.as_str().ok_or_else(|| path.error(format!("expected a string, found {}", describe(json))))
}

/// `json` as a non-empty string (a name, or an id without a length limit such as an
/// event id).
pub fn id<'j>(json: &'j Json<'_>, path: &JsonPath) -> Result<&'j str, PathError> {
    let text = string(json, path)?;
    if text.is_empty() {
        return Err(path.error("must not be empty"));
    }
    Ok(text)
}

/// `json` as an id of one of the bounded kinds ([`crate::model::ids`]: update, contract,
/// party, synchronizer, participant, user ids): non-empty and at most
/// [`MAX_ID_BYTES`](crate::model::ids::MAX_ID_BYTES) bytes.
pub fn bounded_id<'j>(json: &'j Json<'_>, path: &JsonPath) -> Result<&'j str, PathError> {
    let text = id(json, path)?;
    match crate::model::ids::length_problem(text) {
        Some(problem) => Err(path.error(problem)),
        None => Ok(text),
    }
}

/// `json` as a JSON integer within the int64 range.
pub fn int64(json: &Json<'_>, path: &JsonPath) -> Result<i64, PathError> {
    match json {
        Json::Number(n) => n.as_i64().ok_or_else(|| {
            if n.is_u64() {
                path.error(format!("{n} is out of the int64 range"))
            } else {
                path.error(format!("expected an integer (int64), found {n}"))
            }
        }),
        other => Err(path.error(format!("expected an integer (int64), found {}", describe(other)))),
    }
}

/// `json` as a boolean.
pub fn boolean(json: &Json<'_>, path: &JsonPath) -> Result<bool, PathError> {
    json.as_bool().ok_or_else(|| path.error(format!("expected a boolean, found {}", describe(json))))
}

/// `json` as an array.
pub fn array<'j, 'a>(json: &'j Json<'a>, path: &JsonPath) -> Result<&'j [Json<'a>], PathError> {
    json.as_array().ok_or_else(|| path.error(format!("expected an array, found {}", describe(json))))
}

/// `json` as an object (any keys).
pub fn object<'j, 'a>(json: &'j Json<'a>, path: &JsonPath) -> Result<&'j Object<'a>, PathError> {
    json.as_object().ok_or_else(|| path.error(format!("expected an object, found {}", describe(json))))
}

/// `json` as an RFC 3339 timestamp string.
pub fn timestamp(json: &Json<'_>, path: &JsonPath) -> Result<Timestamp, PathError> {
    Timestamp::parse(string(json, path)?).map_err(|e| path.error(format!("{e}")))
}

/// `json` as an array of strings (such as event ids).
pub fn strings(json: &Json<'_>, path: &mut JsonPath) -> Result<Vec<String>, PathError> {
    strings_of(json, path, |_, _| Ok(()))
}

/// `json` as an array of strings each at most [`MAX_ID_BYTES`](crate::model::ids::MAX_ID_BYTES)
/// bytes long (such as party ids; empty ones are left to the caller).
pub fn bounded_strings(json: &Json<'_>, path: &mut JsonPath) -> Result<Vec<String>, PathError> {
    strings_of(json, path, |text, p| match crate::model::ids::length_problem(text) {
        Some(problem) => Err(p.error(problem)),
        None => Ok(()),
    })
}

/// The strings of array `json`, each passed to `check` with its path first.
fn strings_of(
    json: &Json<'_>,
    path: &mut JsonPath,
    check: impl Fn(&str, &JsonPath) -> Result<(), PathError>,
) -> Result<Vec<String>, PathError> {
    let items = array(json, path)?;
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        path.with(Segment::Index(i), |p| {
            let text = string(item, p)?;
            check(text, p)?;
            out.push(String::from(text));
            Ok(())
        })?;
    }
    Ok(out)
}

/// A JSON object whose fields are all known; read field by field.
#[derive(Debug, Clone, Copy)]
pub struct StrictObject<'a> {
    map: &'a Object<'a>,
}

impl<'a> StrictObject<'a> {
    /// `json` as an object with no field outside `known`.
    pub fn new(json: &'a Json<'a>, known: &[&str], path: &JsonPath) -> Result<Self, PathError> {
        let map = object(json, path)?;
        if let Some(unknown) = map.keys().find(|k| !known.contains(k)) {
            let expected = if known.is_empty() {
                String::from("expected no fields")
            } else {
                format!("expected {}", known.join(", "))
            };
            return Err(path.error(format!("unknown field {}; {expected}", quoted(unknown))));
        }
        Ok(StrictObject { map })
    }

    /// Whether the field is present (even as `null`).
    pub fn has(&self, name: &str) -> bool {
        self.map.contains_key(name)
    }

    /// The number of fields.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether the object has no fields.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// The field's value, if present and not `null`.
    pub fn optional(&self, name: &str) -> Option<&'a Json<'a>> {
        self.map.get(name).filter(|v| !v.is_null())
    }

    /// The field's value; absent (or `null`) is an error `missing <name>` at the object.
    pub fn required(&self, name: &'static str, path: &JsonPath) -> Result<&'a Json<'a>, PathError> {
        self.optional(name).ok_or_else(|| path.error(format!("missing {name}")))
    }

    /// Reads a required field with `read`, one step below the object's path.
    pub fn field<T>(
        &self,
        name: &'static str,
        path: &mut JsonPath,
        read: impl FnOnce(&'a Json<'a>, &mut JsonPath) -> Result<T, PathError>,
    ) -> Result<T, PathError> {
        let json = self.required(name, path)?;
        path.with(Segment::Field(name), |p| read(json, p))
    }

    /// Reads an optional field with `read`; absent or `null` is `None`.
    pub fn optional_field<T>(
        &self,
        name: &'static str,
        path: &mut JsonPath,
        read: impl FnOnce(&'a Json<'a>, &mut JsonPath) -> Result<T, PathError>,
    ) -> Result<Option<T>, PathError> {
        match self.optional(name) {
            None => Ok(None),
            Some(json) => path.with(Segment::Field(name), |p| read(json, p)).map(Some),
        }
    }

    /// A required string field.
    pub fn string(&self, name: &'static str, path: &mut JsonPath) -> Result<&'a str, PathError> {
        self.field(name, path, |j, p| string(j, p))
    }

    /// A required non-empty string field.
    pub fn id(&self, name: &'static str, path: &mut JsonPath) -> Result<&'a str, PathError> {
        self.field(name, path, |j, p| id(j, p))
    }

    /// A required id field of a bounded kind ([`bounded_id`]).
    pub fn bounded_id(&self, name: &'static str, path: &mut JsonPath) -> Result<&'a str, PathError> {
        self.field(name, path, |j, p| bounded_id(j, p))
    }

    /// A required int64 field (a JSON integer).
    pub fn int64(&self, name: &'static str, path: &mut JsonPath) -> Result<i64, PathError> {
        self.field(name, path, |j, p| int64(j, p))
    }

    /// A required boolean field.
    pub fn boolean(&self, name: &'static str, path: &mut JsonPath) -> Result<bool, PathError> {
        self.field(name, path, |j, p| boolean(j, p))
    }

    /// A required RFC 3339 timestamp field.
    pub fn timestamp(&self, name: &'static str, path: &mut JsonPath) -> Result<Timestamp, PathError> {
        self.field(name, path, |j, p| timestamp(j, p))
    }

    /// A required array-of-strings field.
    pub fn strings(&self, name: &'static str, path: &mut JsonPath) -> Result<Vec<String>, PathError> {
        self.field(name, path, strings)
    }

    /// A required array of bounded ids ([`bounded_strings`]).
    pub fn bounded_strings(&self, name: &'static str, path: &mut JsonPath) -> Result<Vec<String>, PathError> {
        self.field(name, path, bounded_strings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    /// A document written as `serde_json::json!` writes it.
    macro_rules! json {
        ($($json:tt)+) => {
            Json::from(&serde_json::json!($($json)+)).into_owned()
        };
    }

    fn at(field: &'static str) -> JsonPath {
        let mut path = JsonPath::new();
        path.push(Segment::Field(field));
        path
    }

    #[test]
    fn unknown_fields_are_refused_and_named() {
        let json = json!({"a": 1, "colour": 2});
        let err = StrictObject::new(&json, &["a", "b"], &at("x")).unwrap_err();
        assert_eq!(err.to_string(), r#"x: unknown field "colour"; expected a, b"#);
        let err = StrictObject::new(&json, &[], &at("x")).unwrap_err();
        assert_eq!(err.to_string(), r#"x: unknown field "a"; expected no fields"#);
    }

    #[test]
    fn missing_fields_are_named_at_the_object() {
        let json = json!({"a": null});
        let obj = StrictObject::new(&json, &["a", "b"], &at("x")).unwrap();
        let mut path = at("x");
        assert_eq!(obj.string("b", &mut path).unwrap_err().to_string(), "x: missing b");
        assert_eq!(obj.string("a", &mut path).unwrap_err().to_string(), "x: missing a");
        assert_eq!(obj.optional("a"), None);
        assert!(obj.has("a"));
        assert!(path.segments().len() == 1);
    }

    #[test]
    fn wrong_types_are_named_at_the_field() {
        let json = json!({"s": 1, "i": "1", "b": "true", "a": {}, "t": "yesterday", "e": ""});
        let known = ["s", "i", "b", "a", "t", "e"];
        let obj = StrictObject::new(&json, &known, &JsonPath::new()).unwrap();
        let mut path = JsonPath::new();
        let cases = [
            (obj.string("s", &mut path).map(drop), "s: expected a string, found a number"),
            (obj.int64("i", &mut path).map(drop), "i: expected an integer (int64), found a string"),
            (obj.boolean("b", &mut path).map(drop), "b: expected a boolean, found a string"),
            (obj.strings("a", &mut path).map(drop), "a: expected an array, found an object"),
            (
                obj.timestamp("t", &mut path).map(drop),
                "t: expected an RFC 3339 timestamp such as 2024-09-20T13:31:29.552807Z",
            ),
            (obj.id("e", &mut path).map(drop), "e: must not be empty"),
        ];
        for (result, want) in cases {
            assert_eq!(result.unwrap_err().to_string(), want);
        }
        assert!(path.is_root());
    }

    #[test]
    fn int64_fields_are_integers_in_range() {
        let path = at("n");
        assert_eq!(int64(&json!(-9_223_372_036_854_775_808i64), &path), Ok(i64::MIN));
        assert_eq!(
            int64(&json!(9_223_372_036_854_775_808u64), &path).unwrap_err().to_string(),
            "n: 9223372036854775808 is out of the int64 range"
        );
        assert_eq!(int64(&json!(1.5), &path).unwrap_err().to_string(), "n: expected an integer (int64), found 1.5");
        assert!(int64(&json!(1.0), &path).is_err());
    }

    #[test]
    fn string_arrays_name_the_bad_element() {
        let mut path = at("observers");
        let err = strings(&json!(["a", 2]), &mut path).unwrap_err();
        assert_eq!(err.to_string(), "observers[1]: expected a string, found a number");
        assert_eq!(strings(&json!(["a", "b"]), &mut path).unwrap(), ["a", "b"]);
    }
}
