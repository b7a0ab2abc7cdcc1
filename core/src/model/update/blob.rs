//! Created-event blobs: base64 text, kept as ingested, with a small strict decoder.
//!
//! A blob is the serialized created event the ledger's JSON API returns; the node only
//! forwards it (the registry discloses it), so it keeps the text and checks that it is standard
//! base64 (RFC 4648 section 4: `A-Z a-z 0-9 + /`, `=` padding to a multiple of four
//! characters, zero bits after the last byte).

use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;

use crate::model::value::Source;

/// A created event's blob: valid standard base64, as ingested (possibly empty).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Blob(String);

/// Where and why a text is not standard base64.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Base64Error {
    /// Byte offset of the offending character (the length, for a bad length).
    pub position: usize,
    /// What is wrong there.
    pub problem: &'static str,
}

impl fmt::Display for Base64Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "not valid base64 (standard alphabet with = padding): {} at byte {}", self.problem, self.position)
    }
}

impl core::error::Error for Base64Error {}

impl Blob {
    /// Checks that `text` is standard base64 and keeps it.
    pub fn parse(text: &str) -> Result<Self, Base64Error> {
        walk(text.as_bytes(), |_| ())?;
        Ok(Blob(String::from(text)))
    }

    /// `bytes` in standard base64 with padding.
    pub fn encode(bytes: &[u8]) -> Self {
        const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let char_at = |n: u32, shift: u32| char::from(ALPHABET[((n >> shift) & 63) as usize]);
        let mut text = String::with_capacity(bytes.len().div_ceil(3) * 4);
        for chunk in bytes.chunks(3) {
            let byte = |i: usize| u32::from(chunk.get(i).copied().unwrap_or(0));
            let n = (byte(0) << 16) | (byte(1) << 8) | byte(2);
            text.push(char_at(n, 18));
            text.push(char_at(n, 12));
            text.push(if chunk.len() > 1 { char_at(n, 6) } else { '=' });
            text.push(if chunk.len() > 2 { char_at(n, 0) } else { '=' });
        }
        Blob(text)
    }

    /// Reads a blob's base64 string from `source`.
    pub(crate) fn read<'s, S: Source<'s>>(source: &mut S) -> Result<Self, S::Error> {
        let text = source.string()?;
        Blob::parse(text).map_err(|e| source.error(|| e.to_string()))
    }

    /// The base64 text, as ingested.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The bytes the text encodes.
    pub fn decode(&self) -> Vec<u8> {
        decode(&self.0).expect("a blob holds valid base64: parse checked it, encode wrote it")
    }
}

/// Decodes standard base64 with padding.
fn decode(text: &str) -> Result<Vec<u8>, Base64Error> {
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    walk(text.as_bytes(), |b| out.push(b))?;
    Ok(out)
}

/// Checks `text` and passes each decoded byte to `emit`.
fn walk(text: &[u8], mut emit: impl FnMut(u8)) -> Result<(), Base64Error> {
    let (quads, rest) = text.as_chunks::<4>();
    if !rest.is_empty() {
        return Err(Base64Error { position: text.len(), problem: "length is not a multiple of 4" });
    }
    let last = quads.len().saturating_sub(1);
    for (index, quad) in quads.iter().enumerate() {
        let start = index * 4;
        let padding = match quad {
            [_, _, b'=', b'='] if index == last => 2,
            [_, _, _, b'='] if index == last => 1,
            _ => 0,
        };
        let mut sextets = [0u8; 4];
        for (offset, (&c, slot)) in quad.iter().zip(sextets.iter_mut()).enumerate() {
            if offset >= 4 - padding {
                break;
            }
            *slot = sextet(c).ok_or(Base64Error {
                position: start + offset,
                problem: if c == b'=' { "padding before the end" } else { "character outside the base64 alphabet" },
            })?;
        }
        let [a, b, c, d] = sextets;
        let bits = u32::from(a) << 18 | u32::from(b) << 12 | u32::from(c) << 6 | u32::from(d);
        let [_, first, second, third] = bits.to_be_bytes();
        let leftover = match padding {
            2 => u32::from(b) & 0b1111,
            1 => u32::from(c) & 0b11,
            _ => 0,
        };
        if leftover != 0 {
            return Err(Base64Error { position: start + 3 - padding, problem: "non-zero bits after the last byte" });
        }
        emit(first);
        if padding < 2 {
            emit(second);
        }
        if padding < 1 {
            emit(third);
        }
    }
    Ok(())
}

/// The 6-bit value of a base64 character.
fn sextet(c: u8) -> Option<u8> {
    match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    }
}

/// A reference encoder, for tests.
#[cfg(test)]
pub(super) fn encode(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = u32::from(b[0]) << 16 | u32::from(b[1]) << 8 | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * i) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn encoding_writes_the_rfc_4648_test_vectors_and_decodes_back() {
        for (text, bytes) in [("", ""), ("Zg==", "f"), ("Zm8=", "fo"), ("Zm9v", "foo"), ("Zm9vYmFy", "foobar")] {
            assert_eq!(Blob::encode(bytes.as_bytes()).as_str(), text);
        }
        for length in 0..10 {
            let bytes: Vec<u8> = (0..length).map(|i| (i * 37 + 250) as u8).collect();
            let blob = Blob::encode(&bytes);
            assert_eq!(Blob::parse(blob.as_str()), Ok(blob.clone()));
            assert_eq!(blob.decode(), bytes);
        }
    }

    #[test]
    fn rfc_4648_test_vectors_decode() {
        for (text, bytes) in [
            ("", ""),
            ("Zg==", "f"),
            ("Zm8=", "fo"),
            ("Zm9v", "foo"),
            ("Zm9vYg==", "foob"),
            ("Zm9vYmE=", "fooba"),
            ("Zm9vYmFy", "foobar"),
        ] {
            assert_eq!(decode(text).unwrap(), bytes.as_bytes(), "{text}");
            assert_eq!(Blob::parse(text).unwrap().as_str(), text);
        }
        assert_eq!(decode("+/+/").unwrap(), [0xfb, 0xff, 0xbf]);
        assert_eq!(Blob::parse("AAEC").unwrap().decode(), [0, 1, 2]);
    }

    #[test]
    fn malformed_base64_is_refused_with_its_position() {
        for (text, position, problem) in [
            ("Zg", 2, "length is not a multiple of 4"),
            ("Zm9vY", 5, "length is not a multiple of 4"),
            ("Zm9-", 3, "character outside the base64 alphabet"),
            ("Zm9_", 3, "character outside the base64 alphabet"),
            ("Zm 9", 2, "character outside the base64 alphabet"),
            ("Zg==Zm9v", 2, "padding before the end"),
            ("=Zm9", 0, "padding before the end"),
            ("Z===", 1, "padding before the end"),
            ("Zm=v", 2, "padding before the end"),
            ("Zh==", 1, "non-zero bits after the last byte"),
            ("Zm9=", 2, "non-zero bits after the last byte"),
            ("Zm9v\n", 5, "length is not a multiple of 4"),
            ("Zé9", 1, "character outside the base64 alphabet"),
        ] {
            let err = Blob::parse(text).unwrap_err();
            assert_eq!(err, Base64Error { position, problem }, "{text:?}");
        }
        assert_eq!(
            Blob::parse("Zg").unwrap_err().to_string(),
            "not valid base64 (standard alphabet with = padding): length is not a multiple of 4 at byte 2"
        );
    }

    proptest::proptest! {
        #[test]
        fn any_bytes_round_trip(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..64)) {
            let text = encode(&bytes);
            proptest::prop_assert_eq!(decode(&text), Ok(bytes));
        }

        #[test]
        fn arbitrary_text_never_panics(text in "[A-Za-z0-9+/=é -]{0,24}") {
            let _ = decode(&text);
        }
    }
}
