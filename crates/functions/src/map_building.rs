//! Doris's functions that build a MAP (a key given twice keeps its last value, at the place of
//! its last occurrence; a NULL key is an error, as a MAP here holds no NULL keys):
//! - `map(k1, v1, k2, v2, ..)` (planned as `doris_map`): the pairs, keys and values each at
//!   their common type; `map()` is `{}`;
//! - `map_from_arrays(keys, values)`: the pairs at the same positions; NULL when either array
//!   is NULL, an error when their lengths differ;
//! - `map_from_entries(array_of_structs)`: the (first field, second field) pair of every
//!   two-field STRUCT element; NULL for a NULL array, an error for a NULL element;
//! - `map_concat(m1, ..)`: the pairs of every map, left to right; NULL when any map is NULL;
//! - `str_to_map(s[, pair_delimiter[, key_value_delimiter]])`: MAP<STRING, STRING> of the
//!   pairs of `s` split at `pair_delimiter` (`,`), each split at its first
//!   `key_value_delimiter` (`:`; a pair without one has a NULL value); NULL when any argument
//!   is NULL.

use crate::list_rows::{array_function, lists, row_range};
use crate::util::expect_args;
use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, MapArray, StringArray, StringBuilder, StructArray, UInt64Array,
};
use datafusion::arrow::buffer::{NullBuffer, OffsetBuffer};
use datafusion::arrow::compute::{concat, take};
use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Fields};
use datafusion::arrow::row::{RowConverter, SortField};
use datafusion::common::{exec_err, plan_err, Result};
use datafusion::logical_expr::type_coercion::binary::comparison_coercion;
use datafusion::logical_expr::ScalarUDF;
use std::collections::HashSet;
use std::sync::Arc;

/// The name `map(k1, v1, ..)` is planned under (DataFusion's `map` takes two arrays).
pub const MAP: &str = "doris_map";

pub fn functions() -> Vec<ScalarUDF> {
    vec![
        array_function(MAP, coerce_pairs, pairs_type, pairs),
        array_function(
            "map_from_arrays",
            |t| {
                expect_args("map_from_arrays", t, 2, 2)?;
                Ok(vec![
                    crate::list_rows::list_type("map_from_arrays", &t[0])?,
                    crate::list_rows::list_type("map_from_arrays", &t[1])?,
                ])
            },
            |t| {
                let key = crate::list_rows::element_field("map_from_arrays", &t[0])?;
                let value = crate::list_rows::element_field("map_from_arrays", &t[1])?;
                Ok(map_type(key.data_type().clone(), value.data_type().clone()))
            },
            from_arrays,
        ),
        array_function(
            "map_from_entries",
            |t| {
                expect_args("map_from_entries", t, 1, 1)?;
                if t[0].is_null() {
                    let entry = Fields::from(vec![
                        Field::new("k", DataType::Int64, true),
                        Field::new("v", DataType::Int64, true),
                    ]);
                    return Ok(vec![DataType::List(crate::list_rows::item_field(
                        DataType::Struct(entry),
                    ))]);
                }
                entry_parts(&t[0])?;
                Ok(vec![crate::list_rows::list_type(
                    "map_from_entries",
                    &t[0],
                )?])
            },
            |t| {
                let (key, value) = entry_parts(&t[0])?;
                Ok(map_type(key, value))
            },
            from_entries,
        ),
        array_function("map_concat", coerce_maps, maps_type, concat_maps),
        array_function(
            "str_to_map",
            |t| {
                expect_args("str_to_map", t, 1, 3)?;
                t.iter()
                    .map(|t| match t {
                        t if t.is_null()
                            || matches!(
                                t,
                                DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
                            ) =>
                        {
                            Ok(DataType::Utf8)
                        }
                        other => plan_err!("str_to_map takes strings, not {other}"),
                    })
                    .collect()
            },
            |_| Ok(map_type(DataType::Utf8, DataType::Utf8)),
            str_to_map,
        ),
    ]
}

/// MAP<key, value> as Basalt's MAP columns are typed.
pub(crate) fn map_type(key: DataType, value: DataType) -> DataType {
    DataType::Map(entries_field(key, value), false)
}

fn entries_field(key: DataType, value: DataType) -> FieldRef {
    Arc::new(Field::new(
        "entries",
        DataType::Struct(Fields::from(vec![
            Field::new("key", key, false),
            Field::new("value", value, true),
        ])),
        false,
    ))
}

/// The common type of `types` (NULLs take the others' type; all NULL is `otherwise`).
fn common(func: &str, types: &[DataType], otherwise: DataType) -> Result<DataType> {
    let mut out: Option<DataType> = None;
    for t in types.iter().filter(|t| !t.is_null()) {
        out = Some(match out {
            None => t.clone(),
            Some(o) => match comparison_coercion(&o, t) {
                Some(c) => c,
                None => return plan_err!("{func}: no common type for {o} and {t}"),
            },
        });
    }
    Ok(out.unwrap_or(otherwise))
}

fn coerce_pairs(t: &[DataType]) -> Result<Vec<DataType>> {
    if !t.len().is_multiple_of(2) {
        return plan_err!(
            "map takes pairs of keys and values, not {} arguments",
            t.len()
        );
    }
    let keys: Vec<DataType> = t.iter().step_by(2).cloned().collect();
    let values: Vec<DataType> = t.iter().skip(1).step_by(2).cloned().collect();
    let key = common("map", &keys, DataType::Utf8)?;
    let value = common("map", &values, DataType::Utf8)?;
    Ok((0..t.len())
        .map(|i| {
            if i % 2 == 0 {
                key.clone()
            } else {
                value.clone()
            }
        })
        .collect())
}

fn pairs_type(t: &[DataType]) -> Result<DataType> {
    let coerced = coerce_pairs(t)?;
    Ok(map_type(
        coerced.first().cloned().unwrap_or(DataType::Utf8),
        coerced.get(1).cloned().unwrap_or(DataType::Utf8),
    ))
}

/// Entries of every row (None: a NULL map) as positions into `keys` / `values`, built into a
/// MAP with repeated keys removed (the last one kept, where it is).
fn build_map(
    func: &str,
    keys: &ArrayRef,
    values: &ArrayRef,
    rows: Vec<Option<Vec<usize>>>,
) -> Result<ArrayRef> {
    let converter = RowConverter::new(vec![SortField::new(keys.data_type().clone())])?;
    let key_rows = converter.convert_columns(&[Arc::clone(keys)])?;
    let mut picks: Vec<u64> = Vec::new();
    let mut lengths = Vec::with_capacity(rows.len());
    let mut valid = Vec::with_capacity(rows.len());
    for row in rows {
        let Some(positions) = row else {
            lengths.push(0);
            valid.push(false);
            continue;
        };
        let mut seen = HashSet::new();
        let mut kept = Vec::new();
        for &p in positions.iter().rev() {
            if keys.is_null(p) {
                return exec_err!("{func}: a MAP key cannot be NULL");
            }
            if seen.insert(key_rows.row(p)) {
                kept.push(p as u64);
            }
        }
        lengths.push(kept.len());
        picks.extend(kept.into_iter().rev());
        valid.push(true);
    }
    let indices = UInt64Array::from(picks);
    let key_column = take(keys.as_ref(), &indices, None)?;
    let value_column = take(values.as_ref(), &indices, None)?;
    let field = entries_field(
        key_column.data_type().clone(),
        value_column.data_type().clone(),
    );
    let DataType::Struct(fields) = field.data_type() else {
        return exec_err!("{func}: unexpected entries type");
    };
    let entries = StructArray::try_new(fields.clone(), vec![key_column, value_column], None)?;
    let nulls = NullBuffer::from(valid);
    let nulls = (nulls.null_count() > 0).then_some(nulls);
    Ok(Arc::new(MapArray::try_new(
        field,
        OffsetBuffer::from_lengths(lengths),
        entries,
        nulls,
        false,
    )?))
}

fn pairs(args: &[ArrayRef], rows: usize) -> Result<ArrayRef> {
    if args.is_empty() {
        let empty: ArrayRef = Arc::new(StringArray::from(Vec::<Option<&str>>::new()));
        return build_map("map", &empty, &empty, vec![Some(Vec::new()); rows]);
    }
    // All keys, then all values, row by row: row i's pair j is at i * pairs + j.
    let n = args.len() / 2;
    let interleave = |offset: usize| -> Result<ArrayRef> {
        let parts: Vec<ArrayRef> = (0..n).map(|j| Arc::clone(&args[2 * j + offset])).collect();
        let joined = concat(&parts.iter().map(|a| a.as_ref()).collect::<Vec<_>>())?;
        // joined holds pair j of row i at j * rows + i; reorder to i * n + j.
        let order: Vec<u64> = (0..rows)
            .flat_map(|i| (0..n).map(move |j| (j * rows + i) as u64))
            .collect();
        Ok(take(joined.as_ref(), &UInt64Array::from(order), None)?)
    };
    let keys = interleave(0)?;
    let values = interleave(1)?;
    let entries = (0..rows)
        .map(|i| Some((i * n..(i + 1) * n).collect()))
        .collect();
    build_map("map", &keys, &values, entries)
}

fn from_arrays(args: &[ArrayRef], rows: usize) -> Result<ArrayRef> {
    let (k, v) = (
        lists("map_from_arrays", &args[0])?,
        lists("map_from_arrays", &args[1])?,
    );
    // Positions into k's elements; v's elements are gathered to the same positions.
    let mut value_picks: Vec<Option<u64>> = vec![None; k.values().len()];
    let mut entries = Vec::with_capacity(rows);
    for i in 0..rows {
        if k.is_null(i) || v.is_null(i) {
            entries.push(None);
            continue;
        }
        let (rk, rv) = (row_range(k, i), row_range(v, i));
        if rk.len() != rv.len() {
            return exec_err!(
                "map_from_arrays: the key and value arrays have different lengths ({} and {})",
                rk.len(),
                rv.len()
            );
        }
        for (a, b) in rk.clone().zip(rv) {
            value_picks[a] = Some(b as u64);
        }
        entries.push(Some(rk.collect()));
    }
    let values = take(v.values().as_ref(), &UInt64Array::from(value_picks), None)?;
    build_map("map_from_arrays", k.values(), &values, entries)
}

/// The key and value types of `map_from_entries`'s ARRAY<STRUCT<K, V>> (a NULL literal is
/// read as ARRAY<STRUCT<BIGINT, BIGINT>>).
fn entry_parts(dt: &DataType) -> Result<(DataType, DataType)> {
    let element = crate::list_rows::element_field("map_from_entries", dt)?;
    match element.data_type() {
        DataType::Struct(fields) if fields.len() == 2 => {
            Ok((fields[0].data_type().clone(), fields[1].data_type().clone()))
        }
        _ => plan_err!(
            "map_from_entries requires an array of structs with exactly two fields, not {dt}"
        ),
    }
}

fn from_entries(args: &[ArrayRef], rows: usize) -> Result<ArrayRef> {
    let arrays = lists("map_from_entries", &args[0])?;
    let Some(entries) = arrays.values().as_struct_opt() else {
        return exec_err!("map_from_entries: expected an ARRAY of STRUCTs");
    };
    let mut rows_entries = Vec::with_capacity(rows);
    for i in 0..rows {
        if arrays.is_null(i) {
            rows_entries.push(None);
            continue;
        }
        let range = row_range(arrays, i);
        if range.clone().any(|p| entries.is_null(p)) {
            return exec_err!("Map entry of function map_from_entries cannot be null");
        }
        rows_entries.push(Some(range.collect()));
    }
    build_map(
        "map_from_entries",
        entries.column(0),
        entries.column(1),
        rows_entries,
    )
}

/// The key and value types of a MAP argument of `function` (None for a NULL literal).
pub(crate) fn map_parts(function: &str, dt: &DataType) -> Result<Option<(DataType, DataType)>> {
    match dt {
        DataType::Null => Ok(None),
        DataType::Map(f, _) => match f.data_type() {
            DataType::Struct(fields) if fields.len() == 2 => Ok(Some((
                fields[0].data_type().clone(),
                fields[1].data_type().clone(),
            ))),
            other => plan_err!("{function}: unexpected MAP entries {other}"),
        },
        other => plan_err!("{function} takes MAPs, not {other}"),
    }
}

fn coerce_maps(t: &[DataType]) -> Result<Vec<DataType>> {
    let mut keys = Vec::new();
    let mut values = Vec::new();
    for (k, v) in t
        .iter()
        .map(|t| map_parts("map_concat", t))
        .collect::<Result<Vec<_>>>()?
        .into_iter()
        .flatten()
    {
        keys.push(k);
        values.push(v);
    }
    let one = map_type(
        common("map_concat", &keys, DataType::Utf8)?,
        common("map_concat", &values, DataType::Utf8)?,
    );
    Ok(vec![one; t.len()])
}

fn maps_type(t: &[DataType]) -> Result<DataType> {
    Ok(coerce_maps(t)?
        .into_iter()
        .next()
        .unwrap_or_else(|| map_type(DataType::Utf8, DataType::Utf8)))
}

fn concat_maps(args: &[ArrayRef], rows: usize) -> Result<ArrayRef> {
    if args.is_empty() {
        return pairs(&[], rows);
    }
    let maps = args
        .iter()
        .map(|a| match a.as_map_opt() {
            Some(m) => Ok(m),
            None => exec_err!("map_concat: expected a MAP, got {}", a.data_type()),
        })
        .collect::<Result<Vec<_>>>()?;
    // The entries of all maps one after another; map m's entries start at starts[m].
    let keys = concat(&maps.iter().map(|m| m.keys().as_ref()).collect::<Vec<_>>())?;
    let values = concat(&maps.iter().map(|m| m.values().as_ref()).collect::<Vec<_>>())?;
    let mut starts = Vec::with_capacity(maps.len());
    let mut total = 0;
    for m in &maps {
        starts.push(total);
        total += m.keys().len();
    }
    let entries = (0..rows)
        .map(|i| {
            if maps.iter().any(|m| m.is_null(i)) {
                return None;
            }
            Some(
                maps.iter()
                    .zip(&starts)
                    .flat_map(|(m, s)| {
                        let o = m.value_offsets();
                        (o[i] as usize + s)..(o[i + 1] as usize + s)
                    })
                    .collect(),
            )
        })
        .collect();
    build_map("map_concat", &keys, &values, entries)
}

fn str_to_map(args: &[ArrayRef], rows: usize) -> Result<ArrayRef> {
    let text = args[0].as_string::<i32>();
    let pair_delimiters = args.get(1).map(|a| a.as_string::<i32>());
    let kv_delimiters = args.get(2).map(|a| a.as_string::<i32>());
    let mut keys = StringBuilder::new();
    let mut values = StringBuilder::new();
    let mut entries = Vec::with_capacity(rows);
    let mut next = 0usize;
    for i in 0..rows {
        let pd = pair_delimiters.map_or(Some(","), |d| d.is_valid(i).then(|| d.value(i)));
        let kvd = kv_delimiters.map_or(Some(":"), |d| d.is_valid(i).then(|| d.value(i)));
        let (Some(pd), Some(kvd)) = (pd, kvd) else {
            entries.push(None);
            continue;
        };
        if text.is_null(i) {
            entries.push(None);
            continue;
        }
        if pd.is_empty() || kvd.is_empty() {
            return exec_err!("str_to_map: a delimiter cannot be empty");
        }
        let start = next;
        for pair in text.value(i).split(pd) {
            match pair.split_once(kvd) {
                Some((k, v)) => {
                    keys.append_value(k);
                    values.append_value(v);
                }
                None => {
                    keys.append_value(pair);
                    values.append_null();
                }
            }
            next += 1;
        }
        entries.push(Some((start..next).collect()));
    }
    let keys: ArrayRef = Arc::new(keys.finish());
    let values: ArrayRef = Arc::new(values.finish());
    build_map("str_to_map", &keys, &values, entries)
}
