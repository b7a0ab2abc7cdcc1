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

use super::write::first_escape;

/// The deepest nesting of arrays and objects a cursor reads (`serde_json`, which the
/// strict path uses, refuses documents nested deeper than 128).
pub const MAX_DEPTH: u32 = 100;

/// A position in a JSON text.
#[derive(Debug, Clone)]
pub struct Cursor<'a> {
    text: &'a str,
    at: usize,
    depth: u32,
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `text`.
    pub fn new(text: &'a str) -> Self {
        Cursor { text, at: 0, depth: 0 }
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
    fn once_refuses_a_second_value() {
        let mut slot = None;
        assert_eq!(once(&mut slot, 1), Some(()));
        assert_eq!(once(&mut slot, 2), None);
        assert_eq!(slot, Some(1));
    }
}
