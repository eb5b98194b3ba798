//! Runs a [`SubqueryApply`]: for each input row, each subquery with the row's values in place
//! of its outer references. Results are remembered per distinct set of values (within one
//! partition's stream, up to [`REMEMBERED_PER_STREAM`] sets holding at most
//! [`REMEMBERED_VALUES_PER_STREAM`] IN values), so a subquery correlated on a
//! column with few values runs a few times, not once per row.

use super::node::{AppliedSubquery, SubqueryApply, SubqueryKind};
use async_trait::async_trait;
use basalt_common::{df_error::to_df, BasaltError};
use datafusion::arrow::array::{new_empty_array, ArrayRef, RecordBatch};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::Session;
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::{internal_err, Column, Result, ScalarValue};
use datafusion::execution::context::SessionState;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::expr::{Exists, InSubquery, SetComparison};
use datafusion::logical_expr::expr_rewriter::NamePreserver;
use datafusion::logical_expr::physical_planning_context::PhysicalPlanningContext;
use datafusion::logical_expr::{Expr, LogicalPlan, LogicalPlanBuilder, UserDefinedLogicalNode};
use datafusion::physical_expr::{EquivalenceProperties, PhysicalExpr};
use datafusion::physical_plan::execution_plan::apply_expression_roots;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    collect, DisplayAs, DisplayFormatType, ExecutionPlan, ExecutionPlanProperties, PlanProperties,
};
use datafusion::physical_planner::{ExtensionPlanner, PhysicalPlanner};
use futures::{StreamExt, TryStreamExt};
use parking_lot::Mutex;
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::Arc;

/// Distinct sets of outer values whose results one stream keeps; past it, it starts afresh.
pub const REMEMBERED_PER_STREAM: usize = 10_000;

/// IN-subquery values one stream keeps remembered; past it, it starts afresh.
pub const REMEMBERED_VALUES_PER_STREAM: usize = 1_000_000;

/// Plans [`SubqueryApply`] nodes.
#[derive(Debug, Default)]
pub struct SubqueryApplyPlanner;

#[async_trait]
impl ExtensionPlanner for SubqueryApplyPlanner {
    async fn plan_extension(
        &self,
        planner: &dyn PhysicalPlanner,
        node: &dyn UserDefinedLogicalNode,
        logical_inputs: &[&LogicalPlan],
        physical_inputs: &[Arc<dyn ExecutionPlan>],
        session: &dyn Session,
        planning_ctx: &PhysicalPlanningContext,
    ) -> Result<Option<Arc<dyn ExecutionPlan>>> {
        let Some(apply) = node.as_any().downcast_ref::<SubqueryApply>() else {
            return Ok(None);
        };
        let (Some(logical_input), Some(input)) = (logical_inputs.first(), physical_inputs.first())
        else {
            return internal_err!("SubqueryApply has one input");
        };
        let Some(state) = session.as_any().downcast_ref::<SessionState>() else {
            return internal_err!("SubqueryApply needs a SessionState to plan its subqueries");
        };
        let physical = |e: &Expr| {
            planner.create_physical_expr(e, logical_input.schema(), session, planning_ctx)
        };
        let subqueries = apply
            .subqueries
            .iter()
            .map(|s| {
                Ok(PlannedSubquery {
                    logical: s.clone(),
                    outer_values: s.outer_values.iter().map(physical).collect::<Result<_>>()?,
                    tested: s.tested.as_ref().map(physical).transpose()?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let schema: SchemaRef = Arc::new(apply.schema().as_arrow().clone());
        Ok(Some(Arc::new(SubqueryApplyExec::new(
            input.clone(),
            subqueries,
            schema,
            Arc::new(state.clone()),
        ))))
    }
}

/// One subquery with its input expressions planned.
#[derive(Debug, Clone)]
struct PlannedSubquery {
    logical: AppliedSubquery,
    outer_values: Vec<Arc<dyn PhysicalExpr>>,
    tested: Option<Arc<dyn PhysicalExpr>>,
}

/// Adds the subqueries' columns to every batch of its input.
pub struct SubqueryApplyExec {
    input: Arc<dyn ExecutionPlan>,
    subqueries: Vec<PlannedSubquery>,
    schema: SchemaRef,
    /// Plans each evaluation of a subquery (the session's rules, functions and catalogs).
    state: Arc<SessionState>,
    properties: Arc<PlanProperties>,
}

impl fmt::Debug for SubqueryApplyExec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SubqueryApplyExec")
            .field("subqueries", &self.subqueries.len())
            .finish()
    }
}

impl SubqueryApplyExec {
    fn new(
        input: Arc<dyn ExecutionPlan>,
        subqueries: Vec<PlannedSubquery>,
        schema: SchemaRef,
        state: Arc<SessionState>,
    ) -> Self {
        // Rows keep their order and place; the added columns come last, so what holds of the
        // input's columns (orderings, constants, equalities) holds here too. Keeping only the
        // orderings lost the constants an ORDER BY above may have been satisfied by.
        let equivalences = EquivalenceProperties::new(schema.clone())
            .extend(input.equivalence_properties().clone())
            .unwrap_or_else(|_| {
                let orderings = input
                    .output_ordering()
                    .map(|o| o.iter().cloned().collect::<Vec<_>>());
                EquivalenceProperties::new_with_orderings(schema.clone(), orderings)
            });
        let properties = Arc::new(PlanProperties::new(
            equivalences,
            input.output_partitioning().clone(),
            input.pipeline_behavior(),
            input.boundedness(),
        ));
        SubqueryApplyExec {
            input,
            subqueries,
            schema,
            state,
            properties,
        }
    }
}

impl DisplayAs for SubqueryApplyExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        let names: Vec<&str> = self
            .subqueries
            .iter()
            .map(|s| s.logical.name.as_str())
            .collect();
        write!(f, "SubqueryApplyExec: per row [{}]", names.join(", "))
    }
}

impl ExecutionPlan for SubqueryApplyExec {
    fn name(&self) -> &str {
        "SubqueryApplyExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn apply_expressions(
        &self,
        f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        let roots: Vec<&Arc<dyn PhysicalExpr>> = self
            .subqueries
            .iter()
            .flat_map(|s| s.outer_values.iter().chain(s.tested.iter()))
            .collect();
        apply_expression_roots(roots, f)
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.input]
    }

    fn maintains_input_order(&self) -> Vec<bool> {
        vec![true]
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let Some(input) = children.into_iter().next() else {
            return internal_err!("SubqueryApplyExec has one child");
        };
        Ok(Arc::new(SubqueryApplyExec::new(
            input,
            self.subqueries.clone(),
            self.schema.clone(),
            self.state.clone(),
        )))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let input = self.input.execute(partition, context.clone())?;
        let evaluator = Arc::new(Evaluator {
            subqueries: self.subqueries.clone(),
            schema: self.schema.clone(),
            state: self.state.clone(),
            context,
            remembered: Mutex::new(Remembered {
                outcomes: vec![HashMap::new(); self.subqueries.len()],
                values: 0,
            }),
        });
        let stream = input.and_then(move |batch| {
            let evaluator = evaluator.clone();
            async move { evaluator.extend(batch).await }
        });
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            self.schema.clone(),
            stream.boxed(),
        )))
    }
}

/// What one evaluation of a subquery found.
#[derive(Debug)]
enum Outcome {
    /// The scalar subquery's value, or whether EXISTS found rows.
    Value(ScalarValue),
    /// An IN subquery's values.
    Values {
        present: HashSet<ScalarValue>,
        has_null: bool,
    },
}

/// Outcomes by outer values, per subquery, and how many IN values they hold.
struct Remembered {
    outcomes: Vec<HashMap<Vec<ScalarValue>, Arc<Outcome>>>,
    values: usize,
}

impl Remembered {
    /// Keeps `outcome` for `key`, forgetting everything first when the bounds would be passed.
    fn keep(&mut self, index: usize, key: Vec<ScalarValue>, outcome: Arc<Outcome>) {
        let values = match outcome.as_ref() {
            Outcome::Values { present, .. } => present.len(),
            Outcome::Value(_) => 0,
        };
        let full = self.outcomes[index].len() >= REMEMBERED_PER_STREAM;
        if full || self.values + values > REMEMBERED_VALUES_PER_STREAM {
            self.outcomes.iter_mut().for_each(HashMap::clear);
            self.values = 0;
        }
        if values <= REMEMBERED_VALUES_PER_STREAM {
            self.values += values;
            self.outcomes[index].insert(key, outcome);
        }
    }
}

/// Evaluates the subqueries for the batches of one stream.
struct Evaluator {
    subqueries: Vec<PlannedSubquery>,
    schema: SchemaRef,
    state: Arc<SessionState>,
    context: Arc<TaskContext>,
    /// Per subquery: outcome by outer values.
    remembered: Mutex<Remembered>,
}

impl Evaluator {
    async fn extend(&self, batch: RecordBatch) -> Result<RecordBatch> {
        let rows = batch.num_rows();
        let mut columns = batch.columns().to_vec();
        for (index, subquery) in self.subqueries.iter().enumerate() {
            let field = self.schema.field(columns.len());
            if rows == 0 {
                columns.push(new_empty_array(field.data_type()));
                continue;
            }
            let outer = subquery
                .outer_values
                .iter()
                .map(|e| e.evaluate(&batch)?.into_array(rows))
                .collect::<Result<Vec<ArrayRef>>>()?;
            let tested = match &subquery.tested {
                Some(e) => Some(e.evaluate(&batch)?.into_array(rows)?),
                None => None,
            };
            let mut values = Vec::with_capacity(rows);
            for row in 0..rows {
                let key = outer
                    .iter()
                    .map(|a| ScalarValue::try_from_array(a, row))
                    .collect::<Result<Vec<_>>>()?;
                let known = self.remembered.lock().outcomes[index].get(&key).cloned();
                let outcome = match known {
                    Some(outcome) => outcome,
                    None => {
                        let outcome = Arc::new(self.evaluate(&subquery.logical, &key).await?);
                        self.remembered.lock().keep(index, key, outcome.clone());
                        outcome
                    }
                };
                let probe = match &tested {
                    Some(t) => Some(ScalarValue::try_from_array(t, row)?),
                    None => None,
                };
                values.push(answer(subquery.logical.kind, &outcome, probe)?);
            }
            let array = ScalarValue::iter_to_array(values)?;
            let array = if array.data_type() == field.data_type() {
                array
            } else {
                cast(&array, field.data_type())?
            };
            columns.push(array);
        }
        Ok(RecordBatch::try_new(self.schema.clone(), columns)?)
    }

    /// Runs `subquery` with `values` in place of its outer references.
    async fn evaluate(
        &self,
        subquery: &AppliedSubquery,
        values: &[ScalarValue],
    ) -> Result<Outcome> {
        let plan = substitute(&subquery.subquery.subquery, &subquery.outer_refs, values)?;
        // Two rows tell a scalar subquery's error; one tells EXISTS.
        let plan = match subquery.kind {
            SubqueryKind::Scalar => LogicalPlanBuilder::from(plan).limit(0, Some(2))?.build()?,
            SubqueryKind::Exists { .. } => {
                LogicalPlanBuilder::from(plan).limit(0, Some(1))?.build()?
            }
            SubqueryKind::In { .. } => plan,
        };
        let state = self.state.as_ref();
        let optimized = state.optimizer().optimize(plan, state, |_, _| {})?;
        let physical = state
            .query_planner()
            .create_physical_plan(&optimized, state)
            .await?;
        let batches = collect(physical, self.context.clone()).await?;
        let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
        match subquery.kind {
            SubqueryKind::Exists { .. } => Ok(Outcome::Value(ScalarValue::Boolean(Some(rows > 0)))),
            SubqueryKind::Scalar => {
                let data_type = subquery.first_column_type();
                match rows {
                    0 => Ok(Outcome::Value(ScalarValue::try_from(&data_type)?)),
                    1 => {
                        let Some(batch) = batches.iter().find(|b| b.num_rows() > 0) else {
                            return internal_err!("a subquery row went missing");
                        };
                        Ok(Outcome::Value(ScalarValue::try_from_array(
                            batch.column(0),
                            0,
                        )?))
                    }
                    _ => Err(to_df(BasaltError::SubqueryReturnsManyRows)),
                }
            }
            SubqueryKind::In { .. } => {
                let mut present = HashSet::new();
                let mut has_null = false;
                for batch in &batches {
                    let column = batch.column(0);
                    for row in 0..batch.num_rows() {
                        let value = ScalarValue::try_from_array(column, row)?;
                        if value.is_null() {
                            has_null = true;
                        } else {
                            present.insert(value);
                        }
                    }
                }
                Ok(Outcome::Values { present, has_null })
            }
        }
    }
}

/// A row's value of the subquery expression.
fn answer(
    kind: SubqueryKind,
    outcome: &Outcome,
    probe: Option<ScalarValue>,
) -> Result<ScalarValue> {
    match (kind, outcome) {
        (SubqueryKind::Scalar, Outcome::Value(v)) => Ok(v.clone()),
        (SubqueryKind::Exists { negated }, Outcome::Value(ScalarValue::Boolean(Some(found)))) => {
            Ok(ScalarValue::Boolean(Some(*found != negated)))
        }
        (SubqueryKind::In { negated }, Outcome::Values { present, has_null }) => {
            let empty = present.is_empty() && !has_null;
            // SQL's IN: true on a match; unknown when nothing matched but a NULL might have.
            let found = match probe {
                _ if empty => Some(false),
                Some(p) if p.is_null() => None,
                Some(p) if present.contains(&p) => Some(true),
                Some(_) if *has_null => None,
                Some(_) => Some(false),
                None => return internal_err!("IN subquery without its operand"),
            };
            Ok(ScalarValue::Boolean(found.map(|f| f != negated)))
        }
        _ => internal_err!("subquery outcome does not match its kind"),
    }
}

/// `plan` with each outer reference to one of `columns` replaced by the matching value, in
/// its nested subqueries too (which then no longer list those references).
fn substitute(
    plan: &LogicalPlan,
    columns: &[Column],
    values: &[ScalarValue],
) -> Result<LogicalPlan> {
    let replaced = |column: &Column| columns.iter().position(|c| c == column);
    let rewrite = |expr: Expr| {
        expr.transform(|x| match x {
            Expr::OuterReferenceColumn(field, column) => match replaced(&column) {
                Some(i) => {
                    let value = &values[i];
                    let value = if value.data_type() == *field.data_type() {
                        value.clone()
                    } else {
                        value.cast_to(field.data_type())?
                    };
                    Ok(Transformed::yes(Expr::Literal(value, None)))
                }
                None => Ok(Transformed::no(Expr::OuterReferenceColumn(field, column))),
            },
            Expr::ScalarSubquery(mut s) => {
                forget(&mut s.outer_ref_columns, &replaced);
                Ok(Transformed::yes(Expr::ScalarSubquery(s)))
            }
            Expr::Exists(mut e) => {
                forget(&mut e.subquery.outer_ref_columns, &replaced);
                Ok(Transformed::yes(Expr::Exists(Exists { ..e })))
            }
            Expr::InSubquery(mut i) => {
                forget(&mut i.subquery.outer_ref_columns, &replaced);
                Ok(Transformed::yes(Expr::InSubquery(InSubquery { ..i })))
            }
            Expr::SetComparison(mut s) => {
                forget(&mut s.subquery.outer_ref_columns, &replaced);
                Ok(Transformed::yes(Expr::SetComparison(SetComparison { ..s })))
            }
            other => Ok(Transformed::no(other)),
        })
    };
    // Names kept: an aggregate of an outer value (`count(outer_ref(t1.b))`) is read above
    // under its name, which its literal would change.
    Ok(plan
        .clone()
        .transform_up_with_subqueries(|node| {
            let preserver = NamePreserver::new(&node);
            node.map_expressions(|e| {
                let saved = preserver.save(&e);
                rewrite(e).map(|t| t.update_data(|e| saved.restore(e)))
            })
        })?
        .data)
}

/// Drops the substituted columns from a subquery's list of outer references.
fn forget(outer_ref_columns: &mut Vec<Expr>, replaced: &impl Fn(&Column) -> Option<usize>) {
    outer_ref_columns.retain(|e| match e {
        Expr::OuterReferenceColumn(_, c) => replaced(c).is_none(),
        _ => true,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(n: usize) -> Arc<Outcome> {
        Arc::new(Outcome::Values {
            present: (0..n as i64).map(|v| ScalarValue::Int64(Some(v))).collect(),
            has_null: false,
        })
    }

    #[test]
    fn remembered_outcomes_stay_within_their_bounds() {
        let mut r = Remembered {
            outcomes: vec![HashMap::new(), HashMap::new()],
            values: 0,
        };
        let key = |k: i64| vec![ScalarValue::Int64(Some(k))];
        r.keep(0, key(1), values(REMEMBERED_VALUES_PER_STREAM / 2));
        r.keep(1, key(1), values(REMEMBERED_VALUES_PER_STREAM / 2));
        assert_eq!(r.values, REMEMBERED_VALUES_PER_STREAM);
        // One more value: everything is forgotten first, then the new outcome kept.
        r.keep(0, key(2), values(1));
        assert_eq!(r.values, 1);
        assert_eq!(r.outcomes[0].len() + r.outcomes[1].len(), 1);
        // An outcome larger than the bound is not kept at all.
        r.keep(1, key(3), values(REMEMBERED_VALUES_PER_STREAM + 1));
        assert!(r.outcomes[1].is_empty());
        for k in 0..REMEMBERED_PER_STREAM as i64 + 1 {
            r.keep(
                0,
                key(k),
                Arc::new(Outcome::Value(ScalarValue::Int64(Some(k)))),
            );
        }
        assert!(r.outcomes[0].len() <= REMEMBERED_PER_STREAM);
    }
}
