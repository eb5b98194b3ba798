//! Doris's array functions over an array of flags or keys: what a lambda call of theirs becomes
//! once the lambda is mapped (`array_count(x -> x > 1, a)` = `array_count(array_map(x -> x > 1, a))`).
//! A flag is true when non-zero / TRUE; NULL is neither. Every function is NULL for a NULL array.
//! array_filter(a, flags) (flags past a's end ignored; elements past the flags dropped);
//! array_sortby(a, keys) (ascending, NULL keys first, stable; a when keys is NULL; error on
//! different lengths); array_exists(flags) (each flag as BOOLEAN); array_count(flags);
//! array_first_index / array_last_index (1-based, 0 when none); array_match_any / _all
//! (three-valued; FALSE / TRUE for an empty array); array_split(a, flags) /
//! array_reverse_split(a, flags) (the subarrays cut before / after each element whose flag is
//! true, never an empty one; NULL for a NULL array or flags; error on different lengths).

use crate::util::{arguments, output};
use datafusion::arrow::array::{
    make_comparator, Array, ArrayRef, AsArray, BooleanArray, BooleanBuilder, Int64Array, ListArray,
    UInt32Array,
};
use datafusion::arrow::buffer::{NullBuffer, OffsetBuffer};
use datafusion::arrow::compute::{cast, filter, take, SortOptions};
use datafusion::arrow::datatypes::{DataType, Field};
use datafusion::common::{exec_err, plan_err, Result};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use std::sync::Arc;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    Filter,
    SortBy,
    Exists,
    Count,
    FirstIndex,
    LastIndex,
    MatchAny,
    MatchAll,
    Split,
    ReverseSplit,
}

const KINDS: [Kind; 10] = [
    Kind::Filter,
    Kind::SortBy,
    Kind::Exists,
    Kind::Count,
    Kind::FirstIndex,
    Kind::LastIndex,
    Kind::MatchAny,
    Kind::MatchAll,
    Kind::Split,
    Kind::ReverseSplit,
];

pub const NAMES: [&str; 10] = [
    "array_filter",
    "array_sortby",
    "array_exists",
    "array_count",
    "array_first_index",
    "array_last_index",
    "array_match_any",
    "array_match_all",
    "array_split",
    "array_reverse_split",
];

impl Kind {
    fn name(self) -> &'static str {
        NAMES[KINDS.iter().position(|k| *k == self).unwrap_or(0)]
    }
    fn arity(self) -> usize {
        if matches!(
            self,
            Kind::Filter | Kind::SortBy | Kind::Split | Kind::ReverseSplit
        ) {
            2
        } else {
            1
        }
    }
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct FlagArrayFunction {
    kind: Kind,
    signature: Signature,
}

pub fn functions() -> Vec<ScalarUDF> {
    KINDS
        .into_iter()
        .map(|kind| {
            ScalarUDF::new_from_impl(FlagArrayFunction {
                kind,
                signature: Signature::user_defined(Volatility::Immutable),
            })
        })
        .collect()
}

impl ScalarUDFImpl for FlagArrayFunction {
    fn name(&self) -> &str {
        self.kind.name()
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        let name = self.kind.name();
        if types.len() != self.kind.arity() {
            let takes = if self.kind.arity() == 2 {
                "two arrays (or a lambda and arrays)"
            } else {
                "an array (or a lambda and arrays)"
            };
            return plan_err!("{name} takes {takes}, got {} arguments", types.len());
        }
        types
            .iter()
            .enumerate()
            .map(|(i, t)| match t {
                DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) => {
                    Ok(DataType::new_list(f.data_type().clone(), true))
                }
                DataType::Null => Ok(DataType::new_list(DataType::Null, true)),
                other => plan_err!("{name}: argument {} must be an ARRAY, not {other}", i + 1),
            })
            .collect()
    }
    fn return_type(&self, types: &[DataType]) -> Result<DataType> {
        Ok(match self.kind {
            Kind::Filter | Kind::SortBy => types[0].clone(),
            Kind::Exists => DataType::new_list(DataType::Boolean, true),
            Kind::Count | Kind::FirstIndex | Kind::LastIndex => DataType::Int64,
            Kind::MatchAny | Kind::MatchAll => DataType::Boolean,
            Kind::Split | Kind::ReverseSplit => DataType::new_list(types[0].clone(), true),
        })
    }
    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let name = self.kind.name();
        let (arrays, scalar) = arguments(&args)?;
        let lists = arrays
            .iter()
            .map(|a| match a.as_list_opt::<i32>() {
                Some(l) => Ok(l),
                None => exec_err!("{name}: expected arrays, got {}", a.data_type()),
            })
            .collect::<Result<Vec<_>>>()?;
        let out: ArrayRef = match self.kind {
            Kind::Filter => Arc::new(filter_by_flags(lists[0], lists[1])?),
            Kind::SortBy => Arc::new(sort_by_keys(lists[0], lists[1])?),
            Kind::Split => Arc::new(split_by_flags(name, lists[0], lists[1], false)?),
            Kind::ReverseSplit => Arc::new(split_by_flags(name, lists[0], lists[1], true)?),
            Kind::Exists => Arc::new(exists(lists[0])?),
            Kind::Count => Arc::new(per_row(lists[0], |f| {
                f.iter().filter(|f| *f == Some(true)).count() as i64
            })?),
            Kind::FirstIndex => Arc::new(per_row(lists[0], |f| {
                f.iter()
                    .position(|f| f == Some(true))
                    .map_or(0, |i| i as i64 + 1)
            })?),
            Kind::LastIndex => Arc::new(per_row(lists[0], |f| {
                f.iter()
                    .enumerate()
                    .filter(|(_, f)| *f == Some(true))
                    .last()
                    .map_or(0, |(i, _)| i as i64 + 1)
            })?),
            Kind::MatchAny => Arc::new(matches(lists[0], true)?),
            Kind::MatchAll => Arc::new(matches(lists[0], false)?),
        };
        output(out, scalar)
    }
}

fn flags_of(values: &ArrayRef) -> Result<BooleanArray> {
    Ok(cast(values.as_ref(), &DataType::Boolean)?
        .as_boolean()
        .clone())
}

fn bounds(lists: &ListArray, row: usize) -> (usize, usize) {
    let range = crate::list_rows::row_range(lists, row);
    (range.start, range.end)
}

fn per_row(lists: &ListArray, f: impl Fn(&BooleanArray) -> i64) -> Result<Int64Array> {
    let flags = flags_of(lists.values())?;
    Ok((0..lists.len())
        .map(|row| {
            (!lists.is_null(row)).then(|| {
                let (s, e) = bounds(lists, row);
                f(&flags.slice(s, e - s))
            })
        })
        .collect())
}

fn matches(lists: &ListArray, any: bool) -> Result<BooleanArray> {
    let flags = flags_of(lists.values())?;
    let mut out = BooleanBuilder::with_capacity(lists.len());
    for row in 0..lists.len() {
        if lists.is_null(row) {
            out.append_null();
            continue;
        }
        let (s, e) = bounds(lists, row);
        let decided = (s..e).any(|i| flags.is_valid(i) && flags.value(i) == any);
        let unknown = (s..e).any(|i| flags.is_null(i));
        match (decided, unknown) {
            (true, _) => out.append_value(any),
            (false, true) => out.append_null(),
            (false, false) => out.append_value(!any),
        }
    }
    Ok(out.finish())
}

fn exists(lists: &ListArray) -> Result<ListArray> {
    Ok(ListArray::try_new(
        Arc::new(Field::new_list_field(DataType::Boolean, true)),
        lists.offsets().clone(),
        Arc::new(flags_of(lists.values())?),
        lists.nulls().cloned(),
    )?)
}

fn list_field(lists: &ListArray) -> Result<Arc<Field>> {
    crate::list_rows::element_field("array function", lists.data_type())
}

fn filter_by_flags(lists: &ListArray, flags: &ListArray) -> Result<ListArray> {
    let flag_values = flags_of(flags.values())?;
    let values = lists.values();
    let mut keep = vec![false; values.len()];
    let (mut lengths, mut valid) = (Vec::new(), Vec::new());
    for row in 0..lists.len() {
        if lists.is_null(row) || flags.is_null(row) {
            lengths.push(0);
            valid.push(false);
            continue;
        }
        let (s, e) = bounds(lists, row);
        let (fs, fe) = bounds(flags, row);
        let mut kept = 0;
        for (i, f) in (s..e).zip(fs..fe) {
            if flag_values.is_valid(f) && flag_values.value(f) {
                keep[i] = true;
                kept += 1;
            }
        }
        lengths.push(kept);
        valid.push(true);
    }
    let kept = filter(values.as_ref(), &BooleanArray::from(keep))?;
    Ok(ListArray::try_new(
        list_field(lists)?,
        OffsetBuffer::from_lengths(lengths),
        kept,
        Some(NullBuffer::from(valid)),
    )?)
}

fn sort_by_keys(lists: &ListArray, keys: &ListArray) -> Result<ListArray> {
    let kv = keys.values();
    let compare = make_comparator(
        kv.as_ref(),
        kv.as_ref(),
        SortOptions {
            descending: false,
            nulls_first: true,
        },
    )?;
    let mut order: Vec<u32> = Vec::with_capacity(lists.values().len());
    let mut lengths = Vec::with_capacity(lists.len());
    for row in 0..lists.len() {
        if lists.is_null(row) {
            lengths.push(0);
            continue;
        }
        let (s, e) = bounds(lists, row);
        lengths.push(e - s);
        let mut positions: Vec<usize> = (s..e).collect();
        if !keys.is_null(row) {
            let (ks, ke) = bounds(keys, row);
            if ke - ks != e - s {
                return exec_err!(
                    "array_sortby: the array and its keys must have one length, got {} and {}",
                    e - s,
                    ke - ks
                );
            }
            positions.sort_by(|a, b| compare(ks + a - s, ks + b - s));
        }
        for p in positions {
            match u32::try_from(p) {
                Ok(p) => order.push(p),
                Err(_) => return exec_err!("array_sortby: too many elements in one batch"),
            }
        }
    }
    let sorted = take(lists.values().as_ref(), &UInt32Array::from(order), None)?;
    Ok(ListArray::try_new(
        list_field(lists)?,
        OffsetBuffer::from_lengths(lengths),
        sorted,
        lists.nulls().cloned(),
    )?)
}

/// Each row's array cut into subarrays: before every element flagged true (`after`: after
/// it), never leaving an empty subarray.
fn split_by_flags(
    name: &str,
    lists: &ListArray,
    flags: &ListArray,
    after: bool,
) -> Result<ListArray> {
    let flag_values = flags_of(flags.values())?;
    let mut inner_lengths = Vec::new();
    let (mut outer_lengths, mut valid) = (Vec::new(), Vec::new());
    for row in 0..lists.len() {
        if lists.is_null(row) || flags.is_null(row) {
            outer_lengths.push(0);
            valid.push(false);
            continue;
        }
        let (s, e) = bounds(lists, row);
        let (fs, fe) = bounds(flags, row);
        if e - s != fe - fs {
            return exec_err!(
                "{name}: the array and its flags must have one length, got {} and {}",
                e - s,
                fe - fs
            );
        }
        let flagged = |i: usize| flag_values.is_valid(fs + i) && flag_values.value(fs + i);
        let (mut pieces, mut current) = (0, 0);
        for i in 0..e - s {
            let cut_before = !after && flagged(i) && current > 0;
            if cut_before {
                inner_lengths.push(current);
                pieces += 1;
                current = 0;
            }
            current += 1;
            if after && flagged(i) && i + 1 < e - s {
                inner_lengths.push(current);
                pieces += 1;
                current = 0;
            }
        }
        if current > 0 {
            inner_lengths.push(current);
            pieces += 1;
        }
        outer_lengths.push(pieces);
        valid.push(true);
    }
    // The elements keep their order: only rows dropped (NULL arrays) are left out.
    let mut keep = vec![false; lists.values().len()];
    for (row, _) in valid.iter().enumerate().filter(|(_, v)| **v) {
        {
            let (s, e) = bounds(lists, row);
            keep[s..e].iter_mut().for_each(|k| *k = true);
        }
    }
    let values = filter(lists.values().as_ref(), &BooleanArray::from(keep))?;
    let inner = ListArray::try_new(
        list_field(lists)?,
        OffsetBuffer::from_lengths(inner_lengths),
        values,
        None,
    )?;
    Ok(ListArray::try_new(
        Arc::new(Field::new_list_field(inner.data_type().clone(), true)),
        OffsetBuffer::from_lengths(outer_lengths),
        Arc::new(inner),
        Some(NullBuffer::from(valid)),
    )?)
}
