//! MySQL's `BENCHMARK(count, expr)`: 0 for a count of zero or more, NULL for a NULL or
//! negative count (MariaDB's answers). The plan evaluates `expr` once per row like any other
//! argument, not `count` times: the call answers as MySQL's does without its timing loop.

use crate::mysql_values::integers;
use crate::util::{arguments, output, plain_function};
use datafusion::arrow::array::Int64Array;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::Result;
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, Signature, Volatility,
};
use std::sync::Arc;

pub fn function() -> ScalarUDF {
    plain_function(
        "benchmark",
        Signature::any(2, Volatility::Volatile),
        DataType::Int64,
        benchmark,
    )
}

fn benchmark(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let out: Int64Array = integers(&arrays[0])?
        .into_iter()
        .map(|count| count.filter(|c| *c >= 0).map(|_| 0))
        .collect();
    output(Arc::new(out), scalar)
}
