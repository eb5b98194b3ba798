//! MySQL's unary minus of any operand. DataFusion plans `-x` only for signed numbers,
//! intervals and timestamps, and refuses the rest while the SQL is planned, before any rule
//! knows the operand's type. MySQL negates an UNSIGNED column (`-u` of 5 is -5, a signed
//! number), a boolean (`-(a < b)` is -1 or 0) and text (its number, a DOUBLE).
//!
//! The statement rewrite sends `-x` of anything but a literal here (`mysql_negate(x)`); once
//! `x`'s type is known, the analyzer rule `ImplicitCasts` (before type coercion) puts back,
//! through [`negated`], the plain negation of `x` read as the number MySQL reads: a narrower
//! unsigned integer or a boolean as a BIGINT, a BIGINT UNSIGNED as a DECIMAL(20, 0) (its
//! negative may be below BIGINT's minimum), text as `mysql_negate_text`. The function itself
//! computes the same, for a plan that reaches it unrewritten (INSERT .. SELECT's checked
//! conversions).

use crate::util::{arguments, output};
use datafusion::arrow::compute::cast;
use datafusion::arrow::compute::kernels::numeric::neg;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{exec_err, Result};
use datafusion::logical_expr::{
    ColumnarValue, Expr, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use std::sync::{Arc, OnceLock};

/// The name of the function.
pub const NAME: &str = "mysql_negate";

/// The one instance.
pub fn function() -> &'static ScalarUDF {
    static F: OnceLock<ScalarUDF> = OnceLock::new();
    F.get_or_init(|| {
        ScalarUDF::new_from_impl(MysqlNegate {
            signature: Signature::any(1, Volatility::Immutable),
        })
    })
}

/// The type an operand of `t` is negated as, when it is not negated as itself.
fn operand_type(t: &DataType) -> Option<DataType> {
    match t {
        DataType::Boolean | DataType::UInt8 | DataType::UInt16 | DataType::UInt32 => {
            Some(DataType::Int64)
        }
        DataType::UInt64 => Some(DataType::Decimal128(20, 0)),
        _ => None,
    }
}

fn is_text(t: &DataType) -> bool {
    matches!(t, DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8)
}

/// `-x` for an `x` of type `t`, as MySQL negates it.
pub fn negated(x: Expr, t: &DataType) -> Expr {
    if is_text(t) {
        return crate::text_negation::function().call(vec![x]);
    }
    match operand_type(t) {
        Some(as_type) => Expr::Negative(Box::new(datafusion::logical_expr::cast(x, as_type))),
        None => Expr::Negative(Box::new(x)),
    }
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct MysqlNegate {
    signature: Signature,
}

impl ScalarUDFImpl for MysqlNegate {
    fn name(&self) -> &str {
        NAME
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, args: &[DataType]) -> Result<DataType> {
        let Some(t) = args.first() else {
            return exec_err!("{NAME} takes one argument");
        };
        Ok(if is_text(t) {
            DataType::Float64
        } else {
            operand_type(t).unwrap_or_else(|| t.clone())
        })
    }

    /// Named as the negation it stands for (`(- t.k)`), so a derived table's column is too.
    fn schema_name(&self, args: &[Expr]) -> Result<String> {
        match args {
            [x] => Ok(format!("(- {})", x.schema_name())),
            _ => exec_err!("{NAME} takes one argument"),
        }
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        if args
            .arg_fields
            .first()
            .is_some_and(|f| is_text(f.data_type()))
        {
            return crate::text_negation::function().invoke_with_args(args);
        }
        let (arrays, scalar) = arguments(&args)?;
        let values = &arrays[0];
        let operand = match operand_type(values.data_type()) {
            Some(as_type) => cast(values, &as_type)?,
            None => values.clone(),
        };
        output(Arc::new(neg(&operand)?), scalar)
    }
}
