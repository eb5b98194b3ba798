//! Row ranges from the sort key: segments are sorted by their key columns (nulls first), so the
//! rows of a row group whose first key column can meet the scan's bounds on it (`=`, `<`, `<=`,
//! `>`, `>=`, BETWEEN) are one contiguous run. The scan slices its (cached) column arrays to that
//! run instead of handing every row of the row group to the filter above — Doris's short-key
//! index does the same job.

use datafusion::arrow::array::{Array, ArrayRef, Scalar};
use datafusion::arrow::compute::kernels::cmp::{lt, lt_eq};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{Result, ScalarValue};
use datafusion::logical_expr::Operator;
use datafusion::physical_expr::expressions::{BinaryExpr, Column, Literal};
use datafusion::physical_expr::PhysicalExpr;
use std::any::Any;
use std::ops::Range;
use std::sync::Arc;

/// Bounds on the first key column that every row the scan must return satisfies.
#[derive(Debug, Clone, Default)]
pub(crate) struct KeyRange {
    /// (value, inclusive)
    lower: Option<(ArrayRef, bool)>,
    upper: Option<(ArrayRef, bool)>,
}

impl KeyRange {
    /// The bounds the conjuncts of `predicate` put on column `key` (of type `ty`); `None` when
    /// it puts none.
    pub(crate) fn from_predicate(
        predicate: &Arc<dyn PhysicalExpr>,
        key: &str,
        ty: &DataType,
    ) -> Option<KeyRange> {
        let mut range = KeyRange::default();
        collect(predicate.as_ref(), key, ty, &mut range);
        (range.lower.is_some() || range.upper.is_some()).then_some(range)
    }

    /// The rows of `keys` (sorted ascending, nulls first) within the bounds.
    pub(crate) fn rows(&self, keys: &dyn Array) -> Result<Range<usize>> {
        // Nulls sort first and meet no bound.
        let nulls = keys.null_count();
        let below = |bound: &ArrayRef, inclusive: bool| -> Result<usize> {
            let bound = Scalar::new(bound.clone());
            let mask = if inclusive {
                lt_eq(&keys, &bound)?
            } else {
                lt(&keys, &bound)?
            };
            Ok(nulls + mask.true_count())
        };
        let start = match &self.lower {
            // Rows below an inclusive lower bound are those `< bound`.
            Some((b, inclusive)) => below(b, !inclusive)?,
            None => nulls,
        };
        let end = match &self.upper {
            Some((b, inclusive)) => below(b, *inclusive)?,
            None => keys.len(),
        };
        Ok(start..end.max(start))
    }
}

fn collect(e: &dyn PhysicalExpr, key: &str, ty: &DataType, range: &mut KeyRange) {
    let Some(b) = (e as &dyn Any).downcast_ref::<BinaryExpr>() else {
        return;
    };
    if *b.op() == Operator::And {
        collect(b.left().as_ref(), key, ty, range);
        collect(b.right().as_ref(), key, ty, range);
        return;
    }
    let (op, value) = match (column_name(b.left()), literal(b.right())) {
        (Some(name), Some(v)) if name == key => (*b.op(), v),
        _ => match (literal(b.left()), column_name(b.right())) {
            (Some(v), Some(name)) if name == key => match b.op().swap() {
                Some(op) => (op, v),
                None => return,
            },
            _ => return,
        },
    };
    // A literal of another type (not coerced) is left to the filter.
    if value.is_null() || value.data_type() != *ty {
        return;
    }
    let Ok(bound) = value.to_array() else {
        return;
    };
    // Several bounds on one side: keeping either is correct, the filter above applies all.
    match op {
        Operator::Eq => {
            range.lower = Some((bound.clone(), true));
            range.upper = Some((bound, true));
        }
        Operator::Gt => range.lower = Some((bound, false)),
        Operator::GtEq => range.lower = Some((bound, true)),
        Operator::Lt => range.upper = Some((bound, false)),
        Operator::LtEq => range.upper = Some((bound, true)),
        _ => {}
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
mod tests {
    use super::*;
    use datafusion::arrow::array::Int32Array;
    use datafusion::arrow::datatypes::{Field, Schema};
    use datafusion::physical_expr::expressions::{col, lit};

    fn range_of(pred: Arc<dyn PhysicalExpr>, keys: &Int32Array) -> Option<Range<usize>> {
        KeyRange::from_predicate(&pred, "k", &DataType::Int32).map(|r| r.rows(keys).unwrap())
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
        let keys = Int32Array::from(vec![
            None,
            None,
            Some(1),
            Some(3),
            Some(3),
            Some(3),
            Some(7),
        ]);
        assert_eq!(
            range_of(bin(k(), Operator::Eq, lit(3i32)), &keys),
            Some(3..6)
        );
        assert_eq!(
            range_of(bin(k(), Operator::Eq, lit(4i32)), &keys),
            Some(6..6)
        );
        assert_eq!(
            range_of(bin(k(), Operator::Gt, lit(3i32)), &keys),
            Some(6..7)
        );
        assert_eq!(
            range_of(bin(lit(3i32), Operator::Lt, k()), &keys),
            Some(6..7)
        );
        assert_eq!(
            range_of(bin(k(), Operator::LtEq, lit(3i32)), &keys),
            Some(2..6)
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
        assert_eq!(range_of(between, &keys), Some(2..6));
        // Other columns, other operators, OR, and literals of another type give no range.
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
            bin(k(), Operator::Eq, lit(7i32)),
        );
        assert_eq!(range_of(or, &keys), None);
    }
}
