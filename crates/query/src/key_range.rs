//! Row ranges from the sort key: segments are sorted by their key columns (nulls first). Where
//! the scan's predicate fixes the first key columns to constants (`=`) and bounds the next one
//! (`=`, `<`, `<=`, `>`, `>=`, BETWEEN), the rows of a row group that can satisfy it are one
//! contiguous run; `exp_id = 17 AND dt BETWEEN a AND b` on key (exp_id, dt, ..) is one run.
//! The scan slices its (cached) column arrays to that run instead of handing every row of the
//! row group to the filter above. The run is found by binary search, column by column, as
//! Doris's short-key index does.

use datafusion::arrow::array::{Array, ArrayRef};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{Result, ScalarValue};
use datafusion::logical_expr::Operator;
use datafusion::physical_expr::expressions::{BinaryExpr, Column, InListExpr, Literal};
use datafusion::physical_expr::PhysicalExpr;
use std::any::Any;
use std::cmp::Ordering;
use std::ops::Range;
use std::sync::Arc;

/// A key column the scan reads: its name and type, and its place in the scan's batches.
pub(crate) struct KeyColumn<'a> {
    pub name: &'a str,
    pub data_type: &'a DataType,
    pub position: usize,
}

/// Bounds on one key column: (value, inclusive).
#[derive(Debug, Clone, Default)]
struct Bounds {
    position: usize,
    lower: Option<(ScalarValue, bool)>,
    upper: Option<(ScalarValue, bool)>,
    /// Set by `=`: both bounds are this one value.
    equal: bool,
    /// Set by `IN (..)` of few literals: the values, ascending, each its own run.
    points: Vec<ScalarValue>,
}

impl Bounds {
    fn is_set(&self) -> bool {
        self.lower.is_some() || self.upper.is_some() || !self.points.is_empty()
    }

    /// Whether the next key column is sorted within each run of this one.
    fn is_point(&self) -> bool {
        self.equal || !self.points.is_empty()
    }
}

/// IN lists longer than this bound the column by their least and greatest values instead.
const MAX_POINTS: usize = 64;

/// Bounds on a prefix of the sort key that every row the scan must return satisfies: all but
/// the last column are fixed by `=`.
#[derive(Debug, Clone)]
pub(crate) struct KeyRange {
    columns: Vec<Bounds>,
}

impl KeyRange {
    /// The bounds the conjuncts of `predicate` put on the leading `keys` (in sort-key order);
    /// `None` when they put none on the first.
    pub(crate) fn from_predicate(
        predicate: &Arc<dyn PhysicalExpr>,
        keys: &[KeyColumn<'_>],
    ) -> Option<KeyRange> {
        let mut bounds: Vec<Bounds> = keys
            .iter()
            .map(|k| Bounds {
                position: k.position,
                ..Bounds::default()
            })
            .collect();
        collect(predicate.as_ref(), keys, &mut bounds);
        let mut columns = Vec::new();
        for b in bounds {
            if !b.is_set() {
                break;
            }
            let point = b.is_point();
            columns.push(b);
            if !point {
                break;
            }
        }
        (!columns.is_empty()).then_some(KeyRange { columns })
    }

    /// The runs of rows of a row group (its key columns among `columns`, sorted ascending,
    /// nulls first per key) within the bounds, ascending and disjoint.
    pub(crate) fn rows(&self, columns: &[ArrayRef]) -> Result<Vec<Range<usize>>> {
        let Some(first) = self.columns.first() else {
            return Ok(Vec::new());
        };
        let whole = 0..columns[first.position].len();
        let mut runs: Vec<Range<usize>> = std::iter::once(whole).collect();
        for b in &self.columns {
            let keys = columns[b.position].as_ref();
            let mut narrowed = Vec::with_capacity(runs.len());
            for run in runs {
                // Nulls sort first within the run and meet no bound.
                let nulls = keys.slice(run.start, run.len()).null_count();
                let values = run.start + nulls..run.end;
                if !b.equal && !b.points.is_empty() {
                    for p in &b.points {
                        let start = first_not_below(keys, values.clone(), p, false)?;
                        let end = first_not_below(keys, start..values.end, p, true)?;
                        if start < end {
                            narrowed.push(start..end);
                        }
                    }
                    continue;
                }
                let start = match &b.lower {
                    // Rows below an inclusive lower bound are those `< bound`.
                    Some((v, inclusive)) => first_not_below(keys, values.clone(), v, !inclusive)?,
                    None => values.start,
                };
                let end = match &b.upper {
                    Some((v, inclusive)) => {
                        first_not_below(keys, start..values.end, v, *inclusive)?
                    }
                    None => values.end,
                };
                if start < end {
                    narrowed.push(start..end);
                }
            }
            runs = narrowed;
            if runs.is_empty() {
                break;
            }
        }
        Ok(runs)
    }
}

/// The first row of `rows` (non-null, ascending) whose value is not below `bound` (`<`, or
/// `<=` when `inclusive`).
fn first_not_below(
    keys: &dyn Array,
    rows: Range<usize>,
    bound: &ScalarValue,
    inclusive: bool,
) -> Result<usize> {
    let (mut lo, mut hi) = (rows.start, rows.end);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        let below = match ScalarValue::try_from_array(keys, mid)?.partial_cmp(bound) {
            Some(Ordering::Less) => true,
            Some(Ordering::Equal) => inclusive,
            Some(Ordering::Greater) => false,
            // Not comparable (cannot happen for one type): keep the whole run.
            None => return Ok(if inclusive { rows.end } else { rows.start }),
        };
        if below {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    Ok(lo)
}

fn collect(e: &dyn PhysicalExpr, keys: &[KeyColumn<'_>], bounds: &mut [Bounds]) {
    if let Some(list) = (e as &dyn Any).downcast_ref::<InListExpr>() {
        collect_in_list(list, keys, bounds);
        return;
    }
    let Some(b) = (e as &dyn Any).downcast_ref::<BinaryExpr>() else {
        return;
    };
    if *b.op() == Operator::And {
        collect(b.left().as_ref(), keys, bounds);
        collect(b.right().as_ref(), keys, bounds);
        return;
    }
    if *b.op() == Operator::Or {
        // `k = 1 OR k = 2 ..` (how DataFusion spells a short IN list): points.
        let mut values = Vec::new();
        let Some(name) = equalities_on_one_column(e, &mut values) else {
            return;
        };
        if let Some(k) = keys.iter().position(|k| k.name == name) {
            set_points(&mut bounds[k], &keys[k], values);
        }
        return;
    }
    let (name, op, value) = match (column_name(b.left()), literal(b.right())) {
        (Some(name), Some(v)) => (name, *b.op(), v),
        _ => match (literal(b.left()), column_name(b.right())) {
            (Some(v), Some(name)) => match b.op().swap() {
                Some(op) => (name, op, v),
                None => return,
            },
            _ => return,
        },
    };
    let Some(k) = keys.iter().position(|k| k.name == name) else {
        return;
    };
    if !usable(&value, &keys[k]) {
        return;
    }
    let range = &mut bounds[k];
    // Several bounds on one side: keeping either is correct, the filter above applies all.
    match op {
        Operator::Eq => {
            range.lower = Some((value.clone(), true));
            range.upper = Some((value, true));
            range.equal = true;
            range.points.clear();
        }
        Operator::Gt if !range.equal => range.lower = Some((value, false)),
        Operator::GtEq if !range.equal => range.lower = Some((value, true)),
        Operator::Lt if !range.equal => range.upper = Some((value, false)),
        Operator::LtEq if !range.equal => range.upper = Some((value, true)),
        _ => {}
    }
}

/// Can this literal bound key `k`? Not NULL, of the column's own type (a literal of another
/// type was not coerced, and is left to the filter), and not a float, whose sort order
/// (-0.0 before 0.0) is not SQL's equality.
fn usable(value: &ScalarValue, key: &KeyColumn<'_>) -> bool {
    !value.is_null() && value.data_type() == *key.data_type && !value.data_type().is_floating()
}

/// `key IN (literals)`: a run per value, or their least..greatest when there are many.
fn collect_in_list(list: &InListExpr, keys: &[KeyColumn<'_>], bounds: &mut [Bounds]) {
    if list.negated() {
        return;
    }
    let Some(k) = column_name(list.expr()).and_then(|n| keys.iter().position(|k| k.name == n))
    else {
        return;
    };
    let mut values = Vec::with_capacity(list.list().len());
    for item in list.list() {
        match literal(item) {
            Some(v) => values.push(v),
            None => return,
        }
    }
    set_points(&mut bounds[k], &keys[k], values);
}

/// The column and values of `c = v1 OR c = v2 ..` (any nesting of OR), if that is all `e` is.
fn equalities_on_one_column<'a>(
    e: &'a dyn PhysicalExpr,
    values: &mut Vec<ScalarValue>,
) -> Option<&'a str> {
    let b = (e as &dyn Any).downcast_ref::<BinaryExpr>()?;
    match b.op() {
        Operator::Or => {
            let left = equalities_on_one_column(b.left().as_ref(), values)?;
            let right = equalities_on_one_column(b.right().as_ref(), values)?;
            (left == right).then_some(left)
        }
        Operator::Eq => {
            let (name, value) = match (column_name(b.left()), literal(b.right())) {
                (Some(n), Some(v)) => (n, v),
                _ => (column_name(b.right())?, literal(b.left())?),
            };
            values.push(value);
            Some(name)
        }
        _ => None,
    }
}

/// Bounds column `key` to `values` (an IN list or ORed equalities).
fn set_points(range: &mut Bounds, key: &KeyColumn<'_>, values: Vec<ScalarValue>) {
    let mut kept = Vec::with_capacity(values.len());
    for v in values {
        // A NULL matches nothing: the other values still bound the rows.
        if v.is_null() {
            continue;
        }
        if !usable(&v, key) {
            return;
        }
        kept.push(v);
    }
    let mut values = kept;
    values.sort_by(|a, b| a.partial_cmp(b).unwrap_or(Ordering::Equal));
    values.dedup();
    if range.equal || values.is_empty() {
        return;
    }
    if values.len() <= MAX_POINTS {
        range.points = values;
    } else if let (Some(least), Some(greatest)) = (values.first(), values.last()) {
        range.lower = Some((least.clone(), true));
        range.upper = Some((greatest.clone(), true));
    }
}

fn column_name(e: &Arc<dyn PhysicalExpr>) -> Option<&str> {
    (e.as_ref() as &dyn Any)
        .downcast_ref::<Column>()
        .map(|c| c.name())
}

fn literal(e: &Arc<dyn PhysicalExpr>) -> Option<ScalarValue> {
    (e.as_ref() as &dyn Any)
        .downcast_ref::<Literal>()
        .map(|l| l.value().clone())
}

#[cfg(test)]
// The expected values are lists of runs, often of one.
#[allow(clippy::single_range_in_vec_init)]
mod tests {
    use super::*;
    use datafusion::arrow::array::Int32Array;
    use datafusion::arrow::datatypes::{Field, Schema};
    use datafusion::physical_expr::expressions::{col, in_list, lit};

    fn range_of(pred: Arc<dyn PhysicalExpr>, keys: &Int32Array) -> Option<Vec<Range<usize>>> {
        let columns: Vec<ArrayRef> = vec![Arc::new(keys.clone())];
        KeyRange::from_predicate(&pred, &int_keys(&[("k", 0)])).map(|r| r.rows(&columns).unwrap())
    }

    fn ints(values: &[Option<i32>]) -> Int32Array {
        Int32Array::from(values.to_vec())
    }

    /// Int32 key columns: (name, place in the scanned columns), in sort-key order.
    fn int_keys<'a>(keys: &[(&'a str, usize)]) -> Vec<KeyColumn<'a>> {
        keys.iter()
            .map(|&(name, position)| KeyColumn {
                name,
                data_type: &DataType::Int32,
                position,
            })
            .collect()
    }

    fn bin(
        l: Arc<dyn PhysicalExpr>,
        op: Operator,
        r: Arc<dyn PhysicalExpr>,
    ) -> Arc<dyn PhysicalExpr> {
        Arc::new(BinaryExpr::new(l, op, r))
    }

    #[test]
    fn bounds_give_the_sorted_run() {
        let schema = Schema::new(vec![
            Field::new("k", DataType::Int32, true),
            Field::new("v", DataType::Int32, true),
        ]);
        let k = || col("k", &schema).unwrap();
        let keys = ints(&[None, None, Some(1), Some(3), Some(3), Some(3), Some(7)]);
        assert_eq!(
            range_of(bin(k(), Operator::Eq, lit(3i32)), &keys),
            Some(vec![3..6])
        );
        assert_eq!(
            range_of(bin(k(), Operator::Eq, lit(4i32)), &keys),
            Some(vec![])
        );
        assert_eq!(
            range_of(bin(k(), Operator::Gt, lit(3i32)), &keys),
            Some(vec![6..7])
        );
        assert_eq!(
            range_of(bin(lit(3i32), Operator::Lt, k()), &keys),
            Some(vec![6..7])
        );
        assert_eq!(
            range_of(bin(k(), Operator::LtEq, lit(3i32)), &keys),
            Some(vec![2..6])
        );
        let between = bin(
            bin(k(), Operator::GtEq, lit(1i32)),
            Operator::And,
            bin(
                bin(k(), Operator::Lt, lit(7i32)),
                Operator::And,
                bin(col("v", &schema).unwrap(), Operator::Eq, lit(1i32)),
            ),
        );
        assert_eq!(range_of(between, &keys), Some(vec![2..6]));
        // Other columns, other operators, an OR that is not equalities on the key, and literals
        // of another type give no range.
        assert_eq!(
            range_of(
                bin(col("v", &schema).unwrap(), Operator::Eq, lit(3i32)),
                &keys
            ),
            None
        );
        assert_eq!(range_of(bin(k(), Operator::NotEq, lit(3i32)), &keys), None);
        assert_eq!(range_of(bin(k(), Operator::Eq, lit(3i64)), &keys), None);
        let or = bin(
            bin(k(), Operator::Eq, lit(1i32)),
            Operator::Or,
            bin(k(), Operator::Gt, lit(7i32)),
        );
        assert_eq!(range_of(or, &keys), None);
    }

    #[test]
    fn in_lists_give_a_run_per_value() {
        let schema = Schema::new(vec![
            Field::new("a", DataType::Int32, true),
            Field::new("b", DataType::Int32, true),
        ]);
        let c = |n: &str| col(n, &schema).unwrap();
        let a = ints(&[
            None,
            Some(1),
            Some(1),
            Some(2),
            Some(2),
            Some(4),
            Some(4),
            Some(4),
        ]);
        let b = ints(&[
            Some(0),
            Some(5),
            Some(6),
            Some(1),
            Some(9),
            None,
            Some(3),
            Some(8),
        ]);
        let columns: Vec<ArrayRef> = vec![Arc::new(a), Arc::new(b)];
        let keys = int_keys(&[("a", 0), ("b", 1)]);
        let run = |pred: Arc<dyn PhysicalExpr>| {
            KeyRange::from_predicate(&pred, &keys).map(|r| r.rows(&columns).unwrap())
        };
        let list = |vals: &[i32], negated: bool| {
            let items = vals.iter().map(|v| lit(*v)).collect();
            in_list(c("a"), items, &negated, &schema).unwrap()
        };
        // Unordered, repeated, and absent values.
        assert_eq!(run(list(&[4, 1, 3, 1], false)), Some(vec![1..3, 5..8]));
        // Then a range on b inside each run; the NULL b of a = 4 is skipped.
        let and = bin(
            list(&[4, 1], false),
            Operator::And,
            bin(c("b"), Operator::Lt, lit(6i32)),
        );
        assert_eq!(run(and), Some(vec![1..2, 6..7]));
        // `=` wins over IN on the same column; NOT IN bounds nothing.
        let both = bin(
            list(&[1, 2], false),
            Operator::And,
            bin(c("a"), Operator::Eq, lit(2i32)),
        );
        assert_eq!(run(both), Some(vec![3..5]));
        assert_eq!(run(list(&[1], true)), None);
        // ORed equalities on one column (DataFusion's form of a short IN list) are points too.
        let or = bin(
            bin(c("a"), Operator::Eq, lit(4i32)),
            Operator::Or,
            bin(
                bin(lit(1i32), Operator::Eq, c("a")),
                Operator::Or,
                bin(c("a"), Operator::Eq, lit(3i32)),
            ),
        );
        assert_eq!(run(or), Some(vec![1..3, 5..8]));
        let mixed = bin(
            bin(c("a"), Operator::Eq, lit(4i32)),
            Operator::Or,
            bin(c("b"), Operator::Eq, lit(1i32)),
        );
        assert_eq!(run(mixed), None);
        // A long list bounds by its least and greatest values.
        let many: Vec<i32> = (2..2 + MAX_POINTS as i32 + 1).collect();
        assert_eq!(run(list(&many, false)), Some(vec![3..8]));
    }

    #[test]
    fn equal_leading_keys_narrow_by_the_next_one() {
        let schema = Schema::new(vec![
            Field::new("a", DataType::Int32, true),
            Field::new("b", DataType::Int32, true),
            Field::new("c", DataType::Int32, true),
        ]);
        let c = |n: &str| col(n, &schema).unwrap();
        // Sorted by (a, b, c), nulls first per column. The scan reads them as (c, b, a).
        let a = ints(&[
            None,
            Some(1),
            Some(1),
            Some(2),
            Some(2),
            Some(2),
            Some(2),
            Some(2),
            Some(3),
        ]);
        let b = ints(&[
            Some(9),
            Some(5),
            Some(6),
            None,
            Some(1),
            Some(4),
            Some(4),
            Some(8),
            Some(0),
        ]);
        let cc = ints(&[
            Some(0),
            Some(0),
            Some(0),
            Some(0),
            Some(0),
            Some(1),
            Some(2),
            Some(0),
            Some(0),
        ]);
        let columns: Vec<ArrayRef> = vec![Arc::new(cc), Arc::new(b), Arc::new(a)];
        let keys = int_keys(&[("a", 2), ("b", 1), ("c", 0)]);
        let run = |pred: Arc<dyn PhysicalExpr>| {
            KeyRange::from_predicate(&pred, &keys).map(|r| r.rows(&columns).unwrap())
        };
        let and = |l, r| bin(l, Operator::And, r);
        // a = 2 AND b BETWEEN 2 AND 5: rows 5..7 (b = 4); the NULL b is skipped.
        assert_eq!(
            run(and(
                bin(c("a"), Operator::Eq, lit(2i32)),
                and(
                    bin(c("b"), Operator::GtEq, lit(2i32)),
                    bin(c("b"), Operator::LtEq, lit(5i32))
                )
            )),
            Some(vec![5..7])
        );
        // All three fixed.
        assert_eq!(
            run(and(
                and(
                    bin(c("c"), Operator::Eq, lit(2i32)),
                    bin(c("a"), Operator::Eq, lit(2i32))
                ),
                bin(c("b"), Operator::Eq, lit(4i32))
            )),
            Some(vec![6..7])
        );
        // A range on a stops there: b's bound is not used (b is not sorted across a's values).
        assert_eq!(
            run(and(
                bin(c("a"), Operator::GtEq, lit(2i32)),
                bin(c("b"), Operator::Eq, lit(0i32))
            )),
            Some(vec![3..9])
        );
        // No bound on a: nothing, whatever b has.
        assert_eq!(run(bin(c("b"), Operator::Eq, lit(4i32))), None);
        // a = 2 AND b > 8: empty.
        assert_eq!(
            run(and(
                bin(c("a"), Operator::Eq, lit(2i32)),
                bin(c("b"), Operator::Gt, lit(8i32))
            )),
            Some(vec![])
        );
    }
}
