//! `__basalt_nullable(x)`: `x`, typed as a value that may be NULL.
//!
//! A scalar subquery of no rows is NULL, but DataFusion types `(SELECT 1 FROM t WHERE ..)` by
//! its select item, here never NULL: `(..) IS NULL` was simplified to false and a NULL result
//! failed ("declared as non-nullable but contains null values"). The frontend passes such an
//! item through this function, which the simplifier cannot see through.

use datafusion::arrow::datatypes::{DataType, FieldRef};
use datafusion::common::{exec_err, Result};
use datafusion::logical_expr::{
    ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
    Volatility,
};
use std::sync::Arc;

/// The function's name.
pub const NAME: &str = "__basalt_nullable";

pub fn function() -> ScalarUDF {
    ScalarUDF::new_from_impl(Nullable {
        signature: Signature::any(1, Volatility::Immutable),
    })
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct Nullable {
    signature: Signature,
}

impl ScalarUDFImpl for Nullable {
    fn name(&self) -> &str {
        NAME
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, args: &[DataType]) -> Result<DataType> {
        match args {
            [value] => Ok(value.clone()),
            _ => exec_err!("{NAME} takes one value"),
        }
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        match args.arg_fields {
            [value] => Ok(Arc::new(value.as_ref().clone().with_nullable(true))),
            _ => exec_err!("{NAME} takes one value"),
        }
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        match args.args.as_slice() {
            [value] => Ok(value.clone()),
            _ => exec_err!("{NAME} takes one value"),
        }
    }
}

#[cfg(test)]
mod tests {
    use datafusion::arrow::datatypes::{DataType, Field};
    use datafusion::logical_expr::ReturnFieldArgs;
    use std::sync::Arc;

    #[test]
    fn the_value_may_be_null() {
        let value = Arc::new(Field::new("x", DataType::Int64, false));
        let field = super::function()
            .return_field_from_args(ReturnFieldArgs {
                arg_fields: &[value],
                scalar_arguments: &[None],
            })
            .expect("a field");
        assert!(field.is_nullable());
        assert_eq!(field.data_type(), &DataType::Int64);
    }
}
