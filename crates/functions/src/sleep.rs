//! MySQL's `SLEEP(seconds)`: the statement pauses that long for each row it is evaluated on,
//! then the call returns 0. The pause is a timer, not a blocked thread, so other sessions keep
//! running, and KILL QUERY or the statement's time limit ends it at once. A NULL or negative
//! duration does not pause (MariaDB's behaviour).

use datafusion::arrow::array::{AsArray, Int64Array};
use datafusion::arrow::datatypes::{DataType, Float64Type};
use datafusion::common::{exec_err, Result};
use datafusion::logical_expr::async_udf::{AsyncScalarUDF, AsyncScalarUDFImpl};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use std::sync::Arc;
use std::time::Duration;

/// The longest pause one call accepts (a year), so that a huge argument is not an overflow.
const MAX_SECONDS: f64 = 365.0 * 24.0 * 3600.0;

pub fn function() -> ScalarUDF {
    AsyncScalarUDF::new(Arc::new(Sleep::new())).into_scalar_udf()
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct Sleep {
    signature: Signature,
}

impl Sleep {
    fn new() -> Sleep {
        Sleep {
            // (The async wrapper does not ask the function to coerce its arguments: a uniform
            // signature lets DataFusion cast any number to DOUBLE.)
            signature: Signature::uniform(1, vec![DataType::Float64], Volatility::Volatile),
        }
    }
}

impl ScalarUDFImpl for Sleep {
    fn name(&self) -> &str {
        "sleep"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(DataType::Int64)
    }

    fn invoke_with_args(&self, _args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        exec_err!("sleep() runs only as an asynchronous function")
    }
}

#[async_trait::async_trait]
impl AsyncScalarUDFImpl for Sleep {
    async fn invoke_async_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let rows = args.number_rows;
        let seconds = args.args[0].to_array(rows)?;
        let seconds = datafusion::arrow::compute::cast(&seconds, &DataType::Float64)?;
        let total: f64 = seconds
            .as_primitive::<Float64Type>()
            .iter()
            .flatten()
            .filter(|s| *s > 0.0)
            .map(|s| s.min(MAX_SECONDS))
            .sum();
        if total > 0.0 {
            tokio::time::sleep(Duration::from_secs_f64(total.min(MAX_SECONDS))).await;
        }
        let zeros = Int64Array::from(vec![0; rows]);
        Ok(ColumnarValue::Array(Arc::new(zeros)))
    }
}
