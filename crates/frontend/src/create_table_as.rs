//! CREATE TABLE .. AS SELECT (MySQL's and Doris's): the query is planned (SELECT on what it
//! reads), its result columns become the new table's (types by `result_column_types`; keys,
//! partitions, distribution and properties as written, or CREATE TABLE's defaults in
//! `table_def`), and its rows are loaded as an INSERT into the new table. If the load fails the
//! table is dropped again: the statement leaves all or nothing.

use crate::column_origins::StoredColumn;
use crate::engine::QueryEngine;
use crate::output::Output;
use crate::result_column_types::{computed_sketch, result_column_type};
use crate::session::{require_database, Session};
use basalt_common::{BasaltError, Result};
use basalt_sql::{ast, ColumnDef, CreateTable, CreateTableAs, CtasDuplicates};
use datafusion::arrow::datatypes::FieldRef;
use std::collections::HashSet;
use std::sync::Arc;

impl QueryEngine {
    /// Creates the table and loads the query's rows; the OK packet counts the rows loaded.
    pub(crate) async fn create_table_as(
        &self,
        session: &Session,
        ctas: CreateTableAs,
    ) -> Result<Output> {
        let CreateTableAs {
            mut table,
            column_names,
            mut query,
            duplicates,
        } = ctas;
        let db = match &table.name.database {
            Some(d) => session.stored_name(d),
            None => require_database(session)?,
        };
        let name = session.stored_name(&table.name.table);
        let catalog = self.services.catalog.as_ref();
        if !catalog.database_exists(&db) {
            return Err(BasaltError::UnknownDatabase(db));
        }
        if catalog.table(&db, &name).is_ok() {
            return self.table_exists(session, &table);
        }
        let result = self.query_result_columns(session, &mut query).await?;
        let (columns, query_columns) = table_columns(catalog, &table, result, &column_names)?;
        table.columns = columns;
        self.require_backends()?;
        if !crate::table_def::create_table(catalog, &db, &table)? {
            return self.table_exists(session, &table);
        }
        match self
            .load_new_table(session, &db, &name, &query_columns, query, duplicates)
            .await
        {
            Ok(rows) => Ok(Output::Ok {
                affected_rows: rows,
                last_insert_id: 0,
                info: format!("Records: {rows}  Duplicates: 0  Warnings: 0"),
            }),
            Err(e) => {
                // The statement fails as a whole: nothing of the new table remains.
                if let Ok(Some(dropped)) = catalog.drop_table(&db, &name, true) {
                    self.services.storage.remove_table_files(&dropped);
                }
                Err(e)
            }
        }
    }

    /// `IF NOT EXISTS` on an existing table does nothing but leave a note; without it, 1050.
    fn table_exists(&self, session: &Session, table: &CreateTable) -> Result<Output> {
        let name = session.stored_name(&table.name.table);
        if !table.if_not_exists {
            return Err(BasaltError::TableExists(name));
        }
        session
            .info
            .warnings
            .note(1050, format!("Table '{name}' already exists"));
        Ok(Output::ok())
    }

    /// The query's result columns: names as MySQL names them (as written, or the columns' own
    /// spelling for `*`), with the origin of each column read straight from a table.
    /// A select list naming two columns alike (`SELECT k, k`) gets unique aliases, which
    /// `query` keeps for the load; the names stay as written.
    async fn query_result_columns(
        &self,
        session: &Session,
        query: &mut Box<ast::Query>,
    ) -> Result<Vec<ResultColumn>> {
        let mut select = ast::Statement::Query(query.clone());
        let written = written_names(query);
        let plan = match self.plan_query(session, select.clone()).await {
            Err(e) if crate::result_names::duplicate_result_names(&e) => {
                crate::result_names::alias_select_items(&mut select);
                if let ast::Statement::Query(aliased) = &select {
                    *query = aliased.clone();
                }
                self.plan_query(session, select).await?
            }
            planned => planned?,
        };
        // Typed as it will run: the analyzer widens a UNION's columns to fit every arm (the
        // planned UNION has its first arm's types) and makes `/` MySQL's DECIMAL division.
        let state = session.ctx.state();
        let plan = state
            .analyzer()
            .execute_and_check(plan, state.config_options(), |_, _| {})
            .map_err(basalt_common::df_error::from_df)?;
        let schema = Arc::new(plan.schema().as_arrow().clone());
        let database = session.database();
        let schema = crate::column_origins::mark(
            schema,
            &plan,
            database.as_deref(),
            self.services.catalog.as_ref(),
            written.is_none(),
        );
        let stored = crate::column_origins::stored_columns(&plan, database.as_deref());
        let names: Vec<String> = match written {
            Some(names) if names.len() == schema.fields().len() => names,
            _ => schema
                .fields()
                .iter()
                .map(|f| unaliased_name(query, f.name()).unwrap_or_else(|| f.name().clone()))
                .collect(),
        };
        Ok(schema
            .fields()
            .iter()
            .zip(names)
            .zip(stored)
            .enumerate()
            .map(|(i, ((field, name), stored))| ResultColumn {
                name,
                field: field.clone(),
                stored,
                sketch: computed_sketch(&plan, i),
            })
            .collect())
    }

    /// `INSERT INTO db.name (columns) query` with LOAD on the new table covered by the CREATE
    /// that made it; the rows loaded. With IGNORE a row whose key an earlier row has is
    /// skipped (as INSERT IGNORE does); with REPLACE, or neither, it replaces that row (the
    /// new table is a Unique-key one when it has a key).
    async fn load_new_table(
        &self,
        session: &Session,
        db: &str,
        name: &str,
        columns: &[String],
        query: Box<ast::Query>,
        duplicates: Option<CtasDuplicates>,
    ) -> Result<u64> {
        let columns: Vec<String> = columns.iter().map(|c| quote(c)).collect();
        // A Unique-key table's INSERT replaces a row of the same key, as REPLACE does.
        let verb = match duplicates {
            Some(CtasDuplicates::Ignore) => "INSERT IGNORE",
            None | Some(CtasDuplicates::Replace) => "INSERT",
        };
        let text = format!(
            "{verb} INTO {}.{} ({}) SELECT 1",
            quote(db),
            quote(name),
            columns.join(", ")
        );
        let basalt_sql::Statement::Standard(stmt) = basalt_sql::parse_one(&text)? else {
            return Err(BasaltError::Internal(format!("not an INSERT: {text}")));
        };
        let ast::Statement::Insert(mut insert) = *stmt else {
            return Err(BasaltError::Internal(format!("not an INSERT: {text}")));
        };
        insert.source = Some(query);
        let stmt = ast::Statement::Insert(insert);
        crate::statement_timeout::arm(session, &stmt);
        let mut attempts = 0;
        let out = loop {
            attempts += 1;
            let run = match (&stmt, duplicates) {
                (ast::Statement::Insert(insert), Some(CtasDuplicates::Ignore)) => {
                    self.insert_ignore(session, insert.clone()).await
                }
                _ => {
                    self.run_datafusion_checked(session, stmt.clone(), false, false)
                        .await
                }
            };
            match run {
                Err(BasaltError::ConcurrentDdl(_)) if attempts < 3 => continue,
                done => break done?,
            }
        };
        Ok(match out {
            Output::Ok { affected_rows, .. } => affected_rows,
            _ => 0,
        })
    }
}

/// One column of the query's result.
struct ResultColumn {
    /// As MySQL names it.
    name: String,
    field: FieldRef,
    /// The table column it is read straight from.
    stored: Option<StoredColumn>,
    /// BITMAP or HLL when a sketch function computes it.
    sketch: Option<basalt_common::SqlType>,
}

/// The names of the query's columns as written (None with a `*`), as MySQL names them: an
/// unaliased string literal is named by its text.
fn written_names(query: &ast::Query) -> Option<Vec<String>> {
    let select = ast::Statement::Query(Box::new(query.clone()));
    let mut names = crate::statement::mysql_column_names(&select)?;
    if let ast::SetExpr::Select(s) = query.body.as_ref() {
        for (name, item) in names.iter_mut().zip(&s.projection) {
            if let ast::SelectItem::UnnamedExpr(ast::Expr::Value(v)) = item {
                if let ast::Value::SingleQuotedString(text) | ast::Value::DoubleQuotedString(text) =
                    &v.value
                {
                    *name = text.clone();
                }
            }
        }
    }
    Some(names)
}

/// The name MySQL gives the select item `result_names` aliased as `name` to plan the query.
fn unaliased_name(query: &ast::Query, name: &str) -> Option<String> {
    let position = crate::result_names::internal_alias_position(name)?;
    let mut body = query.body.as_ref();
    let select = loop {
        match body {
            ast::SetExpr::Select(select) => break select,
            ast::SetExpr::SetOperation { left, .. } => body = left.as_ref(),
            ast::SetExpr::Query(q) => body = q.body.as_ref(),
            _ => return None,
        }
    };
    let ast::SelectItem::ExprWithAlias { expr, .. } = select.projection.get(position)? else {
        return None;
    };
    Some(match expr {
        ast::Expr::Identifier(i) => i.value.clone(),
        ast::Expr::CompoundIdentifier(parts) => parts.last()?.value.clone(),
        other => other.to_string(),
    })
}

/// A backquoted identifier.
fn quote(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

/// The new table's columns, and the names of the query's columns in it (in the query's order).
/// Doris's `(names)` rename the query's columns in order. MySQL's declared columns come first
/// with their own definitions, and take the query's columns of the same name; the query's other
/// columns follow.
fn table_columns(
    catalog: &dyn basalt_catalog::Catalog,
    table: &CreateTable,
    result: Vec<ResultColumn>,
    renames: &[String],
) -> Result<(Vec<ColumnDef>, Vec<String>)> {
    let mut names: Vec<String> = result.iter().map(|c| c.name.clone()).collect();
    if !renames.is_empty() {
        if renames.len() != names.len() {
            return Err(BasaltError::InvalidDdl(format!(
                "the column list names {} columns, the query returns {}",
                renames.len(),
                names.len()
            )));
        }
        names = renames.to_vec();
    }
    if let Some(bad) = names.iter().find(|n| n.trim().is_empty()) {
        return Err(BasaltError::InvalidDdl(format!(
            "Incorrect column name '{bad}': name the column with AS"
        )));
    }
    let mut seen = HashSet::new();
    if let Some(dup) = names.iter().find(|n| !seen.insert(n.to_lowercase())) {
        return Err(BasaltError::DuplicateColumn(dup.clone()));
    }
    let bounded = bounded_text_columns(table);
    // Without a key clause Doris's default key is the first column, which may not be STRING;
    // a table kept in load order has no key.
    let first_is_key = !crate::table_def::keeps_load_order(table)?;
    let mut columns: Vec<ColumnDef> = table.columns.clone();
    for (column, name) in result.iter().zip(&names) {
        if columns.iter().any(|c| c.name.eq_ignore_ascii_case(name)) {
            continue;
        }
        let first = columns.is_empty() && first_is_key;
        let needs_bounded = first || bounded.contains(&name.to_lowercase());
        let typed = result_column_type(
            catalog,
            &column.field,
            column.stored.as_ref(),
            column.sketch.clone(),
            needs_bounded,
        )?;
        columns.push(ColumnDef {
            name: name.clone(),
            ty: typed.ty,
            agg: None,
            nullable: Some(typed.nullable),
            default: None,
            comment: None,
            auto_increment: false,
            key: false,
            unique: false,
            generated: None,
            allowed: None,
            on_update: false,
        });
    }
    Ok((columns, names))
}

/// The columns (lower case) that may not be STRING: keys, partition and bucket columns.
fn bounded_text_columns(table: &CreateTable) -> HashSet<String> {
    let keys = table.keys.iter().flat_map(|(_, cols)| cols.iter());
    let primary = table.primary_key.iter().flatten();
    let partition = table.partition.iter().flat_map(|p| p.columns.iter());
    let buckets = table.distribution.iter().flat_map(|d| d.columns.iter());
    keys.chain(primary)
        .chain(partition)
        .chain(buckets)
        .map(|c| c.to_lowercase())
        .collect()
}
