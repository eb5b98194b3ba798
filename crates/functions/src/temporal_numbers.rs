//! DATE and DATETIME values cast to numbers, as MySQL and Doris read them: `CAST(dt AS
//! SIGNED)`, `CAST(dt AS DECIMAL(30, 7))`, `CAST(d AS DOUBLE)` see the number
//! `YYYYMMDD[hhmmss[.ffffff]]`. DataFusion cast a DATETIME to its microseconds since 1970
//! (`20060810101112` came out as `1155204672000000`), a DATE to its days since 1970, and
//! refused DOUBLE and DECIMAL. `SUM(d)` adds those numbers (Basalt's SUM takes the value while
//! the statement is planned, and so does AVG, [`crate::temporal_avg`]). An analyzer rule before
//! type coercion sends such values through
//! [`crate::date_number`]: an integer target gets the truncated number (as MySQL's CAST AS
//! SIGNED truncates), a DECIMAL or floating-point target the fraction. (A TIME cast to a number is [`crate::SignedTimeCasts`]'s.)

use crate::date_number::is_date_like;
use crate::expr_rules::rewrite_node_expressions;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::Transformed;
use datafusion::common::{DFSchema, Result};
use datafusion::logical_expr::expr::TryCast;
use datafusion::logical_expr::{Cast, Expr, ExprSchemable, LogicalPlan};
use datafusion::optimizer::AnalyzerRule;

/// The analyzer rule; it must run before DataFusion's type coercion.
#[derive(Debug, Default)]
pub struct TemporalNumbers;

impl AnalyzerRule for TemporalNumbers {
    fn name(&self) -> &str {
        "mysql_temporal_numbers"
    }

    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        plan.transform_up_with_subqueries(|node| rewrite_node_expressions(node, numbers))
            .map(|t| t.data)
    }
}

fn numbers(e: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    // A TIME cast to a number is already MySQL's (`crate::SignedTimeCasts`).
    let date_like = |e: &Expr| e.get_type(schema).ok().as_ref().is_some_and(is_date_like);
    Ok(match e {
        Expr::Cast(Cast { expr, field }) if field.data_type().is_numeric() && date_like(&expr) => {
            let number = number(*expr, field.data_type());
            Transformed::yes(Expr::Cast(Cast {
                expr: Box::new(number),
                field,
            }))
        }
        Expr::TryCast(TryCast { expr, field })
            if field.data_type().is_numeric() && date_like(&expr) =>
        {
            let number = number(*expr, field.data_type());
            Transformed::yes(Expr::TryCast(TryCast {
                expr: Box::new(number),
                field,
            }))
        }
        // SUM(d), AVG(d): of the numbers (the functions take the value while planned).
        Expr::AggregateFunction(mut f)
            if matches!(f.func.name(), "sum" | "avg")
                && f.params.args.len() == 1
                && f.params.args[0]
                    .get_type(schema)
                    .is_ok_and(|t| crate::date_number::is_temporal(&t)) =>
        {
            let value = f.params.args.remove(0);
            let digits = crate::date_number::declared_digits(&value, schema);
            f.params.args.push(crate::date_number::call(value, digits));
            Transformed::yes(Expr::AggregateFunction(f))
        }
        Expr::WindowFunction(mut w)
            if matches!(w.fun.name(), "sum" | "avg")
                && w.params.args.len() == 1
                && w.params.args[0]
                    .get_type(schema)
                    .is_ok_and(|t| crate::date_number::is_temporal(&t)) =>
        {
            let value = w.params.args.remove(0);
            let digits = crate::date_number::declared_digits(&value, schema);
            w.params.args.push(crate::date_number::call(value, digits));
            Transformed::yes(Expr::WindowFunction(w))
        }
        other => Transformed::no(other),
    })
}

/// `value` as its number for a cast to `target`: truncated to an integer for an integer
/// target, with all of its fraction otherwise (the cast then rounds it to the target's scale).
fn number(value: Expr, target: &DataType) -> Expr {
    let digits = if target.is_integer() { 0 } else { 6 };
    crate::date_number::call(value, digits)
}
