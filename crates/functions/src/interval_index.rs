//! MySQL's `INTERVAL(n, n1, n2, ..)`: how many bounds come before the first one greater than
//! `n` (0 when `n < n1`, 1 when `n1 <= n < n2`, ..), -1 when `n` is NULL. Compared as numbers
//! (a string by its leading number, a NULL bound as 0), bound by bound as MySQL does, so an
//! unsorted list stops at its first bound above `n`. The parser reads `INTERVAL(..)` with a
//! comma inside as this call (`basalt_sql`'s operator forms).

use crate::mysql_values::{leading_number, texts};
use crate::util::{arguments, output};
use datafusion::arrow::array::{ArrayRef, Int64Array};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{plan_err, Result};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use std::sync::Arc;

#[derive(Debug, PartialEq, Eq, Hash)]
struct IntervalIndex {
    signature: Signature,
}

/// `interval`.
pub fn function() -> ScalarUDF {
    ScalarUDF::new_from_impl(IntervalIndex {
        signature: Signature::variadic_any(Volatility::Immutable),
    })
}

impl ScalarUDFImpl for IntervalIndex {
    fn name(&self) -> &str {
        "interval"
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn return_type(&self, types: &[DataType]) -> Result<DataType> {
        if types.len() < 2 {
            return plan_err!("interval takes at least 2 arguments, got {}", types.len());
        }
        Ok(DataType::Int64)
    }
    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let (arrays, scalar) = arguments(&args)?;
        let number = |t: &Option<String>| t.as_deref().map(|t| leading_number(t).unwrap_or(0.0));
        let values: Vec<Vec<Option<f64>>> = arrays
            .iter()
            .map(|a| Ok(texts(a)?.iter().map(number).collect()))
            .collect::<Result<_>>()?;
        let rows = values[0].len();
        let out: Int64Array = (0..rows)
            .map(|r| {
                let Some(n) = values[0][r] else {
                    return Some(-1);
                };
                let bounds = &values[1..];
                let below = bounds
                    .iter()
                    .position(|b| b[r].unwrap_or(0.0) > n)
                    .unwrap_or(bounds.len());
                Some(below as i64)
            })
            .collect();
        output(Arc::new(out) as ArrayRef, scalar)
    }
}
