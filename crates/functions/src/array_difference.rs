//! Doris's `array_difference(a)`: each element minus the one before it, the first 0; an element
//! next to a NULL is NULL. Integers subtract exactly as LARGEINT (a BIGINT difference can pass
//! the BIGINT range), floating point as DOUBLE, decimals in their own scale.

use crate::util::{arguments, expect_args, output};
use datafusion::arrow::array::{Array, ArrayRef, AsArray, ListArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{
    i256, DataType, Decimal128Type, Decimal256Type, Field, Float64Type,
};
use datafusion::common::{exec_err, plan_err, Result};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use std::sync::Arc;

const LARGEINT: DataType = DataType::Decimal256(basalt_common::types::LARGEINT_PRECISION, 0);

#[derive(Debug, PartialEq, Eq, Hash)]
struct ArrayDifference {
    signature: Signature,
}

pub fn function() -> ScalarUDF {
    ScalarUDF::new_from_impl(ArrayDifference {
        signature: Signature::user_defined(Volatility::Immutable),
    })
}

/// The element type differences are computed in, for an element type.
fn difference_type(element: &DataType) -> Result<DataType> {
    Ok(match element {
        t if t.is_integer() => LARGEINT,
        DataType::Decimal256(39, 0) => LARGEINT,
        DataType::Float16 | DataType::Float32 | DataType::Float64 => DataType::Float64,
        DataType::Decimal128(p, s) => DataType::Decimal128((*p + 1).min(38), *s),
        DataType::Null => DataType::Int64,
        other => return plan_err!("array_difference takes an array of numbers, not of {other}"),
    })
}

impl ScalarUDFImpl for ArrayDifference {
    fn name(&self) -> &str {
        "array_difference"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        expect_args("array_difference", types, 1, 1)?;
        match &types[0] {
            DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) => {
                let target = difference_type(f.data_type())?;
                Ok(vec![DataType::List(Arc::new(Field::new(
                    "item", target, true,
                )))])
            }
            DataType::Null => Ok(vec![DataType::Null]),
            other => plan_err!("array_difference takes an ARRAY, not {other}"),
        }
    }

    fn return_type(&self, types: &[DataType]) -> Result<DataType> {
        Ok(match &types[0] {
            DataType::Null => DataType::List(Arc::new(Field::new("item", DataType::Int64, true))),
            other => other.clone(),
        })
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let (arrays, scalar) = arguments(&args)?;
        let input = &arrays[0];
        let Some(lists) = input.as_list_opt::<i32>() else {
            let target = args.return_field.data_type().clone();
            return output(cast(input, &target)?, scalar);
        };
        let values = lists.values();
        // Each element minus the one before it in the same list.
        let n = values.len();
        let previous: Vec<Option<usize>> = {
            let mut p = vec![None; n];
            for w in lists.value_offsets().windows(2) {
                let (start, end) = (w[0] as usize, w[1] as usize);
                for (i, slot) in p.iter_mut().enumerate().take(end).skip(start + 1) {
                    *slot = Some(i - 1);
                }
            }
            p
        };
        let differences: ArrayRef = match values.data_type() {
            DataType::Float64 => {
                let v = values.as_primitive::<Float64Type>();
                Arc::new(
                    (0..n)
                        .map(|i| step(v, i, previous[i], |a, b| Some(a - b), 0.0))
                        .collect::<Result<datafusion::arrow::array::Float64Array>>()?,
                )
            }
            DataType::Decimal256(p, s) => {
                let v = values.as_primitive::<Decimal256Type>();
                let out = (0..n)
                    .map(|i| step(v, i, previous[i], |a, b| a.checked_sub(b), i256::ZERO))
                    .collect::<Result<datafusion::arrow::array::Decimal256Array>>()?
                    .with_precision_and_scale(*p, *s)?;
                Arc::new(out)
            }
            DataType::Decimal128(p, s) => {
                let v = values.as_primitive::<Decimal128Type>();
                let out = (0..n)
                    .map(|i| step(v, i, previous[i], |a, b| a.checked_sub(b), 0))
                    .collect::<Result<datafusion::arrow::array::Decimal128Array>>()?
                    .with_precision_and_scale(*p, *s)?;
                Arc::new(out)
            }
            other => return exec_err!("array_difference: unexpected element type {other}"),
        };
        let field = match args.return_field.data_type() {
            DataType::List(f) => Arc::clone(f),
            other => return exec_err!("array_difference: unexpected result type {other}"),
        };
        let out = ListArray::try_new(
            field,
            lists.offsets().clone(),
            differences,
            lists.nulls().cloned(),
        )?;
        output(Arc::new(out), scalar)
    }
}

/// Element `i` minus its predecessor (0 for a list's first element; NULL next to a NULL); a
/// difference that does not fit its type is an error.
fn step<T: datafusion::arrow::datatypes::ArrowPrimitiveType>(
    v: &datafusion::arrow::array::PrimitiveArray<T>,
    i: usize,
    previous: Option<usize>,
    sub: impl Fn(T::Native, T::Native) -> Option<T::Native>,
    zero: T::Native,
) -> Result<Option<T::Native>> {
    if v.is_null(i) {
        return Ok(None);
    }
    match previous {
        None => Ok(Some(zero)),
        Some(p) if v.is_null(p) => Ok(None),
        Some(p) => match sub(v.value(i), v.value(p)) {
            Some(d) => Ok(Some(d)),
            None => exec_err!("array_difference: a difference is out of range of its type"),
        },
    }
}
