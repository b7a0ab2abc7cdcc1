//! A pull reader over JSON text, for parsers that go straight from bytes to a typed
//! model when the input is well formed.
//!
//! [`Cursor`] reads one element at a time and answers `None` for anything it does not
//! take: malformed JSON, an element of another type than asked for, a string with an
//! escape, nesting deeper than [`MAX_DEPTH`]. It never says why: a parser built on it
//! is a fast path that gives up, and the caller then parses the same text through
//! [`Json`](super::Json) and the strict readers, which name the problem. So a fast path
//! may refuse more than the strict path, never less, and must build the same value
//! from whatever it accepts.
//!
//! A reader may also ask for an object's fields by name, in any order ([`Fields`]):
//! fields that come in the order asked for are read where they stand, in one pass;
//! a field met before it is asked for is skipped and read from its position later.
//! Either way every key is checked once against the object's known fields and
//! against the keys met before it, so an unknown or repeated key is refused.
//!
//! Checking a key costs at most [`MAX_FIELDS`] comparisons, so reading an object is
//! linear in its size whatever its keys: once the known fields are given
//! ([`Cursor::only`], at most [`MAX_FIELDS`] of them), a key is looked up among them
//! and marked in a bit set; before that, a key is compared with the keys met before it
//! in the object, and the cursor gives up on an object with more than [`MAX_FIELDS`]
//! keys met before its fields are known (no reader would take it: its fields would
//! not all be known ones).

use alloc::vec::Vec;

use super::write::first_escape;

/// The deepest nesting of arrays and objects a cursor reads (`serde_json`, which the
/// strict path uses, refuses documents nested deeper than 128).
pub const MAX_DEPTH: u32 = 100;

/// Most fields an object read by name may have ([`Cursor::only`]), and most keys the
/// cursor meets in an object before its fields are known.
pub const MAX_FIELDS: usize = 64;

/// A position in a JSON text.
#[derive(Debug, Clone)]
pub struct Cursor<'a> {
    text: &'a str,
    at: usize,
    depth: u32,
    /// The keys met in the objects being read by name, innermost last: each with the
    /// position of its value, or [`READ`] once read.
    keys: Vec<(&'a str, usize)>,
}

/// The position of a key whose value has been read.
const READ: usize = usize::MAX;

/// An object being read field by field ([`Cursor::open`]).
#[derive(Debug)]
pub struct Fields<'a> {
    /// Where this object's keys start in [`Cursor::keys`].
    base: usize,
    /// The fields allowed, once known; a key outside them is refused.
    known: Option<&'static [&'static str]>,
    /// Once the fields are known, which of them have been met (bit `i` for `known[i]`).
    met: u64,
    /// How many of this object's entries in [`Cursor::keys`] are skipped values not
    /// read yet.
    skipped: usize,
    /// Whether a key has been read yet (the next one then follows a comma).
    started: bool,
    /// Whether the closing brace has been read.
    ended: bool,
    /// A key just read whose value the cursor is at, not yet taken nor skipped.
    pending: Option<&'a str>,
    /// Once the fields are known, the index of the one after the last met: where the
    /// next key is looked for first.
    next: usize,
}

/// Where [`Cursor::locate`] found a field's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Located {
    /// The cursor is at it.
    Here,
    /// It was skipped: it starts at `value`, and reading goes on at `resume` after it.
    Skipped {
        /// Where the value starts.
        value: usize,
        /// Where the cursor was.
        resume: usize,
    },
    /// The object has no such field.
    Absent,
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `text`.
    pub fn new(text: &'a str) -> Self {
        Cursor { text, at: 0, depth: 0, keys: Vec::new() }
    }

    /// Where the cursor is, as a byte offset into the text.
    pub fn position(&self) -> usize {
        self.at
    }

    /// Moves the cursor to `position`, one it was at before.
    pub fn seek(&mut self, position: usize) {
        self.at = position;
    }

    /// Skips one element of any type (numbers other than int64 integers are refused).
    pub fn skip(&mut self) -> Option<()> {
        match self.peek()? {
            b'"' => self.string().map(drop),
            b'{' => self.object(|c, _| c.skip()),
            b'[' => self.array(Self::skip),
            b't' | b'f' => self.boolean().map(drop),
            b'n' => self.null().then_some(()),
            _ => self.integer().map(drop),
        }
    }

    /// Opens an object to be read field by field, with [`Cursor::locate`] and
    /// [`Cursor::close`].
    pub fn open(&mut self) -> Option<Fields<'a>> {
        self.eat(b'{')?;
        self.enter()?;
        Some(Fields {
            base: self.keys.len(),
            known: None,
            met: 0,
            skipped: 0,
            started: false,
            ended: false,
            pending: None,
            next: 0,
        })
    }

    /// Restricts the object's keys to `known` (at most [`MAX_FIELDS`]): those met so
    /// far, and any met later.
    pub fn only(&mut self, fields: &mut Fields<'a>, known: &'static [&'static str]) -> Option<()> {
        if known.len() > MAX_FIELDS {
            return None;
        }
        let mut met = 0;
        let earlier = self.keys.get(fields.base..)?.iter().map(|(key, _)| key).chain(fields.pending.as_ref());
        for key in earlier {
            met |= 1 << known.iter().position(|k| k == key)?;
        }
        fields.known = Some(known);
        fields.met = met;
        Some(())
    }

    /// The next key of the object, the cursor then at its value; `Some(None)` at the
    /// end. A key met before in this object, or not among its known fields, is refused.
    fn next_key(&mut self, fields: &mut Fields<'a>) -> Option<Option<&'a str>> {
        if fields.ended {
            return Some(None);
        }
        if self.peek()? == b'}' {
            self.at += 1;
            self.depth -= 1;
            fields.ended = true;
            return Some(None);
        }
        if fields.started {
            self.eat(b',')?;
        }
        fields.started = true;
        let key = self.string()?;
        self.eat(b':')?;
        match fields.known {
            Some(known) => {
                // Keys mostly come in the order the fields are listed: try the field
                // after the last one met before searching the list.
                let index = match known.get(fields.next) {
                    Some(k) if *k == key => fields.next,
                    _ => known.iter().position(|k| *k == key)?,
                };
                fields.next = index + 1;
                let bit = 1 << index;
                if fields.met & bit != 0 {
                    return None;
                }
                fields.met |= bit;
            }
            None => {
                // Every key met so far is noted: give up before the comparisons grow
                // with the object.
                let met = self.keys.get(fields.base..)?;
                if met.len() >= MAX_FIELDS || met.iter().any(|(met, _)| *met == key) {
                    return None;
                }
            }
        }
        Some(Some(key))
    }

    /// Notes that `key` was met, its value at `value` (or [`READ`]): a skipped value
    /// is kept to be read later; a read one is kept only while the known fields, which
    /// tell a repeated key, are not.
    fn note(&mut self, fields: &mut Fields<'a>, key: &'a str, value: usize) {
        if value != READ {
            self.keys.push((key, value));
            fields.skipped += 1;
        } else if fields.known.is_none() {
            self.keys.push((key, READ));
        }
    }

    /// Notes the pending key's value as skipped, and skips it.
    fn skip_pending(&mut self, fields: &mut Fields<'a>) -> Option<()> {
        if let Some(key) = fields.pending.take() {
            self.note(fields, key, self.at);
            self.skip()?;
        }
        Some(())
    }

    /// Finds the value of field `name` and marks it read: the cursor is at it, or it
    /// was skipped earlier (then seek to it, read it, and seek back to `resume`), or
    /// the object has no such field (also when it was read already).
    pub fn locate(&mut self, fields: &mut Fields<'a>, name: &str) -> Option<Located> {
        if let Some(key) = fields.pending.filter(|key| *key == name) {
            fields.pending = None;
            self.note(fields, key, READ);
            return Some(Located::Here);
        }
        // A field met earlier is read from its position, and reading comes back here
        // (to a pending value, if there is one).
        if fields.skipped > 0 {
            let base = fields.base;
            let found = self.keys.get_mut(base..)?.iter_mut().find(|(key, value)| *key == name && *value != READ);
            if let Some(slot) = found {
                let value = core::mem::replace(&mut slot.1, READ);
                fields.skipped -= 1;
                return Some(Located::Skipped { value, resume: self.at });
            }
        }
        self.skip_pending(fields)?;
        while let Some(key) = self.next_key(fields)? {
            if key == name {
                self.note(fields, key, READ);
                return Some(Located::Here);
            }
            self.note(fields, key, self.at);
            self.skip()?;
        }
        Some(Located::Absent)
    }

    /// Which of the fields `a` and `b` the object has, reading as far as the first of
    /// them (which is then pending); `(false, false)` if neither. It does not look
    /// for the other one: [`Cursor::only`] with fields that exclude it refuses it
    /// when it comes.
    pub fn either(&mut self, fields: &mut Fields<'a>, a: &str, b: &str) -> Option<(bool, bool)> {
        let is = |key: &str| (key == a, key == b);
        if let Some(key) = fields.pending.filter(|key| *key == a || *key == b) {
            return Some(is(key));
        }
        if let Some((key, _)) = self.keys.get(fields.base..)?.iter().find(|(key, _)| *key == a || *key == b) {
            return Some(is(key));
        }
        self.skip_pending(fields)?;
        while let Some(key) = self.next_key(fields)? {
            if key == a || key == b {
                fields.pending = Some(key);
                return Some(is(key));
            }
            self.note(fields, key, self.at);
            self.skip()?;
        }
        Some((false, false))
    }

    /// The object's one key, pending; any other key is refused.
    pub fn sole_key(&mut self, fields: &mut Fields<'a>) -> Option<&'a str> {
        if fields.started {
            return None;
        }
        let key = self.next_key(fields)??;
        fields.pending = Some(key);
        fields.known = Some(&[]);
        Some(key)
    }

    /// Reads the rest of the object (its keys checked, their values skipped) and its
    /// closing brace.
    pub fn close(&mut self, mut fields: Fields<'a>) -> Option<()> {
        self.skip_pending(&mut fields)?;
        while let Some(key) = self.next_key(&mut fields)? {
            self.note(&mut fields, key, READ);
            self.skip()?;
        }
        self.keys.truncate(fields.base);
        Some(())
    }

    fn bytes(&self) -> &'a [u8] {
        self.text.as_bytes()
    }

    /// Skips JSON whitespace and says which byte follows, if any.
    pub fn peek(&mut self) -> Option<u8> {
        let bytes = self.bytes();
        while let Some(&byte) = bytes.get(self.at) {
            if !matches!(byte, b' ' | b'\t' | b'\n' | b'\r') {
                return Some(byte);
            }
            self.at += 1;
        }
        None
    }

    /// Takes `byte`, after whitespace.
    fn eat(&mut self, byte: u8) -> Option<()> {
        (self.peek()? == byte).then(|| self.at += 1)
    }

    /// Takes the word `word` (`null`, `true`, `false`), after whitespace.
    fn word(&mut self, word: &str) -> bool {
        self.peek();
        let found = self.bytes().get(self.at..).is_some_and(|rest| rest.starts_with(word.as_bytes()));
        if found {
            self.at += word.len();
        }
        found
    }

    /// Whether the text ends here (after whitespace).
    pub fn at_end(&mut self) -> bool {
        self.peek().is_none()
    }

    /// Takes a `null`, if one comes next.
    pub fn null(&mut self) -> bool {
        self.word("null")
    }

    /// A boolean.
    pub fn boolean(&mut self) -> Option<bool> {
        if self.word("true") {
            Some(true)
        } else if self.word("false") {
            Some(false)
        } else {
            None
        }
    }

    /// A string without escapes, borrowed from the text.
    pub fn string(&mut self) -> Option<&'a str> {
        self.eat(b'"')?;
        let start = self.at;
        let rest = self.bytes().get(start..)?;
        let end = start + first_escape(rest)?;
        // The first byte a string must escape: its closing quote, or an escape or a
        // control character, which the strict path reads.
        if self.bytes().get(end) != Some(&b'"') {
            return None;
        }
        self.at = end + 1;
        // `start` and `end` are at ASCII quotes of a `str`, so both are char boundaries.
        self.text.get(start..end)
    }

    /// A JSON integer within the int64 range: no fraction, no exponent.
    pub fn integer(&mut self) -> Option<i64> {
        self.peek()?;
        let bytes = self.bytes();
        let start = self.at;
        let mut end = start + usize::from(bytes.get(start) == Some(&b'-'));
        let digits = end;
        while bytes.get(end).is_some_and(u8::is_ascii_digit) {
            end += 1;
        }
        let leading_zero = bytes.get(digits) == Some(&b'0') && end - digits > 1;
        // `-0` is left to the strict path, which reads it as `serde_json` does.
        let negative_zero = digits > start && bytes.get(digits) == Some(&b'0');
        if end == digits || leading_zero || negative_zero || matches!(bytes.get(end), Some(b'.' | b'e' | b'E')) {
            return None;
        }
        self.at = end;
        self.text.get(start..end)?.parse().ok()
    }

    /// Reads an object, calling `entry` with the cursor before each value and the key
    /// it belongs to; `entry` must take the value.
    pub fn object(&mut self, mut entry: impl FnMut(&mut Self, &'a str) -> Option<()>) -> Option<()> {
        self.sequence(b'{', b'}', |c| {
            let key = c.string()?;
            c.eat(b':')?;
            entry(c, key)
        })
    }

    /// Reads an array, calling `element` with the cursor before each element; `element`
    /// must take it.
    pub fn array(&mut self, element: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        self.sequence(b'[', b']', element)
    }

    /// Reads `open`, items separated by commas, each taken by `item`, and `close`.
    fn sequence(&mut self, open: u8, close: u8, mut item: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        self.eat(open)?;
        self.enter()?;
        if self.peek()? != close {
            loop {
                item(self)?;
                match self.peek()? {
                    b',' => self.at += 1,
                    _ => break,
                }
            }
        }
        self.eat(close)?;
        self.depth -= 1;
        Some(())
    }

    /// One level deeper, if that is allowed.
    fn enter(&mut self) -> Option<()> {
        self.depth += 1;
        (self.depth <= MAX_DEPTH).then_some(())
    }
}

/// Fills `slot` with `value`, refusing a second value (a repeated key).
pub fn once<T>(slot: &mut Option<T>, value: T) -> Option<()> {
    match slot {
        Some(_) => None,
        None => {
            *slot = Some(value);
            Some(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    #[test]
    fn an_object_is_given_up_on_past_max_fields_keys_met_before_its_fields_are_known() {
        // Each key met before the known fields is compared with those before it: past
        // MAX_FIELDS of them no reader would take the object, and the cursor stops.
        let keys: alloc::string::String = (0..1000).map(|n| alloc::format!("\"k{n:04}\":0,")).collect();
        let text = alloc::format!("{{{keys}\"wanted\":1}}");
        let mut cursor = Cursor::new(&text);
        let mut fields = cursor.open().unwrap();
        assert_eq!(cursor.locate(&mut fields, "wanted"), None);
        let stopped = text[..cursor.position()].matches("\"k").count();
        assert_eq!(stopped, MAX_FIELDS + 1, "keys read before giving up");
        // Up to MAX_FIELDS keys before the one asked for are read as usual.
        let keys: alloc::string::String = (0..MAX_FIELDS - 1).map(|n| alloc::format!("\"k{n:04}\":0,")).collect();
        let text = alloc::format!("{{{keys}\"wanted\":1}}");
        let mut cursor = Cursor::new(&text);
        let mut fields = cursor.open().unwrap();
        assert_eq!(cursor.locate(&mut fields, "wanted"), Some(Located::Here));
        assert_eq!(cursor.integer(), Some(1));
    }

    #[test]
    fn objects_arrays_and_scalars_are_read() {
        let mut cursor = Cursor::new(r#" { "a" : [1, -2, 0] , "b":"text", "c" : null, "d": true, "e": {} } "#);
        let mut seen = Vec::new();
        cursor
            .object(|c, key| {
                seen.push(key);
                match key {
                    "a" => c.array(|c| c.integer().map(|n| seen.push(if n == -2 { "-2" } else { "n" }))),
                    "b" => c.string().map(|s| seen.push(s)),
                    "c" => c.null().then_some(()),
                    "d" => c.boolean().filter(|b| *b).map(drop),
                    _ => c.object(|_, _| None),
                }
            })
            .unwrap();
        assert!(cursor.at_end());
        assert_eq!(seen, ["a", "n", "-2", "n", "b", "text", "c", "d", "e"]);
    }

    #[test]
    fn what_the_strict_path_must_judge_is_refused() {
        let refused = [
            r#""esc\"aped""#,
            "\"tab\there\"",
            "\"unterminated",
            "01",
            "1.5",
            "1e3",
            "-",
            "9223372036854775808",
            "[1,]",
            "{\"a\":1,}",
            "{\"a\" 1}",
            "[1 2]",
        ];
        for text in refused {
            let mut c = Cursor::new(text);
            let read = match text.as_bytes()[0] {
                b'"' => c.string().map(drop),
                b'[' => c.array(|c| c.integer().map(drop)),
                b'{' => c.object(|c, _| c.integer().map(drop)),
                _ => c.integer().map(drop),
            };
            assert!(read.is_none() || !c.at_end(), "{text}");
        }
        assert_eq!(Cursor::new("-9223372036854775808").integer(), Some(i64::MIN));
        assert_eq!(Cursor::new("-0").integer(), None);
        assert_eq!(Cursor::new("0").integer(), Some(0));
    }

    #[test]
    fn nesting_beyond_the_limit_is_refused() {
        fn nested(c: &mut Cursor<'_>) -> Option<()> {
            c.array(|c| if c.peek() == Some(b'[') { nested(c) } else { c.integer().map(drop) })
        }
        let deep = |n: usize| alloc::format!("{}1{}", "[".repeat(n), "]".repeat(n));
        assert!(nested(&mut Cursor::new(&deep(MAX_DEPTH as usize))).is_some());
        assert!(nested(&mut Cursor::new(&deep(MAX_DEPTH as usize + 1))).is_none());
    }

    #[test]
    fn known_fields_are_read_in_any_order_and_checked_once() {
        const KNOWN: &[&str] = &["a", "b", "c"];
        // Reads fields `a`, `b` and `c` by name, in that order, after restricting the
        // object's keys to them.
        fn read(text: &str) -> Option<[Option<i64>; 3]> {
            let mut c = Cursor::new(text);
            let mut fields = c.open()?;
            c.only(&mut fields, KNOWN)?;
            let mut values = [None; 3];
            for (slot, name) in values.iter_mut().zip(KNOWN) {
                match c.locate(&mut fields, name)? {
                    Located::Here => *slot = Some(c.integer()?),
                    Located::Skipped { value, resume } => {
                        c.seek(value);
                        *slot = Some(c.integer()?);
                        c.seek(resume);
                    }
                    Located::Absent => {}
                }
            }
            c.close(fields)?;
            c.at_end().then_some(values)
        }
        assert_eq!(read(r#"{"a":1,"b":2,"c":3}"#), Some([Some(1), Some(2), Some(3)]));
        assert_eq!(read(r#"{"c":3,"a":1,"b":2}"#), Some([Some(1), Some(2), Some(3)]));
        assert_eq!(read(r#"{"b":2,"c":3}"#), Some([None, Some(2), Some(3)]));
        // Repeated keys: one found by a search of the list, and one (the second `b`)
        // found at once as the field after the last one met, `a`.
        assert_eq!(read(r#"{"a":1,"a":1,"b":2}"#), None);
        assert_eq!(read(r#"{"a":1,"b":2,"c":3,"b":2}"#), None);
        assert_eq!(read(r#"{"b":2,"a":1,"b":2}"#), None);
        assert_eq!(read(r#"{"a":1,"b":2,"d":4}"#), None);
    }

    #[test]
    fn once_refuses_a_second_value() {
        let mut slot = None;
        assert_eq!(once(&mut slot, 1), Some(()));
        assert_eq!(once(&mut slot, 2), None);
        assert_eq!(slot, Some(1));
    }
}
