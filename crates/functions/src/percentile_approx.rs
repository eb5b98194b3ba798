//! Doris's `percentile_approx(expr, p [, compression])` and
//! `percentile_approx_weighted(expr, weight, p [, compression])`: the approximate percentile `p`
//! of `expr` (each row counting `weight` times) from Doris's t-digest ([`crate::tdigest`]), so
//! results match Doris's digits. `p` must be a constant in [0, 1]; `compression` a constant,
//! 10000 unless given (Doris also takes 10000 for one outside [2048, 10000]). Rows where a
//! value or weight is NULL, or the weight is not positive, are skipped; no such row gives NULL.

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

const DEFAULT_COMPRESSION: f64 = 10000.0;

#[derive(Debug, PartialEq, Eq, Hash)]
struct PercentileApprox {
    /// percentile_approx_weighted: the second argument is each row's weight.
    weighted: bool,
    signature: Signature,
}

/// `percentile_approx` and `percentile_approx_weighted`.
pub fn functions() -> Vec<AggregateUDF> {
    [false, true]
        .into_iter()
        .map(|weighted| {
            AggregateUDF::new_from_impl(PercentileApprox {
                weighted,
                signature: Signature::user_defined(Volatility::Immutable),
            })
        })
        .collect()
}

impl PercentileApprox {
    fn title(&self) -> &'static str {
        match self.weighted {
            true => "percentile_approx_weighted",
            false => "percentile_approx",
        }
    }

    /// Where p is among the arguments.
    fn p_at(&self) -> usize {
        1 + usize::from(self.weighted)
    }
}

impl AggregateUDFImpl for PercentileApprox {
    fn name(&self) -> &str {
        self.title()
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        let name = self.title();
        expect_args(name, types, self.p_at() + 1, self.p_at() + 2)?;
        for t in types {
            if !(t.is_numeric() || t.is_null()) {
                return plan_err!("{name}: expected numeric arguments, got {t}");
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
        let name = self.title();
        if args.is_distinct {
            return plan_err!("{name}(DISTINCT ...) is not supported");
        }
        let p = constant(name, &args, self.p_at(), "the percentile")?;
        let Some(p) = p else {
            return plan_err!("{name}: the percentile must not be NULL");
        };
        if !(0.0..=1.0).contains(&p) {
            return plan_err!("{name}: the percentile must be between 0 and 1, got {p}");
        }
        let compression = match constant(name, &args, self.p_at() + 1, "the compression")? {
            Some(c) if (2048.0..=10000.0).contains(&c) => c,
            _ => DEFAULT_COMPRESSION,
        };
        Ok(Box::new(WeightedAccumulator {
            name,
            weighted: self.weighted,
            p: p as f32,
            digest: TDigest::new(compression as f32),
        }))
    }
}

/// The constant argument `at` (None when absent or NULL).
fn constant(name: &str, args: &AccumulatorArgs, at: usize, what: &str) -> Result<Option<f64>> {
    let Some(expr) = args.exprs.get(at) else {
        return Ok(None);
    };
    let empty = RecordBatch::new_empty(Arc::new(args.schema.clone()));
    match expr.evaluate(&empty) {
        Ok(ColumnarValue::Scalar(ScalarValue::Float64(v))) => Ok(v),
        Ok(ColumnarValue::Scalar(ScalarValue::Null)) => Ok(None),
        _ => plan_err!("{name}: {what} must be a constant number"),
    }
}

#[derive(Debug)]
struct WeightedAccumulator {
    name: &'static str,
    /// Whether the second argument is each row's weight (else every row weighs 1).
    weighted: bool,
    p: f32,
    digest: TDigest,
}

impl Accumulator for WeightedAccumulator {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let name = self.name;
        let double = |at: usize| {
            values
                .get(at)
                .and_then(|v| v.as_primitive_opt::<Float64Type>())
        };
        let Some(xs) = double(0) else {
            return exec_err!("{name}: expected DOUBLE values");
        };
        if !self.weighted {
            for x in xs.iter().flatten() {
                self.digest.add(x as f32, 1.0);
            }
            return Ok(());
        }
        let Some(ws) = double(1) else {
            return exec_err!("{name}: expected DOUBLE weights");
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
            return exec_err!("{}: malformed partial state", self.name);
        };
        let (Some(means), Some(weights), Some(mins), Some(maxes)) = (
            means.as_list_opt::<i32>(),
            weights.as_list_opt::<i32>(),
            mins.as_primitive_opt::<Float32Type>(),
            maxes.as_primitive_opt::<Float32Type>(),
        ) else {
            return exec_err!("{}: malformed partial state", self.name);
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
                return exec_err!("{}: malformed partial state", self.name);
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
