//! `geomean(x)`: Doris's geometric mean of the non-NULL values, as a DOUBLE: the n-th root of
//! their product, computed as `exp(mean(ln |x|))` with the product's sign. A zero among the
//! values makes it 0; no value gives NULL. A negative product has a real n-th root only for
//! odd n (`geomean` of -2, -8, -4 is -4); for even n there is none, and the answer is NULL.

use arrow::array::{Array, ArrayRef, AsArray};
use arrow::datatypes::{DataType, FieldRef, Float64Type};
use datafusion::common::{exec_err, Result, ScalarValue};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, Signature, Volatility,
};

const NAME: &str = "geomean";

#[derive(Debug, PartialEq, Eq, Hash)]
struct Geomean {
    signature: Signature,
}

/// The `geomean` aggregate.
pub fn function() -> AggregateUDF {
    AggregateUDF::new_from_impl(Geomean {
        signature: Signature::user_defined(Volatility::Immutable),
    })
}

impl AggregateUDFImpl for Geomean {
    fn name(&self) -> &str {
        NAME
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        crate::util::one_number_as_double(NAME, types)
    }

    fn return_type(&self, _types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Float64)
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        Ok(crate::util::double_state_fields(
            args.name,
            &["log_sum", "rows", "negatives", "zeros"],
        ))
    }

    fn accumulator(&self, _args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        Ok(Box::new(GeomeanAccumulator::default()))
    }
}

#[derive(Debug, Default)]
struct GeomeanAccumulator {
    /// Sum of ln |x| over the non-zero values.
    log_sum: f64,
    rows: f64,
    negatives: f64,
    zeros: f64,
}

fn doubles(a: &ArrayRef) -> Result<&arrow::array::Float64Array> {
    match a.as_primitive_opt::<Float64Type>() {
        Some(a) => Ok(a),
        None => exec_err!("{NAME}: expected DOUBLE values"),
    }
}

impl Accumulator for GeomeanAccumulator {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let values = doubles(&values[0])?;
        for x in values.iter().flatten() {
            self.rows += 1.0;
            if x == 0.0 {
                self.zeros += 1.0;
                continue;
            }
            if x < 0.0 {
                self.negatives += 1.0;
            }
            self.log_sum += x.abs().ln();
        }
        Ok(())
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let [log_sum, rows, negatives, zeros] = states else {
            return exec_err!("{NAME}: unexpected partial state");
        };
        let (log_sum, rows) = (doubles(log_sum)?, doubles(rows)?);
        let (negatives, zeros) = (doubles(negatives)?, doubles(zeros)?);
        for i in 0..log_sum.len() {
            if log_sum.is_null(i) {
                continue;
            }
            self.log_sum += log_sum.value(i);
            self.rows += rows.value(i);
            self.negatives += negatives.value(i);
            self.zeros += zeros.value(i);
        }
        Ok(())
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        Ok([self.log_sum, self.rows, self.negatives, self.zeros]
            .into_iter()
            .map(|v| ScalarValue::Float64(Some(v)))
            .collect())
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        Ok(ScalarValue::Float64(mean(
            self.log_sum,
            self.rows,
            self.negatives,
            self.zeros,
        )))
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self)
    }
}

fn mean(log_sum: f64, rows: f64, negatives: f64, zeros: f64) -> Option<f64> {
    if rows == 0.0 {
        return None;
    }
    if zeros > 0.0 {
        return Some(0.0);
    }
    let magnitude = (log_sum / rows).exp();
    let negative = negatives % 2.0 == 1.0;
    match (negative, rows % 2.0 == 1.0) {
        (false, _) => Some(magnitude),
        (true, true) => Some(-magnitude),
        (true, false) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::mean;

    fn of(values: &[f64]) -> Option<f64> {
        let mut log_sum = 0.0;
        let (mut negatives, mut zeros) = (0.0, 0.0);
        for &x in values {
            if x == 0.0 {
                zeros += 1.0;
            } else {
                negatives += f64::from(u8::from(x < 0.0));
                log_sum += x.abs().ln();
            }
        }
        mean(log_sum, values.len() as f64, negatives, zeros)
    }

    #[test]
    fn roots_of_products_with_their_signs() {
        let close = |a: Option<f64>, b: f64| a.is_some_and(|a| (a - b).abs() < 1e-9);
        assert!(close(of(&[2.0, 4.0, 8.0]), 4.0));
        assert!(close(of(&[-2.0, -8.0]), 4.0));
        assert!(close(of(&[-2.0, -8.0, -4.0]), -4.0));
        assert_eq!(of(&[0.0, 16.0]), Some(0.0));
        assert_eq!(of(&[-2.0, 8.0]), None);
        assert_eq!(of(&[]), None);
    }
}
