//! `empty_list_if_null(list)`: the list, or an empty list of the same type where it is NULL.
//! Doris's `array_agg`, `collect_list` and `collect_set` give `[]` for a group without values
//! (DataFusion's `array_agg` gives NULL); the frontend wraps them in this function.

use crate::util::{arguments, expect_args, output};
use datafusion::arrow::array::{Array, AsArray, BooleanArray, ListArray};
use datafusion::arrow::buffer::OffsetBuffer;
use datafusion::arrow::compute::filter;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{exec_err, Result};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use std::sync::Arc;

pub const NAME: &str = "empty_list_if_null";

#[derive(Debug, PartialEq, Eq, Hash)]
struct EmptyListIfNull {
    signature: Signature,
}

pub fn function() -> ScalarUDF {
    ScalarUDF::new_from_impl(EmptyListIfNull {
        signature: Signature::any(1, Volatility::Immutable),
    })
}

impl ScalarUDFImpl for EmptyListIfNull {
    fn name(&self) -> &str {
        NAME
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, types: &[DataType]) -> Result<DataType> {
        expect_args(NAME, types, 1, 1)?;
        Ok(types[0].clone())
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let (arrays, scalar) = arguments(&args)?;
        let input = &arrays[0];
        if input.null_count() == 0 {
            return output(Arc::clone(input), scalar);
        }
        let Some(lists) = input.as_list_opt::<i32>() else {
            return exec_err!("{NAME}: expected a list, not {}", input.data_type());
        };
        let field = match lists.data_type() {
            DataType::List(f) => Arc::clone(f),
            other => return exec_err!("{NAME}: expected a list, not {other}"),
        };
        // A NULL row keeps no elements (whatever its offsets span) and becomes valid.
        let mut keep = vec![false; lists.values().len()];
        let mut lengths = Vec::with_capacity(lists.len());
        for (row, w) in lists.value_offsets().windows(2).enumerate() {
            let (start, end) = (w[0] as usize, w[1] as usize);
            if lists.is_valid(row) {
                keep[start..end].fill(true);
                lengths.push(end - start);
            } else {
                lengths.push(0);
            }
        }
        let values = filter(lists.values().as_ref(), &BooleanArray::from(keep))?;
        let out = ListArray::try_new(field, OffsetBuffer::from_lengths(lengths), values, None)?;
        output(Arc::new(out), scalar)
    }
}
