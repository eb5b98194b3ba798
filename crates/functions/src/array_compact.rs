//! Doris's `array_compact(a)`: the array without consecutive duplicates (each run of equal
//! elements kept once, NULLs equal to each other), in the array's order; NULL for a NULL
//! array. DataFusion's `array_compact` (which drops NULL elements) is replaced by this one.

use crate::util::{arguments, expect_args, output};
use datafusion::arrow::array::{make_comparator, Array, AsArray, BooleanArray, ListArray};
use datafusion::arrow::buffer::OffsetBuffer;
use datafusion::arrow::compute::{filter, SortOptions};
use datafusion::arrow::datatypes::{DataType, Field};
use datafusion::common::{exec_err, plan_err, Result};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use std::cmp::Ordering;
use std::sync::Arc;

#[derive(Debug, PartialEq, Eq, Hash)]
struct ArrayCompact {
    signature: Signature,
}

pub fn function() -> ScalarUDF {
    ScalarUDF::new_from_impl(ArrayCompact {
        signature: Signature::user_defined(Volatility::Immutable),
    })
}

impl ScalarUDFImpl for ArrayCompact {
    fn name(&self) -> &str {
        "array_compact"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        expect_args("array_compact", types, 1, 1)?;
        match &types[0] {
            DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) => {
                Ok(vec![DataType::List(Arc::clone(f))])
            }
            DataType::Null => Ok(vec![DataType::List(Arc::new(Field::new_list_field(
                DataType::Int64,
                true,
            )))]),
            other => plan_err!("array_compact takes an ARRAY, not {other}"),
        }
    }

    fn return_type(&self, types: &[DataType]) -> Result<DataType> {
        Ok(types[0].clone())
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let (arrays, scalar) = arguments(&args)?;
        let Some(lists) = arrays[0].as_list_opt::<i32>() else {
            return exec_err!("array_compact: expected an array");
        };
        let values = lists.values();
        let same = make_comparator(values.as_ref(), values.as_ref(), SortOptions::default())?;
        // Keep an element unless it equals the one before it in the same list.
        let mut keep = vec![true; values.len()];
        let mut offsets = Vec::with_capacity(lists.len());
        let mut kept = 0usize;
        for w in lists.value_offsets().windows(2) {
            let (start, end) = (w[0] as usize, w[1] as usize);
            for (i, slot) in keep.iter_mut().enumerate().take(end).skip(start) {
                if i > start && same(i - 1, i) == Ordering::Equal {
                    *slot = false;
                } else {
                    kept += 1;
                }
            }
            offsets.push(kept);
        }
        let compacted = filter(values.as_ref(), &BooleanArray::from(keep))?;
        let field = match lists.data_type() {
            DataType::List(f) => Arc::clone(f),
            other => return exec_err!("array_compact: unexpected type {other}"),
        };
        let out = ListArray::try_new(
            field,
            OffsetBuffer::from_lengths(lengths(&offsets)),
            compacted,
            lists.nulls().cloned(),
        )?;
        output(Arc::new(out), scalar)
    }
}

/// The lengths between running totals.
fn lengths(totals: &[usize]) -> Vec<usize> {
    let mut previous = 0;
    totals
        .iter()
        .map(|&t| {
            let len = t - previous;
            previous = t;
            len
        })
        .collect()
}
