//! Doris's `_foreach` aggregate combinator: `agg_foreach(arr, ..)` takes ARRAY arguments and
//! returns an ARRAY whose i-th element is `agg` over the i-th elements of every row's arrays.
//!
//! What Doris does (docs "Aggregate function combinators", BE `aggregate_function_foreach.h`):
//! - a row whose array is shorter does not take part in the positions past its end; a row
//!   where an array argument is NULL takes part in nothing; NULL elements reach the inner
//!   aggregate (which usually skips them; `count` does not count them);
//! - the arrays of one row must all have the same length, else the query fails;
//! - the result is `ARRAY<agg's result type>` with nullable elements; a group whose rows are all
//!   NULL (or that has no rows) gives NULL, while rows of empty arrays give `[]`.
//!
//! How it is built: [`ForEach`] wraps any [`AggregateUDF`] and keeps one inner [`Accumulator`]
//! per array position, grown as longer arrays appear, each fed the i-th elements (taken from
//! the list arrays' values). Its state is one `List` column per inner state column, holding the
//! inner states position by position (NULL while no row was seen), so partial and final
//! aggregation, and plan fragments on other nodes, work as for any aggregate. Arguments that
//! are not arrays (`topn_foreach(a, 3)`, a separator) are given unchanged to every position.
//!
//! How names resolve: eagerly. [`functions`] builds `<name>_foreach` for every aggregate name
//! and alias a registry holds, and [`register`] adds them once all other aggregates are
//! registered (the frontend's sessions and the backends that decode plan fragments both do, so a
//! fragment naming `sum_foreach` decodes anywhere). On-demand resolution in the SQL context
//! provider would not reach the backends, which look aggregates up by name in their registry.
//! Doris aggregates that the frontend spells as other calls (`collect_list`, `group_concat`)
//! are registered as aggregates of their own too, which these wrap. An `ORDER BY` inside a
//! `_foreach` call is not passed to the inner aggregate.

use arrow::array::{new_empty_array, Array, ArrayRef, AsArray, ListArray, UInt64Array};
use arrow::buffer::OffsetBuffer;
use arrow::compute::{cast, take};
use arrow::datatypes::{DataType, Field, FieldRef, Schema};
use datafusion::common::{exec_err, plan_err, Result, ScalarValue};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::type_coercion::functions::fields_with_udf;
use datafusion::logical_expr::utils::AggregateOrderSensitivity;
use datafusion::logical_expr::{Accumulator, AggregateUDF, AggregateUDFImpl, Signature};
use datafusion::physical_expr::expressions::{Column, Literal};
use datafusion::physical_expr::PhysicalExpr;
use datafusion::prelude::SessionContext;
use std::sync::Arc;

/// The suffix that turns an aggregate into its per-position form.
pub const SUFFIX: &str = "_foreach";

/// Aggregates that must not be wrapped (`grouping` is planned specially).
const NOT_WRAPPED: &[&str] = &["grouping"];

/// `<name>_foreach` for every aggregate name and alias `ctx` knows (except those already a
/// `_foreach`).
pub fn functions(ctx: &SessionContext) -> Vec<AggregateUDF> {
    let state = ctx.state_ref();
    let state = state.read();
    let registered = state.aggregate_functions();
    let mut wrapped: Vec<(&String, &Arc<AggregateUDF>)> = registered
        .iter()
        .filter(|(n, _)| !n.ends_with(SUFFIX) && !NOT_WRAPPED.contains(&n.as_str()))
        .collect();
    wrapped.sort_by_key(|(n, _)| *n);
    wrapped
        .into_iter()
        .map(|(name, f)| ForEach::udaf(name, f))
        .collect()
}

/// Registers [`functions`] on `ctx`; call after every other aggregate is registered.
pub fn register(ctx: &SessionContext) {
    for f in functions(ctx) {
        ctx.register_udaf(f);
    }
}

/// `agg_foreach`: `inner` applied position by position over array arguments.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct ForEach {
    name: String,
    inner: AggregateUDF,
    signature: Signature,
}

impl ForEach {
    /// `<base>_foreach` over `inner`.
    pub fn udaf(base: &str, inner: &AggregateUDF) -> AggregateUDF {
        AggregateUDF::new_from_impl(ForEach {
            name: format!("{base}{SUFFIX}"),
            inner: inner.clone(),
            signature: Signature::user_defined(inner.signature().volatility),
        })
    }

    /// The fields the inner aggregate sees: an array argument's element field, any other
    /// argument's own field.
    fn inner_fields(&self, fields: &[FieldRef]) -> Result<Vec<FieldRef>> {
        if fields.is_empty() {
            return plan_err!("{} needs at least one ARRAY argument", self.name);
        }
        if !fields
            .iter()
            .any(|f| element_field(f.data_type()).is_some())
        {
            let types: Vec<String> = fields.iter().map(|f| f.data_type().to_string()).collect();
            return plan_err!(
                "{} takes ARRAY arguments, not ({})",
                self.name,
                types.join(", ")
            );
        }
        Ok(fields
            .iter()
            .map(|f| element_field(f.data_type()).unwrap_or_else(|| f.clone()))
            .collect())
    }

    fn inner_return_field(&self, fields: &[FieldRef]) -> Result<FieldRef> {
        self.inner.return_field(&self.inner_fields(fields)?)
    }
}

/// The element field of a list type.
fn element_field(t: &DataType) -> Option<FieldRef> {
    match t {
        DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) => {
            Some(f.clone())
        }
        _ => None,
    }
}

/// `List<t>` with nullable elements.
fn list_of(t: &DataType) -> DataType {
    DataType::List(Arc::new(Field::new_list_field(t.clone(), true)))
}

impl AggregateUDFImpl for ForEach {
    fn name(&self) -> &str {
        &self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    /// The inner aggregate's coercion applied to the element types; arrays stay arrays.
    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        let fields: Vec<FieldRef> = arg_types
            .iter()
            .enumerate()
            .map(|(i, t)| Arc::new(Field::new(format!("arg{i}"), t.clone(), true)))
            .collect();
        let coerced = fields_with_udf(&self.inner_fields(&fields)?, &self.inner)?;
        Ok(arg_types
            .iter()
            .zip(coerced)
            .map(|(t, c)| match element_field(t) {
                Some(_) => list_of(c.data_type()),
                None => c.data_type().clone(),
            })
            .collect())
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        let fields: Vec<FieldRef> = arg_types
            .iter()
            .enumerate()
            .map(|(i, t)| Arc::new(Field::new(format!("arg{i}"), t.clone(), true)))
            .collect();
        Ok(list_of(self.inner_return_field(&fields)?.data_type()))
    }

    fn return_field(&self, arg_fields: &[FieldRef]) -> Result<FieldRef> {
        let inner = self.inner_return_field(arg_fields)?;
        Ok(Arc::new(Field::new(
            self.name(),
            list_of(inner.data_type()),
            true,
        )))
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        let input_fields = self.inner_fields(args.input_fields)?;
        let return_field = self.inner.return_field(&input_fields)?;
        let inner = self.inner.state_fields(StateFieldsArgs {
            name: args.name,
            input_fields: &input_fields,
            return_field,
            ordering_fields: &[],
            is_distinct: args.is_distinct,
        })?;
        Ok(inner
            .iter()
            .map(|f| Arc::new(Field::new(f.name(), list_of(f.data_type()), true)))
            .collect())
    }

    fn accumulator(&self, acc_args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        let spec = InnerSpec::new(self, &acc_args)?;
        Ok(Box::new(ForEachAccumulator {
            spec: Arc::new(spec),
            positions: Vec::new(),
            seen: false,
        }))
    }

    fn order_sensitivity(&self) -> AggregateOrderSensitivity {
        AggregateOrderSensitivity::Insensitive
    }

    fn default_value(&self, data_type: &DataType) -> Result<ScalarValue> {
        ScalarValue::try_from(data_type)
    }
}

/// What it takes to make an inner accumulator for one more position.
#[derive(Debug)]
struct InnerSpec {
    /// The combinator's name, for errors.
    name: String,
    inner: AggregateUDF,
    /// One field per argument: an array argument's element field, any other argument's own.
    schema: Schema,
    exprs: Vec<Arc<dyn PhysicalExpr>>,
    fields: Vec<FieldRef>,
    return_field: FieldRef,
    /// Which arguments are arrays.
    arrays: Vec<bool>,
    ignore_nulls: bool,
    distinct: bool,
    /// The inner result and state types (what a position's values are built as).
    result_type: DataType,
    state_types: Vec<DataType>,
}

impl InnerSpec {
    fn new(f: &ForEach, args: &AccumulatorArgs) -> Result<InnerSpec> {
        let arrays: Vec<bool> = args
            .expr_fields
            .iter()
            .map(|f| element_field(f.data_type()).is_some())
            .collect();
        let fields = f.inner_fields(args.expr_fields)?;
        // Literal arguments (a separator, a count) stay literals: some aggregates read them
        // when they start.
        let exprs = args
            .exprs
            .iter()
            .zip(&fields)
            .enumerate()
            .map(|(i, (e, field))| -> Arc<dyn PhysicalExpr> {
                if !arrays[i] && e.downcast_ref::<Literal>().is_some() {
                    e.clone()
                } else {
                    Arc::new(Column::new(field.name(), i))
                }
            })
            .collect();
        let return_field = f.inner.return_field(&fields)?;
        let distinct = args.is_distinct;
        let state_types = f
            .inner
            .state_fields(StateFieldsArgs {
                name: args.name,
                input_fields: &fields,
                return_field: return_field.clone(),
                ordering_fields: &[],
                is_distinct: distinct,
            })?
            .iter()
            .map(|f| f.data_type().clone())
            .collect();
        Ok(InnerSpec {
            name: f.name.clone(),
            inner: f.inner.clone(),
            schema: Schema::new(fields.clone()),
            exprs,
            result_type: return_field.data_type().clone(),
            return_field,
            fields,
            arrays,
            ignore_nulls: args.ignore_nulls,
            distinct,
            state_types,
        })
    }

    fn accumulator(&self) -> Result<Box<dyn Accumulator>> {
        self.inner.accumulator(AccumulatorArgs {
            return_field: self.return_field.clone(),
            schema: &self.schema,
            ignore_nulls: self.ignore_nulls,
            order_bys: &[],
            is_reversed: false,
            name: &self.name,
            is_distinct: self.distinct,
            exprs: &self.exprs,
            expr_fields: &self.fields,
        })
    }
}

#[derive(Debug)]
struct ForEachAccumulator {
    spec: Arc<InnerSpec>,
    /// One inner accumulator per array position seen so far.
    positions: Vec<Box<dyn Accumulator>>,
    /// Whether any row (or merged state) with non-NULL arrays arrived.
    seen: bool,
}

impl ForEachAccumulator {
    fn grow(&mut self, len: usize) -> Result<()> {
        while self.positions.len() < len {
            self.positions.push(self.spec.accumulator()?);
        }
        Ok(())
    }

    /// Feeds `rows` of `columns` position by position: position p's inner accumulator gets
    /// the p-th elements of the list columns (and the same rows of the others) from the rows
    /// whose arrays reach p; `merge` says whether they are states or arguments.
    fn by_position(
        &mut self,
        columns: &[Input],
        rows: impl Iterator<Item = usize>,
        merge: bool,
    ) -> Result<()> {
        let lengths = row_lengths(&self.spec.name, columns)?;
        // Rows at each position: a row of length n is at positions 0..n.
        let mut at: Vec<Vec<usize>> = Vec::new();
        for r in rows {
            let Some(n) = lengths[r] else { continue };
            self.seen = true;
            if at.len() < n {
                at.resize_with(n, Vec::new);
            }
            for rows_at in &mut at[..n] {
                rows_at.push(r);
            }
        }
        self.grow(at.len())?;
        for (p, rows_at) in at.iter().enumerate() {
            let values = columns
                .iter()
                .map(|c| c.at_position(rows_at, p))
                .collect::<Result<Vec<_>>>()?;
            if merge {
                self.positions[p].merge_batch(&values)?;
            } else {
                self.positions[p].update_batch(&values)?;
            }
        }
        Ok(())
    }
}

/// An input column: a list column's positions, or a column whose rows every position shares.
enum Input<'a> {
    List(&'a ListArray),
    Shared(&'a ArrayRef),
}

impl Input<'_> {
    /// The values at position `p` of `rows`.
    fn at_position(&self, rows: &[usize], p: usize) -> Result<ArrayRef> {
        let indices: UInt64Array = match self {
            Input::List(l) => {
                let offsets = l.value_offsets();
                rows.iter()
                    .map(|&r| (offsets[r] as usize + p) as u64)
                    .collect()
            }
            Input::Shared(_) => rows.iter().map(|&r| r as u64).collect(),
        };
        let values = match self {
            Input::List(l) => l.values(),
            Input::Shared(a) => *a,
        };
        Ok(take(values.as_ref(), &indices, None)?)
    }
}

/// Each row's array length (None where an array is NULL); the lists of a row must agree.
fn row_lengths(name: &str, columns: &[Input]) -> Result<Vec<Option<usize>>> {
    let lists: Vec<&ListArray> = columns
        .iter()
        .filter_map(|c| match c {
            Input::List(l) => Some(*l),
            Input::Shared(_) => None,
        })
        .collect();
    let Some(first) = lists.first() else {
        return exec_err!("{name} got no ARRAY argument");
    };
    (0..first.len())
        .map(|r| {
            if lists.iter().any(|l| l.is_null(r)) {
                return Ok(None);
            }
            let n = first.value_length(r);
            if lists.iter().any(|l| l.value_length(r) != n) {
                return exec_err!(
                    "Arrays passed to {name} aggregate function have different sizes"
                );
            }
            Ok(Some(n as usize))
        })
        .collect()
}

/// `a` as a list column, or an error naming the function and the type it got.
fn as_list<'a>(name: &str, a: &'a ArrayRef) -> Result<&'a ListArray> {
    match a.as_list_opt::<i32>() {
        Some(l) => Ok(l),
        None => exec_err!("{name} expects an ARRAY argument, got {}", a.data_type()),
    }
}

/// One list value holding `values` (built as `t`, cast to it where an inner aggregate's
/// scalars come out slightly differently typed).
fn list_value(values: Vec<ScalarValue>, t: &DataType) -> Result<ScalarValue> {
    let items = if values.is_empty() {
        new_empty_array(t)
    } else {
        let a = ScalarValue::iter_to_array(values)?;
        if a.data_type() == t {
            a
        } else {
            cast(&a, t)?
        }
    };
    let field = Arc::new(Field::new_list_field(t.clone(), true));
    let offsets = OffsetBuffer::from_lengths([items.len()]);
    let list = ListArray::try_new(field, offsets, items, None)?;
    Ok(ScalarValue::List(Arc::new(list)))
}

impl Accumulator for ForEachAccumulator {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let name = self.spec.name.clone();
        let arrays = self.spec.arrays.clone();
        let columns = values
            .iter()
            .zip(&arrays)
            .map(|(v, is_array)| {
                Ok(match is_array {
                    true => Input::List(as_list(&name, v)?),
                    false => Input::Shared(v),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let rows = values.first().map_or(0, |v| v.len());
        self.by_position(&columns, 0..rows, false)
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let name = self.spec.name.clone();
        let columns = states
            .iter()
            .map(|s| Ok(Input::List(as_list(&name, s)?)))
            .collect::<Result<Vec<_>>>()?;
        let rows = states.first().map_or(0, |s| s.len());
        self.by_position(&columns, 0..rows, true)
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        let types = self.spec.state_types.clone();
        if !self.seen {
            return types
                .iter()
                .map(|t| ScalarValue::try_from(&list_of(t)))
                .collect();
        }
        let mut columns: Vec<Vec<ScalarValue>> = vec![Vec::new(); types.len()];
        for acc in &mut self.positions {
            let state = acc.state()?;
            if state.len() != types.len() {
                return exec_err!(
                    "{}: the inner aggregate gave {} state values, expected {}",
                    self.spec.name,
                    state.len(),
                    types.len()
                );
            }
            for (column, value) in columns.iter_mut().zip(state) {
                column.push(value);
            }
        }
        columns
            .into_iter()
            .zip(&types)
            .map(|(values, t)| list_value(values, t))
            .collect()
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        let t = self.spec.result_type.clone();
        if !self.seen {
            return ScalarValue::try_from(&list_of(&t));
        }
        let values = self
            .positions
            .iter_mut()
            .map(|acc| acc.evaluate())
            .collect::<Result<Vec<_>>>()?;
        list_value(values, &t)
    }

    fn size(&self) -> usize {
        size_of_val(self)
            + self.positions.iter().map(|a| a.size()).sum::<usize>()
            + self.positions.capacity() * size_of::<Box<dyn Accumulator>>()
    }
}

#[cfg(test)]
mod tests {
    use crate::register_all;
    use arrow::array::{ArrayRef, Int32Array, ListArray, RecordBatch};
    use arrow::datatypes::{DataType, Field, Int64Type, Schema};
    use arrow::util::pretty::pretty_format_batches;
    use datafusion::datasource::MemTable;
    use datafusion::prelude::{SessionConfig, SessionContext};
    use std::sync::Arc;

    type Rows = Vec<(i32, Option<Vec<Option<i64>>>)>;

    /// Table `t (g INT, a ARRAY<BIGINT>, b ARRAY<BIGINT>)` with `b = a`, one row per batch over
    /// three partitions, so partial states are merged.
    fn context(rows: Rows) -> SessionContext {
        let ctx = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(4));
        register_all(&ctx);
        let item = Arc::new(Field::new_list_field(DataType::Int64, true));
        let schema = Arc::new(Schema::new(vec![
            Field::new("g", DataType::Int32, true),
            Field::new("a", DataType::List(item.clone()), true),
            Field::new("b", DataType::List(item), true),
        ]));
        let mut partitions = vec![vec![]; 3];
        for (i, (g, a)) in rows.into_iter().enumerate() {
            let list: ArrayRef = Arc::new(ListArray::from_iter_primitive::<Int64Type, _, _>([a]));
            let columns = vec![
                Arc::new(Int32Array::from(vec![g])) as ArrayRef,
                list.clone(),
                list,
            ];
            partitions[i % 3].push(RecordBatch::try_new(schema.clone(), columns).unwrap());
        }
        let table = MemTable::try_new(schema, partitions).unwrap();
        ctx.register_table("t", Arc::new(table)).unwrap();
        ctx
    }

    async fn query(ctx: &SessionContext, sql: &str) -> String {
        let batches = ctx.sql(sql).await.unwrap().collect().await.unwrap();
        pretty_format_batches(&batches).unwrap().to_string()
    }

    fn rows() -> Rows {
        vec![
            (1, Some(vec![Some(1), Some(2), Some(3)])),
            (1, Some(vec![Some(20)])),
            (2, Some(vec![Some(300), Some(400)])),
            (2, None),
            (1, Some(vec![None, Some(2)])),
        ]
    }

    #[tokio::test]
    async fn positions_across_partitions() {
        let ctx = context(rows());
        let out = query(
            &ctx,
            "SELECT sum_foreach(a) AS s, count_foreach(a) AS c, min_foreach(a) AS lo, \
             max_foreach(a) AS hi, avg_foreach(a) AS m FROM t",
        )
        .await;
        assert!(out.contains("[321, 404, 3]"), "{out}");
        assert!(out.contains("[3, 3, 1]"), "{out}");
        assert!(out.contains("[1, 2, 3]"), "{out}");
        assert!(out.contains("[300, 400, 3]"), "{out}");
        assert!(out.contains("[107.0, 134.66666666666666, 3.0]"), "{out}");
    }

    #[tokio::test]
    async fn groups_and_two_arguments() {
        let ctx = context(rows());
        let out = query(
            &ctx,
            "SELECT g, sum_foreach(a) AS s, covar_foreach(a, b) AS c FROM t GROUP BY g ORDER BY g",
        )
        .await;
        let lines: Vec<&str> = out.lines().collect();
        assert!(lines[3].contains("| 1 | [21, 4, 3]"), "{out}");
        assert!(lines[4].contains("| 2 | [300, 400]"), "{out}");
    }

    #[tokio::test]
    async fn empty_and_null_inputs() {
        let ctx = context(vec![(1, None), (2, Some(vec![]))]);
        let out = query(
            &ctx,
            "SELECT g, sum_foreach(a) AS s FROM t GROUP BY g ORDER BY g",
        )
        .await;
        let lines: Vec<&str> = out.lines().collect();
        assert!(lines[3].contains("| 1 |   "), "{out}");
        assert!(lines[4].contains("| 2 | [] "), "{out}");
        let out = query(&ctx, "SELECT sum_foreach(a) AS s FROM t WHERE g > 5").await;
        assert!(out.contains("|   |"), "{out}");
    }

    #[tokio::test]
    async fn rewritten_and_literal_arguments() {
        let ctx = context(rows());
        let out = query(
            &ctx,
            "SELECT collect_set_foreach(a) AS s, collect_list_foreach(a) AS l FROM t WHERE g = 2",
        )
        .await;
        assert!(out.contains("[[300], [400]]"), "{out}");
        let out = query(
            &ctx,
            "SELECT string_agg_foreach(arrow_cast(a, 'List(Utf8)'), '-') AS s FROM t WHERE g = 2",
        )
        .await;
        assert!(out.contains("[300, 400]"), "{out}");
    }

    #[tokio::test]
    async fn arrays_of_one_row_must_agree() {
        let ctx = context(rows());
        let err = ctx
            .sql("SELECT sum_foreach(a), covar_foreach(a, make_array(1)) FROM t")
            .await
            .unwrap()
            .collect()
            .await
            .unwrap_err();
        assert!(err.to_string().contains("different sizes"), "{err}");
        let err = ctx.sql("SELECT sum_foreach(g) FROM t").await.unwrap_err();
        assert!(err.to_string().contains("sum_foreach takes ARRAY"), "{err}");
    }
}
