//! `TIME ± INTERVAL ..` as MySQL computes it: a TIME moved by the interval's span
//! (`TIME '10:00:00' + INTERVAL 1 HOUR` is 11:00:00, `+ INTERVAL 1 DAY` 34:00:00), NULL past
//! ±838:59:59 or for an interval of months or years. The SQL rewrite of `d + INTERVAL ..`
//! casts `d` to DATETIME for intervals of hours or finer (which a TIME cannot be), and Arrow's
//! own TIME arithmetic wraps around midnight (plus a day was the same time); this analyzer
//! rule, running before type coercion, turns either form over a TIME operand into
//! `seconds_add(t, n)` (or milliseconds, microseconds; see [`crate::date_arith`]).

use crate::date_arith::Unit;
use crate::expr_rules::rewrite_node_expressions;
use datafusion::arrow::datatypes::{DataType, TimeUnit};
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::Transformed;
use datafusion::common::{DFSchema, Result, ScalarValue};
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::{
    BinaryExpr, Cast, Expr, ExprSchemable, LogicalPlan, Operator, ScalarUDF,
};
use datafusion::optimizer::AnalyzerRule;
use std::sync::Arc;

const TIME: DataType = DataType::Time64(TimeUnit::Microsecond);

/// The analyzer rule; it must run before DataFusion's type coercion.
#[derive(Debug, Default)]
pub struct TimeIntervals;

impl AnalyzerRule for TimeIntervals {
    fn name(&self) -> &str {
        "mysql_time_intervals"
    }

    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        plan.transform_up_with_subqueries(|node| rewrite_node_expressions(node, shifted_times))
            .map(|t| t.data)
    }
}

/// What an interval literal moves a TIME by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Span {
    Micros(i64),
    /// Months or years: no span of a TIME.
    Calendar,
}

fn interval_span(e: &Expr) -> Option<Span> {
    let Expr::Literal(value, _) = e else {
        return None;
    };
    Some(match value {
        ScalarValue::IntervalMonthDayNano(Some(v)) => {
            if v.months != 0 {
                Span::Calendar
            } else {
                let days = i64::from(v.days).checked_mul(86_400_000_000)?;
                Span::Micros(days.checked_add(v.nanoseconds / 1_000)?)
            }
        }
        ScalarValue::IntervalDayTime(Some(v)) => {
            Span::Micros(i64::from(v.days) * 86_400_000_000 + i64::from(v.milliseconds) * 1_000)
        }
        ScalarValue::IntervalYearMonth(Some(m)) if *m != 0 => Span::Calendar,
        ScalarValue::IntervalYearMonth(Some(_)) => Span::Micros(0),
        _ => return None,
    })
}

/// The TIME operand: a TIME expression, or one cast to DATETIME by the SQL rewrite.
fn time_operand(e: &Expr, schema: &DFSchema) -> Option<Expr> {
    let is_time = |e: &Expr| {
        e.get_type(schema)
            .is_ok_and(|t| matches!(t, DataType::Time64(_) | DataType::Time32(_)))
    };
    match e {
        Expr::Cast(Cast { expr, field })
            if matches!(field.data_type(), DataType::Timestamp(_, None)) && is_time(expr) =>
        {
            Some((**expr).clone())
        }
        e if is_time(e) => Some(e.clone()),
        _ => None,
    }
}

fn shifted_times(e: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    let Expr::BinaryExpr(BinaryExpr { left, op, right }) = &e else {
        return Ok(Transformed::no(e));
    };
    let (time, span, sign) = match (op, interval_span(left), interval_span(right)) {
        (Operator::Plus | Operator::Minus, None, Some(span)) => {
            let sign = if *op == Operator::Plus { 1 } else { -1 };
            (time_operand(left, schema), span, sign)
        }
        (Operator::Plus, Some(span), None) => (time_operand(right, schema), span, 1),
        _ => return Ok(Transformed::no(e)),
    };
    let Some(time) = time else {
        return Ok(Transformed::no(e));
    };
    Ok(Transformed::yes(match span {
        Span::Calendar => Expr::Cast(Cast::new(
            Box::new(Expr::Literal(ScalarValue::Null, None)),
            TIME,
        )),
        Span::Micros(micros) => {
            // The coarsest unit that counts the span, so the result keeps the TIME's fraction
            // digits unless the interval has more.
            let (unit, per_unit) = if micros % 1_000_000 == 0 {
                (Unit::Second, 1_000_000)
            } else if micros % 1_000 == 0 {
                (Unit::Millisecond, 1_000)
            } else {
                (Unit::Microsecond, 1)
            };
            let count = (micros / per_unit).checked_mul(sign);
            Expr::ScalarFunction(ScalarFunction::new_udf(
                adding(unit),
                vec![time, Expr::Literal(ScalarValue::Int64(count), None)],
            ))
        }
    }))
}

fn adding(unit: Unit) -> Arc<ScalarUDF> {
    static FUNCTIONS: std::sync::OnceLock<[Arc<ScalarUDF>; 3]> = std::sync::OnceLock::new();
    let [seconds, millis, micros] = FUNCTIONS.get_or_init(|| {
        [Unit::Second, Unit::Millisecond, Unit::Microsecond]
            .map(|u| Arc::new(crate::date_arith::adding(u)))
    });
    match unit {
        Unit::Second => seconds.clone(),
        Unit::Millisecond => millis.clone(),
        _ => micros.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::datatypes::IntervalMonthDayNano;

    fn interval(months: i32, days: i32, nanoseconds: i64) -> Expr {
        Expr::Literal(
            ScalarValue::IntervalMonthDayNano(Some(IntervalMonthDayNano {
                months,
                days,
                nanoseconds,
            })),
            None,
        )
    }

    #[test]
    fn intervals_are_spans_of_microseconds() {
        assert_eq!(
            interval_span(&interval(0, 1, 3_600_000_000_000)),
            Some(Span::Micros(90_000_000_000))
        );
        assert_eq!(
            interval_span(&interval(0, 0, 1_500_000_000)),
            Some(Span::Micros(1_500_000))
        );
        assert_eq!(interval_span(&interval(1, 0, 0)), Some(Span::Calendar));
        assert_eq!(
            interval_span(&Expr::Literal(ScalarValue::Int64(Some(1)), None)),
            None
        );
    }
}
