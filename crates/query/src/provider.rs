//! Basalt's catalog as DataFusion sees it: one catalog `def` whose schemas are the databases (plus
//! `information_schema`), and [`BasaltTable`], the table provider over a table's tablets.

use crate::df_error::to_df;
use crate::information_schema::InformationSchema;
use crate::load_path::LoadDir;
use crate::session::SessionInfo;
use crate::sink::BasaltSink;
use async_trait::async_trait;
use basalt_catalog::{Catalog, ColumnDefault, TableMeta};
use basalt_storage::{ReadGuard, StorageEngine};
use datafusion::arrow::datatypes::DataType;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::{
    CatalogProvider, CatalogProviderList, SchemaProvider, Session as DfSession, TableProvider,
};
use datafusion::common::{not_impl_err, Result};
use datafusion::datasource::sink::DataSinkExec;
use datafusion::logical_expr::dml::InsertOp;
use datafusion::logical_expr::{cast, lit, Expr, TableProviderFilterPushDown, TableType};
use datafusion::physical_plan::ExecutionPlan;
use std::collections::HashMap;
use std::sync::Arc;

pub const INFORMATION_SCHEMA: &str = "information_schema";

/// Everything a provider needs from the server.
#[derive(Clone)]
pub struct Services {
    pub catalog: Arc<Catalog>,
    pub storage: Arc<StorageEngine>,
    /// Where `local(...)` may read files; None disables it.
    pub load_dir: Option<Arc<LoadDir>>,
    pub workload: Arc<basalt_workload::WorkloadManager>,
    pub processes: Arc<crate::processes::ProcessList>,
    pub profiles: Arc<crate::profile::ProfileStore>,
}

#[derive(Debug)]
pub struct BasaltCatalogList {
    catalog: Arc<BasaltCatalogProvider>,
}

impl BasaltCatalogList {
    pub fn new(services: Services, session: Arc<SessionInfo>) -> BasaltCatalogList {
        BasaltCatalogList {
            catalog: Arc::new(BasaltCatalogProvider { services, session }),
        }
    }
}

impl CatalogProviderList for BasaltCatalogList {
    fn register_catalog(
        &self,
        _name: String,
        _catalog: Arc<dyn CatalogProvider>,
    ) -> Option<Arc<dyn CatalogProvider>> {
        None
    }

    fn catalog_names(&self) -> Vec<String> {
        vec!["def".to_string()]
    }

    fn catalog(&self, name: &str) -> Option<Arc<dyn CatalogProvider>> {
        (name == "def").then(|| self.catalog.clone() as Arc<dyn CatalogProvider>)
    }
}

struct BasaltCatalogProvider {
    services: Services,
    session: Arc<SessionInfo>,
}

impl std::fmt::Debug for BasaltCatalogProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BasaltCatalogProvider")
    }
}

impl CatalogProvider for BasaltCatalogProvider {
    fn schema_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .services
            .catalog
            .databases()
            .into_iter()
            .map(|d| d.name)
            .collect();
        names.push(INFORMATION_SCHEMA.to_string());
        names
    }

    fn schema(&self, name: &str) -> Option<Arc<dyn SchemaProvider>> {
        if name.eq_ignore_ascii_case(INFORMATION_SCHEMA) {
            return Some(Arc::new(InformationSchema::new(
                self.services.clone(),
                self.session.clone(),
            )));
        }
        if !self.services.catalog.database_exists(name) {
            return None;
        }
        Some(Arc::new(DatabaseSchema {
            services: self.services.clone(),
            database: name.to_lowercase(),
            session: self.session.clone(),
        }))
    }
}

struct DatabaseSchema {
    services: Services,
    database: String,
    session: Arc<SessionInfo>,
}

impl std::fmt::Debug for DatabaseSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DatabaseSchema({})", self.database)
    }
}

#[async_trait]
impl SchemaProvider for DatabaseSchema {
    fn table_names(&self) -> Vec<String> {
        self.services
            .catalog
            .tables(&self.database)
            .map(|ts| ts.iter().map(|t| t.name.clone()).collect())
            .unwrap_or_default()
    }

    async fn table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        // Register as a reader before taking the snapshot, so its files outlive this query.
        let guard = Arc::new(self.services.storage.begin_read());
        match self.services.catalog.table(&self.database, name) {
            Ok(meta) => Ok(Some(Arc::new(BasaltTable::new(
                meta,
                self.services.storage.clone(),
                guard,
                self.session.clone(),
            )))),
            Err(basalt_common::BasaltError::UnknownTable(_)) => Ok(None),
            Err(e) => Err(to_df(e)),
        }
    }

    fn table_exist(&self, name: &str) -> bool {
        self.services.catalog.table(&self.database, name).is_ok()
    }
}

/// A snapshot of one table (its visible rowsets at planning time) as a DataFusion table.
pub struct BasaltTable {
    pub(crate) meta: Arc<TableMeta>,
    /// Keeps the snapshot's files from being deleted while plans built from it run.
    pub(crate) read_guard: Arc<ReadGuard>,
    pub(crate) schema: SchemaRef,
    pub(crate) storage: Arc<StorageEngine>,
    defaults: HashMap<String, Expr>,
    /// The session planning with this table (INSERT reports generated AUTO_INCREMENT ids to it).
    session: Arc<SessionInfo>,
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
        session: Arc<SessionInfo>,
    ) -> BasaltTable {
        let mut defaults = HashMap::new();
        for c in &meta.columns {
            let e = match &c.default {
                Some(ColumnDefault::Literal(v)) => cast(lit(v.clone()), c.ty.arrow_type()),
                Some(ColumnDefault::CurrentTimestamp) => cast(
                    datafusion::functions::datetime::expr_fn::now(),
                    c.ty.arrow_type(),
                ),
                Some(ColumnDefault::Null) | None => continue,
            };
            defaults.insert(c.name.clone(), e);
        }
        // DataFusion sees every column as nullable; the INSERT sink enforces NOT NULL itself so
        // the error names the table's column (MySQL error 1048). Strings are read as
        // Utf8View, as DataFusion reads Parquet: comparisons, filters and grouping on views
        // are faster (comparing Utf8 with '' costs a memcmp call per row, views compare
        // inline). Storage keeps Utf8; scans convert, the INSERT sink converts back.
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
        let schema = Arc::new(datafusion::arrow::datatypes::Schema::new(fields));
        BasaltTable {
            schema,
            meta,
            storage,
            defaults,
            read_guard,
            session,
        }
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

    fn get_column_default(&self, column: &str) -> Option<&Expr> {
        self.defaults.get(column)
    }

    async fn scan(
        &self,
        state: &dyn DfSession,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        crate::scan::plan_scan(self, state, projection, filters, limit).await
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
            self.session.clone(),
        );
        Ok(Arc::new(DataSinkExec::new(input, Arc::new(sink), None)))
    }
}
