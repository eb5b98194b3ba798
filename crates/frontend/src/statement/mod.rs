//! The statement dispatcher: one statement at a time, routed by kind to the module of its
//! family — queries, INSERT and EXPLAIN through DataFusion (`query`), DELETE/UPDATE (`dml`),
//! DDL (`ddl`), SET/USE (`set`), SHOW and DESCRIBE (`show`), PREPARE/EXECUTE (`prepare`),
//! accounts, workload groups and policies, KILL and profiles (`admin`).

mod admin;
pub(crate) mod ddl;
mod delete_rewrite;
mod generated_values;
mod insert_defaults;
mod insert_ignore;
mod insert_set;
mod insert_values;
mod key_updates;
mod labelled_insert;
mod load_data;
pub use load_data::local_infile_name;
pub(crate) mod dml;
mod metadata_show;
mod multi_table_apply;
mod multi_table_plan;
mod mysql_forms;
mod on_update_timestamp;
mod outer_join_targets;
mod partition_inserts;
mod picked_rows;
mod prepare;
mod query;
mod row_references;
pub(crate) use query::mysql_column_names;
mod set;
mod show;
mod time_into_dates;
mod update_assignments;
mod update_rewrite;
mod upsert;

use crate::engine::QueryEngine;
use crate::output::Output;
use crate::session::Session;
use basalt_common::{BasaltError, Result};
use basalt_sql::ast;
use basalt_sql::Statement;

/// A statement handed to a family module that does not own it: a dispatcher bug.
fn misrouted() -> BasaltError {
    BasaltError::Internal("statement routed to the wrong family".into())
}

/// One statement as the parser left it, parsed once and handed to the short-circuit check and
/// then to execution.
#[derive(Debug)]
pub struct ParsedStatement {
    statement: Statement,
    /// The short-circuit path has already looked at it ([`QueryEngine::try_point_query`]) and
    /// found no point query to answer: execution does not look again.
    point_checked: bool,
}

impl ParsedStatement {
    pub(crate) fn new(statement: Statement) -> ParsedStatement {
        ParsedStatement {
            statement,
            point_checked: false,
        }
    }
}

impl QueryEngine {
    /// Parses one statement of a session's client (1064 with the position of a syntax error),
    /// with the session's rule for `\` in string literals.
    pub fn parse(&self, session: &Session, sql: &str) -> Result<ParsedStatement> {
        let mut statement = basalt_sql::parse_one_with(sql, session.sql_syntax())?;
        crate::temporary_tables::refuse_hidden_names(&statement)?;
        crate::temporary_tables::resolve(session, &mut statement);
        Ok(ParsedStatement::new(statement))
    }

    /// Parses and executes one statement.
    pub async fn execute(&self, session: &Session, sql: &str) -> Result<Output> {
        let stmt = self.parse(session, sql)?;
        self.execute_parsed(session, stmt).await
    }

    /// Executes a statement [`QueryEngine::parse`] parsed.
    pub async fn execute_parsed(&self, session: &Session, stmt: ParsedStatement) -> Result<Output> {
        let mut stmt = stmt;
        if let Statement::SetStatement {
            assignments,
            statement,
        } = stmt.statement
        {
            let inner = ParsedStatement::new(*statement);
            return self.set_statement(session, assignments, inner).await;
        }
        // The session's temporary tables by their hidden names (again for statements that
        // did not come through `parse`; hidden names resolve to nothing further).
        crate::temporary_tables::resolve(session, &mut stmt.statement);
        if crate::warnings::clears(&stmt.statement) {
            session.info.warnings.clear();
        }
        session.info.row_count.begin();
        session.info.found_rows.begin();
        let effect = crate::transaction::Effect::of(&stmt.statement);
        let autocommit_before = session.autocommit();
        let label_kind = crate::transaction::LabelReport::of(&stmt.statement);
        let began =
            crate::transaction::before_statement(self.services(), session, &stmt.statement, effect);
        let result = match (began, stmt.statement) {
            (Err(e), _) => Err(e),
            (Ok(()), Statement::Standard(s)) => {
                self.execute_standard(session, *s, stmt.point_checked).await
            }
            (Ok(()), other) => self.execute_statement(session, other).await,
        };
        let mut result = crate::transaction::after_statement(
            self.services(),
            session,
            effect,
            autocommit_before,
            result,
        );
        if let Ok(Output::Ok { info, .. }) = &mut result {
            if let Some(report) = label_kind.and_then(|k| k.report(session)) {
                *info = report;
            }
        }
        session.info.row_count.finish(&result);
        session.info.found_rows.finish(result)
    }

    pub(crate) async fn execute_statement(
        &self,
        session: &Session,
        stmt: Statement,
    ) -> Result<Output> {
        if !matches!(stmt, Statement::Standard(_)) {
            session.access().check_statement(session, &stmt)?;
        }
        match stmt {
            Statement::Standard(s) => self.execute_standard(session, *s, false).await,
            Statement::AdminSetFrontendConfig { settings } => {
                crate::frontend_config::set(&settings)
            }
            Statement::AdminShowFrontendConfig { like } => {
                Ok(crate::frontend_config::show(like.as_deref()))
            }
            Statement::CleanLabel { label, database } => {
                let database = session.stored_name(&database);
                self.services
                    .catalog
                    .clean_labels(&database, label.as_deref())?;
                Ok(Output::ok())
            }
            Statement::LabelledInsert { label, insert } => {
                self.labelled_insert(session, label, *insert).await
            }
            Statement::Prepare { .. }
            | Statement::Execute { .. }
            | Statement::Deallocate { .. } => self.execute_prepare(session, stmt).await,
            Statement::CreateIndex { .. } | Statement::DropIndex { .. } => {
                self.execute_index_ddl(session, stmt).await
            }
            Statement::CreateTable(_)
            | Statement::CreateTableLike { .. }
            | Statement::AlterPartitions { .. } => self.execute_ddl(session, stmt),
            Statement::SetStatement {
                assignments,
                statement,
            } => {
                let inner = ParsedStatement::new(*statement);
                self.set_statement(session, assignments, inner).await
            }
            Statement::SetTransaction { scope, modes } => {
                self.set_transaction(session, scope, &modes)
            }
            Statement::CreateTemporaryTable(inner) => {
                self.create_temporary_table(session, *inner).await
            }
            Statement::CreateTableAs(ctas) => self.create_table_as(session, *ctas).await,
            Statement::View(view) => {
                let req = crate::views::ViewRequest::from_definition(*view);
                self.create_view(session, req).await
            }
            Statement::Sync => Ok(Output::ok()),
            Statement::ReplaceTable(create) => self.replace_table(session, *create).await,
            Statement::SelectIntoVariables { query, variables } => {
                self.select_into_variables(session, *query, &variables)
                    .await
            }
            Statement::Do { query } => self.do_expressions(session, *query).await,
            Statement::AnalyzeTable { table } => {
                let db = crate::statement::ddl::database_of(session, &table.database)?;
                self.services.catalog.table(&db, &table.table)?;
                Ok(Output::ok())
            }
            Statement::AlterTableKeys { table, .. } => {
                let db = crate::statement::ddl::database_of(session, &table.database)?;
                self.services.catalog.table(&db, &table.table)?;
                Ok(Output::ok())
            }
            Statement::AlterTable {
                table,
                ops,
                if_exists,
            } => {
                if if_exists {
                    let db = crate::statement::ddl::database_of(session, &table.database)?;
                    // (A temporary table's name is its hidden one by now.)
                    if let Err(e @ BasaltError::UnknownTable(_)) =
                        self.services.catalog.table(&db, &table.table)
                    {
                        if self.services.catalog.view(&db, &table.table).is_none() {
                            session.info.warnings.note(e.mysql_code(), e.to_string());
                            return Ok(Output::ok());
                        }
                    }
                }
                crate::temporary_tables::check_alter(&table.table, &ops)?;
                self.execute_alter_table(session, &table, &ops).await
            }
            Statement::CreateWorkloadGroup { .. }
            | Statement::AlterWorkloadGroup { .. }
            | Statement::DropWorkloadGroup { .. }
            | Statement::CreateWorkloadPolicy { .. }
            | Statement::AlterWorkloadPolicy { .. }
            | Statement::DropWorkloadPolicy { .. }
            | Statement::GrantWorkloadGroup { .. }
            | Statement::SetUserProperty { .. }
            | Statement::ShowQueryProfile { .. }
            | Statement::CreateUser { .. }
            | Statement::DropUser { .. }
            | Statement::SetPassword { .. } => self.execute_admin(session, stmt),
            Statement::Grant { .. }
            | Statement::GrantRole { .. }
            | Statement::CreateRole { .. }
            | Statement::DropRole { .. }
            | Statement::ShowGrants { .. }
            | Statement::ShowRoles
            | Statement::SetRole { .. } => crate::grants::execute(self.services(), session, stmt),
            Statement::ShowMetadata { .. }
            | Statement::ShowData { .. }
            | Statement::ShowCreateDatabase { .. }
            | Statement::ShowWarningCount => self.execute_metadata_show(session, stmt).await,
            // The snapshot was taken as the statement began (`read_snapshot`).
            Statement::StartConsistentSnapshot | Statement::BeginWithLabel { .. } => {
                Ok(Output::ok())
            }
            Statement::LoadData(load) => self.load_data_without_file(&load),
            // Doris's WHERE / ORDER BY / LIMIT apply to the rows the SHOW gives.
            mut stmt @ (Statement::ShowPartitions { .. } | Statement::ShowTablets { .. }) => {
                let rows = match &mut stmt {
                    Statement::ShowPartitions { rows, .. }
                    | Statement::ShowTablets { rows, .. } => std::mem::take(rows),
                    _ => Default::default(),
                };
                let shown = self.execute_show(session, stmt)?;
                crate::show_rows::apply(shown, &rows).await
            }
            Statement::ShowWorkloadGroups { .. }
            | Statement::ShowWarnings
            | Statement::ShowBackends
            | Statement::ShowLoad { .. }
            | Statement::ShowTransaction { .. }
            | Statement::ShowDynamicPartitionTables { .. } => self.execute_show(session, stmt),
            Statement::ShowProc { path } => crate::show_proc::show_proc(
                &self.services,
                &self.loads,
                self.listening.get().copied(),
                &path,
            ),
            Statement::AlterSystemBackends { action, addresses } => {
                crate::backends::alter_system(&self.services, action, &addresses)
            }
            Statement::CreateProcedure(create) => self.create_procedure(session, *create),
            Statement::DropProcedure {
                name,
                if_exists,
                function,
            } => self.drop_procedure(session, &name, if_exists, function),
            Statement::ShowCreateProcedure { name, function } => {
                self.show_create_procedure(session, &name, function)
            }
            Statement::Call { name, args } => self.call_procedure(session, &name, &args).await,
        }
    }

    /// An INSERT, REPLACE INTO or INSERT .. ON DUPLICATE KEY UPDATE (prepared by
    /// `execute_standard`).
    async fn insert(&self, session: &Session, insert: ast::Insert) -> Result<Output> {
        if insert.replace_into || insert.on.is_some() {
            return self.upsert(session, insert).await;
        }
        if insert.ignore {
            return self.insert_ignore(session, insert).await;
        }
        // An INSERT planned against a definition that an ALTER TABLE replaced before it
        // published loaded nothing: it is planned again against the new one.
        let stmt = ast::Statement::Insert(insert);
        let mut attempts = 0;
        loop {
            attempts += 1;
            match self.run_datafusion(session, stmt.clone(), false).await {
                Err(BasaltError::ConcurrentDdl(_)) if attempts < 3 => continue,
                done => break done,
            }
        }
    }

    async fn execute_standard(
        &self,
        session: &Session,
        stmt: ast::Statement,
        point_checked: bool,
    ) -> Result<Output> {
        use ast::Statement as S;
        // A write naming a view is the write on its table (privileges are the table's).
        let stmt = self.write_through_view(session, stmt).await?;
        session.access().check_standard(session, &stmt)?;
        let mut stmt = stmt;
        apply_select_limit(session, &mut stmt);
        if let Some(out) = self.short_circuit(session, &stmt, point_checked)? {
            return Ok(out);
        }
        if matches!(
            stmt,
            S::Query(_) | S::Insert(_) | S::Explain { .. } | S::Delete(_) | S::Update(_)
        ) {
            crate::statement_timeout::arm(session, &stmt);
        }
        if let Some(view) = self.described_view(session, &stmt) {
            return self.describe_view(session, &view).await;
        }
        if let S::Insert(insert) = &mut stmt {
            insert_set::as_values(insert)?;
            self.check_generated_values(session, insert)?;
            self.fill_defaults(session, insert)?;
            self.read_nested_literals(session, insert);
        }
        match stmt {
            S::Insert(insert) if insert.overwrite || insert.partitioned.is_some() => {
                self.insert_into_partitions(session, insert).await
            }
            S::Insert(insert) => self.insert(session, insert).await,
            S::Query(query) if crate::row_assignments::has_assignment(&query) => {
                self.query_with_assignments(session, *query).await
            }
            S::Query(_) => self.run_datafusion(session, stmt, false).await,
            S::CreateView(view) => {
                let columns = view.columns.iter().map(|c| c.name.value.clone()).collect();
                let req = crate::views::ViewRequest::plain(
                    view.name,
                    columns,
                    view.query,
                    view.or_replace,
                    false,
                );
                self.create_view(session, req).await
            }
            S::AlterView {
                name,
                columns,
                query,
                ..
            } => {
                let columns = columns.into_iter().map(|c| c.value).collect();
                let req = crate::views::ViewRequest::plain(name, columns, query, false, true);
                self.create_view(session, req).await
            }
            // A materialized view is kept as a view of its query (`DROP MATERIALIZED VIEW mv
            // ON t` names its table as Doris's rollups do).
            S::Drop {
                object_type: ast::ObjectType::View | ast::ObjectType::MaterializedView,
                names,
                if_exists,
                ..
            } => self.drop_views(session, &names, if_exists),
            S::Explain { .. } => self.run_datafusion(session, stmt, true).await,
            S::Delete(delete) => self.delete(session, &delete).await,
            S::Update(update) => self.update(session, &update).await,
            S::Set(_) | S::Use(_) => self.execute_standard_set(session, stmt).await,
            S::CreateDatabase { .. }
            | S::CreateSchema {
                schema_name: ast::SchemaName::Simple(_),
                ..
            }
            | S::Drop { .. }
            | S::Truncate(_) => self.execute_standard_ddl(session, stmt),
            S::ShowDatabases { .. }
            | S::ShowSchemas { .. }
            | S::ShowTables { .. }
            | S::ShowCreate {
                obj_type: ast::ShowCreateObject::Table | ast::ShowCreateObject::View,
                ..
            }
            | S::ExplainTable { .. }
            | S::ShowVariables { .. }
            | S::ShowCollation { .. }
            | S::ShowCharset(_)
            | S::ShowStatus { .. } => self.execute_standard_show(session, stmt),
            S::Kill { .. } | S::ShowProcessList { .. } => {
                self.execute_standard_admin(session, stmt)
            }
            S::ShowColumns {
                full, show_options, ..
            } => {
                let name = show_options
                    .show_in
                    .as_ref()
                    .and_then(|i| i.parent_name.as_ref())
                    .ok_or_else(|| BasaltError::NotSupported("SHOW COLUMNS without FROM".into()))?;
                let (db, table) = crate::engine::split_name(name);
                let db = ddl::database_of(session, &db)?;
                let filter = show::show_filter(show_options.filter_position);
                self.show_columns(session, &db, &table, full, filter).await
            }
            // Statements are individually atomic; transactions are accepted.
            S::StartTransaction { .. } | S::Commit { .. } | S::Rollback { .. } => Ok(Output::ok()),
            // What mysqldump sends around its reads and its restores. Every statement is atomic,
            // so a dump sees each load all or nothing without table locks (and one point in
            // time across tables with --single-transaction, see `read_snapshot`); the tables
            // must exist and the privileges be held (checked with the statement), as Doris
            // accepts them for the same tools.
            S::LockTables { tables } => {
                let db = crate::session::require_database(session)?;
                for lock in tables {
                    let name = &lock.table.value;
                    if self.services.catalog.view(&db, name).is_none() {
                        self.services.catalog.table(&db, name)?;
                    }
                }
                Ok(Output::ok())
            }
            S::UnlockTables
            | S::Savepoint { .. }
            | S::ReleaseSavepoint { .. }
            | S::Flush {
                object_type: ast::FlushType::Tables,
                read_lock: false,
                ..
            } => Ok(Output::ok()),
            // A global read lock would stop every load until UNLOCK TABLES; Basalt has none to
            // give (`mysqldump --lock-all-tables` / `--master-data` ask for it).
            S::Flush {
                object_type: ast::FlushType::Tables,
                read_lock: true,
                ..
            } => Err(BasaltError::NotSupported(
                "FLUSH TABLES WITH READ LOCK (a global read lock)".into(),
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
}

/// MySQL's `sql_select_limit`: the most rows a top-level SELECT without a LIMIT of its own
/// returns (subqueries and INSERT .. SELECT are not limited).
fn apply_select_limit(session: &Session, stmt: &mut ast::Statement) {
    let ast::Statement::Query(query) = stmt else {
        return;
    };
    if query.limit_clause.is_some() || query.fetch.is_some() {
        return;
    }
    let limit = match session.variables().get("sql_select_limit") {
        Ok(crate::variables::VarValue::Int(n)) if (0..i64::MAX).contains(&n) => n,
        _ => return,
    };
    query.limit_clause = Some(ast::LimitClause::LimitOffset {
        limit: Some(ast::Expr::value(ast::Value::Number(
            limit.to_string(),
            false,
        ))),
        offset: None,
        limit_by: vec![],
    });
}
