//! Short texts (numbers, timestamps, dates) formatted on the stack without `core::fmt`.
//!
//! Rendering an update writes a few of these per event, and going through
//! `core::fmt`'s formatter machinery cost more than writing the digits.

use core::fmt;

/// Most bytes of a [`Short`]: an `i64` takes at most 20, a timestamp 27.
const CAPACITY: usize = 32;

/// An ASCII text of at most 32 bytes.
#[derive(Clone, Copy)]
pub struct Short {
    bytes: [u8; CAPACITY],
    len: usize,
}

impl Short {
    /// An empty text.
    pub fn new() -> Self {
        Short { bytes: [0; CAPACITY], len: 0 }
    }

    /// Appends an ASCII byte. Bytes past the capacity are dropped (callers stay within
    /// it: every text here has a known most length).
    ///
    /// # Panics
    ///
    /// On a byte that is not ASCII: the text is always valid UTF-8.
    pub fn push(&mut self, byte: u8) -> &mut Self {
        assert!(byte.is_ascii(), "a short text holds ASCII only, not byte {byte:#04x}");
        if let Some(slot) = self.bytes.get_mut(self.len) {
            *slot = byte;
            self.len += 1;
        }
        self
    }

    /// Appends `n` in decimal, zero-padded to at least `width` digits.
    pub fn digits(&mut self, mut n: u64, width: usize) -> &mut Self {
        let mut reversed = [0u8; 20];
        let mut count = 0;
        while count < width || n > 0 || count == 0 {
            reversed[count] = b'0' + (n % 10) as u8;
            n /= 10;
            count += 1;
            if count == reversed.len() {
                break;
            }
        }
        for &digit in reversed[..count].iter().rev() {
            self.push(digit);
        }
        self
    }

    /// Appends `n` in decimal, with a minus sign when negative.
    pub fn int(&mut self, n: i64) -> &mut Self {
        if n < 0 {
            self.push(b'-');
        }
        self.digits(n.unsigned_abs(), 1)
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        core::str::from_utf8(&self.bytes[..self.len]).expect("push takes ASCII bytes only")
    }
}

impl Default for Short {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for Short {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

/// Something with a short text form.
pub trait ShortText {
    /// The text form.
    fn short_text(&self) -> Short;
}

impl ShortText for i64 {
    fn short_text(&self) -> Short {
        *Short::new().int(*self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn integers_read_as_core_fmt_writes_them() {
        for n in [0, 1, -1, 9, 10, 99, 100, 12_345, -98_765, i64::MAX, i64::MIN, i64::MIN + 1] {
            assert_eq!(n.short_text().as_str(), n.to_string(), "{n}");
        }
    }

    #[test]
    fn digits_are_zero_padded_to_the_width() {
        assert_eq!(Short::new().digits(7, 2).as_str(), "07");
        assert_eq!(Short::new().digits(0, 6).as_str(), "000000");
        assert_eq!(Short::new().digits(123, 2).as_str(), "123");
        assert_eq!(Short::new().digits(u64::MAX, 1).as_str(), u64::MAX.to_string());
    }
}
