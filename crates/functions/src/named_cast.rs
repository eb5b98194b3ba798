//! `basalt_cast_named(CAST(x AS T), 'T')`: the cast itself, under a name that shows it.
//! DataFusion leaves casts out of expression names (`sum(CAST(x AS BIGINT))` is named
//! `sum(x)`), so `SELECT SUM(x), SUM(CAST(x AS DECIMAL(5,1)))` fails: its aggregate would
//! have two outputs of one name. The statement rewrite wraps the casts of such colliding
//! calls here; the optimizer then simplifies the wrapper away, leaving the plain cast.

use datafusion::arrow::datatypes::{DataType, FieldRef};
use datafusion::common::{exec_err, Result};
use datafusion::logical_expr::simplify::{ExprSimplifyResult, SimplifyContext};
use datafusion::logical_expr::{
    ColumnarValue, Expr, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
    Volatility,
};

/// The function's name, for the statement rewrite.
pub const NAMED_CAST: &str = "basalt_cast_named";

/// `basalt_cast_named(value, label)`.
pub fn function() -> ScalarUDF {
    ScalarUDF::new_from_impl(NamedCast {
        signature: Signature::any(2, Volatility::Immutable),
    })
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct NamedCast {
    signature: Signature,
}

impl ScalarUDFImpl for NamedCast {
    fn name(&self) -> &str {
        NAMED_CAST
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, args: &[DataType]) -> Result<DataType> {
        match args.first() {
            Some(t) => Ok(t.clone()),
            None => exec_err!("{NAMED_CAST} takes a value and a label"),
        }
    }

    /// The value's own field: its type and nullability.
    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        match args.arg_fields.first() {
            Some(f) => Ok(f.clone()),
            None => exec_err!("{NAMED_CAST} takes a value and a label"),
        }
    }

    fn invoke_with_args(&self, mut args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        if args.args.is_empty() {
            return exec_err!("{NAMED_CAST} takes a value and a label");
        }
        Ok(args.args.swap_remove(0))
    }

    fn simplify(&self, mut args: Vec<Expr>, _info: &SimplifyContext) -> Result<ExprSimplifyResult> {
        if args.is_empty() {
            return Ok(ExprSimplifyResult::Original(args));
        }
        Ok(ExprSimplifyResult::Simplified(args.swap_remove(0)))
    }
}
