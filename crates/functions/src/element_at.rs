//! Doris's `element_at(container, key)`: the element of an ARRAY at a 1-based index (negative
//! from the end), or the value of a MAP under a key — NULL when there is none. DataFusion's
//! `element_at` is `map_extract`, which gives a one-element list for a map and refuses arrays.
//! On a VARIANT value it is the subscript `v['key']` (an integer index still counts from 1).

use crate::util::expect_args;
use basalt_common::variant::{element_field, is_variant_field};
use datafusion::arrow::array::{Array, ArrayRef, AsArray, Int64Array};
use datafusion::arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::{plan_err, Result, ScalarValue};
use datafusion::functions_nested::extract::array_element_udf;
use datafusion::functions_nested::map_extract::map_extract_udf;
use datafusion::logical_expr::{
    ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
    Volatility,
};
use std::sync::Arc;

#[derive(Debug, PartialEq, Eq, Hash)]
struct ElementAt {
    signature: Signature,
}

pub fn function() -> ScalarUDF {
    ScalarUDF::new_from_impl(ElementAt {
        signature: Signature::user_defined(Volatility::Immutable),
    })
}

impl ScalarUDFImpl for ElementAt {
    fn name(&self) -> &str {
        "element_at"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        expect_args("element_at", types, 2, 2)?;
        match &types[0] {
            DataType::List(_) | DataType::LargeList(_) | DataType::Null => {
                Ok(vec![types[0].clone(), DataType::Int64])
            }
            DataType::Map(entries, _) => match entries.data_type() {
                DataType::Struct(fields) if fields.len() == 2 => {
                    Ok(vec![types[0].clone(), fields[0].data_type().clone()])
                }
                other => plan_err!("element_at: unexpected map entries {other}"),
            },
            // A VARIANT's text (checked by its field in `return_field_from_args`).
            DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8 => Ok(types.to_vec()),
            other => plan_err!("element_at takes an ARRAY or a MAP, not {other}"),
        }
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        if args.arg_fields.first().is_some_and(|f| is_variant_field(f)) {
            return Ok(Arc::new(element_field(self.name())));
        }
        let types: Vec<DataType> = args
            .arg_fields
            .iter()
            .map(|f| f.data_type().clone())
            .collect();
        Ok(Arc::new(Field::new(
            self.name(),
            self.return_type(&types)?,
            true,
        )))
    }

    fn return_type(&self, types: &[DataType]) -> Result<DataType> {
        match &types[0] {
            DataType::List(f) | DataType::LargeList(f) => Ok(f.data_type().clone()),
            DataType::Map(entries, _) => match entries.data_type() {
                DataType::Struct(fields) if fields.len() == 2 => Ok(fields[1].data_type().clone()),
                other => plan_err!("element_at: unexpected map entries {other}"),
            },
            DataType::Null => Ok(DataType::Null),
            other => plan_err!("element_at takes an ARRAY or a MAP, not {other}"),
        }
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        if args.arg_fields.first().is_some_and(|f| is_variant_field(f)) {
            let mut args = args;
            if let Some(index) = args.args.get_mut(1) {
                *index = zero_based(index)?;
            }
            return crate::variant::element::function().invoke_with_args(args);
        }
        if !matches!(args.args[0].data_type(), DataType::Map(..)) {
            return array_element_udf().invoke_with_args(args);
        }
        // map_extract gives each row a list holding the key's value (or an empty list).
        let is_scalar = args
            .args
            .iter()
            .all(|a| matches!(a, ColumnarValue::Scalar(_)));
        let value_field = Arc::clone(&args.return_field);
        let found = map_extract_udf().invoke_with_args(ScalarFunctionArgs {
            return_field: Arc::new(datafusion::arrow::datatypes::Field::new(
                "found",
                DataType::List(Arc::new(
                    value_field
                        .as_ref()
                        .clone()
                        .with_name("item")
                        .with_nullable(true),
                )),
                true,
            )),
            ..args
        })?;
        let rows = match &found {
            ColumnarValue::Array(a) => a.len(),
            ColumnarValue::Scalar(_) => 1,
        };
        let lists = found.to_array(rows)?;
        crate::util::output(first_elements(&lists)?, is_scalar)
    }
}

/// A 1-based element_at index as the VARIANT subscript's 0-based one (negative ones count from
/// the end in both; index 0 has no element); a string key is left as it is.
fn zero_based(index: &ColumnarValue) -> Result<ColumnarValue> {
    let shift = |n: i64| match n {
        0 => None,
        n if n > 0 => Some(n - 1),
        n => Some(n),
    };
    Ok(match index {
        ColumnarValue::Scalar(v) if v.data_type().is_integer() => {
            let n = v.cast_to(&DataType::Int64)?;
            ColumnarValue::Scalar(match n {
                ScalarValue::Int64(Some(n)) => ScalarValue::Int64(shift(n)),
                other => other,
            })
        }
        ColumnarValue::Array(a) if a.data_type().is_integer() => {
            let n = datafusion::arrow::compute::cast(a, &DataType::Int64)?;
            let shifted: Int64Array = n
                .as_primitive::<datafusion::arrow::datatypes::Int64Type>()
                .iter()
                .map(|v| v.and_then(shift))
                .collect();
            ColumnarValue::Array(Arc::new(shifted))
        }
        other => other.clone(),
    })
}

/// The first element of each list, NULL for an empty or NULL list.
fn first_elements(lists: &ArrayRef) -> Result<ArrayRef> {
    let list = lists.as_list::<i32>();
    let indices: datafusion::arrow::array::UInt32Array = (0..list.len())
        .map(|row| {
            (list.is_valid(row) && list.value_length(row) > 0)
                .then(|| list.value_offsets()[row] as u32)
        })
        .collect();
    Ok(datafusion::arrow::compute::take(
        list.values().as_ref(),
        &indices,
        None,
    )?)
}
