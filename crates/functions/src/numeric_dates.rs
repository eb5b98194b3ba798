//! Numbers where MySQL expects a date. MySQL and Doris read `20240105` beside a DATE as
//! 2024-01-05 (and `240105`, `20240105101112`, `240105101112` likewise); DataFusion casts the
//! number as a count of days since 1970, so `WHERE dt = 20240105` silently matched nothing.
//! [`NumericDatesPlanner`] converts such numbers in comparisons as the SQL is planned (where
//! DataFusion would otherwise refuse `ts = 20240105101112` outright), and an analyzer rule
//! running before type coercion in BETWEEN, IN lists and CAST(number AS DATE/DATETIME): a
//! literal at plan time, any other number through [`NumberToDate`]. A number that is not a
//! valid date is NULL (MySQL warns and compares false), but a literal that names none is
//! compared with the date read as a number (YYYYMMDD[hhmmss]), as MySQL compares them. A
//! DECIMAL or floating-point number loses its fraction (`dt < 20200202.5` is `dt < 2020-02-02`, as MariaDB compares them), so
//! `dt BETWEEN d AND d + 1.0` (a date in arithmetic is the number YYYYMMDD) compares dates.

use crate::expr_rules::is_comparison;
use crate::expr_rules::rewrite_node_expressions;
use chrono::{NaiveDate, NaiveDateTime};
use datafusion::arrow::array::{
    ArrayRef, AsArray, Date32Array, Int64Array, TimestampMicrosecondArray,
};
use datafusion::arrow::datatypes::{DataType, Int64Type, TimeUnit};
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::Transformed;
use datafusion::common::{DFSchema, Result, ScalarValue};
use datafusion::logical_expr::expr::{InList, TryCast};
use datafusion::logical_expr::planner::{ExprPlanner, PlannerResult, RawBinaryExpr};
use datafusion::logical_expr::{
    Between, BinaryExpr, Cast, ColumnarValue, Expr, ExprSchemable, LogicalPlan, ScalarFunctionArgs,
    ScalarUDF, ScalarUDFImpl, Signature, TypeSignature, Volatility,
};
use datafusion::optimizer::AnalyzerRule;
use std::sync::Arc;

/// The analyzer rule; it must run before DataFusion's type coercion.
#[derive(Debug, Default)]
pub struct NumericDates;

impl AnalyzerRule for NumericDates {
    fn name(&self) -> &str {
        "mysql_numeric_dates"
    }

    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        plan.transform_up_with_subqueries(|node| rewrite_node_expressions(node, dates))
            .map(|t| t.data)
    }
}

/// Converts numbers compared with dates while the SQL is planned.
#[derive(Debug, Default)]
pub struct NumericDatesPlanner;

impl ExprPlanner for NumericDatesPlanner {
    fn plan_binary_op(
        &self,
        expr: RawBinaryExpr,
        schema: &DFSchema,
    ) -> Result<PlannerResult<RawBinaryExpr>> {
        crate::expr_rules::plan_comparison(expr, schema, dates)
    }
}

/// What a number beside a temporal value becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Target {
    Date,
    DateTime,
}

impl Target {
    fn of(t: &DataType) -> Option<Target> {
        match t {
            DataType::Date32 | DataType::Date64 => Some(Target::Date),
            DataType::Timestamp(_, _) => Some(Target::DateTime),
            _ => None,
        }
    }
}

fn dates(e: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    let type_of = |e: &Expr| e.get_type(schema).ok();
    let number_beside = |e: &Expr, target: Option<Target>| -> Option<Target> {
        target.filter(|_| type_of(e).as_ref().is_some_and(DataType::is_numeric))
    };
    Ok(match e {
        Expr::BinaryExpr(BinaryExpr { left, op, right }) if is_comparison(&op) => {
            let (lt, rt) = (type_of(&left), type_of(&right));
            let (lt, rt) = (
                lt.as_ref().and_then(Target::of),
                rt.as_ref().and_then(Target::of),
            );
            if let Some(t) = number_beside(&right, lt).filter(|t| names_no_date(&right, *t)) {
                Transformed::yes(Expr::BinaryExpr(BinaryExpr {
                    left: Box::new(crate::date_number::call(*left, 0)),
                    op,
                    right: Box::new(date_digits(&right, t)),
                }))
            } else if let Some(t) = number_beside(&left, rt).filter(|t| names_no_date(&left, *t)) {
                Transformed::yes(Expr::BinaryExpr(BinaryExpr {
                    left: Box::new(date_digits(&left, t)),
                    op,
                    right: Box::new(crate::date_number::call(*right, 0)),
                }))
            } else if let Some(target) = number_beside(&right, lt) {
                Transformed::yes(Expr::BinaryExpr(BinaryExpr {
                    left,
                    op,
                    right: Box::new(as_temporal(*right, target)),
                }))
            } else if let Some(target) = number_beside(&left, rt) {
                Transformed::yes(Expr::BinaryExpr(BinaryExpr {
                    left: Box::new(as_temporal(*left, target)),
                    op,
                    right,
                }))
            } else {
                Transformed::no(Expr::BinaryExpr(BinaryExpr { left, op, right }))
            }
        }
        Expr::Between(between) => {
            let target = type_of(&between.expr).as_ref().and_then(Target::of);
            let convert = |e: Box<Expr>| match number_beside(&e, target) {
                Some(t) => (Box::new(as_temporal(*e, t)), true),
                None => (e, false),
            };
            let Between {
                expr,
                negated,
                low,
                high,
            } = between;
            let no_date = |e: &Expr| number_beside(e, target).is_some_and(|t| names_no_date(e, t));
            if let Some(t) = target.filter(|_| no_date(&low) || no_date(&high)) {
                let digits = |e: Box<Expr>| match e.as_ref() {
                    Expr::Literal(..) if number_beside(&e, target).is_some() => {
                        Box::new(date_digits(&e, t))
                    }
                    _ => e,
                };
                return Ok(Transformed::yes(Expr::Between(Between {
                    expr: Box::new(crate::date_number::call(*expr, 0)),
                    negated,
                    low: digits(low),
                    high: digits(high),
                })));
            }
            let (low, a) = convert(low);
            let (high, b) = convert(high);
            Transformed::new_transformed(
                Expr::Between(Between {
                    expr,
                    negated,
                    low,
                    high,
                }),
                a || b,
            )
        }
        Expr::InList(InList {
            expr,
            list,
            negated,
        }) => {
            let target = type_of(&expr).as_ref().and_then(Target::of);
            let mut changed = false;
            let list = list
                .into_iter()
                .map(|e| match number_beside(&e, target) {
                    Some(t) => {
                        changed = true;
                        as_temporal(e, t)
                    }
                    None => e,
                })
                .collect();
            Transformed::new_transformed(
                Expr::InList(InList {
                    expr,
                    list,
                    negated,
                }),
                changed,
            )
        }
        Expr::Cast(Cast { expr, field }) => {
            match number_beside(&expr, Target::of(field.data_type())) {
                Some(t) => Transformed::yes(Expr::Cast(Cast {
                    expr: Box::new(cast_temporal(*expr, t)),
                    field,
                })),
                None => Transformed::no(Expr::Cast(Cast { expr, field })),
            }
        }
        Expr::TryCast(TryCast { expr, field }) => {
            match number_beside(&expr, Target::of(field.data_type())) {
                Some(t) => Transformed::yes(Expr::TryCast(TryCast {
                    expr: Box::new(cast_temporal(*expr, t)),
                    field,
                })),
                None => Transformed::no(Expr::TryCast(TryCast { expr, field })),
            }
        }
        // The argument of a date function: a number read as MySQL reads it (see
        // `crate::date_arguments`), anything else as it is.
        Expr::ScalarFunction(f) if f.name() == crate::date_arguments::NAME && f.args.len() == 2 => {
            let reading = crate::date_arguments::reading_of(&f.args[1]);
            let mut args = f.args;
            let x = args.swap_remove(0);
            let target =
                type_of(&x).and_then(|t| crate::date_arguments::number_target(&t, &reading));
            Transformed::yes(match target {
                None => x,
                Some(DataType::Time64(_)) => crate::time_cast::function().call(vec![x]),
                Some(DataType::Date32) => Expr::Cast(Cast::new(
                    Box::new(cast_temporal(x, Target::Date)),
                    DataType::Date32,
                )),
                Some(_) => cast_temporal(x, Target::DateTime),
            })
        }
        other => Transformed::no(other),
    })
}

/// Casts of numbers to DATE or DATETIME that DataFusion's type coercion adds (a number given
/// to a date function: `ADDDATE(int_col, 1)`, `TIMESTAMPDIFF(DAY, int_col, ..)`) read the
/// number as MySQL reads a date (`20240105` is 2024-01-05), as the query's own casts do, where
/// Arrow counted time since 1970 from it (1970-01-01 00:00:20.240105).
#[derive(Debug, Default)]
pub struct CoercedNumberDates;

impl AnalyzerRule for CoercedNumberDates {
    fn name(&self) -> &str {
        "mysql_coerced_number_dates"
    }

    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        plan.transform_up_with_subqueries(|node| rewrite_node_expressions(node, coerced_dates))
            .map(|t| t.data)
    }
}

fn coerced_dates(e: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    let numeric = |e: &Expr| {
        e.get_type(schema)
            .ok()
            .as_ref()
            .is_some_and(DataType::is_numeric)
    };
    Ok(match e {
        Expr::Cast(Cast { expr, field }) => {
            match Target::of(field.data_type()).filter(|_| numeric(&expr)) {
                Some(t) => Transformed::yes(Expr::Cast(Cast {
                    expr: Box::new(cast_temporal(*expr, t)),
                    field,
                })),
                None => Transformed::no(Expr::Cast(Cast { expr, field })),
            }
        }
        Expr::TryCast(TryCast { expr, field }) => {
            match Target::of(field.data_type()).filter(|_| numeric(&expr)) {
                Some(t) => Transformed::yes(Expr::TryCast(TryCast {
                    expr: Box::new(cast_temporal(*expr, t)),
                    field,
                })),
                None => Transformed::no(Expr::TryCast(TryCast { expr, field })),
            }
        }
        other => Transformed::no(other),
    })
}

/// Whether `e` is a number literal that names no date: MySQL then compares the date as a
/// number (YYYYMMDD[hhmmss]) with it, as `dt BETWEEN 2020.1 AND 20210101` does.
fn names_no_date(e: &Expr, target: Target) -> bool {
    match e {
        Expr::Literal(value, _) if !value.is_null() => match as_temporal(e.clone(), target) {
            Expr::Literal(date, _) => date.is_null(),
            _ => false,
        },
        _ => false,
    }
}

/// The number a literal `e` compares as beside a date read as a number (YYYYMMDD for a DATE,
/// YYYYMMDDhhmmss for a DATETIME), as MariaDB compares them: MySQL's digit forms (YYMMDD with
/// its century, YYYYMMDD, [YY]YYMMDDhhmmss) with a month up to 12, a day up to 31 and a valid
/// time compare by their digits, so `dt < 20240230` and `dt < 240230` hold for 2024-01-05;
/// any other number (`2024`, `20241301`, `99999999`, `1e20`) is the zero date, below every date.
fn date_digits(e: &Expr, target: Target) -> Expr {
    let n = match e {
        Expr::Literal(ScalarValue::UInt64(Some(v)), _) => i64::try_from(*v).ok(),
        Expr::Literal(value, _) => value.cast_to(&DataType::Int64).ok().and_then(|v| match v {
            ScalarValue::Int64(n) => n,
            _ => None,
        }),
        _ => None,
    };
    let value = match (n.and_then(lax_date_digits), target) {
        (None, _) => ScalarValue::Int64(Some(0)),
        (Some((date, 0)), Target::Date) => ScalarValue::Int64(Some(date)),
        (Some((date, time)), Target::Date) => {
            ScalarValue::Float64(Some(date as f64 + time as f64 / 1e6))
        }
        (Some((date, time)), Target::DateTime) => ScalarValue::Int64(Some(date * 1_000_000 + time)),
    };
    Expr::Literal(value, None)
}

/// A number in one of MySQL's date forms as (YYYYMMDD, hhmmss), checked only for a month up to
/// 12, a day up to 31 (either may be 0) and a valid time of day.
fn lax_date_digits(n: i64) -> Option<(i64, i64)> {
    let century = |yy: i64| if yy < 70 { 20_000_000 } else { 19_000_000 };
    let (date, time) = match n {
        101..=991_231 => (n + century(n / 10_000), 0),
        10_000_101..=99_991_231 => (n, 0),
        101_000_000..=991_231_235_959 => {
            let d = n / 1_000_000;
            (d + century(d / 10_000), n % 1_000_000)
        }
        10_000_101_000_000..=99_991_231_235_959 => (n / 1_000_000, n % 1_000_000),
        _ => return None,
    };
    let (month, day) = ((date / 100) % 100, date % 100);
    let (hour, minute, second) = (time / 10_000, (time / 100) % 100, time % 100);
    (month <= 12 && day <= 31 && hour <= 23 && minute <= 59 && second <= 59).then_some((date, time))
}

/// `e`, a numeric expression, as the date (or datetime) MySQL reads it as.
fn as_temporal(e: Expr, target: Target) -> Expr {
    if let Expr::Literal(value, _) = &e {
        let n = match value {
            ScalarValue::UInt64(Some(v)) => Some(i64::try_from(*v).unwrap_or(-1)),
            other => other.cast_to(&DataType::Int64).ok().and_then(|v| match v {
                ScalarValue::Int64(n) => n,
                _ => None,
            }),
        };
        // A number beyond BIGINT names no date.
        return Expr::Literal(literal(n.unwrap_or(-1), target), None);
    }
    let number = Expr::Cast(Cast::new(Box::new(e), DataType::Int64));
    ScalarUDF::new_from_impl(NumberToDate::new(target)).call(vec![number])
}

/// `e`, a number CAST to a date or DATETIME: [`as_temporal`], except that a literal
/// YYYYMMDDhhmmss.ffffff cast to a DATETIME keeps its fraction (`CAST(20200101101010.5 AS
/// DATETIME(6))` is 10:10:10.500000; a YYYYMMDD.f date has no time to carry one).
fn cast_temporal(e: Expr, target: Target) -> Expr {
    let fraction = match (&e, target) {
        (Expr::Literal(value, _), Target::DateTime) => literal_fraction_micros(value),
        // A DATE from any number of MySQL's digit forms, YYYYMMDDhhmmss too (its date); the
        // CAST around this makes the DATETIME read a DATE.
        (Expr::Literal(..), Target::Date) => None,
        (_, Target::Date) => return as_temporal(e, Target::DateTime),
        // Another number: its text carries the fraction exactly (a DOUBLE's or a DECIMAL's).
        (_, Target::DateTime) => {
            let number = Expr::Cast(Cast::new(Box::new(e.clone()), DataType::Int64));
            let text = Expr::Cast(Cast::new(Box::new(e), DataType::Utf8));
            return ScalarUDF::new_from_impl(NumberToDate::new(target)).call(vec![number, text]);
        }
    };
    let temporal = as_temporal(e, target);
    match (fraction, &temporal) {
        (Some(micros), Expr::Literal(ScalarValue::TimestampMicrosecond(Some(t), z), _)) => {
            Expr::Literal(
                ScalarValue::TimestampMicrosecond(Some(t + micros), z.clone()),
                None,
            )
        }
        _ => temporal,
    }
}

/// The microseconds of a DECIMAL or DOUBLE literal's fraction (truncated to 6 digits), when its
/// integer part is a YYYYMMDDhhmmss number (one with a time of day).
fn literal_fraction_micros(value: &ScalarValue) -> Option<i64> {
    let (whole, micros) = match value {
        ScalarValue::Decimal128(Some(v), _, scale) if *scale > 0 => {
            let unit = 10i128.checked_pow(*scale as u32)?;
            let frac = (v % unit).abs();
            let micros = if *scale >= 6 {
                frac / 10i128.pow(*scale as u32 - 6)
            } else {
                frac * 10i128.pow(6 - *scale as u32)
            };
            (v / unit, micros as i64)
        }
        ScalarValue::Float64(Some(v)) if v.is_finite() && *v >= 0.0 => {
            (v.trunc() as i128, ((v.fract() * 1e6) as i64).min(999_999))
        }
        _ => return None,
    };
    (whole >= 100_000_000 && micros > 0).then_some(micros)
}

/// A literal number as a date: DATETIME when it carries a time of day (or the other side is
/// one), DATE otherwise; NULL when it is not a valid date.
fn literal(n: i64, target: Target) -> ScalarValue {
    match parse(n) {
        Some(dt) if target == Target::Date && n < 100_000_000 => {
            ScalarValue::Date32(Some(days(dt.date())))
        }
        Some(dt) => ScalarValue::TimestampMicrosecond(Some(dt.and_utc().timestamp_micros()), None),
        None if target == Target::Date => ScalarValue::Date32(None),
        None => ScalarValue::TimestampMicrosecond(None, None),
    }
}

/// The microseconds a number's text spells after its point (`'20010203101112.5'` 500000;
/// past six digits truncated, as MySQL's CAST to DATETIME(6)); none for an exponent.
fn text_fraction_micros(text: &str) -> i64 {
    if text.contains(['e', 'E']) {
        return 0;
    }
    let Some((_, fraction)) = text.split_once('.') else {
        return 0;
    };
    let digits: String = fraction
        .chars()
        .take_while(char::is_ascii_digit)
        .take(6)
        .collect();
    format!("{digits:0<6}").parse().unwrap_or(0)
}

fn days(d: NaiveDate) -> i32 {
    (d - NaiveDate::default()).num_days() as i32
}

/// Numbers as the DATETIMEs MySQL reads them as, with the fraction their `texts` spell.
fn datetimes(numbers: &Int64Array, texts: Option<&ArrayRef>) -> TimestampMicrosecondArray {
    let fractions: Vec<i64> = match texts {
        Some(texts) => texts
            .as_string::<i32>()
            .iter()
            .map(|t| t.map_or(0, text_fraction_micros))
            .collect(),
        None => vec![0; numbers.len()],
    };
    numbers
        .iter()
        .zip(fractions)
        .map(|(n, f)| {
            let at = n.and_then(parse)?;
            // A YYYYMMDD.f date has no time of day to carry a fraction.
            let f = if n? >= 100_000_000 { f } else { 0 };
            Some(at.and_utc().timestamp_micros() + f)
        })
        .collect()
}

/// Any numbers as the DATETIMEs MySQL reads them as (`YYYYMMDD[hhmmss][.ffffff]`), NULL where
/// they name none.
pub(crate) fn number_datetimes(values: &ArrayRef) -> Result<ArrayRef> {
    let numbers = datafusion::arrow::compute::cast(values, &DataType::Int64)?;
    let texts = datafusion::arrow::compute::cast(values, &DataType::Utf8)?;
    Ok(Arc::new(datetimes(
        numbers.as_primitive::<Int64Type>(),
        Some(&texts),
    )))
}

/// A number read as MySQL reads a date (see [`basalt_common::datetime_text::number_to_datetime`]).
fn parse(n: i64) -> Option<NaiveDateTime> {
    basalt_common::datetime_text::number_to_datetime(n)
}

/// `mysql_number_to_date(n)` / `mysql_number_to_datetime(n)`: [`parse`] over a column.
#[derive(Debug, PartialEq, Eq, Hash)]
pub(crate) struct NumberToDate {
    target: Target,
    signature: Signature,
}

impl NumberToDate {
    /// `mysql_number_to_date` and `mysql_number_to_datetime`.
    pub(crate) fn functions() -> Vec<ScalarUDF> {
        [Target::Date, Target::DateTime]
            .into_iter()
            .map(|t| ScalarUDF::new_from_impl(NumberToDate::new(t)))
            .collect()
    }

    fn new(target: Target) -> NumberToDate {
        NumberToDate {
            target,
            // The number, and (for a DATETIME) its text, whose fraction is kept.
            signature: Signature::one_of(
                vec![
                    TypeSignature::Exact(vec![DataType::Int64]),
                    TypeSignature::Exact(vec![DataType::Int64, DataType::Utf8]),
                ],
                Volatility::Immutable,
            ),
        }
    }
}

impl ScalarUDFImpl for NumberToDate {
    fn name(&self) -> &str {
        match self.target {
            Target::Date => "mysql_number_to_date",
            Target::DateTime => "mysql_number_to_datetime",
        }
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(match self.target {
            Target::Date => DataType::Date32,
            Target::DateTime => DataType::Timestamp(TimeUnit::Microsecond, None),
        })
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let (arrays, scalar) = crate::util::arguments(&args)?;
        let numbers: &Int64Array = arrays[0].as_primitive::<Int64Type>();
        let out: ArrayRef = match self.target {
            Target::Date => Arc::new(
                numbers
                    .iter()
                    .map(|n| n.and_then(|n| parse(n).filter(|_| n < 100_000_000)))
                    .map(|d| d.map(|d| days(d.date())))
                    .collect::<Date32Array>(),
            ),
            Target::DateTime => Arc::new(datetimes(numbers, arrays.get(1))),
        };
        crate::util::output(out, scalar)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ymd(n: i64) -> Option<String> {
        parse(n).map(|d| d.format("%Y-%m-%d %H:%M:%S").to_string())
    }

    #[test]
    fn numbers_that_name_no_date_compare_by_their_digits_or_as_zero() {
        assert_eq!(lax_date_digits(20240230), Some((20240230, 0)));
        assert_eq!(lax_date_digits(240230), Some((20240230, 0)));
        assert_eq!(lax_date_digits(20240100), Some((20240100, 0)));
        assert_eq!(lax_date_digits(20240105101112), Some((20240105, 101112)));
        for invalid in [
            0,
            -5,
            2024,
            20241301,
            20240132,
            99999999,
            100000000,
            20240105256000,
        ] {
            assert_eq!(lax_date_digits(invalid), None, "{invalid}");
        }
    }

    #[test]
    fn fractions_of_number_text() {
        assert_eq!(text_fraction_micros("20010203101112.121314"), 121_314);
        assert_eq!(text_fraction_micros("10203101112.12"), 120_000);
        assert_eq!(text_fraction_micros("20010203101112.1234567"), 123_456);
        assert_eq!(text_fraction_micros("20010203101112"), 0);
        assert_eq!(text_fraction_micros("2.0010203101112e13"), 0);
    }

    #[test]
    fn numbers_read_as_mysql_reads_dates() {
        assert_eq!(ymd(20240105).as_deref(), Some("2024-01-05 00:00:00"));
        assert_eq!(ymd(240105).as_deref(), Some("2024-01-05 00:00:00"));
        assert_eq!(ymd(991231).as_deref(), Some("1999-12-31 00:00:00"));
        assert_eq!(ymd(20240105101112).as_deref(), Some("2024-01-05 10:11:12"));
        assert_eq!(ymd(240105101112).as_deref(), Some("2024-01-05 10:11:12"));
        for invalid in [0, -1, 2024, 99999999, 20240230, 20240105256000, i64::MAX] {
            assert_eq!(ymd(invalid), None, "{invalid}");
        }
    }
}
