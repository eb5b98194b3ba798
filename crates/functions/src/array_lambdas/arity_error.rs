//! `__array_lambda_error('message')`: a call that fails its planning with its message. The
//! frontend writes a lambda call whose lambda does not fit its arrays as this.

use datafusion::arrow::datatypes::{DataType, FieldRef};
use datafusion::common::{plan_err, Result, ScalarValue};
use datafusion::logical_expr::{
    ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
    Volatility,
};

pub const NAME: &str = "__array_lambda_error";

#[derive(Debug, PartialEq, Eq, Hash)]
struct ArityError {
    signature: Signature,
}

pub fn function() -> ScalarUDF {
    ScalarUDF::new_from_impl(ArityError {
        signature: Signature::any(1, Volatility::Immutable),
    })
}

impl ScalarUDFImpl for ArityError {
    fn name(&self) -> &str {
        NAME
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn return_type(&self, _types: &[DataType]) -> Result<DataType> {
        plan_err!("{NAME} is planned through return_field_from_args")
    }
    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        match args.scalar_arguments.first() {
            Some(Some(
                ScalarValue::Utf8(Some(message))
                | ScalarValue::Utf8View(Some(message))
                | ScalarValue::LargeUtf8(Some(message)),
            )) => plan_err!("{message}"),
            _ => plan_err!("a lambda that does not fit its arrays"),
        }
    }
    fn invoke_with_args(&self, _args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        plan_err!("a lambda that does not fit its arrays")
    }
}
