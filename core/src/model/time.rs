//! Timestamps and dates: microseconds (and days) since the Unix epoch, UTC.
//!
//! Every timestamp the node writes is RFC 3339 in UTC with exactly six fractional digits
//! (`2024-09-20T13:31:29.552807Z`). Parsing, in requests and at ingest alike, accepts any
//! RFC 3339 timestamp with 0 to 9 fractional digits and a `Z` or numeric offset, and
//! normalises it to UTC. Times have microsecond resolution: the seventh to ninth digits
//! (a nanosecond clock's) must be zero, else the text is refused
//! ([`TimeError::BeyondMicros`]) rather than silently truncated.

use alloc::string::{String, ToString};
use core::fmt;

/// The form of a timestamp in requests, for messages that ask for one.
pub const TIMESTAMP_FORM: &str = "an RFC 3339 timestamp such as 2024-09-20T13:31:29.552807Z";

use crate::model::json::short::{Short, ShortText};

/// Microseconds per second.
const MICROS_PER_SECOND: i64 = 1_000_000;
/// Seconds per day.
const SECONDS_PER_DAY: i64 = 86_400;
/// Days from 0000-03-01 to 1970-01-01 in the proleptic Gregorian calendar.
const DAYS_TO_UNIX_EPOCH: i64 = 719_468;
/// First and last day (since the epoch) that format with a four-digit year:
/// 0001-01-01 and 9999-12-31.
const MIN_DAY: i64 = -719_162;
const MAX_DAY: i64 = 2_932_896;

/// A point in time, in microseconds since the Unix epoch (UTC), within years 1 to 9999.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(i64);

/// A calendar date, in days since the Unix epoch, within years 1 to 9999.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Date(i32);

/// Most fractional digits a timestamp may have (nanoseconds).
const MAX_FRACTION_DIGITS: usize = 9;
/// Fractional digits the node keeps (microseconds).
const KEPT_FRACTION_DIGITS: usize = 6;

/// Why a timestamp or date was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TimeError {
    /// Not of the accepted form, or out of range; the message says which.
    Invalid(&'static str),
    /// A well-formed timestamp (the text, at most 35 bytes) with a nonzero seventh,
    /// eighth or ninth fractional digit, which microseconds cannot hold.
    BeyondMicros(String),
}

impl fmt::Display for TimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TimeError::Invalid(message) => f.write_str(message),
            TimeError::BeyondMicros(text) => {
                write!(f, "{text} has a nonzero digit beyond the microsecond; times have microsecond resolution")
            }
        }
    }
}

impl Timestamp {
    /// The earliest representable timestamp, `0001-01-01T00:00:00.000000Z`; import updates
    /// carry it as their record time.
    pub const MIN: Timestamp = Timestamp(MIN_DAY * SECONDS_PER_DAY * MICROS_PER_SECOND);
    /// The Unix epoch, `1970-01-01T00:00:00.000000Z`.
    pub const UNIX_EPOCH: Timestamp = Timestamp(0);
    /// The latest representable timestamp, `9999-12-31T23:59:59.999999Z`.
    pub const MAX: Timestamp = Timestamp((MAX_DAY + 1) * SECONDS_PER_DAY * MICROS_PER_SECOND - 1);

    /// A timestamp from microseconds since the epoch, if it lies within years 1 to 9999.
    pub fn from_micros(micros: i64) -> Result<Self, TimeError> {
        if (Self::MIN.0..=Self::MAX.0).contains(&micros) {
            Ok(Timestamp(micros))
        } else {
            Err(TimeError::Invalid("timestamp out of range (years 1 to 9999)"))
        }
    }

    /// A timestamp from whole seconds since the epoch.
    pub fn from_unix_seconds(seconds: i64) -> Result<Self, TimeError> {
        seconds
            .checked_mul(MICROS_PER_SECOND)
            .ok_or(TimeError::Invalid("timestamp out of range (years 1 to 9999)"))
            .and_then(Self::from_micros)
    }

    /// Microseconds since the epoch.
    pub fn micros(self) -> i64 {
        self.0
    }

    /// `text`, given as `name` in a request (`query parameter after`,
    /// `after.after_record_time`), as a timestamp; a 400 that names it otherwise.
    pub fn parse_named(name: &str, text: &str) -> Result<Self, crate::model::error::Error> {
        use crate::model::error::Error;
        Timestamp::parse(text).map_err(|e| match e {
            // The error names the text already.
            TimeError::BeyondMicros(_) => Error::BadRequest(alloc::format!("{name}: {e}")),
            TimeError::Invalid(_) => {
                Error::BadRequest(alloc::format!("{name} must be {TIMESTAMP_FORM}, not {text:?}: {e}"))
            }
        })
    }

    /// Parses an RFC 3339 timestamp (`YYYY-MM-DDTHH:MM:SS[.fffffffff](Z|±HH:MM)`, 1 to 9
    /// fractional digits, those beyond the sixth zero).
    pub fn parse(text: &str) -> Result<Self, TimeError> {
        const BAD: TimeError = TimeError::Invalid("expected an RFC 3339 timestamp such as 2024-09-20T13:31:29.552807Z");
        let b = text.as_bytes();
        if b.len() < 20 {
            return Err(BAD);
        }
        let date = Date::parse(text.get(..10).ok_or(BAD)?).map_err(|_| BAD)?;
        if !matches!(b.get(10), Some(b'T' | b't' | b' ')) || b.get(13) != Some(&b':') || b.get(16) != Some(&b':') {
            return Err(BAD);
        }
        let hour = digits(b, 11, 2).ok_or(BAD)?;
        let minute = digits(b, 14, 2).ok_or(BAD)?;
        let second = digits(b, 17, 2).ok_or(BAD)?;
        if hour > 23 || minute > 59 || second > 59 {
            return Err(TimeError::Invalid("time of day out of range"));
        }
        let (fraction, beyond_micros, pos) = fraction(b, 19)?;
        let offset_seconds = match b.get(pos) {
            Some(b'Z' | b'z') if pos + 1 == b.len() => 0,
            Some(sign @ (b'+' | b'-')) if pos + 6 == b.len() && b.get(pos + 3) == Some(&b':') => {
                let h = digits(b, pos + 1, 2).ok_or(BAD)?;
                let m = digits(b, pos + 4, 2).ok_or(BAD)?;
                if h > 23 || m > 59 {
                    return Err(BAD);
                }
                let total = h * 3600 + m * 60;
                if *sign == b'+' { total } else { -total }
            }
            _ => return Err(BAD),
        };
        let seconds = i64::from(date.0) * SECONDS_PER_DAY + hour * 3600 + minute * 60 + second - offset_seconds;
        let timestamp = Self::from_micros(seconds * MICROS_PER_SECOND + fraction)?;
        if beyond_micros {
            // Checked last, so that the text is a whole, well-formed timestamp (at most
            // 35 bytes) before the error copies it.
            return Err(TimeError::BeyondMicros(text.to_string()));
        }
        Ok(timestamp)
    }

    /// The day this timestamp falls on (UTC).
    pub fn date(self) -> Date {
        // Range of the timestamp keeps the day within i32 and within years 1 to 9999.
        Date(self.0.div_euclid(SECONDS_PER_DAY * MICROS_PER_SECOND) as i32)
    }
}

impl ShortText for Timestamp {
    /// `YYYY-MM-DDTHH:MM:SS.ffffffZ`.
    fn short_text(&self) -> Short {
        let day_micros = SECONDS_PER_DAY * MICROS_PER_SECOND;
        // Non-negative and below a day's microseconds.
        let within_day = self.0.rem_euclid(day_micros) as u64;
        let seconds = within_day / MICROS_PER_SECOND as u64;
        let mut text = self.date().short_text();
        text.push(b'T').digits(seconds / 3600, 2).push(b':').digits(seconds / 60 % 60, 2).push(b':');
        text.digits(seconds % 60, 2).push(b'.').digits(within_day % MICROS_PER_SECOND as u64, 6).push(b'Z');
        text
    }
}

impl fmt::Display for Timestamp {
    /// Formats as `YYYY-MM-DDTHH:MM:SS.ffffffZ`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.short_text().as_str())
    }
}

impl Date {
    /// A date from days since the epoch, if it lies within years 1 to 9999.
    pub fn from_days(days: i64) -> Result<Self, TimeError> {
        if (MIN_DAY..=MAX_DAY).contains(&days) {
            // The range check keeps the value within i32.
            Ok(Date(days as i32))
        } else {
            Err(TimeError::Invalid("date out of range (years 1 to 9999)"))
        }
    }

    /// Days since the epoch.
    pub fn days(self) -> i32 {
        self.0
    }

    /// Parses `YYYY-MM-DD`.
    pub fn parse(text: &str) -> Result<Self, TimeError> {
        const BAD: TimeError = TimeError::Invalid("expected a date such as 2024-09-20");
        let b = text.as_bytes();
        if b.len() != 10 || b.get(4) != Some(&b'-') || b.get(7) != Some(&b'-') {
            return Err(BAD);
        }
        let year = digits(b, 0, 4).ok_or(BAD)?;
        let month = digits(b, 5, 2).ok_or(BAD)?;
        let day = digits(b, 8, 2).ok_or(BAD)?;
        if year == 0 || !(1..=12).contains(&month) || day == 0 || day > days_in_month(year, month) {
            return Err(TimeError::Invalid("no such calendar date"));
        }
        Self::from_days(days_from_civil(year, month, day))
    }

    /// Year, month (1 to 12) and day of month (1 to 31).
    pub fn civil(self) -> (i64, i64, i64) {
        civil_from_days(i64::from(self.0))
    }
}

impl ShortText for Date {
    /// `YYYY-MM-DD`.
    fn short_text(&self) -> Short {
        // Years 1 to 9999, so every part is positive and four digits at most.
        let (year, month, day) = self.civil();
        let mut text = Short::new();
        text.digits(year as u64, 4).push(b'-').digits(month as u64, 2).push(b'-').digits(day as u64, 2);
        text
    }
}

impl fmt::Display for Date {
    /// Formats as `YYYY-MM-DD`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.short_text().as_str())
    }
}

/// Year, month (1 to 12) and day of month (1 to 31) of a day number since 1970-01-01
/// (Howard Hinnant's civil_from_days), in the proleptic Gregorian calendar.
pub fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + DAYS_TO_UNIX_EPOCH;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Howard Hinnant's days_from_civil.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - DAYS_TO_UNIX_EPOCH
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// The optional fraction of seconds at `start` (`.` and 1 to 9 digits): its
/// microseconds, whether a digit beyond the sixth is nonzero, and where it ends.
fn fraction(b: &[u8], start: usize) -> Result<(i64, bool, usize), TimeError> {
    if b.get(start) != Some(&b'.') {
        return Ok((0, false, start));
    }
    let first = start + 1;
    let count = b.get(first..).unwrap_or_default().iter().take_while(|d| d.is_ascii_digit()).count();
    if count == 0 {
        return Err(TimeError::Invalid("expected digits after the decimal point of the seconds"));
    }
    if count > MAX_FRACTION_DIGITS {
        return Err(TimeError::Invalid(
            "timestamps have at most nine fractional digits, and those beyond the sixth must be zero",
        ));
    }
    let digits = b.get(first..first + count).unwrap_or_default();
    let (kept, beyond) = digits.split_at(count.min(KEPT_FRACTION_DIGITS));
    let mut micros = kept.iter().fold(0i64, |acc, d| acc * 10 + i64::from(d - b'0'));
    for _ in kept.len()..KEPT_FRACTION_DIGITS {
        micros *= 10;
    }
    Ok((micros, beyond.iter().any(|d| *d != b'0'), first + count))
}

/// The decimal number in `len` ASCII digits at `start`, if they are all digits.
fn digits(bytes: &[u8], start: usize, len: usize) -> Option<i64> {
    let slice = bytes.get(start..start.checked_add(len)?)?;
    slice.iter().try_fold(0i64, |acc, d| d.is_ascii_digit().then(|| acc * 10 + i64::from(d - b'0')))
}

/// Formats a timestamp into a new string.
pub fn format_timestamp(ts: Timestamp) -> String {
    alloc::format!("{ts}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn the_short_text_is_what_core_fmt_would_write() {
        let span = (Timestamp::MAX.micros() - Timestamp::MIN.micros()) as u64;
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..10_000 {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            let ts = Timestamp::from_micros(Timestamp::MIN.micros() + (seed % span) as i64).unwrap();
            let (year, month, day) = ts.date().civil();
            let within_day = ts.micros().rem_euclid(SECONDS_PER_DAY * MICROS_PER_SECOND);
            let (seconds, fraction) = (within_day / MICROS_PER_SECOND, within_day % MICROS_PER_SECOND);
            let (h, m, s) = (seconds / 3600, seconds / 60 % 60, seconds % 60);
            let want = alloc::format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}.{fraction:06}Z");
            assert_eq!(ts.to_string(), want);
            assert_eq!(ts.date().to_string(), want[..10]);
        }
    }

    #[test]
    fn timestamps_format_with_six_fractional_digits() {
        let cases = [
            (0, "1970-01-01T00:00:00.000000Z"),
            (1_726_839_089_552_807, "2024-09-20T13:31:29.552807Z"),
            (-1, "1969-12-31T23:59:59.999999Z"),
            (Timestamp::MIN.micros(), "0001-01-01T00:00:00.000000Z"),
            (Timestamp::MAX.micros(), "9999-12-31T23:59:59.999999Z"),
        ];
        for (micros, text) in cases {
            let ts = Timestamp::from_micros(micros).unwrap();
            assert_eq!(ts.to_string(), text);
            assert_eq!(Timestamp::parse(text).unwrap(), ts, "{text}");
        }
    }

    #[test]
    fn parsing_accepts_short_fractions_and_offsets() {
        let cases = [
            ("2024-09-20T13:31:29Z", 1_726_839_089_000_000),
            ("2024-09-20T13:31:29.5Z", 1_726_839_089_500_000),
            ("2024-09-20T15:31:29.552807+02:00", 1_726_839_089_552_807),
            ("2024-09-20T13:31:29.552807-00:00", 1_726_839_089_552_807),
        ];
        for (text, micros) in cases {
            assert_eq!(Timestamp::parse(text).unwrap().micros(), micros, "{text}");
        }
    }

    #[test]
    fn zero_to_nine_fractional_digits_are_accepted_when_nothing_is_beyond_the_microsecond() {
        let base = 1_726_839_089_000_000;
        let cases = [
            ("2024-09-20T13:31:29Z", 0),
            ("2024-09-20T13:31:29.5Z", 500_000),
            ("2024-09-20T13:31:29.55Z", 550_000),
            ("2024-09-20T13:31:29.552Z", 552_000),
            ("2024-09-20T13:31:29.5528Z", 552_800),
            ("2024-09-20T13:31:29.55280Z", 552_800),
            ("2024-09-20T13:31:29.552807Z", 552_807),
            ("2024-09-20T13:31:29.5528070Z", 552_807),
            ("2024-09-20T13:31:29.55280700Z", 552_807),
            ("2024-09-20T13:31:29.552807000Z", 552_807),
            ("2024-09-20T15:31:29.552807000+02:00", 552_807),
            ("9999-12-31T23:59:59.999999000Z", Timestamp::MAX.micros() - base),
        ];
        for (text, micros) in cases {
            let ts = Timestamp::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(ts.micros() - base, micros, "{text}");
        }
        let nine = Timestamp::parse("2024-09-20T13:31:29.552807000Z").unwrap();
        assert_eq!(nine.to_string(), "2024-09-20T13:31:29.552807Z");
    }

    #[test]
    fn a_nonzero_digit_beyond_the_microsecond_is_refused_naming_the_text() {
        for text in [
            "2024-01-01T00:00:00.0000001Z",
            "2024-01-01T00:00:00.00000001Z",
            "2024-01-01T00:00:00.000000001Z",
            "2024-09-20T13:31:29.552807999+02:00",
        ] {
            let error = Timestamp::parse(text).unwrap_err();
            assert_eq!(error, TimeError::BeyondMicros(text.into()));
            assert_eq!(
                error.to_string(),
                alloc::format!("{text} has a nonzero digit beyond the microsecond; times have microsecond resolution")
            );
        }
        // A malformed text with such a digit is malformed first.
        for text in ["2024-01-01T00:00:00.0000001", "2024-13-01T00:00:00.0000001Z", "2024-01-01T00:00:00.0000001Zx"] {
            assert!(matches!(Timestamp::parse(text), Err(TimeError::Invalid(_))), "{text}");
        }
    }

    #[test]
    fn malformed_timestamps_are_refused() {
        for text in [
            "",
            "2024-09-20",
            "2024-09-20T13:31:29",
            "2024-09-20T13:31:29.1234567890Z",
            "2024-09-20T13:31:29.0000000000Z",
            "2024-13-20T13:31:29Z",
            "2023-02-29T00:00:00Z",
            "2024-09-20T24:00:00Z",
            "2024-09-20T13:31:29.Z",
            "2024-09-20T13:31:29Zjunk",
            "0000-01-01T00:00:00Z",
            "２０２４-09-20T13:31:29Z",
        ] {
            assert!(Timestamp::parse(text).is_err(), "{text}");
        }
    }

    #[test]
    fn dates_round_trip() {
        for (days, text) in
            [(19_986, "2024-09-20"), (0, "1970-01-01"), (-719_162, "0001-01-01"), (11_016, "2000-02-29")]
        {
            let date = Date::from_days(days).unwrap();
            assert_eq!(date.to_string(), text);
            assert_eq!(Date::parse(text).unwrap(), date);
        }
        assert!(Date::from_days(MAX_DAY + 1).is_err());
    }

    proptest::proptest! {
        #[test]
        fn any_timestamp_round_trips(micros in Timestamp::MIN.micros()..=Timestamp::MAX.micros()) {
            let ts = Timestamp::from_micros(micros).unwrap();
            proptest::prop_assert_eq!(Timestamp::parse(&ts.to_string()).unwrap(), ts);
        }
    }
}
