//! Doris's parts of an array (NULL when any argument is NULL):
//! - `array_slice(a, off[, len])` (planned as `doris_array_slice`; DataFusion's own
//!   `array_slice(a, from, to)` stays for `a[from:to]`): `len` elements from the 1-based `off`
//!   (from the right when negative, `-1` the last); to the end without `len`; `[]` when `off`
//!   is 0 or outside the array, or `len` is negative;
//! - `trim_array(a, n)`: `a` without its last `n` elements; `n` negative or longer than the
//!   array is an error.

use crate::list_rows::{array_function, element_field, list_type, lists, row_range, Picks};
use crate::util::expect_args;
use datafusion::arrow::array::{Array, ArrayRef, AsArray};
use datafusion::arrow::datatypes::{DataType, Int64Type};
use datafusion::common::{exec_err, plan_err, Result};
use datafusion::logical_expr::ScalarUDF;
use std::sync::Arc;

/// The name `array_slice(a, off[, len])` is planned under.
pub const SLICE: &str = "doris_array_slice";

pub fn functions() -> Vec<ScalarUDF> {
    vec![
        array_function(
            SLICE,
            |t| {
                expect_args("array_slice", t, 2, 3)?;
                let mut out = vec![list_type("array_slice", &t[0])?];
                for c in &t[1..] {
                    out.push(integer("array_slice", c)?);
                }
                Ok(out)
            },
            |t| Ok(t[0].clone()),
            slice,
        ),
        array_function(
            "trim_array",
            |t| {
                expect_args("trim_array", t, 2, 2)?;
                Ok(vec![
                    list_type("trim_array", &t[0])?,
                    integer("trim_array", &t[1])?,
                ])
            },
            |t| Ok(t[0].clone()),
            trim,
        ),
    ]
}

/// An integer argument (or NULL), read as BIGINT.
pub(crate) fn integer(func: &str, dt: &DataType) -> Result<DataType> {
    if dt.is_integer() || dt.is_null() {
        Ok(DataType::Int64)
    } else {
        plan_err!("{func} takes an integer here, not {dt}")
    }
}

fn slice(args: &[ArrayRef], rows: usize) -> Result<ArrayRef> {
    let l = lists("array_slice", &args[0])?;
    let offsets = args[1].as_primitive::<Int64Type>();
    let lengths = args.get(2).map(|a| a.as_primitive::<Int64Type>());
    let mut picks = Picks::with_rows(rows);
    for i in 0..rows {
        if l.is_null(i) || offsets.is_null(i) || lengths.is_some_and(|n| n.is_null(i)) {
            picks.push_null();
            continue;
        }
        let r = row_range(l, i);
        let n = r.len() as i64;
        let off = offsets.value(i);
        // The 0-based first element, when inside the array.
        let first = match off {
            o if o > 0 && o <= n => Some(o - 1),
            o if o < 0 && -o <= n => Some(n + o),
            _ => None,
        };
        let Some(first) = first else {
            picks.push_row([]);
            continue;
        };
        let count = match lengths {
            Some(lens) => lens.value(i).clamp(0, n - first),
            None => n - first,
        };
        let start = r.start + first as usize;
        picks.push_row(start..start + count as usize);
    }
    let field = element_field("array_slice", l.data_type())?;
    Ok(Arc::new(picks.gather(field, l.values())?))
}

fn trim(args: &[ArrayRef], rows: usize) -> Result<ArrayRef> {
    let l = lists("trim_array", &args[0])?;
    let sizes = args[1].as_primitive::<Int64Type>();
    let mut picks = Picks::with_rows(rows);
    for i in 0..rows {
        if l.is_null(i) || sizes.is_null(i) {
            picks.push_null();
            continue;
        }
        let r = row_range(l, i);
        let size = sizes.value(i);
        if size < 0 || size as u64 > r.len() as u64 {
            return exec_err!(
                "trim_array: size must not be negative nor exceed array cardinality {}: {size}",
                r.len()
            );
        }
        picks.push_row(r.start..r.end - size as usize);
    }
    let field = element_field("trim_array", l.data_type())?;
    Ok(Arc::new(picks.gather(field, l.values())?))
}
