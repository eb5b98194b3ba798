//! MySQL's and Doris's LENGTH: the size in bytes of a string (or of the text of a number, or of
//! a byte string). DataFusion's `length` counts characters, which is CHAR_LENGTH.

use crate::util::{arguments, expect_args, output};
use datafusion::arrow::array::{Array, Int32Array};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{plan_err, Result};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use std::sync::Arc;

#[derive(Debug, PartialEq, Eq, Hash)]
struct ByteLength {
    signature: Signature,
}

pub fn function() -> ScalarUDF {
    ScalarUDF::new_from_impl(ByteLength {
        signature: Signature::user_defined(Volatility::Immutable),
    })
}

impl ScalarUDFImpl for ByteLength {
    fn name(&self) -> &str {
        "length"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        expect_args("length", types, 1, 1)?;
        Ok(vec![match &types[0] {
            DataType::Binary | DataType::LargeBinary | DataType::BinaryView => DataType::Binary,
            t if t.is_nested() => return plan_err!("length does not take {t}"),
            _ => DataType::Utf8,
        }])
    }

    fn return_type(&self, _types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Int32)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let (arrays, scalar) = arguments(&args)?;
        let bytes = cast(&arrays[0], &DataType::Binary)?;
        let bytes = bytes
            .as_any()
            .downcast_ref::<datafusion::arrow::array::BinaryArray>()
            .map(|b| {
                b.iter()
                    .map(|v| v.map(|v| i32::try_from(v.len()).unwrap_or(i32::MAX)))
                    .collect::<Int32Array>()
            })
            .unwrap_or_else(|| Int32Array::from(vec![None; bytes.len()]));
        output(Arc::new(bytes), scalar)
    }
}
