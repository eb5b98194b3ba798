//! Values of any Arrow type as hashable, ordered keys, and counts per distinct value: the shared
//! core of the counting aggregates (`topn*`, `histogram`, `count_by_enum`, `map_agg`).
//!
//! A value's key is its Arrow row-format encoding, whose byte order is the value's order, so
//! keys hash, compare and sort as the values do and decode back into an array. Keys live only
//! in memory: partial states carry the values themselves (one `List` of values beside one of
//! counts), which any node decodes.

use std::collections::HashMap;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, ListArray, StringArray, UInt64Array};
use arrow::buffer::OffsetBuffer;
use arrow::compute::cast;
use arrow::datatypes::{DataType, Field, Float32Type, Float64Type, UInt64Type};
use arrow::row::{RowConverter, Rows, SortField};
use datafusion::common::{exec_err, Result, ScalarValue};

/// Turns values of one type into keys and back.
#[derive(Debug)]
pub(crate) struct ValueKeys {
    converter: RowConverter,
    data_type: DataType,
}

impl ValueKeys {
    pub(crate) fn new(data_type: &DataType) -> Result<ValueKeys> {
        Ok(ValueKeys {
            converter: RowConverter::new(vec![SortField::new(data_type.clone())])?,
            data_type: data_type.clone(),
        })
    }

    pub(crate) fn data_type(&self) -> &DataType {
        &self.data_type
    }

    /// The key of every row of `values` (NULL rows too; callers skip them).
    pub(crate) fn encode(&self, values: &ArrayRef) -> Result<Rows> {
        let values = if values.data_type() == &self.data_type {
            values.clone()
        } else {
            cast(values, &self.data_type)?
        };
        Ok(self.converter.convert_columns(&[values])?)
    }

    /// The values of `keys`, in order.
    pub(crate) fn decode<'a>(&self, keys: impl IntoIterator<Item = &'a [u8]>) -> Result<ArrayRef> {
        let parser = self.converter.parser();
        let rows: Vec<_> = keys.into_iter().map(|k| parser.parse(k)).collect();
        let mut columns = self.converter.convert_rows(rows)?;
        match columns.pop() {
            Some(c) => Ok(c),
            None => exec_err!("a value decoder gave no column"),
        }
    }

    pub(crate) fn size(&self) -> usize {
        self.converter.size()
    }
}

/// How often each distinct value occurred.
#[derive(Debug, Default)]
pub(crate) struct Counts {
    map: HashMap<Box<[u8]>, u64>,
}

impl Counts {
    /// Adds `n` occurrences of `key`; a new key starts at `floor + n`.
    pub(crate) fn add(&mut self, key: &[u8], n: u64, floor: u64) {
        match self.map.get_mut(key) {
            Some(c) => *c = c.saturating_add(n),
            None => {
                self.map.insert(key.into(), floor.saturating_add(n));
            }
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.map.len()
    }

    pub(crate) fn get_mut(&mut self, key: &[u8]) -> Option<&mut u64> {
        self.map.get_mut(key)
    }

    pub(crate) fn insert(&mut self, key: &[u8], n: u64) {
        self.map.insert(key.into(), n);
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = (&[u8], u64)> {
        self.map.iter().map(|(k, c)| (&**k, *c))
    }

    pub(crate) fn values_mut(&mut self) -> impl Iterator<Item = &mut u64> {
        self.map.values_mut()
    }

    pub(crate) fn min_count(&self) -> Option<u64> {
        self.map.values().copied().min()
    }

    /// Entries by count, then value, both descending (Doris's order for `topn`).
    pub(crate) fn most_frequent(&self) -> Vec<(&[u8], u64)> {
        let mut v: Vec<(&[u8], u64)> = self.iter().collect();
        v.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| b.0.cmp(a.0)));
        v
    }

    /// Entries by value, ascending.
    pub(crate) fn by_value(&self) -> Vec<(&[u8], u64)> {
        let mut v: Vec<(&[u8], u64)> = self.iter().collect();
        v.sort_unstable_by(|a, b| a.0.cmp(b.0));
        v
    }

    /// Keeps the `keep` most frequent entries; returns the largest count dropped.
    pub(crate) fn prune(&mut self, keep: usize) -> u64 {
        if self.map.len() <= keep {
            return 0;
        }
        let ranked = self.most_frequent();
        let dropped_max = ranked.get(keep).map_or(0, |e| e.1);
        let kept: HashMap<Box<[u8]>, u64> = ranked[..keep]
            .iter()
            .map(|(k, c)| (Box::<[u8]>::from(*k), *c))
            .collect();
        self.map = kept;
        dropped_max
    }

    pub(crate) fn size(&self) -> usize {
        self.map.capacity() * (size_of::<Box<[u8]>>() + 8)
            + self.map.keys().map(|k| k.len()).sum::<usize>()
    }
}

/// One row of a list: `values` as a `List` scalar.
pub(crate) fn list_scalar(values: ArrayRef) -> Result<ScalarValue> {
    let field = Arc::new(Field::new_list_field(values.data_type().clone(), true));
    let offsets = OffsetBuffer::from_lengths([values.len()]);
    Ok(ScalarValue::List(Arc::new(ListArray::try_new(
        field, offsets, values, None,
    )?)))
}

/// `entries` as a (values, counts) pair of list scalars, the state of a counting aggregate.
pub(crate) fn counts_state(keys: &ValueKeys, entries: &[(&[u8], u64)]) -> Result<[ScalarValue; 2]> {
    let values = keys.decode(entries.iter().map(|e| e.0))?;
    let counts: ArrayRef = Arc::new(UInt64Array::from_iter_values(entries.iter().map(|e| e.1)));
    Ok([list_scalar(values)?, list_scalar(counts)?])
}

/// The (values, counts) of row `row` of a counting state, as keys and counts.
pub(crate) fn state_entries(
    keys: &ValueKeys,
    values: &ArrayRef,
    counts: &ArrayRef,
    row: usize,
) -> Result<Vec<(Box<[u8]>, u64)>> {
    let (Some(values), Some(counts)) = (values.as_list_opt::<i32>(), counts.as_list_opt::<i32>())
    else {
        return exec_err!("a counting aggregate got a malformed partial state");
    };
    if values.is_null(row) || counts.is_null(row) {
        return Ok(vec![]);
    }
    let (values, counts) = (values.value(row), counts.value(row));
    let Some(counts) = counts.as_primitive_opt::<UInt64Type>() else {
        return exec_err!("a counting aggregate got malformed counts");
    };
    if values.len() != counts.len() {
        return exec_err!("a counting aggregate got values and counts of different lengths");
    }
    let rows = keys.encode(&values)?;
    Ok(rows
        .iter()
        .zip(counts.iter())
        .map(|(k, c)| (Box::<[u8]>::from(k.as_ref()), c.unwrap_or(0)))
        .collect())
}

/// The text Doris shows for each value: numbers as written (`1`, `2.5`, not `1.0`), dates
/// and datetimes as `YYYY-MM-DD[ hh:mm:ss]`, strings as they are.
pub(crate) fn value_texts(values: &ArrayRef) -> Result<StringArray> {
    let float = |v: Option<f64>| v.map(|v| format!("{v}"));
    let texts: StringArray = match values.data_type() {
        DataType::Float64 => values
            .as_primitive::<Float64Type>()
            .iter()
            .map(float)
            .collect(),
        DataType::Float32 => values
            .as_primitive::<Float32Type>()
            .iter()
            .map(|v| v.map(|v| format!("{v}")))
            .collect(),
        DataType::Timestamp(_, _) => {
            let text = cast(values, &DataType::Utf8)?;
            text.as_string::<i32>()
                .iter()
                .map(|v| v.map(|s| s.replacen('T', " ", 1)))
                .collect()
        }
        DataType::Utf8 => values.as_string::<i32>().clone(),
        _ => {
            let text = cast(values, &DataType::Utf8)?;
            text.as_string::<i32>().clone()
        }
    };
    Ok(texts)
}

/// A JSON string literal for `s`.
pub(crate) fn json_string(s: &str) -> String {
    serde_json::Value::String(s.to_string()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::Int32Array;

    #[test]
    fn keys_order_as_values_and_decode() {
        let keys = ValueKeys::new(&DataType::Int32).unwrap();
        let values: ArrayRef = Arc::new(Int32Array::from(vec![20, -5, 100, 20]));
        let rows = keys.encode(&values).unwrap();
        let mut counts = Counts::default();
        for r in rows.iter() {
            counts.add(r.as_ref(), 1, 0);
        }
        let by_value: Vec<u64> = counts.by_value().iter().map(|e| e.1).collect();
        assert_eq!(by_value, [1, 2, 1]);
        let top = counts.most_frequent();
        let decoded = keys.decode(top.iter().map(|e| e.0)).unwrap();
        let decoded = decoded.as_primitive::<arrow::datatypes::Int32Type>();
        assert_eq!(decoded.values().to_vec(), [20, 100, -5]);
        assert_eq!(counts.prune(1), 1);
        assert_eq!(counts.len(), 1);
    }

    #[test]
    fn texts_as_doris_shows_them() {
        let values: ArrayRef = Arc::new(arrow::array::Float64Array::from(vec![1.0, 2.5]));
        let texts = value_texts(&values).unwrap();
        assert_eq!(texts.value(0), "1");
        assert_eq!(texts.value(1), "2.5");
        assert_eq!(json_string("a\"b"), "\"a\\\"b\"");
    }
}
