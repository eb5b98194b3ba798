//! SHOW and DESCRIBE: databases, tables, columns, CREATE TABLE, variables, character sets and
//! collations, partitions, tablets, loads, workload groups, warnings.

use super::misrouted;
use crate::engine::{split_name, QueryEngine};
use crate::output::Output;
use crate::session::{require_database, Session};
use crate::show::{self, Col, ResultBuilder};
use crate::statement::ddl;
use basalt_common::{BasaltError, Result};
use basalt_sql::ast;
use basalt_sql::ast::{ShowStatementFilter, ShowStatementFilterPosition};
use basalt_sql::Statement;

impl QueryEngine {
    /// SHOW statements of Basalt's own grammar.
    pub(super) fn execute_show(&self, session: &Session, stmt: Statement) -> Result<Output> {
        let catalog = &self.services.catalog;
        match stmt {
            Statement::ShowWorkloadGroups { like } => Ok(crate::workload_groups::show(
                &self.services.workload,
                like.as_deref(),
            )),
            Statement::ShowWarnings => Ok(session.info.warnings.show()),
            Statement::ShowPartitions {
                table, temporary, ..
            } => {
                let db = ddl::database_of(session, &table.database)?;
                Ok(show::show_partitions(
                    catalog.table(&db, &table.table)?.as_ref(),
                    temporary,
                ))
            }
            Statement::ShowTablets {
                table, partitions, ..
            } => {
                let db = ddl::database_of(session, &table.database)?;
                let table = catalog.table(&db, &table.table)?;
                for name in &partitions {
                    if table.partition_by_name(name).is_none() {
                        return Err(BasaltError::UnknownPartition(name.clone()));
                    }
                }
                Ok(show::show_tablets(table.as_ref(), &partitions))
            }
            Statement::ShowDynamicPartitionTables { database } => {
                let db = match database {
                    Some(d) => session.stored_name(&d),
                    None => require_database(session)?,
                };
                crate::dynamic_partitions::show_tables(catalog.as_ref(), &db)
            }
            Statement::ShowBackends => Ok(crate::backends::show(&self.services)),
            Statement::ShowTransaction { database, filter } => {
                let mut jobs = self.load_records(session, database)?;
                jobs.retain(|j| match &filter {
                    basalt_sql::TransactionFilter::Id(id) => j.txn_id == *id,
                    basalt_sql::TransactionFilter::Label(l) => j.label == *l,
                    basalt_sql::TransactionFilter::Status(s) => {
                        crate::show_proc::loads::transaction_status(j).eq_ignore_ascii_case(s)
                    }
                });
                Ok(crate::show_proc::loads::finished_transactions(
                    &jobs,
                    crate::show_proc::loads::coordinator(self.listening.get().copied()),
                ))
            }
            Statement::ShowLoad {
                stream,
                database,
                label,
                limit,
            } => {
                let mut jobs = self.load_records(session, database)?;
                if let Some(l) = label {
                    jobs.retain(|j| j.label == l);
                }
                if let Some(n) = limit {
                    let skip = jobs.len().saturating_sub(n as usize);
                    jobs.drain(..skip);
                }
                Ok(show::show_load(&jobs, stream))
            }
            _ => Err(misrouted()),
        }
    }

    /// The records of a database's loads (the session's database when none is named), the
    /// failed ones kept in memory too, oldest first.
    fn load_records(
        &self,
        session: &Session,
        database: Option<String>,
    ) -> Result<Vec<std::sync::Arc<basalt_catalog::LoadJobRecord>>> {
        let catalog = &self.services.catalog;
        let db = match database {
            Some(d) => session.stored_name(&d),
            None => require_database(session)?,
        };
        // Loads record their database as stored.
        let db = crate::catalog_provider::stored_database(catalog.as_ref(), &db)
            .ok_or(BasaltError::UnknownDatabase(db))?;
        let mut jobs = catalog.load_jobs(&db);
        jobs.extend(self.loads.failures(&db));
        jobs.sort_by_key(|j| (j.finished_ms, j.txn_id));
        Ok(jobs)
    }

    /// SHOW statements of the MySQL grammar.
    pub(super) fn execute_standard_show(
        &self,
        session: &Session,
        stmt: ast::Statement,
    ) -> Result<Output> {
        let catalog = &self.services.catalog;
        use ast::Statement as S;
        match stmt {
            S::ShowDatabases { show_options, .. } | S::ShowSchemas { show_options, .. } => {
                let filter = filter_of(&show_options.filter_position);
                let mut b = ResultBuilder::new(&[Col::str("Database")]);
                let access = session.access();
                let mut names: Vec<String> = catalog
                    .databases()
                    .into_iter()
                    .map(|d| d.name)
                    .filter(|d| access.may_see_database(d))
                    .collect();
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
                    Some(n) => session.stored_name(&split_name(n).1),
                    None => require_database(session)?,
                };
                let filter = filter_of(&show_options.filter_position);
                let header = format!("Tables_in_{db}");
                let mut cols = vec![Col::str(&header)];
                if full {
                    cols.push(Col::str("Table_type"));
                }
                let mut b = ResultBuilder::new(&cols);
                let system = (!catalog.database_exists(&db))
                    .then(|| crate::system_databases::system_database(&db))
                    .flatten();
                let information_schema = db.eq_ignore_ascii_case("information_schema");
                let tables: Vec<String> = if information_schema {
                    crate::information_schema::table_names()
                        .into_iter()
                        .map(str::to_uppercase)
                        .collect()
                } else if let Some(system) = system {
                    crate::system_databases::table_names(system)
                } else {
                    let access = session.access();
                    access.require_any_on_database(&db)?;
                    catalog
                        .tables(&db)?
                        .iter()
                        .filter(|t| crate::temporary_tables::listed(&t.name))
                        .filter(|t| access.may_see_table(&db, &t.name))
                        .map(|t| t.name.clone())
                        .collect()
                };
                let views: Vec<String> = if information_schema || system.is_some() {
                    vec![]
                } else {
                    let access = session.access();
                    catalog
                        .views(&db)
                        .iter()
                        .filter(|v| access.may_see_table(&db, &v.name))
                        .map(|v| v.name.clone())
                        .collect()
                };
                let mut listed: Vec<(String, &str)> = tables
                    .into_iter()
                    .map(|t| (t, "BASE TABLE"))
                    .chain(views.into_iter().map(|v| (v, "VIEW")))
                    .collect();
                listed.sort();
                for (t, kind) in listed {
                    if matches_filter(filter, &t)? {
                        let mut row = vec![t.into()];
                        if full {
                            row.push(kind.into());
                        }
                        b.row(row);
                    }
                }
                Ok(b.into_output())
            }
            S::ShowCreate { obj_type, obj_name } => {
                let (db, name) = split_name(&obj_name);
                let db = ddl::database_of(session, &db)?;
                if let Some(view) = catalog.view(&db, &name) {
                    return Ok(self.show_create_view(&view));
                }
                let table = catalog.table(&db, &name)?;
                if obj_type == ast::ShowCreateObject::View {
                    return Err(BasaltError::NotAView(format!("{db}.{name}")));
                }
                match session.info.temporary.shown_name(&table.name) {
                    Some(shown) => Ok(show::show_create_temporary_table(&table, &shown)),
                    None => Ok(show::show_create_table(table.as_ref())),
                }
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
            // The same character sets and collations information_schema lists.
            S::ShowCollation { .. } => {
                let mut b = ResultBuilder::new(&[
                    Col::str("Collation"),
                    Col::str("Charset"),
                    Col::int("Id"),
                    Col::str("Default"),
                    Col::str("Compiled"),
                    Col::int("Sortlen"),
                ]);
                for (collation, charset, id, default) in crate::information_schema::COLLATIONS {
                    b.row(vec![
                        (*collation).into(),
                        (*charset).into(),
                        (*id).into(),
                        (if *default { "Yes" } else { "" }).into(),
                        "Yes".into(),
                        1i64.into(),
                    ]);
                }
                Ok(b.into_output())
            }
            S::ShowCharset(_) => {
                let mut b = ResultBuilder::new(&[
                    Col::str("Charset"),
                    Col::str("Description"),
                    Col::str("Default collation"),
                    Col::int("Maxlen"),
                ]);
                for (charset, description, collation, maxlen) in
                    crate::information_schema::CHARACTER_SETS
                {
                    b.row(vec![
                        (*charset).into(),
                        (*description).into(),
                        (*collation).into(),
                        (*maxlen).into(),
                    ]);
                }
                Ok(b.into_output())
            }
            S::ShowStatus { filter, .. } => {
                let mut b = ResultBuilder::new(&[Col::str("Variable_name"), Col::str("Value")]);
                for (name, value) in
                    crate::information_schema::status_rows(&self.services.processes)
                {
                    if matches_filter(filter.as_ref(), name)? {
                        b.row(vec![name.into(), value.into()]);
                    }
                }
                Ok(b.into_output())
            }
            _ => Err(misrouted()),
        }
    }
}

/// A SHOW statement's filter as the information_schema-backed SHOWs take it.
pub(super) fn show_filter(
    pos: Option<ShowStatementFilterPosition>,
) -> Option<basalt_sql::ShowFilter> {
    match pos {
        Some(ShowStatementFilterPosition::Infix(f))
        | Some(ShowStatementFilterPosition::Suffix(f)) => Some(match f {
            ShowStatementFilter::Like(p)
            | ShowStatementFilter::ILike(p)
            | ShowStatementFilter::NoKeyword(p) => basalt_sql::ShowFilter::Like(p),
            ShowStatementFilter::Where(e) => basalt_sql::ShowFilter::Where(Box::new(e)),
        }),
        None => None,
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
