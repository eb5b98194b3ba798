//! MySQL's `DATE_FORMAT(t, format)` and `STR_TO_DATE(text, format)` with MySQL's format
//! specifiers (`%Y-%m-%d %H:%i:%s`, `%W %M %D`, ...), which differ from the strftime ones
//! DataFusion's `date_format`/`to_char` reads (`%i` is minutes, `%M` the month's name, `%s`
//! seconds). STR_TO_DATE gives a DATE when the format has no time part and a DATETIME otherwise
//! (as MySQL); text that does not match is NULL. Doris's Java-style names of its common formats
//! (`yyyy-MM-dd HH:mm:ss`, `yyyy-MM-dd`, `yyyyMMdd`, `yyyy-MM`, `yyyyMM`, `yyyy`, exactly) stand
//! for their MySQL formats in both functions, and so in FROM_UNIXTIME and UNIX_TIMESTAMP too.

use crate::util::{arguments, expect_args, output};
use chrono::{Datelike, NaiveDate, NaiveDateTime, NaiveTime, Timelike};
use datafusion::arrow::array::{Array, ArrayRef, AsArray, StringBuilder};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field, FieldRef, TimeUnit};
use datafusion::common::{plan_err, Result, ScalarValue};
use datafusion::logical_expr::{
    ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
    Volatility,
};
use std::fmt::Write;
use std::sync::Arc;

#[derive(Debug, PartialEq, Eq, Hash)]
struct DateFormat {
    signature: Signature,
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct StrToDate {
    signature: Signature,
}

pub fn functions() -> Vec<ScalarUDF> {
    vec![
        ScalarUDF::new_from_impl(DateFormat {
            signature: Signature::user_defined(Volatility::Immutable),
        }),
        ScalarUDF::new_from_impl(StrToDate {
            signature: Signature::user_defined(Volatility::Immutable),
        }),
    ]
}

const MICROS: DataType = DataType::Timestamp(TimeUnit::Microsecond, None);

impl ScalarUDFImpl for DateFormat {
    fn name(&self) -> &str {
        "date_format"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        expect_args("date_format", types, 2, 2)?;
        let time = match &types[0] {
            DataType::Date32 | DataType::Date64 => DataType::Date32,
            DataType::Null => DataType::Date32,
            t if t.is_nested() => return plan_err!("date_format does not take {t}"),
            // A number is a date's digits, YYYYMMDD[hhmmss] (MySQL), not a count of seconds;
            // a DECIMAL's or DOUBLE's fraction is the second's (read as a DATETIME).
            t if t.is_integer() => DataType::Int64,
            _ => MICROS,
        };
        Ok(vec![time, DataType::Utf8])
    }

    fn return_type(&self, _types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Utf8)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let (arrays, scalar) = arguments(&args)?;
        let times = match arrays[0].data_type() {
            DataType::Int64 => Arc::new(
                arrays[0]
                    .as_primitive::<datafusion::arrow::datatypes::Int64Type>()
                    .iter()
                    .map(|n| {
                        n.and_then(basalt_common::datetime_text::number_to_datetime)
                            .map(|d| d.and_utc().timestamp_micros())
                    })
                    .collect::<datafusion::arrow::array::TimestampMicrosecondArray>(),
            ),
            _ => cast(&arrays[0], &MICROS)?,
        };
        let times = times.as_primitive::<datafusion::arrow::datatypes::TimestampMicrosecondType>();
        let formats = cast(&arrays[1], &DataType::Utf8)?;
        let formats = formats.as_string::<i32>();
        let mut out = StringBuilder::new();
        let mut text = String::new();
        for row in 0..times.len() {
            let dt = times
                .is_valid(row)
                .then(|| chrono::DateTime::from_timestamp_micros(times.value(row)))
                .flatten()
                .map(|t| t.naive_utc());
            match (dt, formats.is_valid(row)) {
                (Some(dt), true) => {
                    text.clear();
                    format_time(&dt, formats.value(row), &mut text);
                    out.append_value(&text);
                }
                _ => out.append_null(),
            }
        }
        output(Arc::new(out.finish()), scalar)
    }
}

/// The MySQL format a Doris format name stands for (any other format is itself).
fn mysql_format(format: &str) -> &str {
    match format {
        "yyyy-MM-dd HH:mm:ss" => "%Y-%m-%d %H:%i:%s",
        "yyyy-MM-dd" => "%Y-%m-%d",
        "yyyyMMdd" => "%Y%m%d",
        "yyyy-MM" => "%Y-%m",
        "yyyyMM" => "%Y%m",
        "yyyy" => "%Y",
        other => other,
    }
}

/// Writes `dt` as MySQL's DATE_FORMAT writes it with `format`.
pub fn format_time(dt: &NaiveDateTime, format: &str, out: &mut String) {
    let mut chars = mysql_format(format).chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let Some(spec) = chars.next() else { break };
        let hour12 = match dt.hour() % 12 {
            0 => 12,
            h => h,
        };
        let _ = match spec {
            'a' => write!(out, "{}", dt.format("%a")),
            'b' => write!(out, "{}", dt.format("%b")),
            'c' => write!(out, "{}", dt.month()),
            'D' => write!(out, "{}{}", dt.day(), ordinal_suffix(dt.day())),
            'd' => write!(out, "{:02}", dt.day()),
            'e' => write!(out, "{}", dt.day()),
            'f' => write!(out, "{:06}", dt.nanosecond() / 1000 % 1_000_000),
            'H' => write!(out, "{:02}", dt.hour()),
            'h' | 'I' => write!(out, "{hour12:02}"),
            'i' => write!(out, "{:02}", dt.minute()),
            'j' => write!(out, "{:03}", dt.ordinal()),
            'k' => write!(out, "{}", dt.hour()),
            'l' => write!(out, "{hour12}"),
            'M' => write!(out, "{}", dt.format("%B")),
            'm' => write!(out, "{:02}", dt.month()),
            'p' => write!(out, "{}", if dt.hour() < 12 { "AM" } else { "PM" }),
            'r' => write!(
                out,
                "{hour12:02}:{:02}:{:02} {}",
                dt.minute(),
                dt.second(),
                if dt.hour() < 12 { "AM" } else { "PM" }
            ),
            'S' | 's' => write!(out, "{:02}", dt.second()),
            'T' => write!(
                out,
                "{:02}:{:02}:{:02}",
                dt.hour(),
                dt.minute(),
                dt.second()
            ),
            'U' => write!(out, "{:02}", week(dt.date(), false).1),
            'u' => write!(out, "{:02}", monday_week(dt.date())),
            'V' => write!(out, "{:02}", week(dt.date(), true).1),
            'v' => write!(out, "{:02}", dt.iso_week().week()),
            'W' => write!(out, "{}", dt.format("%A")),
            'w' => write!(out, "{}", dt.weekday().num_days_from_sunday()),
            'X' => write!(out, "{:04}", week(dt.date(), true).0),
            'x' => write!(out, "{:04}", dt.iso_week().year()),
            'Y' => write!(out, "{:04}", dt.year()),
            'y' => write!(out, "{:02}", dt.year().rem_euclid(100)),
            other => write!(out, "{other}"),
        };
    }
}

fn ordinal_suffix(day: u32) -> &'static str {
    match (day % 10, day % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    }
}

/// (year, week) of MySQL's Sunday-first week modes used by DATE_FORMAT: week 1 starts on the
/// year's first Sunday; days before it are week 0 (%U) or, with `previous_year`, the last week of
/// the year before (%V with %X).
fn week(date: NaiveDate, previous_year: bool) -> (i32, u32) {
    let first_day_of_week = |year: i32| {
        let jan1 = NaiveDate::from_ymd_opt(year, 1, 1).unwrap_or(date);
        jan1 + chrono::Days::new(u64::from((7 - jan1.weekday().num_days_from_sunday()) % 7))
    };
    let start = first_day_of_week(date.year());
    if date >= start {
        return (date.year(), (date - start).num_days() as u32 / 7 + 1);
    }
    if previous_year {
        let previous = first_day_of_week(date.year() - 1);
        (date.year() - 1, (date - previous).num_days() as u32 / 7 + 1)
    } else {
        (date.year(), 0)
    }
}

/// MySQL's week mode 1 (%u): Monday-first weeks, week 1 the first with four days in the year
/// (ISO's week 1), the days before it week 0, and late December's days still in this year.
fn monday_week(date: NaiveDate) -> u32 {
    let jan4 = NaiveDate::from_ymd_opt(date.year(), 1, 4).unwrap_or(date);
    let week1 = jan4 - chrono::Days::new(u64::from(jan4.weekday().num_days_from_monday()));
    if date < week1 {
        0
    } else {
        (date - week1).num_days() as u32 / 7 + 1
    }
}

impl ScalarUDFImpl for StrToDate {
    fn name(&self) -> &str {
        "str_to_date"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        expect_args("str_to_date", types, 2, 2)?;
        Ok(vec![DataType::Utf8, DataType::Utf8])
    }

    fn return_type(&self, _types: &[DataType]) -> Result<DataType> {
        Ok(MICROS)
    }

    /// A literal format without a time of day gives a DATE; with one, a DATETIME shown with
    /// six fraction digits when the format reads them (`%f`), else none (MySQL's types).
    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let format = match args.scalar_arguments.get(1) {
            Some(Some(ScalarValue::Utf8(Some(f)) | ScalarValue::Utf8View(Some(f)))) => Some(f),
            _ => None,
        };
        Ok(Arc::new(match format {
            Some(f) if !has_time_part(f) => Field::new(self.name(), DataType::Date32, true),
            Some(f) => {
                let digits = if specifiers(f).any(|s| s == 'f') {
                    6
                } else {
                    0
                };
                Field::new(self.name(), MICROS, true).with_metadata(
                    std::collections::HashMap::from([(
                        basalt_common::types::FRACTION_DIGITS_KEY.to_string(),
                        digits.to_string(),
                    )]),
                )
            }
            None => Field::new(self.name(), MICROS, true),
        }))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let date_only = args.return_field.data_type() == &DataType::Date32;
        let (arrays, scalar) = arguments(&args)?;
        let texts = cast(&arrays[0], &DataType::Utf8)?;
        let texts = texts.as_string::<i32>();
        let formats = cast(&arrays[1], &DataType::Utf8)?;
        let formats = formats.as_string::<i32>();
        let micros: Vec<Option<i64>> = (0..texts.len())
            .map(|row| {
                if texts.is_null(row) || formats.is_null(row) {
                    return None;
                }
                parse_time(texts.value(row).trim(), formats.value(row))
                    .map(|dt| dt.and_utc().timestamp_micros())
            })
            .collect();
        let array: ArrayRef = Arc::new(datafusion::arrow::array::TimestampMicrosecondArray::from(
            micros,
        ));
        let array = if date_only {
            cast(&array, &DataType::Date32)?
        } else {
            array
        };
        output(array, scalar)
    }
}

/// True when a MySQL format reads or writes a time of day.
fn has_time_part(format: &str) -> bool {
    specifiers(format).any(|spec| "fHhIiklprSsT".contains(spec))
}

/// The specifier letters of a MySQL format (`%Y-%m` gives `Y`, `m`; `%%` gives `%`).
fn specifiers(format: &str) -> impl Iterator<Item = char> + '_ {
    let mut chars = mysql_format(format).chars();
    std::iter::from_fn(move || loop {
        if chars.next()? == '%' {
            return chars.next();
        }
    })
}

/// Parses `text` by a MySQL format: each specifier reads its field, other characters must
/// match; once the text is used up, the rest of the format is not read (MySQL's
/// `STR_TO_DATE('2017-12-31 23:59:59', '%Y-%m-%d %H:%i:%s.%f')` has no fraction). Missing
/// date parts are 0 in MySQL; here a date needs year, month and day (a zero date is NULL).
fn parse_time(text: &str, format: &str) -> Option<NaiveDateTime> {
    let mut p = Fields::default();
    let t = text.as_bytes();
    let mut i = 0;
    let mut chars = mysql_format(format).chars().peekable();
    while let Some(c) = chars.next() {
        if i >= t.len() {
            break;
        }
        if c != '%' {
            if c.is_whitespace() {
                while i < t.len() && t[i].is_ascii_whitespace() {
                    i += 1;
                }
                continue;
            }
            let mut buf = [0u8; 4];
            let expected = c.encode_utf8(&mut buf).as_bytes();
            if !t[i..].starts_with(expected) {
                return None;
            }
            i += expected.len();
            continue;
        }
        let spec = chars.next()?;
        match spec {
            'Y' => p.year = Some(number(t, &mut i, 4)? as i32),
            'y' => {
                let y = number(t, &mut i, 2)? as i32;
                p.year = Some(if y < 70 { 2000 + y } else { 1900 + y });
            }
            'm' | 'c' => p.month = Some(number(t, &mut i, 2)?),
            'd' | 'e' => p.day = Some(number(t, &mut i, 2)?),
            'H' | 'k' => p.hour = Some(number(t, &mut i, 2)?),
            'h' | 'I' | 'l' => p.hour12 = Some(number(t, &mut i, 2)?),
            'i' => p.minute = Some(number(t, &mut i, 2)?),
            'S' | 's' => p.second = Some(number(t, &mut i, 2)?),
            'f' => {
                let start = i;
                let value = number(t, &mut i, 6)?;
                p.micros = Some(value * 10u32.pow(6 - (i - start) as u32));
            }
            'j' => p.day_of_year = Some(number(t, &mut i, 3)?),
            'p' => {
                let word = text.get(i..i + 2)?.to_ascii_uppercase();
                p.pm = Some(match word.as_str() {
                    "AM" => false,
                    "PM" => true,
                    _ => return None,
                });
                i += 2;
            }
            'T' => {
                p.hour = Some(number(t, &mut i, 2)?);
                expect(t, &mut i, b':')?;
                p.minute = Some(number(t, &mut i, 2)?);
                expect(t, &mut i, b':')?;
                p.second = Some(number(t, &mut i, 2)?);
            }
            'M' | 'b' => {
                let (month, len) = month_name(&text[i..], spec == 'b')?;
                p.month = Some(month);
                i += len;
            }
            'W' | 'a' => {
                // The weekday name is read and not checked against the date.
                while i < t.len() && t[i].is_ascii_alphabetic() {
                    i += 1;
                }
            }
            '%' => expect(t, &mut i, b'%')?,
            _ => return None,
        }
    }
    p.build()
}

/// Up to `max_digits` digits at `t[*i]`, as a number.
fn number(t: &[u8], i: &mut usize, max_digits: usize) -> Option<u32> {
    let start = *i;
    while *i < t.len() && *i - start < max_digits && t[*i].is_ascii_digit() {
        *i += 1;
    }
    std::str::from_utf8(&t[start..*i]).ok()?.parse().ok()
}

fn expect(t: &[u8], i: &mut usize, c: u8) -> Option<()> {
    (t.get(*i) == Some(&c)).then(|| *i += 1)
}

/// The month named at the start of `text` (full name, or its three-letter abbreviation).
fn month_name(text: &str, short: bool) -> Option<(u32, usize)> {
    const NAMES: [&str; 12] = [
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ];
    let lower = text.to_ascii_lowercase();
    NAMES.iter().enumerate().find_map(|(n, name)| {
        let len = if short { 3 } else { name.len() };
        lower
            .starts_with(&name[..len])
            .then_some((n as u32 + 1, len))
    })
}

#[derive(Default)]
struct Fields {
    year: Option<i32>,
    month: Option<u32>,
    day: Option<u32>,
    day_of_year: Option<u32>,
    hour: Option<u32>,
    hour12: Option<u32>,
    pm: Option<bool>,
    minute: Option<u32>,
    second: Option<u32>,
    micros: Option<u32>,
}

impl Fields {
    fn build(&self) -> Option<NaiveDateTime> {
        let year = self.year?;
        let date = match (self.day_of_year, self.month, self.day) {
            (Some(doy), _, _) => NaiveDate::from_yo_opt(year, doy)?,
            (None, Some(m), Some(d)) => NaiveDate::from_ymd_opt(year, m, d)?,
            _ => return None,
        };
        let hour = match (self.hour12, self.pm) {
            (Some(h), pm) if (1..=12).contains(&h) => {
                h % 12 + if pm == Some(true) { 12 } else { 0 }
            }
            (Some(_), _) => return None,
            (None, _) => self.hour.unwrap_or(0),
        };
        let time = NaiveTime::from_hms_micro_opt(
            hour,
            self.minute.unwrap_or(0),
            self.second.unwrap_or(0),
            self.micros.unwrap_or(0),
        )?;
        if !(1..=9999).contains(&year) {
            return None;
        }
        Some(date.and_time(time))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> NaiveDateTime {
        NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S%.f").unwrap()
    }

    fn formatted(dt: &str, format: &str) -> String {
        let mut out = String::new();
        format_time(&at(dt), format, &mut out);
        out
    }

    #[test]
    fn formats_like_mysql() {
        // Expected values from MariaDB 10.11's DATE_FORMAT.
        assert_eq!(
            formatted("2024-01-02 03:04:05", "%Y-%m-%d %H:%i:%s"),
            "2024-01-02 03:04:05"
        );
        assert_eq!(
            formatted(
                "2024-01-02 13:04:05",
                "%W %M %e %D %y %l %p %T %r %j %a %b %c %k %f"
            ),
            "Tuesday January 2 2nd 24 1 PM 13:04:05 01:04:05 PM 002 Tue Jan 1 13 000000"
        );
        assert_eq!(
            formatted("2024-03-13 00:00:00.5", "%D %h %f %%"),
            "13th 12 500000 %"
        );
        for (day, expected) in [
            ("2022-01-01", "00 00 52 52 2021 2021"),
            ("2021-12-31", "52 52 52 52 2021 2021"),
            ("2024-12-30", "52 53 52 01 2024 2025"),
            ("2019-12-30", "52 53 52 01 2019 2020"),
            ("2023-01-01", "01 00 01 52 2023 2022"),
            ("2020-06-15", "24 25 24 25 2020 2020"),
        ] {
            let at = format!("{day} 00:00:00");
            assert_eq!(formatted(&at, "%U %u %V %v %X %x"), expected, "{day}");
        }
    }

    #[test]
    fn parses_like_mysql() {
        assert_eq!(
            parse_time("2024-01-05", "%Y-%m-%d"),
            Some(at("2024-01-05 00:00:00"))
        );
        assert_eq!(
            parse_time("5/1/24 1:02:03 pm", "%e/%c/%y %h:%i:%s %p"),
            Some(at("2024-01-05 13:02:03"))
        );
        assert_eq!(
            parse_time("March 7 2021 10:00:00.25", "%M %e %Y %T.%f"),
            Some(at("2021-03-07 10:00:00.25"))
        );
        assert_eq!(parse_time("2024-02-30", "%Y-%m-%d"), None);
        assert_eq!(parse_time("x2024", "%Y"), None);
        // The text used up: the rest of the format is not read.
        assert_eq!(
            parse_time("2017-12-31 23:59:59", "%Y-%m-%d %H:%i:%s.%f"),
            Some(at("2017-12-31 23:59:59"))
        );
        assert_eq!(
            parse_time("2017-12-31", "%Y-%m-%d %H"),
            Some(at("2017-12-31 00:00:00"))
        );
        assert_eq!(parse_time("2017-12", "%Y-%m-%d"), None);
        assert!(has_time_part("%H:%i") && !has_time_part("%Y-%m-%d"));
    }
}
