//! Text read as a date and time the way MySQL reads it (CAST, INSERT, loads): any punctuation
//! between the parts (`2012/12/31`, `2012^12^31 11+30+45`, `2012.12.31T10:11:12`), one- or
//! two-digit parts, two-digit years (70–99 are 19xx, 00–69 20xx), the digit-only forms
//! `YYYYMMDD`, `YYMMDD`, `YYYYMMDDHHMMSS` and `YYMMDDHHMMSS`, a fraction after the seconds, and
//! text after a complete date ignored. No valid date (`2012-02-30`, `0000-02-29`: MySQL's year 0
//! is not a leap year) is None. RFC 3339 text with a zone (`2024-01-01T10:00:00+08:00`) is
//! converted to UTC.

use arrow::array::{Array, ArrayRef, Date32Array, StringArray, TimestampMicrosecondArray};
use arrow::datatypes::{DataType, TimeUnit};
use chrono::{Datelike, NaiveDate, NaiveDateTime, NaiveTime};
use std::sync::Arc;

/// Days from 0001-01-01 (day 1 of the common era) to 1970-01-01, the epoch of Arrow's Date32.
pub const UNIX_EPOCH_DAYS_FROM_CE: i32 = 719_163;

/// `strings` read as DATE (`Date32`), DATETIME (`Timestamp(Microsecond)` without a zone) or
/// TIME (`Time64(Microsecond)`), with the rows whose text is none (NULL in the column); None for another target.
pub fn parse_column(strings: &StringArray, target: &DataType) -> Option<(ArrayRef, Vec<usize>)> {
    let mut failed = Vec::new();
    let mut read = |row: usize| {
        if strings.is_null(row) {
            return None;
        }
        let parsed = parse_datetime(strings.value(row));
        if parsed.is_none() {
            failed.push(row);
        }
        parsed
    };
    let rows = 0..strings.len();
    let out: ArrayRef = match target {
        DataType::Date32 => Arc::new(
            rows.map(|row| {
                read(row).map(|t| t.date().num_days_from_ce() - UNIX_EPOCH_DAYS_FROM_CE)
            })
            .collect::<Date32Array>(),
        ),
        DataType::Timestamp(TimeUnit::Microsecond, None) => Arc::new(
            rows.map(|row| read(row).map(|t| t.and_utc().timestamp_micros()))
                .collect::<TimestampMicrosecondArray>(),
        ),
        // TIME in MySQL's forms ('-12:30', '120:00:06', '5 00:00:06', ..), clipped to its range.
        DataType::Time64(TimeUnit::Microsecond) => Arc::new(
            rows.map(|row| {
                if strings.is_null(row) {
                    return None;
                }
                let parsed = crate::time_value::parse_text(strings.value(row));
                if parsed.is_none() {
                    failed.push(row);
                }
                parsed.map(|t| t.micros)
            })
            .collect::<arrow::array::Time64MicrosecondArray>(),
        ),
        _ => return None,
    };
    Some((out, failed))
}

/// A number read as MySQL reads a date: YYMMDD, YYYYMMDD, YYMMDDHHMMSS or YYYYMMDDHHMMSS
/// (two-digit years 70-99 are 19xx, 00-69 are 20xx); `None` when it names no valid date.
pub fn number_to_datetime(n: i64) -> Option<NaiveDateTime> {
    if n <= 0 || n >= 100_000_000_000_000 {
        return None;
    }
    let (date, time) = if n < 100_000_000 {
        (n, 0)
    } else {
        (n / 1_000_000, n % 1_000_000)
    };
    let mut year = date / 10_000;
    if date < 1_000_000 {
        year += if year < 70 { 2000 } else { 1900 };
    }
    let (month, day) = ((date / 100) % 100, date % 100);
    let (hour, minute, second) = (time / 10_000, (time / 100) % 100, time % 100);
    NaiveDate::from_ymd_opt(year as i32, month as u32, day as u32)?.and_hms_opt(
        hour as u32,
        minute as u32,
        second as u32,
    )
}

/// The date and time `text` names, or None.
pub fn parse_datetime(text: &str) -> Option<NaiveDateTime> {
    let s = text.trim();
    relaxed(s).or_else(|| {
        chrono::DateTime::parse_from_rfc3339(s)
            .ok()
            .map(|t| t.naive_utc())
    })
}

/// MySQL's relaxed forms.
fn relaxed(s: &str) -> Option<NaiveDateTime> {
    if !s.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let leading = s.bytes().take_while(u8::is_ascii_digit).count();
    let rest = &s[leading..];
    // Digits only (maybe with a fraction): the compact forms.
    if rest.is_empty() || (rest.starts_with('.') && leading >= 12) {
        return compact(&s[..leading], rest);
    }
    // Year, month, day, hour, minute, second (unread ones 0) and the digits of each.
    let mut parts = [0u32; 6];
    let mut widths = [0usize; 6];
    let mut n = 0;
    let mut fraction = 0u32;
    let mut pos = 0;
    let bytes = s.as_bytes();
    while n < 6 && pos < bytes.len() {
        let start = pos;
        while pos < bytes.len() && bytes[pos].is_ascii_digit() {
            pos += 1;
        }
        if pos == start || pos - start > 4 {
            break;
        }
        parts[n] = digits_value(&bytes[start..pos]);
        widths[n] = pos - start;
        n += 1;
        if pos >= bytes.len() {
            break;
        }
        // A fraction after the seconds.
        if n == 6 {
            break;
        }
        let separator = bytes[pos];
        if separator.is_ascii_alphanumeric() && !(separator == b'T' && n == 3) {
            break;
        }
        pos += 1;
        // One space (or T) between date and time; a run of them is one separator.
        while n == 3 && pos < bytes.len() && bytes[pos] == b' ' {
            pos += 1;
        }
    }
    if n == 6 && pos < bytes.len() && bytes[pos] == b'.' {
        let digits = s[pos + 1..].bytes().take_while(u8::is_ascii_digit).count();
        fraction = micros(&bytes[pos + 1..pos + 1 + digits]);
        pos += 1 + digits;
    }
    // A zone after the time is left to the RFC 3339 reading (which applies it).
    if n == 6 && is_zone(&s[pos..]) {
        return None;
    }
    if n < 3 {
        return None;
    }
    let year = full_year(parts[0], widths[0]);
    build(
        year, parts[1], parts[2], parts[3], parts[4], parts[5], fraction,
    )
}

/// The value of a run of at most 6 ASCII digits.
fn digits_value(digits: &[u8]) -> u32 {
    digits.iter().fold(0, |v, d| v * 10 + u32::from(d - b'0'))
}

/// A fraction's digits as microseconds (digits past the sixth dropped).
fn micros(digits: &[u8]) -> u32 {
    let kept = &digits[..digits.len().min(6)];
    digits_value(kept) * 10u32.pow(6 - kept.len() as u32)
}

/// `Z`, `+08:00`, `-0530`: a zone designator.
fn is_zone(rest: &str) -> bool {
    let rest = rest.trim();
    rest.eq_ignore_ascii_case("z")
        || rest.len() > 1
            && rest.starts_with(['+', '-'])
            && rest[1..].bytes().all(|b| b.is_ascii_digit() || b == b':')
}

/// `YYYYMMDD[HHMMSS]` or `YYMMDD[HHMMSS]`, with `rest` an optional `.fraction`.
fn compact(digits: &str, rest: &str) -> Option<NaiveDateTime> {
    let num = |a: usize, b: usize| digits.get(a..b)?.parse::<u32>().ok();
    let (year, at) = match digits.len() {
        8 | 14 => (num(0, 4)?, 4),
        6 | 12 => (full_year(num(0, 2)?, 2), 2),
        _ => return None,
    };
    let (month, day) = (num(at, at + 2)?, num(at + 2, at + 4)?);
    let (h, m, sec) = if digits.len() > 8 {
        (
            num(at + 4, at + 6)?,
            num(at + 6, at + 8)?,
            num(at + 8, at + 10)?,
        )
    } else {
        (0, 0, 0)
    };
    let fraction = match rest.strip_prefix('.') {
        Some(f) if f.bytes().all(|b| b.is_ascii_digit()) => micros(f.as_bytes()),
        Some(_) => return None,
        None => 0,
    };
    build(year, month, day, h, m, sec, fraction)
}

/// A two-digit year as MySQL reads it: 70–99 are 1970–1999, 00–69 are 2000–2069.
fn full_year(year: u32, width: usize) -> u32 {
    match (width, year) {
        (2, y) if y < 70 => 2000 + y,
        (2, y) => 1900 + y,
        (_, y) => y,
    }
}

fn build(
    year: u32,
    month: u32,
    day: u32,
    hour: u32,
    minute: u32,
    second: u32,
    micros: u32,
) -> Option<NaiveDateTime> {
    // MySQL's year 0 is not a leap year (chrono's proleptic year 0 is).
    if year == 0 && month == 2 && day == 29 {
        return None;
    }
    let date = NaiveDate::from_ymd_opt(i32::try_from(year).ok()?, month, day)?;
    let time = NaiveTime::from_hms_micro_opt(hour, minute, second, micros)?;
    (date.year() <= 9999).then(|| date.and_time(time))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(s: &str) -> Option<String> {
        parse_datetime(s).map(|t| t.format("%Y-%m-%d %H:%M:%S%.f").to_string())
    }

    #[test]
    fn mysql_relaxed_forms() {
        // Each answer as MariaDB gives it for CAST(s AS DATETIME(6)).
        let cases = [
            ("2012/12/31", Some("2012-12-31 00:00:00")),
            ("2024.12.12", Some("2024-12-12 00:00:00")),
            ("24.12.12", Some("2024-12-12 00:00:00")),
            ("2012^12^31 11+30+45", Some("2012-12-31 11:30:45")),
            ("2012-12-31abc", Some("2012-12-31 00:00:00")),
            ("1-2-3", Some("0001-02-03 00:00:00")),
            ("2012-12-31 1:2:3.5", Some("2012-12-31 01:02:03.500")),
            ("2012-12-31T10:11:12", Some("2012-12-31 10:11:12")),
            ("121231", Some("2012-12-31 00:00:00")),
            ("20121231101112", Some("2012-12-31 10:11:12")),
            ("2012-13-01", None),
            ("2012-02-30", None),
            ("0000-02-29", None),
            ("00000229", None),
            ("2000-02-29", Some("2000-02-29 00:00:00")),
            (" 2012-12-31 ", Some("2012-12-31 00:00:00")),
            ("2012-12", None),
            ("2012-12-31 25:00:00", None),
            ("0.0101031417", None),
            ("99-1-1", Some("1999-01-01 00:00:00")),
            ("69-1-1", Some("2069-01-01 00:00:00")),
            ("2012-12-31 10", Some("2012-12-31 10:00:00")),
            ("2012-12-31 10:11", Some("2012-12-31 10:11:00")),
            ("1212", None),
            ("2012/12/31/10/11/12", Some("2012-12-31 10:11:12")),
            (
                "2024-01-01 00:00:00.1234567",
                Some("2024-01-01 00:00:00.123456"),
            ),
            ("2024-01-01T10:00:00+08:00", Some("2024-01-01 02:00:00")),
            ("2024-01-01 10:00:00Z", Some("2024-01-01 10:00:00")),
            ("abc", None),
            ("", None),
        ];
        for (text, want) in cases {
            assert_eq!(show(text).as_deref(), want, "{text:?}");
        }
    }
}
