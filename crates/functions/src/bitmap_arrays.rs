//! Doris's `bitmap_to_array(bitmap)` (the members, ascending, as ARRAY<BIGINT>) and
//! `bitmap_from_array(array)` (a BITMAP of the array's integers; NULL elements are skipped, a
//! negative one makes the result NULL as `to_bitmap` of a negative number is). `LATERAL VIEW
//! explode_bitmap(b)` unnests `bitmap_to_array(b)`.

use crate::util::{arguments, decode_bitmap, output, plain_function, sketch_function, Bytes};
use basalt_common::bitmap_value::BitmapValue;
use datafusion::arrow::array::{Array, AsArray, BinaryBuilder, Int64Builder, ListBuilder};
use datafusion::arrow::datatypes::{DataType, Field, Int64Type};
use datafusion::common::{exec_err, Result};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, Signature, Volatility,
};
use std::sync::Arc;

pub fn functions() -> Vec<ScalarUDF> {
    vec![
        plain_function(
            "bitmap_to_array",
            Signature::any(1, Volatility::Immutable),
            DataType::List(Arc::new(Field::new_list_field(DataType::Int64, true))),
            to_array,
        ),
        sketch_function(
            "bitmap_from_array",
            Signature::any(1, Volatility::Immutable),
            basalt_common::SqlType::Bitmap,
            from_array,
        ),
    ]
}

fn to_array(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let bitmaps = Bytes::new("bitmap_to_array", &arrays[0])?;
    let mut out = ListBuilder::new(Int64Builder::new());
    for i in 0..arrays[0].len() {
        match bitmaps.get(i) {
            None => out.append_null(),
            Some(bytes) => {
                let bitmap = decode_bitmap("bitmap_to_array", bytes)?;
                for id in bitmap.iter() {
                    // Doris's BIGINT view of a member (ids above i64::MAX wrap, as there).
                    out.values().append_value(id as i64);
                }
                out.append(true);
            }
        }
    }
    output(Arc::new(out.finish()), scalar)
}

fn from_array(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let list_type = DataType::List(Arc::new(Field::new_list_field(DataType::Int64, true)));
    let lists = match arrays[0].data_type() {
        DataType::Null => datafusion::arrow::array::new_null_array(&list_type, arrays[0].len()),
        DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _)
            if f.data_type().is_integer() || f.data_type() == &DataType::Null =>
        {
            datafusion::arrow::compute::cast(&arrays[0], &list_type)?
        }
        other => return exec_err!("bitmap_from_array takes an array of integers, not {other}"),
    };
    let lists = lists.as_list::<i32>();
    let mut out = BinaryBuilder::new();
    for i in 0..lists.len() {
        if lists.is_null(i) {
            out.append_null();
            continue;
        }
        let values = lists.value(i);
        let values = values.as_primitive::<Int64Type>();
        let ids: Option<Vec<u64>> = values
            .iter()
            .flatten()
            .map(|v| u64::try_from(v).ok())
            .collect();
        match ids {
            Some(ids) => out.append_value(BitmapValue::from_ids(ids).serialize()),
            None => out.append_null(),
        }
    }
    output(Arc::new(out.finish()), scalar)
}
