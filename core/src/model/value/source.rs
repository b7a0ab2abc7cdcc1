//! What readers read from: a [`Source`], either a parsed JSON document with the path
//! of every problem ([`Tree`]) or JSON text read straight from its bytes
//! ([`Cursor`]).
//!
//! A type's reader is written once, generic over the source, and says what the type
//! looks like: "an object with these known fields; `event_id` is a non-empty string;
//! `create_arguments` is a record value; ...". Each source follows it in its own way:
//!
//! - [`Tree`] walks a [`Json`] document, keeping a [`JsonPath`]; each problem is a
//!   [`PathError`] such as
//!   `events_by_id["u1:3"].create_arguments.record.fields[2]: missing label`. An
//!   object's unknown fields are refused when the reader names its known fields
//!   ([`Source::only`]), before any field is read, and fields are read in the order
//!   the reader asks for them, so the first problem in that order is the one named.
//! - [`Cursor`] reads the text once, without building a document, and gives up
//!   ([`GaveUp`]) on any problem and on anything it does not read (such as strings
//!   with escapes). The caller then reads the same text through [`Tree`] for the
//!   verdict and the error. Fields asked for in the order they come are read where
//!   they stand; others are skipped and read from their position when asked for.
//!
//! So the two agree on every input the cursor takes (tests check that they do, on
//! arbitrary values and updates), and errors are always the tree's.

use alloc::collections::BTreeSet;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use super::path::{JsonPath, PathError, Segment};
use super::read::{self, StrictObject};
use crate::model::json::scan::{Cursor, Fields, Located};
use crate::model::json::{Json, Object};
use crate::model::time::Timestamp;

/// A JSON element to read, and the means to say what is wrong with it.
///
/// Every method reads the element the source is at (a scalar, or an object's field,
/// an array's elements or a map's entries, each read by a closure given the source
/// moved to it); problems are made with [`Source::error`], which the cursor never
/// spends the time to write.
pub trait Source<'s>: Sized {
    /// What a failed read returns: a [`PathError`] for the tree, [`GaveUp`] for the
    /// cursor.
    type Error;
    /// An object whose fields are being read ([`Source::object`]).
    type Object;

    /// A problem with the element the source is at; `problem` is called only by a
    /// source that reports problems.
    fn error<P: Into<String>>(&self, problem: impl FnOnce() -> P) -> Self::Error;

    /// A problem with the field `name` of the object the source is at.
    fn error_at<P: Into<String>>(&self, name: &'static str, problem: impl FnOnce() -> P) -> Self::Error;

    /// Runs a check that names paths itself (such as the shape of a transaction's
    /// event tree), given the path of the element the source is at.
    fn check(&self, check: impl FnOnce(&JsonPath) -> Result<(), PathError>) -> Result<(), Self::Error>;

    /// A string.
    fn string(&mut self) -> Result<&'s str, Self::Error>;

    /// A JSON integer within the int64 range.
    fn int64(&mut self) -> Result<i64, Self::Error>;

    /// A boolean.
    fn boolean(&mut self) -> Result<bool, Self::Error>;

    /// Any JSON element, as a `serde_json` tree (objects keep their key order), for
    /// JSON the node stores as it is, such as a contract's compact payload.
    fn json(&mut self) -> Result<serde_json::Value, Self::Error>;

    /// An object, any keys for now; `problem` says what was found instead ("a
    /// string", ...). Its fields are read with the methods below, and it ends with
    /// [`Source::close`].
    fn object_or(&mut self, problem: impl FnOnce(&'static str) -> String) -> Result<Self::Object, Self::Error>;

    /// An object, any keys for now (`expected an object, found ...` if it is not one).
    fn object(&mut self) -> Result<Self::Object, Self::Error> {
        self.object_or(|found| format!("expected an object, found {found}"))
    }

    /// Refuses a field of `object` outside `known`, naming the first one and the
    /// fields expected.
    fn only(&mut self, object: &mut Self::Object, known: &'static [&'static str]) -> Result<(), Self::Error>;

    /// Whether `object` has the field `a`, and whether it has `b` (present even as
    /// `null`). The cursor answers for the first of them it meets only, leaving the
    /// other to the [`Source::only`] that follows.
    fn either(&mut self, object: &mut Self::Object, a: &'static str, b: &'static str) -> (bool, bool);

    /// The one key of `object`; `problem` is given the number of keys when that is
    /// not one. Its value is then read with [`Source::entry`].
    fn sole_key(
        &mut self,
        object: &mut Self::Object,
        problem: impl FnOnce(usize) -> String,
    ) -> Result<&'s str, Self::Error>;

    /// Reads the field `name` of `object` with `read`, `null` included.
    fn entry<T>(
        &mut self,
        object: &mut Self::Object,
        name: &'static str,
        read: impl FnOnce(&mut Self) -> Result<T, Self::Error>,
    ) -> Result<T, Self::Error>;

    /// Reads the field `name` of `object` with `read`; absent or `null` is `None`.
    fn optional_field<T>(
        &mut self,
        object: &mut Self::Object,
        name: &'static str,
        read: impl FnOnce(&mut Self) -> Result<T, Self::Error>,
    ) -> Result<Option<T>, Self::Error>;

    /// Reads the field `name` of `object` with `read`; absent or `null` is
    /// `missing <name>`.
    fn field<T>(
        &mut self,
        object: &mut Self::Object,
        name: &'static str,
        read: impl FnOnce(&mut Self) -> Result<T, Self::Error>,
    ) -> Result<T, Self::Error> {
        match self.optional_field(object, name, read)? {
            Some(value) => Ok(value),
            None => Err(self.error(|| format!("missing {name}"))),
        }
    }

    /// Ends reading `object`.
    fn close(&mut self, object: Self::Object) -> Result<(), Self::Error>;

    /// An array: `each` reads every element, given its index.
    fn elements(&mut self, each: impl FnMut(&mut Self, usize) -> Result<(), Self::Error>) -> Result<(), Self::Error>;

    /// An object whose keys are data (such as `events_by_id`): `each` reads every
    /// value, given its key.
    fn entries(&mut self, each: impl FnMut(&mut Self, &'s str) -> Result<(), Self::Error>) -> Result<(), Self::Error>;
}

/// A parsed JSON document being read, at one of its elements, with that element's path.
#[derive(Debug)]
pub struct Tree<'s, 'p> {
    at: &'s Json<'s>,
    path: &'p mut JsonPath,
}

impl<'s, 'p> Tree<'s, 'p> {
    /// The source at `json`, whose path in its document is `path` (push any prefix
    /// first); `path` is as it was once reading is done.
    pub fn new(json: &'s Json<'s>, path: &'p mut JsonPath) -> Self {
        Tree { at: json, path }
    }

    /// Runs `read` at `json`, one `segment` below.
    fn descend<T>(
        &mut self,
        segment: Segment,
        json: &'s Json<'s>,
        read: impl FnOnce(&mut Self) -> Result<T, PathError>,
    ) -> Result<T, PathError> {
        let parent = core::mem::replace(&mut self.at, json);
        self.path.push(segment);
        let result = read(self);
        self.path.pop();
        self.at = parent;
        result
    }
}

impl<'s> Source<'s> for Tree<'s, '_> {
    type Error = PathError;
    type Object = &'s Object<'s>;

    fn error<P: Into<String>>(&self, problem: impl FnOnce() -> P) -> PathError {
        self.path.error(problem())
    }

    fn error_at<P: Into<String>>(&self, name: &'static str, problem: impl FnOnce() -> P) -> PathError {
        self.path.error_at(Segment::Field(name), problem())
    }

    fn check(&self, check: impl FnOnce(&JsonPath) -> Result<(), PathError>) -> Result<(), PathError> {
        check(self.path)
    }

    fn string(&mut self) -> Result<&'s str, PathError> {
        read::string(self.at, self.path)
    }

    fn int64(&mut self) -> Result<i64, PathError> {
        read::int64(self.at, self.path)
    }

    fn boolean(&mut self) -> Result<bool, PathError> {
        read::boolean(self.at, self.path)
    }

    fn json(&mut self) -> Result<serde_json::Value, PathError> {
        serde_json::to_value(self.at).map_err(|e| self.path.error(e.to_string()))
    }

    fn object_or(&mut self, problem: impl FnOnce(&'static str) -> String) -> Result<&'s Object<'s>, PathError> {
        let at = self.at;
        at.as_object().ok_or_else(|| self.path.error(problem(read::describe(at))))
    }

    fn only(&mut self, _: &mut &'s Object<'s>, known: &'static [&'static str]) -> Result<(), PathError> {
        StrictObject::new(self.at, known, self.path).map(drop)
    }

    fn either(&mut self, object: &mut &'s Object<'s>, a: &'static str, b: &'static str) -> (bool, bool) {
        (object.contains_key(a), object.contains_key(b))
    }

    fn sole_key(
        &mut self,
        object: &mut &'s Object<'s>,
        problem: impl FnOnce(usize) -> String,
    ) -> Result<&'s str, PathError> {
        let object: &'s Object<'s> = object;
        let mut keys = object.keys();
        match (keys.next(), keys.next()) {
            (Some(key), None) => Ok(key),
            _ => Err(self.path.error(problem(object.len()))),
        }
    }

    fn entry<T>(
        &mut self,
        object: &mut &'s Object<'s>,
        name: &'static str,
        read: impl FnOnce(&mut Self) -> Result<T, PathError>,
    ) -> Result<T, PathError> {
        let object: &'s Object<'s> = object;
        match object.get(name) {
            Some(json) => self.descend(Segment::Field(name), json, read),
            None => Err(self.path.error(format!("missing {name}"))),
        }
    }

    fn optional_field<T>(
        &mut self,
        object: &mut &'s Object<'s>,
        name: &'static str,
        read: impl FnOnce(&mut Self) -> Result<T, PathError>,
    ) -> Result<Option<T>, PathError> {
        let object: &'s Object<'s> = object;
        match object.get(name).filter(|json| !json.is_null()) {
            Some(json) => self.descend(Segment::Field(name), json, read).map(Some),
            None => Ok(None),
        }
    }

    fn close(&mut self, _: &'s Object<'s>) -> Result<(), PathError> {
        Ok(())
    }

    fn elements(&mut self, mut each: impl FnMut(&mut Self, usize) -> Result<(), PathError>) -> Result<(), PathError> {
        let items: &'s [Json<'s>] = read::array(self.at, self.path)?;
        for (index, item) in items.iter().enumerate() {
            self.descend(Segment::Index(index), item, |source| each(source, index))?;
        }
        Ok(())
    }

    fn entries(&mut self, mut each: impl FnMut(&mut Self, &'s str) -> Result<(), PathError>) -> Result<(), PathError> {
        let object: &'s Object<'s> = read::object(self.at, self.path)?;
        for (key, json) in object.iter() {
            self.descend(Segment::Key(key.into()), json, |source| each(source, key))?;
        }
        Ok(())
    }
}

/// The cursor's answer to anything it does not take: the caller reads the text
/// again through a [`Tree`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GaveUp;

/// `Some` as `Ok`, `None` as [`GaveUp`].
fn taken<T>(value: Option<T>) -> Result<T, GaveUp> {
    value.ok_or(GaveUp)
}

/// Reads the field `name` of `object` with `read` where the cursor finds it: where it
/// stands, or where it was skipped (then reading goes on where the cursor was);
/// `None` if the object has no such field.
fn read_field<'a, T>(
    cursor: &mut Cursor<'a>,
    object: &mut Fields<'a>,
    name: &str,
    read: impl FnOnce(&mut Cursor<'a>) -> Result<T, GaveUp>,
) -> Result<Option<T>, GaveUp> {
    match taken(cursor.locate(object, name))? {
        Located::Here => read(cursor).map(Some),
        Located::Skipped { value, resume } => {
            cursor.seek(value);
            let result = read(cursor);
            cursor.seek(resume);
            result.map(Some)
        }
        Located::Absent => Ok(None),
    }
}

impl<'a> Source<'a> for Cursor<'a> {
    type Error = GaveUp;
    type Object = Fields<'a>;

    fn error<P: Into<String>>(&self, _: impl FnOnce() -> P) -> GaveUp {
        GaveUp
    }

    fn error_at<P: Into<String>>(&self, _: &'static str, _: impl FnOnce() -> P) -> GaveUp {
        GaveUp
    }

    fn check(&self, check: impl FnOnce(&JsonPath) -> Result<(), PathError>) -> Result<(), GaveUp> {
        check(&JsonPath::new()).map_err(|_| GaveUp)
    }

    fn string(&mut self) -> Result<&'a str, GaveUp> {
        taken(Cursor::string(self))
    }

    fn int64(&mut self) -> Result<i64, GaveUp> {
        taken(self.integer())
    }

    fn boolean(&mut self) -> Result<bool, GaveUp> {
        taken(Cursor::boolean(self))
    }

    fn json(&mut self) -> Result<serde_json::Value, GaveUp> {
        taken(json_tree(self))
    }

    fn object_or(&mut self, _: impl FnOnce(&'static str) -> String) -> Result<Fields<'a>, GaveUp> {
        taken(self.open())
    }

    fn only(&mut self, object: &mut Fields<'a>, known: &'static [&'static str]) -> Result<(), GaveUp> {
        taken(Cursor::only(self, object, known))
    }

    fn either(&mut self, object: &mut Fields<'a>, a: &'static str, b: &'static str) -> (bool, bool) {
        // Giving up here reads as neither, which the caller refuses.
        Cursor::either(self, object, a, b).unwrap_or((false, false))
    }

    fn sole_key(&mut self, object: &mut Fields<'a>, _: impl FnOnce(usize) -> String) -> Result<&'a str, GaveUp> {
        taken(Cursor::sole_key(self, object))
    }

    fn entry<T>(
        &mut self,
        object: &mut Fields<'a>,
        name: &'static str,
        read: impl FnOnce(&mut Self) -> Result<T, GaveUp>,
    ) -> Result<T, GaveUp> {
        read_field(self, object, name, read)?.ok_or(GaveUp)
    }

    fn optional_field<T>(
        &mut self,
        object: &mut Fields<'a>,
        name: &'static str,
        read: impl FnOnce(&mut Self) -> Result<T, GaveUp>,
    ) -> Result<Option<T>, GaveUp> {
        let read_unless_null = |cursor: &mut Self| if cursor.null() { Ok(None) } else { read(cursor).map(Some) };
        read_field(self, object, name, read_unless_null).map(Option::flatten)
    }

    fn close(&mut self, object: Fields<'a>) -> Result<(), GaveUp> {
        taken(Cursor::close(self, object))
    }

    fn elements(&mut self, mut each: impl FnMut(&mut Self, usize) -> Result<(), GaveUp>) -> Result<(), GaveUp> {
        let mut index = 0;
        taken(self.array(|cursor| {
            each(cursor, index).ok()?;
            index += 1;
            Some(())
        }))
    }

    fn entries(&mut self, mut each: impl FnMut(&mut Self, &'a str) -> Result<(), GaveUp>) -> Result<(), GaveUp> {
        taken(self.object(|cursor, key| each(cursor, key).ok()))
    }
}

/// The element the cursor is at as a `serde_json` tree; like the document reader, it
/// refuses a key repeated in one object.
fn json_tree(cursor: &mut Cursor<'_>) -> Option<serde_json::Value> {
    use serde_json::Value;
    Some(match cursor.peek()? {
        b'"' => Value::String(cursor.string()?.into()),
        b'{' => {
            let mut map = serde_json::Map::new();
            cursor.object(|cursor, key| {
                let value = json_tree(cursor)?;
                map.insert(key.into(), value).is_none().then_some(())
            })?;
            Value::Object(map)
        }
        b'[' => {
            let mut items = Vec::new();
            cursor.array(|cursor| {
                items.push(json_tree(cursor)?);
                Some(())
            })?;
            Value::Array(items)
        }
        b't' | b'f' => Value::Bool(cursor.boolean()?),
        b'n' => cursor.null().then_some(Value::Null)?,
        _ => Value::from(cursor.integer()?),
    })
}

/// A non-empty string (a name, or an id without a length limit such as an event id).
pub fn id<'s, S: Source<'s>>(source: &mut S) -> Result<&'s str, S::Error> {
    let text = source.string()?;
    if text.is_empty() {
        return Err(source.error(|| "must not be empty"));
    }
    Ok(text)
}

/// A string of at most [`MAX_ID_BYTES`](crate::model::ids::MAX_ID_BYTES) bytes: a party or
/// contract id inside a value (read as given otherwise, empty included).
pub fn bounded_string<'s, S: Source<'s>>(source: &mut S) -> Result<&'s str, S::Error> {
    let text = source.string()?;
    within_limit(source, text)
}

/// An id of one of the bounded kinds ([`crate::model::ids`]): non-empty and at most
/// [`MAX_ID_BYTES`](crate::model::ids::MAX_ID_BYTES) bytes.
pub fn bounded_id<'s, S: Source<'s>>(source: &mut S) -> Result<&'s str, S::Error> {
    let text = id(source)?;
    within_limit(source, text)
}

/// `text`, which `source` just read, unless it is longer than an id may be.
fn within_limit<'s, S: Source<'s>>(source: &S, text: &'s str) -> Result<&'s str, S::Error> {
    match crate::model::ids::length_problem(text) {
        Some(problem) => Err(source.error(|| problem)),
        None => Ok(text),
    }
}

/// An RFC 3339 timestamp string.
pub fn timestamp<'s, S: Source<'s>>(source: &mut S) -> Result<Timestamp, S::Error> {
    let text = source.string()?;
    Timestamp::parse(text).map_err(|e| source.error(|| e.to_string()))
}

/// An array of strings (such as event ids).
pub fn strings<'s, S: Source<'s>>(source: &mut S) -> Result<Vec<String>, S::Error> {
    let mut out = Vec::new();
    source.elements(|source, _| {
        out.push(String::from(source.string()?));
        Ok(())
    })?;
    Ok(out)
}

/// An array of strings each at most [`MAX_ID_BYTES`](crate::model::ids::MAX_ID_BYTES) bytes
/// long (such as party ids).
pub fn bounded_strings<'s, S: Source<'s>>(source: &mut S) -> Result<Vec<String>, S::Error> {
    let mut out = Vec::new();
    source.elements(|source, _| {
        out.push(String::from(bounded_string(source)?));
        Ok(())
    })?;
    Ok(out)
}

/// The elements of the array field `name` of `object`, each read by `item`; absent or
/// `null` (as protobuf's JSON printer omits an empty list) is empty.
pub fn repeated<'s, S: Source<'s>, T>(
    source: &mut S,
    object: &mut S::Object,
    name: &'static str,
    mut item: impl FnMut(&mut S, &[T]) -> Result<T, S::Error>,
) -> Result<Vec<T>, S::Error> {
    let items = source.optional_field(object, name, |source| {
        let mut out = Vec::new();
        source.elements(|source, _| {
            let next = item(source, &out)?;
            out.push(next);
            Ok(())
        })?;
        Ok(out)
    })?;
    Ok(items.unwrap_or_default())
}

/// Whether a label or key was met before in one record or map: a scan of the earlier
/// ones while they are few (records are small), a set once they are many.
#[derive(Debug, Default)]
pub(crate) struct Repeats(Option<BTreeSet<String>>);

impl Repeats {
    /// Whether `key` is among `earlier` (all the keys met so far), remembering it.
    pub(crate) fn met<'e>(&mut self, key: &str, mut earlier: impl ExactSizeIterator<Item = &'e str>) -> bool {
        const SCAN: usize = 32;
        if let Some(set) = &mut self.0 {
            return !set.insert(String::from(key));
        }
        if earlier.len() < SCAN {
            return earlier.any(|e| e == key);
        }
        let mut set: BTreeSet<String> = earlier.map(String::from).collect();
        let repeated = !set.insert(String::from(key));
        self.0 = Some(set);
        repeated
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads `{"a":..,"b":..}` asking for `b` first, then `a`: the cursor skips `a`
    /// and comes back to it.
    fn pair<'s, S: Source<'s>>(source: &mut S) -> Result<(i64, &'s str), S::Error> {
        let mut object = source.object()?;
        source.only(&mut object, &["a", "b"])?;
        let b = source.field(&mut object, "b", |s| s.string())?;
        let a = source.field(&mut object, "a", |s| s.int64())?;
        source.close(object)?;
        Ok((a, b))
    }

    #[test]
    fn fields_are_read_in_any_order() {
        for text in [r#"{"a":1,"b":"x"}"#, r#"{"b":"x","a":1}"#, r#" { "a" : 1 , "b" : "x" } "#] {
            let mut cursor = Cursor::new(text);
            assert_eq!(pair(&mut cursor), Ok((1, "x")), "{text}");
            assert!(cursor.at_end());
        }
        for text in [r#"{"a":1,"b":"x","a":2}"#, r#"{"a":1,"b":"x","c":2}"#, r#"{"a":1}"#, r#"{"a":1,"b":"x",}"#] {
            assert_eq!(pair(&mut Cursor::new(text)), Err(GaveUp), "{text}");
        }
        let json = Json::parse(br#"{"a":1,"c":2}"#).unwrap();
        let err = pair(&mut Tree::new(&json, &mut JsonPath::new())).unwrap_err();
        assert_eq!(alloc::format!("{err}"), r#"unknown field "c"; expected a, b"#);
    }
}
