//! Statistics aggregates under their Doris names, reusing DataFusion's implementations.
//!
//! What Doris does (docs and BE `aggregate_function_stddev.h`, `_covar.h`, `_corr.h`,
//! `_percentile.h`) and how it maps:
//! - `variance` / `var_pop` / `variance_pop` are the POPULATION variance, `stddev` /
//!   `stddev_pop` the population standard deviation (docs: stddev(85,90,82,88,95) = 4.427...),
//!   `var_samp` / `variance_samp` and `stddev_samp` the sample forms: Doris's own update
//!   formulas, in `variance.rs`, so the last digits agree. (DataFusion's own `stddev` is the
//!   sample form; registering these names later replaces it.)
//! - `covar` / `covar_pop` and `covar_samp`: Doris's sums formula, in `covariance.rs` (0 for a
//!   group with exactly one row, NULL only when the group has no non-NULL input).
//! - `corr`: Doris returns 0 when either input is constant (or the group has one row) and NULL
//!   only without input; DataFusion returns NULL in those cases. It wraps DataFusion's
//!   function and turns a NULL result into 0.0 when the group saw at least one complete
//!   (non-NULL) input row.
//! - `regr_r2`: likewise 0 where DataFusion's is NULL for a constant input (Doris's
//!   `regr_r2(42, x)` and `regr_r2(x, 42)` are 0).
//! - `percentile(expr, p)` lives in `percentile.rs` (DataFusion's `percentile_cont` rounds its
//!   interpolation weight, Doris does not).
//! - `percentile_approx(expr, p[, compression])` lives in `percentile_approx.rs` (Doris's own
//!   t-digest, so digits and the meaning of `compression` agree).
//! - `ndv`, `approx_count_distinct`: DataFusion's `approx_distinct` (HyperLogLog).

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, BooleanArray, Float64Array};
use arrow::compute::cast;
use arrow::datatypes::{DataType, FieldRef, UInt64Type};
use datafusion::common::{Result, ScalarValue};
use datafusion::functions_aggregate::{
    approx_distinct::approx_distinct_udaf, correlation::corr_udaf, regr::regr_r2_udaf,
};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, EmitTo, GroupsAccumulator, Signature,
};

/// The statistics aggregates with Doris names and semantics.
pub fn functions() -> Vec<AggregateUDF> {
    let mut v = crate::variance::functions();
    v.extend(crate::covariance::functions());
    v.extend([
        zero_for_single_row(&corr_udaf(), "corr", &[]),
        zero_for_single_row(&regr_r2_udaf(), "regr_r2", &[]),
        (*approx_distinct_udaf())
            .clone()
            .with_aliases(["ndv", "approx_count_distinct"]),
    ]);
    v
}

fn zero_for_single_row(inner: &Arc<AggregateUDF>, name: &str, aliases: &[&str]) -> AggregateUDF {
    AggregateUDF::new_from_impl(ZeroWhenDegenerate {
        inner: (**inner).clone(),
        name: name.to_string(),
        aliases: aliases.iter().map(|s| s.to_string()).collect(),
    })
}

/// A DataFusion Float64 aggregate whose NULL result becomes 0.0 for groups that saw at least one
/// row with every argument non-NULL. The inner state's first column must be its row count
/// (true of DataFusion's variance, stddev, covariance and correlation states).
#[derive(Debug, PartialEq, Eq, Hash)]
struct ZeroWhenDegenerate {
    inner: AggregateUDF,
    name: String,
    aliases: Vec<String>,
}

impl AggregateUDFImpl for ZeroWhenDegenerate {
    fn name(&self) -> &str {
        &self.name
    }

    fn aliases(&self) -> &[String] {
        &self.aliases
    }

    fn signature(&self) -> &Signature {
        self.inner.signature()
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        self.inner.inner().coerce_types(arg_types)
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        self.inner.inner().return_type(arg_types)
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        self.inner.inner().state_fields(args)
    }

    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        if args.is_distinct {
            // DISTINCT states are value lists, not counts: keep DataFusion's result as is.
            return self.inner.inner().accumulator(args);
        }
        Ok(Box::new(ZeroAccumulator {
            inner: self.inner.inner().accumulator(args)?,
            rows: 0,
        }))
    }

    fn groups_accumulator_supported(&self, args: AccumulatorArgs) -> bool {
        self.inner.inner().groups_accumulator_supported(args)
    }

    fn create_groups_accumulator(
        &self,
        args: AccumulatorArgs,
    ) -> Result<Box<dyn GroupsAccumulator>> {
        Ok(Box::new(ZeroGroupsAccumulator {
            inner: self.inner.inner().create_groups_accumulator(args)?,
            rows: Vec::new(),
        }))
    }
}

/// Whether row `i` has every argument non-NULL (and passes the filter).
fn complete_rows<'a>(
    values: &'a [ArrayRef],
    filter: Option<&'a BooleanArray>,
) -> impl Fn(usize) -> bool + 'a {
    move |i| {
        filter.is_none_or(|f| f.is_valid(i) && f.value(i)) && values.iter().all(|v| v.is_valid(i))
    }
}

/// The row counts in an inner state's first column.
fn state_counts(states: &[ArrayRef]) -> Result<ArrayRef> {
    cast(&states[0], &DataType::UInt64).map_err(Into::into)
}

fn zero_if_seen(v: ScalarValue, rows: u64) -> ScalarValue {
    if v.is_null() && rows > 0 {
        ScalarValue::Float64(Some(0.0))
    } else {
        v
    }
}

#[derive(Debug)]
struct ZeroAccumulator {
    inner: Box<dyn Accumulator>,
    rows: u64,
}

impl Accumulator for ZeroAccumulator {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let len = values.first().map_or(0, |v| v.len());
        let complete = complete_rows(values, None);
        self.rows += (0..len).filter(|&i| complete(i)).count() as u64;
        self.inner.update_batch(values)
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let counts = state_counts(states)?;
        self.rows += counts
            .as_primitive::<UInt64Type>()
            .iter()
            .flatten()
            .sum::<u64>();
        self.inner.merge_batch(states)
    }

    fn retract_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let len = values.first().map_or(0, |v| v.len());
        let complete = complete_rows(values, None);
        let gone = (0..len).filter(|&i| complete(i)).count() as u64;
        self.rows = self.rows.saturating_sub(gone);
        self.inner.retract_batch(values)
    }

    fn supports_retract_batch(&self) -> bool {
        self.inner.supports_retract_batch()
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        self.inner.state()
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        Ok(zero_if_seen(self.inner.evaluate()?, self.rows))
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self) + self.inner.size()
    }
}

struct ZeroGroupsAccumulator {
    inner: Box<dyn GroupsAccumulator>,
    /// Complete input rows seen per group.
    rows: Vec<u64>,
}

impl GroupsAccumulator for ZeroGroupsAccumulator {
    fn update_batch(
        &mut self,
        values: &[ArrayRef],
        group_indices: &[usize],
        opt_filter: Option<&BooleanArray>,
        total_num_groups: usize,
    ) -> Result<()> {
        self.rows.resize(total_num_groups, 0);
        let complete = complete_rows(values, opt_filter);
        for (i, &g) in group_indices.iter().enumerate() {
            if complete(i) {
                self.rows[g] += 1;
            }
        }
        self.inner
            .update_batch(values, group_indices, opt_filter, total_num_groups)
    }

    fn merge_batch(
        &mut self,
        values: &[ArrayRef],
        group_indices: &[usize],
        total_num_groups: usize,
    ) -> Result<()> {
        self.rows.resize(total_num_groups, 0);
        let counts = state_counts(values)?;
        let counts = counts.as_primitive::<UInt64Type>();
        for (i, &g) in group_indices.iter().enumerate() {
            if counts.is_valid(i) {
                self.rows[g] += counts.value(i);
            }
        }
        self.inner
            .merge_batch(values, group_indices, total_num_groups)
    }

    fn evaluate(&mut self, emit_to: EmitTo) -> Result<ArrayRef> {
        let rows = emit_to.take_needed(&mut self.rows);
        let result = self.inner.evaluate(emit_to)?;
        let Some(values) = result.as_any().downcast_ref::<Float64Array>() else {
            return Ok(result);
        };
        if values.null_count() == 0 {
            return Ok(result);
        }
        let patched: Float64Array = values
            .iter()
            .zip(rows.iter())
            .map(|(v, &n)| v.or((n > 0).then_some(0.0)))
            .collect();
        Ok(Arc::new(patched))
    }

    fn state(&mut self, emit_to: EmitTo) -> Result<Vec<ArrayRef>> {
        emit_to.take_needed(&mut self.rows);
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
        self.inner.size() + self.rows.capacity() * std::mem::size_of::<u64>()
    }
}
