//! Ledger values as the demo builds them: short constructors of the core's [`Value`],
//! so that a payload reads like the Daml record it stands for.

use ledger_node_core::model::time::{Date, Timestamp};
use ledger_node_core::model::value::{Field, Numeric, Record, Value};

use super::UNIT;

/// A record value, fields in order.
pub(super) fn record<const N: usize>(fields: [(&str, Value); N]) -> Value {
    Value::Record(payload(fields))
}

/// A contract's payload: a record, fields in order.
pub(super) fn payload<const N: usize>(fields: [(&str, Value); N]) -> Record {
    Record { fields: fields.into_iter().map(|(label, value)| Field { label: label.to_owned(), value }).collect() }
}

pub(super) fn party(p: &str) -> Value {
    Value::Party(p.to_owned())
}

pub(super) fn cid(c: &str) -> Value {
    Value::ContractId(c.to_owned())
}

pub(super) fn text(s: &str) -> Value {
    Value::Text(s.to_owned())
}

pub(super) fn some(v: Value) -> Value {
    Value::Optional(Some(Box::new(v)))
}

pub(super) fn none() -> Value {
    Value::Optional(None)
}

pub(super) fn variant(constructor: &str, v: Value) -> Value {
    Value::Variant { constructor: constructor.to_owned(), value: Box::new(v) }
}

pub(super) fn enumeration(constructor: &str) -> Value {
    Value::Enum(constructor.to_owned())
}

/// A `Numeric 10` amount held in units of 10^-10: sign, integer part, ten fractional
/// digits.
pub(super) fn numeric(units: i64) -> Value {
    let (magnitude, unit) = (units.unsigned_abs(), UNIT.unsigned_abs());
    let mut text = String::with_capacity(32);
    if units < 0 {
        text.push('-');
    }
    push_decimal(&mut text, magnitude / unit, 1);
    text.push('.');
    push_decimal(&mut text, magnitude % unit, 10);
    Value::Numeric(Numeric::parse(&text).expect("digits, a point and ten digits are a decimal number"))
}

/// Appends `n` in decimal, zero-padded to at least `width` digits (`width >= 1`); the
/// generator writes millions of numbers, and this is much cheaper than `format!`.
pub(super) fn push_decimal(out: &mut String, mut n: u64, width: usize) {
    let mut digits = [b'0'; 20];
    let mut start = digits.len();
    while n > 0 || digits.len() - start < width {
        start -= 1;
        digits[start] = b'0' + (n % 10) as u8;
        n /= 10;
    }
    out.extend(digits[start..].iter().map(|&d| char::from(d)));
}

/// A point of the simulated clock, in microseconds since the epoch.
pub(super) fn at(micros: i64) -> Timestamp {
    Timestamp::from_micros(micros).expect("the simulated clock stays within a few centuries of its start")
}

pub(super) fn timestamp(micros: i64) -> Value {
    Value::Timestamp(at(micros))
}

pub(super) fn date(days: i64) -> Value {
    Value::Date(Date::from_days(days).expect("the simulated clock stays within a few centuries of its start"))
}

/// `{number: n}`, a round number.
pub(super) fn round(n: i64) -> Value {
    record([("number", Value::Int64(n))])
}

/// `{microseconds: n}`, a relative time.
pub(super) fn reltime(micros: i64) -> Value {
    record([("microseconds", Value::Int64(micros))])
}

/// `{values: {k: v, ..}}`, token-standard metadata.
pub(super) fn metadata(entries: Vec<(String, Value)>) -> Value {
    record([("values", Value::TextMap(entries))])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numerics_have_ten_fractional_digits() {
        for (units, text) in [(0, "0.0000000000"), (UNIT / 200, "0.0050000000"), (-12 * UNIT - 1, "-12.0000000001")] {
            assert_eq!(numeric(units), Value::Numeric(Numeric::parse(text).unwrap()));
        }
    }
}
