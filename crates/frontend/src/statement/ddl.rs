//! DDL: databases, tables (CREATE TABLE through `table_def`), partitions, indexes (accepted and
//! checked), DROP and TRUNCATE (catalog first, then files); and the helpers other statements
//! share: the database a statement names, admin checks, 1046/1049 hints.

use super::misrouted;
use crate::catalog_provider::Services;
use crate::engine::split_name;
use crate::engine::QueryEngine;
use crate::output::Output;
use crate::session::require_database;
use crate::session::Session;
use basalt_common::{BasaltError, Result};
use basalt_sql::ast::{self, ObjectName, ObjectType};
use basalt_sql::Statement;

/// The database a statement names (as the catalog stores names), or the session's current one.
pub fn database_of(session: &Session, named: &Option<String>) -> Result<String> {
    match named {
        Some(d) => Ok(session.stored_name(d)),
        None => session.database().ok_or(BasaltError::NoDatabaseSelected),
    }
}

/// The database a statement names (or the session's current one) as stored, and 1049 when
/// there is none of the name; information_schema is always `information_schema`.
pub fn existing_database(
    services: &Services,
    session: &Session,
    named: &Option<String>,
) -> Result<String> {
    let db = database_of(session, named)?;
    if db.eq_ignore_ascii_case(crate::catalog_provider::INFORMATION_SCHEMA) {
        return Ok(crate::catalog_provider::INFORMATION_SCHEMA.to_string());
    }
    crate::catalog_provider::stored_database(services.catalog.as_ref(), &db)
        .ok_or(BasaltError::UnknownDatabase(db))
}

/// Global settings, workload groups and other accounts' affairs need ADMIN_PRIV (`what` names
/// the operation for the reader of the call).
pub fn require_admin(session: &Session, _what: &str) -> Result<()> {
    session
        .access()
        .require_global(basalt_catalog::Privilege::Admin)
}

fn database_exists_note(session: &Session, name: &str) {
    session.info.warnings.note(
        1007,
        format!("Can't create database '{name}'; database exists"),
    );
}

pub fn drop_object(
    services: &Services,
    session: &Session,
    kind: ObjectType,
    name: &ObjectName,
    if_exists: bool,
) -> Result<()> {
    let (db, n) = split_name(name);
    match kind {
        ObjectType::Table => {
            let db = database_of(session, &db)?;
            match services.catalog.drop_table(&db, &n, if_exists)? {
                Some(t) => services.storage.remove_table_files(&t),
                None => session.info.warnings.note(
                    1051,
                    format!("Unknown table '{db}.{}'", session.stored_name(&n)),
                ),
            }
        }
        ObjectType::Database | ObjectType::Schema => {
            match services.catalog.drop_database(&n, if_exists)? {
                Some(tables) => {
                    for t in tables {
                        services.storage.remove_table_files(&t);
                    }
                    let current = session.database();
                    if current.is_some_and(|db| session.name_case().same(&db, &n)) {
                        session.set_database(None);
                    }
                }
                None => session.info.warnings.note(
                    1008,
                    format!(
                        "Can't drop database '{}'; database doesn't exist",
                        session.stored_name(&n)
                    ),
                ),
            }
        }
        other => return Err(BasaltError::NotSupported(format!("DROP {other}"))),
    }
    Ok(())
}

/// Refines DataFusion's "table not found": with no database selected it is 1046, in a database
/// that does not exist it is 1049.
pub fn no_database_hint(services: &Services, e: BasaltError) -> BasaltError {
    let BasaltError::UnknownTable(name) = &e else {
        return e;
    };
    match name.split_once('.') {
        Some((db, _)) if db == crate::session::NO_DATABASE => BasaltError::NoDatabaseSelected,
        Some((db, _))
            if db != crate::catalog_provider::INFORMATION_SCHEMA
                && !services.catalog.database_exists(db) =>
        {
            BasaltError::UnknownDatabase(db.to_string())
        }
        _ => e,
    }
}

/// `@@foreign_key_checks`: whether a new foreign key's table and columns must exist.
pub(crate) fn foreign_key_checks(session: &Session) -> bool {
    session
        .variables()
        .get("foreign_key_checks")
        .map(|v| v.as_text())
        .map(|v| !matches!(v.to_ascii_uppercase().as_str(), "0" | "OFF" | "FALSE"))
        .unwrap_or(true)
}

/// A warning for each UNIQUE index `after` has that `before` had not: Basalt keeps it and does
/// not reject duplicates (see `table_keys`).
fn unenforced_unique_warnings(
    session: &Session,
    before: Option<&basalt_catalog::TableMeta>,
    after: &basalt_catalog::TableMeta,
) {
    for name in crate::table_keys::new_unique_indexes(before, after) {
        let (code, message) = crate::table_keys::unenforced_unique(name);
        session.info.warnings.add("Warning", code, message);
    }
}

impl QueryEngine {
    /// `ALTER TABLE` (also `CREATE INDEX` and `DROP INDEX`, MySQL's other spellings of it),
    /// with a warning for each UNIQUE index it adds.
    pub(super) async fn execute_alter_table(
        &self,
        session: &Session,
        table: &basalt_sql::TableName,
        ops: &[basalt_sql::AlterTableOp],
    ) -> Result<Output> {
        let db = database_of(session, &table.database)?;
        // RENAME TABLE of a view renames the view (MySQL's views share the tables' names).
        if let [basalt_sql::AlterTableOp::Rename(to)] = ops {
            if let Some(view) = self.services.catalog.view(&db, &table.table) {
                let renamed = basalt_catalog::ViewMeta {
                    name: session.stored_name(to),
                    ..(*view).clone()
                };
                self.services.catalog.create_view(renamed, false)?;
                self.services.catalog.drop_view(&db, &view.name, false)?;
                return Ok(Output::ok());
            }
        }
        let before = self.services.catalog.table(&db, &table.table)?;
        let checks = foreign_key_checks(session);
        let (out, notes) =
            crate::schema_change::alter_table(self.services(), &db, &table.table, ops, checks)
                .await?;
        for (level, code, message) in notes.0 {
            session.info.warnings.add(level, code, message);
        }
        let renamed = ops.iter().rev().find_map(|op| match op {
            basalt_sql::AlterTableOp::Rename(n) => Some(n.as_str()),
            _ => None,
        });
        if let Ok(after) = self
            .services
            .catalog
            .table(&db, renamed.unwrap_or(&table.table))
        {
            unenforced_unique_warnings(session, Some(&before), &after);
        }
        let dynamic_changed = ops.iter().any(|op| {
            matches!(op, basalt_sql::AlterTableOp::SetProperties(props)
                if props.iter().any(|(k, _)| crate::dynamic_partitions::is_dynamic_key(k)))
        });
        if dynamic_changed {
            self.refresh_dynamic_partitions(&db, renamed.unwrap_or(&table.table))?;
        }
        Ok(out)
    }

    /// `CREATE INDEX` / `DROP INDEX` as the ALTER TABLE they stand for.
    pub(super) async fn execute_index_ddl(
        &self,
        session: &Session,
        stmt: Statement,
    ) -> Result<Output> {
        let (table, op) = match stmt {
            Statement::CreateIndex {
                table,
                index,
                if_not_exists,
            } => (
                table,
                basalt_sql::AlterTableOp::AddIndex {
                    index,
                    if_not_exists,
                },
            ),
            Statement::DropIndex {
                name,
                table,
                if_exists,
            } => (
                table,
                basalt_sql::AlterTableOp::DropIndex { name, if_exists },
            ),
            _ => return Err(misrouted()),
        };
        self.execute_alter_table(session, &table, &[op]).await
    }

    /// DDL statements of Basalt's own grammar.
    pub(super) fn execute_ddl(&self, session: &Session, stmt: Statement) -> Result<Output> {
        let catalog = &self.services.catalog;
        let storage = &self.services.storage;
        match stmt {
            Statement::CreateTable(ct) => {
                let db = match &ct.name.database {
                    Some(d) => session.stored_name(d),
                    None => require_database(session)?,
                };
                self.require_backends()?;
                let checks = foreign_key_checks(session);
                if !crate::table_def::create_table_checked(catalog.as_ref(), &db, &ct, checks)? {
                    session.info.warnings.note(
                        1050,
                        format!(
                            "Table '{}' already exists",
                            session.stored_name(&ct.name.table)
                        ),
                    );
                } else if let Ok(created) = catalog.table(&db, &ct.name.table) {
                    unenforced_unique_warnings(session, None, &created);
                    self.refresh_dynamic_partitions(&db, &created.name)?;
                }
                Ok(Output::ok())
            }
            Statement::CreateTableLike {
                table,
                like,
                if_not_exists,
            } => {
                let source_db = database_of(session, &like.database)?;
                let source = catalog.table(&source_db, &like.table)?;
                let mut ct = crate::table_def::definition_of(&source)?;
                ct.name = table;
                ct.if_not_exists = if_not_exists;
                self.execute_ddl(session, Statement::CreateTable(Box::new(ct)))
            }
            Statement::AlterPartitions { table, op } => {
                let db = database_of(session, &table.database)?;
                // Temporary partitions are the user's own, also on a dynamic-partition table.
                let temporary_only = matches!(
                    op,
                    basalt_sql::PartitionOp::Add {
                        temporary: true,
                        ..
                    } | basalt_sql::PartitionOp::Drop {
                        temporary: true,
                        ..
                    }
                );
                if !temporary_only {
                    crate::dynamic_partitions::check_manual_change(
                        catalog.as_ref(),
                        &db,
                        &table.table,
                    )?;
                }
                match op {
                    basalt_sql::PartitionOp::Add { def, temporary } => {
                        self.require_backends()?;
                        crate::table_def::add_partition(
                            catalog.as_ref(),
                            &db,
                            &table.table,
                            &def,
                            temporary,
                        )?
                    }
                    basalt_sql::PartitionOp::Drop {
                        name,
                        if_exists,
                        temporary,
                    } => {
                        if let Some(p) = catalog.drop_partition(
                            &db,
                            &table.table,
                            &name,
                            if_exists,
                            temporary,
                        )? {
                            storage.remove_partition_files(&p);
                        }
                    }
                    basalt_sql::PartitionOp::Replace {
                        formal,
                        temporary,
                        properties,
                    } => {
                        let replacement = crate::table_def::partition_replacement(
                            formal,
                            temporary,
                            &properties,
                        )?;
                        for p in catalog.replace_partitions(&db, &table.table, &replacement)? {
                            storage.remove_partition_files(&p);
                        }
                    }
                    basalt_sql::PartitionOp::Rename { from, to } => {
                        catalog.rename_partition(&db, &table.table, &from, &to)?
                    }
                }
                Ok(Output::ok())
            }
            _ => Err(misrouted()),
        }
    }

    /// Brings a table's partitions to its dynamic-partition settings now (nothing for a
    /// table without them).
    pub(crate) fn refresh_dynamic_partitions(&self, database: &str, table: &str) -> Result<()> {
        crate::dynamic_partitions::refresh_table(
            self.services.catalog.as_ref(),
            &self.services.storage,
            database,
            table,
            crate::dynamic_partitions::local_now(),
        )
    }

    /// On a cluster's frontend, new tablets need backends to be placed on.
    pub(crate) fn require_backends(&self) -> Result<()> {
        match &self.services.cluster {
            Some(cluster) if cluster.backends().is_empty() => Err(BasaltError::InvalidDdl(
                "Failed to find enough backend: the cluster has no backends to place the new \
                 tablets on; add one with ALTER SYSTEM ADD BACKEND \"host:port\""
                    .into(),
            )),
            _ => Ok(()),
        }
    }

    /// DDL statements of the MySQL grammar.
    pub(super) fn execute_standard_ddl(
        &self,
        session: &Session,
        stmt: ast::Statement,
    ) -> Result<Output> {
        let catalog = &self.services.catalog;
        use ast::Statement as S;
        match stmt {
            S::CreateDatabase {
                db_name,
                if_not_exists,
                ..
            } => {
                let name = session.stored_name(&split_name(&db_name).1);
                if !catalog.create_database(&name, if_not_exists)? {
                    database_exists_note(session, &name);
                }
                Ok(Output::ok())
            }
            S::CreateSchema {
                schema_name: ast::SchemaName::Simple(n),
                if_not_exists,
                ..
            } => {
                let name = session.stored_name(&split_name(&n).1);
                if !catalog.create_database(&name, if_not_exists)? {
                    database_exists_note(session, &name);
                }
                Ok(Output::ok())
            }
            S::Drop {
                object_type,
                if_exists,
                names,
                temporary,
                ..
            } => {
                // MySQL drops every table of the list that exists, then names all the missing
                // ones in one error 1051.
                let mut unknown = Vec::new();
                for n in &names {
                    // DROP TABLE drops the session's temporary table of the name first.
                    let dropped = if object_type == ObjectType::Table
                        && crate::temporary_tables::drop_temporary(
                            self, session, n, temporary, if_exists,
                        )? {
                        Ok(())
                    } else {
                        drop_object(&self.services, session, object_type, n, if_exists)
                    };
                    match dropped {
                        Err(
                            BasaltError::UnknownTable(name) | BasaltError::UnknownTableToDrop(name),
                        ) if object_type == ObjectType::Table => unknown.push(name),
                        other => other?,
                    }
                }
                if !unknown.is_empty() {
                    return Err(BasaltError::UnknownTableToDrop(unknown.join(",")));
                }
                Ok(Output::ok())
            }
            S::Truncate(t) => {
                for target in &t.table_names {
                    let (db, name) = split_name(&target.name);
                    let db = database_of(session, &db)?;
                    let old = catalog.truncate_table(&db, &name)?;
                    self.services
                        .storage
                        .remove_tablet_files(old.tablets().map(|(_, t)| t));
                }
                Ok(Output::ok())
            }
            _ => Err(misrouted()),
        }
    }
}
