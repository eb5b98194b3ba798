//! Doris's arrays of positions, as ARRAY<BIGINT> of the input's length (NULL for a NULL array):
//! - `array_enumerate(a)`: 1, 2, .., n (NULL elements counted too);
//! - `array_enumerate_uniq(a1, ..)`: for each element, how many times it (or, with several
//!   arrays of one length, the tuple of their elements at that position) has occurred so far,
//!   NULLs equal to each other; arrays of different lengths are an error.

use crate::list_rows::{aligned_elements, array_function, item_field, list_type, lists, row_range};
use crate::util::expect_args;
use datafusion::arrow::array::{Array, ArrayRef, Int64Builder, ListBuilder};
use datafusion::arrow::datatypes::DataType;
use datafusion::arrow::row::{RowConverter, SortField};
use datafusion::common::Result;
use datafusion::logical_expr::ScalarUDF;
use std::collections::HashMap;
use std::sync::Arc;

pub fn functions() -> Vec<ScalarUDF> {
    vec![
        array_function(
            "array_enumerate",
            |t| {
                expect_args("array_enumerate", t, 1, 1)?;
                Ok(vec![list_type("array_enumerate", &t[0])?])
            },
            positions_type,
            enumerate,
        ),
        array_function(
            "array_enumerate_uniq",
            |t| {
                expect_args("array_enumerate_uniq", t, 1, usize::MAX)?;
                t.iter()
                    .map(|t| list_type("array_enumerate_uniq", t))
                    .collect()
            },
            positions_type,
            enumerate_uniq,
        ),
    ]
}

fn positions_type(_: &[DataType]) -> Result<DataType> {
    Ok(DataType::List(item_field(DataType::Int64)))
}

fn positions_builder(rows: usize) -> ListBuilder<Int64Builder> {
    ListBuilder::with_capacity(Int64Builder::new(), rows).with_field(item_field(DataType::Int64))
}

fn enumerate(args: &[ArrayRef], rows: usize) -> Result<ArrayRef> {
    let l = lists("array_enumerate", &args[0])?;
    let mut out = positions_builder(rows);
    for i in 0..rows {
        if l.is_null(i) {
            out.append_null();
            continue;
        }
        let n = row_range(l, i).len() as i64;
        out.values().append_slice(&(1..=n).collect::<Vec<_>>());
        out.append(true);
    }
    Ok(Arc::new(out.finish()))
}

fn enumerate_uniq(args: &[ArrayRef], rows: usize) -> Result<ArrayRef> {
    const NAME: &str = "array_enumerate_uniq";
    let all = args
        .iter()
        .map(|a| lists(NAME, a))
        .collect::<Result<Vec<_>>>()?;
    let (columns, lengths) = aligned_elements(NAME, &all, rows)?;
    let converter = RowConverter::new(
        columns
            .iter()
            .map(|c| SortField::new(c.data_type().clone()))
            .collect(),
    )?;
    let keys = converter.convert_columns(&columns)?;
    let mut out = positions_builder(rows);
    let mut next = 0usize;
    for n in lengths {
        let Some(n) = n else {
            out.append_null();
            continue;
        };
        let mut seen: HashMap<_, i64> = HashMap::new();
        for k in next..next + n {
            let count = seen.entry(keys.row(k)).or_insert(0);
            *count += 1;
            out.values().append_value(*count);
        }
        next += n;
        out.append(true);
    }
    Ok(Arc::new(out.finish()))
}
