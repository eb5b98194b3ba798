//! Queries, INSERT and EXPLAIN through DataFusion: MySQL rewrites, planning in the session's
//! workload group (admission, memory pool, CPU and read accounting), result columns named as
//! MySQL names them, EXPLAIN with Basalt's pruning lines; and the short-circuit check.

use crate::backend_failover::{self, AfterFailure, LiveAtStart};
use crate::engine::QueryEngine;
use crate::found_rows::{self, Counting};
use crate::output::Output;
use crate::point_query::PointQuery;
use crate::session::Session;
use crate::show::{Col, ResultBuilder};
use crate::statement::ddl;
use basalt_common::df_error::from_df;
use basalt_common::{BasaltError, Result};
use basalt_sql::ast;
use basalt_sql::ast::Expr as SqlExpr;
use datafusion::arrow::array::{Array, RecordBatch, StringArray, UInt64Array};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::execution::TaskContext;
use datafusion::logical_expr::LogicalPlan;
use datafusion::physical_plan;
use datafusion::sql::parser::Statement as DfStatement;
use futures::StreamExt;
use std::sync::Arc;

/// How long a query whose scan found no live replica waits for a backend marked dead to
/// answer again before it fails.
const REVIVAL_WAIT: std::time::Duration = std::time::Duration::from_secs(6);

impl QueryEngine {
    /// The short-circuit path: a SELECT (or its EXPLAIN) that fixes a Unique table's whole key
    /// is answered by primary-key lookup, without the optimizer.
    pub(super) fn short_circuit(
        &self,
        session: &Session,
        stmt: &ast::Statement,
        point_checked: bool,
    ) -> Result<Option<Output>> {
        use ast::Statement as S;
        if session.short_circuit_enabled() {
            match stmt {
                S::Query(_) if !point_checked => return self.point_answer(session, stmt),
                S::Explain {
                    statement,
                    analyze: false,
                    ..
                } => {
                    let db = session.database();
                    if let Some(point) =
                        PointQuery::plan(&self.services, statement, db.as_deref(), 0)
                    {
                        point.check_access(session)?;
                        let mut b = ResultBuilder::new(&[Col::str("plan_type"), Col::str("plan")]);
                        b.row(vec!["physical_plan".into(), point.explain().into()]);
                        return Ok(Some(b.into_output()));
                    }
                }
                _ => {}
            }
        }
        Ok(None)
    }

    /// The answer to a SELECT that is a point query, by primary-key lookup; `None` for any
    /// other statement.
    pub(super) fn point_answer(
        &self,
        session: &Session,
        stmt: &ast::Statement,
    ) -> Result<Option<Output>> {
        let db = session.database();
        match PointQuery::plan(&self.services, stmt, db.as_deref(), 0) {
            Some(point) => point.execute(&self.services, session, &[]),
            None => Ok(None),
        }
    }

    /// Plans and runs a query, INSERT or EXPLAIN with DataFusion.
    pub(super) async fn run_datafusion(
        &self,
        session: &Session,
        stmt: ast::Statement,
        explain: bool,
    ) -> Result<Output> {
        self.run_datafusion_checked(session, stmt, explain, true)
            .await
    }

    /// [`QueryEngine::run_datafusion`]; `check_target` false leaves LOAD on the table an
    /// INSERT writes unchecked (the caller has checked what covers it).
    pub(crate) async fn run_datafusion_checked(
        &self,
        session: &Session,
        mut stmt: ast::Statement,
        explain: bool,
        check_target: bool,
    ) -> Result<Output> {
        session.scan_reports.clear();
        let ignore = crate::lenient_insert::take_ignore(&mut stmt);
        crate::found_rows::check_placement(&stmt)?;
        let found_rule = found_rows::Rule::of(&stmt);
        let inserts_selected = found_rows::inserts_selected_rows(&stmt);
        // Result columns are named from the statement as the client wrote it.
        let column_names = mysql_column_names(&stmt);
        let mut items = written_item_names(&stmt);
        let shown = match &column_names {
            Some(_) => Default::default(),
            None => crate::identifier_case::shown_names(
                self.services.catalog.as_ref(),
                session.database().as_deref(),
                &stmt,
            ),
        };
        crate::views::expand(
            self.services.catalog.as_ref(),
            session.database().as_deref(),
            &mut stmt,
        )?;
        let expressions = crate::statement_limits::prepare(&mut stmt)?;
        // Before ORDER BY positions become the aliases they name (`grouping`).
        crate::ambiguous_aliases::check(&stmt)?;
        crate::named_windows::resolve(&mut stmt)?;
        crate::lateral_views::rewrite(&mut stmt)?;
        crate::mysql_compat::rewrite(&mut stmt, &session.sql_settings());
        self.rewrite_function_calls(session, &mut stmt)?;
        crate::grouping::rewrite(&mut stmt)?;
        crate::having_filter::rewrite(&mut stmt, &|name| session.is_aggregate(name));
        crate::local_calls::rewrite_calls(&mut stmt)?;
        session.sync_planner_options();
        let mut state = session.ctx.state();
        crate::session_clock::fix_start(&session.info.vars.read(), &mut state);
        crate::merged_columns::rewrite(&mut stmt, &state).await;
        let budget = crate::statement_timeout::planning_budget(session);
        let plan_statement = |stmt: ast::Statement| {
            let state = state.clone();
            let statement = DfStatement::Statement(Box::new(stmt));
            crate::planning_lane::plan(expressions, budget.clone(), async move {
                state.statement_to_plan(statement).await
            })
        };
        let mut planned = plan_statement(stmt.clone()).await?;
        // Doris orders by a position past the select list as by a constant (nothing); each
        // query DataFusion refuses for one loses such positions (a few queries at most).
        for _ in 0..8 {
            let refused = match &planned {
                Err(e) => crate::order_positions::refused_position(&e.to_string()),
                Ok(_) => None,
            };
            let Some((specified, max)) = refused else {
                break;
            };
            if !crate::order_positions::drop_positions_past(&mut stmt, specified, max) {
                break;
            }
            planned = plan_statement(stmt.clone()).await?;
        }
        // `SELECT a AS b FROM t ORDER BY t.b` orders by the table's column, as MySQL's does.
        if let Err(e) = &planned {
            let message = e.to_string();
            if message.contains("Schema contains qualified field name")
                && message.contains("would be ambiguous")
                && crate::result_names::unshadow_order_columns(&mut stmt)
            {
                planned = plan_statement(stmt.clone()).await?;
            }
        }
        let plan = match planned {
            // MySQL allows result columns of the same name (`SELECT id, id`, or `a / b` beside
            // `a DIV b`, which DataFusion names alike, or `l.k` beside a USING join's merged
            // `k`); DataFusion needs them distinct. The
            // client sees the names taken above, so the select lists get unique aliases.
            Err(e) if crate::result_names::names_collide(&e.to_string()) => {
                // A wildcard's columns take no aliases: wildcards become their columns.
                crate::wildcard_columns::spell_out(&mut stmt, &state, &shown).await;
                // Past a wildcard the rewrites spelled out, the items are named as spelled.
                items = crate::result_names::past_first_wildcard(items, written_item_names(&stmt));
                crate::result_names::alias_select_items(&mut stmt);
                match plan_statement(stmt.clone()).await? {
                    Err(e)
                        if crate::result_names::names_collide(&e.to_string())
                            && crate::result_names::alias_every_item(&mut stmt) =>
                    {
                        plan_statement(stmt).await?
                    }
                    planned => planned,
                }
            }
            planned => planned,
        }
        .map_err(|e| ddl::no_database_hint(&self.services, from_df(e)))
        .map_err(|e| crate::procedures::unknown_function_error(session, e))?;
        match check_target {
            true => session.access().check_plan(&plan)?,
            false => session.access().check_plan_reads(&plan)?,
        }
        let is_insert = matches!(&plan, LogicalPlan::Dml(_));
        // FOUND_ROWS() counts past the LIMIT after SQL_CALC_FOUND_ROWS (or a UNION), and the
        // rows an OFFSET skipped.
        let counting = found_rows::Counting::of(found_rule, &plan)?;
        // The sink fits number values to their columns as MySQL does (outside strict mode
        // others too, and those that do not fit with a warning instead of an error).
        let lenient = is_insert
            .then(|| Arc::new(crate::lenient_insert::insert_store(session, &plan, ignore)));
        let plan = match &lenient {
            Some(store) => crate::lenient_insert::hand_values_unconverted(
                plan,
                !store.is_strict(),
                state.config_options(),
            )
            .map_err(from_df)?,
            None => plan,
        };
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
        account.set_memory_limit(session.exec_mem_limit());
        let group = account.group();
        // A statement run inside another (a stored function's body) runs in the slot the
        // outer statement holds: admitting it again would wait on itself.
        let permit = match account.holds_slot() {
            true => None,
            false => Some(account.hold_slot(group.admit().await?)),
        };
        if is_insert {
            session.info.generated_ids.reset();
        }
        state.config_mut().set_extension(account.clone());
        if let Some(lenient) = &lenient {
            state.config_mut().set_extension(lenient.clone());
        }
        // On a cluster the group and the query's limits go with every fragment, so they apply
        // on each backend too.
        let cluster_query = match &self.services.cluster {
            Some(cluster) => {
                let tag = basalt_dist::WorkloadTag::for_query(&account);
                tag.attach(state.config_mut())?;
                Some((cluster.clone(), tag.query))
            }
            None => None,
        };
        // On a cluster the inputs of stored-function calls are collected on the frontend,
        // where the calls run.
        let plan = match &cluster_query {
            Some(_) => {
                let task =
                    Arc::new(TaskContext::from(&state).with_runtime(group.query_runtime(&account)));
                crate::procedures::run_call_inputs(&state, &task, plan).await?
            }
            None => plan,
        };
        // On a cluster a query (not an INSERT or EXPLAIN) that fails before its first rows
        // because a backend stopped answering is planned and run once more without it.
        let failover = match (&self.services.cluster, is_insert || explain) {
            (Some(cluster), false) => Some((cluster.clone(), LiveAtStart::now(cluster))),
            _ => None,
        };
        let mut retried = false;
        let (physical, task, started) = loop {
            let physical = {
                let (state, plan, budget) = (state.clone(), plan.clone(), budget.clone());
                crate::planning_lane::plan(expressions, budget, async move {
                    state.create_physical_plan(&plan).await
                })
                .await?
            }
            .map_err(from_df);
            // A scan with no live replica to read: a backend marked dead because it was too
            // busy to answer a probe may answer now or within a few seconds; plan once more if
            // one does.
            let physical = match (physical, &failover) {
                (Err(BasaltError::BackendUnavailable(why)), Some((cluster, _))) if !retried => {
                    if cluster.await_revival(REVIVAL_WAIT).await {
                        tracing::warn!("planning the query again: {why}");
                        retried = true;
                        continue;
                    }
                    return Err(BasaltError::BackendUnavailable(why));
                }
                (physical, _) => physical?,
            };
            let physical = basalt_workload::account_plan(physical, &account).map_err(from_df)?;
            let task =
                Arc::new(TaskContext::from(&state).with_runtime(group.query_runtime(&account)));
            let Some((cluster, live)) = &failover else {
                break (physical, task, None);
            };
            let stream = physical_plan::execute_stream(physical.clone(), task.clone());
            let first = match stream {
                Ok(stream) => backend_failover::first_rows(stream).await,
                Err(e) => Err(e),
            };
            match first {
                Ok(stream) => break (physical, task, Some(stream)),
                Err(e) => match backend_failover::after_failure(cluster, live, e, retried).await {
                    AfterFailure::RunAgain(why) => {
                        tracing::warn!("running the query again: {why}");
                        retried = true;
                    }
                    AfterFailure::Fail(e) => return Err(e),
                },
            }
        };
        match counting {
            Some(Counting::Total(total)) => {
                let total = count_rows(state.clone(), total, account.clone(), task.clone());
                session.info.found_rows.set_total(total.await?);
            }
            Some(Counting::Offset { skip, skipped }) => {
                let skipped = count_rows(state.clone(), skipped, account.clone(), task.clone());
                let skipped = Box::pin(async move { skipped.await.unwrap_or(skip) });
                session.info.found_rows.set_offset(skip, skipped);
            }
            None => {}
        }
        let mut profile = session.profile_enabled().then(|| {
            let recorder = crate::profile::ProfileRecorder::new(
                self.services.profiles.clone(),
                physical.clone(),
                account.clone(),
                session.user(),
                session.info.database(),
                session.process.activity().sql.unwrap_or_default(),
            );
            match cluster_query {
                Some((cluster, query)) => recorder.on_cluster(cluster, query),
                None => recorder,
            }
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
            if let Some(lenient) = &lenient {
                crate::lenient_insert::report(session, lenient);
            }
            let generated = session.info.generated_ids.first();
            if generated != 0 {
                session.set_last_insert_id(generated);
            }
            if inserts_selected {
                session.info.found_rows.set_selected(count);
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
            let mut rows: Vec<(&str, String)> = session
                .scan_reports
                .take()
                .into_iter()
                .map(|r| ("basalt_scan", r))
                .collect();
            // On a cluster: the stages, their tasks and the backend of each tablet scan.
            if let (Some(_), LogicalPlan::Explain(e)) = (&self.services.cluster, &plan) {
                let distributed = state.create_physical_plan(&e.plan).await.map_err(from_df)?;
                session.scan_reports.take();
                let drawn = basalt_dist::display_distributed(distributed.as_ref());
                rows.push(("distributed_plan", drawn));
            }
            return Ok(with_scan_reports(batches, rows));
        }
        let stream = match started {
            Some(stream) => stream,
            None => physical_plan::execute_stream(physical, task).map_err(from_df)?,
        };
        let named_by_plan = column_names.is_none();
        let schema = renamed_schema(stream.schema(), column_names, &items, &shown);
        let (database, catalog) = (session.database(), self.services.catalog.as_ref());
        let schema =
            crate::column_origins::mark(schema, &plan, database.as_deref(), catalog, named_by_plan);
        let out_schema = schema.clone();
        // A failure after rows were sent names the backends that stopped answering.
        let stream = stream.then(move |r| {
            let failover = failover.clone();
            async move {
                match (r, failover) {
                    (Err(e), Some((cluster, live))) => {
                        Err(backend_failover::explain_failure(&cluster, &live, from_df(e)).await)
                    }
                    (r, _) => r.map_err(from_df),
                }
            }
        });
        let stream = stream.map(move |r| {
            let _slot = &permit;
            if let (Some(profile), Err(e)) = (profile.as_mut(), &r) {
                profile.failed(&e.to_string());
            }
            let batch = r?;
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

/// The rows `plan` (a count) counts, run in the query's account and task context.
async fn count_rows(
    state: datafusion::execution::SessionState,
    plan: LogicalPlan,
    account: Arc<basalt_workload::QueryAccount>,
    task: Arc<TaskContext>,
) -> Result<u64> {
    let physical = state
        .create_physical_plan(&plan)
        .await
        .and_then(|p| basalt_workload::account_plan(p, &account))
        .map_err(from_df)?;
    let batches = physical_plan::collect(physical, task)
        .await
        .map_err(from_df)?;
    Ok(found_rows::counted(&batches))
}

/// MySQL names an unaliased result column by the expression's text (`SELECT 1+1` gives a
/// column named `1+1`); DataFusion uses its own rendering. For a plain SELECT without
/// wildcards (or a UNION, named by its first SELECT), the names MySQL would give.
pub(crate) fn mysql_column_names(stmt: &ast::Statement) -> Option<Vec<String>> {
    written_item_names(stmt).into_iter().collect()
}

/// The name MySQL gives each item of the select list that names a query's columns, by
/// position; `None` for a wildcard (its columns are named by the plan). Empty for a statement
/// that is not a query.
pub(crate) fn written_item_names(stmt: &ast::Statement) -> Vec<Option<String>> {
    let ast::Statement::Query(q) = stmt else {
        return vec![];
    };
    let Some(select) = first_select(q.body.as_ref()) else {
        return vec![];
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
            // A string literal is named by its text, as MySQL names it (`SELECT 'a'` is `a`).
            ast::SelectItem::UnnamedExpr(SqlExpr::Value(v)) => match &v.value {
                ast::Value::SingleQuotedString(s) | ast::Value::DoubleQuotedString(s) => {
                    Some(s.clone())
                }
                other => Some(other.to_string()),
            },
            ast::SelectItem::UnnamedExpr(e) => Some(e.to_string()),
            ast::SelectItem::ExprWithAlias { alias, .. } => Some(alias.value.clone()),
            _ => None,
        })
        .collect()
}

/// The SELECT that names a query's columns: the query's own, or a set operation's first.
fn first_select(body: &ast::SetExpr) -> Option<&ast::Select> {
    match body {
        ast::SetExpr::Select(select) => Some(select),
        ast::SetExpr::SetOperation { left, .. } => first_select(left),
        ast::SetExpr::Query(q) => first_select(q.body.as_ref()),
        _ => None,
    }
}

/// The result's columns named as MySQL names them: `names` (the select items as written) when
/// known, else (a select list with wildcards) the plan's names, with the items before the first
/// and after the last wildcard, and the internal aliases of duplicate names, named by their
/// `items` as written, and table columns spelled as created (`shown`).
pub(super) fn renamed_schema(
    schema: SchemaRef,
    names: Option<Vec<String>>,
    items: &[Option<String>],
    shown: &std::collections::HashMap<String, String>,
) -> SchemaRef {
    let names = names.or_else(|| {
        let mut renamed = false;
        let count = schema.fields().len();
        let spelled = schema
            .fields()
            .iter()
            .enumerate()
            .map(|(at, f)| {
                let written = crate::result_names::item_name_beside_wildcards(items, at, count)
                    .or_else(|| {
                        let position = crate::result_names::internal_alias_position(f.name())?;
                        items.get(position).cloned().flatten()
                    })
                    .or_else(|| shown.get(f.name()).cloned());
                renamed |= written.is_some();
                written.unwrap_or_else(|| f.name().clone())
            })
            .collect();
        renamed.then_some(spelled)
    });
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

/// Appends Basalt's rows (pruning lines, a cluster's stages) to DataFusion's EXPLAIN output.
fn with_scan_reports(batches: Vec<RecordBatch>, reports: Vec<(&str, String)>) -> Output {
    let schema = match batches.first() {
        Some(b) => b.schema(),
        None => return Output::ok(),
    };
    let mut out: Vec<RecordBatch> = batches.into_iter().map(without_checkpoints).collect();
    if !reports.is_empty() && schema.fields().len() == 2 {
        let (plan_type, plan): (Vec<&str>, Vec<String>) = reports.into_iter().unzip();
        let plan_type = StringArray::from(plan_type);
        let plan = StringArray::from(plan);
        if let Ok(b) =
            RecordBatch::try_new(schema.clone(), vec![Arc::new(plan_type), Arc::new(plan)])
        {
            out.push(b);
        }
    }
    Output::batches(schema, out)
}

/// EXPLAIN VERBOSE lists the plan after every rule; the planning checkpoints between the rules
/// change nothing and are left out.
fn without_checkpoints(batch: RecordBatch) -> RecordBatch {
    let Some(steps) = batch.column(0).as_any().downcast_ref::<StringArray>() else {
        return batch;
    };
    let checkpoint = crate::planning_budget::CHECKPOINT_NAME;
    let keep: datafusion::arrow::array::BooleanArray = steps
        .iter()
        .map(|step| Some(!step.is_some_and(|s| s.contains(checkpoint))))
        .collect();
    datafusion::arrow::compute::filter_record_batch(&batch, &keep).unwrap_or(batch)
}
