//! MySQL's `CREATE TEMPORARY TABLE`: a table only the session that created it sees, shadowing a
//! permanent table of the same name in that session, dropped when the session ends.
//!
//! **Design.** A temporary table is a real catalog table under a hidden name
//! (`__basalt_temporary_<connection>_<n>`, in the database the statement names), so everything a
//! table has — storage, tablets on a cluster's backends, INSERT/SELECT/UPDATE/DELETE/TRUNCATE/
//! ALTER, transactions — works on it unchanged. The session keeps a map from the name it was
//! created with to the hidden name ([`TemporaryTables`]), and before a statement is planned
//! [`resolve`] rewrites every table name that names one of the session's temporary tables to its
//! hidden name (a table in FROM keeps the written name as its alias, so `t.col` still resolves).
//! Other sessions never learn the hidden names, so they keep seeing the permanent table.
//! Listings (SHOW TABLES, information_schema.TABLES, SHOW DATA) leave hidden names out, as
//! MySQL does for temporary tables.
//!
//! The session drops its temporary tables and their files when it ends (the client quits or
//! disconnects, however abruptly: the session is dropped with its connection) and on
//! COM_RESET_CONNECTION. A crash leaves the catalog entries behind: the server drops every
//! hidden table when it starts ([`sweep`]), before any session exists.
//!
//! Differences from MySQL: CREATE and DROP TEMPORARY TABLE commit an open transaction (as
//! Basalt's other DDL does; MySQL does not); `ALTER TABLE .. RENAME` of a temporary table is
//! refused; privileges are checked as for a table of the written name.

use crate::engine::QueryEngine;
use crate::output::Output;
use crate::session::Session;
use basalt_catalog::Catalog;
use basalt_common::{BasaltError, Result, TableNameCase};
use basalt_sql::ast::{
    self, Ident, ObjectName, ObjectNamePart, Query, TableAlias, TableFactor, VisitMut, Visitor,
    VisitorMut,
};
use basalt_sql::{Statement, TableName};
use basalt_storage::StorageEngine;
use std::collections::HashSet;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicU64, Ordering};

/// Where every hidden name starts (lower case, so every `lower_case_table_names` keeps it).
const PREFIX: &str = "__basalt_temporary_";

/// Numbers hidden names within the process (with the connection id they are unique).
static NEXT: AtomicU64 = AtomicU64::new(1);

/// Whether a catalog table is some session's temporary table.
pub(crate) fn is_hidden(name: &str) -> bool {
    name.starts_with(PREFIX)
}

/// Whether listings (SHOW TABLES, information_schema) show the table of this stored name.
pub(crate) fn listed(name: &str) -> bool {
    !is_hidden(name)
}

/// One temporary table: the database and name it was created with, and its catalog name.
#[derive(Debug, Clone)]
struct Temporary {
    database: String,
    name: String,
    hidden: String,
}

/// A session's temporary tables.
#[derive(Debug, Default)]
pub(crate) struct TemporaryTables {
    tables: parking_lot::Mutex<Vec<Temporary>>,
}

impl TemporaryTables {
    fn is_empty(&self) -> bool {
        self.tables.lock().is_empty()
    }

    /// The hidden name of the temporary table `database.name`, if the session has one.
    fn hidden(&self, case: TableNameCase, database: &str, name: &str) -> Option<String> {
        self.tables
            .lock()
            .iter()
            .find(|t| case.same(&t.database, database) && case.same(&t.name, name))
            .map(|t| t.hidden.clone())
    }

    /// The name a hidden table was created with.
    pub(crate) fn shown_name(&self, hidden: &str) -> Option<String> {
        self.tables
            .lock()
            .iter()
            .find(|t| t.hidden == hidden)
            .map(|t| t.name.clone())
    }

    fn remove(&self, case: TableNameCase, database: &str, name: &str) -> Option<Temporary> {
        let mut tables = self.tables.lock();
        let i = tables
            .iter()
            .position(|t| case.same(&t.database, database) && case.same(&t.name, name))?;
        Some(tables.remove(i))
    }

    /// Drops every table of the session, catalog entry and files (the session ended or was
    /// reset). Failures are logged: the next start's [`sweep`] drops what is left.
    pub(crate) fn drop_all(&self, catalog: &dyn Catalog, storage: &StorageEngine) {
        let tables = std::mem::take(&mut *self.tables.lock());
        for t in tables {
            drop_hidden(catalog, storage, &t.database, &t.hidden);
        }
    }
}

fn drop_hidden(catalog: &dyn Catalog, storage: &StorageEngine, database: &str, hidden: &str) {
    match catalog.drop_table(database, hidden, true) {
        Ok(Some(meta)) => storage.remove_table_files(&meta),
        Ok(None) => {}
        Err(e) => tracing::warn!("temporary table {database}.{hidden} not dropped: {e}"),
    }
}

/// Drops every hidden table the catalog holds: at server start no session exists, so they are
/// left from sessions a crash ended. Returns how many were dropped.
pub(crate) fn sweep(catalog: &dyn Catalog, storage: &StorageEngine) -> usize {
    let mut dropped = 0;
    for db in catalog.databases() {
        for t in catalog.tables(&db.name).unwrap_or_default() {
            if is_hidden(&t.name) {
                drop_hidden(catalog, storage, &db.name, &t.name);
                dropped += 1;
            }
        }
    }
    if dropped > 0 {
        tracing::info!("dropped {dropped} temporary tables left by sessions of a previous run");
    }
    dropped
}

/// Rewrites the names in `stmt` that name one of the session's temporary tables to their
/// hidden names (see the module doc). DROP is resolved where it runs ([`drop_temporary`]).
pub(crate) fn resolve(session: &Session, stmt: &mut Statement) {
    let temporary = &session.info.temporary;
    if temporary.is_empty() {
        return;
    }
    let names = Names {
        session,
        case: session.name_case(),
        current: session.database(),
    };
    let table = |t: &mut TableName| names.table_name(t);
    match stmt {
        Statement::Standard(s) => names.standard(s),
        Statement::CreateTableAs(ctas) => names.query(&mut ctas.query),
        Statement::CreateTemporaryTable(inner) => resolve(session, inner),
        Statement::CreateTableLike { like, .. } => table(like),
        Statement::AlterTable { table: t, .. }
        | Statement::AlterPartitions { table: t, .. }
        | Statement::AnalyzeTable { table: t }
        | Statement::AlterTableKeys { table: t, .. }
        | Statement::ShowPartitions { table: t, .. }
        | Statement::ShowTablets { table: t, .. }
        | Statement::CreateIndex { table: t, .. }
        | Statement::DropIndex { table: t, .. }
        | Statement::ShowMetadata { table: Some(t), .. }
        | Statement::ShowData { table: Some(t) } => table(t),
        Statement::LoadData(load) => table(&mut load.table),
        _ => {}
    }
}

/// Refuses a client's statement that names a hidden table itself (1146, as for a table that
/// does not exist): a session's temporary tables are its own, and their hidden names could be
/// guessed from connection ids.
pub(crate) fn refuse_hidden_names(stmt: &Statement) -> Result<()> {
    let refuse = |name: &str| match is_hidden(&name.to_lowercase()) {
        true => Err(BasaltError::UnknownTable(name.to_string())),
        false => Ok(()),
    };
    fn in_query<V: ast::Visit>(q: &V) -> Result<()> {
        let mut found = None;
        let _ = ast::visit_relations(q, |name| {
            if let Some(last) = name.0.last().and_then(|p| p.as_ident()) {
                if is_hidden(&last.value.to_lowercase()) {
                    found = Some(last.value.clone());
                    return ControlFlow::Break(());
                }
            }
            ControlFlow::Continue(())
        });
        found.map_or(Ok(()), |name| Err(BasaltError::UnknownTable(name)))
    }
    match stmt {
        Statement::Standard(s) => in_query(s.as_ref()),
        Statement::CreateTableAs(ctas) => in_query(ctas.query.as_ref()),
        Statement::CreateTemporaryTable(inner) => refuse_hidden_names(inner),
        Statement::CreateTableLike { like: t, .. }
        | Statement::AlterTable { table: t, .. }
        | Statement::AlterPartitions { table: t, .. }
        | Statement::AnalyzeTable { table: t }
        | Statement::AlterTableKeys { table: t, .. }
        | Statement::ShowPartitions { table: t, .. }
        | Statement::ShowTablets { table: t, .. }
        | Statement::CreateIndex { table: t, .. }
        | Statement::DropIndex { table: t, .. }
        | Statement::ShowMetadata { table: Some(t), .. }
        | Statement::ShowData { table: Some(t) } => refuse(&t.table),
        Statement::LoadData(load) => refuse(&load.table.table),
        _ => Ok(()),
    }
}

/// What [`resolve`] needs of the session.
struct Names<'a> {
    session: &'a Session,
    case: TableNameCase,
    current: Option<String>,
}

impl Names<'_> {
    /// The hidden name of the table `database.table` names, if it is a temporary table.
    fn hidden(&self, database: Option<&str>, table: &str) -> Option<(String, String)> {
        let database = match database {
            Some(d) => self.case.stored(d),
            None => self.current.clone()?,
        };
        let hidden = self
            .session
            .info
            .temporary
            .hidden(self.case, &database, table)?;
        Some((database, hidden))
    }

    fn table_name(&self, t: &mut TableName) {
        if let Some((database, hidden)) = self.hidden(t.database.as_deref(), &t.table) {
            t.database = Some(database);
            t.table = hidden;
        }
    }

    /// Rewrites `name` if it names a temporary table; returns the table's written name then.
    fn object_name(&self, name: &mut ObjectName, ctes: &HashSet<String>) -> Option<Ident> {
        let idents: Vec<&Ident> = name.0.iter().filter_map(|p| p.as_ident()).collect();
        if idents.len() != name.0.len() {
            return None;
        }
        let (database, table) = match idents.as_slice() {
            [t] if !ctes.contains(&t.value.to_lowercase()) => (None, (*t).clone()),
            [d, t] => (Some(d.value.as_str()), (*t).clone()),
            _ => return None,
        };
        let (database, hidden) = self.hidden(database, &table.value)?;
        name.0 = vec![
            ObjectNamePart::Identifier(Ident::with_quote('`', database)),
            ObjectNamePart::Identifier(Ident::with_quote('`', hidden)),
        ];
        Some(table)
    }

    fn standard(&self, stmt: &mut ast::Statement) {
        let ctes = Ctes::of(stmt);
        let _ = stmt.visit(&mut Factors {
            names: self,
            ctes: &ctes,
        });
        // INSERT's target, TRUNCATE, DESCRIBE, SHOW COLUMNS (FROM clauses are already done:
        // hidden names name no temporary table).
        let _ = ast::visit_relations_mut(stmt, |name| {
            self.object_name(name, &ctes);
            ControlFlow::<()>::Continue(())
        });
        if let ast::Statement::ShowCreate { obj_name, .. } = stmt {
            self.object_name(obj_name, &ctes);
        }
    }

    fn query(&self, query: &mut Query) {
        let mut stmt = ast::Statement::Query(Box::new(query.clone()));
        self.standard(&mut stmt);
        if let ast::Statement::Query(q) = stmt {
            *query = *q;
        }
    }
}

/// The names of a statement's CTEs (they shadow tables).
#[derive(Default)]
struct Ctes(HashSet<String>);

impl Ctes {
    fn of(stmt: &ast::Statement) -> HashSet<String> {
        let mut ctes = Ctes::default();
        let _ = ast::Visit::visit(stmt, &mut ctes);
        ctes.0
    }
}

impl Visitor for Ctes {
    type Break = ();

    fn pre_visit_query(&mut self, query: &Query) -> ControlFlow<()> {
        for cte in query.with.iter().flat_map(|w| w.cte_tables.iter()) {
            self.0.insert(cte.alias.name.value.to_lowercase());
        }
        ControlFlow::Continue(())
    }
}

/// Tables in FROM and JOIN: renamed, keeping the written name as their alias.
struct Factors<'a> {
    names: &'a Names<'a>,
    ctes: &'a HashSet<String>,
}

impl VisitorMut for Factors<'_> {
    type Break = ();

    fn pre_visit_table_factor(&mut self, factor: &mut TableFactor) -> ControlFlow<()> {
        if let TableFactor::Table {
            name,
            alias,
            args: None,
            ..
        } = factor
        {
            if let Some(written) = self.names.object_name(name, self.ctes) {
                if alias.is_none() {
                    *alias = Some(TableAlias {
                        explicit: true,
                        name: written,
                        columns: vec![],
                        at: None,
                    });
                }
            }
        }
        ControlFlow::Continue(())
    }
}

/// ALTER TABLE of a temporary table (by its hidden name) may not rename it: the new name
/// would be a permanent table's.
pub(crate) fn check_alter(table: &str, ops: &[basalt_sql::AlterTableOp]) -> Result<()> {
    let renames = ops
        .iter()
        .any(|op| matches!(op, basalt_sql::AlterTableOp::Rename(_)));
    match is_hidden(table) && renames {
        true => Err(BasaltError::NotSupported(
            "ALTER TABLE .. RENAME of a temporary table".into(),
        )),
        false => Ok(()),
    }
}

/// DROP [TEMPORARY] TABLE of one name: drops the session's temporary table of that name if
/// there is one (true). Otherwise false, or for DROP TEMPORARY error 1051 (a note with IF
/// EXISTS) — the permanent table of the name is never dropped by DROP TEMPORARY.
pub(crate) fn drop_temporary(
    engine: &QueryEngine,
    session: &Session,
    name: &ObjectName,
    temporary_only: bool,
    if_exists: bool,
) -> Result<bool> {
    let (db, table) = crate::engine::split_name(name);
    let database = crate::statement::ddl::database_of(session, &db)?;
    let case = session.name_case();
    if let Some(t) = session.info.temporary.remove(case, &database, &table) {
        let services = engine.services();
        drop_hidden(
            services.catalog.as_ref(),
            &services.storage,
            &t.database,
            &t.hidden,
        );
        return Ok(true);
    }
    if !temporary_only {
        return Ok(false);
    }
    let unknown = format!("{database}.{}", session.stored_name(&table));
    if if_exists {
        session
            .info
            .warnings
            .note(1051, format!("Unknown table '{unknown}'"));
        return Ok(true);
    }
    Err(BasaltError::UnknownTableToDrop(unknown))
}

impl QueryEngine {
    /// `CREATE TEMPORARY TABLE ..`: the wrapped CREATE TABLE, CTAS or LIKE run under a new
    /// hidden name, then registered in the session under the written one.
    pub(crate) async fn create_temporary_table(
        &self,
        session: &Session,
        inner: Statement,
    ) -> Result<Output> {
        let mut inner = inner;
        let (written, if_not_exists) = match &mut inner {
            Statement::CreateTable(ct) => (&mut ct.name, ct.if_not_exists),
            Statement::CreateTableAs(ctas) => (&mut ctas.table.name, ctas.table.if_not_exists),
            Statement::CreateTableLike {
                table,
                if_not_exists,
                ..
            } => (table, *if_not_exists),
            _ => {
                return Err(BasaltError::Internal(
                    "CREATE TEMPORARY TABLE of no CREATE TABLE".into(),
                ))
            }
        };
        let database = crate::statement::ddl::database_of(session, &written.database)?;
        if !self.services().catalog.database_exists(&database) {
            return Err(BasaltError::UnknownDatabase(database));
        }
        let name = session.stored_name(&written.table);
        let case = session.name_case();
        if session
            .info
            .temporary
            .hidden(case, &database, &name)
            .is_some()
        {
            if if_not_exists {
                session
                    .info
                    .warnings
                    .note(1050, format!("Table '{name}' already exists"));
                return Ok(Output::ok());
            }
            return Err(BasaltError::TableExists(name));
        }
        let hidden = format!(
            "{PREFIX}{}_{}",
            session.info.connection_id,
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        written.database = Some(database.clone());
        written.table = hidden.clone();
        let output = Box::pin(self.execute_statement(session, inner)).await?;
        session.info.temporary.tables.lock().push(Temporary {
            database,
            name,
            hidden,
        });
        Ok(output)
    }
}
