//! TIME values inside ARRAY, MAP and STRUCT text (`['100:00:00', '-12:30']`): arrow-json reads
//! a `Time64` as a time of day and refuses spans past 24 hours or below zero, so the nested
//! type is decoded with text in place of each TIME ([`times_as_text`]) and the text is then
//! read as MySQL's TIME ([`crate::time_value::parse_text`], clipped to ±838:59:59) by
//! [`text_as_times`].

use arrow::array::{
    Array, ArrayRef, AsArray, LargeListArray, ListArray, MapArray, StructArray,
    Time64MicrosecondArray,
};
use arrow::datatypes::{DataType, Field, FieldRef, Fields, TimeUnit};
use std::sync::Arc;

/// `target` with each TIME replaced by text, or None when it holds no TIME.
pub fn times_as_text(target: &DataType) -> Option<DataType> {
    fn swap(t: &DataType) -> (DataType, bool) {
        let field = |f: &FieldRef| {
            let (t, changed) = swap(f.data_type());
            (Arc::new(Field::clone(f).with_data_type(t)), changed)
        };
        match t {
            DataType::Time64(_) | DataType::Time32(_) => (DataType::Utf8, true),
            DataType::List(f) => {
                let (f, changed) = field(f);
                (DataType::List(f), changed)
            }
            DataType::LargeList(f) => {
                let (f, changed) = field(f);
                (DataType::LargeList(f), changed)
            }
            DataType::Map(f, sorted) => {
                let (f, changed) = field(f);
                (DataType::Map(f, *sorted), changed)
            }
            DataType::Struct(fields) => {
                let swapped: Vec<(FieldRef, bool)> = fields.iter().map(field).collect();
                let changed = swapped.iter().any(|(_, c)| *c);
                let fields: Fields = swapped.into_iter().map(|(f, _)| f).collect();
                (DataType::Struct(fields), changed)
            }
            other => (other.clone(), false),
        }
    }
    let (swapped, changed) = swap(target);
    changed.then_some(swapped)
}

/// `array`, decoded as [`times_as_text`] of `target`, with its text read back as TIMEs of
/// `target`; an error names a text that is no time.
pub fn text_as_times(array: &ArrayRef, target: &DataType) -> Result<ArrayRef, String> {
    let bad = |e: arrow::error::ArrowError| e.to_string();
    Ok(match target {
        DataType::Time64(_) | DataType::Time32(_) => {
            let strings = array.as_string_opt::<i32>().ok_or("expected text")?;
            let mut out = Vec::with_capacity(strings.len());
            for v in strings.iter() {
                out.push(match v {
                    None => None,
                    Some(text) => Some(
                        crate::time_value::parse_text(text)
                            .ok_or_else(|| format!("'{text}' is no TIME"))?
                            .micros,
                    ),
                });
            }
            let micros: ArrayRef = Arc::new(Time64MicrosecondArray::from(out));
            if matches!(target, DataType::Time64(TimeUnit::Microsecond)) {
                micros
            } else {
                arrow::compute::cast(&micros, target).map_err(bad)?
            }
        }
        DataType::List(f) => {
            let list = array.as_list_opt::<i32>().ok_or("expected a list")?;
            let values = text_as_times(list.values(), f.data_type())?;
            Arc::new(
                ListArray::try_new(
                    f.clone(),
                    list.offsets().clone(),
                    values,
                    list.nulls().cloned(),
                )
                .map_err(bad)?,
            )
        }
        DataType::LargeList(f) => {
            let list = array.as_list_opt::<i64>().ok_or("expected a list")?;
            let values = text_as_times(list.values(), f.data_type())?;
            Arc::new(
                LargeListArray::try_new(
                    f.clone(),
                    list.offsets().clone(),
                    values,
                    list.nulls().cloned(),
                )
                .map_err(bad)?,
            )
        }
        DataType::Map(f, sorted) => {
            let map = array.as_map_opt().ok_or("expected a map")?;
            let entries: ArrayRef = Arc::new(map.entries().clone());
            let entries = text_as_times(&entries, f.data_type())?;
            Arc::new(
                MapArray::try_new(
                    f.clone(),
                    map.offsets().clone(),
                    entries.as_struct().clone(),
                    map.nulls().cloned(),
                    *sorted,
                )
                .map_err(bad)?,
            )
        }
        DataType::Struct(fields) => {
            let st = array.as_struct_opt().ok_or("expected a struct")?;
            let columns = st
                .columns()
                .iter()
                .zip(fields.iter())
                .map(|(c, f)| text_as_times(c, f.data_type()))
                .collect::<Result<Vec<_>, _>>()?;
            Arc::new(
                StructArray::try_new(fields.clone(), columns, st.nulls().cloned()).map_err(bad)?,
            )
        }
        _ => array.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::StringArray;
    use arrow::datatypes::Time64MicrosecondType;

    #[test]
    fn times_in_lists_read_as_spans() {
        let time = DataType::Time64(TimeUnit::Microsecond);
        let target = DataType::List(Arc::new(Field::new("item", time, true)));
        let text = times_as_text(&target).unwrap();
        assert_eq!(
            text,
            DataType::List(Arc::new(Field::new("item", DataType::Utf8, true)))
        );
        assert_eq!(times_as_text(&DataType::Int32), None);
        let values: ArrayRef = Arc::new(StringArray::from(vec![
            Some("100:00:00"),
            None,
            Some("-12:30"),
        ]));
        let list: ArrayRef = Arc::new(ListArray::new(
            Arc::new(Field::new("item", DataType::Utf8, true)),
            arrow::buffer::OffsetBuffer::from_lengths([3]),
            values,
            None,
        ));
        let out = text_as_times(&list, &target).unwrap();
        let first = out.as_list::<i32>().value(0);
        let spans = first.as_primitive::<Time64MicrosecondType>();
        assert_eq!(spans.value(0), 360_000_000_000);
        assert!(spans.is_null(1));
        assert_eq!(spans.value(2), -45_000_000_000);

        let bad: ArrayRef = Arc::new(ListArray::new(
            Arc::new(Field::new("item", DataType::Utf8, true)),
            arrow::buffer::OffsetBuffer::from_lengths([1]),
            Arc::new(StringArray::from(vec!["abc"])),
            None,
        ));
        assert!(text_as_times(&bad, &target).is_err());
    }
}
