//! Lets the JSON path functions read binary JSON documents straight from the segments: a
//! physical optimizer rule that finds segment scans whose JSON columns are only ever the
//! document the path-reading functions walk (`json_extract` and `->`/`->>`, Doris's
//! `json_extract_*`/`get_json_*`, `json_contains_path`, `json_exists_path`,
//! `json_extract_isnull`, `json_type`, `json_length`, `json_keys`, `json_contains`:
//! [`basalt_functions::reads_json_paths`]) and has those scans give the
//! columns as binary documents ([`SegmentScanExec::with_binary_json`]). Such a query then
//! reads each document only along its paths, instead of decoding it to text and parsing it.
//!
//! On a cluster each backend applies the rule to the fragments it runs, to their
//! [`TabletScanExec`]s (a fragment's output, like a query's, stays text).
//!
//! Everything else keeps the text: a column that is shown, compared, grouped, sorted, joined,
//! or passes an operator this rule does not know stays text, so no operator but those
//! functions ever sees the binary form. Runs before [`crate::FastLikeRule`]: it finds a
//! column's uses through each expression's children, which DataFusion's expressions expose.

use crate::segment_scan::SegmentScanExec;
use crate::tablet_scan::TabletScanExec;
use basalt_common::df_error::to_df;
use basalt_common::{is_json_field, json_binary};
use basalt_storage::json_columns;
use datafusion::arrow::array::{RecordBatch, RecordBatchOptions};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::common::Result;
use datafusion::config::ConfigOptions;
use datafusion::physical_expr::expressions::Column;
use datafusion::physical_expr::{PhysicalExpr, ScalarFunctionExpr};
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::aggregates::AggregateExec;
use datafusion::physical_plan::coalesce_partitions::CoalescePartitionsExec;
use datafusion::physical_plan::coop::CooperativeExec;
use datafusion::physical_plan::execution_plan::{ChildrenPropertiesMode, ReplaceChildrenOptions};
use datafusion::physical_plan::filter::FilterExec;
use datafusion::physical_plan::limit::{GlobalLimitExec, LocalLimitExec};
use datafusion::physical_plan::projection::ProjectionExec;
use datafusion::physical_plan::repartition::RepartitionExec;
use datafusion::physical_plan::sorts::sort::SortExec;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_plan::Partitioning;
use std::sync::Arc;

/// The physical optimizer rule.
#[derive(Debug, Default)]
pub struct BinaryJsonColumns;

impl PhysicalOptimizerRule for BinaryJsonColumns {
    fn optimize(
        &self,
        plan: Arc<dyn ExecutionPlan>,
        _config: &ConfigOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        // Whoever receives the plan's rows reads them as text.
        let text_only = vec![false; plan.schema().fields().len()];
        rewrite(plan, &text_only)
    }

    fn name(&self) -> &str {
        "basalt_binary_json_columns"
    }

    fn schema_check(&self) -> bool {
        // Only columns inside the plan change form; its output never does.
        true
    }
}

/// `node` with its scans giving binary documents where every reader above allows it.
/// `binary_ok[i]`: whether output column `i` of `node` may be binary (the operator above
/// only walks it with the path functions, or does not read it).
fn rewrite(node: Arc<dyn ExecutionPlan>, binary_ok: &[bool]) -> Result<Arc<dyn ExecutionPlan>> {
    if let Some(scan) = node.downcast_ref::<SegmentScanExec>() {
        let columns = binary_candidates(&node.schema(), binary_ok);
        if columns.is_empty() {
            return Ok(node);
        }
        return Ok(match scan.with_binary_json(&columns) {
            Some(binary) => Arc::new(binary),
            None => node,
        });
    }
    if let Some(scan) = node.downcast_ref::<TabletScanExec>() {
        let columns = binary_candidates(&node.schema(), binary_ok);
        if columns.is_empty() {
            return Ok(node);
        }
        return Ok(Arc::new(scan.with_binary_json(&columns)?));
    }
    let children = node.children();
    let accepted: Vec<Vec<bool>> = match children.as_slice() {
        [child] => child_accepts(&node, child.schema().fields().len(), binary_ok),
        _ => children
            .iter()
            .map(|c| vec![false; c.schema().fields().len()])
            .collect(),
    };
    let mut changed = false;
    let mut rewritten = Vec::with_capacity(children.len());
    for (child, ok) in children.into_iter().zip(&accepted) {
        let new = rewrite(child.clone(), ok)?;
        changed |= !Arc::ptr_eq(&new, child);
        rewritten.push(new);
    }
    if !changed {
        return Ok(node);
    }
    // A projection's own rebuild keeps its output schema; the columns it passes on may have
    // changed form.
    if let Some(projection) = node.downcast_ref::<ProjectionExec>() {
        let input = rewritten.swap_remove(0);
        return Ok(Arc::new(ProjectionExec::try_new(
            projection.expr().to_vec(),
            input,
        )?));
    }
    node.replace_children(
        rewritten,
        ReplaceChildrenOptions::new(ChildrenPropertiesMode::Recompute),
    )
}

/// The JSON text columns of `schema` that may be binary.
fn binary_candidates(schema: &SchemaRef, binary_ok: &[bool]) -> Vec<usize> {
    (0..schema.fields().len())
        .filter(|&c| binary_ok.get(c) == Some(&true) && is_json_text(schema.field(c)))
        .collect()
}

/// A JSON column held as text (not VARIANT, whose values keep their own form).
pub(crate) fn is_json_text(field: &Field) -> bool {
    is_json_field(field)
        && !basalt_common::variant::is_variant_field(field)
        && matches!(field.data_type(), DataType::Utf8 | DataType::Utf8View)
}

/// `schema` with its JSON text columns `columns` as binary documents.
pub(crate) fn with_binary_fields(schema: &SchemaRef, columns: &[usize]) -> SchemaRef {
    if columns.is_empty() {
        return schema.clone();
    }
    let fields: Vec<Field> = (0..schema.fields().len())
        .map(|c| {
            let field = schema.field(c);
            if columns.contains(&c) && is_json_text(field) {
                json_binary::binary_field(field)
            } else {
                field.clone()
            }
        })
        .collect();
    Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()))
}

/// A scan's local `plan` giving its output columns `columns` as binary documents where its
/// segment scans can (the others stay text: see [`conform`]).
pub(crate) fn binary_output(
    plan: Arc<dyn ExecutionPlan>,
    columns: &[usize],
) -> Result<Arc<dyn ExecutionPlan>> {
    if columns.is_empty() {
        return Ok(plan);
    }
    let width = plan.schema().fields().len();
    let binary_ok: Vec<bool> = (0..width).map(|c| columns.contains(&c)).collect();
    rewrite(plan, &binary_ok)
}

/// `batch` as rows of `schema`: JSON text where `schema` has binary documents is encoded.
pub(crate) fn conform(batch: RecordBatch, schema: &SchemaRef) -> Result<RecordBatch> {
    if batch.schema().fields() == schema.fields() {
        return Ok(batch);
    }
    let columns = batch
        .columns()
        .iter()
        .zip(schema.fields())
        .map(|(column, field)| {
            if json_binary::is_binary_json(field) && column.data_type() != &DataType::Binary {
                let text = cast(column, &DataType::Utf8)?;
                json_columns::encode_column(&text, field.name()).map_err(to_df)
            } else {
                Ok(column.clone())
            }
        })
        .collect::<Result<Vec<_>>>()?;
    let options = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
    Ok(RecordBatch::try_new_with_options(
        schema.clone(),
        columns,
        &options,
    )?)
}

/// For the one child of `node` (with `width` columns): which of its columns `node` lets be
/// binary. Operators this rule does not know allow none.
fn child_accepts(
    node: &Arc<dyn ExecutionPlan>,
    width: usize,
    binary_ok: &[bool],
) -> Vec<Vec<bool>> {
    let none = vec![vec![false; width]];
    let ok_out = |o: usize| binary_ok.get(o) == Some(&true);
    // Operators that pass their input's columns on as they are: each may be binary when the
    // reader above allows it and the operator's own expressions only walk it.
    let passing = |exprs: &[&Arc<dyn PhysicalExpr>]| -> Vec<Vec<bool>> {
        vec![(0..width)
            .map(|c| ok_out(c) && exprs.iter().all(|e| only_paths_read(e, c)))
            .collect()]
    };
    if let Some(filter) = node.downcast_ref::<FilterExec>() {
        let predicate = filter.predicate();
        return vec![(0..width)
            .map(|c| {
                let shown = match filter.projection() {
                    Some(p) => p.iter().enumerate().all(|(o, &i)| i != c || ok_out(o)),
                    None => ok_out(c),
                };
                shown && only_paths_read(predicate, c)
            })
            .collect()];
    }
    if let Some(projection) = node.downcast_ref::<ProjectionExec>() {
        return vec![(0..width)
            .map(|c| {
                projection.expr().iter().enumerate().all(|(o, e)| {
                    match e.expr.downcast_ref::<Column>() {
                        Some(col) if col.index() == c => ok_out(o),
                        _ => only_paths_read(&e.expr, c),
                    }
                })
            })
            .collect()];
    }
    if let Some(aggregate) = node.downcast_ref::<AggregateExec>() {
        let group = aggregate.group_expr();
        let mut exprs: Vec<Arc<dyn PhysicalExpr>> = group
            .expr()
            .iter()
            .chain(group.null_expr())
            .map(|(e, _)| e.clone())
            .collect();
        for a in aggregate.aggr_expr() {
            exprs.extend(a.expressions());
            exprs.extend(a.order_bys().iter().map(|s| s.expr.clone()));
        }
        exprs.extend(aggregate.filter_expr().iter().flatten().cloned());
        // No input column is passed on as it is: each is read by the expressions only.
        return vec![(0..width)
            .map(|c| exprs.iter().all(|e| only_paths_read(e, c)))
            .collect()];
    }
    if let Some(repartition) = node.downcast_ref::<RepartitionExec>() {
        return match repartition.partitioning() {
            Partitioning::Hash(exprs, _) => passing(&exprs.iter().collect::<Vec<_>>()),
            Partitioning::RoundRobinBatch(_) | Partitioning::UnknownPartitioning(_) => passing(&[]),
            _ => none,
        };
    }
    if let Some(sort) = node.downcast_ref::<SortExec>() {
        return passing(&sort.expr().iter().map(|s| &s.expr).collect::<Vec<_>>());
    }
    if node.downcast_ref::<CoalescePartitionsExec>().is_some()
        || node.downcast_ref::<CooperativeExec>().is_some()
        || node.downcast_ref::<GlobalLimitExec>().is_some()
        || node.downcast_ref::<LocalLimitExec>().is_some()
    {
        return passing(&[]);
    }
    none
}

/// Whether every reference to input column `c` in `expr` is the document a path-reading JSON
/// function walks (its first argument, the column itself).
fn only_paths_read(expr: &Arc<dyn PhysicalExpr>, c: usize) -> bool {
    if let Some(col) = expr.downcast_ref::<Column>() {
        return col.index() != c;
    }
    if let Some(call) = expr.downcast_ref::<ScalarFunctionExpr>() {
        if basalt_functions::reads_json_paths(call.fun()) {
            let args = call.args();
            let walked = args
                .first()
                .and_then(|a| a.downcast_ref::<Column>())
                .is_some_and(|col| col.index() == c);
            if walked {
                return args[1..].iter().all(|a| only_paths_read(a, c));
            }
        }
    }
    expr.children()
        .into_iter()
        .all(|child| only_paths_read(child, c))
}
