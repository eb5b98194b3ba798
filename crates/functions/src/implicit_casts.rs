//! Strings where a number is expected, as Doris reads them. A string in arithmetic is a DOUBLE
//! (`'5' * 2` is 10, `'1.5' + 1` is 2.5), where DataFusion refuses to plan; `-x` of a string,
//! a boolean or an unsigned number gets its meaning here too ([`crate::negation`]). CAST of a
//! string to an integer type reads a decimal string and truncates it (`CAST('1212.31' AS INT)`
//! is 1212), where DataFusion fails the query; a string that is no number, or a value outside
//! the target type, is NULL (Doris's rule) rather than an error; CAST of a string to DATE or
//! DATETIME reads MySQL's relaxed forms (`2012/12/31`, `12-12-31`), NULL for no valid date
//! (MySQL and Doris).
//! COALESCE / IFNULL / NVL / NULLIF of a string beside numbers is a string (MySQL's result
//! type), where DataFusion cast the strings to the number type and failed on the first that
//! was not one. LIKE matches a number or date operand as its text.
//!
//! [`StringArithmeticPlanner`] converts the operands as the SQL is planned (DataFusion refuses
//! `Utf8 + Int64` while planning; a string beside a bitwise operator is its number rounded to an
//! integer); [`ImplicitCasts`], an analyzer rule running before type
//! coercion, handles the casts and the COALESCE family. INSERT statements and Stream Load
//! column expressions keep checked conversions (a bad value for a column is an error there,
//! and a load filters its row): DataFusion's for numbers, MySQL's date forms for DATE and
//! DATETIME (strict: a string that is no date fails).

use crate::expr_rules::rewrite_node_expressions;
use datafusion::arrow::array::{Array, ArrayRef, AsArray, Float64Array, Int64Array, UInt64Array};
use datafusion::arrow::datatypes::{DataType, IntervalMonthDayNano, TimeUnit};
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::Transformed;
use datafusion::common::{DFSchema, Result, ScalarValue};
use datafusion::logical_expr::expr::{ScalarFunction, TryCast};
use datafusion::logical_expr::planner::{ExprPlanner, PlannerResult, RawBinaryExpr};
use datafusion::logical_expr::{
    Cast, ColumnarValue, Expr, ExprSchemable, LogicalPlan, ScalarFunctionArgs, ScalarUDF,
    ScalarUDFImpl, Signature, Volatility,
};
use datafusion::optimizer::AnalyzerRule;
use std::sync::{Arc, OnceLock};

fn is_string(t: &DataType) -> bool {
    matches!(t, DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8)
}

fn is_decimal(t: &DataType) -> bool {
    matches!(
        t,
        DataType::Decimal32(..)
            | DataType::Decimal64(..)
            | DataType::Decimal128(..)
            | DataType::Decimal256(..)
    )
}

fn is_number(t: &DataType) -> bool {
    t.is_numeric()
}

/// Converts string operands of arithmetic while the SQL is planned.
#[derive(Debug, Default)]
pub struct StringArithmeticPlanner;

impl ExprPlanner for StringArithmeticPlanner {
    fn plan_binary_op(
        &self,
        expr: RawBinaryExpr,
        schema: &DFSchema,
    ) -> Result<PlannerResult<RawBinaryExpr>> {
        use datafusion::sql::sqlparser::ast::BinaryOperator as Sql;
        // MySQL's AND/OR/XOR take numbers and strings (0 is false).
        if matches!(expr.op, Sql::And | Sql::Or)
            && (!is_logical(&expr.left, schema) || !is_logical(&expr.right, schema))
        {
            return Ok(PlannerResult::Original(RawBinaryExpr {
                op: expr.op,
                left: truth(expr.left, schema),
                right: truth(expr.right, schema),
            }));
        }
        // Date arithmetic on text (`DATE_SUB(CONCAT(..), INTERVAL 1 YEAR)`, `s + INTERVAL 1
        // DAY`): MySQL reads the text as a date and answers with text.
        let is_text = |e: &Expr| operand_type(e, schema).as_ref().is_some_and(is_string);
        match (
            &expr.op,
            interval_literal(&expr.left),
            interval_literal(&expr.right),
        ) {
            (Sql::Plus | Sql::Minus, None, Some(interval)) if is_text(&expr.left) => {
                let sign = if expr.op == Sql::Plus { 1 } else { -1 };
                let shifted = crate::text_date_shift::call(expr.left, interval, sign);
                return Ok(PlannerResult::Planned(shifted));
            }
            (Sql::Plus, Some(interval), None) if is_text(&expr.right) => {
                let shifted = crate::text_date_shift::call(expr.right, interval, 1);
                return Ok(PlannerResult::Planned(shifted));
            }
            _ => {}
        }
        // A string or fractional operand of a bitwise operator is its number rounded to an
        // integer, a boolean its 1 or 0 (MySQL: `2 ^ '31'` is 29, `0 | '1.9'` is 2, `2 / 3 & 3`
        // is 1, `1 << !0` is 2).
        // MySQL's `/` gives a fraction even of integers (the exact division is planned later).
        let quotient = |e: &Expr| {
            let divide = datafusion::logical_expr::Operator::Divide;
            matches!(e, Expr::BinaryExpr(b) if b.op == divide)
        };
        let fraction = |e: &Expr, t: &DataType| t.is_floating() || is_decimal(t) || quotient(e);
        let not_integer = |e: &Expr| {
            operand_type(e, schema)
                .is_some_and(|t| is_string(&t) || t == DataType::Boolean || fraction(e, &t))
        };
        if matches!(
            expr.op,
            Sql::BitwiseAnd
                | Sql::BitwiseOr
                | Sql::BitwiseXor
                | Sql::PGBitwiseXor
                | Sql::PGBitwiseShiftLeft
                | Sql::PGBitwiseShiftRight
        ) && (not_integer(&expr.left) || not_integer(&expr.right))
        {
            let integer = |e: Expr| match operand_type(&e, schema) {
                Some(DataType::Boolean) => Expr::Cast(Cast::new(Box::new(e), DataType::Int64)),
                Some(t) if is_string(&t) || fraction(&e, &t) => {
                    let number = if is_string(&t) { to_number(e) } else { e };
                    let rounded = datafusion::functions::math::round().call(vec![number]);
                    Expr::TryCast(TryCast::new(Box::new(rounded), DataType::Int64))
                }
                _ => e,
            };
            return Ok(PlannerResult::Original(RawBinaryExpr {
                op: expr.op,
                left: integer(expr.left),
                right: integer(expr.right),
            }));
        }
        if !matches!(
            expr.op,
            Sql::Plus | Sql::Minus | Sql::Multiply | Sql::Divide | Sql::Modulo
        ) {
            return Ok(PlannerResult::Original(expr));
        }
        let (Some(left), Some(right)) = (
            operand_type(&expr.left, schema),
            operand_type(&expr.right, schema),
        ) else {
            return Ok(PlannerResult::Original(expr));
        };
        // A DATE or DATETIME beside a number is MySQL's number YYYYMMDD[hhmmss[.f]].
        let expr = date_operands_as_numbers(expr, (&left, &right), schema);
        let (left, right) = match (
            operand_type(&expr.left, schema),
            operand_type(&expr.right, schema),
        ) {
            (Some(left), Some(right)) => (left, right),
            _ => return Ok(PlannerResult::Original(expr)),
        };
        let numeric = |t: &DataType| is_string(t) || is_number(t) || t.is_null();
        if !(is_string(&left) || is_string(&right)) || !numeric(&left) || !numeric(&right) {
            return Ok(PlannerResult::Original(expr));
        }
        // A JSON operand is its scalar (MySQL: `'"2.5"' + 0` is 2.5, `true + 0` is 1).
        let operand = |e: Expr, t: &DataType| match e {
            e if crate::mysql_comparisons::is_json(&e, schema) => {
                to_number(crate::mysql_comparisons::json_scalar(e))
            }
            e if is_string(t) => to_number(e),
            e => e,
        };
        let left_expr = operand(expr.left.clone(), &left);
        let right_expr = operand(expr.right.clone(), &right);
        Ok(PlannerResult::Original(RawBinaryExpr {
            op: expr.op,
            left: left_expr,
            right: right_expr,
        }))
    }
}

/// Arithmetic of a DATE, DATETIME or TIME with a number or another date: each date operand
/// becomes [`crate::date_number`]'s number, with the DATETIME's or TIME's declared fractional
/// digits (MySQL and Doris: `d2 - d1` of 2020-02-02 and 2020-01-01 is 101; `SEC_TO_TIME(9001)
/// + 0` is 23001). Date plus an interval stays date arithmetic.
fn date_operands_as_numbers(
    expr: RawBinaryExpr,
    (left, right): (&DataType, &DataType),
    schema: &DFSchema,
) -> RawBinaryExpr {
    use crate::date_number::is_temporal;
    let operand = |t: &DataType| is_temporal(t) || is_number(t);
    let convert = (is_temporal(left) || is_temporal(right)) && operand(left) && operand(right);
    if !convert {
        return expr;
    }
    let number = |e: Expr, t: &DataType| {
        if !is_temporal(t) {
            return e;
        }
        let digits = crate::date_number::declared_digits(&e, schema);
        crate::date_number::call(e, digits)
    };
    RawBinaryExpr {
        op: expr.op,
        left: number(expr.left, left),
        right: number(expr.right, right),
    }
}

/// An operand's type before coercion. MySQL's divisors arrive as `NULLIF(x, 0)` (division by
/// zero is NULL), whose type DataFusion cannot tell before coercion when `x` is a string: it is
/// `x`'s.
fn operand_type(e: &Expr, schema: &DFSchema) -> Option<DataType> {
    match e {
        Expr::ScalarFunction(f) if is_nullif(f) => f.args.first()?.get_type(schema).ok(),
        _ => e.get_type(schema).ok(),
    }
}

fn is_nullif(f: &ScalarFunction) -> bool {
    f.name().eq_ignore_ascii_case("nullif") && f.args.len() == 2
}

/// A string operand as a DOUBLE; a guarded divisor `NULLIF(s, 0)` compares the number to zero.
fn to_number(e: Expr) -> Expr {
    match e {
        Expr::ScalarFunction(mut f) if is_nullif(&f) => {
            let string = f.args.remove(0);
            f.args.insert(0, to_double(string));
            Expr::ScalarFunction(f)
        }
        other => to_double(other),
    }
}

/// One of this module's expression rewrites.
type Rule = fn(Expr, &DFSchema) -> Result<Transformed<Expr>>;

/// The analyzer rule; it must run before DataFusion's type coercion.
#[derive(Debug, Default)]
pub struct ImplicitCasts;

impl AnalyzerRule for ImplicitCasts {
    fn name(&self) -> &str {
        "mysql_implicit_casts"
    }

    fn analyze(&self, plan: LogicalPlan, config: &ConfigOptions) -> Result<LogicalPlan> {
        // An INSERT converts its values to the columns' types with DataFusion's checked casts,
        // and so does a load that asks for it.
        let lenient = config
            .extensions
            .get::<crate::MySqlOptions>()
            .is_none_or(|o| o.lenient_string_casts);
        // Comparisons of text with numbers compare numbers everywhere (they store nothing).
        let compared = |e: Expr, schema: &DFSchema, rule: Rule| {
            rule(e, schema)?
                .transform_data(|e| text_aggregate_arguments(e, schema))?
                .transform_data(|e| crate::text_number_comparisons::rewrite(e, schema))?
                .transform_data(|e| crate::text_date_comparisons::rewrite(e, schema))
        };
        if matches!(plan, LogicalPlan::Dml(_)) || !lenient {
            // Their strings still read as dates MySQL's way, failing when they are none.
            return plan
                .transform_up_with_subqueries(|node| {
                    rewrite_node_expressions(node, |e, s| compared(e, s, stored_dates))
                })
                .map(|t| t.data);
        }
        plan.transform_up_with_subqueries(|node| {
            rewrite_node_expressions(node, |e, s| compared(e, s, casts))
        })
        .map(|t| t.data)
    }
}

/// `SUM(s)`, `AVG(s)`, `STDDEV(s)` .. of a string: an aggregate that coerces a string argument
/// to a DOUBLE reads it as one MySQL's way (NULL where it is no number, Doris's rule), where
/// the coercion's CAST would fail the query. Window forms too.
fn text_aggregate_arguments(e: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    use datafusion::logical_expr::expr::WindowFunctionDefinition;
    let numbered = |udaf: &datafusion::logical_expr::AggregateUDF, args: &mut Vec<Expr>| {
        let Ok(types) = args
            .iter()
            .map(|a| a.get_type(schema))
            .collect::<Result<Vec<_>>>()
        else {
            return false;
        };
        if !types.iter().any(is_string)
            || !matches!(
                udaf.signature().type_signature,
                datafusion::logical_expr::TypeSignature::UserDefined
            )
        {
            return false;
        }
        let Ok(coerced) = udaf.inner().coerce_types(&types) else {
            return false;
        };
        let mut changed = false;
        for ((arg, from), to) in args.iter_mut().zip(&types).zip(&coerced) {
            if is_string(from) && *to == DataType::Float64 {
                let value = std::mem::replace(arg, Expr::Literal(ScalarValue::Null, None));
                *arg = to_double(value);
                changed = true;
            }
        }
        changed
    };
    Ok(match e {
        Expr::AggregateFunction(mut f) => {
            let changed = numbered(&f.func, &mut f.params.args);
            Transformed::new_transformed(Expr::AggregateFunction(f), changed)
        }
        Expr::WindowFunction(mut w) => {
            let changed = match &w.fun {
                WindowFunctionDefinition::AggregateUDF(udaf) => {
                    let udaf = udaf.clone();
                    numbered(&udaf, &mut w.params.args)
                }
                _ => false,
            };
            Transformed::new_transformed(Expr::WindowFunction(w), changed)
        }
        other => Transformed::no(other),
    })
}

fn casts(e: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    let type_of = |e: &Expr| e.get_type(schema).ok();
    match e {
        Expr::Cast(Cast { expr, field }) if type_of(&expr).as_ref().is_some_and(is_string) => {
            Ok(match converted(*expr, field.data_type()) {
                Ok(e) => Transformed::yes(e),
                Err(expr) => {
                    Transformed::no(Expr::Cast(Cast::new_from_field(Box::new(expr), field)))
                }
            })
        }
        Expr::TryCast(TryCast { expr, field })
            if type_of(&expr).as_ref().is_some_and(is_string) =>
        {
            Ok(match converted(*expr, field.data_type()) {
                Ok(e) => Transformed::yes(e),
                Err(expr) => Transformed::no(Expr::TryCast(TryCast {
                    expr: Box::new(expr),
                    field,
                })),
            })
        }
        // `-x` of anything but a literal, as MySQL negates it (`- @a` of a string, `-u` of an
        // UNSIGNED column, `-(a < b)`).
        Expr::ScalarFunction(f) if f.name() == crate::negation::NAME && f.args.len() == 1 => {
            let mut args = f.args;
            let x = args.remove(0);
            Ok(match type_of(&x) {
                Some(t) => Transformed::yes(crate::negation::negated(x, &t)),
                None => Transformed::no(Expr::ScalarFunction(ScalarFunction {
                    func: f.func,
                    args: vec![x],
                })),
            })
        }
        // NULLIF is its first argument's type: a string compared with a number stays one.
        Expr::ScalarFunction(mut f) if is_nullif(&f) => {
            let first = type_of(&f.args[0]);
            let second = type_of(&f.args[1]);
            match (first, second) {
                (Some(a), Some(b)) if is_string(&a) && !is_string(&b) && !b.is_null() => {
                    let other = f.args.remove(1);
                    f.args
                        .push(Expr::Cast(Cast::new(Box::new(other), DataType::Utf8)));
                    Ok(Transformed::yes(Expr::ScalarFunction(f)))
                }
                _ => Ok(Transformed::no(Expr::ScalarFunction(f))),
            }
        }
        Expr::ScalarFunction(f) if is_coalesce_family(f.name()) => {
            let types: Vec<Option<DataType>> = f.args.iter().map(type_of).collect();
            let any_string = types.iter().flatten().any(is_string);
            let any_other = types
                .iter()
                .flatten()
                .any(|t| !is_string(t) && !t.is_null());
            if !(any_string && any_other) {
                return Ok(Transformed::no(Expr::ScalarFunction(f)));
            }
            let args = f
                .args
                .into_iter()
                .zip(types)
                .map(|(a, t)| match t {
                    Some(t) if !is_string(&t) && !t.is_null() => {
                        Expr::Cast(Cast::new(Box::new(a), DataType::Utf8))
                    }
                    _ => a,
                })
                .collect();
            Ok(Transformed::yes(Expr::ScalarFunction(ScalarFunction {
                func: f.func,
                args,
            })))
        }
        // MySQL's LIKE compares text: a number or a date on either side is matched as its
        // text (`dt LIKE '2024-01-%'`, `id LIKE '12%'`).
        Expr::Like(mut like) => {
            let as_text = |e: Box<Expr>| match type_of(&e) {
                Some(t) if !is_string(&t) && !t.is_null() && !t.is_nested() => {
                    (Box::new(Expr::Cast(Cast::new(e, DataType::Utf8))), true)
                }
                _ => (e, false),
            };
            let (expr, left) = as_text(like.expr);
            let (pattern, right) = as_text(like.pattern);
            like.expr = expr;
            like.pattern = pattern;
            Ok(if left || right {
                Transformed::yes(Expr::Like(like))
            } else {
                Transformed::no(Expr::Like(like))
            })
        }
        other => Ok(Transformed::no(other)),
    }
}

/// A constant INTERVAL as months, days and nanoseconds.
fn interval_literal(e: &Expr) -> Option<IntervalMonthDayNano> {
    match e {
        Expr::Literal(ScalarValue::IntervalMonthDayNano(Some(i)), _) => Some(*i),
        Expr::Literal(ScalarValue::IntervalYearMonth(Some(months)), _) => {
            Some(IntervalMonthDayNano::new(*months, 0, 0))
        }
        Expr::Literal(ScalarValue::IntervalDayTime(Some(d)), _) => Some(IntervalMonthDayNano::new(
            0,
            d.days,
            i64::from(d.milliseconds) * 1_000_000,
        )),
        _ => None,
    }
}

/// Casts of strings to DATE / DATETIME where values are stored: MySQL's relaxed forms, an
/// error for a string that is no date (a TRY_CAST stays NULL for it).
fn stored_dates(e: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    let is_text = |e: &Expr| e.get_type(schema).ok().as_ref().is_some_and(is_string);
    Ok(match e {
        Expr::Cast(Cast { expr, field }) if is_text(&expr) => {
            match temporal(*expr, field.data_type(), true) {
                Ok(e) => Transformed::yes(e),
                Err(expr) => {
                    Transformed::no(Expr::Cast(Cast::new_from_field(Box::new(expr), field)))
                }
            }
        }
        Expr::TryCast(TryCast { expr, field }) if is_text(&expr) => {
            match temporal(*expr, field.data_type(), false) {
                Ok(e) => Transformed::yes(e),
                Err(expr) => Transformed::no(Expr::TryCast(TryCast {
                    expr: Box::new(expr),
                    field,
                })),
            }
        }
        other => Transformed::no(other),
    })
}

/// A string read as DATE / DATETIME (strict: failing on no date); the string back when the
/// target is neither.
pub(crate) fn temporal(
    string: Expr,
    target: &DataType,
    strict: bool,
) -> std::result::Result<Expr, Expr> {
    use crate::temporal_text as t;
    match target {
        DataType::Date32 => {
            let f = if strict {
                t::string_to_date_strict()
            } else {
                t::string_to_date()
            };
            Ok(call(f, string))
        }
        DataType::Timestamp(_, None) => {
            let f = if strict {
                t::string_to_datetime_strict()
            } else {
                t::string_to_datetime()
            };
            let micros = call(f, string);
            Ok(match target {
                DataType::Timestamp(TimeUnit::Microsecond, None) => micros,
                _ => Expr::Cast(Cast::new(Box::new(micros), target.clone())),
            })
        }
        _ => Err(string),
    }
}

/// True for operands AND/OR take as they are (booleans, NULL, or of unknown type).
fn is_logical(e: &Expr, schema: &DFSchema) -> bool {
    e.get_type(schema)
        .map_or(true, |t| t == DataType::Boolean || t.is_null())
}

/// A number or string operand of AND/OR as MySQL reads it: true when not 0.
fn truth(e: Expr, schema: &DFSchema) -> Expr {
    match e.get_type(schema) {
        Ok(t) if is_number(&t) => e.not_eq(datafusion::prelude::lit(0)),
        Ok(t) if is_string(&t) => to_double(e).not_eq(datafusion::prelude::lit(0.0)),
        _ => e,
    }
}

fn is_coalesce_family(name: &str) -> bool {
    ["coalesce", "nvl", "ifnull"]
        .iter()
        .any(|n| name.eq_ignore_ascii_case(n))
}

/// A string cast to a number type, Doris's way, or to a DATE / DATETIME, MySQL's way; the
/// string back when the target is neither.
fn converted(string: Expr, target: &DataType) -> std::result::Result<Expr, Expr> {
    let string = match temporal(string, target, false) {
        Ok(date) => return Ok(date),
        Err(string) => string,
    };
    if *target == DataType::UInt64 {
        return Ok(call(string_to_unsigned(), string));
    }
    if target.is_integer() {
        let wide = call(string_to_bigint(), string);
        return Ok(if *target == DataType::Int64 {
            wide
        } else {
            Expr::TryCast(TryCast::new(Box::new(wide), target.clone()))
        });
    }
    if target.is_floating() {
        let double = to_double(string);
        return Ok(if *target == DataType::Float64 {
            double
        } else {
            Expr::Cast(Cast::new(Box::new(double), target.clone()))
        });
    }
    Err(string)
}

fn call(f: &ScalarUDF, arg: Expr) -> Expr {
    f.call(vec![arg])
}

fn to_double(e: Expr) -> Expr {
    call(string_to_double(), e)
}

pub(crate) fn string_to_double() -> &'static ScalarUDF {
    static F: OnceLock<ScalarUDF> = OnceLock::new();
    F.get_or_init(|| ScalarUDF::new_from_impl(StringToNumber::new(Target::Double)))
}

pub(crate) fn string_to_bigint() -> &'static ScalarUDF {
    static F: OnceLock<ScalarUDF> = OnceLock::new();
    F.get_or_init(|| ScalarUDF::new_from_impl(StringToNumber::new(Target::BigInt)))
}

/// `CAST(s AS UNSIGNED)`: the whole BIGINT UNSIGNED range (`'18446744073709551615'`), a
/// negative integer's 64 bits as MySQL reads them (`'-1'` is 18446744073709551615).
fn string_to_unsigned() -> &'static ScalarUDF {
    static F: OnceLock<ScalarUDF> = OnceLock::new();
    F.get_or_init(|| ScalarUDF::new_from_impl(StringToNumber::new(Target::Unsigned)))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Target {
    Double,
    BigInt,
    Unsigned,
}

/// A string read as a DOUBLE or a BIGINT; NULL when it is not a number (or not one in range).
#[derive(Debug, PartialEq, Eq, Hash)]
struct StringToNumber {
    target: Target,
    signature: Signature,
}

impl StringToNumber {
    fn new(target: Target) -> StringToNumber {
        StringToNumber {
            target,
            signature: Signature::string(1, Volatility::Immutable),
        }
    }
}

impl ScalarUDFImpl for StringToNumber {
    fn name(&self) -> &str {
        match self.target {
            Target::Double => "mysql_string_to_double",
            Target::BigInt => "mysql_string_to_bigint",
            Target::Unsigned => "mysql_string_to_unsigned",
        }
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(match self.target {
            Target::Double => DataType::Float64,
            Target::BigInt => DataType::Int64,
            Target::Unsigned => DataType::UInt64,
        })
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let (arrays, scalar) = crate::util::arguments(&args)?;
        let strings = datafusion::arrow::compute::cast(&arrays[0], &DataType::Utf8)?;
        let strings = strings.as_string::<i32>();
        let out: ArrayRef = match self.target {
            Target::Double => Arc::new(
                strings
                    .iter()
                    .map(|s| s.and_then(parse_double))
                    .collect::<Float64Array>(),
            ),
            Target::BigInt => Arc::new(
                strings
                    .iter()
                    .map(|s| s.and_then(parse_bigint))
                    .collect::<Int64Array>(),
            ),
            Target::Unsigned => Arc::new(
                strings
                    .iter()
                    .map(|s| s.and_then(parse_unsigned))
                    .collect::<UInt64Array>(),
            ),
        };
        debug_assert_eq!(out.len(), strings.len());
        crate::util::output(out, scalar)
    }
}

/// A decimal or scientific number, surrounding spaces allowed; not `inf` or `nan`.
pub(crate) fn parse_double(s: &str) -> Option<f64> {
    let s = s.trim();
    let digits = s.trim_start_matches(['+', '-']);
    if !digits.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
        return None;
    }
    s.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// An integer, or a decimal number truncated toward zero, within BIGINT.
pub(crate) fn parse_bigint(s: &str) -> Option<i64> {
    let s = s.trim();
    if let Ok(v) = s.parse::<i64>() {
        return Some(v);
    }
    let v = parse_double(s)?.trunc();
    // i64::MAX as f64 rounds up to 2^63, which is out of range.
    (v >= i64::MIN as f64 && v < i64::MAX as f64).then_some(v as i64)
}

/// An integer within BIGINT UNSIGNED, a negative BIGINT as its 64 bits, or a decimal number
/// truncated toward zero within BIGINT UNSIGNED.
fn parse_unsigned(s: &str) -> Option<u64> {
    let s = s.trim();
    if let Ok(v) = s.trim_start_matches('+').parse::<u64>() {
        return Some(v);
    }
    if let Ok(v) = s.parse::<i64>() {
        return Some(v as u64);
    }
    let v = parse_double(s)?.trunc();
    if v < 0.0 {
        return (v >= i64::MIN as f64).then_some(v as i64 as u64);
    }
    // u64::MAX as f64 rounds up to 2^64, which is out of range.
    (v < u64::MAX as f64).then_some(v as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_read_as_numbers() {
        assert_eq!(parse_double(" 1.5e3 "), Some(1500.0));
        assert_eq!(parse_double("-.5"), Some(-0.5));
        assert_eq!(parse_double("abc"), None);
        assert_eq!(parse_double("12abc"), None);
        assert_eq!(parse_double("inf"), None);
        assert_eq!(parse_double("NaN"), None);
        assert_eq!(parse_bigint("1212.31"), Some(1212));
        assert_eq!(parse_bigint("-7.9"), Some(-7));
        assert_eq!(parse_bigint("9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_bigint("9223372036854775808"), None);
        assert_eq!(parse_bigint("1e30"), None);
        assert_eq!(parse_unsigned("18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_unsigned("-1"), Some(u64::MAX));
        assert_eq!(parse_unsigned(" 12.9 "), Some(12));
        assert_eq!(parse_unsigned("18446744073709551616"), None);
        assert_eq!(parse_unsigned("abc"), None);
        assert_eq!(parse_bigint(""), None);
    }
}
