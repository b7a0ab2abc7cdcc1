//! Writing JSON fast: a `serde` serializer for the shapes the node renders.
//!
//! Ingest renders every update twice (kilobytes of JSON each), and most of what it
//! writes is strings of ids and values. `serde_json`'s writer checks each byte of a
//! string against its escape table; [`to_vec`] instead skips eight bytes at a time
//! while none of them needs escaping, and copies the run at once. The output is byte for
//! byte what `serde_json::to_vec` writes (compact, same escapes), which the tests check
//! on arbitrary values and updates.
//!
//! Only what the node's renderers use is supported: strings, booleans, integers, unit,
//! options, sequences and maps or structs with string keys. Anything else (a float, a
//! map with integer keys, an enum variant) makes [`to_vec`] fall back to `serde_json`,
//! so the output is right for every `Serialize` type; a value `serde_json` cannot
//! write either (a map with keys that are not strings or numbers, a failing
//! `Serialize` impl) is an error, never an empty value.

use alloc::vec::Vec;
use core::fmt;

use serde::ser::{self, Impossible, Serialize};

/// `value` as compact JSON, exactly as `serde_json::to_vec` writes it, or its error.
pub fn to_vec<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, serde_json::Error> {
    let mut out = Vec::with_capacity(1024);
    match try_write(&mut out, value) {
        Ok(()) => Ok(out),
        Err(Unsupported) => serde_json::to_vec(value),
    }
}

/// Appends `value` to `out` as compact JSON, or refuses a shape this writer does not
/// support (leaving `out` with part of the value).
pub fn try_write<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) -> Result<(), Unsupported> {
    value.serialize(Writer { out })
}

/// Why [`to_vec`] handed a value over to `serde_json`: it is not a shape this writer
/// supports.
#[derive(Debug)]
pub struct Unsupported;

impl fmt::Display for Unsupported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a value this JSON writer does not support")
    }
}

impl core::error::Error for Unsupported {}

impl ser::Error for Unsupported {
    fn custom<T: fmt::Display>(_: T) -> Self {
        Unsupported
    }
}

/// Writes `s` as a JSON string, quotes included, with `serde_json`'s escapes.
pub fn write_str(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    write_str_contents(out, s.as_bytes());
    out.push(b'"');
}

/// Writes the contents of a JSON string: runs that need no escape are found eight
/// bytes at a time and copied whole.
fn write_str_contents(out: &mut Vec<u8>, mut bytes: &[u8]) {
    while let Some(at) = first_escape(bytes) {
        let (run, rest) = bytes.split_at(at);
        out.extend_from_slice(run);
        if let Some((&byte, rest)) = rest.split_first() {
            escape(out, byte);
            bytes = rest;
        }
    }
    out.extend_from_slice(bytes);
}

/// The index of the first byte of `bytes` that a JSON string must escape: a control
/// character, `"` or `\`.
///
/// Eight bytes are tested at a time: each test sets the high bit of every byte it
/// matches, and may also set it in bytes after a match (a borrow carries upward), never
/// before one, so the lowest bit set is the first match.
pub(crate) fn first_escape(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    /// The zero bytes of `v` (the classic bit trick).
    fn zeros(v: u64) -> u64 {
        v.wrapping_sub(ONES) & !v & HIGHS
    }
    let mut chunks = bytes.chunks_exact(8);
    let mut offset = 0;
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let v = u64::from_le_bytes(word);
        // Bytes below 0x20: subtracting 0x20 borrows into the high bit only for them
        // (bytes of 0x80 and above are excluded by `!v`).
        let control = v.wrapping_sub(ONES * 0x20) & !v & HIGHS;
        let found = control | zeros(v ^ (ONES * u64::from(b'"'))) | zeros(v ^ (ONES * u64::from(b'\\')));
        if found != 0 {
            // The lowest byte first: the words are read little-endian.
            return Some(offset + (found.trailing_zeros() / 8) as usize);
        }
        offset += 8;
    }
    chunks.remainder().iter().position(|b| needs_escape(*b)).map(|i| offset + i)
}

fn needs_escape(byte: u8) -> bool {
    byte < 0x20 || byte == b'"' || byte == b'\\'
}

/// Writes the escape of `byte`, one that [`needs_escape`].
fn escape(out: &mut Vec<u8>, byte: u8) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let short = match byte {
        b'"' => b'"',
        b'\\' => b'\\',
        0x08 => b'b',
        0x0c => b'f',
        b'\n' => b'n',
        b'\r' => b'r',
        b'\t' => b't',
        _ => {
            out.extend_from_slice(b"\\u00");
            out.push(HEX[usize::from(byte >> 4)]);
            out.push(HEX[usize::from(byte & 0xf)]);
            return;
        }
    };
    out.extend_from_slice(&[b'\\', short]);
}

/// The struct name `serde_json::value::RawValue` serializes under, as a struct of one
/// field of the same name holding the JSON text.
pub(crate) const RAW_VALUE: &str = "$serde_json::private::RawValue";

/// The serializer: appends to `out`.
struct Writer<'a> {
    out: &'a mut Vec<u8>,
}

impl Writer<'_> {
    fn integer(self, n: impl itoa::Integer) -> Result<(), Unsupported> {
        self.out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
        Ok(())
    }
}

/// A sequence or map being written: whether an element was written yet.
struct Compound<'a> {
    out: &'a mut Vec<u8>,
    first: bool,
    /// Raw JSON text ([`RAW_VALUE`]): its one field is written as it is.
    raw: bool,
}

impl Compound<'_> {
    fn separate(&mut self) {
        if self.first {
            self.first = false;
        } else {
            self.out.push(b',');
        }
    }

    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Unsupported> {
        self.separate();
        value.serialize(Writer { out: self.out })
    }

    fn entry<V: Serialize + ?Sized>(&mut self, key: &str, value: &V) -> Result<(), Unsupported> {
        self.separate();
        write_str(self.out, key);
        self.out.push(b':');
        value.serialize(Writer { out: self.out })
    }
}

/// Writes `Display` output as string contents, escaped.
struct Escaping<'a>(&'a mut Vec<u8>);

impl fmt::Write for Escaping<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        write_str_contents(self.0, s.as_bytes());
        Ok(())
    }
}

impl<'a> ser::Serializer for Writer<'a> {
    type Ok = ();
    type Error = Unsupported;
    type SerializeSeq = Compound<'a>;
    type SerializeTuple = Compound<'a>;
    type SerializeTupleStruct = Compound<'a>;
    type SerializeTupleVariant = Impossible<(), Unsupported>;
    type SerializeMap = Compound<'a>;
    type SerializeStruct = Compound<'a>;
    type SerializeStructVariant = Impossible<(), Unsupported>;

    fn serialize_bool(self, v: bool) -> Result<(), Unsupported> {
        self.out.extend_from_slice(if v { b"true" } else { b"false" });
        Ok(())
    }

    fn serialize_i8(self, v: i8) -> Result<(), Unsupported> {
        self.integer(v)
    }

    fn serialize_i16(self, v: i16) -> Result<(), Unsupported> {
        self.integer(v)
    }

    fn serialize_i32(self, v: i32) -> Result<(), Unsupported> {
        self.integer(v)
    }

    fn serialize_i64(self, v: i64) -> Result<(), Unsupported> {
        self.integer(v)
    }

    fn serialize_u8(self, v: u8) -> Result<(), Unsupported> {
        self.integer(v)
    }

    fn serialize_u16(self, v: u16) -> Result<(), Unsupported> {
        self.integer(v)
    }

    fn serialize_u32(self, v: u32) -> Result<(), Unsupported> {
        self.integer(v)
    }

    fn serialize_u64(self, v: u64) -> Result<(), Unsupported> {
        self.integer(v)
    }

    fn serialize_f32(self, _: f32) -> Result<(), Unsupported> {
        Err(Unsupported)
    }

    fn serialize_f64(self, _: f64) -> Result<(), Unsupported> {
        Err(Unsupported)
    }

    fn serialize_char(self, v: char) -> Result<(), Unsupported> {
        write_str(self.out, v.encode_utf8(&mut [0; 4]));
        Ok(())
    }

    fn serialize_str(self, v: &str) -> Result<(), Unsupported> {
        write_str(self.out, v);
        Ok(())
    }

    fn serialize_bytes(self, _: &[u8]) -> Result<(), Unsupported> {
        Err(Unsupported)
    }

    fn serialize_none(self) -> Result<(), Unsupported> {
        self.serialize_unit()
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Unsupported> {
        value.serialize(self)
    }

    fn serialize_unit(self) -> Result<(), Unsupported> {
        self.out.extend_from_slice(b"null");
        Ok(())
    }

    fn serialize_unit_struct(self, _: &'static str) -> Result<(), Unsupported> {
        self.serialize_unit()
    }

    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Result<(), Unsupported> {
        self.serialize_str(variant)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, value: &T) -> Result<(), Unsupported> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<(), Unsupported> {
        Err(Unsupported)
    }

    fn serialize_seq(self, _: Option<usize>) -> Result<Compound<'a>, Unsupported> {
        self.out.push(b'[');
        Ok(Compound { out: self.out, first: true, raw: false })
    }

    fn serialize_tuple(self, len: usize) -> Result<Compound<'a>, Unsupported> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_struct(self, _: &'static str, len: usize) -> Result<Compound<'a>, Unsupported> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, Unsupported> {
        Err(Unsupported)
    }

    fn serialize_map(self, _: Option<usize>) -> Result<Compound<'a>, Unsupported> {
        self.out.push(b'{');
        Ok(Compound { out: self.out, first: true, raw: false })
    }

    fn serialize_struct(self, name: &'static str, len: usize) -> Result<Compound<'a>, Unsupported> {
        // `serde_json`'s raw JSON text passes through as a struct of this name (the
        // renderer of ledger values hands its text on this way).
        if name == RAW_VALUE {
            return Ok(Compound { out: self.out, first: true, raw: true });
        }
        self.serialize_map(Some(len))
    }

    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, Unsupported> {
        Err(Unsupported)
    }

    fn collect_str<T: fmt::Display + ?Sized>(self, value: &T) -> Result<(), Unsupported> {
        self.out.push(b'"');
        fmt::write(&mut Escaping(self.out), format_args!("{value}")).map_err(|_| Unsupported)?;
        self.out.push(b'"');
        Ok(())
    }
}

impl ser::SerializeSeq for Compound<'_> {
    type Ok = ();
    type Error = Unsupported;

    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Unsupported> {
        self.element(value)
    }

    fn end(self) -> Result<(), Unsupported> {
        self.out.push(b']');
        Ok(())
    }
}

impl ser::SerializeTuple for Compound<'_> {
    type Ok = ();
    type Error = Unsupported;

    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Unsupported> {
        self.element(value)
    }

    fn end(self) -> Result<(), Unsupported> {
        ser::SerializeSeq::end(self)
    }
}

impl ser::SerializeTupleStruct for Compound<'_> {
    type Ok = ();
    type Error = Unsupported;

    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Unsupported> {
        self.element(value)
    }

    fn end(self) -> Result<(), Unsupported> {
        ser::SerializeSeq::end(self)
    }
}

impl ser::SerializeMap for Compound<'_> {
    type Ok = ();
    type Error = Unsupported;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Unsupported> {
        self.separate();
        key.serialize(StrWriter { out: self.out, verbatim: false })?;
        self.out.push(b':');
        Ok(())
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Unsupported> {
        value.serialize(Writer { out: self.out })
    }

    fn end(self) -> Result<(), Unsupported> {
        self.out.push(b'}');
        Ok(())
    }
}

impl ser::SerializeStruct for Compound<'_> {
    type Ok = ();
    type Error = Unsupported;

    fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result<(), Unsupported> {
        if self.raw {
            return value.serialize(StrWriter { out: self.out, verbatim: true });
        }
        self.entry(key, value)
    }

    fn end(self) -> Result<(), Unsupported> {
        if self.raw {
            return Ok(());
        }
        ser::SerializeMap::end(self)
    }
}

/// Writes a string: a map key (or something written as one), quoted and escaped, or
/// with `verbatim` raw JSON text, as it is.
struct StrWriter<'a> {
    out: &'a mut Vec<u8>,
    verbatim: bool,
}

impl ser::Serializer for StrWriter<'_> {
    type Ok = ();
    type Error = Unsupported;
    type SerializeSeq = Impossible<(), Unsupported>;
    type SerializeTuple = Impossible<(), Unsupported>;
    type SerializeTupleStruct = Impossible<(), Unsupported>;
    type SerializeTupleVariant = Impossible<(), Unsupported>;
    type SerializeMap = Impossible<(), Unsupported>;
    type SerializeStruct = Impossible<(), Unsupported>;
    type SerializeStructVariant = Impossible<(), Unsupported>;

    fn serialize_str(self, v: &str) -> Result<(), Unsupported> {
        if self.verbatim {
            self.out.extend_from_slice(v.as_bytes());
        } else {
            write_str(self.out, v);
        }
        Ok(())
    }

    fn collect_str<T: fmt::Display + ?Sized>(self, value: &T) -> Result<(), Unsupported> {
        if self.verbatim {
            return Err(Unsupported);
        }
        Writer { out: self.out }.collect_str(value)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, value: &T) -> Result<(), Unsupported> {
        value.serialize(self)
    }

    fn serialize_bool(self, _: bool) -> Result<(), Unsupported> {
        Err(Unsupported)
    }
    fn serialize_i8(self, _: i8) -> Result<(), Unsupported> {
        Err(Unsupported)
    }
    fn serialize_i16(self, _: i16) -> Result<(), Unsupported> {
        Err(Unsupported)
    }
    fn serialize_i32(self, _: i32) -> Result<(), Unsupported> {
        Err(Unsupported)
    }
    fn serialize_i64(self, _: i64) -> Result<(), Unsupported> {
        Err(Unsupported)
    }
    fn serialize_u8(self, _: u8) -> Result<(), Unsupported> {
        Err(Unsupported)
    }
    fn serialize_u16(self, _: u16) -> Result<(), Unsupported> {
        Err(Unsupported)
    }
    fn serialize_u32(self, _: u32) -> Result<(), Unsupported> {
        Err(Unsupported)
    }
    fn serialize_u64(self, _: u64) -> Result<(), Unsupported> {
        Err(Unsupported)
    }
    fn serialize_f32(self, _: f32) -> Result<(), Unsupported> {
        Err(Unsupported)
    }
    fn serialize_f64(self, _: f64) -> Result<(), Unsupported> {
        Err(Unsupported)
    }
    fn serialize_char(self, _: char) -> Result<(), Unsupported> {
        Err(Unsupported)
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<(), Unsupported> {
        Err(Unsupported)
    }
    fn serialize_none(self) -> Result<(), Unsupported> {
        Err(Unsupported)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> Result<(), Unsupported> {
        Err(Unsupported)
    }
    fn serialize_unit(self) -> Result<(), Unsupported> {
        Err(Unsupported)
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), Unsupported> {
        Err(Unsupported)
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, _: &'static str) -> Result<(), Unsupported> {
        Err(Unsupported)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<(), Unsupported> {
        Err(Unsupported)
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, Unsupported> {
        Err(Unsupported)
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Unsupported> {
        Err(Unsupported)
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeTupleStruct, Unsupported> {
        Err(Unsupported)
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, Unsupported> {
        Err(Unsupported)
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Unsupported> {
        Err(Unsupported)
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct, Unsupported> {
        Err(Unsupported)
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, Unsupported> {
        Err(Unsupported)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::String;
    use proptest::prelude::*;

    #[test]
    fn strings_are_escaped_as_serde_json_escapes_them() {
        let mut every_byte = String::new();
        for c in (0u8..0x80).map(char::from).chain(['é', '€', '𝄞', '\u{7f}']) {
            every_byte.push(c);
        }
        for s in ["", "plain", "a\"b", "\\", "tab\there", "\u{1}\u{1f}", every_byte.as_str(), "0123456789abcdef\"x"] {
            assert_eq!(to_vec(s).unwrap(), serde_json::to_vec(s).unwrap(), "{s:?}");
        }
    }

    #[test]
    fn the_first_byte_to_escape_is_found_in_blocks_and_after_them() {
        for len in 0..50 {
            let plain: Vec<u8> =
                (0..len).map(|n| [b'a', b' ', 0x7f, 0x80, 0xff, b'!', b'#', b'[', b']'][n % 9]).collect();
            assert_eq!(first_escape(&plain), None, "{len} bytes");
            for at in 0..len {
                for byte in [0x00, 0x1f, b'"', b'\\'] {
                    let mut bytes = plain.clone();
                    bytes[at] = byte;
                    if let Some(later) = bytes.get_mut(at + 3) {
                        *later = b'"';
                    }
                    assert_eq!(first_escape(&bytes), Some(at), "{byte:#x} at {at} of {len}");
                }
            }
        }
    }

    #[test]
    fn unsupported_shapes_fall_back_to_serde_json() {
        let value = serde_json::json!({"f": 1.5, "list": [1, -2, null, true, "s"], "nested": {"k": {}}});
        assert_eq!(to_vec(&value).unwrap(), serde_json::to_vec(&value).unwrap());
        let raw = serde_json::value::RawValue::from_string(String::from("{ \"a\" : 1 }")).unwrap();
        assert_eq!(to_vec(&raw).unwrap(), serde_json::to_vec(&raw).unwrap());
        assert!(try_write(&mut Vec::new(), &raw).is_ok(), "raw JSON text is written as it is");
        let mut map = alloc::collections::BTreeMap::new();
        map.insert(7u32, "seven");
        assert_eq!(to_vec(&map).unwrap(), serde_json::to_vec(&map).unwrap());
    }

    #[test]
    fn a_value_json_cannot_hold_is_an_error_not_an_empty_value() {
        let mut map = alloc::collections::BTreeMap::new();
        map.insert(alloc::vec![1u8], "a list as a key");
        assert!(serde_json::to_vec(&map).is_err());
        assert!(to_vec(&map).is_err());
    }

    proptest! {
        #[test]
        fn the_first_byte_to_escape_is_the_first_that_needs_it(bytes in proptest::collection::vec(any::<u8>(), 0..40)) {
            prop_assert_eq!(first_escape(&bytes), bytes.iter().position(|b| needs_escape(*b)));
        }

        #[test]
        fn any_string_is_written_as_serde_json_writes_it(s in any::<String>()) {
            prop_assert_eq!(to_vec(&s).unwrap(), serde_json::to_vec(&s).unwrap());
        }

        #[test]
        fn integers_are_written_as_serde_json_writes_them(n in any::<i64>(), u in any::<u64>()) {
            prop_assert_eq!(to_vec(&(n, u)).unwrap(), serde_json::to_vec(&(n, u)).unwrap());
        }
    }
}
