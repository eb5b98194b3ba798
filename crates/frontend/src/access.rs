//! Access control, in one place: what a session may do (its account's grants and those of its
//! active roles), what each statement needs, the check of a planned query (every table it
//! reads, the table it writes), and what SHOW and information_schema may list. Refusals are
//! MySQL's errors naming the privilege: 1142 for a table, 1044 for a database, 1227 for a
//! global privilege; nothing is changed by a refused statement.

use crate::session::{Session, SessionInfo};
use crate::statement::ddl::database_of;
use basalt_catalog::{AccessRights, Catalog, Privilege};
use basalt_common::{BasaltError, Result};
use basalt_query::BasaltTable;
use basalt_sql::ast;
use basalt_sql::Statement;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::datasource::source_as_provider;
use datafusion::logical_expr::LogicalPlan;
use std::collections::BTreeSet;

/// The built-in administrator: every privilege, always.
pub(crate) const ROOT: &str = "root";

/// The grants an account's own metadata shows (SHOW GRANTS, the privilege tables): `root`
/// holds every privilege whatever was stored for it.
pub(crate) fn own_grants(user: &basalt_catalog::UserMeta) -> basalt_catalog::Grants {
    let mut grants = user.grants.clone();
    if user.user == ROOT {
        grants.global = Privilege::ALL.into_iter().collect();
    }
    grants
}

/// The account a session authenticated as, and the roles it has active.
#[derive(Debug)]
pub(crate) struct Account {
    pub user: String,
    /// The host part of the matched account (`%`, `localhost`, ..), not the client's address.
    pub host: String,
    /// `SET ROLE`'s choice: `None` is every granted role (how a session starts).
    pub active_roles: parking_lot::RwLock<Option<BTreeSet<String>>>,
}

impl Account {
    /// The account `user` has when connecting from `client_host`.
    pub(crate) fn resolve(catalog: &dyn Catalog, user: &str, client_host: &str) -> Account {
        let host = catalog
            .find_user(user, client_host)
            .map(|a| a.host)
            .unwrap_or_else(|| "%".to_string());
        Account {
            user: user.to_string(),
            host,
            active_roles: Default::default(),
        }
    }
}

/// What one session may do right now, with the names its refusals report.
pub(crate) struct Access {
    rights: AccessRights,
    user: String,
    host: String,
    /// Grants name databases and tables by the catalog's key of their names
    /// (`lower_case_table_names`).
    names: basalt_common::TableNameCase,
}

/// The current rights of a session (grants are read at each statement, so a GRANT or REVOKE
/// applies to running sessions from their next statement).
/// Inside a `SQL SECURITY DEFINER` procedure they are its definer's.
pub(crate) fn access(catalog: &dyn Catalog, info: &SessionInfo) -> Access {
    match info.routine.definer() {
        Some(definer) => account_access(catalog, &definer, &info.host),
        None => account_access(catalog, &info.account, &info.host),
    }
}

/// The rights `user` has when connecting from `client_host` (with all its roles).
pub(crate) fn login_access(catalog: &dyn Catalog, user: &str, client_host: &str) -> Access {
    account_access(
        catalog,
        &Account::resolve(catalog, user, client_host),
        client_host,
    )
}

/// The rights of `account` connected from `client_host`.
pub(crate) fn account_access(
    catalog: &dyn Catalog,
    account: &Account,
    client_host: &str,
) -> Access {
    let rights = if account.user == ROOT {
        AccessRights::superuser()
    } else {
        match catalog.find_user(&account.user, &account.host) {
            Some(meta) => {
                let mut grants = meta.grants.clone();
                let active = account.active_roles.read();
                for role in &meta.roles {
                    if active.as_ref().is_none_or(|a| a.contains(role)) {
                        if let Some(r) = catalog.role(role) {
                            grants.merge(&r.grants);
                        }
                    }
                }
                AccessRights::from_grants(grants)
            }
            None => AccessRights::default(),
        }
    };
    Access {
        rights,
        user: account.user.clone(),
        host: client_host.to_string(),
        names: catalog.table_name_case(),
    }
}

impl Access {
    pub(crate) fn is_admin(&self) -> bool {
        self.rights.is_admin()
    }

    /// Whose sessions and profiles this account sees: `None` (everyone's) with ADMIN_PRIV,
    /// else its own user's.
    pub(crate) fn viewer(&self) -> Option<String> {
        (!self.is_admin()).then(|| self.user.clone())
    }

    pub(crate) fn may_see_database(&self, db: &str) -> bool {
        db.eq_ignore_ascii_case("information_schema")
            || self.rights.may_see_database(&self.names.key(db))
    }

    pub(crate) fn may_see_table(&self, db: &str, table: &str) -> bool {
        db.eq_ignore_ascii_case("information_schema")
            || self
                .rights
                .may_see_table(&self.names.key(db), &self.names.key(table))
    }

    /// A privilege held at `*.*` (1227 naming it otherwise).
    pub(crate) fn require_global(&self, privilege: Privilege) -> Result<()> {
        if self.rights.has_global(privilege) {
            Ok(())
        } else {
            Err(BasaltError::PrivilegeRequired(
                privilege.doris_name().to_string(),
            ))
        }
    }

    /// A privilege on a database (1044 otherwise).
    pub(crate) fn require_database(&self, privilege: Privilege, db: &str) -> Result<()> {
        if self.rights.has_on_database(privilege, &self.names.key(db)) {
            Ok(())
        } else {
            Err(self.database_denied(db))
        }
    }

    /// A privilege on a table (1142 naming the command otherwise).
    pub(crate) fn require_table(&self, privilege: Privilege, db: &str, table: &str) -> Result<()> {
        if self
            .rights
            .has_on_table(privilege, &self.names.key(db), &self.names.key(table))
        {
            Ok(())
        } else {
            Err(BasaltError::TableAccessDenied {
                command: privilege.command().to_string(),
                user: self.user.clone(),
                host: self.host.clone(),
                table: format!("{db}.{table}"),
            })
        }
    }

    /// Something held on the database (USE, connecting with a database, SHOW LOAD).
    pub(crate) fn require_any_on_database(&self, db: &str) -> Result<()> {
        if self.may_see_database(db) {
            Ok(())
        } else {
            Err(self.database_denied(db))
        }
    }

    /// Something held on the table (DESCRIBE, SHOW CREATE TABLE, SHOW PARTITIONS).
    pub(crate) fn require_any_on_table(&self, db: &str, table: &str) -> Result<()> {
        if self.may_see_table(db, table) {
            Ok(())
        } else {
            self.require_table(Privilege::Select, db, table)
        }
    }

    fn database_denied(&self, db: &str) -> BasaltError {
        BasaltError::DatabaseAccessDenied {
            user: self.user.clone(),
            host: self.host.clone(),
            database: db.to_string(),
        }
    }

    /// Checks a planned query, INSERT or EXPLAIN: SELECT on every table it reads (in
    /// subqueries too), LOAD on the table it writes.
    pub(crate) fn check_plan(&self, plan: &LogicalPlan) -> Result<()> {
        self.check_plan_with(plan, true)
    }

    /// [`Access::check_plan`] without LOAD on the table written: CREATE TABLE .. AS SELECT
    /// fills the table it has just created, which its CREATE privilege covers (as in Doris).
    pub(crate) fn check_plan_reads(&self, plan: &LogicalPlan) -> Result<()> {
        self.check_plan_with(plan, false)
    }

    fn check_plan_with(&self, plan: &LogicalPlan, check_target: bool) -> Result<()> {
        let mut denied = None;
        let _ = plan.apply_with_subqueries(|node| {
            let need = match node {
                LogicalPlan::TableScan(scan) => {
                    basalt_table(&scan.source).map(|(db, t)| (Privilege::Select, db, t))
                }
                LogicalPlan::Dml(dml) if check_target => {
                    basalt_table(&dml.target).map(|(db, t)| (Privilege::Load, db, t))
                }
                _ => None,
            };
            if let Some((privilege, db, table)) = need {
                if let Err(e) = self.require_table(privilege, &db, &table) {
                    denied = Some(e);
                    return Ok(TreeNodeRecursion::Stop);
                }
            }
            Ok(TreeNodeRecursion::Continue)
        });
        denied.map_or(Ok(()), Err)
    }

    /// What a statement that is not planned by DataFusion needs, checked before it runs.
    /// Queries, INSERT and EXPLAIN are checked on their plan ([`Access::check_plan`]).
    pub(crate) fn check_statement(&self, session: &Session, stmt: &Statement) -> Result<()> {
        use Statement as B;
        let table_of = |t: &basalt_sql::TableName| -> Result<(String, String)> {
            Ok((
                database_of(session, &t.database)?,
                session.stored_name(&t.table),
            ))
        };
        match stmt {
            B::Standard(s) => self.check_standard(session, s),
            B::LabelledInsert { insert, .. } => self.check_standard(session, insert),
            B::AdminSetFrontendConfig { .. } | B::AdminShowFrontendConfig { .. } => {
                self.require_global(Privilege::Admin)
            }
            B::CleanLabel { database, .. } => {
                self.require_database(Privilege::Load, &session.stored_name(database))
            }
            B::CreateTable(t) => {
                let db = database_of(session, &t.name.database)?;
                self.require_table(Privilege::Create, &db, &session.stored_name(&t.name.table))
            }
            // SELECT on what the query reads is checked on its plan.
            B::CreateTableAs(ctas) => {
                let name = &ctas.table.name;
                let db = database_of(session, &name.database)?;
                self.require_table(Privilege::Create, &db, &session.stored_name(&name.table))
            }
            B::CreateTableLike { table, like, .. } => {
                let (db, t) = table_of(table)?;
                self.require_table(Privilege::Create, &db, &t)?;
                let (db, t) = table_of(like)?;
                self.require_any_on_table(&db, &t)
            }
            B::CreateTemporaryTable(inner) => self.check_statement(session, inner),
            B::SetStatement { statement, .. } => self.check_statement(session, statement),
            B::ReplaceTable(inner) => self.check_statement(session, inner),
            // SELECT on what the query reads is checked on its plan.
            B::SelectIntoVariables { .. } | B::Do { .. } => Ok(()),
            // CREATE on the database, checked with the name resolved; the SELECT is checked
            // when it is planned.
            B::View(_) => Ok(()),
            B::AlterTable { table, ops, .. } => {
                let (db, t) = table_of(table)?;
                self.require_table(Privilege::Alter, &db, &t)?;
                for op in ops {
                    if let basalt_sql::AlterTableOp::Rename(new_name) = op {
                        self.require_table(Privilege::Create, &db, &session.stored_name(new_name))?;
                    }
                }
                Ok(())
            }
            B::AlterPartitions { table, .. }
            | B::AlterTableKeys { table, .. }
            | B::CreateIndex { table, .. }
            | B::DropIndex { table, .. } => {
                let (db, t) = table_of(table)?;
                self.require_table(Privilege::Alter, &db, &t)
            }
            // SET GLOBAL TRANSACTION checks ADMIN_PRIV where it runs.
            B::Sync | B::SetTransaction { .. } => Ok(()),
            B::AnalyzeTable { table } => {
                let (db, t) = table_of(table)?;
                self.require_any_on_table(&db, &t)
            }
            B::ShowPartitions { table, .. } => {
                let (db, t) = table_of(table)?;
                self.require_any_on_table(&db, &t)
            }
            B::ShowTablets { .. } | B::ShowBackends | B::AlterSystemBackends { .. } => {
                self.require_global(Privilege::Admin)
            }
            // Doris: ADMIN_PRIV or NODE_PRIV.
            B::ShowProc { .. } => self
                .require_global(Privilege::Admin)
                .or_else(|_| self.require_global(Privilege::Node))
                .map_err(|_| BasaltError::PrivilegeRequired("ADMIN_PRIV/NODE_PRIV".into())),
            B::LoadData(load) => {
                let (db, t) = table_of(&load.table)?;
                self.require_table(Privilege::Load, &db, &t)
            }
            B::ShowMetadata {
                table: Some(table),
                database,
                ..
            } => {
                let (db, t) = match database {
                    Some(db) => (session.stored_name(db), session.stored_name(&table.table)),
                    None => table_of(table)?,
                };
                self.require_any_on_table(&db, &t)
            }
            B::ShowMetadata {
                database: Some(db), ..
            }
            | B::ShowCreateDatabase { database: db, .. } => {
                self.require_any_on_database(&session.stored_name(db))
            }
            B::ShowData { table: Some(table) } => {
                let (db, t) = table_of(table)?;
                self.require_any_on_table(&db, &t)
            }
            B::ShowData { table: None } => {
                self.require_any_on_database(&database_of(session, &None)?)
            }
            B::ShowMetadata { .. }
            | B::ShowWarningCount
            | B::StartConsistentSnapshot
            | B::BeginWithLabel { .. } => Ok(()),
            // Stored procedures (see `procedures`): MySQL's CREATE ROUTINE is CREATE on the
            // database, ALTER ROUTINE is DROP there, EXECUTE is any privilege on it.
            B::CreateProcedure(create) => self.require_database(
                Privilege::Create,
                &database_of(session, &create.name.database)?,
            ),
            B::DropProcedure { name, .. } => {
                self.require_database(Privilege::Drop, &database_of(session, &name.database)?)
            }
            B::Call { name, .. } | B::ShowCreateProcedure { name, .. } => {
                self.require_any_on_database(&database_of(session, &name.database)?)
            }
            B::ShowLoad { database, .. }
            | B::ShowTransaction { database, .. }
            | B::ShowDynamicPartitionTables { database } => {
                self.require_any_on_database(&database_of(session, database)?)
            }
            B::CreateUser { .. }
            | B::DropUser { .. }
            | B::GrantWorkloadGroup { .. }
            | B::GrantRole { .. }
            | B::CreateRole { .. }
            | B::DropRole { .. }
            | B::ShowRoles => self.require_global(Privilege::Grant),
            B::ShowGrants { user, all } => {
                let other = user.as_ref().is_some_and(|u| u.user != self.user);
                if *all || other {
                    self.require_global(Privilege::Grant)
                } else {
                    Ok(())
                }
            }
            B::SetPassword { user, .. } => match user {
                Some(u) if u.user != self.user => self.require_global(Privilege::Grant),
                _ => Ok(()),
            },
            B::SetUserProperty { user, .. } => match user {
                Some(u) if *u != self.user => self.require_global(Privilege::Admin),
                _ => Ok(()),
            },
            B::Grant {
                privileges, object, ..
            } => crate::grants::check_grant(self, session, privileges, object),
            B::CreateWorkloadGroup { .. }
            | B::AlterWorkloadGroup { .. }
            | B::DropWorkloadGroup { .. }
            | B::CreateWorkloadPolicy { .. }
            | B::AlterWorkloadPolicy { .. }
            | B::DropWorkloadPolicy { .. } => self.require_global(Privilege::Admin),
            // Checked when they run (EXECUTE plans the statement), or only about the session.
            B::Prepare { .. }
            | B::Execute { .. }
            | B::Deallocate { .. }
            | B::ShowWarnings
            | B::ShowQueryProfile { .. }
            | B::ShowWorkloadGroups { .. }
            | B::SetRole { .. } => Ok(()),
        }
    }

    pub(crate) fn check_standard(&self, session: &Session, stmt: &ast::Statement) -> Result<()> {
        use ast::Statement as S;
        let table_of = |name: &ast::ObjectName| -> Result<(String, String)> {
            let (db, table) = crate::engine::split_name(name);
            Ok((database_of(session, &db)?, table))
        };
        match stmt {
            // Planned: checked on the plan.
            S::Query(_) | S::Insert(_) | S::Explain { .. } => Ok(()),
            S::Delete(delete) => {
                let from = match &delete.from {
                    ast::FromTable::WithFromKeyword(t) | ast::FromTable::WithoutKeyword(t) => t,
                };
                for t in from {
                    if let ast::TableFactor::Table { name, .. } = &t.relation {
                        let (db, table) = table_of(name)?;
                        self.require_table(Privilege::Load, &db, &table)?;
                    }
                }
                Ok(())
            }
            S::Update(update) => {
                if let ast::TableFactor::Table { name, .. } = &update.table.relation {
                    let (db, table) = table_of(name)?;
                    self.require_table(Privilege::Load, &db, &table)?;
                }
                Ok(())
            }
            S::CreateDatabase { db_name, .. } => {
                self.require_database(Privilege::Create, &object_text(db_name))
            }
            S::CreateSchema {
                schema_name: ast::SchemaName::Simple(name),
                ..
            } => self.require_database(Privilege::Create, &object_text(name)),
            S::Drop {
                object_type, names, ..
            } => {
                for name in names {
                    match object_type {
                        ast::ObjectType::Database | ast::ObjectType::Schema => {
                            self.require_database(Privilege::Drop, &object_text(name))?
                        }
                        _ => {
                            let (db, table) = table_of(name)?;
                            self.require_table(Privilege::Drop, &db, &table)?
                        }
                    }
                }
                Ok(())
            }
            S::Truncate(truncate) => {
                for t in &truncate.table_names {
                    let (db, table) = table_of(&t.name)?;
                    self.require_table(Privilege::Drop, &db, &table)?;
                }
                Ok(())
            }
            S::LockTables { tables } => {
                for lock in tables {
                    let (db, table) = table_of(&ast::ObjectName::from(vec![lock.table.clone()]))?;
                    match lock.lock_type {
                        ast::LockTableType::Read { .. } => {
                            self.require_table(Privilege::Select, &db, &table)?
                        }
                        ast::LockTableType::Write { .. } => {
                            self.require_table(Privilege::Load, &db, &table)?
                        }
                    }
                }
                Ok(())
            }
            S::UnlockTables
            | S::Savepoint { .. }
            | S::ReleaseSavepoint { .. }
            | S::Flush {
                object_type: ast::FlushType::Tables,
                read_lock: false,
                ..
            } => Ok(()),
            // CREATE on the database, checked with the name resolved; the SELECT is checked
            // when it is planned.
            S::CreateView(_) | S::AlterView { .. } => Ok(()),
            S::ShowCreate { obj_name, .. } => {
                let (db, table) = table_of(obj_name)?;
                self.require_any_on_table(&db, &table)
            }
            S::ExplainTable { table_name, .. } => {
                let (db, table) = table_of(table_name)?;
                self.require_any_on_table(&db, &table)
            }
            S::ShowColumns { show_options, .. } => match &show_options.show_in {
                Some(ast::ShowStatementIn {
                    parent_name: Some(name),
                    ..
                }) => {
                    let (db, table) = table_of(name)?;
                    self.require_any_on_table(&db, &table)
                }
                _ => Ok(()),
            },
            // Listings are filtered to what the account may see; USE (also at login) checks
            // in `use_database`; variables, transactions, KILL (own sessions, or any with
            // ADMIN_PRIV) and the process list decide alone.
            S::Set(_)
            | S::Use(_)
            | S::ShowDatabases { .. }
            | S::ShowSchemas { .. }
            | S::ShowTables { .. }
            | S::ShowVariables { .. }
            | S::ShowCollation { .. }
            | S::ShowCharset(_)
            | S::ShowStatus { .. }
            | S::Kill { .. }
            | S::ShowProcessList { .. }
            | S::StartTransaction { .. }
            | S::Commit { .. }
            | S::Rollback { .. } => Ok(()),
            // Anything else is refused by the dispatcher; only an administrator learns why.
            _ => self.require_global(Privilege::Admin),
        }
    }
}

/// The database and table of a source when it is one of Basalt's tables (information_schema
/// and local() are not: the first lists only what the account may see, the second is checked
/// when it is called).
fn basalt_table(
    source: &std::sync::Arc<dyn datafusion::logical_expr::TableSource>,
) -> Option<(String, String)> {
    let provider = source_as_provider(source).ok()?;
    let table = provider.downcast_ref::<BasaltTable>()?;
    Some((table.meta.database.clone(), table.meta.name.clone()))
}

/// The last part of an object name, as written (grants are compared by the catalog's key).
fn object_text(name: &ast::ObjectName) -> String {
    name.0
        .last()
        .and_then(|p| p.as_ident())
        .map(|i| i.value.clone())
        .unwrap_or_else(|| name.to_string())
}

/// The check the `local()` table function runs before it touches a file: reading the server's
/// files is an administrator's privilege (as Doris's `local` TVF requires ADMIN_PRIV).
pub(crate) fn local_files_gate(
    catalog: std::sync::Arc<dyn Catalog>,
    info: std::sync::Arc<SessionInfo>,
) -> basalt_load::local_files::AccessGate {
    std::sync::Arc::new(move || access(catalog.as_ref(), &info).require_global(Privilege::Admin))
}
