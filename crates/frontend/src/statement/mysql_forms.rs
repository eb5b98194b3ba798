//! Statements of MySQL's (and MariaDB's) forms that run as other statements do plus a step:
//! a query assigning user variables (evaluated row by row, `row_assignments`, after the
//! one-row derived tables it assigns in), `SELECT ..
//! INTO @a, @b` (the row kept in user variables), `DO expr, ..` (the row dropped) and `CREATE
//! OR REPLACE TABLE` (drop, then create).

use crate::engine::QueryEngine;
use crate::output::Output;
use crate::row_assignments::{assign_row, RowQuery};
use crate::session::Session;
use basalt_common::df_error::from_df;
use basalt_common::{BasaltError, Result};
use basalt_sql::{ast, Statement, TableName};
use datafusion::arrow::array::RecordBatch;
use futures::TryStreamExt;

impl QueryEngine {
    /// A query that assigns user variables: first its assigning one-row derived tables, left
    /// to right (the query then reads their values); then, if its select list assigns,
    /// DataFusion's rows in output order with the assigning items evaluated one row after
    /// another.
    pub(super) async fn query_with_assignments(
        &self,
        session: &Session,
        mut query: ast::Query,
    ) -> Result<Output> {
        let derived = crate::row_assignments::assigning_derived_tables(&mut query)?;
        if !derived.is_empty() {
            let mut rows = Vec::with_capacity(derived.len());
            for table in derived {
                let out = Box::pin(self.query_with_assignments(session, table)).await?;
                let Output::Rows { schema, stream } = out else {
                    return Err(BasaltError::Internal("a derived table gave no rows".into()));
                };
                let batches = stream.try_collect::<Vec<_>>().await?;
                let batch = datafusion::arrow::compute::concat_batches(&schema, &batches)
                    .map_err(|e| from_df(e.into()))?;
                rows.push(batch);
            }
            crate::row_assignments::fill_derived_tables(&mut query, &rows)?;
            if !crate::row_assignments::has_assignment(&query) {
                let stmt = ast::Statement::Query(Box::new(query));
                return self.run_datafusion(session, stmt, false).await;
            }
        }
        let row_query = RowQuery::of(&query)?;
        let stmt = ast::Statement::Query(Box::new(row_query.query.clone()));
        let (schema, batches) = match self.run_datafusion(session, stmt, false).await? {
            Output::Rows { schema, stream } => (schema, stream.try_collect::<Vec<_>>().await?),
            other => return Ok(other),
        };
        let batch = datafusion::arrow::compute::concat_batches(&schema, &batches)
            .map_err(|e| from_df(e.into()))?;
        let out = row_query.finish(session, &batch)?;
        Ok(Output::batches(out.schema(), vec![out]))
    }

    /// A query's rows: evaluated row by row where it assigns user variables.
    async fn select(&self, session: &Session, query: ast::Query) -> Result<Output> {
        match crate::row_assignments::has_assignment(&query) {
            true => self.query_with_assignments(session, query).await,
            false => {
                self.run_datafusion(session, ast::Statement::Query(Box::new(query)), false)
                    .await
            }
        }
    }

    /// `DO expr, ..`: the expressions' row computed (assignments made, errors raised) and
    /// dropped.
    pub(super) async fn do_expressions(
        &self,
        session: &Session,
        query: ast::Query,
    ) -> Result<Output> {
        if let Output::Rows { stream, .. } = self.select(session, query).await? {
            stream.try_collect::<Vec<RecordBatch>>().await?;
        }
        Ok(Output::ok())
    }

    /// `SELECT .. INTO @a, @b`.
    pub(super) async fn select_into_variables(
        &self,
        session: &Session,
        query: ast::Query,
        variables: &[String],
    ) -> Result<Output> {
        let batches: Vec<RecordBatch> = match self.select(session, query).await? {
            Output::Rows { stream, .. } => stream.try_collect().await?,
            _ => vec![],
        };
        assign_row(session, variables, &batches)?;
        let selected = batches.iter().map(|b| b.num_rows() as u64).sum();
        session.info.found_rows.set_selected(selected);
        Ok(Output::ok())
    }

    /// `CREATE OR REPLACE [TEMPORARY] TABLE`: the table dropped if it exists, then created
    /// (as MariaDB does, not in one step: a failed create leaves no table).
    pub(super) async fn replace_table(
        &self,
        session: &Session,
        create: Statement,
    ) -> Result<Output> {
        let (temporary, table) = match &create {
            Statement::CreateTemporaryTable(inner) => (true, created_table(inner)),
            other => (false, created_table(other)),
        };
        let Some(table) = table else {
            return Err(BasaltError::NotSupported(
                "CREATE OR REPLACE of this form".into(),
            ));
        };
        let name = match &table.database {
            Some(db) => format!("{}.{}", quoted(db), quoted(&table.table)),
            None => quoted(&table.table),
        };
        let drop = format!(
            "DROP {}TABLE IF EXISTS {name}",
            if temporary { "TEMPORARY " } else { "" }
        );
        Box::pin(self.execute(session, &drop)).await?;
        Box::pin(self.execute_statement(session, create)).await
    }
}

/// The table a CREATE TABLE statement creates.
fn created_table(stmt: &Statement) -> Option<&TableName> {
    match stmt {
        Statement::CreateTable(t) => Some(&t.name),
        Statement::CreateTableAs(t) => Some(&t.table.name),
        Statement::CreateTableLike { table, .. } => Some(table),
        _ => None,
    }
}

fn quoted(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}
