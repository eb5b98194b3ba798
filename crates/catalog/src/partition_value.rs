//! Values of partition columns in a form that orders like the column type: integers, dates (days
//! since epoch) and datetimes (microseconds since epoch) as `i128`, text as `String`.

use basalt_common::datetime_text::UNIX_EPOCH_DAYS_FROM_CE;
use basalt_common::SqlType;
use chrono::{NaiveDate, NaiveDateTime};
use serde::{Deserialize, Serialize};
use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum PartitionValue {
    Int(i128),
    Str(String),
}

impl PartitionValue {
    /// Parses a literal written in DDL for a column of type `ty`.
    pub fn parse(ty: &SqlType, text: &str) -> Result<PartitionValue, String> {
        let bad = || format!("invalid value '{text}' for a partition column of type {ty}");
        match ty {
            SqlType::TinyInt
            | SqlType::SmallInt
            | SqlType::Year
            | SqlType::Int
            | SqlType::BigInt
            | SqlType::LargeInt
            | SqlType::TinyIntUnsigned
            | SqlType::SmallIntUnsigned
            | SqlType::IntUnsigned
            | SqlType::BigIntUnsigned => {
                let v: i128 = text.trim().parse().map_err(|_| bad())?;
                let (min, max) = int_range(ty);
                if v < min || v > max {
                    return Err(bad());
                }
                Ok(PartitionValue::Int(v))
            }
            SqlType::Boolean => match text.trim().to_ascii_lowercase().as_str() {
                "true" | "1" => Ok(PartitionValue::Int(1)),
                "false" | "0" => Ok(PartitionValue::Int(0)),
                _ => Err(bad()),
            },
            SqlType::Date => parse_date(text)
                .map(|d| PartitionValue::Int(d as i128))
                .ok_or_else(bad),
            SqlType::DateTime { .. } => parse_datetime_micros(text)
                .map(|m| PartitionValue::Int(m as i128))
                .ok_or_else(bad),
            SqlType::Char(_) | SqlType::Varchar(_) | SqlType::String => {
                Ok(PartitionValue::Str(text.to_string()))
            }
            SqlType::Float
            | SqlType::Double
            | SqlType::Decimal { .. }
            | SqlType::Bitmap
            | SqlType::Hll
            | SqlType::QuantileState
            | SqlType::Time { .. }
            | SqlType::Binary(_)
            | SqlType::Varbinary(_)
            | SqlType::Blob
            | SqlType::Json
            | SqlType::Array(_)
            | SqlType::Map(..)
            | SqlType::Struct(_)
            | SqlType::Ipv4
            | SqlType::Ipv6
            | SqlType::Variant
            | SqlType::Bit(_) => Err(format!("type {ty} cannot be a partition column")),
        }
    }

    /// Formats the value back as the DDL literal for a column of type `ty`.
    pub fn display(&self, ty: &SqlType) -> String {
        match (self, ty) {
            (PartitionValue::Int(d), SqlType::Date) => format_date(*d as i32),
            (PartitionValue::Int(m), SqlType::DateTime { .. }) => {
                let secs = m.div_euclid(1_000_000) as i64;
                let micros = m.rem_euclid(1_000_000) as u32;
                chrono::DateTime::from_timestamp(secs, micros * 1000)
                    .map(|t| t.naive_utc().format("%Y-%m-%d %H:%M:%S").to_string())
                    .unwrap_or_else(|| m.to_string())
            }
            (PartitionValue::Int(i), _) => i.to_string(),
            (PartitionValue::Str(s), _) => s.clone(),
        }
    }
}

impl fmt::Display for PartitionValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PartitionValue::Int(i) => write!(f, "{i}"),
            PartitionValue::Str(s) => write!(f, "'{s}'"),
        }
    }
}

fn int_range(ty: &SqlType) -> (i128, i128) {
    match ty {
        SqlType::Year => (0, 2155),
        _ => ty.integer_range().unwrap_or((i128::MIN, i128::MAX)),
    }
}

/// Days since 1970-01-01 for `YYYY-MM-DD` (also accepts `YYYYMMDD`).
pub fn parse_date(text: &str) -> Option<i32> {
    let t = text.trim();
    let d = NaiveDate::parse_from_str(t, "%Y-%m-%d")
        .or_else(|_| NaiveDate::parse_from_str(t, "%Y%m%d"))
        .ok()?;
    Some(chrono::Datelike::num_days_from_ce(&d) - UNIX_EPOCH_DAYS_FROM_CE)
}

/// Microseconds since the epoch for `YYYY-MM-DD[ HH:MM:SS[.ffffff]]`.
pub fn parse_datetime_micros(text: &str) -> Option<i64> {
    let t = text.trim();
    let dt = NaiveDateTime::parse_from_str(t, "%Y-%m-%d %H:%M:%S%.f")
        .or_else(|_| NaiveDateTime::parse_from_str(t, "%Y-%m-%dT%H:%M:%S%.f"))
        .or_else(|_| {
            NaiveDate::parse_from_str(t, "%Y-%m-%d")
                .map(|d| d.and_hms_opt(0, 0, 0).unwrap_or_default())
        })
        .ok()?;
    Some(dt.and_utc().timestamp_micros())
}

fn format_date(days: i32) -> String {
    NaiveDate::from_num_days_from_ce_opt(days + UNIX_EPOCH_DAYS_FROM_CE)
        .map(|d| d.format("%Y-%m-%d").to_string())
        .unwrap_or_else(|| days.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_order_and_round_trip() {
        let a = PartitionValue::parse(&SqlType::Date, "2024-01-31").unwrap();
        let b = PartitionValue::parse(&SqlType::Date, "2024-02-01").unwrap();
        assert!(a < b);
        assert_eq!(b.display(&SqlType::Date), "2024-02-01");
        assert_eq!(
            PartitionValue::parse(&SqlType::Date, "1970-01-02").unwrap(),
            PartitionValue::Int(1)
        );
        assert!(PartitionValue::parse(&SqlType::Date, "2024-13-01").is_err());
        let dt = SqlType::DateTime { scale: 0 };
        let v = PartitionValue::parse(&dt, "2024-01-01 10:00:00").unwrap();
        assert_eq!(v.display(&dt), "2024-01-01 10:00:00");
        assert!(PartitionValue::parse(&SqlType::TinyInt, "300").is_err());
        assert!(PartitionValue::parse(&SqlType::TinyIntUnsigned, "-1").is_err());
        assert!(PartitionValue::parse(&SqlType::TinyIntUnsigned, "255").is_ok());
        assert!(PartitionValue::parse(&SqlType::Double, "1").is_err());
    }
}
