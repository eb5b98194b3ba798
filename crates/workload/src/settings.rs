//! A workload group's settings: Doris's PROPERTIES names and value forms, parsed and checked
//! into typed values, and rendered back (normalized) for storage and display.

use basalt_common::{BasaltError, Result};
use std::collections::BTreeMap;

/// The property names a workload group takes, in display order.
pub const PROPERTY_NAMES: [&str; 10] = [
    "cpu_share",
    "cpu_hard_limit",
    "memory_limit",
    "enable_memory_overcommit",
    "max_concurrency",
    "max_queue_size",
    "queue_timeout",
    "scan_thread_num",
    "read_bytes_per_second",
    "remote_read_bytes_per_second",
];

/// Typed settings; `None` means "no limit" where a limit is optional.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupSettings {
    /// Weight against other groups under CPU contention.
    pub cpu_share: u32,
    /// Percent of all cores the group may use, even when the machine is idle.
    pub cpu_hard_limit: Option<u32>,
    /// Percent of the process memory limit.
    pub memory_limit: Option<f64>,
    pub enable_memory_overcommit: bool,
    pub max_concurrency: u32,
    pub max_queue_size: u32,
    /// Milliseconds a query may wait in the queue.
    pub queue_timeout_ms: u64,
    pub scan_thread_num: Option<u32>,
    pub read_bytes_per_second: Option<u64>,
    pub remote_read_bytes_per_second: Option<u64>,
}

impl Default for GroupSettings {
    fn default() -> Self {
        GroupSettings {
            cpu_share: 1024,
            cpu_hard_limit: None,
            memory_limit: None,
            enable_memory_overcommit: true,
            max_concurrency: i32::MAX as u32,
            max_queue_size: 0,
            queue_timeout_ms: 0,
            scan_thread_num: None,
            read_bytes_per_second: None,
            remote_read_bytes_per_second: None,
        }
    }
}

fn invalid(name: &str, value: &str, expected: &str) -> BasaltError {
    BasaltError::InvalidWorkloadGroup(format!(
        "invalid value '{value}' for property '{name}': expected {expected}"
    ))
}

fn integer(name: &str, value: &str, min: i64, max: i64, expected: &str) -> Result<i64> {
    match value.trim().parse::<i64>() {
        Ok(v) if (min..=max).contains(&v) => Ok(v),
        _ => Err(invalid(name, value, expected)),
    }
}

/// `-1` (or, where allowed, 0) means unlimited.
fn optional_limit(name: &str, value: &str, max: i64, expected: &str) -> Result<Option<i64>> {
    match integer(name, value, -1, max, expected)? {
        -1 => Ok(None),
        0 => Err(invalid(name, value, expected)),
        v => Ok(Some(v)),
    }
}

/// `"30%"` (or `"30"`), a percentage in (0, 100]; `-1` for none.
fn percent(name: &str, value: &str) -> Result<Option<f64>> {
    let v = value.trim();
    if v == "-1" {
        return Ok(None);
    }
    let number = v.strip_suffix('%').unwrap_or(v).trim();
    match number.parse::<f64>() {
        Ok(p) if p > 0.0 && p <= 100.0 => Ok(Some(p)),
        _ => Err(invalid(name, value, "a percentage in (0%, 100%], or -1")),
    }
}

fn boolean(name: &str, value: &str) -> Result<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(invalid(name, value, "true or false")),
    }
}

impl GroupSettings {
    /// These settings with `properties` applied over them (CREATE starts from the defaults,
    /// ALTER from the current settings). Unknown names and bad values are errors.
    pub fn with(&self, properties: &BTreeMap<String, String>) -> Result<GroupSettings> {
        let mut s = self.clone();
        for (name, value) in properties {
            let name = name.trim().to_ascii_lowercase();
            let n = name.as_str();
            match n {
                "cpu_share" => {
                    s.cpu_share = integer(n, value, 1, 10_000, "an integer in 1..10000")? as u32
                }
                "cpu_hard_limit" => {
                    s.cpu_hard_limit = percent(n, value)?.map(|p| p.round().max(1.0) as u32)
                }
                "memory_limit" => s.memory_limit = percent(n, value)?,
                "enable_memory_overcommit" => s.enable_memory_overcommit = boolean(n, value)?,
                "max_concurrency" => {
                    s.max_concurrency =
                        integer(n, value, 0, i32::MAX as i64, "a non-negative integer")? as u32
                }
                "max_queue_size" => {
                    s.max_queue_size =
                        integer(n, value, 0, i32::MAX as i64, "a non-negative integer")? as u32
                }
                "queue_timeout" => {
                    s.queue_timeout_ms = integer(
                        n,
                        value,
                        0,
                        i32::MAX as i64,
                        "a non-negative number of milliseconds",
                    )? as u64
                }
                "scan_thread_num" => {
                    s.scan_thread_num = optional_limit(n, value, 1024, "a positive integer, or -1")?
                        .map(|v| v as u32)
                }
                "read_bytes_per_second" | "remote_read_bytes_per_second" => {
                    let limit =
                        optional_limit(n, value, i64::MAX, "a positive number of bytes, or -1")?
                            .map(|v| v as u64);
                    if n == "read_bytes_per_second" {
                        s.read_bytes_per_second = limit;
                    } else {
                        s.remote_read_bytes_per_second = limit;
                    }
                }
                other => {
                    return Err(BasaltError::InvalidWorkloadGroup(format!(
                        "unknown workload group property '{other}' (known: {})",
                        PROPERTY_NAMES.join(", ")
                    )))
                }
            }
        }
        Ok(s)
    }

    /// The value of a property as SHOW and information_schema display it.
    pub fn display(&self, name: &str) -> String {
        fn opt<T: std::fmt::Display>(v: &Option<T>) -> String {
            v.as_ref().map_or("-1".into(), |v| v.to_string())
        }
        fn pct(v: &Option<f64>) -> String {
            v.map_or("-1".into(), |p| format!("{}%", trim_float(p)))
        }
        match name {
            "cpu_share" => self.cpu_share.to_string(),
            "cpu_hard_limit" => self.cpu_hard_limit.map_or("-1".into(), |p| format!("{p}%")),
            "memory_limit" => pct(&self.memory_limit),
            "enable_memory_overcommit" => self.enable_memory_overcommit.to_string(),
            "max_concurrency" => self.max_concurrency.to_string(),
            "max_queue_size" => self.max_queue_size.to_string(),
            "queue_timeout" => self.queue_timeout_ms.to_string(),
            "scan_thread_num" => opt(&self.scan_thread_num),
            "read_bytes_per_second" => opt(&self.read_bytes_per_second),
            "remote_read_bytes_per_second" => opt(&self.remote_read_bytes_per_second),
            _ => String::new(),
        }
    }

    /// Every property, normalized (what the catalog stores).
    pub fn to_properties(&self) -> BTreeMap<String, String> {
        PROPERTY_NAMES
            .iter()
            .map(|n| (n.to_string(), self.display(n)))
            .collect()
    }
}

fn trim_float(p: f64) -> String {
    if p.fract() == 0.0 {
        format!("{}", p as i64)
    } else {
        format!("{p}")
    }
}

/// Checks that the groups' memory limits add up to at most 100%.
pub fn check_memory_sum<'a>(
    groups: impl IntoIterator<Item = (&'a str, &'a GroupSettings)>,
) -> Result<()> {
    let mut total = 0.0;
    let mut parts = Vec::new();
    for (name, s) in groups {
        if let Some(p) = s.memory_limit {
            total += p;
            parts.push(format!("{name}={}%", trim_float(p)));
        }
    }
    if total > 100.0 + 1e-9 {
        return Err(BasaltError::InvalidWorkloadGroup(format!(
            "the memory_limit of all workload groups adds up to {}%, over 100% ({})",
            trim_float(total),
            parts.join(", ")
        )));
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A property map from pairs (shared by this crate's tests).
    pub(crate) fn props(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn parses_doris_forms_and_round_trips() {
        let s = GroupSettings::default()
            .with(&props(&[
                ("cpu_share", "10"),
                ("cpu_hard_limit", "50%"),
                ("memory_limit", "12.5%"),
                ("enable_memory_overcommit", "FALSE"),
                ("max_concurrency", "1"),
                ("max_queue_size", "2"),
                ("queue_timeout", "3000"),
                ("read_bytes_per_second", "104857600"),
            ]))
            .unwrap();
        assert_eq!(s.cpu_hard_limit, Some(50));
        assert_eq!(s.memory_limit, Some(12.5));
        assert!(!s.enable_memory_overcommit);
        assert_eq!(s.queue_timeout_ms, 3000);
        assert_eq!(s.read_bytes_per_second, Some(104857600));
        assert_eq!(s.display("memory_limit"), "12.5%");
        assert_eq!(s.display("scan_thread_num"), "-1");
        let again = GroupSettings::default().with(&s.to_properties()).unwrap();
        assert_eq!(again, s);
    }

    #[test]
    fn bad_values_and_names_are_clear_errors() {
        for (k, v) in [
            ("cpu_share", "0"),
            ("cpu_hard_limit", "150%"),
            ("memory_limit", "0%"),
            ("memory_limit", "abc"),
            ("enable_memory_overcommit", "yes"),
            ("max_concurrency", "-2"),
            ("queue_timeout", "1.5"),
            ("read_bytes_per_second", "0"),
            ("no_such_thing", "1"),
        ] {
            let e = GroupSettings::default()
                .with(&props(&[(k, v)]))
                .unwrap_err();
            let text = e.to_string();
            assert!(text.contains(k), "{k}={v}: {text}");
        }
    }

    #[test]
    fn memory_limits_sum_to_at_most_100() {
        let a = GroupSettings::default()
            .with(&props(&[("memory_limit", "60%")]))
            .unwrap();
        let b = GroupSettings::default()
            .with(&props(&[("memory_limit", "40%")]))
            .unwrap();
        check_memory_sum([("a", &a), ("b", &b)]).unwrap();
        let c = GroupSettings::default()
            .with(&props(&[("memory_limit", "1%")]))
            .unwrap();
        let e = check_memory_sum([("a", &a), ("b", &b), ("c", &c)]).unwrap_err();
        assert!(e.to_string().contains("101%"), "{e}");
    }
}
