//! Doris's dynamic partitions: a RANGE-partitioned table whose `dynamic_partition.*`
//! properties ask for one partition per time unit (HOUR, DAY, WEEK, MONTH, YEAR) from
//! `start` (or now) through `end` units ahead of now. This module checks those properties,
//! plans which partitions a table lacks and which fell behind `start`, and applies the plan —
//! at CREATE TABLE, at ALTER TABLE .. SET, and from the frontend's periodic check.

use basalt_catalog::{Catalog, PartitionBound, PartitionKind, PartitionValue, TableMeta};
use basalt_common::{BasaltError, Result, SqlType};
use basalt_storage::StorageEngine;
use chrono::{Datelike, Duration, NaiveDate, NaiveDateTime, Timelike};
use std::sync::Arc;

/// The key prefix every dynamic-partition property shares.
pub const PREFIX: &str = "dynamic_partition.";

/// Every documented `dynamic_partition.*` key (without the prefix).
const KEYS: &[&str] = &[
    "enable",
    "time_unit",
    "time_zone",
    "start",
    "end",
    "prefix",
    "buckets",
    "replication_num",
    "replication_allocation",
    "start_day_of_week",
    "start_day_of_month",
    "create_history_partition",
    "history_partition_num",
    "hot_partition_num",
    "reserved_history_periods",
    "storage_medium",
    "storage_policy",
];

/// Doris's "no start": partitions are never dropped.
const NO_START: i64 = i32::MIN as i64;

fn ddl(msg: impl Into<String>) -> BasaltError {
    BasaltError::InvalidDdl(msg.into())
}

/// True for a `dynamic_partition.*` key (known or not).
pub fn is_dynamic_key(key: &str) -> bool {
    key.to_ascii_lowercase().starts_with(PREFIX)
}

/// Checks one `dynamic_partition.*` property on its own: a documented key and a value of its
/// form. The combination is [`check_table`]'s.
pub fn check_property(key: &str, value: &str) -> Result<()> {
    let lower = key.to_ascii_lowercase();
    let name = lower.strip_prefix(PREFIX).unwrap_or(&lower);
    if !KEYS.contains(&name) {
        return Err(ddl(format!("Unknown dynamic partition property '{key}'")));
    }
    let int = |what: &str| -> Result<i64> {
        value.trim().parse::<i64>().map_err(|_| {
            ddl(format!(
                "Invalid dynamic partition {what}: '{value}' is not an integer"
            ))
        })
    };
    let boolean = || match value.to_ascii_lowercase().as_str() {
        "true" | "false" => Ok(()),
        _ => Err(ddl(format!(
            "Invalid {key}: \"{value}\", expected \"true\" or \"false\""
        ))),
    };
    match name {
        "enable" | "create_history_partition" => boolean()?,
        "time_unit" => {
            TimeUnit::parse(value)?;
        }
        "start" if int("start")? >= 0 => {
            return Err(ddl("Dynamic partition start must be less than 0"));
        }
        "end" if int("end")? <= 0 => {
            return Err(ddl("Dynamic partition end must be greater than 0"));
        }
        "buckets" | "replication_num" if int(name)? <= 0 => {
            return Err(ddl(format!(
                "Dynamic partition {name} must be greater than 0"
            )));
        }
        "history_partition_num" | "hot_partition_num" if int(name)? < 0 => {
            return Err(ddl(format!(
                "Dynamic partition {name} must not be negative"
            )));
        }
        "start_day_of_week" if !(1..=7).contains(&int(name)?) => {
            return Err(ddl(
                "dynamic_partition.start_day_of_week must be between 1 and 7",
            ));
        }
        "start_day_of_month" if !(1..=28).contains(&int(name)?) => {
            return Err(ddl(
                "dynamic_partition.start_day_of_month must be between 1 and 28",
            ));
        }
        "prefix" if !valid_prefix(value) => {
            return Err(ddl(format!(
                "Invalid dynamic partition prefix '{value}': letters, digits and '_', starting with a letter"
            )));
        }
        _ => {}
    }
    Ok(())
}

fn valid_prefix(p: &str) -> bool {
    p.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The unit of one dynamic partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeUnit {
    Hour,
    Day,
    Week,
    Month,
    Year,
}

impl TimeUnit {
    fn parse(v: &str) -> Result<TimeUnit> {
        Ok(match v.to_ascii_uppercase().as_str() {
            "HOUR" => TimeUnit::Hour,
            "DAY" => TimeUnit::Day,
            "WEEK" => TimeUnit::Week,
            "MONTH" => TimeUnit::Month,
            "YEAR" => TimeUnit::Year,
            _ => {
                return Err(ddl(format!(
                    "Unsupported dynamic_partition.time_unit '{v}': HOUR, DAY, WEEK, MONTH or YEAR"
                )))
            }
        })
    }
}

/// A table's dynamic-partition settings, read from its properties.
#[derive(Debug, Clone)]
pub struct DynamicSpec {
    pub enabled: bool,
    pub unit: TimeUnit,
    pub start: i64,
    pub end: i64,
    pub prefix: String,
    pub start_day_of_week: u32,
    pub start_day_of_month: u32,
    pub create_history: bool,
    pub history_num: Option<i64>,
}

impl DynamicSpec {
    /// The settings of `table`, or None when it has no `dynamic_partition.*` property.
    pub fn of(table: &TableMeta) -> Result<Option<DynamicSpec>> {
        let get = |k: &str| table.properties.get(&format!("{PREFIX}{k}"));
        if !table.properties.keys().any(|k| k.starts_with(PREFIX)) {
            return Ok(None);
        }
        let int = |k: &str, default: i64| -> i64 {
            get(k)
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(default)
        };
        let unit = get("time_unit")
            .ok_or_else(|| ddl("Must assign dynamic_partition.time_unit properties"))?;
        if get("end").is_none() {
            return Err(ddl("Must assign dynamic_partition.end properties"));
        }
        Ok(Some(DynamicSpec {
            enabled: get("enable").is_none_or(|v| v.eq_ignore_ascii_case("true")),
            unit: TimeUnit::parse(unit)?,
            start: int("start", NO_START),
            end: int("end", 0),
            prefix: get("prefix").cloned().unwrap_or_else(|| "p".to_string()),
            start_day_of_week: int("start_day_of_week", 1) as u32,
            start_day_of_month: int("start_day_of_month", 1) as u32,
            create_history: get("create_history_partition")
                .is_some_and(|v| v.eq_ignore_ascii_case("true")),
            history_num: get("history_partition_num").and_then(|v| v.trim().parse().ok()),
        }))
    }

    /// The first offset created: `start` when history is asked for (or fewer units when
    /// `history_partition_num` says so), else now.
    fn first_offset(&self) -> i64 {
        if !self.create_history {
            return 0;
        }
        let history = match self.history_num {
            Some(n) if n > 0 => -n,
            _ => self.start,
        };
        history.max(self.start).max(-100_000)
    }
}

/// Checks the dynamic-partition properties of `table` together: a RANGE table on one DATE or
/// DATETIME column (HOUR needs DATETIME), with a time unit and an end.
pub fn check_table(table: &TableMeta) -> Result<()> {
    let Some(spec) = DynamicSpec::of(table)? else {
        return Ok(());
    };
    if table.partition_kind != PartitionKind::Range {
        return Err(ddl(
            "Only support dynamic partition properties on range partition table",
        ));
    }
    let ty = table
        .partition_column_meta()
        .map(|c| &c.ty)
        .ok_or_else(|| ddl("dynamic partitions need a partition column"))?;
    match ty {
        SqlType::DateTime { .. } => {}
        SqlType::Date if spec.unit != TimeUnit::Hour => {}
        SqlType::Date => {
            return Err(ddl(
                "dynamic_partition.time_unit HOUR needs a DATETIME partition column",
            ))
        }
        other => {
            return Err(ddl(format!(
                "dynamic partitions need a DATE or DATETIME partition column, not {other}"
            )))
        }
    }
    Ok(())
}

/// One partition a dynamic table should have.
#[derive(Debug, Clone, PartialEq)]
pub struct Planned {
    pub name: String,
    pub lower: NaiveDateTime,
    pub upper: NaiveDateTime,
}

/// The start of the unit holding `now`, moved `offset` units.
fn unit_start(spec: &DynamicSpec, now: NaiveDateTime, offset: i64) -> Option<NaiveDateTime> {
    let day = now.date();
    let midnight = |d: NaiveDate| d.and_hms_opt(0, 0, 0);
    match spec.unit {
        TimeUnit::Hour => {
            let hour = now.with_minute(0)?.with_second(0)?.with_nanosecond(0)?;
            hour.checked_add_signed(Duration::try_hours(offset)?)
        }
        TimeUnit::Day => midnight(day.checked_add_signed(Duration::try_days(offset)?)?),
        TimeUnit::Week => {
            let back = (day.weekday().number_from_monday() + 7 - spec.start_day_of_week) % 7;
            let first = day.checked_sub_signed(Duration::try_days(back as i64)?)?;
            midnight(first.checked_add_signed(Duration::try_weeks(offset)?)?)
        }
        TimeUnit::Month => {
            let sdom = spec.start_day_of_month;
            let mut months = day.year() as i64 * 12 + day.month0() as i64;
            if day.day() < sdom {
                months -= 1;
            }
            months += offset;
            let (y, m) = (months.div_euclid(12), months.rem_euclid(12) as u32 + 1);
            midnight(NaiveDate::from_ymd_opt(i32::try_from(y).ok()?, m, sdom)?)
        }
        TimeUnit::Year => {
            let y = i32::try_from(day.year() as i64 + offset).ok()?;
            midnight(NaiveDate::from_ymd_opt(y, 1, 1)?)
        }
    }
}

/// Doris's partition name for the unit starting at `lower`.
fn partition_name(spec: &DynamicSpec, lower: NaiveDateTime) -> String {
    let suffix = match spec.unit {
        TimeUnit::Hour => lower.format("%Y%m%d%H").to_string(),
        TimeUnit::Day => lower.format("%Y%m%d").to_string(),
        TimeUnit::Week => {
            let week = lower.date().iso_week();
            format!("{}_{:02}", week.year(), week.week())
        }
        TimeUnit::Month => lower.format("%Y%m").to_string(),
        TimeUnit::Year => lower.format("%Y").to_string(),
    };
    format!("{}{suffix}", spec.prefix)
}

/// The partitions from the first offset through `end`, at `now`.
pub fn plan(spec: &DynamicSpec, now: NaiveDateTime) -> Vec<Planned> {
    (spec.first_offset()..=spec.end)
        .filter_map(|offset| {
            let lower = unit_start(spec, now, offset)?;
            let upper = unit_start(spec, now, offset + 1)?;
            Some(Planned {
                name: partition_name(spec, lower),
                lower,
                upper,
            })
        })
        .collect()
}

/// The time before which partitions are dropped (the start of unit `start`), if any.
fn drop_before(spec: &DynamicSpec, now: NaiveDateTime) -> Option<NaiveDateTime> {
    (spec.start != NO_START)
        .then(|| unit_start(spec, now, spec.start))
        .flatten()
}

/// The value of `t` in a partition column of type `ty`.
fn bound_value(ty: &SqlType, t: NaiveDateTime) -> Result<PartitionValue> {
    let text = match ty {
        SqlType::Date => t.format("%Y-%m-%d").to_string(),
        _ => t.format("%Y-%m-%d %H:%M:%S").to_string(),
    };
    PartitionValue::parse(ty, &text).map_err(BasaltError::InvalidDdl)
}

/// Doris refuses ADD/DROP PARTITION on a table whose dynamic partitions are enabled (the
/// scheduler owns them): disable them first.
pub fn check_manual_change(catalog: &dyn Catalog, database: &str, table: &str) -> Result<()> {
    let Ok(meta) = catalog.table(database, table) else {
        return Ok(());
    };
    match DynamicSpec::of(&meta) {
        Ok(Some(spec)) if spec.enabled => Err(ddl(format!(
            "Cannot add/drop partition on a Dynamic Partition Table, set \"dynamic_partition.enable\" = \"false\" first: ALTER TABLE {} SET (\"dynamic_partition.enable\" = \"false\")",
            meta.name
        ))),
        _ => Ok(()),
    }
}

/// Brings one table's partitions to its dynamic-partition settings at `now`: adds the
/// missing ones (skipping a name taken or a range another partition covers), drops those
/// wholly before `start`. A table without settings, or disabled, is left alone.
pub fn refresh_table(
    catalog: &dyn Catalog,
    storage: &Arc<StorageEngine>,
    database: &str,
    table: &str,
    now: NaiveDateTime,
) -> Result<()> {
    let meta = catalog.table(database, table)?;
    let Some(spec) = DynamicSpec::of(&meta)? else {
        return Ok(());
    };
    if !spec.enabled {
        return Ok(());
    }
    let ty = meta
        .partition_column_meta()
        .map(|c| c.ty.clone())
        .ok_or_else(|| ddl("dynamic partitions need a partition column"))?;
    if let Some(before) = drop_before(&spec, now) {
        let limit = bound_value(&ty, before)?;
        for p in &meta.partitions {
            let stale =
                matches!(&p.bound, PartitionBound::Range { upper: Some(u), .. } if *u <= limit);
            if stale {
                if let Some(dropped) =
                    catalog.drop_partition(database, table, &p.name, true, false)?
                {
                    storage.remove_partition_files(&dropped);
                }
            }
        }
    }
    for planned in plan(&spec, now) {
        let bound = PartitionBound::Range {
            lower: Some(bound_value(&ty, planned.lower)?),
            upper: Some(bound_value(&ty, planned.upper)?),
        };
        // A fresh snapshot each time: the previous add changed the table.
        let meta = catalog.table(database, table)?;
        let existing: Vec<(String, PartitionBound)> = meta
            .partitions
            .iter()
            .map(|p| (p.name.clone(), p.bound.clone()))
            .collect();
        if basalt_catalog::check_new_partition(&planned.name, &bound, &existing).is_err() {
            continue;
        }
        match catalog.add_partition(&meta, &planned.name, bound, false) {
            Ok(()) | Err(BasaltError::ConcurrentDdl(_)) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Every table with dynamic-partition settings, refreshed at `now`; a table that fails is
/// logged and the others go on.
pub fn refresh_all(catalog: &dyn Catalog, storage: &Arc<StorageEngine>, now: NaiveDateTime) {
    for (database, table) in dynamic_tables(catalog) {
        if let Err(e) = refresh_table(catalog, storage, &database, &table, now) {
            tracing::warn!("dynamic partitions of {database}.{table}: {e}");
        }
    }
}

/// (database, table) of every table with a `dynamic_partition.*` property.
pub fn dynamic_tables(catalog: &dyn Catalog) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for db in catalog.databases() {
        for meta in catalog.tables(&db.name).unwrap_or_default() {
            if meta.properties.keys().any(|k| k.starts_with(PREFIX)) {
                out.push((db.name.clone(), meta.name.clone()));
            }
        }
    }
    out
}

/// `SHOW DYNAMIC PARTITION TABLES`: each table of `database` with dynamic-partition
/// settings, as Doris lists them (Start is -2147483648 when unset).
pub fn show_tables(catalog: &dyn Catalog, database: &str) -> Result<crate::output::Output> {
    use crate::show::{Col, ResultBuilder};
    let mut b = ResultBuilder::new(&[
        Col::str("TableName"),
        Col::str("Enable"),
        Col::str("TimeUnit"),
        Col::str("Start"),
        Col::str("End"),
        Col::str("Prefix"),
        Col::str("Buckets"),
        Col::str("ReplicationNum"),
        Col::str("StartOf"),
    ]);
    let mut tables = catalog.tables(database)?;
    tables.sort_by(|a, b| a.name.cmp(&b.name));
    for t in tables {
        let Ok(Some(spec)) = DynamicSpec::of(&t) else {
            continue;
        };
        let prop = |k: &str| t.properties.get(&format!("{PREFIX}{k}")).cloned();
        let start_of = match spec.unit {
            TimeUnit::Week => {
                const DAYS: [&str; 7] = [
                    "MONDAY",
                    "TUESDAY",
                    "WEDNESDAY",
                    "THURSDAY",
                    "FRIDAY",
                    "SATURDAY",
                    "SUNDAY",
                ];
                DAYS.get(spec.start_day_of_week.saturating_sub(1) as usize)
                    .copied()
                    .unwrap_or("MONDAY")
                    .to_string()
            }
            TimeUnit::Month => format!("{}st", spec.start_day_of_month),
            _ => "NULL".to_string(),
        };
        b.row(vec![
            t.name.clone().into(),
            spec.enabled.to_string().into(),
            format!("{:?}", spec.unit).to_uppercase().into(),
            spec.start.to_string().into(),
            spec.end.to_string().into(),
            spec.prefix.clone().into(),
            prop("buckets")
                .unwrap_or_else(|| t.distribution.buckets.to_string())
                .into(),
            prop("replication_num")
                .or_else(|| t.properties.get("replication_num").cloned())
                .unwrap_or_else(|| "1".to_string())
                .into(),
            start_of.into(),
        ]);
    }
    Ok(b.into_output())
}

/// The wall-clock time dynamic partitions are named by (the server's local time, as CURDATE()).
pub fn local_now() -> NaiveDateTime {
    chrono::Local::now().naive_local()
}

/// Checks every dynamic table now and then each `interval` in the background (Doris's
/// `dynamic_partition_check_interval_seconds`); without an async runtime, only now.
pub fn start_checks(
    catalog: Arc<dyn Catalog>,
    storage: Arc<StorageEngine>,
    interval: std::time::Duration,
) {
    refresh_all(catalog.as_ref(), &storage, local_now());
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return;
    };
    let (catalog, storage) = (Arc::downgrade(&catalog), Arc::downgrade(&storage));
    runtime.spawn(async move {
        loop {
            tokio::time::sleep(interval.max(std::time::Duration::from_secs(1))).await;
            let (Some(catalog), Some(storage)) = (catalog.upgrade(), storage.upgrade()) else {
                return;
            };
            let _ = tokio::task::spawn_blocking(move || {
                refresh_all(catalog.as_ref(), &storage, local_now())
            })
            .await;
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(unit: TimeUnit, start: i64, end: i64) -> DynamicSpec {
        DynamicSpec {
            enabled: true,
            unit,
            start,
            end,
            prefix: "p".into(),
            start_day_of_week: 1,
            start_day_of_month: 1,
            create_history: false,
            history_num: None,
        }
    }

    fn at(s: &str) -> NaiveDateTime {
        NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S").unwrap()
    }

    #[test]
    fn days_from_now_through_end() {
        let p = plan(&spec(TimeUnit::Day, -7, 2), at("2024-12-31 13:05:00"));
        let names: Vec<_> = p.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["p20241231", "p20250101", "p20250102"]);
        assert_eq!(p[1].lower, at("2025-01-01 00:00:00"));
        assert_eq!(p[1].upper, at("2025-01-02 00:00:00"));
    }

    #[test]
    fn history_starts_at_start() {
        let mut s = spec(TimeUnit::Month, -2, 1);
        s.create_history = true;
        let p = plan(&s, at("2024-01-15 00:00:00"));
        let names: Vec<_> = p.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["p202311", "p202312", "p202401", "p202402"]);
        assert_eq!(
            drop_before(&s, at("2024-01-15 00:00:00")),
            Some(at("2023-11-01 00:00:00"))
        );
    }

    #[test]
    fn weeks_hours_years() {
        // 2024-01-03 is a Wednesday; the week starts on Monday 2024-01-01 (ISO week 1).
        let w = plan(&spec(TimeUnit::Week, -1, 1), at("2024-01-03 10:00:00"));
        assert_eq!(w[0].name, "p2024_01");
        assert_eq!(w[0].lower, at("2024-01-01 00:00:00"));
        assert_eq!(w[1].name, "p2024_02");
        let h = plan(&spec(TimeUnit::Hour, -1, 1), at("2024-01-03 23:59:00"));
        assert_eq!(h[1].name, "p2024010400");
        let y = plan(&spec(TimeUnit::Year, -1, 1), at("2024-01-03 23:59:00"));
        assert_eq!(y[1].name, "p2025");
    }

    #[test]
    fn property_checks() {
        assert!(check_property("dynamic_partition.start", "-3").is_ok());
        assert!(check_property("dynamic_partition.start", "3").is_err());
        assert!(check_property("dynamic_partition.end", "0").is_err());
        assert!(check_property("dynamic_partition.time_unit", "minute").is_err());
        assert!(check_property("dynamic_partition.nonsense", "1").is_err());
        assert!(check_property("dynamic_partition.prefix", "1p").is_err());
    }
}
