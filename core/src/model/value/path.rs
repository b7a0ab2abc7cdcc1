//! Where in a JSON document something is wrong: [`JsonPath`] and [`PathError`].
//!
//! A parser keeps a [`JsonPath`] as a stack, pushing a [`Segment`] before it descends
//! into a field, an array element or a map key and popping it afterwards
//! ([`JsonPath::with`] does both). An error is made with [`JsonPath::error`], which
//! copies the current path, so it reads like
//! `events_by_id["u1:3"].create_arguments.record.fields[2]: missing label`.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

/// One step into a JSON document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment {
    /// A field of an object whose name is part of the format: `.name`.
    Field(&'static str),
    /// An element of an array: `[index]`.
    Index(usize),
    /// A key of an object whose keys are data (such as `events_by_id`): `["key"]`.
    Key(String),
}

/// The path from a document's root to one of its elements; empty at the root.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JsonPath {
    segments: Vec<Segment>,
}

impl JsonPath {
    /// The root of a document.
    pub const fn new() -> Self {
        JsonPath { segments: Vec::new() }
    }

    /// Descends one step.
    pub fn push(&mut self, segment: Segment) {
        self.segments.push(segment);
    }

    /// Goes back up one step, returning it (`None` at the root).
    pub fn pop(&mut self) -> Option<Segment> {
        self.segments.pop()
    }

    /// The steps from the root, outermost first.
    pub fn segments(&self) -> &[Segment] {
        &self.segments
    }

    /// Whether this is the root.
    pub fn is_root(&self) -> bool {
        self.segments.is_empty()
    }

    /// Runs `f` one step below the current path, and comes back up whatever `f` returns.
    pub fn with<T, E>(&mut self, segment: Segment, f: impl FnOnce(&mut Self) -> Result<T, E>) -> Result<T, E> {
        self.push(segment);
        let result = f(self);
        self.pop();
        result
    }

    /// An error about the element at this path.
    pub fn error(&self, problem: impl Into<String>) -> PathError {
        PathError { path: self.clone(), problem: problem.into() }
    }

    /// An error about the element one step below this path.
    pub fn error_at(&self, segment: Segment, problem: impl Into<String>) -> PathError {
        let mut path = self.clone();
        path.push(segment);
        path.error(problem)
    }
}

impl fmt::Display for JsonPath {
    /// `a.b[2]["key"].c`; the root is the empty string.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, segment) in self.segments.iter().enumerate() {
            match segment {
                Segment::Field(name) if i == 0 => f.write_str(name)?,
                Segment::Field(name) => write!(f, ".{name}")?,
                Segment::Index(index) => write!(f, "[{index}]")?,
                Segment::Key(key) => {
                    f.write_str("[")?;
                    write_json_string(f, key)?;
                    f.write_str("]")?;
                }
            }
        }
        Ok(())
    }
}

/// Writes `text` as a JSON string literal, quotes included.
pub(crate) fn write_json_string(f: &mut impl fmt::Write, text: &str) -> fmt::Result {
    f.write_char('"')?;
    for c in text.chars() {
        match c {
            '"' => f.write_str("\\\"")?,
            '\\' => f.write_str("\\\\")?,
            '\n' => f.write_str("\\n")?,
            '\r' => f.write_str("\\r")?,
            '\t' => f.write_str("\\t")?,
            c if u32::from(c) < 0x20 => write!(f, "\\u{:04x}", u32::from(c))?,
            c => f.write_char(c)?,
        }
    }
    f.write_char('"')
}

/// `text` as a JSON string literal, for error messages that quote input.
pub(crate) fn quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    // Writing to a String cannot fail.
    let _ = write_json_string(&mut out, text);
    out
}

/// Something wrong with the element at `path` of a JSON document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathError {
    /// Where the problem is.
    pub path: JsonPath,
    /// What is wrong, for a person to act on.
    pub problem: String,
}

impl fmt::Display for PathError {
    /// `<path>: <problem>`, or just the problem at the root.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_root() { f.write_str(&self.problem) } else { write!(f, "{}: {}", self.path, self.problem) }
    }
}

impl core::error::Error for PathError {}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn paths_print_fields_indexes_and_keys() {
        let mut path = JsonPath::new();
        assert_eq!(path.to_string(), "");
        path.push(Segment::Field("events_by_id"));
        path.push(Segment::Key("u1:3".into()));
        path.push(Segment::Field("create_arguments"));
        path.push(Segment::Field("record"));
        path.push(Segment::Field("fields"));
        path.push(Segment::Index(2));
        assert_eq!(
            path.error("missing label").to_string(),
            r#"events_by_id["u1:3"].create_arguments.record.fields[2]: missing label"#
        );
    }

    #[test]
    fn keys_are_escaped_as_json_strings() {
        let mut path = JsonPath::new();
        path.push(Segment::Key("a\"b\\c\nd\u{1}".into()));
        assert_eq!(path.to_string(), r#"["a\"b\\c\nd\u0001"]"#);
    }

    #[test]
    fn a_path_starting_with_an_index_has_no_leading_dot() {
        let mut path = JsonPath::new();
        path.push(Segment::Index(0));
        path.push(Segment::Field("label"));
        assert_eq!(path.to_string(), "[0].label");
    }

    #[test]
    fn errors_at_the_root_are_just_the_problem() {
        assert_eq!(JsonPath::new().error("expected an object").to_string(), "expected an object");
    }

    #[test]
    fn with_comes_back_up_on_success_and_on_error() {
        let mut path = JsonPath::new();
        let ok: Result<(), PathError> = path.with(Segment::Field("a"), |p| {
            assert_eq!(p.to_string(), "a");
            Ok(())
        });
        assert!(ok.is_ok());
        let err: Result<(), PathError> = path.with(Segment::Index(1), |p| Err(p.error("bad")));
        assert_eq!(err.unwrap_err().to_string(), "[1]: bad");
        assert!(path.is_root());
    }

    #[test]
    fn error_at_names_the_child() {
        let mut path = JsonPath::new();
        path.push(Segment::Field("event"));
        assert_eq!(path.error_at(Segment::Field("offset"), "missing").to_string(), "event.offset: missing");
        assert_eq!(path.to_string(), "event");
    }
}
