//! TIME values beside DATE / DATETIME values or numbers, typed as MySQL types them: a CASE (and
//! IF) or a comparison (`=`, `<`, IN, BETWEEN) that mixes a TIME with a DATE or DATETIME is a DATETIME, the TIME read as that span from today's
//! midnight (`TIME'10:20:30' = TIMESTAMP'2014-04-14 10:20:30'` compares two DATETIMEs); a TIME
//! compared with a number reads the number as a TIME (`TIME'10:10:10' > 101010` compares
//! 10:10:10 with 10:10:10). DataFusion found no common type and refused the query.
//!
//! An analyzer rule before type coercion casts the TIME operands to DATETIME (or the number
//! operands to TIME), and [`TimeBesideDatesPlanner`] does the same for comparisons as the SQL
//! is planned (DataFusion asks a comparison for its type before any rule runs);
//! [`crate::SignedTimeCasts`] then makes those casts MySQL's. COALESCE / GREATEST / LEAST of a
//! TIME and a date are [`crate::mixed_result_types`]' (which types CASE results first).

use crate::expr_rules::is_comparison;
use crate::expr_rules::rewrite_node_expressions;
use datafusion::arrow::datatypes::{DataType, TimeUnit};
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::Transformed;
use datafusion::common::{DFSchema, Result};
use datafusion::logical_expr::expr::{Between, BinaryExpr, Case, InList};
use datafusion::logical_expr::planner::{ExprPlanner, PlannerResult, RawBinaryExpr};
use datafusion::logical_expr::{Cast, Expr, ExprSchemable, LogicalPlan};
use datafusion::optimizer::AnalyzerRule;

/// The analyzer rule; it must run before DataFusion's type coercion.
#[derive(Debug, Default)]
pub struct TimeBesideDates;

impl AnalyzerRule for TimeBesideDates {
    fn name(&self) -> &str {
        "mysql_time_beside_dates"
    }

    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        plan.transform_up_with_subqueries(|node| rewrite_node_expressions(node, retyped))
            .map(|t| t.data)
    }
}

/// Retypes comparisons of a TIME with a date or a number while the SQL is planned.
#[derive(Debug, Default)]
pub struct TimeBesideDatesPlanner;

impl ExprPlanner for TimeBesideDatesPlanner {
    fn plan_binary_op(
        &self,
        expr: RawBinaryExpr,
        schema: &DFSchema,
    ) -> Result<PlannerResult<RawBinaryExpr>> {
        crate::expr_rules::plan_comparison(expr, schema, retyped)
    }
}

/// What an operand is, for the common type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Time,
    Date,
    Number,
    Other,
}

fn kind(e: &Expr, schema: &DFSchema) -> Kind {
    match e.get_type(schema) {
        Ok(DataType::Time64(_) | DataType::Time32(_)) => Kind::Time,
        Ok(DataType::Date32 | DataType::Date64 | DataType::Timestamp(_, None)) => Kind::Date,
        Ok(t) if t.is_numeric() => Kind::Number,
        _ => Kind::Other,
    }
}

fn datetime() -> DataType {
    DataType::Timestamp(TimeUnit::Microsecond, None)
}

fn cast(e: Expr, to: DataType) -> Expr {
    Expr::Cast(Cast::new(Box::new(e), to))
}

/// Results of alternatives (CASE branches, COALESCE arguments): a TIME among dates becomes a
/// DATETIME. None when nothing changes.
fn alternatives(values: &[Kind]) -> Option<DataType> {
    (values.contains(&Kind::Time) && values.contains(&Kind::Date)).then(datetime)
}

/// Compared operands: a TIME beside a date is a DATETIME; a number beside a TIME is a TIME.
fn compared(values: &[Kind]) -> Option<(Kind, DataType)> {
    if !values.contains(&Kind::Time) {
        return None;
    }
    if values.contains(&Kind::Date) {
        return Some((Kind::Time, datetime()));
    }
    if values.contains(&Kind::Number) {
        return Some((Kind::Number, DataType::Time64(TimeUnit::Microsecond)));
    }
    None
}

fn convert(e: Expr, k: Kind, from: Kind, to: &DataType) -> Expr {
    if k == from {
        cast(e, to.clone())
    } else {
        e
    }
}

fn retyped(e: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    let k = |e: &Expr| kind(e, schema);
    Ok(match e {
        Expr::Case(case) => {
            let mut kinds: Vec<Kind> = case.when_then_expr.iter().map(|(_, t)| k(t)).collect();
            if let Some(e) = &case.else_expr {
                kinds.push(k(e));
            }
            let Some(to) = alternatives(&kinds) else {
                return Ok(Transformed::no(Expr::Case(case)));
            };
            let Case {
                expr,
                when_then_expr,
                else_expr,
            } = case;
            let branch = |e: Box<Expr>| {
                let kind = k(&e);
                Box::new(convert(*e, kind, Kind::Time, &to))
            };
            Transformed::yes(Expr::Case(Case {
                expr,
                when_then_expr: when_then_expr
                    .into_iter()
                    .map(|(w, t)| (w, branch(t)))
                    .collect(),
                else_expr: else_expr.map(branch),
            }))
        }
        Expr::BinaryExpr(BinaryExpr { left, op, right }) if is_comparison(&op) => {
            let (lk, rk) = (k(&left), k(&right));
            match compared(&[lk, rk]) {
                Some((from, to)) => Transformed::yes(Expr::BinaryExpr(BinaryExpr {
                    left: Box::new(convert(*left, lk, from, &to)),
                    op,
                    right: Box::new(convert(*right, rk, from, &to)),
                })),
                None => Transformed::no(Expr::BinaryExpr(BinaryExpr { left, op, right })),
            }
        }
        Expr::InList(in_list) => {
            let mut kinds = vec![k(&in_list.expr)];
            kinds.extend(in_list.list.iter().map(k));
            let Some((from, to)) = compared(&kinds) else {
                return Ok(Transformed::no(Expr::InList(in_list)));
            };
            let InList {
                expr,
                list,
                negated,
            } = in_list;
            Transformed::yes(Expr::InList(InList {
                expr: Box::new(convert(*expr, kinds[0], from, &to)),
                list: list
                    .into_iter()
                    .zip(kinds.into_iter().skip(1))
                    .map(|(e, kind)| convert(e, kind, from, &to))
                    .collect(),
                negated,
            }))
        }
        Expr::Between(between) => {
            let kinds = [k(&between.expr), k(&between.low), k(&between.high)];
            let Some((from, to)) = compared(&kinds) else {
                return Ok(Transformed::no(Expr::Between(between)));
            };
            let Between {
                expr,
                negated,
                low,
                high,
            } = between;
            Transformed::yes(Expr::Between(Between {
                expr: Box::new(convert(*expr, kinds[0], from, &to)),
                negated,
                low: Box::new(convert(*low, kinds[1], from, &to)),
                high: Box::new(convert(*high, kinds[2], from, &to)),
            }))
        }
        other => Transformed::no(other),
    })
}
