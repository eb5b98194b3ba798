//! Text read as an ARRAY of scalars the way Doris reads it (`CAST('[1, 2]' AS ARRAY<INT>)`, a
//! string inserted into an ARRAY column): the text is `[` items `]`, items split at the commas
//! outside quotes and brackets. An empty item (`[1,,2]`) or text not in brackets makes the
//! whole value unreadable. Each item is read as its element type on its own, and an item that
//! is no value of that type is a NULL element: `null` (lower case, unquoted) is NULL, a quoted
//! item loses its quotes (`'a'`, `"2"`), numbers are read as a CAST from text reads them
//! (`1.5` as INT is 1), dates in MySQL's forms without quotes too (`[2022-09-01]`), times as a
//! TIME reads text (`["25:30:01.5"]`, beyond 24 hours).

use crate::implicit_casts::{parse_bigint, parse_double};
use basalt_common::datetime_text::parse_column;
use datafusion::arrow::array::{
    new_null_array, Array, ArrayRef, Float64Array, Int64Array, ListArray, StringArray,
};
use datafusion::arrow::buffer::{NullBuffer, OffsetBuffer};
use datafusion::arrow::compute::{cast_with_options, CastOptions};
use datafusion::arrow::datatypes::{DataType, FieldRef, TimeUnit};
use datafusion::common::Result;
use std::sync::Arc;

/// One item of an array's text.
#[derive(Debug, PartialEq, Eq)]
enum Item<'a> {
    /// Unquoted `null`.
    Null,
    /// The item's text, without its quotes if it had them.
    Text(&'a str),
}

/// The items of `text` when it is an array (`[..]`); None when it is not one, or has an empty
/// item.
fn items(text: &str) -> Option<Vec<Item<'_>>> {
    let inner = text.trim().strip_prefix('[')?.strip_suffix(']')?;
    if inner.is_empty() {
        return Some(Vec::new());
    }
    let mut pieces = Vec::new();
    let (mut depth, mut quote, mut start) = (0i32, None, 0);
    for (at, c) in inner.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '[' | '{') => depth += 1,
            (None, ']' | '}') => depth -= 1,
            (None, ',') if depth == 0 => {
                let piece = inner[start..at].trim();
                if piece.is_empty() {
                    return None;
                }
                pieces.push(piece);
                start = at + 1;
            }
            _ => {}
        }
    }
    // The last item may be empty (`[1,]`): it is then an element that reads as nothing.
    pieces.push(inner[start..].trim());
    Some(pieces.into_iter().map(item).collect())
}

fn item(piece: &str) -> Item<'_> {
    if piece == "null" {
        return Item::Null;
    }
    let unquoted = ['"', '\''].iter().find_map(|q| {
        (piece.len() >= 2 && piece.starts_with(*q) && piece.ends_with(*q))
            .then(|| &piece[1..piece.len() - 1])
    });
    Item::Text(unquoted.unwrap_or(piece))
}

/// True for the element types [`read_arrays`] reads (scalars; nested elements are not).
pub(crate) fn reads_elements_of(list: &DataType) -> bool {
    match list {
        DataType::List(element) => !element.data_type().is_nested(),
        _ => false,
    }
}

/// Each value of `strings` read as an array of `element`s; the rows that are not arrays are
/// NULL and listed.
pub(crate) fn read_arrays(
    strings: &StringArray,
    element: &FieldRef,
) -> Result<(ArrayRef, Vec<usize>)> {
    let mut failed = Vec::new();
    let mut texts: Vec<Option<&str>> = Vec::new();
    let mut offsets = Vec::with_capacity(strings.len() + 1);
    let mut valid = Vec::with_capacity(strings.len());
    offsets.push(0i32);
    for (row, value) in strings.iter().enumerate() {
        let parsed = value.map(items);
        match parsed {
            Some(Some(items)) => {
                texts.extend(items.into_iter().map(|i| match i {
                    Item::Null => None,
                    Item::Text(t) => Some(t),
                }));
                valid.push(true);
            }
            Some(None) => {
                failed.push(row);
                valid.push(false);
            }
            None => valid.push(false),
        }
        let end = i32::try_from(texts.len()).map_err(|_| {
            datafusion::common::DataFusionError::Execution("array text too long".into())
        })?;
        offsets.push(end);
    }
    let values = elements(&StringArray::from(texts), element.data_type())?;
    // A TIME element keeps its declared digits (TIME alone is TIME(0), as CAST rounds it).
    let values = match values.data_type() {
        DataType::Time64(_) => {
            let digits = basalt_common::types::fraction_digits(element).unwrap_or(0);
            let micros = cast_with_options(&values, &TIME_MICROS, &CastOptions::default())?;
            cast_with_options(
                &rounded_times(&micros, digits),
                element.data_type(),
                &CastOptions::default(),
            )?
        }
        _ => values,
    };
    let list = ListArray::try_new(
        element.clone(),
        OffsetBuffer::new(offsets.into()),
        values,
        Some(NullBuffer::from(valid)),
    )?;
    Ok((Arc::new(list), failed))
}

const TIME_MICROS: DataType = DataType::Time64(TimeUnit::Microsecond);

/// TIME values rounded to `digits` fraction digits, as a TIME(digits) keeps them (NULL past
/// the range after rounding).
fn rounded_times(values: &ArrayRef, digits: u8) -> ArrayRef {
    use datafusion::arrow::array::{AsArray, Time64MicrosecondArray};
    use datafusion::arrow::datatypes::Time64MicrosecondType;
    let rounded: Time64MicrosecondArray = values
        .as_primitive::<Time64MicrosecondType>()
        .iter()
        .map(|v| v.and_then(|v| basalt_common::time_value::round(v, digits)))
        .collect();
    Arc::new(rounded)
}

/// `texts` read as values of `target`; a text that is no such value is NULL.
fn elements(texts: &StringArray, target: &DataType) -> Result<ArrayRef> {
    let lenient = CastOptions {
        safe: true,
        ..Default::default()
    };
    let to_target = |array: ArrayRef| cast_with_options(&array, target, &lenient);
    Ok(match target {
        DataType::Null => new_null_array(target, texts.len()),
        t if t.is_integer() => {
            let wide: Int64Array = texts.iter().map(|t| t.and_then(parse_bigint)).collect();
            to_target(Arc::new(wide))?
        }
        t if t.is_floating() => {
            let wide: Float64Array = texts.iter().map(|t| t.and_then(parse_double)).collect();
            to_target(Arc::new(wide))?
        }
        DataType::Date32 | DataType::Timestamp(_, None) => {
            let read_as = match target {
                DataType::Date32 => DataType::Date32,
                _ => DataType::Timestamp(TimeUnit::Microsecond, None),
            };
            match parse_column(texts, &read_as) {
                Some((values, _)) => to_target(values)?,
                None => to_target(Arc::new(texts.clone()))?,
            }
        }
        // MySQL's TIME text (`'25:30:01.5'`, `'-01:00'`), past 24 hours too; none is NULL.
        DataType::Time64(_) | DataType::Time32(_) => to_target(crate::time_cast::times(
            &(Arc::new(texts.clone()) as ArrayRef),
            false,
        )?)?,
        _ => to_target(Arc::new(texts.clone()))?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::AsArray;
    use datafusion::arrow::datatypes::{Field, Int32Type};

    fn read(text: &str, element: DataType) -> Option<ArrayRef> {
        let field = Arc::new(Field::new_list_field(element, true));
        let (array, _) = read_arrays(&StringArray::from(vec![text]), &field).unwrap();
        let list = array.as_list::<i32>();
        list.is_valid(0).then(|| list.value(0))
    }

    fn ints(text: &str) -> Option<Vec<Option<i32>>> {
        read(text, DataType::Int32).map(|a| a.as_primitive::<Int32Type>().iter().collect())
    }

    fn strings(text: &str) -> Option<Vec<Option<String>>> {
        read(text, DataType::Utf8).map(|a| {
            a.as_string::<i32>()
                .iter()
                .map(|s| s.map(str::to_string))
                .collect()
        })
    }

    #[test]
    fn items_split_outside_quotes_and_brackets() {
        assert_eq!(
            items("['a,b', \"c]\", [1, 2], null, NULL]").unwrap(),
            vec![
                Item::Text("a,b"),
                Item::Text("c]"),
                Item::Text("[1, 2]"),
                Item::Null,
                Item::Text("NULL")
            ]
        );
        assert_eq!(items("[]").unwrap(), vec![]);
        assert_eq!(items("[1,2,,]"), None);
        assert_eq!(items("1, 2"), None);
        assert_eq!(items("[1, 2"), None);
    }

    #[test]
    fn elements_are_read_one_by_one() {
        assert_eq!(ints("[1, null, 3]"), Some(vec![Some(1), None, Some(3)]));
        assert_eq!(
            ints("[1.5, \"2\", abc]"),
            Some(vec![Some(1), Some(2), None])
        );
        assert_eq!(ints("[1,2,,]"), None);
        assert_eq!(ints("[1, 2,]"), Some(vec![Some(1), Some(2), None]));
        assert_eq!(ints("[]"), Some(vec![]));
        assert_eq!(ints("[99999999999]"), Some(vec![None]));
        assert_eq!(
            strings("[\"a\", b, 'c d', NULL, null]"),
            Some(vec![
                Some("a".into()),
                Some("b".into()),
                Some("c d".into()),
                Some("NULL".into()),
                None
            ])
        );
        let dates = read("[2022-09-01, x]", DataType::Date32).unwrap();
        assert_eq!(dates.len(), 2);
        assert!(dates.is_valid(0) && dates.is_null(1));
    }

    #[test]
    fn times_past_a_day_negative_and_rounded_to_time_0() {
        use datafusion::arrow::datatypes::Time64MicrosecondType;
        let times = read(
            r#"["10:00:00", '25:30:01.5', -01:00, nope, null]"#,
            DataType::Time64(TimeUnit::Microsecond),
        )
        .unwrap();
        let values: Vec<Option<i64>> = times
            .as_primitive::<Time64MicrosecondType>()
            .iter()
            .collect();
        assert_eq!(
            values,
            [
                Some(36_000_000_000),
                Some(91_802_000_000),
                Some(-3_600_000_000),
                None,
                None
            ]
        );
    }

    #[test]
    fn rows_that_are_not_arrays_are_null_and_listed() {
        let field = Arc::new(Field::new_list_field(DataType::Int64, true));
        let strings = StringArray::from(vec![Some("[1]"), Some("oops"), None, Some("[,]")]);
        let (array, failed) = read_arrays(&strings, &field).unwrap();
        assert_eq!(failed, vec![1, 3]);
        assert!(array.is_valid(0) && array.is_null(1) && array.is_null(2) && array.is_null(3));
    }
}
