//! Doris's array functions `array_except_all(a, b)` (the multiset difference: each element of
//! `b` removes one equal element of `a`, NULL matching NULL; `a`'s order kept), `array_shuffle(a[,
//! seed])` (the elements in a random order, reproducible with a seed) and
//! `array_cross_product(a, b)` (the cross product of two 3-element numeric vectors, as FLOATs;
//! a NULL element or another length is an error). A NULL array gives NULL.

use crate::list_rows::{element_field, list_type};
use crate::util::{arguments, output, plain_function};
use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, Float32Builder, ListArray, ListBuilder, UInt32Array,
};
use datafusion::arrow::buffer::{NullBuffer, OffsetBuffer};
use datafusion::arrow::compute::{cast, filter, take};
use datafusion::arrow::datatypes::{DataType, Field, Float64Type, Int64Type};
use datafusion::arrow::row::{RowConverter, SortField};
use datafusion::common::{exec_err, plan_err, Result};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use std::collections::HashMap;
use std::sync::Arc;

pub fn functions() -> Vec<ScalarUDF> {
    vec![
        ScalarUDF::new_from_impl(ExceptAll {
            signature: Signature::user_defined(Volatility::Immutable),
        }),
        ScalarUDF::new_from_impl(Shuffle {
            signature: Signature::user_defined(Volatility::Volatile),
        }),
        plain_function(
            "array_cross_product",
            Signature::exact(
                vec![
                    DataType::new_list(DataType::Float64, true),
                    DataType::new_list(DataType::Float64, true),
                ],
                Volatility::Immutable,
            ),
            DataType::new_list(DataType::Float32, true),
            cross_product,
        ),
    ]
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct ExceptAll {
    signature: Signature,
}

impl ScalarUDFImpl for ExceptAll {
    fn name(&self) -> &str {
        "array_except_all"
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        let [a, b] = types else {
            return plan_err!("array_except_all takes two arrays");
        };
        // A NULL literal takes the other array's element type.
        let element = |t: &DataType| -> Result<DataType> {
            match t {
                DataType::Null => Ok(DataType::Null),
                t => Ok(element_field(self.name(), t)?.data_type().clone()),
            }
        };
        let (ea, eb): (DataType, DataType) = (element(a)?, element(b)?);
        if matches!(
            ea,
            DataType::List(_) | DataType::Map(..) | DataType::Struct(_)
        ) {
            return plan_err!("array_except_all does not support arrays of {ea}");
        }
        let common = if ea == DataType::Null {
            eb.clone()
        } else {
            ea.clone()
        };
        let common = if common == DataType::Null {
            DataType::Int64
        } else {
            common
        };
        Ok(vec![
            DataType::new_list(common.clone(), true),
            DataType::new_list(common, true),
        ])
    }
    fn return_type(&self, types: &[DataType]) -> Result<DataType> {
        Ok(types[0].clone())
    }
    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let (arrays, scalar) = arguments(&args)?;
        let (a, b) = (arrays[0].as_list::<i32>(), arrays[1].as_list::<i32>());
        let element_type = element_field("array_except_all", a.data_type())?
            .data_type()
            .clone();
        let converter = RowConverter::new(vec![SortField::new(element_type)])?;
        let rows_a = converter.convert_columns(&[Arc::clone(a.values())])?;
        let rows_b = converter.convert_columns(&[Arc::clone(b.values())])?;
        let mut keep = vec![false; a.values().len()];
        let (mut lengths, mut valid) = (Vec::with_capacity(a.len()), Vec::with_capacity(a.len()));
        for row in 0..a.len() {
            if a.is_null(row) || b.is_null(row) {
                lengths.push(0);
                valid.push(false);
                continue;
            }
            let mut removals: HashMap<&[u8], usize> = HashMap::new();
            let (bs, be) = (
                b.value_offsets()[row] as usize,
                b.value_offsets()[row + 1] as usize,
            );
            for i in bs..be {
                *removals.entry(rows_b.row(i).data()).or_default() += 1;
            }
            let (as_, ae) = (
                a.value_offsets()[row] as usize,
                a.value_offsets()[row + 1] as usize,
            );
            let mut kept = 0;
            for (i, kept_here) in keep.iter_mut().enumerate().take(ae).skip(as_) {
                match removals.get_mut(rows_a.row(i).data()) {
                    Some(n) if *n > 0 => *n -= 1,
                    _ => {
                        *kept_here = true;
                        kept += 1;
                    }
                }
            }
            lengths.push(kept);
            valid.push(true);
        }
        let values = filter(a.values().as_ref(), &BooleanArray::from(keep))?;
        let out = ListArray::try_new(
            element_field("array_except_all", a.data_type())?,
            OffsetBuffer::from_lengths(lengths),
            values,
            Some(NullBuffer::from(valid)),
        )?;
        output(Arc::new(out), scalar)
    }
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct Shuffle {
    signature: Signature,
}

impl ScalarUDFImpl for Shuffle {
    fn name(&self) -> &str {
        "array_shuffle"
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        match types {
            [a] => Ok(vec![list_type(self.name(), a)?]),
            [a, _] => Ok(vec![list_type(self.name(), a)?, DataType::Int64]),
            _ => plan_err!("array_shuffle takes an array and an optional seed"),
        }
    }
    fn return_type(&self, types: &[DataType]) -> Result<DataType> {
        Ok(types[0].clone())
    }
    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let (arrays, scalar) = arguments(&args)?;
        let lists = arrays[0].as_list::<i32>();
        let seeds = match arrays.get(1) {
            Some(s) => Some(
                cast(s, &DataType::Int64)?
                    .as_primitive::<Int64Type>()
                    .clone(),
            ),
            None => None,
        };
        let mut order: Vec<u32> = Vec::with_capacity(lists.values().len());
        let mut random = rand::rngs::StdRng::from_os_rng();
        for row in 0..lists.len() {
            let (s, e) = (
                lists.value_offsets()[row] as usize,
                lists.value_offsets()[row + 1] as usize,
            );
            let mut positions = (s..e)
                .map(|p| {
                    u32::try_from(p).or_else(|_| exec_err!("array_shuffle: too many elements"))
                })
                .collect::<Result<Vec<u32>>>()?;
            match &seeds {
                Some(seeds) if seeds.is_valid(row) => positions.shuffle(
                    &mut rand::rngs::StdRng::seed_from_u64(seeds.value(row) as u64),
                ),
                _ => positions.shuffle(&mut random),
            }
            order.extend(positions);
        }
        let values = take(lists.values().as_ref(), &UInt32Array::from(order), None)?;
        let out = ListArray::try_new(
            element_field("array_shuffle", lists.data_type())?,
            lists.offsets().clone(),
            values,
            lists.nulls().cloned(),
        )?;
        output(Arc::new(out), scalar && seeds.is_some())
    }
}

fn cross_product(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let (a, b) = (arrays[0].as_list::<i32>(), arrays[1].as_list::<i32>());
    let mut out = ListBuilder::new(Float32Builder::new())
        .with_field(Arc::new(Field::new_list_field(DataType::Float32, true)));
    for row in 0..a.len() {
        if a.is_null(row) || b.is_null(row) {
            out.append_null();
            continue;
        }
        let (x, y) = (vector(&a.value(row))?, vector(&b.value(row))?);
        for v in [
            x[1] * y[2] - x[2] * y[1],
            x[2] * y[0] - x[0] * y[2],
            x[0] * y[1] - x[1] * y[0],
        ] {
            out.values().append_value(v as f32);
        }
        out.append(true);
    }
    output(Arc::new(out.finish()), scalar)
}

/// A 3-element vector without NULLs.
fn vector(values: &ArrayRef) -> Result<[f64; 3]> {
    let values = values.as_primitive::<Float64Type>();
    if values.null_count() > 0 {
        return exec_err!("array_cross_product: the arrays cannot hold NULL");
    }
    match values.values().as_ref() {
        [x, y, z] => Ok([*x, *y, *z]),
        other => exec_err!(
            "array_cross_product: the arrays must have 3 elements, not {}",
            other.len()
        ),
    }
}
