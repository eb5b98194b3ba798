//! TIME values are signed spans up to ±838:59:59 (see [`basalt_common::time_value`]), carried
//! in Arrow's `Time64(Microsecond)`, which Arrow's own casts and date parts treat as a time of
//! day: they fail or answer NULL for a negative TIME or one of 24 hours or more. An analyzer
//! rule after type coercion (which adds most casts) swaps them for MySQL's conversions:
//! - a TIME cast to a string becomes `time_text(t, digits)` (`-838:59:59`, `120:00:06.5`);
//! - a TIME cast to a number is MySQL's `[-]HHMMSS[.ffffff]` (`time_number`);
//! - a string or number cast to TIME (`t > '100:00:00'`, an INSERT's values) is MySQL's
//!   reading (`mysql_time`, strict in an INSERT or a checked load);
//! - `date_part('hour' | 'minute' | 'second' | 'microsecond', t)` of a TIME reads the span:
//!   HOUR can exceed 23, and the parts of a negative TIME are those of its magnitude;
//! - a TIME cast to a DATETIME or DATE (`CAST(t AS DATETIME)`, a TIME beside a DATETIME in a
//!   CASE or a comparison, a TIME given to CONVERT_TZ) is today's midnight (in the session's
//!   time zone) moved by the span, as MySQL reads it (`time_datetime`).

use crate::expr_rules::rewrite_node_expressions;
use crate::util::{arguments, output, plain_function};
use basalt_common::time_value;
use datafusion::arrow::array::{ArrayRef, AsArray, Decimal128Array, Int32Array, StringArray};
use datafusion::arrow::datatypes::{DataType, Time64MicrosecondType, TimeUnit};
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::Transformed;
use datafusion::common::{exec_err, DFSchema, Result, ScalarValue};
use datafusion::logical_expr::expr::{ScalarFunction, TryCast};
use datafusion::logical_expr::{
    Cast, ColumnarValue, Expr, ExprSchemable, LogicalPlan, ScalarFunctionArgs, ScalarUDF,
    Signature, Volatility,
};
use datafusion::optimizer::AnalyzerRule;
use std::sync::{Arc, OnceLock};

const MICROS: i64 = 1_000_000;

/// `time_text(t, digits)`: MySQL's text of a TIME (`digits` < 0: as many as the value needs).
pub fn text_function() -> &'static ScalarUDF {
    static F: OnceLock<ScalarUDF> = OnceLock::new();
    F.get_or_init(|| {
        plain_function(
            "time_text",
            Signature::any(2, Volatility::Immutable),
            DataType::Utf8,
            time_text,
        )
    })
}

/// `time_number(t)`: a TIME as MySQL's number `[-]HHMMSS.ffffff`.
pub fn number_function() -> &'static ScalarUDF {
    static F: OnceLock<ScalarUDF> = OnceLock::new();
    F.get_or_init(|| {
        plain_function(
            "time_number",
            Signature::any(1, Volatility::Immutable),
            DataType::Decimal128(18, 6),
            time_number,
        )
    })
}

/// `time_part(unit, t)`: HOUR, MINUTE, SECOND or MICROSECOND (seconds and microseconds of the
/// minute, as DataFusion's date_part counts them) of a TIME's magnitude.
pub fn part_function() -> &'static ScalarUDF {
    static F: OnceLock<ScalarUDF> = OnceLock::new();
    F.get_or_init(|| {
        plain_function(
            "time_part",
            Signature::any(2, Volatility::Immutable),
            DataType::Int32,
            time_part,
        )
    })
}

/// `time_datetime(t, today)`: the DATETIME `today`'s midnight moved by the TIME `t`.
pub fn datetime_function() -> &'static ScalarUDF {
    static F: OnceLock<ScalarUDF> = OnceLock::new();
    F.get_or_init(|| {
        plain_function(
            "time_datetime",
            Signature::any(2, Volatility::Immutable),
            DataType::Timestamp(TimeUnit::Microsecond, None),
            time_datetime,
        )
    })
}

/// The functions the rule writes, for plan fragments.
pub fn functions() -> Vec<ScalarUDF> {
    vec![
        text_function().clone(),
        number_function().clone(),
        part_function().clone(),
        datetime_function().clone(),
    ]
}

/// Swaps Arrow's time-of-day conversions of TIME values for MySQL's (see the module doc).
#[derive(Debug, Default)]
pub struct SignedTimeCasts;

impl AnalyzerRule for SignedTimeCasts {
    fn name(&self) -> &str {
        "mysql_signed_times"
    }

    fn analyze(&self, plan: LogicalPlan, config: &ConfigOptions) -> Result<LogicalPlan> {
        // An INSERT stores only a valid TIME, as does a load that asks for checked casts.
        let lenient = config
            .extensions
            .get::<crate::MySqlOptions>()
            .is_none_or(|o| o.lenient_string_casts);
        let strict = matches!(plan, LogicalPlan::Dml(_)) || !lenient;
        let zone = config
            .extensions
            .get::<crate::MySqlOptions>()
            .map_or_else(|| "SYSTEM".to_string(), |o| o.time_zone.clone());
        plan.transform_up_with_subqueries(|node| {
            rewrite_node_expressions(node, |e, schema| {
                time_casts(e, schema, strict, &zone, config)
            })
        })
        .map(|t| t.data)
    }
}

fn is_time(t: &DataType) -> bool {
    matches!(t, DataType::Time64(_) | DataType::Time32(_))
}

fn is_text(t: &DataType) -> bool {
    matches!(t, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View)
}

fn udf_call(f: &ScalarUDF, args: Vec<Expr>) -> Expr {
    Expr::ScalarFunction(ScalarFunction::new_udf(Arc::new(f.clone()), args))
}

/// `e` as `target` (nothing when it is already of it).
fn as_type(e: Expr, from: &DataType, target: &DataType) -> Expr {
    if from == target {
        e
    } else {
        Expr::Cast(Cast::new(Box::new(e), target.clone()))
    }
}

/// Today's date in the session's time zone `zone`, fixed when the statement is planned.
fn today(zone: &str, config: &ConfigOptions) -> Expr {
    let now = Expr::Cast(Cast::new(
        Box::new(datafusion::functions::datetime::now(config).call(vec![])),
        DataType::Timestamp(TimeUnit::Microsecond, None),
    ));
    let local = if crate::time_zones::is_utc(zone) || !crate::time_zones::is_known_zone(zone) {
        now
    } else {
        let text = |s: &str| Expr::Literal(ScalarValue::Utf8(Some(s.to_string())), None);
        crate::time_zones::function().call(vec![now, text("+00:00"), text(zone)])
    };
    Expr::Cast(Cast::new(Box::new(local), DataType::Date32))
}

fn time_casts(
    e: Expr,
    schema: &DFSchema,
    strict: bool,
    zone: &str,
    config: &ConfigOptions,
) -> Result<Transformed<Expr>> {
    if let Expr::ScalarFunction(f) = &e {
        if let Some(part) = time_part_call(f, schema) {
            return Ok(Transformed::yes(part));
        }
        // YEAR, MONTH, DAY.. of a TIME: those of the DATETIME it is today.
        if let Some(part) = date_part_of_time(f, schema, zone, config) {
            return Ok(Transformed::yes(part));
        }
        return Ok(Transformed::no(e));
    }
    let (inner, target, checked) = match &e {
        Expr::Cast(Cast { expr, field }) => (expr, field.data_type().clone(), true),
        Expr::TryCast(TryCast { expr, field }) => (expr, field.data_type().clone(), false),
        _ => return Ok(Transformed::no(e)),
    };
    let Ok((_, field)) = inner.to_field(schema) else {
        return Ok(Transformed::no(e));
    };
    let source = field.data_type().clone();
    let inner = inner.as_ref().clone();
    if is_time(&source) && is_text(&target) {
        let digits = basalt_common::fraction_digits(&field).map_or(-1, i64::from);
        let text = udf_call(
            text_function(),
            vec![inner, Expr::Literal(ScalarValue::Int64(Some(digits)), None)],
        );
        return Ok(Transformed::yes(as_type(text, &DataType::Utf8, &target)));
    }
    if is_time(&source) && matches!(target, DataType::Timestamp(_, None) | DataType::Date32) {
        let time = as_type(inner, &source, &DataType::Time64(TimeUnit::Microsecond));
        let datetime = udf_call(datetime_function(), vec![time, today(zone, config)]);
        return Ok(Transformed::yes(as_type(
            datetime,
            &DataType::Timestamp(TimeUnit::Microsecond, None),
            &target,
        )));
    }
    if is_time(&source) && (target.is_numeric()) {
        let number = udf_call(number_function(), vec![inner]);
        return Ok(Transformed::yes(as_type(
            number,
            &DataType::Decimal128(18, 6),
            &target,
        )));
    }
    if target == DataType::Time64(TimeUnit::Microsecond)
        && (is_text(&source) || source.is_numeric())
    {
        let f = if strict && checked {
            crate::time_cast::strict_function()
        } else {
            crate::time_cast::function()
        };
        return Ok(Transformed::yes(udf_call(f, vec![inner])));
    }
    Ok(Transformed::no(e))
}

/// `time_part(unit, t)` for DataFusion's `date_part(unit, t)` of a TIME.
fn time_part_call(f: &ScalarFunction, schema: &DFSchema) -> Option<Expr> {
    if f.name() != "date_part" || f.args.len() != 2 {
        return None;
    }
    let Expr::Literal(ScalarValue::Utf8(Some(unit)), _) = &f.args[0] else {
        return None;
    };
    let unit = unit.to_ascii_lowercase();
    if !matches!(unit.as_str(), "hour" | "minute" | "second" | "microsecond") {
        return None;
    }
    let source = f.args[1].get_type(schema).ok()?;
    if !is_time(&source) {
        return None;
    }
    let time = as_type(
        f.args[1].clone(),
        &source,
        &DataType::Time64(TimeUnit::Microsecond),
    );
    Some(udf_call(
        part_function(),
        vec![Expr::Literal(ScalarValue::Utf8(Some(unit)), None), time],
    ))
}

/// `date_part(unit, time_datetime(t, today))` for a `date_part` of a TIME whose unit is a
/// date's (year, month, day, ...).
fn date_part_of_time(
    f: &ScalarFunction,
    schema: &DFSchema,
    zone: &str,
    config: &ConfigOptions,
) -> Option<Expr> {
    if f.name() != "date_part" || f.args.len() != 2 {
        return None;
    }
    let source = f.args[1].get_type(schema).ok()?;
    if !is_time(&source) {
        return None;
    }
    let time = as_type(
        f.args[1].clone(),
        &source,
        &DataType::Time64(TimeUnit::Microsecond),
    );
    let datetime = udf_call(datetime_function(), vec![time, today(zone, config)]);
    Some(Expr::ScalarFunction(ScalarFunction {
        func: f.func.clone(),
        args: vec![f.args[0].clone(), datetime],
    }))
}

fn times(values: &ArrayRef) -> Result<ArrayRef> {
    Ok(datafusion::arrow::compute::cast(
        values,
        &DataType::Time64(TimeUnit::Microsecond),
    )?)
}

fn time_text(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let digits = match &args.args[1] {
        ColumnarValue::Scalar(ScalarValue::Int64(Some(d))) => u8::try_from(*d).ok(),
        _ => return exec_err!("time_text: the digits must be a constant"),
    };
    let (arrays, scalar) = arguments(args)?;
    output(time_strings(&arrays[0], digits)?, scalar)
}

/// TIME values as MySQL's text, with `digits` fractional digits when declared.
pub(crate) fn time_strings(values: &ArrayRef, digits: Option<u8>) -> Result<ArrayRef> {
    let values = times(values)?;
    let out: StringArray = values
        .as_primitive::<Time64MicrosecondType>()
        .iter()
        .map(|v| v.map(|v| time_value::format(v, digits)))
        .collect();
    Ok(Arc::new(out))
}

fn time_number(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let values = times(&arrays[0])?;
    let out = values
        .as_primitive::<Time64MicrosecondType>()
        .iter()
        .map(|v| {
            v.map(|v| {
                let fraction = i128::from(v.unsigned_abs() as i64 % MICROS);
                let whole = i128::from(time_value::as_hhmmss(v)) * i128::from(MICROS);
                if v < 0 {
                    whole - fraction
                } else {
                    whole + fraction
                }
            })
        })
        .collect::<Decimal128Array>()
        .with_precision_and_scale(18, 6)?;
    output(Arc::new(out), scalar)
}

fn time_datetime(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let spans = times(&arrays[0])?;
    let days = datafusion::arrow::compute::cast(&arrays[1], &DataType::Date32)?;
    let days = days.as_primitive::<datafusion::arrow::datatypes::Date32Type>();
    let out: datafusion::arrow::array::TimestampMicrosecondArray = spans
        .as_primitive::<Time64MicrosecondType>()
        .iter()
        .zip(days.iter())
        .map(|(t, d)| Some(i64::from(d?) * 86_400 * MICROS + t?))
        .collect();
    output(Arc::new(out), scalar)
}

fn time_part(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let unit = match &args.args[0] {
        ColumnarValue::Scalar(ScalarValue::Utf8(Some(u))) => u.clone(),
        _ => return exec_err!("time_part: the unit must be a constant"),
    };
    let (arrays, scalar) = arguments(args)?;
    let values = times(&arrays[1])?;
    let part = |v: i64| -> i64 {
        let m = v.unsigned_abs() as i64;
        let seconds = m / MICROS;
        match unit.as_str() {
            "hour" => seconds / 3600,
            "minute" => seconds / 60 % 60,
            "second" => seconds % 60,
            _ => seconds % 60 * MICROS + m % MICROS,
        }
    };
    let out: Int32Array = values
        .as_primitive::<Time64MicrosecondType>()
        .iter()
        .map(|v| v.map(|v| part(v) as i32))
        .collect();
    output(Arc::new(out), scalar)
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::Time64MicrosecondArray;
    use datafusion::arrow::datatypes::Field;
    use datafusion::config::ConfigOptions;

    fn run(f: &ScalarUDF, args: Vec<ColumnarValue>, returns: DataType) -> ArrayRef {
        let arg_fields = args
            .iter()
            .map(|a| Arc::new(Field::new("a", a.data_type(), true)))
            .collect();
        let out = f
            .invoke_with_args(ScalarFunctionArgs {
                args,
                arg_fields,
                number_rows: 2,
                return_field: Arc::new(Field::new("r", returns, true)),
                config_options: Arc::new(ConfigOptions::default()),
            })
            .unwrap();
        out.into_array(2).unwrap()
    }

    #[test]
    fn negative_and_long_times() {
        let h = 3600 * MICROS;
        let t = ColumnarValue::Array(Arc::new(Time64MicrosecondArray::from(vec![
            -(120 * h + 5 * 60 * MICROS + 500_000),
            838 * h,
        ])));
        let text = run(
            text_function(),
            vec![
                t.clone(),
                ColumnarValue::Scalar(ScalarValue::Int64(Some(-1))),
            ],
            DataType::Utf8,
        );
        let text: Vec<_> = text.as_string::<i32>().iter().flatten().collect();
        assert_eq!(text, ["-120:05:00.500000", "838:00:00"]);
        let hours = run(
            part_function(),
            vec![
                ColumnarValue::Scalar(ScalarValue::Utf8(Some("hour".into()))),
                t.clone(),
            ],
            DataType::Int32,
        );
        assert_eq!(
            hours
                .as_primitive::<datafusion::arrow::datatypes::Int32Type>()
                .values(),
            &[120, 838]
        );
        let numbers = run(number_function(), vec![t], DataType::Decimal128(18, 6));
        let numbers = numbers.as_primitive::<datafusion::arrow::datatypes::Decimal128Type>();
        assert_eq!(numbers.value(0), -1_200_500_500_000);
        assert_eq!(numbers.value(1), 8_380_000 * MICROS as i128);
    }
}
