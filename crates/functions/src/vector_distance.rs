//! Doris's vector distances between two numeric arrays, as DOUBLE: `l1_distance` (sum of
//! absolute differences), `l2_distance` (Euclidean), `cosine_distance` (1 - cosine similarity)
//! and `inner_product`. A NULL array or a NULL element makes the result NULL, as does a zero
//! vector in `cosine_distance`; arrays of different lengths are an error.

use datafusion::arrow::array::{Array, ArrayRef, AsArray, Float64Array, Float64Builder};
use datafusion::arrow::datatypes::{DataType, Field, Float64Type};
use datafusion::common::{exec_err, plan_err, Result};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use std::sync::Arc;

pub fn functions() -> Vec<ScalarUDF> {
    [Metric::L1, Metric::L2, Metric::Cosine, Metric::InnerProduct]
        .into_iter()
        .map(|metric| {
            ScalarUDF::new_from_impl(VectorDistance {
                metric,
                signature: Signature::user_defined(Volatility::Immutable),
            })
        })
        .collect()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Metric {
    L1,
    L2,
    Cosine,
    InnerProduct,
}

impl Metric {
    fn name(self) -> &'static str {
        match self {
            Metric::L1 => "l1_distance",
            Metric::L2 => "l2_distance",
            Metric::Cosine => "cosine_distance",
            Metric::InnerProduct => "inner_product",
        }
    }

    /// The metric of two vectors of equal length; None where it is undefined.
    fn of(self, a: &[f64], b: &[f64]) -> Option<f64> {
        let pairs = a.iter().zip(b);
        match self {
            Metric::L1 => Some(pairs.map(|(x, y)| (x - y).abs()).sum()),
            Metric::L2 => Some(pairs.map(|(x, y)| (x - y) * (x - y)).sum::<f64>().sqrt()),
            Metric::InnerProduct => Some(pairs.map(|(x, y)| x * y).sum()),
            Metric::Cosine => {
                let dot: f64 = pairs.map(|(x, y)| x * y).sum();
                let squares = |v: &[f64]| v.iter().map(|x| x * x).sum::<f64>();
                // One square root of the product, as Doris computes it (to the last digit).
                let norms = (squares(a) * squares(b)).sqrt();
                (norms != 0.0).then(|| 1.0 - dot / norms)
            }
        }
    }
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct VectorDistance {
    metric: Metric,
    signature: Signature,
}

/// A list of doubles: every numeric list type (and NULL) is read as one.
fn double_list(name: &str, t: &DataType) -> Result<DataType> {
    let list = |nullable: bool| {
        DataType::List(Arc::new(Field::new_list_field(DataType::Float64, nullable)))
    };
    match t {
        DataType::Null => Ok(list(true)),
        DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _)
            if f.data_type().is_numeric() || f.data_type() == &DataType::Null =>
        {
            Ok(list(true))
        }
        other => plan_err!("{name} takes two arrays of numbers, not {other}"),
    }
}

impl ScalarUDFImpl for VectorDistance {
    fn name(&self) -> &str {
        self.metric.name()
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, args: &[DataType]) -> Result<Vec<DataType>> {
        if args.len() != 2 {
            return plan_err!("{} takes two arrays", self.name());
        }
        args.iter().map(|t| double_list(self.name(), t)).collect()
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(DataType::Float64)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let (arrays, scalar) = crate::util::arguments(&args)?;
        let (left, right) = (arrays[0].as_list::<i32>(), arrays[1].as_list::<i32>());
        let mut out = Float64Builder::with_capacity(left.len());
        for row in 0..left.len() {
            if left.is_null(row) || right.is_null(row) {
                out.append_null();
                continue;
            }
            let (a, b) = (left.value(row), right.value(row));
            if a.len() != b.len() {
                return exec_err!(
                    "{}: the arrays have different sizes ({} and {})",
                    self.name(),
                    a.len(),
                    b.len()
                );
            }
            match (doubles(&a), doubles(&b)) {
                (Some(a), Some(b)) => out.append_option(self.metric.of(&a, &b)),
                _ => out.append_null(),
            }
        }
        crate::util::output(Arc::new(out.finish()) as ArrayRef, scalar)
    }
}

/// The elements as doubles; None when one is NULL.
fn doubles(values: &ArrayRef) -> Option<Vec<f64>> {
    let values: &Float64Array = values.as_primitive::<Float64Type>();
    (values.null_count() == 0).then(|| values.values().to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_match_their_definitions() {
        let (a, b) = ([1.0, 2.0, 3.0], [3.0, 5.0, 7.0]);
        assert_eq!(Metric::L1.of(&[0.0; 3], &a), Some(6.0));
        assert_eq!(Metric::L2.of(&a, &[0.0; 3]), Some(14f64.sqrt()));
        assert_eq!(Metric::InnerProduct.of(&[1.0, 2.0], &[2.0, 3.0]), Some(8.0));
        let cosine = Metric::Cosine.of(&a, &b).unwrap_or_default();
        assert_eq!(cosine, 0.00258509695694209);
        assert_eq!(Metric::Cosine.of(&[0.0], &[0.0]), None);
    }
}
