//! `avg_weighted(x, w)`: Doris's weighted mean, sum(x * w) / sum(w) as a DOUBLE. Rows where
//! either is NULL are skipped; no row gives NULL, weights summing to 0 NaN (Doris's docs).

use arrow::array::{Array, ArrayRef, AsArray};
use arrow::datatypes::{DataType, FieldRef, Float64Type};
use datafusion::common::{exec_err, plan_err, Result, ScalarValue};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, Signature, Volatility,
};

const NAME: &str = "avg_weighted";

#[derive(Debug, PartialEq, Eq, Hash)]
struct AvgWeighted {
    signature: Signature,
}

/// The `avg_weighted` aggregate.
pub fn function() -> AggregateUDF {
    AggregateUDF::new_from_impl(AvgWeighted {
        signature: Signature::user_defined(Volatility::Immutable),
    })
}

impl AggregateUDFImpl for AvgWeighted {
    fn name(&self) -> &str {
        NAME
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        crate::util::expect_args(NAME, types, 2, 2)?;
        for t in types {
            if !(t.is_numeric() || t.is_null()) {
                return plan_err!("{NAME}: expected numbers, got {t}");
            }
        }
        Ok(vec![DataType::Float64, DataType::Float64])
    }

    fn return_type(&self, _types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Float64)
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        Ok(crate::util::double_state_fields(
            args.name,
            &["weighted_sum", "weight", "rows"],
        ))
    }

    fn accumulator(&self, _args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        Ok(Box::new(AvgWeightedAccumulator::default()))
    }
}

#[derive(Debug, Default)]
struct AvgWeightedAccumulator {
    weighted_sum: f64,
    weight: f64,
    /// Rows with both values.
    rows: f64,
}

impl AvgWeightedAccumulator {
    /// Adds `a[i] * b[i]` (or `a[i]` when merging states) and `b[i]` for rows where both are
    /// present; `rows` counts them (or holds the states' counts).
    fn add(&mut self, a: &ArrayRef, b: &ArrayRef, rows: Option<&ArrayRef>) -> Result<()> {
        let doubles = |a: &ArrayRef| a.as_primitive_opt::<Float64Type>().cloned();
        let (Some(a), Some(b)) = (doubles(a), doubles(b)) else {
            return exec_err!("{NAME}: expected DOUBLE values");
        };
        let counts = match rows {
            Some(r) => match doubles(r) {
                Some(r) => Some(r),
                None => return exec_err!("{NAME}: unexpected partial state"),
            },
            None => None,
        };
        for i in 0..a.len() {
            if a.is_null(i) || b.is_null(i) {
                continue;
            }
            let (x, w) = (a.value(i), b.value(i));
            match &counts {
                None => {
                    self.weighted_sum += x * w;
                    self.rows += 1.0;
                }
                Some(c) => {
                    self.weighted_sum += x;
                    self.rows += c.value(i);
                }
            }
            self.weight += w;
        }
        Ok(())
    }
}

impl Accumulator for AvgWeightedAccumulator {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        self.add(&values[0], &values[1], None)
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        self.add(&states[0], &states[1], states.get(2))
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        Ok(vec![
            ScalarValue::Float64(Some(self.weighted_sum)),
            ScalarValue::Float64(Some(self.weight)),
            ScalarValue::Float64(Some(self.rows)),
        ])
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        Ok(ScalarValue::Float64(
            (self.rows > 0.0).then(|| self.weighted_sum / self.weight),
        ))
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self)
    }
}
