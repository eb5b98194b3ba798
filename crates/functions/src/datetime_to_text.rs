//! DATETIME values as text the way MySQL writes them, wherever a DATETIME becomes a string:
//! `CAST(dt AS CHAR)`, `dt LIKE '2024-01-%'`, `left(dt, 10)`, `concat(dt, ..)`. Arrow's own cast
//! writes ISO 8601 (`2024-01-05T10:00:00`), so `WHERE CAST(dt AS CHAR) LIKE '2024-01-05 %'`
//! matched nothing. An analyzer rule after type coercion (which adds most such casts) swaps
//! every cast of a DATETIME to a string type for `datetime_text(dt, digits)`: a space between
//! date and time, and the fraction with the value's declared digits (DATETIME(p) shows p
//! digits, as the protocol layer shows the column). Without declared digits a fraction is
//! written only when it is not zero, with the unit's digits.

use crate::expr_rules::rewrite_node_expressions;
use crate::util::{arguments, output};
use datafusion::arrow::array::{Array, ArrayRef, AsArray, StringBuilder};
use datafusion::arrow::datatypes::{DataType, TimeUnit};
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::Transformed;
use datafusion::common::{exec_err, DFSchema, Result, ScalarValue};
use datafusion::logical_expr::expr::{ScalarFunction, TryCast};
use datafusion::logical_expr::{
    Cast, ColumnarValue, Expr, ExprSchemable, LogicalPlan, ScalarFunctionArgs, ScalarUDF,
    ScalarUDFImpl, Signature, Volatility,
};
use datafusion::optimizer::AnalyzerRule;
use std::fmt::Write;
use std::sync::{Arc, OnceLock};

/// The function's name, as plan fragments carry it to other nodes.
pub const NAME: &str = "datetime_text";

/// The one instance (see [`crate::wire`]).
pub fn function() -> &'static ScalarUDF {
    static F: OnceLock<ScalarUDF> = OnceLock::new();
    F.get_or_init(|| {
        ScalarUDF::new_from_impl(DatetimeText {
            signature: Signature::any(2, Volatility::Immutable),
        })
    })
}

/// Swaps casts of DATETIME values to strings for [`function`].
#[derive(Debug, Default)]
pub struct DatetimeTextCasts;

impl AnalyzerRule for DatetimeTextCasts {
    fn name(&self) -> &str {
        "mysql_datetime_text"
    }

    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        plan.transform_up_with_subqueries(|node| rewrite_node_expressions(node, datetime_casts))
            .map(|t| t.data)
    }
}

fn is_text(t: &DataType) -> bool {
    matches!(t, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View)
}

fn datetime_casts(e: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    let (inner, target) = match &e {
        Expr::Cast(Cast { expr, field }) | Expr::TryCast(TryCast { expr, field }) => {
            (expr, field.data_type())
        }
        _ => return Ok(Transformed::no(e)),
    };
    if !is_text(target) {
        return Ok(Transformed::no(e));
    }
    let Ok((_, field)) = inner.to_field(schema) else {
        return Ok(Transformed::no(e));
    };
    if !matches!(field.data_type(), DataType::Timestamp(_, None)) {
        return Ok(Transformed::no(e));
    }
    let digits = basalt_common::fraction_digits(&field).map_or(-1, i64::from);
    let target = target.clone();
    let text = Expr::ScalarFunction(ScalarFunction::new_udf(
        Arc::new(function().clone()),
        vec![
            inner.as_ref().clone(),
            Expr::Literal(ScalarValue::Int64(Some(digits)), None),
        ],
    ));
    // The string flavour the cast asked for.
    Ok(Transformed::yes(if target == DataType::Utf8 {
        text
    } else {
        Expr::Cast(Cast::new(Box::new(text), target))
    }))
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct DatetimeText {
    signature: Signature,
}

impl ScalarUDFImpl for DatetimeText {
    fn name(&self) -> &str {
        NAME
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(DataType::Utf8)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let digits = match &args.args[1] {
            ColumnarValue::Scalar(ScalarValue::Int64(Some(d))) => u8::try_from(*d).ok(),
            _ => return exec_err!("{NAME}: the digits must be a constant"),
        };
        let (arrays, scalar) = arguments(&args)?;
        output(datetime_strings(&arrays[0], digits)?, scalar)
    }
}

/// One DATETIME value as MySQL's text (see [`datetime_strings`]).
pub fn datetime_text(value: &ScalarValue, digits: Option<u8>) -> Result<String> {
    let strings = datetime_strings(&value.to_array()?, digits)?;
    Ok(strings.as_string::<i32>().value(0).to_string())
}

/// DATETIME values as MySQL's text: `digits` fractional digits when declared (see
/// [`push_fraction`]), else the unit's digits when the fraction is not zero.
pub(crate) fn datetime_strings(values: &ArrayRef, digits: Option<u8>) -> Result<ArrayRef> {
    let DataType::Timestamp(unit, None) = values.data_type() else {
        return exec_err!("{NAME} takes a DATETIME, not {}", values.data_type());
    };
    // Ticks per second and their digits.
    let (per_second, unit_digits) = match unit {
        TimeUnit::Second => (1i64, 0u8),
        TimeUnit::Millisecond => (1_000, 3),
        TimeUnit::Microsecond => (1_000_000, 6),
        TimeUnit::Nanosecond => (1_000_000_000, 9),
    };
    let ticks = datafusion::arrow::compute::cast(values, &DataType::Int64)?;
    let ticks = ticks.as_primitive::<datafusion::arrow::datatypes::Int64Type>();
    let mut out = StringBuilder::with_capacity(ticks.len(), ticks.len() * 26);
    let mut text = String::with_capacity(32);
    for v in ticks.iter() {
        let Some(v) = v else {
            out.append_null();
            continue;
        };
        let seconds = v.div_euclid(per_second);
        let fraction = v.rem_euclid(per_second);
        let Some(at) = chrono::DateTime::from_timestamp(seconds, 0) else {
            return exec_err!("{NAME}: {v} is outside the DATETIME range");
        };
        text.clear();
        let _ = write!(text, "{}", at.naive_utc().format("%Y-%m-%d %H:%M:%S"));
        push_fraction(&mut text, fraction, unit_digits, digits);
        out.append_value(&text);
    }
    Ok(Arc::new(out.finish()))
}

/// Appends the fraction (`fraction` ticks of `unit_digits` digits): `digits` of them when
/// declared (more only where cutting would lose a digit that is not zero), else all of the
/// unit's digits when the fraction is not zero.
fn push_fraction(text: &mut String, fraction: i64, unit_digits: u8, digits: Option<u8>) {
    if unit_digits == 0 {
        if let Some(d) = digits.filter(|d| *d > 0) {
            text.push('.');
            text.extend(std::iter::repeat_n('0', d as usize));
        }
        return;
    }
    let all = format!("{fraction:0width$}", width = unit_digits as usize);
    let significant = all.trim_end_matches('0').len();
    let shown = match digits {
        Some(d) => significant.max(d as usize),
        None if fraction == 0 => 0,
        None => all.len(),
    };
    if shown == 0 {
        return;
    }
    text.push('.');
    if shown <= all.len() {
        text.push_str(&all[..shown]);
    } else {
        text.push_str(&all);
        text.extend(std::iter::repeat_n('0', shown - all.len()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fraction(fraction: i64, unit_digits: u8, digits: Option<u8>) -> String {
        let mut s = String::new();
        push_fraction(&mut s, fraction, unit_digits, digits);
        s
    }

    #[test]
    fn fractions_show_the_declared_digits_without_losing_any() {
        assert_eq!(fraction(120_000, 6, Some(2)), ".12");
        assert_eq!(fraction(0, 6, Some(3)), ".000");
        assert_eq!(fraction(0, 6, Some(0)), "");
        assert_eq!(fraction(123_456, 6, Some(2)), ".123456");
        assert_eq!(fraction(0, 6, None), "");
        assert_eq!(fraction(500_000, 6, None), ".500000");
        assert_eq!(fraction(5, 3, None), ".005");
        assert_eq!(fraction(0, 0, Some(2)), ".00");
    }
}
