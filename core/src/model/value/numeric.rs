//! Daml numerics, kept as the decimal text they were ingested as.
//!
//! The ledger sends numerics as text with the scale of their type (`1.5000000000`) and
//! sometimes in scientific notation (`0E-10`). The node never computes with them, so it
//! keeps the text verbatim and only checks that it is a decimal number:
//! `-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?`.

use alloc::string::String;
use core::fmt;

/// A decimal number, as text: `1.5000000000`, `-3`, `0E-10`, `1e5`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Numeric(String);

/// Why a text is not a [`Numeric`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NumericError;

impl fmt::Display for NumericError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(
            "expected a decimal number such as 1.5000000000, -3 or 0E-10 (optional sign, digits, optional fraction, optional exponent)",
        )
    }
}

impl core::error::Error for NumericError {}

impl Numeric {
    /// Checks that `text` is a decimal number, optionally in scientific notation.
    pub fn parse(text: &str) -> Result<Self, NumericError> {
        if is_decimal(text.as_bytes()) { Ok(Numeric(String::from(text))) } else { Err(NumericError) }
    }

    /// The text as ingested.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The number in units of 10^-`scale` (`1.5` at scale 10 is 15000000000), when it
    /// is one exactly and fits an `i128`: for the few places that add numerics up.
    pub fn scaled(&self, scale: u32) -> Option<i128> {
        let text = self.0.as_bytes();
        let (negative, text) = match text.strip_prefix(b"-") {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let (mantissa, exponent) = match text.iter().position(|b| matches!(b, b'e' | b'E')) {
            Some(at) => (text.get(..at)?, core::str::from_utf8(text.get(at + 1..)?).ok()?.parse::<i64>().ok()?),
            None => (text, 0),
        };
        let (whole, fraction) = match mantissa.iter().position(|b| *b == b'.') {
            Some(at) => (mantissa.get(..at)?, mantissa.get(at + 1..)?),
            None => (mantissa, &[][..]),
        };
        // The digits, as an integer of units of 10^-(fraction digits - exponent).
        let shift = i64::from(scale).checked_add(exponent)?.checked_sub(i64::try_from(fraction.len()).ok()?)?;
        let mut value: i128 = 0;
        for digit in whole.iter().chain(fraction) {
            value = value.checked_mul(10)?.checked_add(i128::from(digit.wrapping_sub(b'0')))?;
        }
        if shift >= 0 {
            value = value.checked_mul(10i128.checked_pow(u32::try_from(shift).ok()?)?)?;
        } else {
            let divisor = 10i128.checked_pow(u32::try_from(-shift).ok()?).unwrap_or(0);
            // Digits below the unit must all be zero (a divisor beyond i128 leaves only 0).
            match divisor {
                0 if value == 0 => {}
                0 => return None,
                divisor if value % divisor == 0 => value /= divisor,
                _ => return None,
            }
        }
        Some(if negative { -value } else { value })
    }
}

impl fmt::Display for Numeric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// `-?D+(\.D+)?([eE][+-]?D+)?` where `D` is an ASCII digit.
fn is_decimal(bytes: &[u8]) -> bool {
    let rest = bytes.strip_prefix(b"-").unwrap_or(bytes);
    let Some(rest) = digits(rest) else {
        return false;
    };
    let rest = match rest.strip_prefix(b".") {
        Some(fraction) => match digits(fraction) {
            Some(rest) => rest,
            None => return false,
        },
        None => rest,
    };
    match rest.split_first() {
        None => true,
        Some((b'e' | b'E', exponent)) => {
            let exponent = match exponent.split_first() {
                Some((b'+' | b'-', unsigned)) => unsigned,
                _ => exponent,
            };
            digits(exponent).is_some_and(<[u8]>::is_empty)
        }
        Some(_) => false,
    }
}

/// Skips one or more ASCII digits; `None` if there are none.
fn digits(bytes: &[u8]) -> Option<&[u8]> {
    let count = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
    (count > 0).then(|| bytes.get(count..)).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_numbers_are_kept_verbatim() {
        for text in [
            "0",
            "-0",
            "42",
            "1.5000000000",
            "-1.5000000000",
            "0E-10",
            "1e5",
            "1E+5",
            "-2.50e-3",
            "007.10",
            "99999999999999999999999999999999999999.0000000000",
        ] {
            assert_eq!(Numeric::parse(text).map(|n| n.as_str().into()), Ok(String::from(text)));
        }
    }

    #[test]
    fn a_numeric_scales_to_units_exactly_or_not_at_all() {
        let scaled = |text: &str| Numeric::parse(text).unwrap().scaled(10);
        assert_eq!(scaled("1.5000000000"), Some(15_000_000_000));
        assert_eq!(scaled("-3"), Some(-30_000_000_000));
        assert_eq!(scaled("0E-10"), Some(0));
        assert_eq!(scaled("1e5"), Some(1_000_000_000_000_000));
        assert_eq!(scaled("-2.50e-3"), Some(-25_000_000));
        assert_eq!(scaled("0.00000000015"), None, "a digit below 10^-10");
        assert_eq!(scaled("0.00000000010"), Some(1));
        assert_eq!(scaled("0E-999"), Some(0));
        assert_eq!(scaled("1E-999"), None);
        assert_eq!(scaled("1e40"), None, "beyond i128");
        assert_eq!(scaled("99999999999999999999999999999999999999.0000000000"), None);
        assert_eq!(
            scaled("9999999999999999999999999999.0000000000"),
            Some(99_999_999_999_999_999_999_999_999_990_000_000_000)
        );
    }

    #[test]
    fn anything_else_is_refused() {
        for text in [
            "", "-", "+1", ".5", "1.", "1.e5", "e5", "1e", "1e+", "1e5.0", "1.5.0", " 1", "1 ", "0x10", "NaN",
            "Infinity", "1_000", "١", "--1", "1e--5",
        ] {
            assert_eq!(Numeric::parse(text), Err(NumericError), "{text}");
        }
    }
}
