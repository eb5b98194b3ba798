//! Cardinality estimates over logical plans, for the join order rule: rows out of each
//! operator and, per output column, a distinct-value count and numeric bounds. Base numbers
//! come from `TableProvider::statistics` (Basalt's tables: catalog row counts and footer
//! min/max); filters scale them by textbook selectivities (1/ndv for equality, the covered
//! fraction of [min, max] for ranges, fixed guesses otherwise); an equi-join multiplies its
//! inputs' rows by 1/max(distinct key combinations of either side).

use datafusion::catalog::default_table_source::source_as_provider;
use datafusion::common::{DFSchema, ScalarValue};
use datafusion::logical_expr::{
    Aggregate, BinaryExpr, Expr, Join, JoinType, LogicalPlan, Operator, TableScan,
};

/// Rows assumed for an input nothing is known about.
const UNKNOWN_ROWS: f64 = 1000.0;
/// Selectivity of `col = value` when the column's distinct count is unknown.
const EQUALITY: f64 = 0.1;
/// Selectivity of a range or other comparison nothing better is known about.
const RANGE: f64 = 1.0 / 3.0;
/// Selectivity of a predicate of a form not estimated here.
const OTHER: f64 = 0.25;

/// What is known about one output column.
#[derive(Debug, Clone, Default)]
pub(crate) struct ColumnEstimate {
    pub ndv: Option<f64>,
    pub min: Option<f64>,
    pub max: Option<f64>,
}

/// Rows out of a plan and its columns, by output position.
#[derive(Debug, Clone)]
pub(crate) struct Estimate {
    pub rows: f64,
    pub columns: Vec<ColumnEstimate>,
}

impl Estimate {
    fn unknown(rows: f64, width: usize) -> Estimate {
        Estimate {
            rows,
            columns: vec![ColumnEstimate::default(); width],
        }
    }

    /// Caps distinct counts at the row count (after a filter or join shrank it).
    pub(crate) fn clamp(mut self) -> Estimate {
        self.rows = self.rows.max(1.0);
        for c in &mut self.columns {
            if let Some(n) = c.ndv.as_mut() {
                *n = n.min(self.rows).max(1.0);
            }
        }
        self
    }

    /// Distinct values of `expr` (a column, possibly cast) over `schema`. Unknown (a string
    /// column: footers bound it but do not count it), the square root of the rows: assuming
    /// every value distinct would make a join on it look no larger than its smaller input,
    /// and a join of two dimensions on a low-cardinality text column (TPC-DS Q85:
    /// cd1.cd_marital_status = cd2.cd_marital_status) first.
    pub(crate) fn ndv(&self, expr: &Expr, schema: &DFSchema) -> f64 {
        self.column(expr, schema)
            .and_then(|c| c.ndv)
            .unwrap_or_else(|| self.rows.sqrt())
            .min(self.rows)
            .max(1.0)
    }

    fn column(&self, expr: &Expr, schema: &DFSchema) -> Option<&ColumnEstimate> {
        let i = column_index(expr, schema)?;
        self.columns.get(i)
    }
}

/// The output position of `expr` when it is a column (or a cast of one).
fn column_index(expr: &Expr, schema: &DFSchema) -> Option<usize> {
    match expr {
        Expr::Column(c) => schema.index_of_column(c).ok(),
        Expr::Cast(c) => column_index(&c.expr, schema),
        Expr::TryCast(c) => column_index(&c.expr, schema),
        Expr::Alias(a) => column_index(&a.expr, schema),
        _ => None,
    }
}

/// The estimate of `plan`'s output.
pub(crate) fn estimate(plan: &LogicalPlan) -> Estimate {
    let width = plan.schema().fields().len();
    let mut e = match plan {
        LogicalPlan::TableScan(scan) => {
            let mut e = scan_estimate(scan);
            for f in &scan.filters {
                e = filtered(e, f, &scan.projected_schema);
            }
            e
        }
        LogicalPlan::Filter(f) => {
            // A scan's pushed-down filters repeat the Filter above it.
            let input = match f.input.as_ref() {
                LogicalPlan::TableScan(scan) => scan_estimate(scan),
                input => estimate(input),
            };
            filtered(input, &f.predicate, f.input.schema())
        }
        LogicalPlan::Projection(p) => {
            let input = estimate(&p.input);
            let columns = p
                .expr
                .iter()
                .map(|e| {
                    input
                        .column(e, p.input.schema())
                        .cloned()
                        .unwrap_or_default()
                })
                .collect();
            Estimate {
                rows: input.rows,
                columns,
            }
        }
        LogicalPlan::SubqueryAlias(a) => estimate(&a.input),
        LogicalPlan::Aggregate(a) => aggregate_estimate(a),
        LogicalPlan::Join(j) => join_estimate(j),
        LogicalPlan::Union(u) => union_estimate(u.inputs.iter().map(|i| estimate(i)), width),
        LogicalPlan::Values(v) => Estimate::unknown(v.values.len() as f64, width),
        LogicalPlan::EmptyRelation(e) => {
            Estimate::unknown(if e.produce_one_row { 1.0 } else { 0.0 }, width)
        }
        LogicalPlan::Limit(l) => {
            let mut e = estimate(&l.input);
            if let Ok(datafusion::logical_expr::FetchType::Literal(Some(n))) = l.get_fetch_type() {
                e.rows = e.rows.min(n as f64);
            }
            e
        }
        // Operators that keep their input's rows (and append columns, for windows).
        LogicalPlan::Sort(_)
        | LogicalPlan::Window(_)
        | LogicalPlan::Repartition(_)
        | LogicalPlan::Distinct(_)
        | LogicalPlan::Subquery(_) => match plan.inputs().first() {
            Some(input) => estimate(input),
            None => Estimate::unknown(UNKNOWN_ROWS, width),
        },
        _ => {
            let rows = plan.inputs().iter().map(|i| estimate(i).rows).sum::<f64>();
            Estimate::unknown(if rows > 0.0 { rows } else { UNKNOWN_ROWS }, width)
        }
    };
    e.columns.resize(width, ColumnEstimate::default());
    e.clamp()
}

/// UNION ALL: the inputs' rows added up; per column, the largest distinct count and bounds
/// widened, where every input knows them.
fn union_estimate(inputs: impl Iterator<Item = Estimate>, width: usize) -> Estimate {
    let mut rows = 0.0;
    let mut columns: Option<Vec<ColumnEstimate>> = None;
    for input in inputs {
        rows += input.rows;
        columns = Some(match columns {
            None => input.columns,
            Some(acc) => acc
                .into_iter()
                .zip(input.columns)
                .map(|(a, b)| ColumnEstimate {
                    ndv: a.ndv.zip(b.ndv).map(|(x, y)| x.max(y)),
                    min: a.min.zip(b.min).map(|(x, y)| x.min(y)),
                    max: a.max.zip(b.max).map(|(x, y)| x.max(y)),
                })
                .collect(),
        });
    }
    let mut columns = columns.unwrap_or_default();
    columns.resize(width, ColumnEstimate::default());
    Estimate { rows, columns }
}

/// A table scan before its filters: the provider's row count and column statistics.
fn scan_estimate(scan: &TableScan) -> Estimate {
    let width = scan.projected_schema.fields().len();
    let Some(stats) = source_as_provider(&scan.source)
        .ok()
        .and_then(|p| p.statistics())
    else {
        return Estimate::unknown(UNKNOWN_ROWS, width);
    };
    let rows = stats
        .num_rows
        .get_value()
        .map_or(UNKNOWN_ROWS, |n| *n as f64);
    let source_schema = scan.source.schema();
    let indexes: Vec<usize> = match &scan.projection {
        Some(p) => p.clone(),
        None => (0..source_schema.fields().len()).collect(),
    };
    let columns = indexes
        .iter()
        .map(|&i| {
            let Some(c) = stats.column_statistics.get(i) else {
                return ColumnEstimate::default();
            };
            let min = c.min_value.get_value().and_then(scalar_f64);
            let max = c.max_value.get_value().and_then(scalar_f64);
            let discrete = source_schema
                .fields()
                .get(i)
                .is_some_and(|f| f.data_type().is_integer() || f.data_type().is_temporal());
            let ndv = match (c.distinct_count.get_value(), min, max) {
                (Some(n), _, _) => Some(*n as f64),
                // An integer (or date) column holds at most max - min + 1 values.
                (None, Some(lo), Some(hi)) if discrete => Some((hi - lo + 1.0).min(rows)),
                _ => None,
            };
            ColumnEstimate { ndv, min, max }
        })
        .collect();
    Estimate { rows, columns }
}

/// `input` after the filter `predicate` (over `schema`).
fn filtered(mut input: Estimate, predicate: &Expr, schema: &DFSchema) -> Estimate {
    let s = selectivity(predicate, &input, schema);
    // A column compared for equality with a value keeps one value.
    for conjunct in datafusion::logical_expr::utils::split_conjunction(predicate) {
        if let Some((column, _)) = column_and_literal(conjunct, Operator::Eq) {
            if let Some(i) = column_index(column, schema) {
                if let Some(c) = input.columns.get_mut(i) {
                    c.ndv = Some(1.0);
                }
            }
        }
    }
    input.rows *= s;
    input.clamp()
}

/// The fraction of rows `predicate` keeps.
pub(crate) fn selectivity(predicate: &Expr, input: &Estimate, schema: &DFSchema) -> f64 {
    let s = match predicate {
        Expr::BinaryExpr(BinaryExpr { left, op, right }) => match op {
            Operator::And => selectivity(left, input, schema) * selectivity(right, input, schema),
            Operator::Or => {
                let (a, b) = (
                    selectivity(left, input, schema),
                    selectivity(right, input, schema),
                );
                a + b - a * b
            }
            Operator::Eq => equality(left, right, input, schema),
            Operator::NotEq => 1.0 - equality(left, right, input, schema),
            Operator::Lt | Operator::LtEq | Operator::Gt | Operator::GtEq => {
                range_selectivity(predicate, input, schema).unwrap_or(RANGE)
            }
            _ => OTHER,
        },
        Expr::Not(e) => 1.0 - selectivity(e, input, schema),
        Expr::Between(b) => {
            let inside = match (
                input.column(&b.expr, schema),
                literal_f64(&b.low),
                literal_f64(&b.high),
            ) {
                (Some(c), Some(lo), Some(hi)) => covered(c, Some(lo), Some(hi)),
                _ => None,
            }
            .unwrap_or(RANGE);
            if b.negated {
                1.0 - inside
            } else {
                inside
            }
        }
        Expr::InList(l) => {
            let one = match input.column(&l.expr, schema).and_then(|c| c.ndv) {
                Some(n) => 1.0 / n.max(1.0),
                None => EQUALITY,
            };
            let inside = (one * l.list.len() as f64).min(1.0);
            if l.negated {
                1.0 - inside
            } else {
                inside
            }
        }
        Expr::Like(l) => {
            if l.negated {
                1.0 - EQUALITY
            } else {
                EQUALITY
            }
        }
        Expr::IsNull(_) => 0.05,
        Expr::IsNotNull(_) => 0.95,
        Expr::Literal(ScalarValue::Boolean(Some(true)), _) => 1.0,
        Expr::Literal(ScalarValue::Boolean(Some(false)), _) => 0.0,
        _ => OTHER,
    };
    s.clamp(0.0, 1.0)
}

fn equality(left: &Expr, right: &Expr, input: &Estimate, schema: &DFSchema) -> f64 {
    let ndv = |e: &Expr| input.column(e, schema).and_then(|c| c.ndv);
    let value = |e: &Expr| matches!(e, Expr::Literal(..) | Expr::Placeholder(_));
    match (ndv(left), ndv(right)) {
        (Some(n), _) if value(right) => 1.0 / n.max(1.0),
        (_, Some(n)) if value(left) => 1.0 / n.max(1.0),
        (Some(a), Some(b)) => 1.0 / a.max(b).max(1.0),
        _ => EQUALITY,
    }
}

/// `col <op> value` or `value <op> col` by the column's [min, max].
fn range_selectivity(predicate: &Expr, input: &Estimate, schema: &DFSchema) -> Option<f64> {
    let Expr::BinaryExpr(BinaryExpr { left, op, right }) = predicate else {
        return None;
    };
    let (column, op, value) = match (literal_f64(left), literal_f64(right)) {
        (None, Some(v)) => (left, *op, v),
        (Some(v), None) => (right, op.swap()?, v),
        _ => return None,
    };
    let c = input.column(column, schema)?;
    match op {
        Operator::Lt | Operator::LtEq => covered(c, None, Some(value)),
        Operator::Gt | Operator::GtEq => covered(c, Some(value), None),
        _ => None,
    }
}

/// The fraction of [min, max] inside [lo, hi] (each end open when `None`).
fn covered(c: &ColumnEstimate, lo: Option<f64>, hi: Option<f64>) -> Option<f64> {
    let (min, max) = (c.min?, c.max?);
    if max <= min {
        return None;
    }
    let from = lo.unwrap_or(min).max(min);
    let to = hi.unwrap_or(max).min(max);
    // A discrete column's range counts its last value too.
    let width = max - min + 1.0;
    Some(((to - from + 1.0) / width).clamp(0.0, 1.0))
}

fn column_and_literal(expr: &Expr, wanted: Operator) -> Option<(&Expr, &ScalarValue)> {
    let Expr::BinaryExpr(BinaryExpr { left, op, right }) = expr else {
        return None;
    };
    if *op != wanted {
        return None;
    }
    match (left.as_ref(), right.as_ref()) {
        (Expr::Literal(v, _), c) | (c, Expr::Literal(v, _)) if column_like(c) => Some((c, v)),
        _ => None,
    }
}

fn column_like(expr: &Expr) -> bool {
    match expr {
        Expr::Column(_) => true,
        Expr::Cast(c) => column_like(&c.expr),
        Expr::TryCast(c) => column_like(&c.expr),
        _ => false,
    }
}

fn literal_f64(expr: &Expr) -> Option<f64> {
    match expr {
        Expr::Literal(v, _) => scalar_f64(v),
        Expr::Cast(c) => literal_f64(&c.expr),
        _ => None,
    }
}

/// A numeric or date value on one axis with the column statistics it is compared with.
fn scalar_f64(v: &ScalarValue) -> Option<f64> {
    Some(match v {
        ScalarValue::Int8(Some(x)) => *x as f64,
        ScalarValue::Int16(Some(x)) => *x as f64,
        ScalarValue::Int32(Some(x)) => *x as f64,
        ScalarValue::Int64(Some(x)) => *x as f64,
        ScalarValue::UInt8(Some(x)) => *x as f64,
        ScalarValue::UInt16(Some(x)) => *x as f64,
        ScalarValue::UInt32(Some(x)) => *x as f64,
        ScalarValue::UInt64(Some(x)) => *x as f64,
        ScalarValue::Float32(Some(x)) => *x as f64,
        ScalarValue::Float64(Some(x)) => *x,
        ScalarValue::Decimal128(Some(x), _, s) => *x as f64 / 10f64.powi(*s as i32),
        ScalarValue::Date32(Some(x)) => *x as f64,
        _ => return None,
    })
}

/// Rows out of a GROUP BY: at most the input's, at most the product of the keys' distinct
/// counts.
fn aggregate_estimate(a: &Aggregate) -> Estimate {
    let input = estimate(&a.input);
    let width = a.schema.fields().len();
    if a.group_expr.is_empty() {
        return Estimate::unknown(1.0, width);
    }
    let schema = a.input.schema();
    let groups = a
        .group_expr
        .iter()
        .map(|g| input.ndv(g, schema))
        .fold(1.0f64, |acc, n| acc * n)
        .min(input.rows);
    // One key has a value per group; each of several at most that many.
    let single = a.group_expr.len() == 1;
    let mut columns: Vec<ColumnEstimate> = a
        .group_expr
        .iter()
        .map(|g| {
            let mut c = input.column(g, schema).cloned().unwrap_or_default();
            c.ndv = Some(match c.ndv {
                Some(n) if !single => n.min(groups),
                _ if !single => input.ndv(g, schema).min(groups),
                _ => groups,
            });
            c
        })
        .collect();
    columns.resize(width, ColumnEstimate::default());
    Estimate {
        rows: groups,
        columns,
    }
}

/// The selectivity of equi-join key pairs: 1/max of the two sides' distinct key
/// combinations, each side's the product of its keys' distinct counts, at most its rows (a
/// composite key such as partsupp's (partkey, suppkey) is as selective as its row count
/// allows, not as the product of its parts).
pub(crate) fn keys_selectivity(
    on: &[(Expr, Expr)],
    left: &Estimate,
    left_schema: &DFSchema,
    right: &Estimate,
    right_schema: &DFSchema,
) -> f64 {
    if on.is_empty() {
        return 1.0;
    }
    let combinations = |side: &Estimate, schema: &DFSchema, keys: Vec<&Expr>| {
        keys.into_iter()
            .map(|k| side.ndv(k, schema))
            .fold(1.0f64, |acc, n| acc * n)
            .min(side.rows)
            .max(1.0)
    };
    let l = combinations(left, left_schema, on.iter().map(|(l, _)| l).collect());
    let r = combinations(right, right_schema, on.iter().map(|(_, r)| r).collect());
    1.0 / l.max(r)
}

fn join_estimate(j: &Join) -> Estimate {
    let left = estimate(&j.left);
    let right = estimate(&j.right);
    let mut inner = left.rows
        * right.rows
        * keys_selectivity(&j.on, &left, j.left.schema(), &right, j.right.schema());
    if let Some(filter) = &j.filter {
        let conjuncts = datafusion::logical_expr::utils::split_conjunction(filter).len();
        inner *= RANGE.powi(conjuncts as i32);
    }
    let both = |rows: f64| {
        let mut columns = left.columns.clone();
        columns.extend(right.columns.iter().cloned());
        Estimate { rows, columns }
    };
    match j.join_type {
        JoinType::Inner => both(inner),
        JoinType::Left => both(inner.max(left.rows)),
        JoinType::Right => both(inner.max(right.rows)),
        JoinType::Full => both(inner.max(left.rows + right.rows)),
        JoinType::LeftSemi | JoinType::LeftAnti | JoinType::LeftMark => left.clone(),
        JoinType::RightSemi | JoinType::RightAnti | JoinType::RightMark => right.clone(),
    }
}
