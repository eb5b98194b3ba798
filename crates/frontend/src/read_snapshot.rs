//! `START TRANSACTION WITH CONSISTENT SNAPSHOT` (what `mysqldump --single-transaction` sends):
//! from then on the session reads every table as it was at that moment — each table's
//! published version pinned, and its files kept from deletion — until the transaction ends
//! (COMMIT, ROLLBACK, another START TRANSACTION) or the session writes or changes the schema,
//! after which it reads the newest versions again. A dump during loads thus sees all of its
//! tables at one point: each load either in every table it touched or in none.

use crate::catalog_provider::Services;
use crate::session::Session;
use basalt_catalog::TableMeta;
use basalt_sql::{ast, Statement};
use basalt_storage::ReadGuard;
use std::collections::HashMap;
use std::sync::Arc;

/// The tables a session reads while its snapshot lasts.
#[derive(Debug)]
pub struct ReadSnapshot {
    /// By the catalog's keys of their database and name (`lower_case_table_names`).
    tables: HashMap<(String, String), Arc<TableMeta>>,
    name_case: basalt_common::TableNameCase,
    /// Keeps the pinned versions' files until the snapshot ends.
    guard: Arc<ReadGuard>,
}

impl ReadSnapshot {
    /// Every table of every database, as published now.
    pub fn take(services: &Services) -> ReadSnapshot {
        // Registered as a reader first, so that nothing published before is deleted.
        let guard = Arc::new(services.storage.begin_read());
        let catalog = &services.catalog;
        let name_case = catalog.table_name_case();
        let tables = catalog
            .databases()
            .into_iter()
            .flat_map(|db| catalog.tables(&db.name).unwrap_or_default())
            .map(|t| ((name_case.key(&t.database), name_case.key(&t.name)), t))
            .collect();
        ReadSnapshot {
            tables,
            name_case,
            guard,
        }
    }

    /// The pinned version of a table (None for one created after the snapshot).
    pub fn table(&self, database: &str, name: &str) -> Option<(Arc<TableMeta>, Arc<ReadGuard>)> {
        self.tables
            .get(&(self.name_case.key(database), self.name_case.key(name)))
            .map(|t| (t.clone(), self.guard.clone()))
    }
}

/// Whether the snapshot outlives `stmt`: reads, SHOW, SET and savepoints keep it; the end of
/// the transaction, writes and DDL end it.
fn keeps_snapshot(stmt: &Statement) -> bool {
    match stmt {
        Statement::Standard(s) => {
            matches!(
                s.as_ref(),
                ast::Statement::Query(_)
                    | ast::Statement::Explain { .. }
                    | ast::Statement::ExplainTable { .. }
                    | ast::Statement::Set(_)
                    | ast::Statement::Use(_)
                    | ast::Statement::Savepoint { .. }
                    | ast::Statement::ReleaseSavepoint { .. }
                    | ast::Statement::LockTables { .. }
                    | ast::Statement::UnlockTables
                    | ast::Statement::ShowTables { .. }
                    | ast::Statement::ShowColumns { .. }
                    | ast::Statement::ShowCreate { .. }
                    | ast::Statement::ShowVariables { .. }
                    | ast::Statement::ShowStatus { .. }
                    | ast::Statement::ShowDatabases { .. }
            ) || matches!(
                s.as_ref(),
                ast::Statement::Rollback {
                    savepoint: Some(_),
                    ..
                }
            )
        }
        Statement::ShowMetadata { .. }
        | Statement::ShowData { .. }
        | Statement::ShowCreateDatabase { .. }
        | Statement::ShowWarnings
        | Statement::ShowWarningCount
        | Statement::AlterTableKeys { .. } => true,
        _ => false,
    }
}

/// Before `stmt` runs: a new snapshot for `START TRANSACTION WITH CONSISTENT SNAPSHOT`, the end
/// of the current one for a statement that does not keep it.
pub fn before_statement(services: &Services, session: &Session, stmt: &Statement) {
    let mut slot = session.info.snapshot.lock();
    if matches!(stmt, Statement::StartConsistentSnapshot) {
        *slot = Some(Arc::new(ReadSnapshot::take(services)));
    } else if slot.is_some() && !keeps_snapshot(stmt) {
        *slot = None;
    }
}

#[cfg(test)]
mod tests {
    use super::keeps_snapshot;

    #[test]
    fn reads_keep_the_snapshot_and_writes_end_it() {
        let keeps = |sql: &str| keeps_snapshot(&basalt_sql::parse_one(sql).unwrap());
        assert!(keeps("SELECT * FROM t"));
        assert!(keeps("SHOW CREATE TABLE t"));
        assert!(keeps("SHOW TABLE STATUS LIKE 't'"));
        assert!(keeps("SAVEPOINT sp"));
        assert!(keeps("ROLLBACK TO SAVEPOINT sp"));
        assert!(keeps("SET @x = 1"));
        assert!(!keeps("COMMIT"));
        assert!(!keeps("ROLLBACK"));
        assert!(!keeps("START TRANSACTION"));
        assert!(!keeps("INSERT INTO t VALUES (1)"));
        assert!(!keeps("DROP TABLE t"));
    }
}
