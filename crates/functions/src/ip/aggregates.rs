//! Aggregates whose result is one of their values (`max`, `min`, `max_by`, `min_by`,
//! `nth_value`, which also serves `ARRAY_AGG(x)[n]`) or a list of them (`array_agg`, so
//! `collect_list` / `collect_set`, and `topn_array` / `topn_weighted`) give an IPV4 / IPV6 value,
//! or list element, when their (first) argument is one. [`KeepsAddresses`] wraps such an
//! aggregate under its own name and changes nothing but the result's field: everything else
//! (accumulators, statistics answers, the optimizer's min/max special cases, which go by
//! name and `is_descending`) is the wrapped aggregate's. A list's arrays are re-marked as
//! they leave the accumulator, since a list type names its element field.

use basalt_common::ip_address::{ip_family, IpFamily};
use datafusion::arrow::array::{ArrayRef, AsArray, BooleanArray, ListArray};
use datafusion::arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::{Result, ScalarValue};
use datafusion::logical_expr::expr::{
    AggregateFunction, AggregateFunctionParams, WindowFunctionParams,
};
use datafusion::logical_expr::function::{
    AccumulatorArgs, AggregateFunctionSimplification, StateFieldsArgs,
};
use datafusion::logical_expr::utils::AggregateOrderSensitivity;
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, Documentation, EmitTo, Expr, GroupsAccumulator,
    Operator, ReversedUDAF, SetMonotonicity, Signature, StatisticsArgs,
};
use std::sync::Arc;

/// `inner`, keeping the address type of its first argument.
pub fn keeps_addresses(inner: AggregateUDF) -> AggregateUDF {
    AggregateUDF::new_from_impl(KeepsAddresses { inner })
}

/// DataFusion's `max`, `min`, `array_agg` and `nth_value`, keeping the address type.
pub fn functions() -> Vec<AggregateUDF> {
    use datafusion::functions_aggregate::{array_agg, min_max, nth_value};
    [
        min_max::max_udaf(),
        min_max::min_udaf(),
        array_agg::array_agg_udaf(),
        nth_value::nth_value_udaf(),
    ]
    .into_iter()
    .map(|f| keeps_addresses(f.as_ref().clone()))
    .collect()
}

/// True for one of DataFusion's aggregates [`functions`] wraps, not wrapped (as DataFusion's
/// planner builds some itself).
pub fn is_unwrapped(f: &AggregateUDF) -> bool {
    let inner: &dyn std::any::Any = f.inner().as_ref();
    ["max", "min", "array_agg", "nth_value"].contains(&f.name()) && !inner.is::<KeepsAddresses>()
}

#[derive(Debug, PartialEq, Eq, Hash)]
pub struct KeepsAddresses {
    inner: AggregateUDF,
}

impl KeepsAddresses {
    fn wrap(inner: Arc<dyn AggregateUDFImpl>) -> Arc<dyn AggregateUDFImpl> {
        Arc::new(KeepsAddresses {
            inner: AggregateUDF::new_from_shared_impl(inner),
        })
    }
}

/// `field` (the inner result) marked with `family` where it holds the first argument's values.
fn marked(field: &Field, family: IpFamily) -> Option<Field> {
    let storage = family.arrow_type();
    match field.data_type() {
        t if *t == storage => Some(family.field(field.name(), field.is_nullable())),
        DataType::List(element) if *element.data_type() == storage => Some(Field::new(
            field.name(),
            DataType::List(Arc::new(
                family.field(element.name(), element.is_nullable()),
            )),
            field.is_nullable(),
        )),
        _ => None,
    }
}

/// The marked element field of a list result, if the result is one.
fn marked_element(return_field: &Field) -> Option<FieldRef> {
    match return_field.data_type() {
        DataType::List(element) if ip_family(element).is_some() => Some(element.clone()),
        _ => None,
    }
}

/// A list array with `element` as its element field.
pub(super) fn remark(array: ArrayRef, element: &FieldRef) -> Result<ArrayRef> {
    let Some(list) = array.as_list_opt::<i32>() else {
        return Ok(array);
    };
    let (_, offsets, values, nulls) = list.clone().into_parts();
    Ok(Arc::new(ListArray::try_new(
        element.clone(),
        offsets,
        values,
        nulls,
    )?))
}

pub(super) fn remark_scalar(value: ScalarValue, element: &FieldRef) -> Result<ScalarValue> {
    Ok(match value {
        ScalarValue::List(list) => {
            let array = remark(list as ArrayRef, element)?;
            ScalarValue::List(Arc::new(array.as_list::<i32>().clone()))
        }
        other => other,
    })
}

/// An accumulator whose list results get the marked element field.
#[derive(Debug)]
struct MarkedList {
    inner: Box<dyn Accumulator>,
    element: FieldRef,
}

fn accumulator(inner: Box<dyn Accumulator>, return_field: &Field) -> Box<dyn Accumulator> {
    match marked_element(return_field) {
        Some(element) => Box::new(MarkedList { inner, element }),
        None => inner,
    }
}

impl Accumulator for MarkedList {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        self.inner.update_batch(values)
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        remark_scalar(self.inner.evaluate()?, &self.element)
    }

    fn size(&self) -> usize {
        self.inner.size()
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        self.inner.state()
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        self.inner.merge_batch(states)
    }

    fn retract_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        self.inner.retract_batch(values)
    }

    fn supports_retract_batch(&self) -> bool {
        self.inner.supports_retract_batch()
    }
}

/// A groups accumulator whose list results get the marked element field.
struct MarkedLists {
    inner: Box<dyn GroupsAccumulator>,
    element: FieldRef,
}

impl GroupsAccumulator for MarkedLists {
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

    fn evaluate(&mut self, emit_to: EmitTo) -> Result<ArrayRef> {
        remark(self.inner.evaluate(emit_to)?, &self.element)
    }

    fn state(&mut self, emit_to: EmitTo) -> Result<Vec<ArrayRef>> {
        self.inner.state(emit_to)
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

impl AggregateUDFImpl for KeepsAddresses {
    fn name(&self) -> &str {
        self.inner.inner().name()
    }

    fn aliases(&self) -> &[String] {
        self.inner.inner().aliases()
    }

    fn schema_name(&self, params: &AggregateFunctionParams) -> Result<String> {
        self.inner.inner().schema_name(params)
    }

    fn human_display(&self, params: &AggregateFunctionParams) -> Result<String> {
        self.inner.inner().human_display(params)
    }

    fn window_function_schema_name(&self, params: &WindowFunctionParams) -> Result<String> {
        self.inner.inner().window_function_schema_name(params)
    }

    fn display_name(&self, params: &AggregateFunctionParams) -> Result<String> {
        self.inner.inner().display_name(params)
    }

    fn window_function_display_name(&self, params: &WindowFunctionParams) -> Result<String> {
        self.inner.inner().window_function_display_name(params)
    }

    fn signature(&self) -> &Signature {
        self.inner.inner().signature()
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        self.inner.inner().return_type(arg_types)
    }

    fn return_field(&self, arg_fields: &[FieldRef]) -> Result<FieldRef> {
        let field = self.inner.inner().return_field(arg_fields)?;
        let family = arg_fields.first().and_then(|f| ip_family(f));
        Ok(match family.and_then(|family| marked(&field, family)) {
            Some(marked) => Arc::new(marked),
            None => field,
        })
    }

    fn is_nullable(&self) -> bool {
        self.inner.inner().is_nullable()
    }

    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        let return_field = args.return_field.clone();
        Ok(accumulator(
            self.inner.inner().accumulator(args)?,
            &return_field,
        ))
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        self.inner.inner().state_fields(args)
    }

    fn groups_accumulator_supported(&self, args: AccumulatorArgs) -> bool {
        self.inner.inner().groups_accumulator_supported(args)
    }

    fn create_groups_accumulator(
        &self,
        args: AccumulatorArgs,
    ) -> Result<Box<dyn GroupsAccumulator>> {
        let element = marked_element(&args.return_field);
        let inner = self.inner.inner().create_groups_accumulator(args)?;
        Ok(match element {
            Some(element) => Box::new(MarkedLists { inner, element }),
            None => inner,
        })
    }

    fn create_sliding_accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        let return_field = args.return_field.clone();
        Ok(accumulator(
            self.inner.inner().create_sliding_accumulator(args)?,
            &return_field,
        ))
    }

    fn with_beneficial_ordering(
        self: Arc<Self>,
        beneficial_ordering: bool,
    ) -> Result<Option<Arc<dyn AggregateUDFImpl>>> {
        Ok(self
            .inner
            .inner()
            .clone()
            .with_beneficial_ordering(beneficial_ordering)?
            .map(KeepsAddresses::wrap))
    }

    fn order_sensitivity(&self) -> AggregateOrderSensitivity {
        self.inner.inner().order_sensitivity()
    }

    fn simplify(&self) -> Option<AggregateFunctionSimplification> {
        self.inner.inner().simplify()
    }

    fn simplify_expr_op_literal(
        &self,
        agg_function: &AggregateFunction,
        arg: &Expr,
        op: Operator,
        lit: &Expr,
        arg_is_left: bool,
    ) -> Result<Option<Expr>> {
        self.inner
            .simplify_expr_op_literal(agg_function, arg, op, lit, arg_is_left)
    }

    fn reverse_expr(&self) -> ReversedUDAF {
        match self.inner.inner().reverse_expr() {
            ReversedUDAF::Reversed(f) => {
                ReversedUDAF::Reversed(Arc::new(keeps_addresses(f.as_ref().clone())))
            }
            other => other,
        }
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        self.inner.inner().coerce_types(arg_types)
    }

    fn is_descending(&self) -> Option<bool> {
        self.inner.inner().is_descending()
    }

    fn value_from_stats(&self, statistics_args: &StatisticsArgs) -> Option<ScalarValue> {
        self.inner.inner().value_from_stats(statistics_args)
    }

    fn default_value(&self, data_type: &DataType) -> Result<ScalarValue> {
        self.inner.inner().default_value(data_type)
    }

    fn supports_null_handling_clause(&self) -> bool {
        self.inner.inner().supports_null_handling_clause()
    }

    fn supports_within_group_clause(&self) -> bool {
        self.inner.inner().supports_within_group_clause()
    }

    fn set_monotonicity(&self, data_type: &DataType) -> SetMonotonicity {
        self.inner.inner().set_monotonicity(data_type)
    }

    fn documentation(&self) -> Option<&Documentation> {
        self.inner.inner().documentation()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wrapped(name: &str) -> AggregateUDF {
        functions()
            .into_iter()
            .find(|f| f.name() == name)
            .expect("wrapped")
    }

    #[test]
    fn addresses_keep_their_family() {
        let v4: FieldRef = Arc::new(IpFamily::V4.field("a", true));
        let max = wrapped("max")
            .return_field(std::slice::from_ref(&v4))
            .expect("max");
        assert_eq!(ip_family(&max), Some(IpFamily::V4));
        let list = wrapped("array_agg").return_field(&[v4]).expect("array_agg");
        let DataType::List(element) = list.data_type() else {
            panic!("not a list: {list:?}")
        };
        assert_eq!(ip_family(element), Some(IpFamily::V4));
    }

    #[test]
    fn other_values_are_left_as_the_wrapped_aggregate_gives_them() {
        let plain: FieldRef = Arc::new(Field::new("a", DataType::UInt32, true));
        let ours = wrapped("max")
            .return_field(std::slice::from_ref(&plain))
            .expect("max");
        let theirs = datafusion::functions_aggregate::min_max::max_udaf()
            .return_field(&[plain])
            .expect("max");
        assert_eq!(ours, theirs);
        assert_eq!(wrapped("max").is_descending(), Some(true));
        assert_eq!(wrapped("min").is_descending(), Some(false));
    }
}
