//! SUM over integers never wraps: Basalt's `sum` returns DECIMAL(38, 0) for integer arguments
//! (MySQL's SUM of an integer is a DECIMAL, Doris's SUM of a BIGINT a LARGEINT) and adds in 128
//! bits, which 64-bit values cannot overflow below 2^64 rows. Every other argument type is
//! DataFusion's own SUM, unchanged; for integers its DECIMAL accumulators run on the argument cast
//! to DECIMAL(38, 0) batch by batch. SUM of a DECIMAL wider than 38 digits adds with checks
//! (DataFusion's would wrap in 256 bits): a total past its precision is error 1690.
//!
//! `SUM(x + c)` with a literal `c` is checked like any integer addition, except where two or more
//! such SUMs of one aggregate share `x` (ClickBench's Q29): the checked-arithmetic rule then
//! computes them as `SUM(x) + c * COUNT(x)` in DECIMAL(38, 0) ([`split_linear_sums`]), so no
//! row is added at all. (DataFusion's own rewrite of that shape would add a DECIMAL and an
//! integer, so it is not used for integers.)

use basalt_common::BasaltError;
use datafusion::arrow::array::{Array, ArrayRef, BooleanArray, Decimal256Array};
use datafusion::arrow::compute::cast as cast_array;
use datafusion::arrow::datatypes::{i256, Decimal256Type, DecimalType};
use datafusion::arrow::datatypes::{DataType, FieldRef};
use datafusion::common::tree_node::Transformed;
use datafusion::common::{Column, Result, ScalarValue};
use datafusion::error::DataFusionError;
use datafusion::functions_aggregate::count::count;
use datafusion::functions_aggregate::sum::Sum;
use datafusion::logical_expr::expr::AggregateFunction;
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::utils::AggregateOrderSensitivity;
use datafusion::logical_expr::{
    cast, Accumulator, Aggregate, AggregateUDF, AggregateUDFImpl, Documentation, EmitTo, Expr,
    GroupsAccumulator, LogicalPlan, Operator, Projection, ReversedUDAF, SetMonotonicity, Signature,
    StatisticsArgs,
};

/// The type integer SUMs return and add in.
const WIDE: DataType = DataType::Decimal128(38, 0);

/// Basalt's `sum`, replacing DataFusion's.
pub fn function() -> AggregateUDF {
    AggregateUDF::new_from_impl(WideSum::default())
}

#[derive(Debug, Default, PartialEq, Eq, Hash)]
struct WideSum {
    inner: Sum,
}

/// Whether the (coerced) argument is an integer, i.e. whether the wide path applies.
fn integer_argument(fields: &[FieldRef]) -> bool {
    fields.first().is_some_and(|f| is_integer(f.data_type()))
}

impl AggregateUDFImpl for WideSum {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn aliases(&self) -> &[String] {
        self.inner.aliases()
    }

    fn signature(&self) -> &Signature {
        // Its own coercion: DataFusion's SUM's, and DATE / DATETIME / TIME values as they are.
        static SIGNATURE: std::sync::OnceLock<Signature> = std::sync::OnceLock::new();
        SIGNATURE.get_or_init(|| Signature::user_defined(self.inner.signature().volatility))
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        // A DATE, DATETIME or TIME adds its MySQL number ([`crate::TemporalNumbers`] converts
        // it before coercion); until then it is taken as it is.
        let sum = AggregateUDF::new_from_impl(Sum::default());
        crate::date_number::aggregate_argument_types(&sum, arg_types)
    }

    fn return_field(&self, arg_fields: &[FieldRef]) -> Result<FieldRef> {
        let types = crate::date_number::aggregate_result_argument_types(arg_fields);
        let t = self.return_type(&types)?;
        Ok(std::sync::Arc::new(
            datafusion::arrow::datatypes::Field::new(self.name(), t, true),
        ))
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        match arg_types.first() {
            Some(t) if is_integer(t) => Ok(WIDE),
            _ => self.inner.return_type(arg_types),
        }
    }

    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        if let Some((precision, scale)) = decimal256_sum(&args) {
            return Ok(Box::new(Decimal256Sum::new(precision, scale)));
        }
        let inner = self.inner.accumulator(args.clone())?;
        Ok(if integer_argument(args.expr_fields) {
            Box::new(WideAccumulator(inner))
        } else {
            inner
        })
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        self.inner.state_fields(args)
    }

    fn groups_accumulator_supported(&self, args: AccumulatorArgs) -> bool {
        decimal256_sum(&args).is_some() || self.inner.groups_accumulator_supported(args)
    }

    fn create_groups_accumulator(
        &self,
        args: AccumulatorArgs,
    ) -> Result<Box<dyn GroupsAccumulator>> {
        if let Some((precision, scale)) = decimal256_sum(&args) {
            return Ok(Box::new(Decimal256GroupsSum::new(precision, scale)));
        }
        let inner = self.inner.create_groups_accumulator(args.clone())?;
        Ok(if integer_argument(args.expr_fields) {
            Box::new(WideGroupsAccumulator(inner))
        } else {
            inner
        })
    }

    fn create_sliding_accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        let inner = self.inner.create_sliding_accumulator(args.clone())?;
        Ok(if integer_argument(args.expr_fields) {
            Box::new(WideAccumulator(inner))
        } else {
            inner
        })
    }

    fn simplify_expr_op_literal(
        &self,
        agg_function: &AggregateFunction,
        arg: &Expr,
        op: Operator,
        lit: &Expr,
        arg_is_left: bool,
    ) -> Result<Option<Expr>> {
        let Expr::Literal(value, _) = lit else {
            return Ok(None);
        };
        if !is_integer(&value.data_type()) {
            return self
                .inner
                .simplify_expr_op_literal(agg_function, arg, op, lit, arg_is_left);
        }
        // Integer offsets are split by `split_linear_sums` instead.
        Ok(None)
    }

    fn reverse_expr(&self) -> ReversedUDAF {
        self.inner.reverse_expr()
    }

    fn order_sensitivity(&self) -> AggregateOrderSensitivity {
        self.inner.order_sensitivity()
    }

    fn value_from_stats(&self, statistics_args: &StatisticsArgs) -> Option<ScalarValue> {
        self.inner.value_from_stats(statistics_args)
    }

    fn set_monotonicity(&self, data_type: &DataType) -> SetMonotonicity {
        self.inner.set_monotonicity(data_type)
    }

    fn documentation(&self) -> Option<&Documentation> {
        self.inner.documentation()
    }
}

/// The argument batch in DECIMAL(38, 0).
fn widen(values: &[ArrayRef]) -> Result<Vec<ArrayRef>> {
    values.iter().map(|v| Ok(cast_array(v, &WIDE)?)).collect()
}

/// DataFusion's DECIMAL SUM accumulator fed integer batches widened first.
#[derive(Debug)]
struct WideAccumulator(Box<dyn Accumulator>);

impl Accumulator for WideAccumulator {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        self.0.update_batch(&widen(values)?)
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        self.0.evaluate()
    }

    fn size(&self) -> usize {
        self.0.size()
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        self.0.state()
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        self.0.merge_batch(states)
    }

    fn retract_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        self.0.retract_batch(&widen(values)?)
    }

    fn supports_retract_batch(&self) -> bool {
        self.0.supports_retract_batch()
    }
}

/// The grouped form of [`WideAccumulator`].
struct WideGroupsAccumulator(Box<dyn GroupsAccumulator>);

impl GroupsAccumulator for WideGroupsAccumulator {
    fn update_batch(
        &mut self,
        values: &[ArrayRef],
        group_indices: &[usize],
        opt_filter: Option<&BooleanArray>,
        total_num_groups: usize,
    ) -> Result<()> {
        self.0
            .update_batch(&widen(values)?, group_indices, opt_filter, total_num_groups)
    }

    fn evaluate(&mut self, emit_to: EmitTo) -> Result<ArrayRef> {
        self.0.evaluate(emit_to)
    }

    fn state(&mut self, emit_to: EmitTo) -> Result<Vec<ArrayRef>> {
        self.0.state(emit_to)
    }

    fn merge_batch(
        &mut self,
        values: &[ArrayRef],
        group_indices: &[usize],
        total_num_groups: usize,
    ) -> Result<()> {
        self.0.merge_batch(values, group_indices, total_num_groups)
    }

    fn convert_to_state(
        &self,
        values: &[ArrayRef],
        opt_filter: Option<&BooleanArray>,
    ) -> Result<Vec<ArrayRef>> {
        self.0.convert_to_state(&widen(values)?, opt_filter)
    }

    fn size(&self) -> usize {
        self.0.size()
    }
}

/// The result DECIMAL(p, s) of a SUM (not DISTINCT) of a 256-bit DECIMAL: DataFusion's own
/// accumulators add those wrapping, and keep a total past the result's precision.
fn decimal256_sum(args: &AccumulatorArgs) -> Option<(u8, i8)> {
    match (args.return_field.data_type(), args.is_distinct) {
        (DataType::Decimal256(p, s), false) => Some((*p, *s)),
        _ => None,
    }
}

fn sum_out_of_range(precision: u8, scale: i8) -> DataFusionError {
    DataFusionError::External(Box::new(BasaltError::NumericOverflow(format!(
        "DECIMAL value is out of range in SUM (DECIMAL({precision}, {scale}))"
    ))))
}

/// The values of a 256-bit DECIMAL argument or state column.
fn decimal256_values(a: &ArrayRef) -> Result<&Decimal256Array> {
    a.as_any()
        .downcast_ref::<Decimal256Array>()
        .ok_or_else(|| DataFusionError::Internal(format!("SUM of {} as DECIMAL", a.data_type())))
}

/// Totals as a DECIMAL(p, s) array (NULL where nothing was added); with `check`, a total past p
/// digits is 1690.
fn decimal256_totals(
    totals: Vec<Option<i256>>,
    precision: u8,
    scale: i8,
    check: bool,
) -> Result<ArrayRef> {
    if check
        && totals
            .iter()
            .flatten()
            .any(|v| !Decimal256Type::is_valid_decimal_precision(*v, precision))
    {
        return Err(sum_out_of_range(precision, scale));
    }
    Ok(std::sync::Arc::new(
        Decimal256Array::from(totals).with_precision_and_scale(precision, scale)?,
    ))
}

/// SUM of a 256-bit DECIMAL with checked additions: a total that leaves 256 bits or the
/// result's precision is error 1690, never a wrapped or unprintable value.
#[derive(Debug)]
struct Decimal256Sum {
    total: Option<i256>,
    precision: u8,
    scale: i8,
}

impl Decimal256Sum {
    fn new(precision: u8, scale: i8) -> Self {
        Decimal256Sum {
            total: None,
            precision,
            scale,
        }
    }

    fn add(&mut self, values: &ArrayRef) -> Result<()> {
        for v in decimal256_values(values)?.iter().flatten() {
            let total = self.total.unwrap_or(i256::ZERO);
            self.total = Some(
                total
                    .checked_add(v)
                    .ok_or_else(|| sum_out_of_range(self.precision, self.scale))?,
            );
        }
        Ok(())
    }
}

impl Accumulator for Decimal256Sum {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        match values.first() {
            Some(v) => self.add(v),
            None => Ok(()),
        }
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        let totals = decimal256_totals(vec![self.total], self.precision, self.scale, true)?;
        ScalarValue::try_from_array(&totals, 0)
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self)
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        Ok(vec![ScalarValue::Decimal256(
            self.total,
            self.precision,
            self.scale,
        )])
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        self.update_batch(states)
    }
}

/// The grouped form of [`Decimal256Sum`].
struct Decimal256GroupsSum {
    totals: Vec<Option<i256>>,
    precision: u8,
    scale: i8,
}

impl Decimal256GroupsSum {
    fn new(precision: u8, scale: i8) -> Self {
        Decimal256GroupsSum {
            totals: vec![],
            precision,
            scale,
        }
    }

    fn add(
        &mut self,
        values: &ArrayRef,
        group_indices: &[usize],
        opt_filter: Option<&BooleanArray>,
        total_num_groups: usize,
    ) -> Result<()> {
        let values = decimal256_values(values)?;
        if self.totals.len() < total_num_groups {
            self.totals.resize(total_num_groups, None);
        }
        for (row, &group) in group_indices.iter().enumerate() {
            let selected = opt_filter.is_none_or(|f| f.is_valid(row) && f.value(row));
            if !selected || values.is_null(row) {
                continue;
            }
            let total = self.totals[group].unwrap_or(i256::ZERO);
            self.totals[group] = Some(
                total
                    .checked_add(values.value(row))
                    .ok_or_else(|| sum_out_of_range(self.precision, self.scale))?,
            );
        }
        Ok(())
    }
}

impl GroupsAccumulator for Decimal256GroupsSum {
    fn update_batch(
        &mut self,
        values: &[ArrayRef],
        group_indices: &[usize],
        opt_filter: Option<&BooleanArray>,
        total_num_groups: usize,
    ) -> Result<()> {
        match values.first() {
            Some(v) => self.add(v, group_indices, opt_filter, total_num_groups),
            None => Ok(()),
        }
    }

    fn evaluate(&mut self, emit_to: EmitTo) -> Result<ArrayRef> {
        let totals = emit_to.take_needed(&mut self.totals);
        decimal256_totals(totals, self.precision, self.scale, true)
    }

    fn state(&mut self, emit_to: EmitTo) -> Result<Vec<ArrayRef>> {
        // A partial total may pass the precision and come back within it when merged.
        let totals = emit_to.take_needed(&mut self.totals);
        Ok(vec![decimal256_totals(
            totals,
            self.precision,
            self.scale,
            false,
        )?])
    }

    fn merge_batch(
        &mut self,
        values: &[ArrayRef],
        group_indices: &[usize],
        total_num_groups: usize,
    ) -> Result<()> {
        self.update_batch(values, group_indices, None, total_num_groups)
    }

    fn convert_to_state(
        &self,
        values: &[ArrayRef],
        opt_filter: Option<&BooleanArray>,
    ) -> Result<Vec<ArrayRef>> {
        let values = decimal256_values(
            values
                .first()
                .ok_or_else(|| DataFusionError::Internal("SUM without an argument".into()))?,
        )?;
        let totals = (0..values.len())
            .map(|row| {
                let selected = opt_filter.is_none_or(|f| f.is_valid(row) && f.value(row));
                (selected && values.is_valid(row)).then(|| values.value(row))
            })
            .collect();
        Ok(vec![decimal256_totals(
            totals,
            self.precision,
            self.scale,
            false,
        )?])
    }

    fn size(&self) -> usize {
        self.totals.capacity() * std::mem::size_of::<Option<i256>>()
    }
}

/// An Aggregate whose integer `SUM(x ± literal)`s share `x` with another such SUM, rewritten
/// into `SUM(x)` and `COUNT(x)` below a Projection computing `SUM(x) ± literal * COUNT(x)` in
/// DECIMAL(38, 0) under the original names: exact, and one SUM instead of many (ClickBench's
/// Q29 adds 90 offsets to one column). Anything else unchanged.
pub(crate) fn split_linear_sums(plan: LogicalPlan) -> Result<Transformed<LogicalPlan>> {
    let LogicalPlan::Aggregate(aggregate) = &plan else {
        return Ok(Transformed::no(plan));
    };
    let linear: Vec<Option<LinearSum>> = aggregate.aggr_expr.iter().map(linear_sum).collect();
    let mut shared: Vec<Expr> = vec![];
    for (i, l) in linear.iter().enumerate() {
        let Some(l) = l else { continue };
        let again = linear[i + 1..].iter().flatten().any(|other| other.x == l.x);
        if again && !shared.contains(&l.x) {
            shared.push(l.x.clone());
        }
    }
    if shared.is_empty() {
        return Ok(Transformed::no(plan));
    }
    let LogicalPlan::Aggregate(aggregate) = plan else {
        unreachable!("matched above")
    };
    let sum_name = |k: usize| format!("__basalt_linear_sum_{k}");
    let count_name = |k: usize| format!("__basalt_linear_count_{k}");
    let mut aggr_expr = vec![];
    let mut kept = vec![];
    for (e, l) in aggregate.aggr_expr.iter().zip(&linear) {
        match l {
            Some(l) if shared.contains(&l.x) => kept.push(None),
            _ => {
                kept.push(Some(aggr_expr.len()));
                aggr_expr.push(e.clone());
            }
        }
    }
    let base = aggr_expr.len();
    for (k, x) in shared.iter().enumerate() {
        let sum = linear
            .iter()
            .flatten()
            .find(|l| l.x == *x)
            .map(|l| l.sum.clone())
            .unwrap_or_else(|| std::sync::Arc::new(function()));
        aggr_expr.push(
            Expr::AggregateFunction(AggregateFunction::new_udf(
                sum,
                vec![x.clone()],
                false,
                None,
                vec![],
                None,
            ))
            .alias(sum_name(k)),
        );
        aggr_expr.push(count(x.clone()).alias(count_name(k)));
    }
    let group_fields = aggregate.schema.fields().len() - aggregate.aggr_expr.len();
    let original = aggregate.schema.clone();
    let input = LogicalPlan::Aggregate(Aggregate::try_new(
        aggregate.input,
        aggregate.group_expr,
        aggr_expr,
    )?);
    let column = |i: usize| Expr::Column(Column::from(input.schema().qualified_field(i)));
    let mut projection: Vec<Expr> = (0..group_fields).map(column).collect();
    for (j, l) in linear.iter().enumerate() {
        let (_, field) = original.qualified_field(group_fields + j);
        projection.push(match (kept[j], l) {
            (Some(at), _) => column(group_fields + at),
            (None, Some(l)) => {
                let k = shared.iter().position(|x| *x == l.x).unwrap_or_default();
                let sum = column(group_fields + base + 2 * k);
                let count = cast(column(group_fields + base + 2 * k + 1), WIDE);
                let offset = Expr::Literal(ScalarValue::Decimal128(Some(l.offset), 38, 0), None);
                (sum + offset * count).alias(field.name())
            }
            (None, None) => unreachable!("only linear SUMs are split"),
        });
    }
    Ok(Transformed::yes(LogicalPlan::Projection(
        Projection::try_new(projection, std::sync::Arc::new(input))?,
    )))
}

/// `SUM(x ± c)` on integers, as `x` and the signed offset `c`.
struct LinearSum {
    sum: std::sync::Arc<AggregateUDF>,
    x: Expr,
    offset: i128,
}

/// The `SUM(checked_add(x, c))` / `SUM(checked_add(c, x))` / `SUM(checked_sub(x, c))` (possibly
/// aliased) that the checked-arithmetic rule made of an integer `SUM(x ± c)`.
fn linear_sum(e: &Expr) -> Option<LinearSum> {
    let e = match e {
        Expr::Alias(alias) => alias.expr.as_ref(),
        e => e,
    };
    let Expr::AggregateFunction(agg) = e else {
        return None;
    };
    let p = &agg.params;
    if agg.func.name() != "sum"
        || p.distinct
        || p.filter.is_some()
        || !p.order_by.is_empty()
        || p.null_treatment.is_some()
    {
        return None;
    }
    let [Expr::ScalarFunction(call)] = p.args.as_slice() else {
        return None;
    };
    let integer = |v: &ScalarValue| -> Option<i128> {
        match v {
            ScalarValue::Int64(Some(c)) => Some(i128::from(*c)),
            ScalarValue::UInt64(Some(c)) => Some(i128::from(*c)),
            _ => None,
        }
    };
    let (x, offset) = match (call.func.name(), call.args.as_slice()) {
        ("checked_add", [x, Expr::Literal(c, _)]) | ("checked_add", [Expr::Literal(c, _), x]) => {
            (x, integer(c)?)
        }
        ("checked_sub", [x, Expr::Literal(c, _)]) => (x, -integer(c)?),
        _ => return None,
    };
    if matches!(x, Expr::Literal(..)) || x.is_volatile() {
        return None;
    }
    Some(LinearSum {
        sum: agg.func.clone(),
        x: x.clone(),
        offset,
    })
}

fn is_integer(t: &DataType) -> bool {
    matches!(
        t,
        DataType::Int8
            | DataType::Int16
            | DataType::Int32
            | DataType::Int64
            | DataType::UInt8
            | DataType::UInt16
            | DataType::UInt32
            | DataType::UInt64
    )
}
