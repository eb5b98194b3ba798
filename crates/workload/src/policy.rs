//! Workload policies (Doris's `CREATE WORKLOAD POLICY`): conditions on a running query's
//! figures (`username`, `query_time`, `be_scan_rows`, `be_scan_bytes`,
//! `query_be_memory_bytes`) and the action taken once all of them hold: `cancel_query`, or
//! `move_query_to_group 'g'`, which really moves the query (its CPU, reads and memory are
//! charged to, and limited by, `g` from then on). Properties: `enabled`, `priority` (the
//! highest-priority matching policy acts) and `workload_group` (the groups it watches).

use basalt_common::{BasaltError, Result};
use std::collections::BTreeMap;

/// The property names a policy takes.
pub const POLICY_PROPERTY_NAMES: [&str; 3] = ["enabled", "priority", "workload_group"];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Metric {
    Username,
    QueryTime,
    ScanRows,
    ScanBytes,
    MemoryBytes,
}

impl Metric {
    fn parse(name: &str) -> Result<Metric> {
        Ok(match name.to_ascii_lowercase().as_str() {
            "username" => Metric::Username,
            "query_time" => Metric::QueryTime,
            "be_scan_rows" => Metric::ScanRows,
            "be_scan_bytes" => Metric::ScanBytes,
            "query_be_memory_bytes" => Metric::MemoryBytes,
            other => {
                return Err(invalid(format!(
                    "unknown condition metric '{other}': expected username, query_time, \
                     be_scan_rows, be_scan_bytes or query_be_memory_bytes"
                )))
            }
        })
    }

    fn name(self) -> &'static str {
        match self {
            Metric::Username => "username",
            Metric::QueryTime => "query_time",
            Metric::ScanRows => "be_scan_rows",
            Metric::ScanBytes => "be_scan_bytes",
            Metric::MemoryBytes => "query_be_memory_bytes",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cmp {
    Gt,
    Lt,
    Eq,
    Ge,
    Le,
}

impl Cmp {
    fn parse(op: &str) -> Result<Cmp> {
        Ok(match op {
            ">" => Cmp::Gt,
            "<" => Cmp::Lt,
            "=" => Cmp::Eq,
            ">=" => Cmp::Ge,
            "<=" => Cmp::Le,
            other => return Err(invalid(format!("unknown comparison '{other}'"))),
        })
    }

    fn symbol(self) -> &'static str {
        match self {
            Cmp::Gt => ">",
            Cmp::Lt => "<",
            Cmp::Eq => "=",
            Cmp::Ge => ">=",
            Cmp::Le => "<=",
        }
    }

    fn holds<T: PartialOrd>(self, left: T, right: T) -> bool {
        match self {
            Cmp::Gt => left > right,
            Cmp::Lt => left < right,
            Cmp::Eq => left == right,
            Cmp::Ge => left >= right,
            Cmp::Le => left <= right,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
struct Condition {
    metric: Metric,
    cmp: Cmp,
    /// The number compared with (unused for `username`).
    number: u64,
    text: String,
}

/// What a policy does to a query that meets its conditions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PolicyAction {
    CancelQuery,
    MoveQueryToGroup(String),
}

/// A running query's figures, as policies see them.
#[derive(Debug, Clone)]
pub struct QueryFacts<'a> {
    pub user: &'a str,
    pub group: &'a str,
    pub query_time_ms: u64,
    pub scan_rows: u64,
    pub scan_bytes: u64,
    pub memory_bytes: u64,
}

/// A checked policy.
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    pub id: u64,
    pub name: String,
    conditions: Vec<Condition>,
    pub action: PolicyAction,
    pub enabled: bool,
    pub priority: i64,
    /// Groups whose queries it watches; empty: all.
    pub groups: Vec<String>,
}

fn invalid(message: String) -> BasaltError {
    BasaltError::InvalidWorkloadGroup(message)
}

impl Policy {
    /// Checks a policy's parts: conditions `(metric, op, value)`, actions `(name, argument)`
    /// and properties (names lower-case). `group_exists` tells which group names are valid.
    pub fn new(
        id: u64,
        name: &str,
        conditions: &[(String, String, String)],
        actions: &[(String, Option<String>)],
        properties: &BTreeMap<String, String>,
        group_exists: &dyn Fn(&str) -> bool,
    ) -> Result<Policy> {
        if conditions.is_empty() {
            return Err(invalid(
                "a workload policy needs at least one condition".into(),
            ));
        }
        let conditions = conditions
            .iter()
            .map(|(metric, op, value)| {
                let metric = Metric::parse(metric)?;
                let cmp = Cmp::parse(op)?;
                let number = match metric {
                    Metric::Username => {
                        if cmp != Cmp::Eq {
                            return Err(invalid("username takes only '='".into()));
                        }
                        0
                    }
                    _ => value.trim().parse::<u64>().map_err(|_| {
                        invalid(format!(
                            "invalid value '{value}' for {}: expected a non-negative integer",
                            metric.name()
                        ))
                    })?,
                };
                Ok(Condition {
                    metric,
                    cmp,
                    number,
                    text: value.clone(),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let action = match actions {
            [(action, argument)] => match (action.to_ascii_lowercase().as_str(), argument) {
                ("cancel_query", None) => PolicyAction::CancelQuery,
                ("move_query_to_group", Some(g)) => {
                    let g = g.trim().to_ascii_lowercase();
                    if !group_exists(&g) {
                        return Err(BasaltError::UnknownWorkloadGroup(g));
                    }
                    PolicyAction::MoveQueryToGroup(g)
                }
                ("cancel_query", Some(_)) => {
                    return Err(invalid("cancel_query takes no argument".into()))
                }
                ("move_query_to_group", None) => {
                    return Err(invalid(
                        "move_query_to_group needs a group: move_query_to_group 'g'".into(),
                    ))
                }
                (other, _) => {
                    return Err(invalid(format!(
                        "unknown action '{other}': expected cancel_query or move_query_to_group"
                    )))
                }
            },
            [] => return Err(invalid("a workload policy needs an action".into())),
            _ => return Err(invalid("a workload policy takes one action".into())),
        };
        let mut policy = Policy {
            id,
            name: name.to_string(),
            conditions,
            action,
            enabled: true,
            priority: 0,
            groups: Vec::new(),
        };
        policy.apply_properties(properties, group_exists)?;
        Ok(policy)
    }

    /// The policy with `properties` changed (ALTER WORKLOAD POLICY).
    pub fn with_properties(
        &self,
        properties: &BTreeMap<String, String>,
        group_exists: &dyn Fn(&str) -> bool,
    ) -> Result<Policy> {
        let mut p = self.clone();
        p.apply_properties(properties, group_exists)?;
        Ok(p)
    }

    fn apply_properties(
        &mut self,
        properties: &BTreeMap<String, String>,
        group_exists: &dyn Fn(&str) -> bool,
    ) -> Result<()> {
        for (key, value) in properties {
            let v = value.trim();
            match key.as_str() {
                "enabled" => {
                    self.enabled = match v.to_ascii_lowercase().as_str() {
                        "true" => true,
                        "false" => false,
                        _ => return Err(invalid(format!("invalid value '{value}' for property 'enabled': expected true or false"))),
                    }
                }
                "priority" => {
                    self.priority = match v.parse::<i64>() {
                        Ok(p) if (0..=100).contains(&p) => p,
                        _ => return Err(invalid(format!("invalid value '{value}' for property 'priority': expected an integer in [0, 100]"))),
                    }
                }
                "workload_group" => {
                    let groups: Vec<String> = v
                        .split(',')
                        .map(|g| g.trim().to_ascii_lowercase())
                        .filter(|g| !g.is_empty())
                        .collect();
                    if let Some(missing) = groups.iter().find(|g| !group_exists(g)) {
                        return Err(BasaltError::UnknownWorkloadGroup(missing.clone()));
                    }
                    self.groups = groups;
                }
                other => {
                    return Err(invalid(format!(
                        "unknown workload policy property '{other}': expected one of {}",
                        POLICY_PROPERTY_NAMES.join(", ")
                    )))
                }
            }
        }
        Ok(())
    }

    /// True if the policy is on, watches `facts.group`, and every condition holds.
    pub fn matches(&self, facts: &QueryFacts<'_>) -> bool {
        self.enabled
            && (self.groups.is_empty() || self.groups.iter().any(|g| g == facts.group))
            && self.conditions.iter().all(|c| {
                let value = match c.metric {
                    Metric::Username => return facts.user == c.text,
                    Metric::QueryTime => facts.query_time_ms,
                    Metric::ScanRows => facts.scan_rows,
                    Metric::ScanBytes => facts.scan_bytes,
                    Metric::MemoryBytes => facts.memory_bytes,
                };
                c.cmp.holds(value, c.number)
            })
    }

    /// The conditions as written, e.g. `query_time > 3000, be_scan_rows > 10`.
    pub fn condition_text(&self) -> String {
        self.conditions
            .iter()
            .map(|c| format!("{} {} {}", c.metric.name(), c.cmp.symbol(), c.text))
            .collect::<Vec<_>>()
            .join(", ")
    }

    pub fn action_text(&self) -> String {
        match &self.action {
            PolicyAction::CancelQuery => "cancel_query".to_string(),
            PolicyAction::MoveQueryToGroup(g) => format!("move_query_to_group '{g}'"),
        }
    }

    /// The properties in their stored (normalized) form.
    pub fn properties(&self) -> BTreeMap<String, String> {
        BTreeMap::from([
            ("enabled".to_string(), self.enabled.to_string()),
            ("priority".to_string(), self.priority.to_string()),
            ("workload_group".to_string(), self.groups.join(",")),
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cond(m: &str, op: &str, v: &str) -> (String, String, String) {
        (m.into(), op.into(), v.into())
    }

    fn facts<'a>(user: &'a str, group: &'a str, ms: u64, rows: u64) -> QueryFacts<'a> {
        QueryFacts {
            user,
            group,
            query_time_ms: ms,
            scan_rows: rows,
            scan_bytes: 0,
            memory_bytes: 0,
        }
    }

    #[test]
    fn conditions_actions_and_properties() {
        let exists = |g: &str| g == "normal" || g == "batch";
        let props = BTreeMap::from([("workload_group".to_string(), "normal".to_string())]);
        let p = Policy::new(
            1,
            "slow",
            &[
                cond("query_time", ">", "3000"),
                cond("be_scan_rows", ">=", "10"),
            ],
            &[("move_query_to_group".into(), Some("Batch".into()))],
            &props,
            &exists,
        )
        .unwrap();
        assert_eq!(p.action, PolicyAction::MoveQueryToGroup("batch".into()));
        assert!(p.matches(&facts("u", "normal", 3001, 10)));
        assert!(!p.matches(&facts("u", "normal", 3000, 10)));
        assert!(!p.matches(&facts("u", "normal", 5000, 9)));
        // Watches only `normal`: a query already moved is left alone.
        assert!(!p.matches(&facts("u", "batch", 5000, 50)));
        assert_eq!(p.condition_text(), "query_time > 3000, be_scan_rows >= 10");
        let off = p
            .with_properties(
                &BTreeMap::from([("enabled".to_string(), "false".to_string())]),
                &exists,
            )
            .unwrap();
        assert!(!off.matches(&facts("u", "normal", 5000, 50)));

        let by_user = Policy::new(
            2,
            "etl",
            &[cond("username", "=", "etl")],
            &[("cancel_query".into(), None)],
            &BTreeMap::new(),
            &exists,
        )
        .unwrap();
        assert!(by_user.matches(&facts("etl", "batch", 0, 0)));
        assert!(!by_user.matches(&facts("ann", "batch", 0, 0)));
    }

    #[test]
    fn bad_policies_are_clear_errors() {
        let exists = |g: &str| g == "normal";
        let none = BTreeMap::new();
        let cancel = [("cancel_query".to_string(), None)];
        for (conditions, actions, props, needle) in [
            (
                vec![cond("cpu", ">", "1")],
                &cancel[..],
                &none,
                "unknown condition metric",
            ),
            (
                vec![cond("query_time", ">", "soon")],
                &cancel[..],
                &none,
                "non-negative integer",
            ),
            (
                vec![cond("username", ">", "a")],
                &cancel[..],
                &none,
                "only '='",
            ),
            (vec![], &cancel[..], &none, "at least one condition"),
        ] {
            let e = Policy::new(1, "p", &conditions, actions, props, &exists).unwrap_err();
            assert!(e.to_string().contains(needle), "{e}");
        }
        let move_missing = [("move_query_to_group".to_string(), Some("nope".to_string()))];
        let e = Policy::new(
            1,
            "p",
            &[cond("query_time", ">", "1")],
            &move_missing,
            &none,
            &exists,
        )
        .unwrap_err();
        assert!(matches!(e, BasaltError::UnknownWorkloadGroup(_)), "{e}");
        let bad_priority = BTreeMap::from([("priority".to_string(), "101".to_string())]);
        let e = Policy::new(
            1,
            "p",
            &[cond("query_time", ">", "1")],
            &cancel,
            &bad_priority,
            &exists,
        )
        .unwrap_err();
        assert!(e.to_string().contains("priority"), "{e}");
    }
}
