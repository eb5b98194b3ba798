//! The query engine: creates sessions and executes one statement at a time — queries and INSERT
//! through DataFusion, everything else through DDL, SET and SHOW handlers.

use crate::catalog_provider::Services;

use crate::session::{require_database, Session};
use crate::variables::SessionVariables;
use basalt_catalog::Catalog;
use basalt_common::Result;
use basalt_load::LoadDir;
use basalt_sql::ast::ObjectName;
use basalt_storage::StorageEngine;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::execution::runtime_env::RuntimeEnv;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

/// A statement COM_STMT_PREPARE created.
#[derive(Debug, Clone)]
pub struct PreparedInfo {
    pub id: u32,
    pub params: usize,
    pub columns: Option<SchemaRef>,
}

/// The frontend's engine: what every statement runs against (catalog, storage, workload groups,
/// process list, profiles), the sessions' shared DataFusion runtime, and the running loads.
/// Statements are dispatched in [`crate::statement`].
pub struct QueryEngine {
    pub(crate) services: Services,
    runtime: Arc<RuntimeEnv>,
    target_partitions: usize,
    next_connection_id: AtomicU32,
    pub(crate) loads: Arc<basalt_load::LoadRegistry>,
    pub(crate) dml_locks: crate::statement::dml::StatementLocks,
    pub(crate) login: crate::login::LoginThrottle,
    /// Where this frontend listens (SHOW PROC '/frontends'); set once the sockets are bound.
    pub(crate) listening: std::sync::OnceLock<crate::show_proc::ListenAddresses>,
}

/// The last part of an object name and its qualifier if any, as written (the catalog matches
/// database and table names as `lower_case_table_names` says).
pub(crate) fn split_name(name: &ObjectName) -> (Option<String>, String) {
    let parts: Vec<String> = name
        .0
        .iter()
        .filter_map(|p| p.as_ident())
        .map(|i| i.value.clone())
        .collect();
    match parts.as_slice() {
        [db, t] => (Some(db.clone()), t.clone()),
        [.., t] => (None, t.clone()),
        [] => (None, String::new()),
    }
}

impl QueryEngine {
    pub fn new(
        catalog: Arc<dyn Catalog>,
        storage: Arc<StorageEngine>,
        load_dir: Option<LoadDir>,
        query_memory_bytes: usize,
    ) -> Result<Arc<QueryEngine>> {
        let storage_dir = storage.data_dir().to_path_buf();
        // No session exists yet: hidden tables are temporary tables a crash left behind.
        crate::temporary_tables::sweep(catalog.as_ref(), &storage);
        let runtime = Arc::new(RuntimeEnv::default());
        basalt_query::register_segment_store(&runtime, &storage);
        let workload = Arc::new(basalt_workload::WorkloadManager::new(
            catalog
                .workload_groups()
                .into_iter()
                .map(|g| (g.id, g.name, g.properties))
                .collect(),
            runtime.clone(),
            query_memory_bytes,
        )?);
        crate::workload_policies::load(&workload, catalog.as_ref());
        crate::cache_memory::share_process_memory(&storage, workload.process());
        workload.start_sampler();
        let target_partitions = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(2);
        Ok(Arc::new(QueryEngine {
            services: Services {
                catalog,
                storage,
                load_dir: load_dir.map(Arc::new),
                workload,
                processes: Default::default(),
                profiles: Default::default(),
                cluster: None,
            },
            runtime,
            target_partitions,
            next_connection_id: AtomicU32::new(1),
            loads: Arc::new(basalt_load::LoadRegistry::new(
                storage_dir.join("load_errors"),
            )),
            dml_locks: Default::default(),
            login: Default::default(),
            listening: Default::default(),
        }))
    }

    /// Records where the server listens for MySQL clients and HTTP (once, after binding).
    pub fn set_listen_addresses(&self, query: std::net::SocketAddr, http: std::net::SocketAddr) {
        let _ = self
            .listening
            .set(crate::show_proc::ListenAddresses { query, http });
    }

    /// Makes this a cluster's frontend: tablets live on `cluster`'s backends (set once, at
    /// startup, before any session).
    pub(crate) fn set_cluster(
        self: &mut Arc<Self>,
        cluster: Arc<basalt_dist::Cluster>,
    ) -> Result<()> {
        let engine = Arc::get_mut(self).ok_or_else(|| {
            basalt_common::BasaltError::Internal("the engine is shared before startup ended".into())
        })?;
        engine.services.cluster = Some(cluster);
        Ok(())
    }

    /// The backends, on a cluster's frontend.
    pub fn cluster(&self) -> Option<&Arc<basalt_dist::Cluster>> {
        self.services.cluster.as_ref()
    }

    pub fn catalog(&self) -> &Arc<dyn Catalog> {
        &self.services.catalog
    }

    pub fn workload(&self) -> &Arc<basalt_workload::WorkloadManager> {
        &self.services.workload
    }

    pub(crate) fn services(&self) -> &Services {
        &self.services
    }

    /// Running and recently failed loads, and their error logs.
    pub fn load_registry(&self) -> &Arc<basalt_load::LoadRegistry> {
        &self.loads
    }

    /// Runs one Stream Load (the HTTP side hands over the body as a stream of chunks).
    pub async fn stream_load(
        &self,
        req: basalt_load::StreamLoadRequest,
        body: futures::stream::BoxStream<'static, std::result::Result<bytes::Bytes, String>>,
    ) -> basalt_load::StreamLoadResult {
        basalt_load::stream_load(self, req, body).await
    }

    pub fn next_connection_id(&self) -> u32 {
        self.next_connection_id.fetch_add(1, Ordering::Relaxed)
    }

    /// A new session for an authenticated user.
    pub fn new_session(&self, connection_id: u32, user: &str, host: &str) -> Session {
        let mut vars = SessionVariables::new(&self.services.catalog.global_variables());
        let group = crate::workload_policies::default_group(
            &self.services.workload,
            self.services.catalog.as_ref(),
            user,
        );
        if group != basalt_workload::NORMAL_GROUP {
            if let Err(e) = vars.set_session("workload_group", &group) {
                tracing::warn!("default workload group '{group}' of '{user}' not set: {e}");
            }
        }
        Session::new(
            connection_id,
            user,
            host,
            vars,
            self.services.clone(),
            self.runtime.clone(),
            self.target_partitions,
        )
    }

    /// Bytes read from and written to a client connection.
    pub fn count_traffic(&self, received: u64, sent: u64) {
        self.services.processes.status.traffic(received, sent);
    }

    /// COM_FIELD_LIST.
    pub fn table_schema(&self, session: &Session, table: &str) -> Result<SchemaRef> {
        let db = require_database(session)?;
        Ok(self
            .services
            .catalog
            .table(&db, table)?
            .declared_arrow_schema())
    }

    /// Registers a statement as running in the process list (where SHOW PROCESSLIST shows it
    /// and KILL finds it) until the guard drops.
    pub fn begin_statement(
        &self,
        session: &Session,
        sql: &str,
    ) -> crate::processes::StatementGuard {
        let group = crate::workload_groups::session_group(&self.services.workload, session).ok();
        self.services.processes.status.question();
        let statement = session.process.begin(sql, group);
        if let Some(account) = statement.account() {
            self.services.workload.track(account);
        }
        statement
    }

    /// [`QueryEngine::begin_statement`] for a prepared statement (shown by its text).
    pub fn begin_prepared(&self, session: &Session, id: u32) -> crate::processes::StatementGuard {
        let sql = session
            .prepared
            .lock()
            .get(id)
            .map(|s| s.sql.clone())
            .unwrap_or_else(|| format!("EXECUTE {id}"));
        self.begin_statement(session, &sql)
    }
}
