//! Doris's AUTO PARTITION: a table declared `AUTO PARTITION BY RANGE (date_trunc(col, unit))`
//! or `AUTO PARTITION BY LIST (col)` gets, when a load brings a row no partition holds, the
//! partition that row needs — the unit of time holding it (RANGE) or its one value (LIST) —
//! named as Doris names it.

use crate::model::{PartitionBound, PartitionKind, TableMeta};
use crate::partition_value::PartitionValue;
use basalt_common::{BasaltError, Result, SqlType};
use chrono::{DateTime, Datelike, Duration, NaiveDate, NaiveDateTime};
use serde::{Deserialize, Serialize};

/// How an auto-partitioned table makes its partitions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AutoPartition {
    /// RANGE: the `date_trunc` unit (lower case); None for LIST.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub date_trunc_unit: Option<String>,
}

/// The `date_trunc` units an AUTO RANGE partition may use.
pub const DATE_TRUNC_UNITS: &[&str] = &[
    "year", "quarter", "month", "week", "day", "hour", "minute", "second",
];

/// Checks an AUTO PARTITION declaration against the partition column's type: RANGE needs a
/// DATE or DATETIME column and a known unit (a DATE column no unit below a day).
pub fn check_auto_partition(kind: PartitionKind, auto: &AutoPartition, ty: &SqlType) -> Result<()> {
    let bad = |m: String| Err(BasaltError::InvalidDdl(m));
    match (kind, &auto.date_trunc_unit) {
        (PartitionKind::Range, Some(unit)) => {
            if !DATE_TRUNC_UNITS.contains(&unit.as_str()) {
                return bad(format!(
                    "auto create partition only support date_trunc function of RANGE partition, unit '{unit}' is not one of {}",
                    DATE_TRUNC_UNITS.join(", ")
                ));
            }
            match ty {
                SqlType::DateTime { .. } => Ok(()),
                SqlType::Date if matches!(unit.as_str(), "hour" | "minute" | "second") => bad(
                    format!("date_trunc unit '{unit}' is finer than the DATE partition column"),
                ),
                SqlType::Date => Ok(()),
                other => bad(format!(
                    "AUTO PARTITION BY RANGE needs a DATE or DATETIME column, not {other}"
                )),
            }
        }
        (PartitionKind::Range, None) => bad(
            "AUTO PARTITION BY RANGE needs date_trunc(column, 'unit') as its partition expression"
                .into(),
        ),
        (PartitionKind::List, None) => Ok(()),
        _ => bad("AUTO PARTITION is RANGE or LIST".into()),
    }
}

/// The partition (Doris's name and bound) an auto-partitioned `table` creates for a row whose
/// partition value is `value` (None: NULL, which no auto partition holds).
pub fn auto_partition_for(
    table: &TableMeta,
    value: Option<&PartitionValue>,
) -> Result<(String, PartitionBound)> {
    let (Some(auto), Some(column)) = (&table.auto_partition, table.partition_column_meta()) else {
        return Err(BasaltError::Internal(format!(
            "table {} has no AUTO PARTITION",
            table.name
        )));
    };
    let value = value.ok_or_else(|| BasaltError::NoPartition {
        column: column.name.clone(),
        value: "NULL (AUTO PARTITION makes no partition for NULL)".into(),
    })?;
    match (&auto.date_trunc_unit, value) {
        (Some(unit), PartitionValue::Int(v)) => range_partition(&column.ty, unit, *v),
        (None, v) => Ok((
            list_partition_name(&v.display(&column.ty)),
            PartitionBound::List {
                values: vec![v.clone()],
            },
        )),
        (Some(_), PartitionValue::Str(s)) => Err(BasaltError::InvalidData(format!(
            "'{s}' is no date for the AUTO RANGE partition column"
        ))),
    }
}

/// `[trunc(v), trunc(v) + 1 unit)`, named `p` + the lower bound as yyyyMMddHHmmss.
fn range_partition(ty: &SqlType, unit: &str, v: i128) -> Result<(String, PartitionBound)> {
    let is_date = matches!(ty, SqlType::Date);
    let at = if is_date {
        NaiveDate::from_num_days_from_ce_opt(
            i32::try_from(v)
                .ok()
                .and_then(|d| d.checked_add(719_163))
                .unwrap_or(i32::MIN),
        )
        .and_then(|d| d.and_hms_opt(0, 0, 0))
    } else {
        let micros = i64::try_from(v).unwrap_or(i64::MIN);
        DateTime::from_timestamp_micros(micros).map(|t| t.naive_utc())
    };
    let out_of_range = || BasaltError::InvalidData(format!("value {v} out of the date range"));
    let at = at.ok_or_else(out_of_range)?;
    let (lower, upper) = truncate(at, unit).ok_or_else(out_of_range)?;
    let to_value = |t: NaiveDateTime| -> PartitionValue {
        if is_date {
            PartitionValue::Int((t.date().num_days_from_ce() - 719_163) as i128)
        } else {
            PartitionValue::Int(t.and_utc().timestamp_micros() as i128)
        }
    };
    Ok((
        format!("p{}", lower.format("%Y%m%d%H%M%S")),
        PartitionBound::Range {
            lower: Some(to_value(lower)),
            upper: Some(to_value(upper)),
        },
    ))
}

/// The unit of time holding `t`: its start and the next unit's.
fn truncate(t: NaiveDateTime, unit: &str) -> Option<(NaiveDateTime, NaiveDateTime)> {
    let day = t.date();
    let month_start = |y: i32, m0: i32| {
        let months = y * 12 + m0;
        NaiveDate::from_ymd_opt(months.div_euclid(12), months.rem_euclid(12) as u32 + 1, 1)?
            .and_hms_opt(0, 0, 0)
    };
    let floor_secs = |n: i64| {
        let secs = t.and_utc().timestamp();
        let start = DateTime::from_timestamp(secs - secs.rem_euclid(n), 0)?.naive_utc();
        Some((start, start + Duration::seconds(n)))
    };
    match unit {
        "year" => Some((month_start(day.year(), 0)?, month_start(day.year() + 1, 0)?)),
        "quarter" => {
            let q0 = (day.month0() / 3 * 3) as i32;
            Some((
                month_start(day.year(), q0)?,
                month_start(day.year(), q0 + 3)?,
            ))
        }
        "month" => {
            let m0 = day.month0() as i32;
            Some((
                month_start(day.year(), m0)?,
                month_start(day.year(), m0 + 1)?,
            ))
        }
        "week" => {
            let monday = day - Duration::days(day.weekday().num_days_from_monday() as i64);
            let start = monday.and_hms_opt(0, 0, 0)?;
            Some((start, start + Duration::days(7)))
        }
        "day" => {
            let start = day.and_hms_opt(0, 0, 0)?;
            Some((start, start + Duration::days(1)))
        }
        "hour" => floor_secs(3600),
        "minute" => floor_secs(60),
        "second" => floor_secs(1),
        _ => None,
    }
}

/// Doris's LIST auto partition name: `p`, the value with each character that is not an ASCII
/// letter or digit written as its code point in hex, then the value's length in characters.
pub fn list_partition_name(value: &str) -> String {
    let mut name = String::from("p");
    for c in value.chars() {
        if c.is_ascii_alphanumeric() {
            name.push(c);
        } else {
            name.push_str(&format!("{:x}", c as u32));
        }
    }
    name.push_str(&value.chars().count().to_string());
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> NaiveDateTime {
        NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S").unwrap()
    }

    #[test]
    fn units() {
        let (l, u) = truncate(at("2024-05-17 13:45:10"), "month").unwrap();
        assert_eq!(
            (l, u),
            (at("2024-05-01 00:00:00"), at("2024-06-01 00:00:00"))
        );
        let (l, u) = truncate(at("2024-12-17 13:45:10"), "quarter").unwrap();
        assert_eq!(
            (l, u),
            (at("2024-10-01 00:00:00"), at("2025-01-01 00:00:00"))
        );
        let (l, _) = truncate(at("2024-05-17 13:45:10"), "week").unwrap();
        assert_eq!(l, at("2024-05-13 00:00:00"));
        let (l, u) = truncate(at("2024-05-17 13:45:10"), "hour").unwrap();
        assert_eq!(
            (l, u),
            (at("2024-05-17 13:00:00"), at("2024-05-17 14:00:00"))
        );
    }

    #[test]
    fn range_names_and_bounds() {
        let days = (NaiveDate::from_ymd_opt(2024, 2, 29)
            .unwrap()
            .num_days_from_ce()
            - 719_163) as i128;
        let (name, bound) = range_partition(&SqlType::Date, "month", days).unwrap();
        assert_eq!(name, "p20240201000000");
        let first = (NaiveDate::from_ymd_opt(2024, 2, 1)
            .unwrap()
            .num_days_from_ce()
            - 719_163) as i128;
        let next = (NaiveDate::from_ymd_opt(2024, 3, 1)
            .unwrap()
            .num_days_from_ce()
            - 719_163) as i128;
        assert_eq!(
            bound,
            PartitionBound::Range {
                lower: Some(PartitionValue::Int(first)),
                upper: Some(PartitionValue::Int(next))
            }
        );
    }

    #[test]
    fn list_names() {
        assert_eq!(list_partition_name("Beijing"), "pBeijing7");
        assert_eq!(list_partition_name("a b"), "pa20b3");
        assert_eq!(list_partition_name("-1"), "p2d12");
    }
}
