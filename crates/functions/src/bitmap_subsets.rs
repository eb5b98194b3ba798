//! Doris's BITMAP subsets, as its function reference describes them:
//! - `sub_bitmap(b, position, limit)`: at most `limit` members from the `position`-th member in
//!   ascending order (0 is the smallest, -1 the largest); NULL for a position outside the bitmap
//!   or a negative limit;
//! - `bitmap_subset_in_range(b, start, end)`: the members in [start, end); NULL for a negative
//!   bound or an end before the start;
//! - `bitmap_subset_limit(b, start, limit)`: at most `limit` members from `start` up; NULL for
//!   a negative start or limit.
//!
//! All are NULL when an argument is NULL.

use crate::util::{arguments, decode_bitmap, output, sketch_function, Bytes};
use basalt_common::bitmap_value::BitmapValue;
use datafusion::arrow::array::{Array, AsArray, BinaryBuilder};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Int64Type};
use datafusion::common::Result;
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, Signature, Volatility,
};
use std::sync::Arc;

pub fn functions() -> Vec<ScalarUDF> {
    let signature = || Signature::any(3, Volatility::Immutable);
    vec![
        sketch_function(
            "sub_bitmap",
            signature(),
            basalt_common::SqlType::Bitmap,
            sub_bitmap,
        ),
        sketch_function(
            "bitmap_subset_in_range",
            signature(),
            basalt_common::SqlType::Bitmap,
            subset_in_range,
        ),
        sketch_function(
            "bitmap_subset_limit",
            signature(),
            basalt_common::SqlType::Bitmap,
            subset_limit,
        ),
    ]
}

fn subset_limit(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    subset(args, "bitmap_subset_limit", |b, start, limit| {
        let (start, limit) = (u64::try_from(start).ok()?, usize::try_from(limit).ok()?);
        Some(BitmapValue::from_ids(
            b.iter().skip_while(|&id| id < start).take(limit),
        ))
    })
}

fn sub_bitmap(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    subset(args, "sub_bitmap", |b, position, limit| {
        let len = i64::try_from(b.len()).ok()?;
        let from = if position < 0 {
            len + position
        } else {
            position
        };
        if from < 0 || from >= len || limit < 0 {
            return None;
        }
        let (from, limit) = (usize::try_from(from).ok()?, usize::try_from(limit).ok()?);
        Some(BitmapValue::from_ids(b.iter().skip(from).take(limit)))
    })
}

fn subset_in_range(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    subset(args, "bitmap_subset_in_range", |b, start, end| {
        let (start, end) = (u64::try_from(start).ok()?, u64::try_from(end).ok()?);
        if end < start {
            return None;
        }
        Some(BitmapValue::from_ids(
            b.iter()
                .skip_while(|&id| id < start)
                .take_while(|&id| id < end),
        ))
    })
}

/// Applies `pick` to each row's bitmap and two numbers; NULL where an argument is NULL or
/// `pick` gives None.
fn subset(
    args: &ScalarFunctionArgs,
    name: &str,
    pick: fn(&BitmapValue, i64, i64) -> Option<BitmapValue>,
) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let bitmaps = Bytes::new(name, &arrays[0])?;
    let first = cast(&arrays[1], &DataType::Int64)?;
    let second = cast(&arrays[2], &DataType::Int64)?;
    let (first, second) = (
        first.as_primitive::<Int64Type>(),
        second.as_primitive::<Int64Type>(),
    );
    let mut out = BinaryBuilder::new();
    for row in 0..arrays[0].len() {
        let picked = match bitmaps.get(row) {
            Some(bytes) if first.is_valid(row) && second.is_valid(row) => pick(
                &decode_bitmap(name, bytes)?,
                first.value(row),
                second.value(row),
            ),
            _ => None,
        };
        match picked {
            Some(b) => out.append_value(b.serialize()),
            None => out.append_null(),
        }
    }
    output(Arc::new(out.finish()), scalar)
}
