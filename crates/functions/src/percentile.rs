//! `percentile(expr, p)`: Doris's exact percentile, a DOUBLE interpolated linearly between the
//! closest ranks at `p * (n - 1)` (BE `PercentileExactState`/`Counts::terminate`; docs: the
//! 0.75 percentile of 10,15,...,50,100 is 43.75). NULLs are skipped; no input gives NULL; `p` must
//! be a constant in [0, 1].
//!
//! DataFusion's `percentile_cont` keeps the same state (the list of values) but quantizes the
//! interpolation weight to 1e-6 (p90 of the example above gives 54.99995, Doris 55), so this
//! reuses its GROUP BY accumulator for collecting and merging values and computes the final
//! value here; the per-row [`Accumulator`] is ours (it must not consume its state in `evaluate`,
//! which window frames call repeatedly).

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, BooleanArray, Float64Array, ListArray};
use arrow::buffer::{OffsetBuffer, ScalarBuffer};
use arrow::datatypes::{DataType, Field, FieldRef, Float64Type};
use datafusion::common::{exec_err, not_impl_err, plan_err, Result, ScalarValue};
use datafusion::functions_aggregate::percentile_cont::percentile_cont_udaf;
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::utils::format_state_name;
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, ColumnarValue, EmitTo, GroupsAccumulator,
    Signature, Volatility,
};

use crate::util::expect_args;

const NAME: &str = "percentile";

#[derive(Debug, PartialEq, Eq, Hash)]
struct Percentile {
    signature: Signature,
}

/// The `percentile` aggregate.
pub fn function() -> AggregateUDF {
    AggregateUDF::new_from_impl(Percentile {
        signature: Signature::user_defined(Volatility::Immutable),
    })
}

impl AggregateUDFImpl for Percentile {
    fn name(&self) -> &str {
        NAME
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        expect_args(NAME, types, 2, 2)?;
        for t in types {
            if !(t.is_numeric() || t.is_null()) {
                return plan_err!("{NAME}: expected numeric arguments, got {t}");
            }
        }
        Ok(vec![DataType::Float64, DataType::Float64])
    }

    fn return_type(&self, _types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Float64)
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        Ok(vec![Arc::new(Field::new(
            format_state_name(args.name, "values"),
            DataType::List(Arc::new(Field::new_list_field(DataType::Float64, true))),
            true,
        ))])
    }

    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        Ok(Box::new(PercentileAccumulator {
            p: percentile_arg(&args)?,
            values: Vec::new(),
        }))
    }

    fn groups_accumulator_supported(&self, args: AccumulatorArgs) -> bool {
        !args.is_distinct
    }

    fn create_groups_accumulator(
        &self,
        args: AccumulatorArgs,
    ) -> Result<Box<dyn GroupsAccumulator>> {
        let p = percentile_arg(&args)?;
        Ok(Box::new(PercentileGroups {
            p,
            inner: percentile_cont_udaf()
                .inner()
                .create_groups_accumulator(args)?,
        }))
    }
}

fn percentile_arg(args: &AccumulatorArgs) -> Result<f64> {
    if args.is_distinct {
        return not_impl_err!("{NAME}(DISTINCT ...) is not supported");
    }
    let Some(expr) = args.exprs.get(1) else {
        return plan_err!("{NAME} takes 2 arguments");
    };
    let empty = arrow::array::RecordBatch::new_empty(Arc::new(args.schema.clone()));
    let p = match expr.evaluate(&empty)? {
        ColumnarValue::Scalar(ScalarValue::Float64(Some(p))) => p,
        _ => return plan_err!("{NAME}: the percentile must be a constant number"),
    };
    if !(0.0..=1.0).contains(&p) {
        return plan_err!("{NAME}: the percentile must be between 0 and 1, got {p}");
    }
    Ok(p)
}

/// Doris's exact percentile of `values` (which it sorts).
pub(crate) fn exact(values: &mut [f64], p: f64) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_unstable_by(f64::total_cmp);
    let at = p * (values.len() - 1) as f64;
    let lo = at.floor() as usize;
    let hi = (lo + 1).min(values.len() - 1);
    Some(values[lo] + (at - lo as f64) * (values[hi] - values[lo]))
}

pub(crate) fn list_values(list: &ListArray, row: usize) -> Result<Vec<f64>> {
    if list.is_null(row) {
        return Ok(vec![]);
    }
    let item = list.value(row);
    let Some(floats) = item.as_primitive_opt::<Float64Type>() else {
        return exec_err!("{NAME}: unexpected state type {}", item.data_type());
    };
    Ok(floats.iter().flatten().collect())
}

#[derive(Debug)]
struct PercentileAccumulator {
    p: f64,
    values: Vec<f64>,
}

impl Accumulator for PercentileAccumulator {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        self.values
            .extend(values[0].as_primitive::<Float64Type>().iter().flatten());
        Ok(())
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let list = states[0].as_list::<i32>();
        for row in 0..list.len() {
            self.values.extend(list_values(list, row)?);
        }
        Ok(())
    }

    fn retract_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        for v in values[0].as_primitive::<Float64Type>().iter().flatten() {
            if let Some(at) = self.values.iter().position(|x| x.total_cmp(&v).is_eq()) {
                self.values.swap_remove(at);
            }
        }
        Ok(())
    }

    fn supports_retract_batch(&self) -> bool {
        true
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        let values = Float64Array::from(self.values.clone());
        let list = ListArray::new(
            Arc::new(Field::new_list_field(DataType::Float64, true)),
            OffsetBuffer::new(ScalarBuffer::from(vec![0, values.len() as i32])),
            Arc::new(values),
            None,
        );
        Ok(vec![ScalarValue::List(Arc::new(list))])
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        Ok(ScalarValue::Float64(exact(&mut self.values, self.p)))
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self) + self.values.capacity() * 8
    }
}

/// DataFusion's `percentile_cont` GROUP BY accumulator with Doris's final interpolation.
struct PercentileGroups {
    p: f64,
    inner: Box<dyn GroupsAccumulator>,
}

impl GroupsAccumulator for PercentileGroups {
    fn update_batch(
        &mut self,
        values: &[ArrayRef],
        group_indices: &[usize],
        opt_filter: Option<&BooleanArray>,
        total_num_groups: usize,
    ) -> Result<()> {
        self.inner
            .update_batch(values, group_indices, opt_filter, total_num_groups)
    }

    fn merge_batch(
        &mut self,
        values: &[ArrayRef],
        group_indices: &[usize],
        total_num_groups: usize,
    ) -> Result<()> {
        self.inner
            .merge_batch(values, group_indices, total_num_groups)
    }

    fn evaluate(&mut self, emit_to: EmitTo) -> Result<ArrayRef> {
        let state = self.inner.state(emit_to)?;
        let list = state[0].as_list::<i32>();
        let mut out = Vec::with_capacity(list.len());
        for row in 0..list.len() {
            out.push(exact(&mut list_values(list, row)?, self.p));
        }
        Ok(Arc::new(Float64Array::from(out)))
    }

    fn state(&mut self, emit_to: EmitTo) -> Result<Vec<ArrayRef>> {
        self.inner.state(emit_to)
    }

    fn convert_to_state(
        &self,
        values: &[ArrayRef],
        opt_filter: Option<&BooleanArray>,
    ) -> Result<Vec<ArrayRef>> {
        self.inner.convert_to_state(values, opt_filter)
    }

    fn size(&self) -> usize {
        self.inner.size()
    }
}

#[cfg(test)]
mod tests {
    use super::exact;

    #[test]
    fn interpolates_like_doris() {
        let prices = [100.0, 10.0, 15.0, 20.0, 25.0, 30.0, 35.0, 40.0, 45.0, 50.0];
        let p = |q| exact(&mut prices.to_vec(), q).unwrap();
        assert_eq!(p(0.5), 32.5);
        assert_eq!(p(0.75), 43.75);
        assert!((p(0.9) - 55.0).abs() < 1e-9);
        assert_eq!((p(0.0), p(1.0)), (10.0, 100.0));
        assert_eq!(exact(&mut [7.0], 0.3), Some(7.0));
        assert_eq!(exact(&mut [], 0.3), None);
    }
}
