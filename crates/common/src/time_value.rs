//! MySQL's TIME value: a signed span of microseconds between -838:59:59 and 838:59:59 (Doris's
//! range too), carried in Arrow's `Time64(Microsecond)` (any i64, so DataFusion compares, sorts
//! and aggregates it as the signed number it is). Here: reading text (`'-12:30'`, `'120:00:06'`,
//! `'5 00:00:06'`, `'123456'`, a DATETIME's time part) and numbers (`[-]HHMMSS[.ffffff]`) as
//! MySQL's `str_to_time` / `number_to_time` read them, clipping to the range, rounding, and the
//! text MySQL writes (`-838:59:59`, `120:00:06.051000`).

/// MySQL's largest TIME, 838:59:59, in microseconds (the smallest is its negation).
pub const MAX_TIME_MICROS: i64 = (838 * 3600 + 59 * 60 + 59) * 1_000_000;

/// A TIME read from text or a number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeReading {
    /// The value, within ±838:59:59.
    pub micros: i64,
    /// The value spelled was outside the range and was clipped to its end (MySQL's warning
    /// 1292 "Truncated incorrect time value"; an error in a strict INSERT).
    pub clipped: bool,
    /// Characters followed the time (or fraction digits past six), which were ignored.
    pub trailing: bool,
    /// The value spelled, before clipping (a span ADDTIME adds may pass the range).
    pub span: i128,
}

/// A span clipped to ±838:59:59, and whether it had to be.
pub fn clip(micros: i128) -> (i64, bool) {
    let max = i128::from(MAX_TIME_MICROS);
    let clipped = micros.clamp(-max, max);
    (clipped as i64, clipped != micros)
}

/// A TIME built from its sign and parts (minutes and seconds must be below 60), clipped.
pub fn from_parts(
    negative: bool,
    hours: u64,
    minutes: u64,
    seconds: u64,
    micros: u64,
) -> Option<TimeReading> {
    if minutes > 59 || seconds > 59 || micros > 999_999 {
        return None;
    }
    let magnitude = ((i128::from(hours) * 60 + i128::from(minutes)) * 60 + i128::from(seconds))
        * 1_000_000
        + i128::from(micros);
    let span = if negative { -magnitude } else { magnitude };
    let (value, clipped) = clip(span);
    // A clipped value drops its fraction: 900:00:00.5 is 838:59:59.
    Some(TimeReading {
        micros: value,
        clipped,
        trailing: false,
        span,
    })
}

/// A number as a span of time to add (ADDTIME's second argument): `[-]H..HMMSS[.ffffff]` with
/// any number of hours (`8395959` is 839:59:59, not clipped); None for minutes or seconds past
/// 59.
pub fn span_of_number(v: f64) -> Option<i128> {
    if !v.is_finite() || v.abs() >= 1e18 {
        return None;
    }
    let magnitude = v.abs();
    let mut whole = magnitude.trunc() as u64;
    let mut micros = ((magnitude - magnitude.trunc()) * 1e6).round() as u64;
    if micros >= 1_000_000 {
        whole += 1;
        micros = 0;
    }
    let (hours, minutes, seconds) = (whole / 10_000, whole / 100 % 100, whole % 100);
    if minutes > 59 || seconds > 59 {
        return None;
    }
    let span = ((i128::from(hours) * 60 + i128::from(minutes)) * 60 + i128::from(seconds))
        * 1_000_000
        + i128::from(micros);
    Some(if v < 0.0 { -span } else { span })
}

/// `[-]HHMMSS[.ffffff]` (MySQL's number-to-TIME): `123456` is 12:34:56, `56` is 00:00:56;
/// twelve or more digits are a `YYYYMMDDHHMMSS` DATETIME, whose time part is taken.
pub fn from_number(v: f64) -> Option<TimeReading> {
    if !v.is_finite() {
        return None;
    }
    let negative = v < 0.0;
    let v = v.abs();
    let whole = v.trunc();
    if whole >= 1e14 {
        // No DATETIME's digits either: beyond the range, clipped to its end.
        let span = if negative {
            -(1i128 << 100)
        } else {
            1i128 << 100
        };
        return Some(TimeReading {
            micros: clip(span).0,
            clipped: true,
            trailing: false,
            span,
        });
    }
    let whole = whole as u64;
    let micros = ((v - v.trunc()) * 1e6).round() as u64;
    let (whole, micros) = if micros >= 1_000_000 {
        (whole + 1, 0)
    } else {
        (whole, micros)
    };
    // Past the largest TIME (838:59:59), digits that name a date or a DATETIME (20240105,
    // 20240105101112) give its time of day.
    if !negative && whole > 8_385_959 {
        if let Some(at) = i64::try_from(whole)
            .ok()
            .and_then(crate::datetime_text::number_to_datetime)
        {
            let seconds = u64::from(chrono::Timelike::num_seconds_from_midnight(&at));
            return from_parts(
                false,
                seconds / 3600,
                seconds / 60 % 60,
                seconds % 60,
                micros,
            );
        }
    }
    if whole >= 10_000_000_000 {
        // A DATETIME as digits: its time of day.
        let clock = whole % 1_000_000;
        return from_parts(
            false,
            clock / 10_000,
            clock / 100 % 100,
            clock % 100,
            micros,
        );
    }
    from_parts(
        negative,
        whole / 10_000,
        whole / 100 % 100,
        whole % 100,
        micros,
    )
}

/// Text as MySQL's `TIME('..')` / `CAST(.. AS TIME)` reads it: `[-][D ]H[:MM[:SS]][.ffffff]`
/// (hours of any length, `D` days of 24 hours), `[-]HHMMSS[.ffffff]` digits, or a DATETIME
/// (`2024-01-05 10:11:12.5`, `20240105101112`) whose time part is taken. None for no time or
/// minutes/seconds past 59.
pub fn parse_text(text: &str) -> Option<TimeReading> {
    let s = text.trim_matches(|c: char| c.is_ascii_whitespace());
    if let Some(time_of_datetime) = datetime_time_part(s) {
        return Some(time_of_datetime);
    }
    // A sign may be followed by spaces (`'- 01:00:00'`).
    let (negative, s) = match s.strip_prefix('-') {
        Some(rest) => (true, rest.trim_start_matches(' ')),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let mut scan = Scanner { s, at: 0 };
    let first = scan.number()?;
    let (days, first) = if scan.peek() == Some(b' ') && scan.digit_at(scan.at + 1) {
        scan.at += 1;
        (first, scan.number()?)
    } else {
        (0, first)
    };
    let (hours, minutes, seconds) = if scan.peek() == Some(b':') {
        scan.at += 1;
        let minutes = match scan.number() {
            Some(m) => m,
            None if days > 0 || scan.at < s.len() || s.ends_with(':') => 0,
            None => return None,
        };
        let seconds = if scan.peek() == Some(b':') {
            scan.at += 1;
            scan.number().unwrap_or(0)
        } else {
            0
        };
        (first, minutes, seconds)
    } else if days > 0 || s[..scan.at].contains(' ') {
        // `D H`: hours only.
        (first, 0, 0)
    } else {
        // Digits: HHMMSS from the right.
        let digits = &s[..scan.at];
        if digits.len() >= 12 {
            let clock = first % 1_000_000;
            (clock / 10_000, clock / 100 % 100, clock % 100)
        } else {
            (first / 10_000, first / 100 % 100, first % 100)
        }
    };
    let (micros, trailing_digits) = if scan.peek() == Some(b'.') {
        scan.at += 1;
        scan.fraction()
    } else {
        (0, false)
    };
    let trailing = trailing_digits || scan.at < s.len();
    let hours = days.checked_mul(24)?.checked_add(hours)?;
    let mut reading = from_parts(negative, hours, minutes, seconds, micros)?;
    reading.trailing = trailing;
    Some(reading)
}

/// The time part of a `YYYY-MM-DD hh:mm:ss[.f]` DATETIME text (MySQL reads one as a TIME).
fn datetime_time_part(s: &str) -> Option<TimeReading> {
    let (date, clock) = s.split_once([' ', 'T'])?;
    let mut parts = date.split('-');
    let all_digits = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
    let (y, m, d) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() || ![y, m, d].iter().all(|p| all_digits(p)) {
        return None;
    }
    let reading = parse_text(clock)?;
    (reading.micros >= 0 && reading.micros < 86_400_000_000).then_some(reading)
}

/// A cursor over ASCII digits.
struct Scanner<'a> {
    s: &'a str,
    at: usize,
}

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.as_bytes().get(self.at).copied()
    }

    fn digit_at(&self, i: usize) -> bool {
        self.s.as_bytes().get(i).is_some_and(u8::is_ascii_digit)
    }

    /// The digits at the cursor as a number (None when there are none or too many).
    fn number(&mut self) -> Option<u64> {
        let start = self.at;
        while self.digit_at(self.at) {
            self.at += 1;
        }
        if self.at == start {
            return None;
        }
        let digits = &self.s[start..self.at];
        if digits.len() > 18 {
            return None;
        }
        digits.parse().ok()
    }

    /// Fraction digits as microseconds (past six truncated, as MariaDB), and whether any
    /// digits were dropped.
    fn fraction(&mut self) -> (u64, bool) {
        let start = self.at;
        while self.digit_at(self.at) {
            self.at += 1;
        }
        let digits = &self.s[start..self.at];
        let kept = &digits[..digits.len().min(6)];
        let micros = format!("{kept:0<6}").parse().unwrap_or(0);
        (micros, digits.len() > 6)
    }
}

/// A TIME rounded half away from zero to `scale` fractional digits; None when that takes it
/// past ±838:59:59.
pub fn round(micros: i64, scale: u8) -> Option<i64> {
    if scale >= 6 {
        return (micros.abs() <= MAX_TIME_MICROS).then_some(micros);
    }
    let unit = 10i64.pow(6 - u32::from(scale));
    let magnitude = micros.unsigned_abs() as i64;
    let down = magnitude - magnitude % unit;
    let rounded = if (magnitude % unit) * 2 >= unit {
        down + unit
    } else {
        down
    };
    (rounded <= MAX_TIME_MICROS).then_some(if micros < 0 { -rounded } else { rounded })
}

/// MySQL's text of a TIME: `[-]HH:MM:SS`, hours of two or more digits, then `digits`
/// fractional digits when given (more only where cutting would lose a digit that is not zero),
/// else six when the fraction is not zero.
pub fn format(micros: i64, digits: Option<u8>) -> String {
    let sign = if micros < 0 { "-" } else { "" };
    let m = micros.unsigned_abs();
    let (seconds, fraction) = (m / 1_000_000, m % 1_000_000);
    let mut text = format!(
        "{sign}{:02}:{:02}:{:02}",
        seconds / 3600,
        seconds / 60 % 60,
        seconds % 60
    );
    let all = format!("{fraction:06}");
    let significant = all.trim_end_matches('0').len();
    let shown = match digits {
        Some(d) => significant.max(usize::from(d.min(6))),
        None if fraction != 0 => 6,
        None => 0,
    };
    if shown > 0 {
        text.push('.');
        text.push_str(&all[..shown]);
    }
    text
}

/// A TIME as MySQL's number `[-]HHMMSS` (the fraction dropped).
pub fn as_hhmmss(micros: i64) -> i64 {
    let seconds = micros.unsigned_abs() / 1_000_000;
    let number = (seconds / 3600 * 10_000 + seconds / 60 % 60 * 100 + seconds % 60) as i64;
    if micros < 0 {
        -number
    } else {
        number
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(text: &str) -> Option<String> {
        parse_text(text).map(|r| format(r.micros, None))
    }

    #[test]
    fn text_as_mysql_reads_it() {
        assert_eq!(t("12:30").as_deref(), Some("12:30:00"));
        assert_eq!(t("-12:30").as_deref(), Some("-12:30:00"));
        assert_eq!(t("- 1 01:00:00").as_deref(), Some("-25:00:00"));
        assert_eq!(t("-00:30").as_deref(), Some("-00:30:00"));
        assert_eq!(t("-23:12:59.05100").as_deref(), Some("-23:12:59.051000"));
        assert_eq!(t("120:00:06").as_deref(), Some("120:00:06"));
        assert_eq!(t("5 00:00:06").as_deref(), Some("120:00:06"));
        assert_eq!(t("5 12").as_deref(), Some("132:00:00"));
        assert_eq!(t("5 12:30").as_deref(), Some("132:30:00"));
        assert_eq!(t("123456").as_deref(), Some("12:34:56"));
        assert_eq!(t("1234").as_deref(), Some("00:12:34"));
        assert_eq!(t("-123456").as_deref(), Some("-12:34:56"));
        assert_eq!(t("12:3").as_deref(), Some("12:03:00"));
        assert_eq!(t("1:2:3").as_deref(), Some("01:02:03"));
        assert_eq!(t("10.5").as_deref(), Some("00:00:10.500000"));
        assert_eq!(
            t("2020-01-01 10:11:12.5").as_deref(),
            Some("10:11:12.500000")
        );
        assert_eq!(t("20200101101112").as_deref(), Some("10:11:12"));
        assert_eq!(t("10:11:12.1234567").as_deref(), Some("10:11:12.123456"));
        assert_eq!(t("10:60:00"), None);
        assert_eq!(t("abc"), None);
        assert_eq!(t(""), None);
        assert_eq!(t("-"), None);
        assert_eq!(t(":56"), None);
        assert_eq!(t("61"), None);
        assert_eq!(t("1234567"), None);
        let clipped = parse_text("-900:00:00.5").unwrap();
        assert_eq!((clipped.micros, clipped.clipped), (-MAX_TIME_MICROS, true));
        assert!(parse_text("35 00:00:00").unwrap().clipped);
        assert!(parse_text("12:30:00x").unwrap().trailing);
    }

    #[test]
    fn numbers_as_mysql_reads_them() {
        let n = |v: f64| from_number(v).map(|r| format(r.micros, None));
        assert_eq!(n(123456.0).as_deref(), Some("12:34:56"));
        assert_eq!(n(-123456.5).as_deref(), Some("-12:34:56.500000"));
        assert_eq!(n(56.0).as_deref(), Some("00:00:56"));
        assert_eq!(n(61.0), None);
        assert_eq!(n(1234567.0), None);
        assert_eq!(n(8390000.0).as_deref(), Some("838:59:59"));
        assert_eq!(n(-9.3e18).as_deref(), Some("-838:59:59"));
    }

    #[test]
    fn rounding_and_text() {
        assert_eq!(round(-500_000, 0), Some(-1_000_000));
        assert_eq!(round(1_499_999, 0), Some(1_000_000));
        assert_eq!(round(MAX_TIME_MICROS + 600_000, 0), None);
        assert_eq!(format(-MAX_TIME_MICROS, None), "-838:59:59");
        assert_eq!(format(432_006_051_000, Some(6)), "120:00:06.051000");
        assert_eq!(format(1_500_000, Some(0)), "00:00:01.5");
        assert_eq!(format(1_000_000, Some(2)), "00:00:01.00");
        assert_eq!(as_hhmmss(-45_296_000_000), -123456);
    }
}
