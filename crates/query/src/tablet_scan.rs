//! [`TabletScanExec`]: the scan a cluster's frontend plans — chosen tablets at a snapshot (their
//! visible rowsets and delete bitmaps), projection, filters and limit, and nothing that needs a
//! segment file. It runs on a backend that holds the tablets: there it builds the ordinary local
//! scan ([`crate::scan::plan_scan`]) over its own storage and streams it.

use crate::provider::{table_schema, BasaltTable};
use crate::sink::GeneratedIds;
use basalt_catalog::TableMeta;
use basalt_storage::{ReadGuard, StorageEngine};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::stats::Precision;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{exec_err, Result, Statistics};
use datafusion::execution::session_state::SessionStateBuilder;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::Expr;
use datafusion::physical_expr::{EquivalenceProperties, Partitioning, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::repartition::RepartitionExec;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, ExecutionPlanProperties, PlanProperties,
};
use futures::{StreamExt, TryStreamExt};
use std::sync::{Arc, OnceLock, Weak};

/// Marks a frontend's session whose tables live on backends: scans are planned as
/// [`TabletScanExec`] and never open segment files here.
#[derive(Debug, Default)]
pub struct ClusterScans;

/// A backend's storage, as its worker sessions carry it: where [`TabletScanExec`] reads from,
/// and which tablets it has scanned (reported to the frontend).
#[derive(Debug)]
pub struct BackendStorage {
    pub storage: Arc<StorageEngine>,
    scanned: parking_lot::Mutex<std::collections::BTreeSet<u64>>,
}

impl BackendStorage {
    pub fn new(storage: Arc<StorageEngine>) -> BackendStorage {
        BackendStorage {
            storage,
            scanned: Default::default(),
        }
    }

    /// The tablets scanned here since the backend started, ascending.
    pub fn scanned(&self) -> Vec<u64> {
        self.scanned.lock().iter().copied().collect()
    }
}

/// What a scan of some tablets of a table needs, and nothing more.
#[derive(Debug, Clone)]
pub struct TabletScanSpec {
    /// The table with only the scanned partitions and tablets (each with its visible rowsets
    /// and delete bitmaps: the snapshot the frontend planned with).
    pub table: Arc<TableMeta>,
    pub projection: Option<Vec<usize>>,
    pub filters: Vec<Expr>,
    pub limit: Option<usize>,
    /// Output partitions.
    pub partitions: usize,
    /// The backend this share of a scan was placed on (by the distributed planner's split).
    pub placed_on: Option<u64>,
    /// Output columns given as binary JSON documents (see [`crate::BinaryJsonColumns`]): set
    /// on the backend that runs the scan, never sent.
    pub binary_json: Vec<usize>,
}

/// The type an empty `Weak<dyn ExecutionPlan>` is made from (nothing is ever planned as it).
type EmptyPlan = datafusion::physical_plan::empty::EmptyExec;

/// A scan of chosen tablets that runs where they are stored (see the module doc).
#[derive(Debug)]
pub struct TabletScanExec {
    spec: TabletScanSpec,
    schema: SchemaRef,
    properties: Arc<PlanProperties>,
    /// The local scan while any partition runs it (planned by the first, shared by the
    /// others). Only running streams keep it: the plan holds the snapshot's read guard, which
    /// keeps replaced segment files on disk, and the distributed engine keeps finished plans.
    local: Arc<tokio::sync::Mutex<Weak<dyn ExecutionPlan>>>,
    /// On the frontend: the planning snapshot's read guard, so that files the backends hold
    /// for it are not deleted (compaction, DROP) before the statement has scanned them. It
    /// does not travel.
    guard: Option<Arc<ReadGuard>>,
    /// The scan's statistics, computed once from the catalog's segment records.
    statistics: OnceLock<Arc<Statistics>>,
}

impl TabletScanExec {
    pub fn try_new(spec: TabletScanSpec) -> Result<TabletScanExec> {
        let full = table_schema(&spec.table);
        let schema = match &spec.projection {
            Some(p) => Arc::new(full.project(p)?),
            None => full,
        };
        let schema = crate::binary_json::with_binary_fields(&schema, &spec.binary_json);
        let properties = Arc::new(PlanProperties::new(
            EquivalenceProperties::new(schema.clone()),
            Partitioning::UnknownPartitioning(spec.partitions.max(1)),
            EmissionType::Incremental,
            Boundedness::Bounded,
        ));
        Ok(TabletScanExec {
            spec,
            schema,
            properties,
            local: Arc::new(tokio::sync::Mutex::new(Weak::<EmptyPlan>::new())),
            guard: None,
            statistics: OnceLock::new(),
        })
    }

    pub fn spec(&self) -> &TabletScanSpec {
        &self.spec
    }

    /// The same scan over only `table`'s tablets (a subset of this scan's, with the same
    /// columns): one task's share.
    pub fn with_table(&self, table: Arc<TableMeta>) -> Result<TabletScanExec> {
        let mut share = TabletScanExec::try_new(TabletScanSpec {
            table,
            ..self.spec.clone()
        })?;
        share.guard = self.guard.clone();
        Ok(share)
    }

    /// Keeps `guard` (the planning snapshot's) for as long as this plan exists.
    pub fn holding(mut self, guard: Arc<ReadGuard>) -> TabletScanExec {
        self.guard = Some(guard);
        self
    }

    /// This scan giving output columns `columns` (JSON text columns) as binary documents.
    pub fn with_binary_json(&self, columns: &[usize]) -> Result<TabletScanExec> {
        let mut binary = TabletScanExec::try_new(TabletScanSpec {
            binary_json: columns.to_vec(),
            ..self.spec.clone()
        })?;
        binary.guard = self.guard.clone();
        Ok(binary)
    }

    /// Records the backend this share runs on.
    pub fn place_on(&mut self, backend: u64) {
        self.spec.placed_on = Some(backend);
    }

    async fn local_plan(&self, ctx: &Arc<TaskContext>) -> Result<Arc<dyn ExecutionPlan>> {
        let Some(storage) = ctx.session_config().get_extension::<BackendStorage>() else {
            return exec_err!(
                "a tablet scan runs on the backends that hold the tablets; this node holds none"
            );
        };
        let state = SessionStateBuilder::new()
            .with_config(ctx.session_config().clone())
            .with_runtime_env(ctx.runtime_env())
            .with_scalar_functions(ctx.scalar_functions().values().cloned().collect())
            .build();
        storage
            .scanned
            .lock()
            .extend(self.spec.table.tablets().map(|(_, t)| t.id));
        let storage = storage.storage.clone();
        let table = BasaltTable::new(
            self.spec.table.clone(),
            storage.clone(),
            Arc::new(storage.begin_read()),
            Arc::new(GeneratedIds::default()),
            "+00:00",
        );
        let plan = crate::scan::plan_scan(
            &table,
            &state,
            self.spec.projection.as_ref(),
            &self.spec.filters,
            self.spec.limit,
        )
        .await?;
        // The JSON columns asked for as binary documents are read so where the local scan
        // allows (the rest are encoded as they stream out, see `execute`).
        if !self.spec.binary_json.is_empty() {
            tracing::debug!(columns = ?self.spec.binary_json, "tablet scan gives binary JSON");
        }
        let plan = crate::binary_json::binary_output(plan, &self.spec.binary_json)?;
        let wanted = self.properties.output_partitioning().partition_count();
        let have = plan.output_partitioning().partition_count();
        // A small scan stays one stream in storage order (the other partitions are empty).
        let small = self.num_rows() <= crate::segment_scan::SMALL_SCAN_ROWS as u64;
        if have == wanted || (have < wanted && small) {
            return Ok(plan);
        }
        Ok(Arc::new(RepartitionExec::try_new(
            plan,
            Partitioning::RoundRobinBatch(wanted),
        )?))
    }

    fn num_rows(&self) -> u64 {
        self.spec.table.tablets().map(|(_, t)| t.num_rows()).sum()
    }
}

impl DisplayAs for TabletScanExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        let ids: Vec<String> = self
            .spec
            .table
            .tablets()
            .map(|(_, t)| t.id.to_string())
            .collect();
        write!(
            f,
            "TabletScanExec: {}.{} tablets=[{}]",
            self.spec.table.database,
            self.spec.table.name,
            ids.join(", ")
        )?;
        if let Some(limit) = self.spec.limit {
            write!(f, ", limit={limit}")?;
        }
        if let Some(backend) = self.spec.placed_on {
            write!(f, ", backend={backend}")?;
        }
        Ok(())
    }
}

impl ExecutionPlan for TabletScanExec {
    fn name(&self) -> &str {
        "TabletScanExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![]
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn with_new_children(
        self: Arc<Self>,
        _children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        Ok(self)
    }

    fn partition_statistics(&self, partition: Option<usize>) -> Result<Arc<Statistics>> {
        if partition.is_some() {
            return Ok(Arc::new(Statistics::new_unknown(&self.schema)));
        }
        // The catalog's records of the scanned segments (the frontend holds no footers), so
        // join sides and build sides are chosen as on a single node.
        let stats = self.statistics.get_or_init(|| {
            let full = crate::table_statistics::recorded_table_statistics(
                &self.spec.table,
                &table_schema(&self.spec.table),
            );
            let columns = match &self.spec.projection {
                Some(p) => p
                    .iter()
                    .map(|&i| full.column_statistics.get(i).cloned().unwrap_or_default())
                    .collect(),
                None => full.column_statistics,
            };
            Arc::new(Statistics {
                num_rows: Precision::Inexact(self.num_rows() as usize),
                total_byte_size: Precision::Absent,
                column_statistics: columns,
            })
        });
        Ok(stats.clone())
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        // The partitions share one local plan, planned by whichever runs first; the stream
        // owns a copy of this node that shares the cell.
        let this = TabletScanExec {
            spec: self.spec.clone(),
            schema: self.schema.clone(),
            properties: self.properties.clone(),
            local: self.local.clone(),
            guard: self.guard.clone(),
            statistics: OnceLock::new(),
        };
        let this = Arc::new(this);
        let schema = self.schema.clone();
        let stream = futures::stream::once(async move {
            let plan = {
                let mut shared = this.local.lock().await;
                match shared.upgrade() {
                    Some(plan) => plan,
                    None => {
                        let plan = this.local_plan(&context).await?;
                        *shared = Arc::downgrade(&plan);
                        plan
                    }
                }
            };
            let rows = if partition < plan.output_partitioning().partition_count() {
                plan.execute(partition, context)?
            } else {
                Box::pin(RecordBatchStreamAdapter::new(
                    plan.schema(),
                    futures::stream::empty(),
                ))
            };
            // The stream keeps the plan (and its read guard) until it ends.
            let out = this.schema.clone();
            Ok::<_, datafusion::common::DataFusionError>(rows.map(move |batch| {
                let _ = &plan;
                crate::binary_json::conform(batch?, &out)
            }))
        })
        .try_flatten();
        Ok(Box::pin(RecordBatchStreamAdapter::new(schema, stream)))
    }
}
