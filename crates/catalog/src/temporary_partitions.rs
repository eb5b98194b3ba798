//! Doris's temporary partitions: the rules for adding one, and `REPLACE PARTITION (..) WITH
//! TEMPORARY PARTITION (..)`, which makes temporary partitions formal in place of formal ones.
//! A temporary partition may overlap formal partitions (it is built to replace them) but no
//! other temporary partition, and no two partitions of either kind share a name.

use crate::model::*;
use crate::partitions::check_new_partition;
use basalt_common::{BasaltError, Result};

/// What `REPLACE PARTITION (formal) WITH TEMPORARY PARTITION (temporary) [PROPERTIES (..)]`
/// asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionReplacement {
    pub formal: Vec<String>,
    pub temporary: Vec<String>,
    /// `strict_range` (default true): the replaced ranges' union must equal the temporary
    /// ones' (list partitions: the same values, always). When false, the new partitions need
    /// only not overlap the formal partitions that stay.
    pub strict_range: bool,
    /// `use_temp_partition_name` (default false): the new formal partitions keep the temporary
    /// names; otherwise, when as many partitions are replaced as replace them, they take the
    /// replaced names, one for one in the order written.
    pub use_temp_partition_name: bool,
}

/// Checks a new partition's name against every partition of `table` and its bound against the
/// partitions of its own kind.
pub(crate) fn check_new(
    table: &TableMeta,
    name: &str,
    bound: &PartitionBound,
    temporary: bool,
) -> Result<()> {
    let (same, other) = if temporary {
        (&table.temporary_partitions, &table.partitions)
    } else {
        (&table.partitions, &table.temporary_partitions)
    };
    if other.iter().any(|p| p.name.eq_ignore_ascii_case(name)) {
        return Err(BasaltError::DuplicatePartition(name.to_string()));
    }
    let existing: Vec<(String, PartitionBound)> = same
        .iter()
        .map(|p| (p.name.clone(), p.bound.clone()))
        .collect();
    check_new_partition(name, bound, &existing)
}

/// `table` after the replacement, and the formal partitions it replaced.
pub(crate) fn replaced(
    table: &TableMeta,
    r: &PartitionReplacement,
) -> Result<(TableMeta, Vec<PartitionMeta>)> {
    if r.formal.is_empty() || r.temporary.is_empty() {
        return Err(BasaltError::InvalidDdl(
            "REPLACE PARTITION needs at least one partition and one temporary partition".into(),
        ));
    }
    let position = |list: &[PartitionMeta], name: &str| {
        list.iter()
            .position(|p| p.name.eq_ignore_ascii_case(name))
            .ok_or_else(|| BasaltError::UnknownPartition(name.to_string()))
    };
    let formal: Vec<usize> = r
        .formal
        .iter()
        .map(|n| position(&table.partitions, n))
        .collect::<Result<_>>()?;
    let temporary: Vec<usize> = r
        .temporary
        .iter()
        .map(|n| position(&table.temporary_partitions, n))
        .collect::<Result<_>>()?;
    for (names, ids) in [(&r.formal, &formal), (&r.temporary, &temporary)] {
        if let Some((i, _)) = ids
            .iter()
            .enumerate()
            .find(|(i, id)| ids[..*i].contains(id))
        {
            return Err(BasaltError::InvalidDdl(format!(
                "partition {} is named twice",
                names[i]
            )));
        }
    }
    let old: Vec<&PartitionMeta> = formal.iter().map(|&i| &table.partitions[i]).collect();
    let mut new: Vec<PartitionMeta> = temporary
        .iter()
        .map(|&i| table.temporary_partitions[i].clone())
        .collect();
    let bounds = |ps: &[&PartitionMeta]| ps.iter().map(|p| p.bound.clone()).collect::<Vec<_>>();
    let new_refs: Vec<&PartitionMeta> = new.iter().collect();
    let strict = r.strict_range || table.partition_kind == PartitionKind::List;
    if strict && !same_coverage(&bounds(&old), &bounds(&new_refs)) {
        return Err(BasaltError::InvalidDdl(format!(
            "the temporary partitions ({}) do not cover exactly what partitions ({}) cover; \
             set \"strict_range\" = \"false\" to replace them anyway",
            r.temporary.join(", "),
            r.formal.join(", ")
        )));
    }
    if !r.use_temp_partition_name && new.len() == old.len() {
        for (p, o) in new.iter_mut().zip(&old) {
            p.name = o.name.clone();
        }
    }
    let mut out = table.clone();
    let at = formal.iter().copied().min().unwrap_or(0);
    let mut removed = Vec::new();
    let mut kept = Vec::new();
    for (i, p) in std::mem::take(&mut out.partitions).into_iter().enumerate() {
        if formal.contains(&i) {
            removed.push(p);
        } else {
            kept.push(p);
        }
    }
    for p in &new {
        let others: Vec<(String, PartitionBound)> = kept
            .iter()
            .map(|k| (k.name.clone(), k.bound.clone()))
            .collect();
        check_new_partition(&p.name, &p.bound, &others)?;
    }
    let before = formal.iter().filter(|&&i| i < at).count();
    let at = at - before;
    out.partitions = kept;
    out.partitions.splice(at..at, new);
    let mut i = 0;
    out.temporary_partitions.retain(|_| {
        i += 1;
        !temporary.contains(&(i - 1))
    });
    Ok((out, removed))
}

/// True when two sets of bounds cover the same values: the same merged ranges, or the same
/// list values.
fn same_coverage(a: &[PartitionBound], b: &[PartitionBound]) -> bool {
    let lists = |bs: &[PartitionBound]| {
        let mut values: Vec<_> = bs
            .iter()
            .flat_map(|b| match b {
                PartitionBound::List { values } => values.clone(),
                _ => Vec::new(),
            })
            .collect();
        values.sort();
        values
    };
    let ranges = |bs: &[PartitionBound]| {
        let mut rs: Vec<_> = bs
            .iter()
            .filter_map(|b| match b {
                PartitionBound::Range { lower, upper } => Some((lower.clone(), upper.clone())),
                _ => None,
            })
            .collect();
        // Unbounded lower bounds (None) sort first; merge touching ranges.
        rs.sort_by(|x, y| x.0.cmp(&y.0));
        let mut merged: Vec<(Option<_>, Option<_>)> = Vec::new();
        for (lower, upper) in rs {
            match merged.last_mut() {
                Some(last) if last.1.is_some() && last.1 == lower => last.1 = upper,
                _ => merged.push((lower, upper)),
            }
        }
        merged
    };
    lists(a) == lists(b) && ranges(a) == ranges(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PartitionValue;

    fn range(name: &str, lower: Option<i32>, upper: Option<i32>) -> PartitionMeta {
        PartitionMeta {
            id: 0,
            name: name.into(),
            bound: PartitionBound::Range {
                lower: lower.map(|v| PartitionValue::Int(v.into())),
                upper: upper.map(|v| PartitionValue::Int(v.into())),
            },
            tablets: Vec::new(),
        }
    }

    fn table(formal: Vec<PartitionMeta>, temporary: Vec<PartitionMeta>) -> TableMeta {
        let mut t: TableMeta = serde_json::from_value(serde_json::json!({
            "id": 1, "database": "d", "name": "t", "columns": [], "keys_model": "Duplicate",
            "num_key_columns": 0, "partition_kind": "Range", "partition_column": null,
            "partitions": [], "distribution": {"columns": [], "buckets": 1},
            "properties": {}, "comment": "", "created_ms": 0
        }))
        .unwrap();
        t.partitions = formal;
        t.temporary_partitions = temporary;
        t
    }

    fn replacement(formal: &[&str], temporary: &[&str], strict: bool) -> PartitionReplacement {
        PartitionReplacement {
            formal: formal.iter().map(|s| s.to_string()).collect(),
            temporary: temporary.iter().map(|s| s.to_string()).collect(),
            strict_range: strict,
            use_temp_partition_name: false,
        }
    }

    fn names(ps: &[PartitionMeta]) -> Vec<&str> {
        ps.iter().map(|p| p.name.as_str()).collect()
    }

    #[test]
    fn two_partitions_replaced_by_one_covering_both_take_its_name() {
        let t = table(
            vec![
                range("p1", None, Some(10)),
                range("p2", Some(10), Some(20)),
                range("p3", Some(20), Some(30)),
            ],
            vec![range("tp1", None, Some(20))],
        );
        let (new, removed) = replaced(&t, &replacement(&["p1", "p2"], &["tp1"], true)).unwrap();
        assert_eq!(names(&new.partitions), ["tp1", "p3"]);
        assert_eq!(names(&removed), ["p1", "p2"]);
        assert!(new.temporary_partitions.is_empty());
    }

    #[test]
    fn one_for_one_keeps_the_formal_name_unless_asked() {
        let t = table(
            vec![range("p1", None, Some(10)), range("p2", Some(10), Some(20))],
            vec![range("tp2", Some(10), Some(20))],
        );
        let (new, _) = replaced(&t, &replacement(&["p2"], &["tp2"], true)).unwrap();
        assert_eq!(names(&new.partitions), ["p1", "p2"]);
        let mut r = replacement(&["p2"], &["tp2"], true);
        r.use_temp_partition_name = true;
        let (new, _) = replaced(&t, &r).unwrap();
        assert_eq!(names(&new.partitions), ["p1", "tp2"]);
    }

    #[test]
    fn strict_range_needs_the_same_coverage_and_loose_only_no_overlap() {
        let t = table(
            vec![range("p1", None, Some(10)), range("p2", Some(10), Some(20))],
            vec![range("tp1", None, Some(5)), range("tp9", None, Some(15))],
        );
        assert!(replaced(&t, &replacement(&["p1"], &["tp1"], true)).is_err());
        let (new, _) = replaced(&t, &replacement(&["p1"], &["tp1"], false)).unwrap();
        assert_eq!(names(&new.partitions), ["p1", "p2"]);
        // tp9 would overlap p2, which stays.
        assert!(replaced(&t, &replacement(&["p1"], &["tp9"], false)).is_err());
    }

    #[test]
    fn unknown_or_repeated_names_are_errors() {
        let t = table(
            vec![range("p1", None, Some(10))],
            vec![range("tp1", None, Some(10))],
        );
        assert!(matches!(
            replaced(&t, &replacement(&["p9"], &["tp1"], true)),
            Err(BasaltError::UnknownPartition(_))
        ));
        assert!(matches!(
            replaced(&t, &replacement(&["p1"], &["p1"], true)),
            Err(BasaltError::UnknownPartition(_))
        ));
        assert!(replaced(&t, &replacement(&["p1", "p1"], &["tp1"], true)).is_err());
    }

    #[test]
    fn names_are_unique_across_both_kinds() {
        let t = table(vec![range("p1", None, Some(10))], vec![]);
        let bound = PartitionBound::Range {
            lower: None,
            upper: Some(PartitionValue::Int(10)),
        };
        assert!(check_new(&t, "P1", &bound, true).is_err());
        assert!(check_new(&t, "tp1", &bound, true).is_ok());
    }
}
