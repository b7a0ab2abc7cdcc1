//! The primitives of the node's binary forms: a [`Writer`] that appends and a
//! [`Reader`] that takes back, in the same order.
//!
//! - An unsigned integer is LEB128: seven bits a byte, low bits first, the high bit set
//!   on every byte but the last.
//! - A signed integer is zigzag-mapped to an unsigned one first, so small negative
//!   numbers stay short.
//! - A text is its length in bytes, then its UTF-8 bytes.
//! - A list is its length, then its items.
//!
//! The forms carry no field names and no type tags beyond what a reader needs to choose
//! a branch: a reader knows the shape it reads, as the writer that wrote it did
//! ([`crate::model::update::binary`], [`crate::model::value::binary`]). A reader never
//! panics: any byte string that is not a form it wrote reads as `None`.

use alloc::string::String;
use alloc::vec::Vec;

/// Appends binary values to a byte vector.
#[derive(Debug, Default)]
pub struct Writer {
    out: Vec<u8>,
}

impl Writer {
    /// A writer with room for `capacity` bytes.
    pub fn with_capacity(capacity: usize) -> Self {
        Writer { out: Vec::with_capacity(capacity) }
    }

    /// The bytes written.
    pub fn into_bytes(self) -> Vec<u8> {
        self.out
    }

    /// Appends one byte: a tag or a flag.
    pub fn byte(&mut self, byte: u8) {
        self.out.push(byte);
    }

    /// Appends `n` as LEB128.
    pub fn unsigned(&mut self, mut n: u64) {
        while n >= 0x80 {
            self.out.push((n as u8) | 0x80);
            n >>= 7;
        }
        self.out.push(n as u8);
    }

    /// Appends `n`, zigzag-mapped, as LEB128.
    pub fn signed(&mut self, n: i64) {
        self.unsigned(((n << 1) ^ (n >> 63)) as u64);
    }

    /// Appends a length or a count.
    pub fn count(&mut self, count: usize) {
        self.unsigned(count as u64);
    }

    /// Appends a text: its length, then its bytes.
    pub fn text(&mut self, text: &str) {
        self.count(text.len());
        self.out.extend_from_slice(text.as_bytes());
    }

    /// Appends a list of texts.
    pub fn texts(&mut self, texts: &[String]) {
        self.count(texts.len());
        texts.iter().for_each(|text| self.text(text));
    }

    /// Appends an optional text: a flag byte, then the text if present.
    pub fn optional_text(&mut self, text: Option<&str>) {
        match text {
            None => self.byte(0),
            Some(text) => {
                self.byte(1);
                self.text(text);
            }
        }
    }
}

/// Takes binary values back from a byte slice, in the order a [`Writer`] appended them.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    /// A reader of `bytes`, from their start.
    pub fn new(bytes: &'a [u8]) -> Self {
        Reader { bytes }
    }

    /// Whether every byte has been read.
    pub fn at_end(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Takes one byte.
    pub fn byte(&mut self) -> Option<u8> {
        let (&first, rest) = self.bytes.split_first()?;
        self.bytes = rest;
        Some(first)
    }

    /// Takes a LEB128 integer; one longer than ten bytes, or beyond 64 bits, is refused.
    pub fn unsigned(&mut self) -> Option<u64> {
        let mut n: u64 = 0;
        for shift in (0..64).step_by(7) {
            let byte = self.byte()?;
            let bits = u64::from(byte & 0x7f);
            if shift == 63 && bits > 1 {
                return None;
            }
            n |= bits << shift;
            if byte & 0x80 == 0 {
                return Some(n);
            }
        }
        None
    }

    /// Takes a zigzag-mapped integer.
    pub fn signed(&mut self) -> Option<i64> {
        let n = self.unsigned()?;
        Some(((n >> 1) as i64) ^ -((n & 1) as i64))
    }

    /// Takes a length or a count: no more than the bytes left, as every item takes at
    /// least one, so a corrupt count never reserves more memory than the form's size.
    pub fn count(&mut self) -> Option<usize> {
        let len = usize::try_from(self.unsigned()?).ok()?;
        (len <= self.bytes.len()).then_some(len)
    }

    /// Takes a text, borrowed from the form.
    pub fn str(&mut self) -> Option<&'a str> {
        let len = self.count()?;
        let (text, rest) = self.bytes.split_at_checked(len)?;
        self.bytes = rest;
        core::str::from_utf8(text).ok()
    }

    /// Takes a text.
    pub fn text(&mut self) -> Option<String> {
        self.str().map(String::from)
    }

    /// Takes a list of texts.
    pub fn texts(&mut self) -> Option<Vec<String>> {
        let len = self.count()?;
        (0..len).map(|_| self.text()).collect()
    }

    /// Takes an optional text.
    pub fn optional_text(&mut self) -> Option<Option<String>> {
        match self.byte()? {
            0 => Some(None),
            1 => self.text().map(Some),
            _ => None,
        }
    }

    /// Takes a flag byte: 0 or 1.
    pub fn flag(&mut self) -> Option<bool> {
        match self.byte()? {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    #[test]
    fn integers_read_back_as_written_at_every_width() {
        let numbers = [0, 1, 63, 64, -1, -64, -65, 127, 128, 300, i64::MAX, i64::MIN, 1 << 35, -(1 << 35)];
        let mut writer = Writer::default();
        numbers.iter().for_each(|n| writer.signed(*n));
        writer.unsigned(u64::MAX);
        let bytes = writer.into_bytes();
        let mut reader = Reader::new(&bytes);
        for n in numbers {
            assert_eq!(reader.signed(), Some(n));
        }
        assert_eq!(reader.unsigned(), Some(u64::MAX));
        assert!(reader.at_end());
    }

    #[test]
    fn small_numbers_take_one_byte() {
        let mut writer = Writer::default();
        writer.signed(-64);
        writer.signed(63);
        writer.unsigned(127);
        assert_eq!(writer.into_bytes().len(), 3);
    }

    #[test]
    fn texts_and_optional_texts_read_back() {
        let mut writer = Writer::default();
        writer.text("héllo");
        writer.texts(&[String::from("a"), String::new()]);
        writer.optional_text(None);
        writer.optional_text(Some("x"));
        let bytes = writer.into_bytes();
        let mut reader = Reader::new(&bytes);
        assert_eq!(reader.str(), Some("héllo"));
        assert_eq!(reader.texts(), Some(vec![String::from("a"), String::new()]));
        assert_eq!(reader.optional_text(), Some(None));
        assert_eq!(reader.optional_text(), Some(Some(String::from("x"))));
        assert!(reader.at_end());
    }

    #[test]
    fn truncated_overlong_or_invalid_input_reads_as_none() {
        assert_eq!(Reader::new(&[0x80]).unsigned(), None, "a continuation with nothing after");
        assert_eq!(Reader::new(&[0xff; 11]).unsigned(), None, "more than ten bytes");
        assert_eq!(Reader::new(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02]).unsigned(), None);
        assert_eq!(Reader::new(&[5, b'a']).str(), None, "a text longer than what is left");
        assert_eq!(Reader::new(&[2, 0xc3, 0x28]).str(), None, "not UTF-8");
        assert_eq!(Reader::new(&[200, 1]).count(), None, "a count beyond the bytes left");
        assert_eq!(Reader::new(&[2]).flag(), None);
        assert_eq!(Reader::new(&[2]).optional_text(), None);
    }
}
