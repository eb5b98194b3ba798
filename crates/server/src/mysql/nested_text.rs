//! Text of ARRAY, MAP and STRUCT values as Doris shows them: `[1, null, 2]`,
//! `["abc", "def"]`, `{"k":1}`, `{"col1":1, "col2":"a"}`. Strings, dates and times are quoted,
//! NULL is `null` at any depth, DATETIME has a space before its time, a TIME is MySQL's signed
//! span (`"-01:00:00"`, `"25:30:01"`), IPV4/IPV6 values are quoted address text.

use arrow::array::{Array, AsArray};
use arrow::datatypes::{DataType, Field, Float32Type, Float64Type};
use arrow::error::ArrowError;
use arrow::util::display::{ArrayFormatter, FormatOptions};
use std::fmt::Write;

/// Writes one row of a nested array.
pub struct NestedText<'a> {
    array: &'a dyn Array,
}

impl<'a> NestedText<'a> {
    /// `Some` for the nested types (lists, maps, structs).
    pub fn for_array(array: &'a dyn Array) -> Option<NestedText<'a>> {
        is_nested(array.data_type()).then_some(NestedText { array })
    }

    /// The text of `row`.
    pub fn text(&self, row: usize) -> String {
        let mut out = String::new();
        if let Err(e) = value(self.array, None, row, &mut out) {
            out = format!("<{e}>");
        }
        out
    }
}

fn is_nested(t: &DataType) -> bool {
    matches!(
        t,
        DataType::List(_)
            | DataType::LargeList(_)
            | DataType::FixedSizeList(_, _)
            | DataType::ListView(_)
            | DataType::Struct(_)
            | DataType::Map(_, _)
    )
}

/// Writes row `row` of `array`, an element described by `field` when its parent says.
fn value(
    array: &dyn Array,
    field: Option<&Field>,
    row: usize,
    out: &mut String,
) -> Result<(), ArrowError> {
    // A NullArray has no null buffer: its values are null all the same.
    if array.is_null(row) || array.data_type() == &DataType::Null {
        out.push_str("null");
        return Ok(());
    }
    let family = field.and_then(basalt_common::ip_address::ip_family);
    if let Some(text) = family.and_then(|f| basalt_common::ip_address::ip_text(array, f, row)) {
        let _ = write!(out, "\"{text}\"");
        return Ok(());
    }
    match array.data_type() {
        DataType::List(f) => elements(array.as_list::<i32>().value(row).as_ref(), f, out),
        DataType::LargeList(f) => elements(array.as_list::<i64>().value(row).as_ref(), f, out),
        DataType::FixedSizeList(f, _) => {
            elements(array.as_fixed_size_list().value(row).as_ref(), f, out)
        }
        DataType::Struct(fields) => {
            let s = array.as_struct();
            out.push('{');
            for (i, field) in fields.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                let _ = write!(out, "\"{}\":", field.name());
                value(s.column(i).as_ref(), Some(field), row, out)?;
            }
            out.push('}');
            Ok(())
        }
        DataType::Map(_, _) => {
            let entries = array.as_map().value(row);
            let fields = entries.fields().clone();
            out.push('{');
            for i in 0..entries.len() {
                if i > 0 {
                    out.push_str(", ");
                }
                value(
                    entries.column(0).as_ref(),
                    fields.first().map(|f| f.as_ref()),
                    i,
                    out,
                )?;
                out.push(':');
                value(
                    entries.column(1).as_ref(),
                    fields.get(1).map(|f| f.as_ref()),
                    i,
                    out,
                )?;
            }
            out.push('}');
            Ok(())
        }
        // Numbers in floating point as at the top level (`0`, not `0.0`).
        DataType::Float64 | DataType::Float32 => {
            let mut text = Vec::new();
            match array.as_primitive_opt::<Float64Type>() {
                Some(f) => super::types::push_f64(&mut text, f.value(row)),
                None => super::types::push_f32(
                    &mut text,
                    array.as_primitive::<Float32Type>().value(row),
                ),
            }
            out.push_str(&String::from_utf8_lossy(&text));
            Ok(())
        }
        // A TIME is a signed span (`-01:00:00`, `25:30:01`), with its declared digits.
        DataType::Time64(unit) => {
            let micros = match unit {
                arrow::datatypes::TimeUnit::Nanosecond => {
                    array
                        .as_primitive::<arrow::datatypes::Time64NanosecondType>()
                        .value(row)
                        / 1_000
                }
                _ => array
                    .as_primitive::<arrow::datatypes::Time64MicrosecondType>()
                    .value(row),
            };
            let digits = field.and_then(basalt_common::types::fraction_digits);
            let text = basalt_common::time_value::format(micros, digits);
            let _ = write!(out, "\"{text}\"");
            Ok(())
        }
        // Doris prints a nested BOOLEAN as 1 or 0, like a top-level one.
        DataType::Boolean => {
            out.push(if array.as_boolean().value(row) {
                '1'
            } else {
                '0'
            });
            Ok(())
        }
        other => {
            let options = FormatOptions::new()
                .with_timestamp_format(Some("%Y-%m-%d %H:%M:%S%.f"))
                .with_datetime_format(Some("%Y-%m-%d %H:%M:%S%.f"));
            let text = ArrayFormatter::try_new(array, &options)?
                .value(row)
                .to_string();
            if quoted(other) {
                let _ = write!(out, "\"{text}\"");
            } else {
                out.push_str(&text);
            }
            Ok(())
        }
    }
}

fn elements(values: &dyn Array, field: &Field, out: &mut String) -> Result<(), ArrowError> {
    out.push('[');
    for i in 0..values.len() {
        if i > 0 {
            out.push_str(", ");
        }
        value(values, Some(field), i, out)?;
    }
    out.push(']');
    Ok(())
}

fn quoted(t: &DataType) -> bool {
    matches!(
        t,
        DataType::Utf8
            | DataType::LargeUtf8
            | DataType::Utf8View
            | DataType::Date32
            | DataType::Date64
            | DataType::Timestamp(_, _)
            | DataType::Time32(_)
            | DataType::Time64(_)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{ArrayRef, Int32Array, ListArray, StringArray, StructArray};
    use arrow::datatypes::{Field, Int32Type};
    use std::sync::Arc;

    #[test]
    fn doris_text_of_nested_values() {
        let list = ListArray::from_iter_primitive::<Int32Type, _, _>(vec![
            Some(vec![Some(1), None, Some(2)]),
            None,
            Some(vec![]),
        ]);
        let t = NestedText::for_array(&list).unwrap();
        assert_eq!(t.text(0), "[1, null, 2]");
        assert_eq!(t.text(2), "[]");
        let s = StructArray::from(vec![
            (
                Arc::new(Field::new("col1", DataType::Int32, true)),
                Arc::new(Int32Array::from(vec![Some(1)])) as ArrayRef,
            ),
            (
                Arc::new(Field::new("col2", DataType::Utf8, true)),
                Arc::new(StringArray::from(vec![None::<&str>])) as ArrayRef,
            ),
        ]);
        assert_eq!(
            NestedText::for_array(&s).unwrap().text(0),
            "{\"col1\":1, \"col2\":null}"
        );
    }
}
