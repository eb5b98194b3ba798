//! `/` on integers and decimals as MySQL computes it: a DECIMAL quotient with
//! `div_precision_increment` (default 4, read from [`MySqlOptions`]) more decimals than the
//! dividend, rounded half away from zero (`1 / 2` is
//! 0.5000, `2 / 3` is 0.6667), and NULL when the divisor is zero. An analyzer rule running
//! before type coercion replaces each such division with [`ExactDivide`], which divides the
//! 128-bit unscaled values exactly; DataFusion's own decimal division truncates (0.6666), and
//! its integer division drops the fraction. A DECIMAL wider than 38 digits divides the same way
//! in 256 bits (up to 76 digits); divisions with a float stay DataFusion's.

use basalt_common::BasaltError;
use datafusion::arrow::array::{Array, ArrayRef, AsArray, Decimal128Array, Decimal256Array};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{i256, DataType, Decimal128Type, Decimal256Type, DecimalType};
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::Transformed;
use datafusion::common::{DFSchema, Result, ScalarValue};
use datafusion::error::DataFusionError;
use datafusion::logical_expr::{
    BinaryExpr, ColumnarValue, Expr, ExprSchemable, LogicalPlan, Operator, ScalarFunctionArgs,
    ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use datafusion::optimizer::AnalyzerRule;
use std::sync::Arc;

use crate::expr_rules::rewrite_node_expressions;

datafusion::common::extensions_options! {
    /// MySQL session settings Basalt's planner rules read (kept in step with the session's
    /// variables before each statement is planned).
    pub struct MySqlOptions {
        /// Decimals `/` adds to the dividend's scale (MySQL caps it at 30).
        pub div_precision_increment: u8, default = 4
        /// A string CAST to a number is NULL when it is no number (queries); off, the cast
        /// fails (a Stream Load's column expressions, which filter the row).
        pub lenient_string_casts: bool, default = true
        /// Doris's `disable_join_reorder`: inner joins run in the order the query names them.
        pub disable_join_reorder: bool, default = false
        /// `@@time_zone`: the zone whose today a TIME read as a DATETIME starts from.
        pub time_zone: String, default = "SYSTEM".to_string()
        /// How many stored routines the statement runs inside (0: the client's own): its
        /// stored-function calls take turns with the calls of the same depth.
        pub routine_depth: usize, default = 0
        /// `@@block_encryption_mode`: AES_ENCRYPT/AES_DECRYPT's mode when no argument names one.
        pub block_encryption_mode: String, default = "aes-128-ecb".to_string()
        /// `@@cte_max_recursion_depth`: the iterations a recursive CTE may run.
        pub cte_max_recursion_depth: u64, default = 1000
    }
}

impl datafusion::common::config::ConfigExtension for MySqlOptions {
    const PREFIX: &'static str = "mysql";
}

/// The analyzer rule; it must run before DataFusion's type coercion.
#[derive(Debug, Default)]
pub struct ExactDivision;

impl AnalyzerRule for ExactDivision {
    fn name(&self) -> &str {
        "mysql_exact_division"
    }

    fn analyze(&self, plan: LogicalPlan, config: &ConfigOptions) -> Result<LogicalPlan> {
        let increment = config
            .extensions
            .get::<MySqlOptions>()
            .map_or(4, |o| o.div_precision_increment.min(30));
        plan.transform_up_with_subqueries(|node| {
            rewrite_node_expressions(node, |e, schema| exact(e, schema, increment))
        })
        .map(|t| t.data)
    }
}

/// `l / r` of integers and decimals as an [`ExactDivide`] call; anything else unchanged.
fn exact(e: Expr, schema: &DFSchema, increment: u8) -> Result<Transformed<Expr>> {
    let Expr::BinaryExpr(BinaryExpr {
        left,
        op: Operator::Divide,
        right,
    }) = &e
    else {
        return Ok(Transformed::no(e));
    };
    let (Ok(lt), Ok(rt)) = (left.get_type(schema), right.get_type(schema)) else {
        return Ok(Transformed::no(e));
    };
    if quotient_type(&lt, &rt, increment).is_none() {
        return Ok(Transformed::no(e));
    }
    let call = ScalarUDF::new_from_impl(ExactDivide::new(increment))
        .call(vec![left.as_ref().clone(), right.as_ref().clone()]);
    Ok(Transformed::yes(call))
}

/// An integer type as the DECIMAL(digits, 0) that holds all its values; a DECIMAL(p, s) as is.
pub(crate) fn as_decimal(t: &DataType) -> Option<(u8, i8)> {
    Some(match t {
        DataType::Int8 | DataType::UInt8 => (3, 0),
        DataType::Int16 | DataType::UInt16 => (5, 0),
        DataType::Int32 | DataType::UInt32 => (10, 0),
        DataType::Int64 => (19, 0),
        DataType::UInt64 => (20, 0),
        DataType::Decimal128(p, s) | DataType::Decimal256(p, s) if *s >= 0 => (*p, *s),
        _ => return None,
    })
}

/// DECIMAL(p, s) of `l / r`: s is the dividend's scale plus `increment`, p as DataFusion sizes
/// a quotient (capped at 38, or at 76 when either side is a 256-bit DECIMAL). None when either
/// side is not an integer or DECIMAL.
fn quotient_type(l: &DataType, r: &DataType, increment: u8) -> Option<DataType> {
    let ((lp, ls), (_, rs)) = (as_decimal(l)?, as_decimal(r)?);
    let wide = [l, r].iter().any(|t| matches!(t, DataType::Decimal256(..)));
    let max = if wide { 76 } else { 38 };
    let scale = ls.checked_add(i8::try_from(increment).ok()?)?;
    if scale > max {
        return None;
    }
    let precision = (lp as i32 - ls as i32 + rs as i32 + scale as i32).clamp(1, max as i32) as u8;
    let precision = precision.max(scale as u8);
    Some(if wide {
        DataType::Decimal256(precision, scale)
    } else {
        DataType::Decimal128(precision, scale)
    })
}

/// The name of [`ExactDivide`].
pub(crate) const DIVIDE: &str = "mysql_divide";
/// The name of [`ExactDivide::kept`], the division that cuts its last digit instead of rounding
/// it (MySQL's inner quotients, see [`crate::division_digits`]).
pub(crate) const DIVIDE_KEPT: &str = "mysql_divide_kept";

/// MySQL's `/` on integers and decimals, with `increment` more decimals than the dividend.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct ExactDivide {
    signature: Signature,
    increment: u8,
    /// Rounds the last digit half away from zero; else cuts it (toward zero).
    rounds: bool,
}

impl ExactDivide {
    /// The function with `increment` more decimals than the dividend.
    pub(crate) fn udf(increment: u8) -> ScalarUDF {
        ScalarUDF::new_from_impl(ExactDivide::new(increment))
    }

    /// The function with `increment` more decimals than the dividend, the last one cut, not
    /// rounded: MySQL's quotient as arithmetic on it sees it.
    pub(crate) fn kept(increment: u8) -> ScalarUDF {
        ScalarUDF::new_from_impl(ExactDivide {
            rounds: false,
            ..ExactDivide::new(increment)
        })
    }

    fn new(increment: u8) -> Self {
        ExactDivide {
            signature: Signature::any(2, Volatility::Immutable),
            increment,
            rounds: true,
        }
    }
}

impl ScalarUDFImpl for ExactDivide {
    fn name(&self) -> &str {
        if self.rounds {
            DIVIDE
        } else {
            DIVIDE_KEPT
        }
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, args: &[DataType]) -> Result<DataType> {
        match args {
            [l, r] => quotient_type(l, r, self.increment)
                .or_else(|| float_operands(l, r).then_some(DataType::Float64))
                .ok_or_else(|| DataFusionError::Plan(format!("cannot divide {l} by {r} exactly"))),
            _ => Err(DataFusionError::Plan(
                "mysql_divide takes two arguments".into(),
            )),
        }
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let scalars = args
            .args
            .iter()
            .all(|a| matches!(a, ColumnarValue::Scalar(_)));
        let arrays = ColumnarValue::values_to_arrays(&args.args)?;
        let [l, r] = arrays.as_slice() else {
            return Err(DataFusionError::Plan(
                "mysql_divide takes two arguments".into(),
            ));
        };
        // An operand typed DOUBLE only once coerced (a CASE of an integer and an AVG):
        // DOUBLE division, NULL by zero.
        if args.return_field.data_type() == &DataType::Float64 {
            let out = divide_floats(l, r)?;
            return Ok(if scalars {
                ColumnarValue::Scalar(ScalarValue::try_from_array(&out, 0)?)
            } else {
                ColumnarValue::Array(out)
            });
        }
        // The decimals added follow from the call's own result type: the same as `increment`
        // where the call was planned, and what travelled with it in a plan fragment.
        let increment = match (args.return_field.data_type(), as_decimal(l.data_type())) {
            (DataType::Decimal128(_, out) | DataType::Decimal256(_, out), Some((_, dividend)))
                if *out >= dividend =>
            {
                (*out - dividend) as u8
            }
            _ => self.increment,
        };
        let out = divide(l, r, increment, self.rounds)?;
        if scalars {
            Ok(ColumnarValue::Scalar(ScalarValue::try_from_array(&out, 0)?))
        } else {
            Ok(ColumnarValue::Array(out))
        }
    }
}

/// Whether `l / r` divides numbers one of which is a float (DOUBLE division).
fn float_operands(l: &DataType, r: &DataType) -> bool {
    let number = |t: &DataType| t.is_numeric() || t.is_null();
    number(l) && number(r) && (l.is_floating() || r.is_floating())
}

/// `l / r` as DOUBLEs; NULL where `r` is zero.
fn divide_floats(l: &ArrayRef, r: &ArrayRef) -> Result<ArrayRef> {
    use datafusion::arrow::array::Float64Array;
    use datafusion::arrow::datatypes::Float64Type;
    let (l, r) = (cast(l, &DataType::Float64)?, cast(r, &DataType::Float64)?);
    let out: Float64Array = l
        .as_primitive::<Float64Type>()
        .iter()
        .zip(r.as_primitive::<Float64Type>().iter())
        .map(|(a, b)| match (a, b) {
            (Some(a), Some(b)) if b != 0.0 => Some(a / b),
            _ => None,
        })
        .collect();
    Ok(Arc::new(out))
}

/// Row by row: `l * 10^(rs + increment) / r` on the unscaled values, rounded half away from
/// zero (or, without `rounds`, cut toward zero).
fn divide(l: &ArrayRef, r: &ArrayRef, increment: u8, rounds: bool) -> Result<ArrayRef> {
    let out_type = quotient_type(l.data_type(), r.data_type(), increment)
        .ok_or_else(|| DataFusionError::Plan("mysql_divide of non-decimals".into()))?;
    let DataType::Decimal128(precision, scale) = out_type else {
        return divide256(l, r, increment, &out_type, rounds);
    };
    let decimal = |a: &ArrayRef| -> Result<(Decimal128Array, i8)> {
        let (p, s) = as_decimal(a.data_type())
            .ok_or_else(|| DataFusionError::Plan("mysql_divide of non-decimals".into()))?;
        let d = cast(a, &DataType::Decimal128(p, s))?;
        Ok((d.as_primitive::<Decimal128Type>().clone(), s))
    };
    let ((ld, _), (rd, rs)) = (decimal(l)?, decimal(r)?);
    let limit = 10i128.pow(precision as u32);
    let overflow = || {
        DataFusionError::External(Box::new(BasaltError::NumericOverflow(format!(
            "DECIMAL value is out of range in a division (DECIMAL({precision}, {scale}))"
        ))))
    };
    // A quotient that fits 38 digits may still need a wider dividend (3242.5 with 18 decimals
    // over 7166 with 18, to 22 decimals): then the division runs in 256 bits.
    let in_256_bits = || -> Result<ArrayRef> {
        let wide = divide256(
            l,
            r,
            increment,
            &DataType::Decimal256(precision, scale),
            rounds,
        )?;
        Ok(cast(&wide, &out_type)?)
    };
    let Some(factor) = 10i128.checked_pow(rs as u32 + increment as u32) else {
        return in_256_bits();
    };
    let mut values = Vec::with_capacity(ld.len());
    for i in 0..ld.len() {
        if ld.is_null(i) || rd.is_null(i) || rd.value(i) == 0 {
            values.push(None);
            continue;
        }
        let (n, d) = (ld.value(i), rd.value(i));
        let Some(numerator) = n.checked_mul(factor) else {
            return in_256_bits();
        };
        let (mut q, rem) = (numerator / d, numerator % d);
        // Half away from zero: compare twice the remainder with the divisor, in magnitude.
        if rounds && rem.unsigned_abs() >= d.unsigned_abs() - rem.unsigned_abs() {
            q += if (numerator < 0) == (d < 0) { 1 } else { -1 };
        }
        if q.unsigned_abs() >= limit.unsigned_abs() {
            return Err(overflow());
        }
        values.push(Some(q));
    }
    let out = Decimal128Array::from(values).with_precision_and_scale(precision, scale)?;
    Ok(Arc::new(out))
}

/// [`divide`] in 256 bits, for quotients of DECIMALs wider than 38 digits.
fn divide256(
    l: &ArrayRef,
    r: &ArrayRef,
    increment: u8,
    out_type: &DataType,
    rounds: bool,
) -> Result<ArrayRef> {
    let DataType::Decimal256(precision, scale) = *out_type else {
        return Err(DataFusionError::Internal(
            "quotient is not a decimal".into(),
        ));
    };
    let decimal = |a: &ArrayRef| -> Result<(Decimal256Array, i8)> {
        let (p, s) = as_decimal(a.data_type())
            .ok_or_else(|| DataFusionError::Plan("mysql_divide of non-decimals".into()))?;
        let d = cast(a, &DataType::Decimal256(p.max(20), s))?;
        Ok((d.as_primitive::<Decimal256Type>().clone(), s))
    };
    let ((ld, _), (rd, rs)) = (decimal(l)?, decimal(r)?);
    let overflow = || {
        DataFusionError::External(Box::new(BasaltError::NumericOverflow(format!(
            "DECIMAL value is out of range in a division (DECIMAL({precision}, {scale}))"
        ))))
    };
    let ten = i256::from_i128(10);
    let factor = ten
        .checked_pow(rs as u32 + increment as u32)
        .ok_or_else(overflow)?;
    let mut values = Vec::with_capacity(ld.len());
    for i in 0..ld.len() {
        if ld.is_null(i) || rd.is_null(i) || rd.value(i) == i256::ZERO {
            values.push(None);
            continue;
        }
        let (n, d) = (ld.value(i), rd.value(i));
        let numerator = n.checked_mul(factor).ok_or_else(overflow)?;
        let q = numerator.checked_div(d).ok_or_else(overflow)?;
        let rem = numerator.checked_rem(d).ok_or_else(overflow)?;
        // Half away from zero: compare twice the remainder with the divisor, in magnitude
        // (both are below 10^77 in magnitude, so neither doubling nor abs overflows).
        let twice = rem.wrapping_abs().wrapping_mul(i256::from_i128(2));
        let q = if rounds && twice >= d.wrapping_abs() {
            let step = if (numerator < i256::ZERO) == (d < i256::ZERO) {
                i256::ONE
            } else {
                i256::MINUS_ONE
            };
            q.checked_add(step).ok_or_else(overflow)?
        } else {
            q
        };
        if !Decimal256Type::is_valid_decimal_precision(q, precision) {
            return Err(overflow());
        }
        values.push(Some(q));
    }
    let out = Decimal256Array::from(values).with_precision_and_scale(precision, scale)?;
    Ok(Arc::new(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::Int64Array;

    fn quotients(l: Vec<Option<i64>>, r: Vec<Option<i64>>) -> Vec<Option<String>> {
        let l: ArrayRef = Arc::new(Int64Array::from(l));
        let r: ArrayRef = Arc::new(Int64Array::from(r));
        let out = divide(&l, &r, 4, true).expect("divides");
        let d = out.as_primitive::<Decimal128Type>();
        (0..d.len())
            .map(|i| (!d.is_null(i)).then(|| d.value_as_string(i)))
            .collect()
    }

    #[test]
    fn rounds_half_away_from_zero_and_zero_divisors_are_null() {
        let got = quotients(
            vec![
                Some(1),
                Some(2),
                Some(-2),
                Some(5),
                Some(1),
                Some(7),
                None,
                Some(1),
            ],
            vec![
                Some(2),
                Some(3),
                Some(3),
                Some(9),
                Some(0),
                Some(-2),
                Some(1),
                Some(-3),
            ],
        );
        let want = [
            Some("0.5000"),
            Some("0.6667"),
            Some("-0.6667"),
            Some("0.5556"),
            None,
            Some("-3.5000"),
            None,
            Some("-0.3333"),
        ];
        assert_eq!(got, want.map(|w| w.map(String::from)).to_vec());
        // An exact half: 1/20000 = 0.00005 rounds away from zero at four decimals.
        assert_eq!(
            quotients(vec![Some(1), Some(-1)], vec![Some(20000), Some(20000)]),
            vec![Some("0.0001".to_string()), Some("-0.0001".to_string())]
        );
    }

    /// A quotient that fits 38 digits while the scaled dividend does not is computed in 256
    /// bits: DECIMAL(38, 18) over DECIMAL(38, 18) gives 22 decimals.
    #[test]
    fn narrow_quotients_of_wide_dividends_are_exact() {
        let decimal = |v: i128| -> ArrayRef {
            Arc::new(
                Decimal128Array::from(vec![Some(v)])
                    .with_precision_and_scale(38, 18)
                    .expect("valid"),
            )
        };
        let scale18 = 10i128.pow(18);
        let out = divide(
            &decimal(32425 * scale18 / 10),
            &decimal(7166 * scale18),
            4,
            true,
        )
        .expect("divides");
        assert_eq!(out.data_type(), &DataType::Decimal128(38, 22));
        let d = out.as_primitive::<Decimal128Type>();
        assert_eq!(d.value_as_string(0), "0.4524839519955344683226");
    }

    /// 256-bit DECIMALs divide the same way, and a quotient past 76 digits is 1690.
    #[test]
    fn wide_decimals_divide_in_256_bits() {
        let big = |text: &str, p: u8, s: i8| -> ArrayRef {
            Arc::new(
                Decimal256Array::from(vec![i256::from_string(text).expect("a number")])
                    .with_precision_and_scale(p, s)
                    .expect("fits"),
            )
        };
        let three: ArrayRef = Arc::new(Int64Array::from(vec![3]));
        // 2 * 10^60 / 3, at 4 more decimals.
        let l = big(&format!("2{}", "0".repeat(60)), 76, 0);
        let out = divide(&l, &three, 4, true).expect("divides");
        assert_eq!(out.data_type(), &DataType::Decimal256(76, 4));
        assert_eq!(
            out.as_primitive::<Decimal256Type>().value_as_string(0),
            format!("{}.6667", "6".repeat(60))
        );
        // A 76-digit dividend scaled by 10^4 leaves 256 bits.
        let l = big(&"9".repeat(76), 76, 10);
        let err = divide(&l, &three, 4, true).expect_err("overflows");
        assert!(err.to_string().contains("out of range"), "{err}");
    }
}
