//! Doris's covariance, computed as Doris computes it (BE `aggregate_function_covar.h`) so the
//! last digits agree (`1840.2222222222222` where a running co-moment gives
//! `1840.2222222222224`): sums of x, y and x·y over the rows where both are not NULL, then
//! - `covar` / `covar_pop`: `sum_xy / n - sum_x * sum_y / n²`;
//! - `covar_samp`: `sum_xy / (n - 1) - sum_x * sum_y / (n (n - 1))`.
//!
//! A group with one row gives 0 (both forms, as Doris); a group without rows gives NULL.
//! Partial states are the sums and the count, merged by adding; window frames retract rows by
//! subtracting them.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray};
use arrow::datatypes::{DataType, Field, FieldRef, Float64Type, Int64Type};
use datafusion::common::{not_impl_err, plan_err, Result, ScalarValue};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::utils::format_state_name;
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, Signature, Volatility,
};

#[derive(Debug, PartialEq, Eq, Hash)]
struct Covariance {
    name: &'static str,
    aliases: Vec<String>,
    sample: bool,
    signature: Signature,
}

/// `covar` (alias `covar_pop`) and `covar_samp`.
pub fn functions() -> Vec<AggregateUDF> {
    let make = |name, aliases: &[&str], sample| {
        AggregateUDF::new_from_impl(Covariance {
            name,
            aliases: aliases.iter().map(|a| a.to_string()).collect(),
            sample,
            signature: Signature::user_defined(Volatility::Immutable),
        })
    };
    vec![
        make("covar_pop", &["covar"], false),
        make("covar_samp", &[], true),
    ]
}

impl AggregateUDFImpl for Covariance {
    fn name(&self) -> &str {
        self.name
    }

    fn aliases(&self) -> &[String] {
        &self.aliases
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        crate::util::expect_args(self.name, types, 2, 2)?;
        if let Some(t) = types.iter().find(|t| !(t.is_numeric() || t.is_null())) {
            return plan_err!("{}: expected numbers, got {t}", self.name);
        }
        Ok(vec![DataType::Float64, DataType::Float64])
    }

    fn return_type(&self, _types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Float64)
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        let field = |what: &str, t: DataType| {
            Arc::new(Field::new(format_state_name(args.name, what), t, true))
        };
        Ok(vec![
            field("count", DataType::Int64),
            field("sum_x", DataType::Float64),
            field("sum_y", DataType::Float64),
            field("sum_xy", DataType::Float64),
        ])
    }

    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        if args.is_distinct {
            return not_impl_err!("{}(DISTINCT) is not supported", self.name);
        }
        Ok(Box::new(Sums {
            sample: self.sample,
            ..Sums::default()
        }))
    }
}

/// Doris's `BaseData`: the row count and the sums of x, y and x·y.
#[derive(Debug, Default)]
struct Sums {
    sample: bool,
    count: i64,
    sum_x: f64,
    sum_y: f64,
    sum_xy: f64,
}

impl Sums {
    /// Adds (`sign` 1) or removes (-1) the rows where both arguments are not NULL.
    fn apply(&mut self, values: &[ArrayRef], sign: f64) {
        let (xs, ys) = (
            values[0].as_primitive::<Float64Type>(),
            values[1].as_primitive::<Float64Type>(),
        );
        for (x, y) in xs.iter().zip(ys.iter()) {
            if let (Some(x), Some(y)) = (x, y) {
                self.sum_x += sign * x;
                self.sum_y += sign * y;
                self.sum_xy += sign * (x * y);
                self.count += sign as i64;
            }
        }
    }

    fn result(&self) -> Option<f64> {
        let n = self.count as f64;
        match self.count {
            0 => None,
            1 => Some(0.0),
            _ if self.sample => {
                Some(self.sum_xy / (n - 1.0) - self.sum_x * self.sum_y / (n * (n - 1.0)))
            }
            _ => Some(self.sum_xy / n - self.sum_x * self.sum_y / (n * n)),
        }
    }
}

impl Accumulator for Sums {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        self.apply(values, 1.0);
        Ok(())
    }

    fn retract_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        self.apply(values, -1.0);
        Ok(())
    }

    fn supports_retract_batch(&self) -> bool {
        true
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let counts = states[0].as_primitive::<Int64Type>();
        let sums = |i: usize| states[i].as_primitive::<Float64Type>();
        let (sum_x, sum_y, sum_xy) = (sums(1), sums(2), sums(3));
        for row in 0..counts.len() {
            if counts.is_null(row) || counts.value(row) == 0 {
                continue;
            }
            self.count += counts.value(row);
            self.sum_x += sum_x.value(row);
            self.sum_y += sum_y.value(row);
            self.sum_xy += sum_xy.value(row);
        }
        Ok(())
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        Ok(vec![
            ScalarValue::Int64(Some(self.count)),
            ScalarValue::Float64(Some(self.sum_x)),
            ScalarValue::Float64(Some(self.sum_y)),
            ScalarValue::Float64(Some(self.sum_xy)),
        ])
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        Ok(ScalarValue::Float64(self.result()))
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::Float64Array;

    fn sums(sample: bool, xs: Vec<Option<f64>>, ys: Vec<Option<f64>>) -> Sums {
        let mut s = Sums {
            sample,
            ..Sums::default()
        };
        let values: Vec<ArrayRef> = vec![
            Arc::new(Float64Array::from(xs)),
            Arc::new(Float64Array::from(ys)),
        ];
        s.update_batch(&values).unwrap();
        s
    }

    #[test]
    fn sums_give_dorises_digits() {
        let xs = vec![Some(1.0), Some(20.0), Some(100.0), None];
        let ys = vec![Some(1.0), Some(20.0), Some(100.0), Some(5.0)];
        assert_eq!(
            sums(false, xs.clone(), ys.clone()).result(),
            Some(1840.2222222222222)
        );
        assert_eq!(sums(true, xs, ys).result(), Some(2760.3333333333335));
        assert_eq!(
            sums(true, vec![Some(2.0)], vec![Some(3.0)]).result(),
            Some(0.0)
        );
        assert_eq!(sums(false, vec![None], vec![Some(3.0)]).result(), None);
    }

    #[test]
    fn partial_states_merge_and_rows_retract() {
        let mut whole = sums(
            false,
            vec![Some(1.0), Some(2.0)],
            vec![Some(2.0), Some(4.0)],
        );
        let mut part = sums(false, vec![Some(3.0)], vec![Some(6.0)]);
        let state: Vec<ArrayRef> = part
            .state()
            .unwrap()
            .into_iter()
            .map(|v| v.to_array().unwrap())
            .collect();
        whole.merge_batch(&state).unwrap();
        assert_eq!(whole.count, 3);
        assert_eq!(
            whole.result(),
            sums(
                false,
                vec![Some(1.0), Some(2.0), Some(3.0)],
                vec![Some(2.0), Some(4.0), Some(6.0)]
            )
            .result()
        );
        let gone: Vec<ArrayRef> = vec![
            Arc::new(Float64Array::from(vec![3.0])),
            Arc::new(Float64Array::from(vec![6.0])),
        ];
        whole.retract_batch(&gone).unwrap();
        assert_eq!(whole.count, 2);
    }
}
