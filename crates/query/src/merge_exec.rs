//! Execution of tablets whose rowsets must be merged on read (Aggregate and Unique keys before
//! compaction): one output partition per tablet, each read and merged on a blocking thread.
//! Filters on key columns only are applied to each segment before the merge (they select whole
//! keys), so a selective query merges only the keys it asks for.

use basalt_catalog::{TableMeta, TabletMeta};
use basalt_common::df_error::to_df;
use basalt_common::BasaltError;
use basalt_storage::{ReadGuard, StorageEngine};
use datafusion::arrow::array::{AsArray, BooleanArray, RecordBatch, RecordBatchOptions};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{internal_err, Result};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::{EquivalenceProperties, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, Partitioning, PlanProperties,
};
use std::sync::Arc;

#[derive(Debug)]
pub struct TabletMergeExec {
    storage: Arc<StorageEngine>,
    table: Arc<TableMeta>,
    tablets: Vec<TabletMeta>,
    /// Keeps the tablets' files from being deleted while this plan exists.
    read_guard: Arc<ReadGuard>,
    projection: Option<Vec<usize>>,
    schema: SchemaRef,
    /// A predicate over the key columns (in the scan's types, at positions 0..num_keys).
    key_filter: Option<KeyPredicate>,
    properties: Arc<PlanProperties>,
}

/// A key-only predicate and the key columns' schema it was planned against.
#[derive(Debug, Clone)]
pub struct KeyPredicate {
    pub predicate: Arc<dyn PhysicalExpr>,
    pub key_schema: SchemaRef,
}

impl KeyPredicate {
    /// The rows of `batch` (key columns first, in storage types) that the predicate keeps.
    fn select(&self, batch: &RecordBatch) -> basalt_common::Result<BooleanArray> {
        let internal = |e: String| BasaltError::Internal(format!("key filter: {e}"));
        let keys = self
            .key_schema
            .fields()
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let c = batch.column(i);
                if c.data_type() == f.data_type() {
                    Ok(c.clone())
                } else {
                    datafusion::arrow::compute::cast(c, f.data_type())
                        .map_err(|e| internal(e.to_string()))
                }
            })
            .collect::<basalt_common::Result<Vec<_>>>()?;
        let options = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
        let keys = RecordBatch::try_new_with_options(self.key_schema.clone(), keys, &options)
            .map_err(|e| internal(e.to_string()))?;
        let selected = self
            .predicate
            .evaluate(&keys)
            .and_then(|v| v.into_array(keys.num_rows()))
            .map_err(|e| internal(e.to_string()))?;
        let selected = selected
            .as_boolean_opt()
            .ok_or_else(|| internal("not a boolean predicate".into()))?;
        // NULL (unknown) drops the row, as WHERE does.
        Ok(match datafusion::arrow::array::Array::nulls(selected) {
            Some(_) => datafusion::arrow::compute::prep_null_mask_filter(selected),
            None => selected.clone(),
        })
    }
}

impl TabletMergeExec {
    pub fn new(
        storage: Arc<StorageEngine>,
        table: Arc<TableMeta>,
        tablets: Vec<TabletMeta>,
        read_guard: Arc<ReadGuard>,
        projection: Option<Vec<usize>>,
        schema: SchemaRef,
        key_filter: Option<KeyPredicate>,
    ) -> TabletMergeExec {
        let properties = Arc::new(PlanProperties::new(
            EquivalenceProperties::new(schema.clone()),
            Partitioning::UnknownPartitioning(tablets.len().max(1)),
            EmissionType::Incremental,
            Boundedness::Bounded,
        ));
        TabletMergeExec {
            storage,
            table,
            tablets,
            read_guard,
            projection,
            schema,
            key_filter,
            properties,
        }
    }
}

impl DisplayAs for TabletMergeExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "TabletMergeExec: table={}.{}, model={}, tablets={}",
            self.table.database,
            self.table.name,
            self.table.keys_model.sql_name(),
            self.tablets.len()
        )?;
        if let Some(k) = &self.key_filter {
            write!(f, ", key_filter={}", k.predicate)?;
        }
        Ok(())
    }
}

impl ExecutionPlan for TabletMergeExec {
    fn name(&self) -> &str {
        "TabletMergeExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![]
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if children.is_empty() {
            Ok(self)
        } else {
            internal_err!("TabletMergeExec has no children")
        }
    }

    fn execute(
        &self,
        partition: usize,
        _context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let Some(tablet) = self.tablets.get(partition).cloned() else {
            return internal_err!("TabletMergeExec has no partition {partition}");
        };
        let storage = self.storage.clone();
        let table = self.table.clone();
        // Read all key columns plus the projected ones, in table order, then project.
        let wanted: Vec<usize> = self
            .projection
            .clone()
            .unwrap_or_else(|| (0..table.columns.len()).collect());
        let mut read: Vec<usize> = (0..table.num_key_columns)
            .chain(wanted.iter().copied())
            .collect();
        read.sort_unstable();
        read.dedup();
        let positions: Vec<usize> = wanted
            .iter()
            .filter_map(|c| read.iter().position(|r| r == c))
            .collect();
        let schema = self.schema.clone();
        // The stream may outlive this plan: it keeps the files alive itself.
        let read_guard = self.read_guard.clone();
        let key_filter = self.key_filter.clone();
        let fut = async move {
            let _read_guard = read_guard;
            let batch = tokio::task::spawn_blocking(move || {
                let keep = key_filter.map(|k| {
                    Arc::new(move |b: &RecordBatch| k.select(b)) as Arc<basalt_storage::KeyFilter>
                });
                storage.read_tablet_merged_where(&table, &tablet, &read, keep)
            })
            .await
            .map_err(|e| to_df(BasaltError::Internal(format!("tablet read failed: {e}"))))?
            .map_err(to_df)?;
            let projected = batch.project(&positions)?;
            // Storage types to the scan's (strings become Utf8View).
            let columns = projected
                .columns()
                .iter()
                .zip(schema.fields())
                .map(|(c, f)| {
                    if c.data_type() == f.data_type() {
                        Ok(c.clone())
                    } else {
                        datafusion::arrow::compute::cast(c, f.data_type())
                    }
                })
                .collect::<std::result::Result<Vec<_>, _>>()?;
            // COUNT(*) projects no columns: the batch still carries its row count.
            let options = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
            Ok(RecordBatch::try_new_with_options(
                schema, columns, &options,
            )?)
        };
        let stream = futures::stream::once(fut);
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            self.schema.clone(),
            stream,
        )))
    }
}
