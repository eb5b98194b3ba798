//! Doris's `histogram(expr [, max_num_buckets])` (alias `hist`): an equi-height histogram of
//! a group's values as JSON text,
//! `{"num_buckets":2,"buckets":[{"lower":"1","upper":"3","ndv":2,"count":5,"pre_sum":0},..]}`.
//!
//! At most `max_num_buckets` buckets (128 unless given; it must be positive, the largest given
//! wins when rows disagree); bounds are the values' text. NULLs are skipped; a group without
//! values gives `{"num_buckets":0,"buckets":[]}` (never NULL). The state keeps each distinct
//! value with its count, so the histogram is exact.
//!
//! The buckets are built as Doris builds them (BE `histogram_helpers.hpp`, after MySQL's
//! equi-height histograms): the largest bucket size that lets the values fit in the buckets
//! is found by a binary search of at most 10 steps, then values are taken in order, a
//! bucket closing when the next value would make it larger than that, or when the values
//! left are no more than the buckets left.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, Int64Array};
use arrow::datatypes::{DataType, Field, FieldRef, Int64Type};
use datafusion::common::{exec_err, plan_err, Result, ScalarValue};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::utils::format_state_name;
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, Signature, Volatility,
};

use crate::util::expect_args;
use crate::value_counts::{
    counts_state, json_string, state_entries, value_texts, Counts, ValueKeys,
};

const NAME: &str = "histogram";
/// Doris's default bucket count.
const DEFAULT_BUCKETS: i64 = 128;

#[derive(Debug, PartialEq, Eq, Hash)]
struct Histogram {
    signature: Signature,
    aliases: Vec<String>,
}

/// The `histogram` aggregate (also `hist`).
pub fn function() -> AggregateUDF {
    AggregateUDF::new_from_impl(Histogram {
        signature: Signature::user_defined(Volatility::Immutable),
        aliases: vec!["hist".to_string()],
    })
}

fn value_type(t: &DataType) -> DataType {
    match t {
        DataType::Null => DataType::Utf8,
        t => t.clone(),
    }
}

impl AggregateUDFImpl for Histogram {
    fn name(&self) -> &str {
        NAME
    }

    fn aliases(&self) -> &[String] {
        &self.aliases
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        expect_args(NAME, types, 1, 2)?;
        if types[0].is_nested() {
            return plan_err!("{NAME}: cannot bucket values of type {}", types[0]);
        }
        let mut out = vec![value_type(&types[0])];
        if let Some(t) = types.get(1) {
            if !(t.is_integer() || t.is_null()) {
                return plan_err!("{NAME}: the number of buckets must be an integer, got {t}");
            }
            out.push(DataType::Int64);
        }
        Ok(out)
    }

    fn return_type(&self, _types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Utf8)
    }

    fn is_nullable(&self) -> bool {
        false
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        let Some(value) = args.input_fields.first() else {
            return plan_err!("{NAME}: takes arguments");
        };
        let list = |t: DataType| DataType::List(Arc::new(Field::new_list_field(t, true)));
        let field = |part: &str, t: DataType| {
            Arc::new(Field::new(format_state_name(args.name, part), t, true))
        };
        Ok(vec![
            field("values", list(value_type(value.data_type()))),
            field("counts", list(DataType::UInt64)),
            field("buckets", DataType::Int64),
        ])
    }

    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        if args.is_distinct {
            return plan_err!("{NAME}(DISTINCT ...) is not supported");
        }
        let Some(value) = args.expr_fields.first() else {
            return plan_err!("{NAME}: takes arguments");
        };
        Ok(Box::new(HistogramAccumulator {
            keys: ValueKeys::new(&value_type(value.data_type()))?,
            counts: Counts::default(),
            buckets: 0,
        }))
    }

    fn default_value(&self, _data_type: &DataType) -> Result<ScalarValue> {
        Ok(ScalarValue::Utf8(Some(to_json(&[], &[]))))
    }
}

#[derive(Debug)]
struct HistogramAccumulator {
    keys: ValueKeys,
    counts: Counts,
    /// The bucket limit; 0 while none was given.
    buckets: i64,
}

impl Accumulator for HistogramAccumulator {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let Some(value) = values.first() else {
            return exec_err!("{NAME}: takes arguments");
        };
        let limits: Option<&Int64Array> = match values.get(1) {
            Some(a) => match a.as_primitive_opt::<Int64Type>() {
                Some(a) => Some(a),
                None => return exec_err!("{NAME}: the number of buckets must be a BIGINT"),
            },
            None => None,
        };
        let keys = self.keys.encode(value)?;
        for row in 0..value.len() {
            let limit = match limits {
                Some(l) if l.is_null(row) => continue,
                Some(l) => l.value(row),
                None => DEFAULT_BUCKETS,
            };
            if value.is_null(row) {
                continue;
            }
            if limit <= 0 {
                return exec_err!("{NAME}: the number of buckets must be positive, got {limit}");
            }
            self.buckets = self.buckets.max(limit);
            self.counts.add(keys.row(row).as_ref(), 1, 0);
        }
        Ok(())
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let [values, counts, buckets] = states else {
            return exec_err!("{NAME}: expected 3 state columns, got {}", states.len());
        };
        let Some(buckets) = buckets.as_primitive_opt::<Int64Type>() else {
            return exec_err!("{NAME}: malformed partial state");
        };
        for row in 0..values.len() {
            if buckets.is_null(row) || buckets.value(row) <= 0 {
                continue;
            }
            self.buckets = self.buckets.max(buckets.value(row));
            for (key, count) in state_entries(&self.keys, values, counts, row)? {
                self.counts.add(&key, count, 0);
            }
        }
        Ok(())
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        let [values, counts] = counts_state(&self.keys, &self.counts.by_value())?;
        Ok(vec![values, counts, ScalarValue::Int64(Some(self.buckets))])
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        let entries = self.counts.by_value();
        let values = self.keys.decode(entries.iter().map(|e| e.0))?;
        let texts = value_texts(&values)?;
        let texts: Vec<&str> = texts.iter().map(|t| t.unwrap_or("")).collect();
        let counts: Vec<u64> = entries.iter().map(|e| e.1).collect();
        let limit = usize::try_from(self.buckets.max(1)).unwrap_or(usize::MAX);
        let buckets = build(&counts, limit);
        Ok(ScalarValue::Utf8(Some(to_json(&buckets, &texts))))
    }

    fn size(&self) -> usize {
        size_of_val(self) + self.counts.size() + self.keys.size()
    }
}

/// One bucket: the indexes of its lowest and highest value, its distinct values, values, and
/// the values before it.
#[derive(Debug, PartialEq)]
struct Bucket {
    lower: usize,
    upper: usize,
    ndv: u64,
    count: u64,
    pre_sum: u64,
}

/// Whether values with `counts` (in value order) fit in `buckets` buckets of at most
/// `size` values each (a value larger than `size` takes a bucket alone).
fn fits(counts: &[u64], size: u64, buckets: usize) -> bool {
    let mut used = 1;
    let mut current = 0u64;
    for &c in counts {
        current += c;
        if current > size {
            used += 1;
            current = c;
        }
        if used > buckets {
            return false;
        }
    }
    true
}

/// The bucket size to aim for: a binary search of at most 10 steps down from an upper bound.
fn bucket_size(counts: &[u64], buckets: usize) -> u64 {
    let total: u64 = counts.iter().sum();
    if buckets == 1 {
        return total;
    }
    let mut upper = 2 * total / (buckets as u64 - 1) + 1;
    let mut lower = 0u64;
    for _ in 0..10 {
        if upper <= lower + 1 {
            break;
        }
        let middle = (upper + lower) / 2;
        if fits(counts, middle, buckets) {
            upper = middle;
        } else {
            lower = middle;
        }
    }
    upper
}

/// The buckets of values with `counts` (in value order), at most `limit` of them.
fn build(counts: &[u64], limit: usize) -> Vec<Bucket> {
    if counts.is_empty() {
        return vec![];
    }
    let size = bucket_size(counts, limit);
    let mut buckets: Vec<Bucket> = Vec::new();
    let (mut ndv, mut count, mut cumulative, mut lower) = (0u64, 0u64, 0u64, 0usize);
    for (i, &c) in counts.iter().enumerate() {
        ndv += 1;
        count += c;
        cumulative += c;
        let remaining_values = counts.len() - i - 1;
        let remaining_buckets = limit.saturating_sub(buckets.len() + 1);
        if let Some(&next) = counts.get(i + 1) {
            if remaining_values > remaining_buckets && count + next <= size {
                continue;
            }
        }
        buckets.push(Bucket {
            lower,
            upper: i,
            ndv,
            count,
            pre_sum: cumulative - count,
        });
        lower = i + 1;
        ndv = 0;
        count = 0;
    }
    buckets
}

/// Doris's JSON text of `buckets` whose bounds index `texts`.
fn to_json(buckets: &[Bucket], texts: &[&str]) -> String {
    let text = |i: usize| json_string(texts.get(i).copied().unwrap_or(""));
    let items: Vec<String> = buckets
        .iter()
        .map(|b| {
            format!(
                r#"{{"lower":{},"upper":{},"ndv":{},"count":{},"pre_sum":{}}}"#,
                text(b.lower),
                text(b.upper),
                b.ndv,
                b.count,
                b.pre_sum
            )
        })
        .collect();
    format!(
        r#"{{"num_buckets":{},"buckets":[{}]}}"#,
        buckets.len(),
        items.join(",")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_bucket_per_value_when_they_fit() {
        let b = build(&[1, 1, 1], 128);
        assert_eq!(b.len(), 3);
        assert_eq!(
            to_json(&b, &["1", "20", "100"]),
            r#"{"num_buckets":3,"buckets":[{"lower":"1","upper":"1","ndv":1,"count":1,"pre_sum":0},{"lower":"20","upper":"20","ndv":1,"count":1,"pre_sum":1},{"lower":"100","upper":"100","ndv":1,"count":1,"pre_sum":2}]}"#
        );
    }

    #[test]
    fn values_share_buckets_when_few() {
        // Ten values, one each, in 3 buckets: sizes stay balanced.
        let b = build(&[1; 10], 3);
        let sizes: Vec<u64> = b.iter().map(|b| b.count).collect();
        assert_eq!(sizes.iter().sum::<u64>(), 10);
        assert!(b.len() <= 3, "{b:?}");
        assert_eq!(b[1].pre_sum, b[0].count);
        // A heavy value takes its own bucket.
        let b = build(&[1, 10, 1, 1], 3);
        assert!(b.iter().any(|b| b.count == 10 && b.ndv == 1), "{b:?}");
        assert_eq!(to_json(&[], &[]), r#"{"num_buckets":0,"buckets":[]}"#);
    }
}
