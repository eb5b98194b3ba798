//! DOUBLE arithmetic that fails instead of giving infinity, as MySQL's does (error 1690
//! "DOUBLE value is out of range in '1e308 + 1e308'"): the checked-arithmetic analyzer rule
//! wraps each `+`, `-`, `*`, `/` of DOUBLEs and each EXP, POW/POWER, COT and DEGREES call in
//! [`mysql_finite_double`](FiniteDouble), which passes finite values through and fails on an
//! infinite one. Its second argument is the expression's text for the message, so the call
//! carries everything it needs when a plan fragment travels to another node.

use basalt_common::BasaltError;
use datafusion::arrow::array::{Array, AsArray};
use datafusion::arrow::datatypes::{DataType, Float32Type, Float64Type};
use datafusion::common::tree_node::Transformed;
use datafusion::common::{DFSchema, Result, ScalarValue};
use datafusion::error::DataFusionError;
use datafusion::logical_expr::{
    BinaryExpr, ColumnarValue, Expr, ExprSchemable, Operator, ScalarFunctionArgs, ScalarUDF,
    ScalarUDFImpl, Signature, Volatility,
};
use std::sync::LazyLock;

const NAME: &str = "mysql_finite_double";

/// The functions whose finite arguments can give an infinite DOUBLE.
const OVERFLOWING: &[&str] = &["exp", "power", "pow", "cot", "degrees"];

/// The registered instance (one serves every call).
pub(crate) fn function() -> &'static ScalarUDF {
    static F: LazyLock<ScalarUDF> = LazyLock::new(|| {
        ScalarUDF::new_from_impl(FiniteDouble {
            signature: Signature::any(2, Volatility::Immutable),
        })
    });
    &F
}

/// `e` wrapped in the check when it is DOUBLE arithmetic or an overflowing DOUBLE function;
/// a check around a check (the rule run twice) collapses to one.
pub(crate) fn checked(e: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    let wrap = match &e {
        Expr::BinaryExpr(BinaryExpr { op, .. }) => matches!(
            op,
            Operator::Plus | Operator::Minus | Operator::Multiply | Operator::Divide
        ),
        Expr::ScalarFunction(f) if f.name() == NAME => {
            return Ok(match f.args.first() {
                Some(Expr::ScalarFunction(inner)) if inner.name() == NAME => {
                    Transformed::yes(f.args[0].clone())
                }
                _ => Transformed::no(e),
            });
        }
        Expr::ScalarFunction(f) => OVERFLOWING.contains(&f.name()),
        _ => false,
    };
    if !wrap
        || !matches!(
            e.get_type(schema),
            Ok(DataType::Float64 | DataType::Float32)
        )
    {
        return Ok(Transformed::no(e));
    }
    let what = Expr::Literal(ScalarValue::Utf8(Some(text(&e))), None);
    Ok(Transformed::yes(function().call(vec![e, what])))
}

/// `e` without the check around it.
fn unchecked(e: &Expr) -> &Expr {
    match e {
        Expr::ScalarFunction(f) if f.name() == NAME && !f.args.is_empty() => unchecked(&f.args[0]),
        _ => e,
    }
}

/// `e` as the SQL text the message quotes: literals as written, without the casts and checks
/// planning put around them (`exp(750)`, `1e308 + 1e308`).
fn text(e: &Expr) -> String {
    let operand = |e: &Expr| match unchecked(e) {
        Expr::BinaryExpr(_) => format!("({})", text(e)),
        _ => text(e),
    };
    match e {
        Expr::Literal(ScalarValue::Utf8(Some(s)), _) => s.clone(),
        Expr::Literal(v, _) => v.to_string(),
        Expr::Cast(c) => text(&c.expr),
        Expr::TryCast(c) => text(&c.expr),
        Expr::Column(c) => c.name.clone(),
        Expr::Negative(x) => format!("-{}", operand(x)),
        Expr::BinaryExpr(BinaryExpr { left, op, right }) => {
            format!("{} {op} {}", operand(left), operand(right))
        }
        // Planning's own wrappers: the check, a string literal read as a number, `x / y` as
        // `x / NULLIF(y, 0)`.
        Expr::ScalarFunction(f)
            if matches!(f.name(), NAME | "mysql_string_to_double" | "nullif")
                && !f.args.is_empty() =>
        {
            text(&f.args[0])
        }
        Expr::ScalarFunction(f) => {
            let args: Vec<String> = f.args.iter().map(text).collect();
            format!("{}({})", f.name(), args.join(","))
        }
        other => other.human_display().to_string(),
    }
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct FiniteDouble {
    signature: Signature,
}

impl ScalarUDFImpl for FiniteDouble {
    fn name(&self) -> &str {
        NAME
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, args: &[DataType]) -> Result<DataType> {
        Ok(args[0].clone())
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let what = || match &args.args[1] {
            ColumnarValue::Scalar(s) => s.to_string(),
            ColumnarValue::Array(_) => String::new(),
        };
        let infinite = match &args.args[0] {
            ColumnarValue::Scalar(ScalarValue::Float64(Some(v))) => v.is_infinite(),
            ColumnarValue::Scalar(ScalarValue::Float32(Some(v))) => v.is_infinite(),
            ColumnarValue::Scalar(_) => false,
            ColumnarValue::Array(a) => match a.data_type() {
                DataType::Float64 => a
                    .as_primitive::<Float64Type>()
                    .iter()
                    .any(|v| v.is_some_and(f64::is_infinite)),
                DataType::Float32 => a
                    .as_primitive::<Float32Type>()
                    .iter()
                    .any(|v| v.is_some_and(f32::is_infinite)),
                _ => false,
            },
        };
        if infinite {
            return Err(DataFusionError::External(Box::new(
                BasaltError::NumericOverflow(format!(
                    "DOUBLE value is out of range in '{}'",
                    what()
                )),
            )));
        }
        Ok(args.args[0].clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::Float64Array;
    use datafusion::arrow::datatypes::Field;
    use datafusion::common::config::ConfigOptions;
    use datafusion::logical_expr::{col, lit};
    use std::sync::Arc;

    fn run(value: ColumnarValue) -> Result<ColumnarValue> {
        let f = function();
        f.invoke_with_args(ScalarFunctionArgs {
            args: vec![
                value,
                ColumnarValue::Scalar(ScalarValue::from("1e308 + 1e308")),
            ],
            arg_fields: vec![
                Arc::new(Field::new("x", DataType::Float64, true)),
                Arc::new(Field::new("w", DataType::Utf8, true)),
            ],
            number_rows: 2,
            return_field: Arc::new(Field::new("r", DataType::Float64, true)),
            config_options: Arc::new(ConfigOptions::default()),
        })
    }

    #[test]
    fn infinity_fails_and_finite_values_pass() {
        let finite = ColumnarValue::Array(Arc::new(Float64Array::from(vec![Some(1.0), None])));
        assert!(run(finite).is_ok());
        let inf = ColumnarValue::Array(Arc::new(Float64Array::from(vec![
            Some(1.0),
            Some(f64::INFINITY),
        ])));
        let e = run(inf).unwrap_err().to_string();
        assert!(
            e.contains("DOUBLE value is out of range in '1e308 + 1e308'"),
            "{e}"
        );
        assert!(run(ColumnarValue::Scalar(ScalarValue::Float64(Some(
            f64::NEG_INFINITY
        ))))
        .is_err());
    }

    #[test]
    fn wraps_double_arithmetic_once() {
        let schema = DFSchema::try_from(datafusion::arrow::datatypes::Schema::new(vec![
            Field::new("d", DataType::Float64, true),
            Field::new("i", DataType::Int64, true),
        ]))
        .unwrap();
        let sum = col("d") + lit(1.0);
        let once = checked(sum, &schema).unwrap();
        assert!(once.transformed);
        let wrapped = function().call(vec![once.data.clone(), lit("x")]);
        let collapsed = checked(wrapped, &schema).unwrap();
        assert_eq!(collapsed.data, once.data);
        assert!(!checked(col("i") + lit(1i64), &schema).unwrap().transformed);
        // The text of an outer operation leaves out the check of its operand.
        let outer = checked(once.data.clone() * lit(2.0), &schema).unwrap().data;
        let Expr::ScalarFunction(f) = outer else {
            panic!("not wrapped");
        };
        assert_eq!(f.args[1], lit("(d + 1) * 2"));
    }
}
