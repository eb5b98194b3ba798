//! Integer `+`, `-`, `*` and unary `-` that fail instead of wrapping, as MySQL's do (error 1690 "BIGINT
//! value is out of range"): an analyzer rule replaces each integer BinaryExpr with a checked
//! function computing in 64 bits, so constant folding and execution both raise the error.
//! The result keeps the type DataFusion gave the expression (so plans keep their schemas); a
//! value outside a narrower type's range fails the same way. The same walk computes SUMs of one
//! column plus different literals from one SUM and COUNT (see `wide_sum`). DOUBLE arithmetic
//! that overflows to infinity fails too (`checked_doubles`).

use basalt_common::BasaltError;
use datafusion::arrow::array::{Array, ArrayRef, ArrowPrimitiveType, PrimitiveArray};
use datafusion::arrow::compute::kernels::arity::try_binary;
use datafusion::arrow::datatypes::{DataType, Int64Type, UInt64Type};
use datafusion::arrow::error::ArrowError;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::Transformed;
use datafusion::common::{DFSchema, Result};
use datafusion::error::DataFusionError;
use datafusion::logical_expr::{
    BinaryExpr, ColumnarValue, Expr, ExprSchemable, LogicalPlan, Operator, ScalarFunctionArgs,
    ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use datafusion::optimizer::AnalyzerRule;

use crate::expr_rules::rewrite_node_expressions;
use crate::wide_sum::split_linear_sums;
use std::sync::Arc;

/// The analyzer rule (runs after DataFusion's type coercion).
#[derive(Debug, Default)]
pub struct CheckedIntegerArithmetic;

impl AnalyzerRule for CheckedIntegerArithmetic {
    fn name(&self) -> &str {
        "checked_integer_arithmetic"
    }

    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        plan.transform_up_with_subqueries(|node| {
            let rewritten = rewrite_node_expressions(node, checked)?;
            if rewritten.transformed {
                rewritten.transform_data(split_linear_sums)
            } else {
                Ok(rewritten)
            }
        })
        .map(|t| t.data)
    }
}

/// `l op r` (and `-x`) on integers as a checked call, DOUBLE arithmetic checked for infinity
/// (`crate::checked_doubles`); anything else unchanged.
fn checked(e: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    let e = match crate::checked_doubles::checked(e, schema)? {
        done if done.transformed => return Ok(done),
        unchanged => unchanged.data,
    };
    if let Expr::Negative(inner) = &e {
        // `-x` is `0 - x`: the negation of BIGINT's minimum fails too.
        return match inner.get_type(schema) {
            Ok(t) if matches!(integer_kind(&t), Some(Kind::Signed)) => {
                let result_type = e.get_type(schema)?;
                let x = if t == DataType::Int64 {
                    inner.as_ref().clone()
                } else {
                    inner.as_ref().clone().cast_to(&DataType::Int64, schema)?
                };
                let zero = Expr::Literal(datafusion::common::ScalarValue::Int64(Some(0)), None);
                Ok(Transformed::yes(
                    ScalarUDF::new_from_impl(CheckedOp::new(Op::Sub, result_type))
                        .call(vec![zero, x]),
                ))
            }
            _ => Ok(Transformed::no(e)),
        };
    }
    let Expr::BinaryExpr(BinaryExpr { left, op, right }) = &e else {
        return Ok(Transformed::no(e));
    };
    let op = match op {
        Operator::Plus => Op::Add,
        Operator::Minus => Op::Sub,
        Operator::Multiply => Op::Mul,
        _ => return Ok(Transformed::no(e)),
    };
    let (Ok(lt), Ok(rt)) = (left.get_type(schema), right.get_type(schema)) else {
        return Ok(Transformed::no(e));
    };
    let wide = match (integer_kind(&lt), integer_kind(&rt)) {
        (Some(Kind::Signed), Some(Kind::Signed)) => DataType::Int64,
        (Some(Kind::Unsigned), Some(Kind::Unsigned)) => DataType::UInt64,
        _ => {
            // A DECIMAL wider than 38 digits: Arrow's kernel keeps any 256-bit result, even one
            // past the declared precision (or wraps); the checked call fails instead.
            let result_type = e.get_type(schema)?;
            if matches!(result_type, DataType::Decimal256(..))
                && is_exact_number(&lt)
                && is_exact_number(&rt)
            {
                let call = ScalarUDF::new_from_impl(CheckedOp::new(op, result_type))
                    .call(vec![left.as_ref().clone(), right.as_ref().clone()]);
                return Ok(Transformed::yes(call));
            }
            return Ok(Transformed::no(e));
        }
    };
    let result_type = e.get_type(schema)?;
    let widen = |x: &Expr, t: &DataType| {
        if *t == wide {
            x.clone()
        } else {
            x.clone()
                .cast_to(&wide, schema)
                .unwrap_or_else(|_| x.clone())
        }
    };
    let call = ScalarUDF::new_from_impl(CheckedOp::new(op, result_type))
        .call(vec![widen(left, &lt), widen(right, &rt)]);
    Ok(Transformed::yes(call))
}

/// Integers and decimals: the operands whose DECIMAL arithmetic is checked.
fn is_exact_number(t: &DataType) -> bool {
    integer_kind(t).is_some()
        || matches!(
            t,
            DataType::Decimal32(..)
                | DataType::Decimal64(..)
                | DataType::Decimal128(..)
                | DataType::Decimal256(..)
        )
}

enum Kind {
    Signed,
    Unsigned,
}

fn integer_kind(t: &DataType) -> Option<Kind> {
    match t {
        DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64 => Some(Kind::Signed),
        DataType::UInt8 | DataType::UInt16 | DataType::UInt32 | DataType::UInt64 => {
            Some(Kind::Unsigned)
        }
        _ => None,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Op {
    Add,
    Sub,
    Mul,
}

impl Op {
    fn symbol(self) -> &'static str {
        match self {
            Op::Add => "+",
            Op::Sub => "-",
            Op::Mul => "*",
        }
    }
}

/// `checked_add(a, b)` and friends on two Int64 or two UInt64 arguments, giving `output`.
#[derive(Debug, PartialEq, Eq, Hash)]
pub(crate) struct CheckedOp {
    op: Op,
    output: DataType,
    signature: Signature,
}

impl CheckedOp {
    /// `checked_add`, `checked_sub` or `checked_mul` with result type `output`.
    pub(crate) fn named(name: &str, output: DataType) -> Option<ScalarUDF> {
        let op = match name {
            "checked_add" => Op::Add,
            "checked_sub" => Op::Sub,
            "checked_mul" => Op::Mul,
            _ => return None,
        };
        Some(ScalarUDF::new_from_impl(CheckedOp::new(op, output)))
    }

    fn new(op: Op, output: DataType) -> CheckedOp {
        CheckedOp {
            op,
            output,
            signature: Signature::any(2, Volatility::Immutable),
        }
    }
}

impl ScalarUDFImpl for CheckedOp {
    fn name(&self) -> &str {
        match self.op {
            Op::Add => "checked_add",
            Op::Sub => "checked_sub",
            Op::Mul => "checked_mul",
        }
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(self.output.clone())
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let scalar = args
            .args
            .iter()
            .all(|a| matches!(a, ColumnarValue::Scalar(_)));
        let arrays = ColumnarValue::values_to_arrays(&args.args)?;
        let (a, b) = (&arrays[0], &arrays[1]);
        let output = args.return_field.data_type().clone();
        if let DataType::Decimal256(..) = output {
            let out = decimal_op(self.op, a, b, &output)?;
            return if scalar {
                Ok(ColumnarValue::Scalar(
                    datafusion::common::ScalarValue::try_from_array(&out, 0)?,
                ))
            } else {
                Ok(ColumnarValue::Array(out))
            };
        }
        let wide: ArrayRef = match a.data_type() {
            DataType::Int64 => Arc::new(apply::<Int64Type>(
                self.op,
                a,
                b,
                [i64::checked_add, i64::checked_sub, i64::checked_mul],
            )?),
            DataType::UInt64 => Arc::new(apply::<UInt64Type>(
                self.op,
                a,
                b,
                [u64::checked_add, u64::checked_sub, u64::checked_mul],
            )?),
            other => {
                return Err(DataFusionError::Internal(format!(
                    "{} of {other}",
                    self.name()
                )))
            }
        };
        // The call's own result type (`output` above): the same as `output` where the call was
        // planned, and the type that travelled with it in a plan fragment run elsewhere.
        let out = narrow(&wide, &output, |i| {
            format!(
                "({} {} {})",
                value_text(a, i),
                self.op.symbol(),
                value_text(b, i)
            )
        })?;
        if scalar {
            Ok(ColumnarValue::Scalar(
                datafusion::common::ScalarValue::try_from_array(&out, 0)?,
            ))
        } else {
            Ok(ColumnarValue::Array(out))
        }
    }
}

/// An operand as a 256-bit DECIMAL of the same value (integers as DECIMAL(20, 0)).
fn as_decimal256(a: &ArrayRef) -> Result<ArrayRef> {
    let to = match a.data_type() {
        DataType::Decimal256(..) => return Ok(a.clone()),
        DataType::Decimal32(p, s) | DataType::Decimal64(p, s) | DataType::Decimal128(p, s) => {
            DataType::Decimal256(*p, *s)
        }
        _ => DataType::Decimal256(20, 0),
    };
    Ok(datafusion::arrow::compute::cast(a, &to)?)
}

/// `a op b` of DECIMALs as `output` (a Decimal256(p, s)), failing with 1690 on the first row
/// whose result overflows 256 bits or has more than p digits.
fn decimal_op(op: Op, a: &ArrayRef, b: &ArrayRef, output: &DataType) -> Result<ArrayRef> {
    use datafusion::arrow::compute::kernels::numeric;
    use datafusion::arrow::compute::{cast_with_options, CastOptions};
    use datafusion::arrow::datatypes::{Decimal256Type, DecimalType};
    let (a, b) = (as_decimal256(a)?, as_decimal256(b)?);
    let what = |i: usize| {
        format!(
            "({} {} {})",
            value_text(&a, i),
            op.symbol(),
            value_text(&b, i)
        )
    };
    let compute = |a: &ArrayRef, b: &ArrayRef| -> std::result::Result<ArrayRef, ArrowError> {
        let out = match op {
            Op::Add => numeric::add(a, b)?,
            Op::Sub => numeric::sub(a, b)?,
            Op::Mul => numeric::mul(a, b)?,
        };
        if out.data_type() == output {
            return Ok(out);
        }
        let strict = CastOptions {
            safe: false,
            ..Default::default()
        };
        cast_with_options(&out, output, &strict)
    };
    let out = match compute(&a, &b) {
        Ok(out) => out,
        Err(ArrowError::ArithmeticOverflow(_))
        | Err(ArrowError::InvalidArgumentError(_))
        | Err(ArrowError::CastError(_))
        | Err(ArrowError::ComputeError(_)) => {
            // Name the first row that fails on its own.
            let row = (0..a.len())
                .find(|&i| compute(&a.slice(i, 1), &b.slice(i, 1)).is_err())
                .unwrap_or(0);
            return Err(out_of_range("DECIMAL", &what(row)));
        }
        Err(e) => return Err(e.into()),
    };
    let DataType::Decimal256(precision, _) = output else {
        return Err(DataFusionError::Internal(format!(
            "decimal result {output}"
        )));
    };
    let values = downcast::<Decimal256Type>(&out)?;
    if let Some(row) = (0..values.len()).find(|&i| {
        values.is_valid(i)
            && !Decimal256Type::is_valid_decimal_precision(values.value(i), *precision)
    }) {
        return Err(out_of_range("DECIMAL", &what(row)));
    }
    Ok(out)
}

type CheckedFn<N> = fn(N, N) -> Option<N>;

/// `a op b` in 64 bits, failing with 1690 on the first pair that overflows. `fns` are the
/// checked add, sub and mul of the type.
fn apply<T: ArrowPrimitiveType>(
    op: Op,
    a: &ArrayRef,
    b: &ArrayRef,
    fns: [CheckedFn<T::Native>; 3],
) -> Result<PrimitiveArray<T>>
where
    T::Native: std::fmt::Display,
{
    let f = fns[op as usize];
    let type_name = mysql_type_name(&T::DATA_TYPE);
    let a = downcast::<T>(a)?;
    let b = downcast::<T>(b)?;
    let overflow = std::cell::RefCell::new(None);
    let result = try_binary(a, b, |x, y| {
        f(x, y).ok_or_else(|| {
            *overflow.borrow_mut() = Some(format!("({x} {} {y})", op.symbol()));
            ArrowError::ComputeError("overflow".into())
        })
    });
    match result {
        Ok(r) => Ok(r),
        Err(e) => match overflow.into_inner() {
            Some(what) => Err(out_of_range(type_name, &what)),
            None => Err(e.into()),
        },
    }
}

fn downcast<T: ArrowPrimitiveType>(a: &ArrayRef) -> Result<&PrimitiveArray<T>> {
    a.as_any()
        .downcast_ref::<PrimitiveArray<T>>()
        .ok_or_else(|| DataFusionError::Internal(format!("unexpected {}", a.data_type())))
}

fn out_of_range(type_name: &str, what: &str) -> DataFusionError {
    DataFusionError::External(Box::new(BasaltError::NumericOverflow(format!(
        "{type_name} value is out of range in '{what}'"
    ))))
}

/// The 64-bit result in the expression's own (narrower) type; a value outside its range fails
/// with 1690 naming the operands `what(i)` of the first such row.
fn narrow(wide: &ArrayRef, to: &DataType, what: impl Fn(usize) -> String) -> Result<ArrayRef> {
    if wide.data_type() == to {
        return Ok(wide.clone());
    }
    let out = datafusion::arrow::compute::cast(wide, to)?;
    if out.null_count() != wide.null_count() {
        let row = (0..wide.len())
            .find(|&i| wide.is_valid(i) && out.is_null(i))
            .unwrap_or(0);
        return Err(out_of_range(mysql_type_name(to), &what(row)));
    }
    Ok(out)
}

fn value_text(a: &ArrayRef, i: usize) -> String {
    datafusion::common::ScalarValue::try_from_array(a, i)
        .map(|v| v.to_string())
        .unwrap_or_default()
}

/// MySQL's name of an integer type, as its errors say it.
fn mysql_type_name(t: &DataType) -> &'static str {
    match t {
        DataType::Int8 => "TINYINT",
        DataType::Int16 => "SMALLINT",
        DataType::Int32 => "INT",
        DataType::UInt8 => "TINYINT UNSIGNED",
        DataType::UInt16 => "SMALLINT UNSIGNED",
        DataType::UInt32 => "INT UNSIGNED",
        DataType::UInt64 => "BIGINT UNSIGNED",
        _ => "BIGINT",
    }
}
