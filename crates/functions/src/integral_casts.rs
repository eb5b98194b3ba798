//! `CAST(x AS SIGNED)` and `CAST(x AS UNSIGNED)` of a DECIMAL or a DOUBLE as MySQL converts
//! it: a DECIMAL rounded half away from zero (`CAST(2.5 AS SIGNED)` is 3, `CAST(-1.5 AS
//! SIGNED)` is -2), a DOUBLE to the nearest integer, ties to even (`CAST(2.5e0 AS SIGNED)` is
//! 2, C's `rint`), and a value past the target's range clipped to its end (`CAST(-1.5 AS
//! UNSIGNED)` is 0, `CAST(1e30 AS SIGNED)` is 9223372036854775807). Arrow's cast cut the
//! fraction off (1, -1 and 2) and failed the query past the range. The statement rewrite casts
//! `mysql_signed_integral(x)` (or `mysql_unsigned_integral(x)`), which is that BIGINT (BIGINT
//! UNSIGNED) for a DECIMAL or a DOUBLE; the analyzer rule [`IntegralCastOperands`], first
//! after the session's variables are read, removes the call around a value of no number, so the
//! rules for ENUM members, hex literals and text see their casts as written. Doris's
//! `CAST(x AS BIGINT)` keeps Doris's truncation. (A negative value cast to UNSIGNED is 0, as
//! MariaDB gives it; MySQL keeps the rounded value's bits.)

use crate::expr_rules::rewrite_node_expressions;
use datafusion::arrow::array::{ArrayRef, AsArray, PrimitiveArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{
    i256, DataType, Decimal256Type, Float64Type, Int64Type, UInt64Type, DECIMAL256_MAX_PRECISION,
};
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::Transformed;
use datafusion::common::{exec_err, DFSchema, Result};
use datafusion::logical_expr::{
    ColumnarValue, Expr, ExprSchemable, LogicalPlan, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl,
    Signature, Volatility,
};
use datafusion::optimizer::AnalyzerRule;
use std::sync::{Arc, OnceLock};

/// The SIGNED conversion's name.
pub const SIGNED: &str = "mysql_signed_integral";
/// The UNSIGNED conversion's name.
pub const UNSIGNED: &str = "mysql_unsigned_integral";

/// `mysql_signed_integral(x)`.
pub fn signed_function() -> &'static ScalarUDF {
    static F: OnceLock<ScalarUDF> = OnceLock::new();
    F.get_or_init(|| ScalarUDF::new_from_impl(Integral::new(false)))
}

/// `mysql_unsigned_integral(x)`.
pub fn unsigned_function() -> &'static ScalarUDF {
    static F: OnceLock<ScalarUDF> = OnceLock::new();
    F.get_or_init(|| ScalarUDF::new_from_impl(Integral::new(true)))
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct Integral {
    signature: Signature,
    unsigned: bool,
}

impl Integral {
    fn new(unsigned: bool) -> Self {
        Integral {
            signature: Signature::any(1, Volatility::Immutable),
            unsigned,
        }
    }

    fn name(&self) -> &'static str {
        if self.unsigned {
            UNSIGNED
        } else {
            SIGNED
        }
    }

    /// The integer type the conversion gives.
    fn target(&self) -> DataType {
        if self.unsigned {
            DataType::UInt64
        } else {
            DataType::Int64
        }
    }

    /// Whether a value of type `t` is rounded and clipped here.
    fn converts(t: &DataType) -> bool {
        matches!(
            t,
            DataType::Decimal128(..)
                | DataType::Decimal256(..)
                | DataType::Float16
                | DataType::Float32
                | DataType::Float64
        )
    }

    /// `values` as the target integers: rounded, then clipped to the target's range.
    fn integral(&self, values: &ArrayRef) -> Result<ArrayRef> {
        if !Self::converts(values.data_type()) {
            return Ok(Arc::clone(values));
        }
        let rounded = match values.data_type() {
            // Arrow's rescaling rounds half away from zero.
            DataType::Decimal128(..) | DataType::Decimal256(..) => {
                cast(values, &DataType::Decimal256(DECIMAL256_MAX_PRECISION, 0))?
            }
            _ => {
                let doubles = cast(values, &DataType::Float64)?;
                let rounded = doubles
                    .as_primitive::<Float64Type>()
                    .unary::<_, Float64Type>(f64::round_ties_even);
                return Ok(self.clip_doubles(&rounded));
            }
        };
        Ok(self.clip_integers(rounded.as_primitive::<Decimal256Type>()))
    }

    fn clip_doubles(&self, values: &PrimitiveArray<Float64Type>) -> ArrayRef {
        // `as` saturates at the integer type's ends (and reads NaN as 0).
        if self.unsigned {
            Arc::new(values.unary::<_, UInt64Type>(|v| v as u64))
        } else {
            Arc::new(values.unary::<_, Int64Type>(|v| v as i64))
        }
    }

    fn clip_integers(&self, values: &PrimitiveArray<Decimal256Type>) -> ArrayRef {
        let clip = |v: i256, low: i256, high: i256| v.max(low).min(high);
        if self.unsigned {
            let high = i256::from_i128(u64::MAX as i128);
            Arc::new(values.unary::<_, UInt64Type>(|v| clip(v, i256::ZERO, high).as_i128() as u64))
        } else {
            let (low, high) = (
                i256::from_i128(i64::MIN as i128),
                i256::from_i128(i64::MAX as i128),
            );
            Arc::new(values.unary::<_, Int64Type>(|v| clip(v, low, high).as_i128() as i64))
        }
    }
}

impl ScalarUDFImpl for Integral {
    fn name(&self) -> &str {
        Integral::name(self)
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn return_type(&self, types: &[DataType]) -> Result<DataType> {
        match types {
            [t] if Self::converts(t) => Ok(self.target()),
            [t] => Ok(t.clone()),
            _ => exec_err!("{} takes one value", Integral::name(self)),
        }
    }
    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let [value] = args.args.as_slice() else {
            return exec_err!("{} takes one value", Integral::name(self));
        };
        match value {
            ColumnarValue::Array(values) => Ok(ColumnarValue::Array(self.integral(values)?)),
            ColumnarValue::Scalar(scalar) => {
                let rounded = self.integral(&scalar.to_array()?)?;
                let value = datafusion::common::ScalarValue::try_from_array(&rounded, 0)?;
                Ok(ColumnarValue::Scalar(value))
            }
        }
    }
}

/// Removes `mysql_[un]signed_integral(x)` around an `x` that is no number. (A number stays
/// wrapped: `3 / 2` is still an integer division here, a DECIMAL once planned MySQL's way.)
#[derive(Debug, Default)]
pub struct IntegralCastOperands;

impl AnalyzerRule for IntegralCastOperands {
    fn name(&self) -> &str {
        "mysql_integral_cast_operands"
    }

    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        plan.transform_up_with_subqueries(|node| rewrite_node_expressions(node, unwrapped))
            .map(|t| t.data)
    }
}

fn unwrapped(e: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    match e {
        Expr::ScalarFunction(mut f)
            if (f.name() == SIGNED || f.name() == UNSIGNED)
                && f.args.len() == 1
                && !f.args[0].get_type(schema).is_ok_and(|t| t.is_numeric()) =>
        {
            Ok(Transformed::yes(f.args.remove(0)))
        }
        other => Ok(Transformed::no(other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{Array, Decimal128Array, Float64Array};

    #[test]
    fn decimals_round_half_away_from_zero_and_doubles_to_even() {
        let decimals: ArrayRef = Arc::new(
            Decimal128Array::from(vec![Some(15), Some(-15), Some(25), Some(14), None])
                .with_precision_and_scale(5, 1)
                .unwrap(),
        );
        let out = Integral::new(false).integral(&decimals).unwrap();
        let got: Vec<Option<i64>> = out.as_primitive::<Int64Type>().iter().collect();
        assert_eq!(got, vec![Some(2), Some(-2), Some(3), Some(1), None]);
        let out = Integral::new(true).integral(&decimals).unwrap();
        let got: Vec<Option<u64>> = out.as_primitive::<UInt64Type>().iter().collect();
        assert_eq!(got, vec![Some(2), Some(0), Some(3), Some(1), None]);

        let doubles: ArrayRef = Arc::new(Float64Array::from(vec![2.5, 1.5, -2.5, 0.4, 1e30]));
        let out = Integral::new(false).integral(&doubles).unwrap();
        let got: Vec<i64> = out.as_primitive::<Int64Type>().values().to_vec();
        assert_eq!(got, vec![2, 2, -2, 0, i64::MAX]);
        assert_eq!(out.null_count(), 0);
    }
}
