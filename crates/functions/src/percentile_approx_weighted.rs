//! Doris's `percentile_approx_weighted(expr, weight, p [, compression])`: the approximate
//! percentile `p` of `expr`, each row counting `weight` times, from Doris's t-digest
//! ([`crate::tdigest`]) so results match Doris's digits. `p` must be a constant in [0, 1];
//! `compression` a constant, 10000 unless given (Doris also takes 10000 for one outside
//! [2048, 10000]). Rows where a value or weight is NULL, or the weight is not positive, are
//! skipped; no such row gives NULL.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, Float32Array, RecordBatch};
use arrow::datatypes::{DataType, Field, FieldRef, Float32Type, Float64Type};
use datafusion::common::{exec_err, plan_err, Result, ScalarValue};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::utils::format_state_name;
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, ColumnarValue, Signature, Volatility,
};

use crate::tdigest::{Centroid, TDigest};
use crate::util::expect_args;
use crate::value_counts::list_scalar;

const NAME: &str = "percentile_approx_weighted";
const DEFAULT_COMPRESSION: f64 = 10000.0;

#[derive(Debug, PartialEq, Eq, Hash)]
struct PercentileApproxWeighted {
    signature: Signature,
}

/// The `percentile_approx_weighted` aggregate.
pub fn function() -> AggregateUDF {
    AggregateUDF::new_from_impl(PercentileApproxWeighted {
        signature: Signature::user_defined(Volatility::Immutable),
    })
}

impl AggregateUDFImpl for PercentileApproxWeighted {
    fn name(&self) -> &str {
        NAME
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        expect_args(NAME, types, 3, 4)?;
        for t in types {
            if !(t.is_numeric() || t.is_null()) {
                return plan_err!("{NAME}: expected numeric arguments, got {t}");
            }
        }
        Ok(vec![DataType::Float64; types.len()])
    }

    fn return_type(&self, _types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Float64)
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        let list = DataType::List(Arc::new(Field::new_list_field(DataType::Float32, true)));
        let field = |part: &str, t: DataType| {
            Arc::new(Field::new(format_state_name(args.name, part), t, true))
        };
        Ok(vec![
            field("means", list.clone()),
            field("weights", list),
            field("min", DataType::Float32),
            field("max", DataType::Float32),
        ])
    }

    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        if args.is_distinct {
            return plan_err!("{NAME}(DISTINCT ...) is not supported");
        }
        let p = constant(&args, 2, "the percentile")?;
        let Some(p) = p else {
            return plan_err!("{NAME}: the percentile must not be NULL");
        };
        if !(0.0..=1.0).contains(&p) {
            return plan_err!("{NAME}: the percentile must be between 0 and 1, got {p}");
        }
        let compression = match constant(&args, 3, "the compression")? {
            Some(c) if (2048.0..=10000.0).contains(&c) => c,
            _ => DEFAULT_COMPRESSION,
        };
        Ok(Box::new(WeightedAccumulator {
            p: p as f32,
            digest: TDigest::new(compression as f32),
        }))
    }
}

/// The constant argument `at` (None when absent or NULL).
fn constant(args: &AccumulatorArgs, at: usize, what: &str) -> Result<Option<f64>> {
    let Some(expr) = args.exprs.get(at) else {
        return Ok(None);
    };
    let empty = RecordBatch::new_empty(Arc::new(args.schema.clone()));
    match expr.evaluate(&empty) {
        Ok(ColumnarValue::Scalar(ScalarValue::Float64(v))) => Ok(v),
        Ok(ColumnarValue::Scalar(ScalarValue::Null)) => Ok(None),
        _ => plan_err!("{NAME}: {what} must be a constant number"),
    }
}

#[derive(Debug)]
struct WeightedAccumulator {
    p: f32,
    digest: TDigest,
}

impl Accumulator for WeightedAccumulator {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let (Some(xs), Some(ws)) = (
            values
                .first()
                .and_then(|v| v.as_primitive_opt::<Float64Type>()),
            values
                .get(1)
                .and_then(|v| v.as_primitive_opt::<Float64Type>()),
        ) else {
            return exec_err!("{NAME}: expected DOUBLE values and weights");
        };
        for (x, w) in xs.iter().zip(ws.iter()) {
            if let (Some(x), Some(w)) = (x, w) {
                self.digest.add(x as f32, w as f32);
            }
        }
        Ok(())
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let [means, weights, mins, maxes] = states else {
            return exec_err!("{NAME}: malformed partial state");
        };
        let (Some(means), Some(weights), Some(mins), Some(maxes)) = (
            means.as_list_opt::<i32>(),
            weights.as_list_opt::<i32>(),
            mins.as_primitive_opt::<Float32Type>(),
            maxes.as_primitive_opt::<Float32Type>(),
        ) else {
            return exec_err!("{NAME}: malformed partial state");
        };
        for row in 0..means.len() {
            if means.is_null(row) || weights.is_null(row) || mins.is_null(row) {
                continue;
            }
            let (m, w) = (means.value(row), weights.value(row));
            let (Some(m), Some(w)) = (
                m.as_primitive_opt::<Float32Type>(),
                w.as_primitive_opt::<Float32Type>(),
            ) else {
                return exec_err!("{NAME}: malformed partial state");
            };
            let centroids: Vec<Centroid> = m
                .values()
                .iter()
                .zip(w.values().iter())
                .map(|(&mean, &weight)| Centroid { mean, weight })
                .collect();
            self.digest
                .merge(&centroids, mins.value(row), maxes.value(row));
        }
        Ok(())
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        let means: Float32Array = self.digest.centroids().map(|c| Some(c.mean)).collect();
        let weights: Float32Array = self.digest.centroids().map(|c| Some(c.weight)).collect();
        let (min, max) = self.digest.extremes();
        let seen = !self.digest.is_empty();
        Ok(vec![
            list_scalar(Arc::new(means))?,
            list_scalar(Arc::new(weights))?,
            ScalarValue::Float32(seen.then_some(min)),
            ScalarValue::Float32(seen.then_some(max)),
        ])
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        Ok(ScalarValue::Float64(
            self.digest.quantile(self.p).map(f64::from),
        ))
    }

    fn size(&self) -> usize {
        size_of_val(self) + self.digest.centroids().count() * size_of::<Centroid>() * 2
    }
}
