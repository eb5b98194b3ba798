//! [`BasaltTable`]: a snapshot of one table (its visible rowsets at planning time) as a
//! DataFusion table provider — scans with pruning and merge-on-read, INSERT through the sink.

use crate::sink::{BasaltSink, GeneratedIds};
use async_trait::async_trait;
use basalt_catalog::{ColumnDefault, KeysModel, TableMeta};
use basalt_storage::{ReadGuard, StorageEngine};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::datatypes::{DataType, TimeUnit};
use datafusion::catalog::{Session as DfSession, TableProvider};
use datafusion::common::{not_impl_err, Constraint, Constraints, Result, Statistics};
use datafusion::datasource::sink::DataSinkExec;
use datafusion::logical_expr::dml::InsertOp;
use datafusion::logical_expr::{cast, lit, Expr, TableProviderFilterPushDown, TableType};
use datafusion::physical_plan::ExecutionPlan;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

/// A snapshot of one table (its visible rowsets at planning time) as a DataFusion table.
pub struct BasaltTable {
    pub meta: Arc<TableMeta>,
    /// Keeps the snapshot's files from being deleted while plans built from it run.
    pub read_guard: Arc<ReadGuard>,
    /// The columns as queries see them, in the table's declared order.
    pub schema: SchemaRef,
    /// The columns in storage order (key columns first), as scans read them.
    pub storage_schema: SchemaRef,
    pub storage: Arc<StorageEngine>,
    defaults: HashMap<String, Expr>,
    /// A Unique or Aggregate table's key is unique: grouping by it groups the other columns too
    /// (MySQL's functional dependence).
    constraints: Constraints,
    /// Where INSERT reports the AUTO_INCREMENT ids it generated (the planning session's).
    generated: Arc<GeneratedIds>,
    /// Row count and column bounds for planning, read on first use (table_statistics.rs).
    statistics: OnceLock<Statistics>,
}

impl std::fmt::Debug for BasaltTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "BasaltTable({}.{})", self.meta.database, self.meta.name)
    }
}

impl BasaltTable {
    pub fn new(
        meta: Arc<TableMeta>,
        storage: Arc<StorageEngine>,
        read_guard: Arc<ReadGuard>,
        generated: Arc<GeneratedIds>,
        time_zone: &str,
    ) -> BasaltTable {
        let mut defaults = HashMap::new();
        for c in &meta.columns {
            let e = match &c.default {
                Some(ColumnDefault::Literal(v)) => cast(lit(v.clone()), c.ty.arrow_type()),
                // The session's wall-clock time, as NOW() gives it.
                Some(ColumnDefault::CurrentTimestamp) => {
                    let utc = cast(
                        datafusion::functions::datetime::expr_fn::now(),
                        DataType::Timestamp(TimeUnit::Microsecond, None),
                    );
                    let local = if basalt_functions::time_zones::is_utc(time_zone) {
                        utc
                    } else {
                        basalt_functions::time_zones::function().call(vec![
                            utc,
                            lit("+00:00"),
                            lit(time_zone.to_string()),
                        ])
                    };
                    cast(local, c.ty.arrow_type())
                }
                // Computed with DataFusion's functions (UTC for the current time); a text no
                // longer valid names no column, failing the INSERT that needs it.
                Some(ColumnDefault::Expression(text)) => {
                    let ty = c.ty.arrow_type();
                    basalt_functions::generated_columns::default_expression(text, &ty)
                        .unwrap_or_else(|e| {
                            Expr::Column(datafusion::common::Column::from_name(format!(
                                "DEFAULT ({text}) of column {}: {e}",
                                c.name
                            )))
                        })
                }
                Some(ColumnDefault::Null) | None => continue,
            };
            defaults.insert(c.name.clone(), e);
        }
        let storage_schema = table_schema(&meta);
        let schema = declared_schema(&meta, &storage_schema);
        let constraints = match meta.keys_model {
            KeysModel::Unique | KeysModel::Aggregate if meta.num_key_columns > 0 => {
                Constraints::new_unverified(vec![Constraint::Unique(
                    (0..meta.num_key_columns)
                        .map(|i| meta.declared_position(i))
                        .collect(),
                )])
            }
            _ => Constraints::default(),
        };
        BasaltTable {
            schema,
            storage_schema,
            constraints,
            meta,
            storage,
            defaults,
            read_guard,
            generated,
            statistics: OnceLock::new(),
        }
    }
}

/// The table's columns as DataFusion sees them.
///
/// DataFusion sees every column as nullable; the INSERT sink enforces NOT NULL itself so the
/// error names the table's column (MySQL error 1048). Strings are read as Utf8View, as
/// DataFusion reads Parquet: comparisons, filters and grouping on views are faster (comparing
/// Utf8 with '' costs a memcmp call per row, views compare inline). Storage keeps Utf8; scans
/// convert, the INSERT sink converts back.
pub fn table_schema(meta: &TableMeta) -> SchemaRef {
    let fields: Vec<_> = meta
        .arrow_schema()
        .fields()
        .iter()
        .map(|f| {
            let f = f.as_ref().clone().with_nullable(true);
            match f.data_type() {
                DataType::Utf8 => f.with_data_type(DataType::Utf8View),
                _ => f,
            }
        })
        .collect();
    Arc::new(datafusion::arrow::datatypes::Schema::new(fields))
}

/// `storage` (the table's schema in storage order) in the table's declared order.
fn declared_schema(meta: &TableMeta, storage: &SchemaRef) -> SchemaRef {
    if !meta.has_declared_order() {
        return storage.clone();
    }
    let fields: Vec<_> = meta
        .declared_indexes()
        .into_iter()
        .map(|i| storage.field(i).clone())
        .collect();
    Arc::new(datafusion::arrow::datatypes::Schema::new(fields))
}

impl BasaltTable {
    /// A projection of the declared columns (None: all of them) as storage indexes; `None`
    /// when the storage order is the declared order and nothing is projected.
    fn storage_projection(&self, projection: Option<&Vec<usize>>) -> Option<Vec<usize>> {
        if !self.meta.has_declared_order() {
            return projection.cloned();
        }
        let order = &self.meta.declared_order;
        Some(match projection {
            Some(p) => p.iter().map(|&i| order[i]).collect(),
            None => order.clone(),
        })
    }
}

#[async_trait]
impl TableProvider for BasaltTable {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    fn constraints(&self) -> Option<&Constraints> {
        Some(&self.constraints)
    }

    fn get_column_default(&self, column: &str) -> Option<&Expr> {
        self.defaults.get(column)
    }

    fn statistics(&self) -> Option<Statistics> {
        Some(
            self.statistics
                .get_or_init(|| crate::table_statistics::table_statistics(self))
                .clone(),
        )
    }

    async fn scan(
        &self,
        state: &dyn DfSession,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let projection = self.storage_projection(projection);
        crate::scan::plan_scan(self, state, projection.as_ref(), filters, limit).await
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> Result<Vec<TableProviderFilterPushDown>> {
        Ok(vec![TableProviderFilterPushDown::Inexact; filters.len()])
    }

    async fn insert_into(
        &self,
        _state: &dyn DfSession,
        input: Arc<dyn ExecutionPlan>,
        insert_op: InsertOp,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if insert_op != InsertOp::Append {
            return not_impl_err!("INSERT OVERWRITE / REPLACE INTO");
        }
        let sink = BasaltSink::new(
            self.meta.clone(),
            self.schema.clone(),
            self.storage.clone(),
            self.generated.clone(),
        );
        Ok(Arc::new(DataSinkExec::new(input, Arc::new(sink), None)))
    }
}
