//! Doris's shape statistics: `kurtosis` (`kurt`, `kurt_pop`: the fourth central moment over
//! the squared variance, minus 3) and `skewness` (`skew`, `skew_pop`: the third central moment
//! over the variance to the power 1.5), both of the population, DOUBLE, NULL when the group
//! has no values or no variance. NULLs are skipped.
//!
//! The state is (count, mean, M2, M3, M4) — central moment sums, merged with Pébay's pairwise
//! formulas — rather than power sums, which lose every digit to cancellation when the values
//! are large next to their spread.

use arrow::array::{Array, ArrayRef, AsArray};
use arrow::datatypes::{DataType, FieldRef, Float64Type};
use datafusion::common::{exec_err, Result, ScalarValue};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, Signature, Volatility,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Shape {
    Kurtosis,
    Skewness,
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct ShapeStatistic {
    shape: Shape,
    signature: Signature,
}

/// `kurtosis` and `skewness` with Doris's aliases.
pub fn functions() -> Vec<AggregateUDF> {
    [
        (Shape::Kurtosis, ["kurt", "kurt_pop"]),
        (Shape::Skewness, ["skew", "skew_pop"]),
    ]
    .into_iter()
    .map(|(shape, aliases)| {
        AggregateUDF::new_from_impl(ShapeStatistic {
            shape,
            signature: Signature::user_defined(Volatility::Immutable),
        })
        .with_aliases(aliases)
    })
    .collect()
}

impl AggregateUDFImpl for ShapeStatistic {
    fn name(&self) -> &str {
        match self.shape {
            Shape::Kurtosis => "kurtosis",
            Shape::Skewness => "skewness",
        }
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        crate::util::one_number_as_double(self.name(), types)
    }

    fn return_type(&self, _types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Float64)
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        Ok(crate::util::double_state_fields(
            args.name,
            &["count", "mean", "m2", "m3", "m4"],
        ))
    }

    fn accumulator(&self, _args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        Ok(Box::new(MomentsAccumulator {
            shape: self.shape,
            moments: Moments::default(),
        }))
    }
}

/// Count, mean and the sums of the 2nd, 3rd and 4th powers of deviations from the mean.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
struct Moments {
    n: f64,
    mean: f64,
    m2: f64,
    m3: f64,
    m4: f64,
}

impl Moments {
    fn of(x: f64) -> Moments {
        Moments {
            n: 1.0,
            mean: x,
            ..Moments::default()
        }
    }

    /// The moments of both sets together.
    fn merge(self, b: Moments) -> Moments {
        let a = self;
        if b.n == 0.0 {
            return a;
        }
        if a.n == 0.0 {
            return b;
        }
        let n = a.n + b.n;
        let d = b.mean - a.mean;
        let (d2, d3, d4) = (d * d, d * d * d, d * d * d * d);
        let ab = a.n * b.n;
        Moments {
            n,
            mean: a.mean + d * b.n / n,
            m2: a.m2 + b.m2 + d2 * ab / n,
            m3: a.m3
                + b.m3
                + d3 * ab * (a.n - b.n) / (n * n)
                + 3.0 * d * (a.n * b.m2 - b.n * a.m2) / n,
            m4: a.m4
                + b.m4
                + d4 * ab * (a.n * a.n - ab + b.n * b.n) / (n * n * n)
                + 6.0 * d2 * (a.n * a.n * b.m2 + b.n * b.n * a.m2) / (n * n)
                + 4.0 * d * (a.n * b.m3 - b.n * a.m3) / n,
        }
    }

    fn value(&self, shape: Shape) -> Option<f64> {
        if self.n == 0.0 || self.m2 == 0.0 {
            return None;
        }
        let v = match shape {
            Shape::Kurtosis => self.n * self.m4 / (self.m2 * self.m2) - 3.0,
            Shape::Skewness => self.n.sqrt() * self.m3 / self.m2.powf(1.5),
        };
        v.is_finite().then_some(v)
    }
}

#[derive(Debug)]
struct MomentsAccumulator {
    shape: Shape,
    moments: Moments,
}

impl Accumulator for MomentsAccumulator {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let Some(xs) = values[0].as_primitive_opt::<Float64Type>() else {
            return exec_err!("kurtosis/skewness: expected DOUBLE values");
        };
        for x in xs.iter().flatten() {
            self.moments = self.moments.merge(Moments::of(x));
        }
        Ok(())
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let parts: Vec<_> = states
            .iter()
            .map(|s| s.as_primitive_opt::<Float64Type>())
            .collect::<Option<_>>()
            .map_or_else(
                || exec_err!("kurtosis/skewness: unexpected partial state"),
                Ok,
            )?;
        for row in 0..parts[0].len() {
            if parts.iter().any(|p| p.is_null(row)) {
                continue;
            }
            let other = Moments {
                n: parts[0].value(row),
                mean: parts[1].value(row),
                m2: parts[2].value(row),
                m3: parts[3].value(row),
                m4: parts[4].value(row),
            };
            self.moments = self.moments.merge(other);
        }
        Ok(())
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        let m = self.moments;
        Ok([m.n, m.mean, m.m2, m.m3, m.m4]
            .into_iter()
            .map(|v| ScalarValue::Float64(Some(v)))
            .collect())
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        Ok(ScalarValue::Float64(self.moments.value(self.shape)))
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn moments(xs: &[f64]) -> Moments {
        xs.iter()
            .fold(Moments::default(), |m, &x| m.merge(Moments::of(x)))
    }

    #[test]
    fn doris_documented_values_and_merging() {
        let xs = [-10.0, -20.0, 100.0, 100.0, 1000.0];
        let k = moments(&xs).value(Shape::Kurtosis).unwrap();
        assert!((k - 0.16212458373485106).abs() < 1e-12, "{k}");
        assert_eq!(moments(&[-10.0, 1000.0]).value(Shape::Kurtosis), Some(-2.0));
        assert_eq!(moments(&[5.0]).value(Shape::Kurtosis), None);
        assert_eq!(moments(&[]).value(Shape::Skewness), None);
        // Split anywhere and merged: the same moments.
        let whole = moments(&xs);
        let merged = moments(&xs[..2]).merge(moments(&xs[2..]));
        for shape in [Shape::Kurtosis, Shape::Skewness] {
            let (a, b) = (whole.value(shape).unwrap(), merged.value(shape).unwrap());
            assert!((a - b).abs() < 1e-12, "{a} {b}");
        }
        // Large values with a small spread keep their digits.
        let shifted: Vec<f64> = xs.iter().map(|x| x + 1e9).collect();
        let k2 = moments(&shifted).value(Shape::Kurtosis).unwrap();
        assert!((k2 - k).abs() < 1e-6, "{k2}");
        // Symmetric data has no skew.
        assert_eq!(moments(&[1.0, 2.0, 3.0]).value(Shape::Skewness), Some(0.0));
    }
}
