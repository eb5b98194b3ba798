//! The query engine: creates sessions and executes one statement at a time — queries and INSERT
//! through DataFusion, everything else through DDL, SET and SHOW handlers.

use crate::catalog_provider::Services;
use crate::ddl;
use crate::output::Output;
use crate::point_query::PointQuery;
use crate::prepared::PreparedStatement;
use crate::session::{require_database, Session};
use crate::show::{self, Col, ResultBuilder};
use crate::variables::{SessionVariables, VarValue};
use basalt_catalog::Catalog;
use basalt_common::df_error::from_df;
use basalt_common::{BasaltError, ParamValue, Result};
use basalt_load::LoadDir;
use basalt_sql::ast::{
    self, Expr as SqlExpr, ObjectName, ShowStatementFilter, ShowStatementFilterPosition, Value,
};
use basalt_sql::Statement;
use basalt_storage::StorageEngine;
use datafusion::arrow::array::{Array, RecordBatch, StringArray, UInt64Array};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::execution::runtime_env::RuntimeEnv;
use datafusion::execution::TaskContext;
use datafusion::logical_expr::LogicalPlan;
use datafusion::physical_plan;
use datafusion::sql::parser::Statement as DfStatement;
use futures::StreamExt;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

/// A statement COM_STMT_PREPARE created.
#[derive(Debug, Clone)]
pub struct PreparedInfo {
    pub id: u32,
    pub params: usize,
    pub columns: Option<SchemaRef>,
}

pub struct QueryEngine {
    services: Services,
    runtime: Arc<RuntimeEnv>,
    target_partitions: usize,
    next_connection_id: AtomicU32,
    loads: Arc<basalt_load::LoadRegistry>,
    dml_locks: crate::dml::StatementLocks,
}

/// The last part of an object name, lower-cased, and its qualifier if any.
pub(crate) fn split_name(name: &ObjectName) -> (Option<String>, String) {
    let parts: Vec<String> = name
        .0
        .iter()
        .filter_map(|p| p.as_ident())
        .map(|i| i.value.to_lowercase())
        .collect();
    match parts.as_slice() {
        [db, t] => (Some(db.clone()), t.clone()),
        [.., t] => (None, t.clone()),
        [] => (None, String::new()),
    }
}

fn filter_of(pos: &Option<ShowStatementFilterPosition>) -> Option<&ShowStatementFilter> {
    match pos {
        Some(ShowStatementFilterPosition::Infix(f))
        | Some(ShowStatementFilterPosition::Suffix(f)) => Some(f),
        None => None,
    }
}

fn matches_filter(filter: Option<&ShowStatementFilter>, name: &str) -> Result<bool> {
    match filter {
        None => Ok(true),
        Some(ShowStatementFilter::Like(p))
        | Some(ShowStatementFilter::ILike(p))
        | Some(ShowStatementFilter::NoKeyword(p)) => Ok(show::like(p, name)),
        Some(ShowStatementFilter::Where(_)) => {
            Err(BasaltError::NotSupported("SHOW ... WHERE".into()))
        }
    }
}

/// Text of a SET value expression: literals, identifiers (ON, utf8mb4), and numbers.
fn set_value_text(e: &SqlExpr) -> Result<String> {
    Ok(match e {
        SqlExpr::Value(v) => match &v.value {
            Value::SingleQuotedString(s) | Value::DoubleQuotedString(s) => s.clone(),
            Value::Number(n, _) => n.clone(),
            Value::Boolean(b) => (if *b { "1" } else { "0" }).to_string(),
            Value::Null => String::new(),
            other => other.to_string(),
        },
        SqlExpr::Identifier(i) => i.value.clone(),
        SqlExpr::UnaryOp {
            op: ast::UnaryOperator::Minus,
            expr,
        } => format!("-{}", set_value_text(expr)?),
        other => other.to_string(),
    })
}

impl QueryEngine {
    pub fn new(
        catalog: Arc<Catalog>,
        storage: Arc<StorageEngine>,
        load_dir: Option<LoadDir>,
        query_memory_bytes: usize,
    ) -> Result<Arc<QueryEngine>> {
        let storage_dir = storage.data_dir().to_path_buf();
        let runtime = Arc::new(RuntimeEnv::default());
        let workload = Arc::new(basalt_workload::WorkloadManager::new(
            catalog
                .workload_groups()
                .into_iter()
                .map(|g| (g.id, g.name, g.properties))
                .collect(),
            runtime.clone(),
            query_memory_bytes,
        )?);
        crate::workload_policies::load(&workload, &catalog);
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
            },
            runtime,
            target_partitions,
            next_connection_id: AtomicU32::new(1),
            loads: Arc::new(basalt_load::LoadRegistry::new(
                storage_dir.join("load_errors"),
            )),
            dml_locks: Default::default(),
        }))
    }

    pub fn catalog(&self) -> &Arc<Catalog> {
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
            &self.services.catalog,
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

    /// COM_INIT_DB / USE.
    pub fn use_database(&self, session: &Session, db: &str) -> Result<()> {
        let name = db.trim().trim_matches('`').to_lowercase();
        if name != "information_schema" && !self.services.catalog.database_exists(&name) {
            return Err(BasaltError::UnknownDatabase(name));
        }
        session.set_database(Some(name));
        Ok(())
    }

    /// COM_FIELD_LIST.
    pub fn table_schema(&self, session: &Session, table: &str) -> Result<SchemaRef> {
        let db = require_database(session)?;
        Ok(self.services.catalog.table(&db, table)?.arrow_schema())
    }

    /// Parses and executes one statement.
    pub async fn execute(&self, session: &Session, sql: &str) -> Result<Output> {
        let stmt = basalt_sql::parse_one(sql)?;
        self.execute_statement(session, stmt).await
    }

    /// Registers a statement as running in the process list (where SHOW PROCESSLIST shows it
    /// and KILL finds it) until the guard drops.
    pub fn begin_statement(
        &self,
        session: &Session,
        sql: &str,
    ) -> crate::processes::StatementGuard {
        let group = crate::workload_groups::session_group(&self.services.workload, session).ok();
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

    /// The short-circuit path alone, for callers that run it where the request arrived: the
    /// result when `sql` is a point query answered by primary-key lookup, `None` for anything
    /// else (including text that does not parse: [`QueryEngine::execute`] reports that).
    pub fn try_point_query(&self, session: &Session, sql: &str) -> Option<Result<Output>> {
        if !session.short_circuit_enabled() {
            return None;
        }
        let Ok(Statement::Standard(stmt)) = basalt_sql::parse_one(sql) else {
            return None;
        };
        if !matches!(*stmt, ast::Statement::Query(_)) {
            return None;
        }
        let db = session.database();
        let point = PointQuery::plan(&self.services, &stmt, db.as_deref(), 0)?;
        point.execute(&self.services, &[]).transpose()
    }

    /// Like [`QueryEngine::try_point_query`] for a prepared statement with its parameters.
    pub fn try_point_prepared(
        &self,
        session: &Session,
        id: u32,
        params: &[ParamValue],
    ) -> Option<Result<Output>> {
        if !session.short_circuit_enabled() {
            return None;
        }
        let stmt = session.prepared.lock().get(id)?;
        let point = stmt.point.as_ref()?;
        if let Err(e) = stmt.check_params(params) {
            return Some(Err(e));
        }
        point.execute(&self.services, params).transpose()
    }

    /// COM_STMT_PREPARE: keeps the statement under a new id.
    pub async fn prepare(&self, session: &Session, sql: &str) -> Result<PreparedInfo> {
        let (id, stmt) = self.prepare_statement(session, sql, None).await?;
        Ok(PreparedInfo {
            id,
            params: stmt.param_count(),
            columns: stmt.columns.clone(),
        })
    }

    /// COM_STMT_EXECUTE / EXECUTE: a point query goes down the short-circuit path; any other
    /// statement runs with its parameters bound as literals.
    pub async fn execute_prepared(
        &self,
        session: &Session,
        id: u32,
        params: Vec<ParamValue>,
    ) -> Result<Output> {
        let stmt = session.prepared.lock().get(id).ok_or_else(|| {
            BasaltError::UnknownPreparedStatement {
                name: id.to_string(),
                command: "mysqld_stmt_execute".into(),
            }
        })?;
        stmt.check_params(&params)?;
        if let Some(point) = &stmt.point {
            if session.short_circuit_enabled() {
                if let Some(out) = point.execute(&self.services, &params)? {
                    return Ok(out);
                }
            }
        }
        let text = stmt.bind(&params)?;
        Box::pin(self.execute(session, &text)).await
    }

    /// COM_STMT_CLOSE.
    pub fn close_prepared(&self, session: &Session, id: u32) {
        session.prepared.lock().remove(id);
    }

    async fn prepare_statement(
        &self,
        session: &Session,
        sql: &str,
        name: Option<&str>,
    ) -> Result<(u32, Arc<PreparedStatement>)> {
        let placeholders = basalt_sql::placeholder_offsets(sql)?;
        let stmt = basalt_sql::parse_one(sql)?;
        if matches!(
            stmt,
            Statement::Prepare { .. } | Statement::Execute { .. } | Statement::Deallocate { .. }
        ) {
            return Err(BasaltError::NotSupported(
                "PREPARE of PREPARE, EXECUTE or DEALLOCATE".into(),
            ));
        }
        let database = session.database();
        let (point, columns) = match &stmt {
            Statement::Standard(s) => {
                let point =
                    PointQuery::plan(&self.services, s, database.as_deref(), placeholders.len())
                        .map(Arc::new);
                let columns = match &point {
                    Some(p) => Some(p.schema.clone()),
                    None => self.describe_columns(session, s).await?,
                };
                (point, columns)
            }
            _ => (None, None),
        };
        let limit = match session.variables().get("max_prepared_stmt_count") {
            Ok(VarValue::Int(n)) => n.max(0) as u64,
            _ => 16_382,
        };
        let prepared = PreparedStatement {
            sql: sql.to_string(),
            placeholders,
            columns,
            point,
        };
        let mut all = session.prepared.lock();
        let id = all.add(prepared, name, limit)?;
        let stmt = all
            .get(id)
            .ok_or_else(|| BasaltError::Internal("prepared statement vanished".into()))?;
        Ok((id, stmt))
    }

    /// The result columns of a query with placeholders, planned without running it; `None`
    /// when they depend on the values. Unknown tables and columns are reported at once.
    async fn describe_columns(
        &self,
        session: &Session,
        stmt: &ast::Statement,
    ) -> Result<Option<SchemaRef>> {
        if !matches!(stmt, ast::Statement::Query(_)) {
            return Ok(None);
        }
        let column_names = mysql_column_names(stmt);
        let mut numbered = stmt.clone();
        let mut n = 0;
        let _ = ast::visit_expressions_mut(&mut numbered, |e| {
            if let SqlExpr::Value(v) = e {
                if matches!(&v.value, Value::Placeholder(p) if p == "?") {
                    n += 1;
                    v.value = Value::Placeholder(format!("${n}"));
                }
            }
            std::ops::ControlFlow::<()>::Continue(())
        });
        crate::mysql_compat::rewrite(&mut numbered);
        let state = session.ctx.state();
        match state
            .statement_to_plan(DfStatement::Statement(Box::new(numbered)))
            .await
        {
            Ok(plan) => {
                let schema = Arc::new(plan.schema().as_arrow().clone());
                Ok(Some(renamed_schema(schema, column_names)))
            }
            Err(e) => {
                let e = ddl::no_database_hint(&self.services, from_df(e));
                match e.mysql_code() {
                    1146 | 1049 | 1046 | 1054 => Err(e),
                    _ => Ok(None),
                }
            }
        }
    }

    /// The values of user variables, as EXECUTE ... USING passes them.
    fn user_variable_params(session: &Session, names: &[String]) -> Vec<ParamValue> {
        let vars = session.variables();
        names
            .iter()
            .map(|n| match vars.get_user(n) {
                Some(VarValue::Int(i)) => ParamValue::Int(i),
                Some(VarValue::Str(s)) => ParamValue::Bytes(s.into_bytes()),
                None => ParamValue::Null,
            })
            .collect()
    }

    async fn execute_statement(&self, session: &Session, stmt: Statement) -> Result<Output> {
        let catalog = &self.services.catalog;
        let storage = &self.services.storage;
        match stmt {
            Statement::Prepare { name, source } => {
                let text = match source {
                    basalt_sql::PrepareSource::Text(t) => t,
                    basalt_sql::PrepareSource::Variable(v) => {
                        match session.variables().get_user(&v) {
                            Some(VarValue::Str(s)) => s,
                            Some(VarValue::Int(i)) => i.to_string(),
                            None => {
                                return Err(BasaltError::syntax_at(
                                    format!("user variable @{v} holds no statement text"),
                                    "NULL",
                                    1,
                                    1,
                                ))
                            }
                        }
                    }
                };
                self.prepare_statement(session, &text, Some(&name)).await?;
                Ok(Output::Ok {
                    affected_rows: 0,
                    last_insert_id: 0,
                    info: "Statement prepared".into(),
                })
            }
            Statement::Execute { name, using } => {
                let id = session.prepared.lock().id_of(&name).ok_or_else(|| {
                    BasaltError::UnknownPreparedStatement {
                        name: name.clone(),
                        command: "EXECUTE".into(),
                    }
                })?;
                let params = Self::user_variable_params(session, &using);
                Box::pin(self.execute_prepared(session, id, params)).await
            }
            Statement::Deallocate { name } => {
                let mut all = session.prepared.lock();
                match all.id_of(&name) {
                    Some(id) => {
                        all.remove(id);
                        Ok(Output::ok())
                    }
                    None => Err(BasaltError::UnknownPreparedStatement {
                        name,
                        command: "DEALLOCATE PREPARE".into(),
                    }),
                }
            }
            Statement::CreateIndex {
                name: _,
                table,
                columns,
            } => {
                let db = ddl::database_of(session, &table.database)?;
                let meta = catalog.table(&db, &table.table)?;
                for c in &columns {
                    if meta.column_index(c).is_none() {
                        return Err(BasaltError::UnknownColumn {
                            column: c.clone(),
                            context: "index".into(),
                        });
                    }
                }
                Ok(Output::ok())
            }
            Statement::DropIndex { name: _, table } => {
                let db = ddl::database_of(session, &table.database)?;
                catalog.table(&db, &table.table)?;
                Ok(Output::ok())
            }
            Statement::Standard(s) => self.execute_standard(session, *s).await,
            Statement::CreateTable(ct) => {
                let db = match &ct.name.database {
                    Some(d) => d.to_lowercase(),
                    None => require_database(session)?,
                };
                catalog.create_table(&db, &ct)?;
                Ok(Output::ok())
            }
            Statement::AlterPartitions { table, op } => {
                let db = ddl::database_of(session, &table.database)?;
                match op {
                    basalt_sql::PartitionOp::Add(def) => {
                        catalog.add_partition(&db, &table.table, &def)?
                    }
                    basalt_sql::PartitionOp::Drop { name, if_exists } => {
                        if let Some(p) =
                            catalog.drop_partition(&db, &table.table, &name, if_exists)?
                        {
                            storage.remove_partition_files(&p);
                        }
                    }
                }
                Ok(Output::ok())
            }
            Statement::CreateWorkloadGroup {
                name,
                if_not_exists,
                properties,
            } => crate::workload_groups::create(
                &self.services.workload,
                catalog,
                session,
                &name,
                if_not_exists,
                &properties,
            ),
            Statement::AlterWorkloadGroup { name, properties } => crate::workload_groups::alter(
                &self.services.workload,
                catalog,
                session,
                &name,
                &properties,
            ),
            Statement::DropWorkloadGroup { name, if_exists } => crate::workload_groups::drop(
                &self.services.workload,
                catalog,
                session,
                &name,
                if_exists,
            ),
            Statement::CreateWorkloadPolicy {
                name,
                if_not_exists,
                conditions,
                actions,
                properties,
            } => crate::workload_policies::create(
                &self.services.workload,
                &self.services.catalog,
                session,
                crate::workload_policies::CreatePolicy {
                    name: &name,
                    if_not_exists,
                    conditions: &conditions,
                    actions: &actions,
                    properties: &properties,
                },
            ),
            Statement::AlterWorkloadPolicy { name, properties } => crate::workload_policies::alter(
                &self.services.workload,
                &self.services.catalog,
                session,
                &name,
                &properties,
            ),
            Statement::DropWorkloadPolicy { name, if_exists } => crate::workload_policies::drop(
                &self.services.workload,
                &self.services.catalog,
                session,
                &name,
                if_exists,
            ),
            Statement::GrantWorkloadGroup {
                group,
                user,
                revoke,
            } => crate::workload_policies::grant(
                &self.services.workload,
                &self.services.catalog,
                session,
                &group,
                &user,
                revoke,
            ),
            Statement::SetUserProperty { user, properties } => {
                crate::workload_policies::set_property(
                    &self.services.workload,
                    &self.services.catalog,
                    session,
                    user.as_deref(),
                    &properties,
                )
            }
            Statement::ShowQueryProfile { query_id } => match query_id {
                None => Ok(crate::profile::show_list(
                    &self.services.profiles,
                    session.user(),
                )),
                Some(id) => crate::profile::show_one(&self.services.profiles, session.user(), &id),
            },
            Statement::ShowWorkloadGroups { like } => Ok(crate::workload_groups::show(
                &self.services.workload,
                like.as_deref(),
            )),
            Statement::ShowWarnings => {
                Ok(
                    ResultBuilder::new(&[Col::str("Level"), Col::int("Code"), Col::str("Message")])
                        .into_output(),
                )
            }
            Statement::ShowPartitions { table } => {
                let db = ddl::database_of(session, &table.database)?;
                Ok(show::show_partitions(
                    catalog.table(&db, &table.table)?.as_ref(),
                ))
            }
            Statement::ShowTablets { table } => {
                let db = ddl::database_of(session, &table.database)?;
                Ok(show::show_tablets(
                    catalog.table(&db, &table.table)?.as_ref(),
                ))
            }
            Statement::ShowLoad {
                stream,
                database,
                label,
                limit,
            } => {
                let db = match database {
                    Some(d) => d.to_lowercase(),
                    None => require_database(session)?,
                };
                if !catalog.database_exists(&db) {
                    return Err(BasaltError::UnknownDatabase(db));
                }
                let mut jobs = catalog.load_jobs(&db);
                jobs.extend(self.loads.failures(&db));
                jobs.sort_by_key(|j| (j.finished_ms, j.txn_id));
                if let Some(l) = label {
                    jobs.retain(|j| j.label == l);
                }
                if let Some(n) = limit {
                    let skip = jobs.len().saturating_sub(n as usize);
                    jobs.drain(..skip);
                }
                Ok(show::show_load(&jobs, stream))
            }
            Statement::CreateUser {
                user,
                password,
                if_not_exists,
            } => {
                ddl::require_admin(session, "CREATE USER")?;
                catalog.create_user(&user.user, &user.host, password.as_deref(), if_not_exists)?;
                Ok(Output::ok())
            }
            Statement::DropUser { users, if_exists } => {
                ddl::require_admin(session, "DROP USER")?;
                for u in users {
                    catalog.drop_user(&u.user, &u.host, if_exists)?;
                }
                Ok(Output::ok())
            }
            Statement::SetPassword { user, password } => {
                let (name, host) = match user {
                    Some(u) => {
                        if u.user != session.user() {
                            ddl::require_admin(session, "SET PASSWORD")?;
                        }
                        (u.user, u.host)
                    }
                    None => {
                        let me = catalog
                            .find_user(session.user(), session.host())
                            .ok_or_else(|| BasaltError::Internal("current user vanished".into()))?;
                        (me.user, me.host)
                    }
                };
                catalog.set_password(&name, &host, &password)?;
                Ok(Output::ok())
            }
        }
    }

    async fn execute_standard(&self, session: &Session, stmt: ast::Statement) -> Result<Output> {
        let catalog = &self.services.catalog;
        use ast::Statement as S;
        if session.short_circuit_enabled() {
            match &stmt {
                S::Query(_) => {
                    let db = session.database();
                    if let Some(point) = PointQuery::plan(&self.services, &stmt, db.as_deref(), 0) {
                        if let Some(out) = point.execute(&self.services, &[])? {
                            return Ok(out);
                        }
                    }
                }
                S::Explain {
                    statement,
                    analyze: false,
                    ..
                } => {
                    let db = session.database();
                    if let Some(point) =
                        PointQuery::plan(&self.services, statement, db.as_deref(), 0)
                    {
                        let mut b = ResultBuilder::new(&[Col::str("plan_type"), Col::str("plan")]);
                        b.row(vec!["physical_plan".into(), point.explain().into()]);
                        return Ok(b.into_output());
                    }
                }
                _ => {}
            }
        }
        match stmt {
            S::Query(_) | S::Insert(_) => self.run_datafusion(session, stmt, false).await,
            S::Delete(delete) => self.delete(session, &delete).await,
            S::Update(update) => self.update(session, &update).await,
            S::Explain { .. } => self.run_datafusion(session, stmt, true).await,
            S::Set(set) => self.execute_set(session, set),
            S::Use(u) => {
                let name = match u {
                    ast::Use::Object(n) | ast::Use::Database(n) | ast::Use::Schema(n) => {
                        split_name(&n).1
                    }
                    other => return Err(BasaltError::NotSupported(other.to_string())),
                };
                self.use_database(session, &name)?;
                Ok(Output::ok())
            }
            S::CreateDatabase {
                db_name,
                if_not_exists,
                ..
            } => {
                catalog.create_database(&split_name(&db_name).1, if_not_exists)?;
                Ok(Output::ok())
            }
            S::CreateSchema {
                schema_name: ast::SchemaName::Simple(n),
                if_not_exists,
                ..
            } => {
                catalog.create_database(&split_name(&n).1, if_not_exists)?;
                Ok(Output::ok())
            }
            S::Drop {
                object_type,
                if_exists,
                names,
                ..
            } => {
                for n in &names {
                    ddl::drop_object(&self.services, session, object_type, n, if_exists)?;
                }
                Ok(Output::ok())
            }
            S::Truncate(t) => {
                for target in &t.table_names {
                    let (db, name) = split_name(&target.name);
                    let db = ddl::database_of(session, &db)?;
                    let old = catalog.truncate_table(&db, &name)?;
                    self.services
                        .storage
                        .remove_tablet_files(old.tablets().map(|(_, t)| t));
                }
                Ok(Output::ok())
            }
            S::ShowDatabases { show_options, .. } | S::ShowSchemas { show_options, .. } => {
                let filter = filter_of(&show_options.filter_position);
                let mut b = ResultBuilder::new(&[Col::str("Database")]);
                let mut names: Vec<String> =
                    catalog.databases().into_iter().map(|d| d.name).collect();
                names.push("information_schema".into());
                names.sort();
                for n in names {
                    if matches_filter(filter, &n)? {
                        b.row(vec![n.into()]);
                    }
                }
                Ok(b.into_output())
            }
            S::ShowTables {
                full, show_options, ..
            } => {
                let db = match show_options
                    .show_in
                    .as_ref()
                    .and_then(|i| i.parent_name.as_ref())
                {
                    Some(n) => split_name(n).1,
                    None => require_database(session)?,
                };
                let filter = filter_of(&show_options.filter_position);
                let header = format!("Tables_in_{db}");
                let mut cols = vec![Col::str(&header)];
                if full {
                    cols.push(Col::str("Table_type"));
                }
                let mut b = ResultBuilder::new(&cols);
                let tables: Vec<String> = if db == "information_schema" {
                    let mut names: Vec<String> = crate::information_schema::TABLES
                        .iter()
                        .map(|t| t.to_string())
                        .collect();
                    names.sort();
                    names
                } else {
                    catalog
                        .tables(&db)?
                        .iter()
                        .map(|t| t.name.clone())
                        .collect()
                };
                for t in tables {
                    if matches_filter(filter, &t)? {
                        let mut row = vec![t.into()];
                        if full {
                            row.push("BASE TABLE".into());
                        }
                        b.row(row);
                    }
                }
                Ok(b.into_output())
            }
            S::ShowCreate {
                obj_type: ast::ShowCreateObject::Table,
                obj_name,
            } => {
                let (db, name) = split_name(&obj_name);
                let db = ddl::database_of(session, &db)?;
                Ok(show::show_create_table(catalog.table(&db, &name)?.as_ref()))
            }
            S::ShowColumns { show_options, .. } => {
                let name = show_options
                    .show_in
                    .as_ref()
                    .and_then(|i| i.parent_name.as_ref())
                    .ok_or_else(|| BasaltError::NotSupported("SHOW COLUMNS without FROM".into()))?;
                let (db, name) = split_name(name);
                let db = ddl::database_of(session, &db)?;
                Ok(show::describe(catalog.table(&db, &name)?.as_ref()))
            }
            S::ExplainTable { table_name, .. } => {
                let (db, name) = split_name(&table_name);
                let db = ddl::database_of(session, &db)?;
                Ok(show::describe(catalog.table(&db, &name)?.as_ref()))
            }
            S::ShowVariables { filter, global, .. } => {
                let mut b = ResultBuilder::new(&[Col::str("Variable_name"), Col::str("Value")]);
                let vars = session.variables();
                for (name, value) in vars.all(global) {
                    if matches_filter(filter.as_ref(), name)? {
                        b.row(vec![name.into(), value.as_text().into()]);
                    }
                }
                Ok(b.into_output())
            }
            S::ShowCollation { .. } => {
                let mut b = ResultBuilder::new(&[
                    Col::str("Collation"),
                    Col::str("Charset"),
                    Col::int("Id"),
                    Col::str("Default"),
                    Col::str("Compiled"),
                    Col::int("Sortlen"),
                ]);
                b.row(vec![
                    "utf8mb4_general_ci".into(),
                    "utf8mb4".into(),
                    45i64.into(),
                    "Yes".into(),
                    "Yes".into(),
                    1i64.into(),
                ]);
                b.row(vec![
                    "utf8mb4_bin".into(),
                    "utf8mb4".into(),
                    46i64.into(),
                    "".into(),
                    "Yes".into(),
                    1i64.into(),
                ]);
                Ok(b.into_output())
            }
            S::ShowCharset(_) => {
                let mut b = ResultBuilder::new(&[
                    Col::str("Charset"),
                    Col::str("Description"),
                    Col::str("Default collation"),
                    Col::int("Maxlen"),
                ]);
                b.row(vec![
                    "utf8mb4".into(),
                    "UTF-8 Unicode".into(),
                    "utf8mb4_general_ci".into(),
                    4i64.into(),
                ]);
                Ok(b.into_output())
            }
            S::ShowStatus { .. } => {
                let b = ResultBuilder::new(&[Col::str("Variable_name"), Col::str("Value")]);
                Ok(b.into_output())
            }
            S::StartTransaction { .. } | S::Commit { .. } | S::Rollback { .. } => Ok(Output::ok()),
            S::Kill { modifier, id } => {
                crate::process_admin::kill(&self.services, session, modifier, id)
            }
            S::ShowProcessList { full } => Ok(crate::process_admin::show_processlist(
                &self.services,
                session,
                full,
            )),
            other => {
                let text = other.to_string();
                let word: String = text
                    .split_whitespace()
                    .take(2)
                    .collect::<Vec<_>>()
                    .join(" ");
                Err(BasaltError::NotSupported(format!("statement '{word} ...'")))
            }
        }
    }

    fn execute_set(&self, session: &Session, set: ast::Set) -> Result<Output> {
        match set {
            ast::Set::SetNames { charset_name, .. } => {
                let mut vars = session.info.vars.write();
                for v in [
                    "character_set_client",
                    "character_set_connection",
                    "character_set_results",
                ] {
                    vars.set_session(v, &charset_name.value)?;
                }
            }
            ast::Set::SetNamesDefault {} => {}
            // Statements are individually atomic; isolation and access modes are accepted.
            ast::Set::SetTransaction { .. } => {}
            ast::Set::SingleAssignment {
                scope,
                variable,
                values,
                ..
            } => {
                let value = values
                    .first()
                    .map(set_value_text)
                    .transpose()?
                    .unwrap_or_default();
                self.assign(session, scope, &variable, &values, value)?;
            }
            ast::Set::MultipleAssignments { assignments } => {
                for a in assignments {
                    let value = set_value_text(&a.value)?;
                    self.assign(
                        session,
                        a.scope,
                        &a.name,
                        std::slice::from_ref(&a.value),
                        value,
                    )?;
                }
            }
            other => return Err(BasaltError::NotSupported(other.to_string())),
        }
        Ok(Output::ok())
    }

    fn assign(
        &self,
        session: &Session,
        scope: Option<ast::ContextModifier>,
        variable: &ObjectName,
        values: &[SqlExpr],
        value: String,
    ) -> Result<()> {
        let parts: Vec<String> = variable
            .0
            .iter()
            .filter_map(|p| p.as_ident())
            .map(|i| i.value.clone())
            .collect();
        let joined = parts.join(".");
        // User variable: SET @x = 1
        if joined.starts_with('@') && !joined.starts_with("@@") {
            let v = match values.first() {
                Some(SqlExpr::Value(v)) if matches!(v.value, Value::Number(_, _)) => value
                    .parse::<i64>()
                    .map(VarValue::Int)
                    .unwrap_or(VarValue::Str(value)),
                _ => VarValue::Str(value),
            };
            session
                .info
                .vars
                .write()
                .set_user(joined.trim_start_matches('@'), v);
            return Ok(());
        }
        let mut name = joined.trim_start_matches('@').to_lowercase();
        let mut global = matches!(scope, Some(ast::ContextModifier::Global));
        for (prefix, is_global) in [("global.", true), ("session.", false), ("local.", false)] {
            if let Some(rest) = name.strip_prefix(prefix) {
                global = is_global;
                name = rest.to_string();
            }
        }
        // DataFusion's own execution options (e.g. `SET datafusion.execution.batch_size =
        // 4096`) tune this session's planner and operators.
        if name.starts_with("datafusion.") {
            // DataFusion spells booleans true/false where MySQL's SET yields 1/0 or ON/OFF.
            let value = match values.first() {
                Some(SqlExpr::Value(v)) if matches!(v.value, Value::Boolean(_)) => {
                    v.value.to_string()
                }
                _ if value.eq_ignore_ascii_case("on") => "true".to_string(),
                _ if value.eq_ignore_ascii_case("off") => "false".to_string(),
                _ => value,
            };
            if global {
                return Err(BasaltError::NotSupported(format!(
                    "SET GLOBAL {name}: DataFusion options are per session"
                )));
            }
            return session
                .ctx
                .state_ref()
                .write()
                .config_mut()
                .options_mut()
                .set(&name, &value)
                .map_err(|e| match e.to_string() {
                    m if m.contains("not found") || m.contains("could not find") => {
                        BasaltError::UnknownVariable(name.clone())
                    }
                    _ => BasaltError::WrongVariableValue {
                        name: name.clone(),
                        value: value.clone(),
                    },
                });
        }
        if name == "workload_group" {
            let group = value.trim().to_ascii_lowercase();
            if !self.services.workload.exists(&group) {
                return Err(BasaltError::UnknownWorkloadGroup(group));
            }
            let user = session.user();
            if !crate::workload_policies::may_use(&self.services.catalog, user, &group) {
                return Err(crate::workload_policies::usage_denied(user, &group));
            }
        }
        if global {
            ddl::require_admin(session, "SET GLOBAL")?;
            let (n, text) = session.info.vars.write().set_global(&name, &value)?;
            self.services.catalog.set_global_variable(&n, &text)?;
        } else {
            session.info.vars.write().set_session(&name, &value)?;
        }
        Ok(())
    }

    /// `DELETE FROM t WHERE ..` on a Unique table: the matching rows become tombstones in one
    /// atomic load.
    async fn delete(&self, session: &Session, delete: &ast::Delete) -> Result<Output> {
        let plan = crate::dml::plan_delete(&self.services, session, delete)?;
        let _serialized = self.dml_locks.lock(plan.table.id).await;
        let query = parse_generated(&plan.sql)?;
        let rows = match self.run_datafusion(session, query, false).await? {
            Output::Rows { stream, .. } => stream,
            _ => {
                return Err(BasaltError::Internal(
                    "DELETE's row query gave no rows".into(),
                ))
            }
        };
        // The table as of now (not as planned): a load may have published meanwhile.
        let table = self
            .services
            .catalog
            .table_by_id(plan.table.id)
            .ok_or_else(|| {
                BasaltError::UnknownTable(format!("{}.{}", plan.table.database, plan.table.name))
            })?;
        let deleted = basalt_query::delete_rows(&self.services.storage, table, rows).await?;
        Ok(Output::Ok {
            affected_rows: deleted,
            last_insert_id: 0,
            info: String::new(),
        })
    }

    /// `UPDATE t SET .. WHERE ..` on a Unique table: the new rows replace the old ones in one
    /// atomic load (an `INSERT INTO t SELECT ..` over the current rows).
    async fn update(&self, session: &Session, update: &ast::Update) -> Result<Output> {
        let plan = crate::dml::plan_update(&self.services, session, update)?;
        let _serialized = self.dml_locks.lock(plan.table.id).await;
        let insert = parse_generated(&plan.sql)?;
        match self.run_datafusion(session, insert, false).await? {
            Output::Ok {
                affected_rows,
                last_insert_id,
                ..
            } => Ok(Output::Ok {
                affected_rows,
                last_insert_id,
                info: format!(
                    "Rows matched: {affected_rows}  Changed: {affected_rows}  Warnings: 0"
                ),
            }),
            _ => Err(BasaltError::Internal("UPDATE's write gave no count".into())),
        }
    }

    /// Plans and runs a query, INSERT or EXPLAIN with DataFusion.
    async fn run_datafusion(
        &self,
        session: &Session,
        mut stmt: ast::Statement,
        explain: bool,
    ) -> Result<Output> {
        session.scan_reports.clear();
        // Result columns are named from the statement as the client wrote it.
        let column_names = mysql_column_names(&stmt);
        if crate::mysql_compat::expression_depth(&stmt) > crate::mysql_compat::MAX_EXPRESSION_DEPTH
        {
            return Err(BasaltError::NotSupported(format!(
                "expressions nested more than {} levels deep",
                crate::mysql_compat::MAX_EXPRESSION_DEPTH
            )));
        }
        crate::mysql_compat::rewrite(&mut stmt);
        crate::local_calls::rewrite_calls(&mut stmt)?;
        let mut state = session.ctx.state();
        let plan = state
            .statement_to_plan(DfStatement::Statement(Box::new(stmt)))
            .await
            .map_err(|e| ddl::no_database_hint(&self.services, from_df(e)))?;
        let is_insert = matches!(&plan, LogicalPlan::Dml(_));
        // The statement's account (opened when it began, in the session's workload group)
        // decides the group: admission into it (the slot is held until the results are
        // consumed or dropped), its memory pool, and the CPU time and reads charged to it and
        // paused by its limits (scans find the account on the session config).
        let account = match session.process.account() {
            Some(account) => account,
            None => basalt_workload::QueryAccount::new(
                crate::workload_groups::session_group(&self.services.workload, session)?,
                session.user(),
                Default::default(),
            ),
        };
        let group = account.group();
        let permit = account.hold_slot(group.admit().await?);
        if is_insert {
            session.info.generated_ids.reset();
        }
        state.config_mut().set_extension(account.clone());
        let physical = state.create_physical_plan(&plan).await.map_err(from_df)?;
        let physical = basalt_workload::account_plan(physical, &account).map_err(from_df)?;
        let task = Arc::new(TaskContext::from(&state).with_runtime(group.query_runtime(&account)));
        let mut profile = session.profile_enabled().then(|| {
            crate::profile::ProfileRecorder::new(
                self.services.profiles.clone(),
                physical.clone(),
                account.clone(),
                session.user(),
                session.info.database(),
                session.process.activity().sql.unwrap_or_default(),
            )
        });
        if is_insert {
            let batches = physical_plan::collect(physical, task)
                .await
                .map_err(from_df)?;
            let count = batches
                .first()
                .and_then(|b| {
                    b.column(0)
                        .as_any()
                        .downcast_ref::<UInt64Array>()
                        .map(|a| a.value(0))
                })
                .unwrap_or(0);
            let generated = session.info.generated_ids.first();
            if generated != 0 {
                session.set_last_insert_id(generated);
            }
            return Ok(Output::Ok {
                affected_rows: count,
                last_insert_id: generated,
                info: String::new(),
            });
        }
        if explain {
            let batches = physical_plan::collect(physical, task)
                .await
                .map_err(from_df)?;
            return Ok(with_scan_reports(batches, session.scan_reports.take()));
        }
        let stream = physical_plan::execute_stream(physical, task).map_err(from_df)?;
        let schema = renamed_schema(stream.schema(), column_names);
        let out_schema = schema.clone();
        let stream = stream.map(move |r| {
            let _slot = &permit;
            if let (Some(profile), Err(e)) = (profile.as_mut(), &r) {
                profile.failed(&e.to_string());
            }
            let batch = r.map_err(from_df)?;
            let options = datafusion::arrow::array::RecordBatchOptions::new()
                .with_row_count(Some(batch.num_rows()));
            RecordBatch::try_new_with_options(
                out_schema.clone(),
                batch.columns().to_vec(),
                &options,
            )
            .map_err(|e| BasaltError::Internal(e.to_string()))
        });
        Ok(Output::Rows {
            schema,
            stream: Box::pin(stream),
        })
    }
}

/// Parses SQL that Basalt wrote itself (from a checked statement's parts).
fn parse_generated(sql: &str) -> Result<ast::Statement> {
    match basalt_sql::parse_one(sql)? {
        Statement::Standard(stmt) => Ok(*stmt),
        _ => Err(BasaltError::Internal(format!(
            "unexpected generated statement: {sql}"
        ))),
    }
}

/// MySQL names an unaliased result column by the expression's text (`SELECT 1+1` gives a
/// column named `1+1`); DataFusion uses its own rendering. For a plain SELECT without
/// wildcards, the names MySQL would give.
fn mysql_column_names(stmt: &ast::Statement) -> Option<Vec<String>> {
    let ast::Statement::Query(q) = stmt else {
        return None;
    };
    let ast::SetExpr::Select(select) = q.body.as_ref() else {
        return None;
    };
    select
        .projection
        .iter()
        .map(|item| match item {
            ast::SelectItem::UnnamedExpr(SqlExpr::Identifier(i)) => Some(i.value.clone()),
            ast::SelectItem::UnnamedExpr(SqlExpr::CompoundIdentifier(parts))
                if !parts[0].value.starts_with('@') =>
            {
                parts.last().map(|i| i.value.clone())
            }
            ast::SelectItem::UnnamedExpr(e) => Some(e.to_string()),
            ast::SelectItem::ExprWithAlias { alias, .. } => Some(alias.value.clone()),
            _ => None,
        })
        .collect()
}

fn renamed_schema(schema: SchemaRef, names: Option<Vec<String>>) -> SchemaRef {
    match names {
        Some(names) if names.len() == schema.fields().len() => {
            let fields: Vec<_> = schema
                .fields()
                .iter()
                .zip(names)
                .map(|(f, n)| f.as_ref().clone().with_name(n))
                .collect();
            Arc::new(datafusion::arrow::datatypes::Schema::new(fields))
        }
        _ => schema,
    }
}

/// Appends Basalt's pruning lines to DataFusion's EXPLAIN output.
fn with_scan_reports(batches: Vec<RecordBatch>, reports: Vec<String>) -> Output {
    let schema = match batches.first() {
        Some(b) => b.schema(),
        None => return Output::ok(),
    };
    let mut out = batches;
    if !reports.is_empty() && schema.fields().len() == 2 {
        let plan_type = StringArray::from(vec!["basalt_scan"; reports.len()]);
        let plan = StringArray::from(reports);
        if let Ok(b) =
            RecordBatch::try_new(schema.clone(), vec![Arc::new(plan_type), Arc::new(plan)])
        {
            out.push(b);
        }
    }
    Output::batches(schema, out)
}
