//! Doris's `LINEAR_HISTOGRAM(x, interval[, offset])`: the values counted in buckets of equal
//! width `interval` whose bounds fall on `offset + k * interval` (`offset` in `[0, interval)`,
//! both constants), as Doris's JSON text: `{"num_buckets":n,"buckets":[{"lower":0.0,
//! "upper":2.0,"count":2,"acc_count":2},..]}` with the buckets that hold values in ascending
//! order, each with its count and the count of it and all below (`acc_count`). NULLs are
//! skipped; no values give `{"num_buckets":0,"buckets":[]}`. A bucket's lower bound is in it,
//! its upper one is not.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow::array::{ArrayRef, AsArray, BinaryArray};
use arrow::datatypes::{DataType, Field, FieldRef, Float64Type};
use datafusion::common::{exec_err, not_impl_err, plan_err, Result, ScalarValue};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::utils::format_state_name;
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, ColumnarValue, Signature, Volatility,
};

const NAME: &str = "linear_histogram";

#[derive(Debug, PartialEq, Eq, Hash)]
struct LinearHistogram {
    signature: Signature,
}

pub fn aggregate_functions() -> Vec<AggregateUDF> {
    vec![AggregateUDF::new_from_impl(LinearHistogram {
        signature: Signature::user_defined(Volatility::Immutable),
    })]
}

impl AggregateUDFImpl for LinearHistogram {
    fn name(&self) -> &str {
        NAME
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        if !(2..=3).contains(&types.len()) {
            return plan_err!("{NAME} takes 2 or 3 arguments, got {}", types.len());
        }
        if !types.iter().all(|t| t.is_numeric() || *t == DataType::Null) {
            return plan_err!("{NAME}: the value, interval and offset must be numbers");
        }
        Ok(vec![DataType::Float64; types.len()])
    }

    fn return_type(&self, _types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Utf8)
    }

    fn is_nullable(&self) -> bool {
        false
    }

    fn default_value(&self, _data_type: &DataType) -> Result<ScalarValue> {
        Ok(ScalarValue::Utf8(Some(to_json(&BTreeMap::new(), 1.0, 0.0))))
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        Ok(vec![Arc::new(Field::new(
            format_state_name(args.name, "buckets"),
            DataType::Binary,
            true,
        ))])
    }

    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        if args.is_distinct {
            return not_impl_err!("{NAME}(DISTINCT ...) is not supported");
        }
        let interval = constant(&args, 1, "interval")?.unwrap_or(f64::NAN);
        let offset = constant(&args, 2, "offset")?.unwrap_or(0.0);
        if !(interval > 0.0 && interval.is_finite()) {
            return plan_err!("{NAME}: the interval must be a number greater than 0");
        }
        if !(0.0..interval).contains(&offset) {
            return plan_err!("{NAME}: the offset must be in [0, interval), got {offset}");
        }
        Ok(Box::new(Buckets {
            interval,
            offset,
            counts: BTreeMap::new(),
        }))
    }
}

/// The constant argument at `at` (`None` when not given).
fn constant(args: &AccumulatorArgs, at: usize, what: &str) -> Result<Option<f64>> {
    let Some(expr) = args.exprs.get(at) else {
        return Ok(None);
    };
    let empty = arrow::array::RecordBatch::new_empty(Arc::new(args.schema.clone()));
    match expr.evaluate(&empty)? {
        ColumnarValue::Scalar(ScalarValue::Float64(v)) => Ok(v),
        _ => plan_err!("{NAME}: the {what} must be a constant number"),
    }
}

#[derive(Debug)]
struct Buckets {
    interval: f64,
    offset: f64,
    /// Bucket number (lower bound = offset + number * interval) -> count.
    counts: BTreeMap<i64, u64>,
}

impl Accumulator for Buckets {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let values = values[0].as_primitive::<Float64Type>();
        for v in values.iter().flatten() {
            let bucket = ((v - self.offset) / self.interval).floor();
            if !bucket.is_finite() || bucket.abs() >= i64::MAX as f64 {
                return exec_err!("{NAME}: the value {v} is out of range for its buckets");
            }
            *self.counts.entry(bucket as i64).or_default() += 1;
        }
        Ok(())
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let states: &BinaryArray = states[0].as_binary();
        for state in states.iter().flatten() {
            if !state.len().is_multiple_of(16) {
                return exec_err!("{NAME}: a malformed intermediate state");
            }
            for pair in state.chunks_exact(16) {
                let (bucket, count) = pair.split_at(8);
                let bucket = i64::from_le_bytes(bucket.try_into().unwrap_or_default());
                let count = u64::from_le_bytes(count.try_into().unwrap_or_default());
                *self.counts.entry(bucket).or_default() += count;
            }
        }
        Ok(())
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        let mut bytes = Vec::with_capacity(self.counts.len() * 16);
        for (bucket, count) in &self.counts {
            bytes.extend_from_slice(&bucket.to_le_bytes());
            bytes.extend_from_slice(&count.to_le_bytes());
        }
        Ok(vec![ScalarValue::Binary(Some(bytes))])
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        Ok(ScalarValue::Utf8(Some(to_json(
            &self.counts,
            self.interval,
            self.offset,
        ))))
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self) + self.counts.len() * 32
    }
}

/// Doris's JSON text of the buckets.
fn to_json(counts: &BTreeMap<i64, u64>, interval: f64, offset: f64) -> String {
    let mut out = format!("{{\"num_buckets\":{},\"buckets\":[", counts.len());
    let mut total = 0;
    for (i, (bucket, count)) in counts.iter().enumerate() {
        total += count;
        let lower = offset + *bucket as f64 * interval;
        if i > 0 {
            out.push(',');
        }
        out.push_str(&format!(
            "{{\"lower\":{},\"upper\":{},\"count\":{count},\"acc_count\":{total}}}",
            number(lower),
            number(lower + interval)
        ));
    }
    out.push_str("]}");
    out
}

/// A double as Doris's JSON writes it: whole numbers with `.0`.
fn number(v: f64) -> String {
    let text = v.to_string();
    match text.contains(['.', 'e', 'E']) || !v.is_finite() {
        true => text,
        false => format!("{text}.0"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_count_and_accumulate() {
        let mut counts = BTreeMap::new();
        counts.insert(0, 2);
        counts.insert(3, 1);
        assert_eq!(
            to_json(&counts, 2.0, 1.0),
            "{\"num_buckets\":2,\"buckets\":[{\"lower\":1.0,\"upper\":3.0,\"count\":2,\"acc_count\":2},\
             {\"lower\":7.0,\"upper\":9.0,\"count\":1,\"acc_count\":3}]}"
        );
        assert_eq!(number(-0.5), "-0.5");
    }
}
