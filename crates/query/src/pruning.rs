//! Partition and bucket pruning: from a scan's filter conjuncts, which partitions can hold
//! matching rows (ranges, lists) and which buckets (equality or IN on every distribution column).

use basalt_catalog::{PartitionBound, PartitionValue, TableMeta};
use basalt_storage::hashing::buckets_of_rows;
use basalt_storage::routing::partition_value_at;
use datafusion::arrow::array::ArrayRef;
use datafusion::common::ScalarValue;
use datafusion::logical_expr::utils::split_conjunction;
use datafusion::logical_expr::{Between, BinaryExpr, Expr, Operator};
use std::collections::BTreeSet;

/// Largest number of value combinations bucket pruning will hash.
const MAX_BUCKET_COMBINATIONS: usize = 256;

/// What a conjunct says about one column.
#[derive(Debug, Clone)]
enum Constraint {
    In(Vec<ScalarValue>),
    Cmp(Operator, ScalarValue),
}

/// Constraints per column name from the conjuncts of `filters`.
fn constraints(filters: &[Expr]) -> Vec<(String, Constraint)> {
    let mut out = Vec::new();
    for f in filters {
        for c in split_conjunction(f) {
            constraints_of(c, &mut out);
        }
    }
    out
}

fn literal(e: &Expr) -> Option<&ScalarValue> {
    match e {
        Expr::Literal(v, _) if !v.is_null() => Some(v),
        _ => None,
    }
}

fn column(e: &Expr) -> Option<String> {
    match e {
        Expr::Column(c) => Some(c.name.to_lowercase()),
        _ => None,
    }
}

fn flip(op: Operator) -> Operator {
    match op {
        Operator::Lt => Operator::Gt,
        Operator::LtEq => Operator::GtEq,
        Operator::Gt => Operator::Lt,
        Operator::GtEq => Operator::LtEq,
        other => other,
    }
}

fn constraints_of(e: &Expr, out: &mut Vec<(String, Constraint)>) {
    match e {
        Expr::BinaryExpr(BinaryExpr { left, op, right }) => {
            let (col, op, v) = match (column(left), literal(right), column(right), literal(left)) {
                (Some(c), Some(v), _, _) => (c, *op, v.clone()),
                (_, _, Some(c), Some(v)) => (c, flip(*op), v.clone()),
                _ => return,
            };
            match op {
                Operator::Eq => out.push((col, Constraint::In(vec![v]))),
                Operator::Lt | Operator::LtEq | Operator::Gt | Operator::GtEq => {
                    out.push((col, Constraint::Cmp(op, v)))
                }
                _ => {}
            }
        }
        Expr::InList(list) if !list.negated => {
            let Some(col) = column(&list.expr) else {
                return;
            };
            let values: Option<Vec<ScalarValue>> =
                list.list.iter().map(|e| literal(e).cloned()).collect();
            if let Some(values) = values {
                out.push((col, Constraint::In(values)));
            }
        }
        Expr::Between(Between {
            expr,
            negated: false,
            low,
            high,
        }) => {
            if let (Some(col), Some(lo), Some(hi)) = (column(expr), literal(low), literal(high)) {
                out.push((col.clone(), Constraint::Cmp(Operator::GtEq, lo.clone())));
                out.push((col, Constraint::Cmp(Operator::LtEq, hi.clone())));
            }
        }
        _ => {}
    }
}

/// A literal converted to the column's type, as an array of one value.
fn as_column_array(v: &ScalarValue, table: &TableMeta, col: usize) -> Option<ArrayRef> {
    let ty = table.columns[col].ty.arrow_type();
    let v = v.cast_to(&ty).ok()?;
    v.to_array_of_size(1).ok()
}

fn as_partition_value(v: &ScalarValue, table: &TableMeta, col: usize) -> Option<PartitionValue> {
    let arr = as_column_array(v, table, col)?;
    partition_value_at(&arr, 0).ok().flatten()
}

fn satisfies(op: Operator, x: &PartitionValue, v: &PartitionValue) -> bool {
    match op {
        Operator::Lt => x < v,
        Operator::LtEq => x <= v,
        Operator::Gt => x > v,
        Operator::GtEq => x >= v,
        _ => true,
    }
}

/// Could a partition with `bound` hold a row satisfying `c`?
fn partition_may_match(
    bound: &PartitionBound,
    c: &Constraint,
    table: &TableMeta,
    col: usize,
) -> bool {
    match c {
        Constraint::In(values) => {
            let pvs: Vec<Option<PartitionValue>> = values
                .iter()
                .map(|v| as_partition_value(v, table, col))
                .collect();
            if pvs.iter().any(|p| p.is_none()) {
                return true; // cannot convert: do not prune
            }
            pvs.iter().flatten().any(|p| bound.contains(p))
        }
        Constraint::Cmp(op, v) => {
            let Some(v) = as_partition_value(v, table, col) else {
                return true;
            };
            match bound {
                PartitionBound::All => true,
                PartitionBound::List { values } => values.iter().any(|x| satisfies(*op, x, &v)),
                PartitionBound::Range { lower, upper } => match op {
                    Operator::Lt => lower.as_ref().is_none_or(|l| l < &v),
                    Operator::LtEq => lower.as_ref().is_none_or(|l| l <= &v),
                    Operator::Gt | Operator::GtEq => upper.as_ref().is_none_or(|u| u > &v),
                    _ => true,
                },
            }
        }
    }
}

/// Result of pruning: partition indexes to read and, if known, the buckets to read.
#[derive(Debug)]
pub struct Pruned {
    pub partitions: Vec<usize>,
    pub buckets: Option<BTreeSet<u32>>,
}

pub fn prune(table: &TableMeta, filters: &[Expr]) -> Pruned {
    let cons = constraints(filters);
    let partitions = match table.partition_column {
        None => (0..table.partitions.len()).collect(),
        Some(pcol) => {
            let name = &table.columns[pcol].name;
            let relevant: Vec<&Constraint> = cons
                .iter()
                .filter(|(c, _)| c == name)
                .map(|(_, c)| c)
                .collect();
            (0..table.partitions.len())
                .filter(|i| {
                    relevant
                        .iter()
                        .all(|c| partition_may_match(&table.partitions[*i].bound, c, table, pcol))
                })
                .collect()
        }
    };
    Pruned {
        partitions,
        buckets: prune_buckets(table, &cons),
    }
}

fn prune_buckets(table: &TableMeta, cons: &[(String, Constraint)]) -> Option<BTreeSet<u32>> {
    let dist = &table.distribution;
    if dist.columns.is_empty() {
        return None;
    }
    // For each distribution column, the smallest IN/= list that constrains it.
    let mut per_column: Vec<Vec<ArrayRef>> = Vec::new();
    for &col in &dist.columns {
        let name = &table.columns[col].name;
        let values = cons
            .iter()
            .filter(|(c, _)| c == name)
            .filter_map(|(_, c)| match c {
                Constraint::In(v) => Some(v),
                _ => None,
            })
            .min_by_key(|v| v.len())?;
        let arrays: Option<Vec<ArrayRef>> = values
            .iter()
            .map(|v| as_column_array(v, table, col))
            .collect();
        per_column.push(arrays?);
    }
    let combos: usize = per_column.iter().map(|v| v.len()).product();
    if combos == 0 || combos > MAX_BUCKET_COMBINATIONS {
        return None;
    }
    let mut buckets = BTreeSet::new();
    let mut idx = vec![0usize; per_column.len()];
    for _ in 0..combos {
        let row: Vec<ArrayRef> = per_column
            .iter()
            .zip(&idx)
            .map(|(vals, i)| vals[*i].clone())
            .collect();
        let b = buckets_of_rows(&row, 1, dist.buckets.max(1)).ok()?;
        buckets.insert(b[0]);
        for (k, i) in idx.iter_mut().enumerate() {
            *i += 1;
            if *i < per_column[k].len() {
                break;
            }
            *i = 0;
        }
    }
    Some(buckets)
}
