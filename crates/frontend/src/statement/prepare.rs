//! Prepared statements: COM_STMT_PREPARE/EXECUTE/CLOSE and SQL-level PREPARE, EXECUTE and
//! DEALLOCATE; a point query takes the short-circuit path with its parameters bound.

use super::misrouted;
use super::query::{mysql_column_names, renamed_schema, written_item_names};
use super::ParsedStatement;
use crate::engine::PreparedInfo;
use crate::engine::QueryEngine;
use crate::output::Output;
use crate::point_query::PointQuery;
use crate::prepared::PreparedStatement;
use crate::session::Session;
use crate::statement::ddl;
use crate::variables::VarValue;
use basalt_common::df_error::from_df;
use basalt_common::ParamValue;
use basalt_common::{BasaltError, Result};
use basalt_sql::ast;
use basalt_sql::ast::{Expr as SqlExpr, Value};
use basalt_sql::Statement;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::sql::parser::Statement as DfStatement;
use std::sync::Arc;

impl QueryEngine {
    /// The short-circuit path alone, for callers that run it where the request arrived: the
    /// result when `stmt` is a point query answered by primary-key lookup, `None` for anything
    /// else (which [`QueryEngine::execute_parsed`] then runs).
    pub fn try_point_query(
        &self,
        session: &Session,
        stmt: &mut ParsedStatement,
    ) -> Option<Result<Output>> {
        if !session.short_circuit_enabled() {
            return None;
        }
        let Statement::Standard(query) = &stmt.statement else {
            return None;
        };
        if !matches!(**query, ast::Statement::Query(_)) {
            return None;
        }
        stmt.point_checked = true;
        let answer = self.point_answer(session, query).transpose()?;
        session.info.row_count.finish(&answer);
        session.info.found_rows.begin();
        Some(session.info.found_rows.finish(answer))
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
        let answer = point.execute(&self.services, session, params).transpose()?;
        session.info.found_rows.begin();
        Some(session.info.found_rows.finish(answer))
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
    /// statement runs with its parameters bound as literals into the parsed statement.
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
        session.info.warnings.clear();
        if let Some(point) = &stmt.point {
            if session.short_circuit_enabled() {
                if let Some(out) = point.execute(&self.services, session, &params)? {
                    return Ok(out);
                }
            }
        }
        let bound = stmt.bind(&params)?;
        Box::pin(self.execute_parsed(session, ParsedStatement::new(bound))).await
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
        crate::statement_limits::check_placeholders(placeholders.len())?;
        let mut stmt = basalt_sql::parse_one(sql)?;
        crate::temporary_tables::refuse_hidden_names(&stmt)?;
        // The session's temporary tables as they are now (by their hidden names).
        crate::temporary_tables::resolve(session, &mut stmt);
        let expressions = match &mut stmt {
            Statement::Standard(s) => crate::statement_limits::prepare(s)?,
            _ => 0,
        };
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
                    Some(p) => {
                        p.check_access(session)?;
                        Some(p.schema.clone())
                    }
                    None => self.describe_columns(session, s, expressions).await?,
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
            statement: stmt,
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
        expressions: usize,
    ) -> Result<Option<SchemaRef>> {
        if !matches!(stmt, ast::Statement::Query(_)) {
            return Ok(None);
        }
        let column_names = mysql_column_names(stmt);
        let items = written_item_names(stmt);
        let shown = match &column_names {
            Some(_) => Default::default(),
            None => crate::identifier_case::shown_names(
                self.services.catalog.as_ref(),
                session.database().as_deref(),
                stmt,
            ),
        };
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
        crate::views::expand(
            self.services.catalog.as_ref(),
            session.database().as_deref(),
            &mut numbered,
        )?;
        crate::named_windows::resolve(&mut numbered)?;
        crate::lateral_views::rewrite(&mut numbered)?;
        crate::mysql_compat::rewrite(&mut numbered, &session.sql_settings());
        self.rewrite_function_calls(session, &mut numbered)?;
        crate::grouping::rewrite(&mut numbered)?;
        crate::having_filter::rewrite(&mut numbered, &|name| session.is_aggregate(name));
        session.sync_planner_options();
        let state = session.ctx.state();
        crate::merged_columns::rewrite(&mut numbered, &state).await;
        let statement = DfStatement::Statement(Box::new(numbered));
        let budget = crate::statement_timeout::planning_budget(session);
        let planned = crate::planning_lane::plan(expressions, budget, async move {
            state.statement_to_plan(statement).await
        })
        .await?;
        match planned {
            Ok(plan) => {
                // Column names and types of a table are for those who may read it.
                session.access().check_plan(&plan)?;
                let schema = Arc::new(plan.schema().as_arrow().clone());
                let named_by_plan = column_names.is_none();
                let schema = renamed_schema(schema, column_names, &items, &shown);
                let (database, catalog) = (session.database(), self.services.catalog.as_ref());
                Ok(Some(crate::column_origins::mark(
                    schema,
                    &plan,
                    database.as_deref(),
                    catalog,
                    named_by_plan,
                )))
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
                Some(VarValue::Double(d)) => ParamValue::Double(d),
                Some(VarValue::Decimal(d)) => ParamValue::Decimal(d),
                Some(VarValue::Str(s)) => ParamValue::Bytes(s.into_bytes()),
                None => ParamValue::Null,
            })
            .collect()
    }

    /// PREPARE, EXECUTE and DEALLOCATE of Basalt's own grammar.
    pub(super) async fn execute_prepare(
        &self,
        session: &Session,
        stmt: Statement,
    ) -> Result<Output> {
        match stmt {
            Statement::Prepare { name, source } => {
                let text = match source {
                    basalt_sql::PrepareSource::Text(t) => t,
                    basalt_sql::PrepareSource::Variable(v) => {
                        match session.variables().get_user(&v) {
                            Some(v) => v.as_text(),
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
            _ => Err(misrouted()),
        }
    }
}
