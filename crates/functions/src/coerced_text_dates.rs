//! Casts of text to DATE or DATETIME that DataFusion's type coercion adds (a string given to
//! a date function: `TIMEDIFF(NULL, '12:12:12')`, `DATE_FORMAT(CONCAT('19980131', 131415),
//! ..)`) read the text as MySQL reads a date, as the query's own casts do (see
//! [`crate::ImplicitCasts`]): `19980131131415` is 1998-01-31 13:14:15, and text that names no
//! date is NULL, where Arrow's parser failed the whole query. Where values are stored (an
//! INSERT, a checked load) a string that is no date still fails.

use crate::expr_rules::rewrite_node_expressions;
use datafusion::arrow::datatypes::{DataType, TimeUnit};
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::Transformed;
use datafusion::common::{DFSchema, Result, ScalarValue};
use datafusion::logical_expr::expr::TryCast;
use datafusion::logical_expr::{Cast, Expr, ExprSchemable, LogicalPlan};
use datafusion::optimizer::AnalyzerRule;

/// The analyzer rule; it runs after DataFusion's type coercion.
#[derive(Debug, Default)]
pub struct CoercedTextDates;

impl AnalyzerRule for CoercedTextDates {
    fn name(&self) -> &str {
        "mysql_coerced_text_dates"
    }

    fn analyze(&self, plan: LogicalPlan, config: &ConfigOptions) -> Result<LogicalPlan> {
        let lenient = config
            .extensions
            .get::<crate::MySqlOptions>()
            .is_none_or(|o| o.lenient_string_casts);
        let strict = matches!(plan, LogicalPlan::Dml(_)) || !lenient;
        plan.transform_up_with_subqueries(|node| {
            rewrite_node_expressions(node, |e, schema| dates(e, schema, strict))
        })
        .map(|t| t.data)
    }
}

fn is_text(t: &DataType) -> bool {
    matches!(t, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View)
}

fn is_date(t: &DataType) -> bool {
    matches!(t, DataType::Date32 | DataType::Timestamp(_, None))
}

fn dates(e: Expr, schema: &DFSchema, strict: bool) -> Result<Transformed<Expr>> {
    let text = |e: &Expr| e.get_type(schema).ok().as_ref().is_some_and(is_text);
    Ok(match e {
        Expr::Cast(Cast { expr, field }) if is_date(field.data_type()) && text(&expr) => {
            match crate::implicit_casts::temporal(*expr, field.data_type(), strict) {
                Ok(date) => Transformed::yes(date),
                Err(expr) => Transformed::no(Expr::Cast(Cast::new_from_field(expr.into(), field))),
            }
        }
        Expr::TryCast(TryCast { expr, field }) if is_date(field.data_type()) && text(&expr) => {
            match crate::implicit_casts::temporal(*expr, field.data_type(), false) {
                Ok(date) => Transformed::yes(date),
                Err(expr) => Transformed::no(Expr::TryCast(TryCast {
                    expr: Box::new(expr),
                    field,
                })),
            }
        }
        // `EXTRACT(YEAR FROM '0001-02-03')`: DataFusion coerces text for `date_part` to a
        // nanosecond DATETIME, which ends in 2262 and starts in 1677; it takes the
        // microseconds the text was read as (its result, a number, does not change type).
        Expr::ScalarFunction(mut f) if f.name() == "date_part" => {
            let mut changed = false;
            for arg in f.args.iter_mut() {
                let Expr::Cast(Cast { expr, field }) = arg else {
                    continue;
                };
                let nanos = matches!(
                    field.data_type(),
                    DataType::Timestamp(TimeUnit::Nanosecond, None)
                );
                let micros = matches!(
                    expr.get_type(schema),
                    Ok(DataType::Timestamp(TimeUnit::Microsecond, None))
                );
                if nanos && micros {
                    *arg = std::mem::replace(expr.as_mut(), Expr::Literal(ScalarValue::Null, None));
                    changed = true;
                }
            }
            Transformed::new_transformed(Expr::ScalarFunction(f), changed)
        }
        other => Transformed::no(other),
    })
}
