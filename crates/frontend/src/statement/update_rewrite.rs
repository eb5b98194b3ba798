//! `UPDATE t SET .. WHERE ..` on Duplicate-key tables (what a MySQL `CREATE TABLE` without keys
//! makes). Their rows have no key a new version could replace them by, so each tablet holding
//! a matching row is rewritten with those rows changed in place, and all rewritten tablets are
//! published at once ([`basalt_storage::StorageEngine::update_table`]): all rows change or
//! none, durably, and readers see them change together.
//!
//! The statement is planned as `INSERT INTO t (all columns) SELECT <each column's new value>
//! FROM t WHERE ..`, so the new values are converted to their columns exactly as an INSERT
//! converts them, strictly or not as `sql_mode` says (and the statement needs what that INSERT
//! needs). Its WHERE and its chain of
//! projections are then evaluated over each tablet's rows: a row matches when the WHERE is
//! true, and only matching rows are given new values (an expression that would fail on a row
//! the WHERE leaves out does not fail the statement). Any column may be assigned: a Duplicate
//! key only sorts rows, and a row whose partition or distribution column changes moves to
//! its new tablet. Uncorrelated subqueries (in the WHERE or a new value) run once, before the
//! rewrite, and their results take their place. A correlated subquery in the WHERE picks
//! the rows `SELECT * FROM t WHERE ..` gives, by value; one in a new value, and joins, are
//! refused.
//! `LIMIT n` updates the first n matching rows found (MySQL leaves which ones open without
//! ORDER BY); with ORDER BY, the rows the ordered query picks (`picked_rows`: by their
//! values, the rows having no identity). ORDER BY without LIMIT changes nothing here: every
//! matching row is updated, and no row's update can fail another's. Aggregate-key tables are
//! refused: their rows are aggregates of loads, which MySQL has no UPDATE for.
//!
//! The affected-row count is MySQL's: the rows whose values changed; the info line gives the
//! rows matched too.

use crate::engine::QueryEngine;
use crate::output::Output;
use crate::session::Session;
use crate::statement::dml::{quoted, row_query};
use crate::statement::picked_rows::Picking;
use basalt_catalog::{KeysModel, TableMeta};
use basalt_common::df_error::from_df;
use basalt_common::{BasaltError, Result};
use basalt_sql::ast::helpers::attached_token::AttachedToken;
use basalt_sql::ast::{self, Expr as SqlExpr, ObjectName, SelectItem};
use basalt_storage::UpdatedRows;
use chrono::Utc;
use datafusion::arrow::array::{Array, ArrayRef, BooleanArray, RecordBatch};
use datafusion::arrow::compute::{
    cast, cast_with_options, filter_record_batch, interleave, CastOptions,
};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::{DFSchema, ScalarValue};
use datafusion::dataframe::DataFrame;
use datafusion::execution::SessionState;
use datafusion::logical_expr::expr::InList;
use datafusion::logical_expr::simplify::SimplifyContext;
use datafusion::logical_expr::{Expr, ExprSchemable, LogicalPlan};
use datafusion::optimizer::simplify_expressions::ExprSimplifier;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::sql::parser::Statement as DfStatement;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Attempts before giving up on a table that loads or compactions keep changing.
const ATTEMPTS: usize = 3;

/// A physical expression and the schema of the rows it reads.
type Compiled = (Vec<Arc<dyn PhysicalExpr>>, SchemaRef);

/// How a tablet's rows become their updated form.
struct RowChange {
    /// The WHERE, over the table's columns as scans give them; `None` matches every row.
    predicate: Option<(Arc<dyn PhysicalExpr>, SchemaRef)>,
    /// The WHERE has a correlated subquery: the rows to change are picked by value from
    /// what `SELECT * .. WHERE ..` gives (`predicate` is then `None`).
    picks_where: bool,
    /// Projections from the matching rows to each column's new value, innermost first.
    projections: Vec<Compiled>,
    /// Which columns the statement assigns.
    assigned: Vec<bool>,
    /// The table, whose column types the new values are fitted to as an INSERT fits them.
    table: Arc<TableMeta>,
    /// How they are fitted (strictly or not, as the session's INSERTs) and their warnings.
    store: Arc<basalt_query::StoreWarnings>,
}

impl QueryEngine {
    /// UPDATE on a Duplicate-key table (refused with a reason on an Aggregate-key one).
    pub(super) async fn update_by_rewrite(
        &self,
        session: &Session,
        update: &ast::Update,
        table: Arc<TableMeta>,
    ) -> Result<Output> {
        let assigned = check_update(&table, update)?;
        let limit = row_limit(update)?;
        let change = Arc::new(self.plan_change(session, update, &table, assigned).await?);
        let store = change.store.clone();
        let routing = routing_columns(&table);
        let routes_change = change
            .assigned
            .iter()
            .enumerate()
            .any(|(i, a)| *a && routing.contains(&i));
        // Running loads finish first; loads that start meanwhile wait for the UPDATE.
        // Inside a transaction: staged, through its storage.
        let storage = crate::transaction::storage(&self.services, session);
        let _gate = storage.rewrite_gate(table.id).write_owned().await;
        // ORDER BY .. LIMIT: the rows to update, picked with loads held back by the gate.
        let picked = match limit.is_some() && !update.order_by.is_empty() || change.picks_where {
            true => {
                let query = row_query(
                    all_columns(&table),
                    update.table.clone(),
                    update.selection.clone(),
                    &update.order_by,
                    update.limit.clone(),
                );
                Some(Arc::new(self.pick_rows(session, query).await?))
            }
            false => None,
        };
        let mut attempt = 0;
        loop {
            attempt += 1;
            let current = storage.catalog().table_by_id(table.id).ok_or_else(|| {
                BasaltError::UnknownTable(format!("{}.{}", table.database, table.name))
            })?;
            if current.schema_version != table.schema_version {
                return Err(BasaltError::ConcurrentDdl(format!(
                    "table {} was altered during the UPDATE; nothing was updated",
                    table.name
                )));
            }
            let storage = storage.clone();
            let change = change.clone();
            let picked = picked.clone();
            let done = tokio::task::spawn_blocking(move || {
                // The rows LIMIT still lets match, counted afresh on each attempt.
                let left = limit.map(AtomicU64::new);
                let picking = picked.as_ref().map(|p| p.picking());
                let update = |rows: RecordBatch| match &picking {
                    Some(picking) => change.apply(rows, Limit::Picked(picking)),
                    None => change.apply(rows, left.as_ref().map_or(Limit::None, Limit::First)),
                };
                storage.update_table(&current, routes_change, &update)
            })
            .await
            .map_err(|e| BasaltError::Internal(format!("UPDATE task failed: {e}")))?;
            match done {
                Err(BasaltError::ConcurrentDdl(_)) if attempt < ATTEMPTS => {
                    store.take();
                    continue;
                }
                Err(e) => return Err(e),
                Ok(stats) => {
                    let warnings = crate::lenient_insert::report(session, &store);
                    return Ok(Output::Ok {
                        affected_rows: stats.changed,
                        last_insert_id: 0,
                        info: format!(
                            "Rows matched: {}  Changed: {}  Warnings: {warnings}",
                            stats.matched, stats.changed
                        ),
                    });
                }
            }
        }
    }

    /// `stmt` through Basalt's rewrites, planned by DataFusion and checked against the
    /// session's privileges: the plan of a statement a rewritten UPDATE or DELETE runs.
    pub(super) async fn plan_checked(
        &self,
        session: &Session,
        mut stmt: ast::Statement,
    ) -> Result<(
        datafusion::execution::SessionState,
        datafusion::logical_expr::LogicalPlan,
    )> {
        crate::mysql_compat::rewrite(&mut stmt, &session.sql_settings());
        self.rewrite_function_calls(session, &mut stmt)?;
        session.sync_planner_options();
        let state = session.ctx.state();
        let logical = state
            .statement_to_plan(DfStatement::Statement(Box::new(stmt)))
            .await
            .map_err(from_df)?;
        session.access().check_plan(&logical)?;
        Ok((state, logical))
    }

    /// Plans the statement's new values and WHERE (see the module doc).
    async fn plan_change(
        &self,
        session: &Session,
        update: &ast::Update,
        table: &TableMeta,
        values: Vec<Option<SqlExpr>>,
    ) -> Result<RowChange> {
        let assigned = values.iter().map(Option::is_some).collect();
        let projection = table
            .columns
            .iter()
            .zip(values)
            .map(|(column, value)| match value {
                Some(expr) => SelectItem::ExprWithAlias {
                    expr: SqlExpr::Nested(Box::new(expr)),
                    alias: quoted(&column.name),
                },
                None => SelectItem::UnnamedExpr(SqlExpr::Identifier(quoted(&column.name))),
            })
            .collect();
        let rows = row_query(
            projection,
            update.table.clone(),
            update.selection.clone(),
            &[],
            None,
        );
        let stmt = ast::Statement::Insert(insert_into(table, rows));
        let (state, logical) = self.plan_checked(session, stmt).await?;
        // The new values are fitted to their columns as an INSERT's are (see `lenient_insert`).
        let store = crate::lenient_insert::store_warnings(session).with_implicit_defaults();
        let logical = crate::lenient_insert::hand_values_unconverted(
            logical,
            !store.is_strict(),
            state.config_options(),
        )
        .map_err(from_df)?;
        let analyzed = state
            .analyzer()
            .execute_and_check(logical, state.config_options(), |_, _| {})
            .map_err(from_df)?;
        let shape = PlanShape::of(&analyzed)?;
        // NOW() and its kin read the statement's one time, folded in as the optimizer would.
        let started =
            crate::session_clock::fixed(&session.info.vars.read()).unwrap_or_else(Utc::now);
        let simplify = |expr: Expr, schema: &DFSchema| {
            let context = SimplifyContext::builder()
                .with_schema(Arc::new(schema.clone()))
                .with_query_execution_start_time(Some(started))
                .with_config_options(state.config_options().clone())
                .build();
            ExprSimplifier::new(context).simplify(expr).map_err(from_df)
        };
        let mut picks_where = false;
        let predicate = match shape.predicate {
            // A correlated subquery: the rows the WHERE holds for are found by the query
            // (which decorrelates it) and picked by their values.
            Some((expr, _)) if super::delete_rewrite::has_correlated_subquery(&expr)? => {
                picks_where = true;
                None
            }
            Some((expr, schema)) => {
                let expr = simplify(
                    inline_subqueries(&state, expr, &schema, UPDATE_ON_DUPLICATE).await?,
                    &schema,
                )?;
                let physical = state.create_physical_expr(expr, &schema).map_err(from_df)?;
                Some((physical, Arc::new(schema.as_arrow().clone())))
            }
            None => None,
        };
        let mut projections = Vec::new();
        for (exprs, schema) in shape.projections {
            let mut physical = Vec::with_capacity(exprs.len());
            for expr in exprs {
                let expr = simplify(
                    inline_subqueries(&state, expr, &schema, UPDATE_ON_DUPLICATE).await?,
                    &schema,
                )?;
                physical.push(state.create_physical_expr(expr, &schema).map_err(from_df)?);
            }
            projections.push((physical, Arc::new(schema.as_arrow().clone())));
        }
        Ok(RowChange {
            predicate,
            picks_where,
            projections,
            assigned,
            table: Arc::new(table.clone()),
            store: Arc::new(store),
        })
    }
}

/// Each column's new value (`None`: not assigned), checking what this path supports.
fn check_update(table: &TableMeta, update: &ast::Update) -> Result<Vec<Option<SqlExpr>>> {
    if table.keys_model == KeysModel::Aggregate {
        return Err(BasaltError::NotSupported(format!(
            "UPDATE on {}.{}, an AGGREGATE KEY table: its rows are aggregates of their loads (use a UNIQUE or DUPLICATE KEY table, or load the difference)",
            table.database, table.name
        )));
    }
    let mut values = super::update_assignments::assigned_values(table, update)?;
    super::on_update_timestamp::assign_touched(table, &mut values, |i| {
        SqlExpr::Identifier(quoted(&table.columns[i].name))
    });
    Ok(values)
}

/// The most rows `LIMIT n` lets the statement match (`None` without LIMIT).
fn row_limit(update: &ast::Update) -> Result<Option<u64>> {
    let Some(limit) = &update.limit else {
        return Ok(None);
    };
    match limit {
        SqlExpr::Value(v) => match &v.value {
            ast::Value::Number(n, _) => n.parse::<u64>().map(Some).map_err(|_| {
                BasaltError::NotSupported(format!("UPDATE .. LIMIT {n} (not a row count)"))
            }),
            _ => Err(BasaltError::NotSupported(format!(
                "UPDATE .. LIMIT {limit} (not a row count)"
            ))),
        },
        _ => Err(BasaltError::NotSupported(format!(
            "UPDATE .. LIMIT {limit} (not a row count)"
        ))),
    }
}

/// Every column of `table`, in order, as a select list.
fn all_columns(table: &TableMeta) -> Vec<SelectItem> {
    table
        .columns
        .iter()
        .map(|c| SelectItem::UnnamedExpr(SqlExpr::Identifier(quoted(&c.name))))
        .collect()
}

/// Which of a tablet's matching rows a LIMIT lets the statement update.
enum Limit<'a> {
    /// All of them.
    None,
    /// The first ones found, while rows are left.
    First(&'a AtomicU64),
    /// Those ORDER BY .. LIMIT picked.
    Picked(&'a Picking<'a>),
}

/// The columns that decide a row's tablet: the partition column and the distribution columns.
fn routing_columns(table: &TableMeta) -> Vec<usize> {
    table
        .distribution
        .columns
        .iter()
        .copied()
        .chain(table.partition_column)
        .collect()
}

/// `INSERT INTO db.t (all columns) <rows>`: the statement an UPDATE's rewrite loads (here and
/// for Unique tables in `dml.rs`).
pub(super) fn insert_into(table: &TableMeta, rows: ast::Query) -> ast::Insert {
    ast::Insert {
        insert_token: AttachedToken::empty(),
        optimizer_hints: vec![],
        or: None,
        ignore: false,
        into: true,
        table: ast::TableObject::TableName(ObjectName::from(vec![
            quoted(&table.database),
            quoted(&table.name),
        ])),
        table_alias: None,
        columns: table
            .columns
            .iter()
            .map(|c| ObjectName::from(vec![quoted(&c.name)]))
            .collect(),
        overwrite: false,
        source: Some(Box::new(rows)),
        assignments: vec![],
        partitioned: None,
        after_columns: vec![],
        has_table_keyword: false,
        on: None,
        returning: None,
        output: None,
        replace_into: false,
        priority: None,
        insert_alias: None,
        settings: None,
        format_clause: None,
        multi_table_insert_type: None,
        multi_table_into_clauses: vec![],
        multi_table_when_clauses: vec![],
        multi_table_else_clause: None,
    }
}

/// The parts of an analyzed `INSERT INTO t SELECT .. FROM t WHERE ..`: the WHERE over the
/// scanned rows and the projections above it, innermost first, each with the schema it reads.
struct PlanShape {
    predicate: Option<(Expr, datafusion::common::DFSchema)>,
    projections: Vec<(Vec<Expr>, datafusion::common::DFSchema)>,
}

impl PlanShape {
    fn of(plan: &LogicalPlan) -> Result<PlanShape> {
        let refused = || {
            BasaltError::NotSupported(
                "this UPDATE on a DUPLICATE KEY table (it reads the one table it changes; joins are not allowed)"
                    .into(),
            )
        };
        let LogicalPlan::Dml(dml) = plan else {
            return Err(BasaltError::Internal(
                "UPDATE was not planned as a write".into(),
            ));
        };
        let mut projections = Vec::new();
        let mut node = dml.input.as_ref();
        while let LogicalPlan::Projection(p) = node {
            let exprs = p.expr.iter().map(|e| e.clone().unalias()).collect();
            projections.push((exprs, p.input.schema().as_ref().clone()));
            node = p.input.as_ref();
        }
        projections.reverse();
        let reads_table = |p: &LogicalPlan| match p {
            LogicalPlan::TableScan(_) => true,
            LogicalPlan::SubqueryAlias(a) => matches!(a.input.as_ref(), LogicalPlan::TableScan(_)),
            _ => false,
        };
        let predicate = match node {
            LogicalPlan::Filter(f) if reads_table(&f.input) => {
                Some((f.predicate.clone(), f.input.schema().as_ref().clone()))
            }
            n if reads_table(n) => None,
            _ => return Err(refused()),
        };
        if projections.is_empty() {
            return Err(BasaltError::Internal("UPDATE has no new values".into()));
        }
        Ok(PlanShape {
            predicate,
            projections,
        })
    }
}

impl RowChange {
    /// A tablet's rows (the table's columns as stored) with the matching ones updated, as
    /// many as `limit` lets match.
    fn apply(&self, rows: RecordBatch, limit: Limit<'_>) -> Result<Option<UpdatedRows>> {
        let scan_schema = match (&self.predicate, self.projections.first()) {
            (Some((_, schema)), _) | (None, Some((_, schema))) => schema.clone(),
            (None, None) => return Err(BasaltError::Internal("UPDATE has no new values".into())),
        };
        let probe = as_scanned(&rows, &scan_schema)?;
        let matched = match &self.predicate {
            Some((predicate, _)) => {
                let value = predicate
                    .evaluate(&probe)
                    .and_then(|v| v.into_array(probe.num_rows()))
                    .map_err(from_df)?;
                let value = value
                    .as_any()
                    .downcast_ref::<BooleanArray>()
                    .ok_or_else(|| BasaltError::Internal("UPDATE's WHERE is not boolean".into()))?
                    .clone();
                // NULL does not match.
                (0..value.len())
                    .map(|i| Some(value.is_valid(i) && value.value(i)))
                    .collect::<BooleanArray>()
            }
            None => BooleanArray::from(vec![true; rows.num_rows()]),
        };
        let matched = match limit {
            Limit::None => matched,
            Limit::First(left) => first_matches(&matched, left),
            Limit::Picked(picking) => picking.take(&probe, &matched)?,
        };
        if matched.true_count() == 0 {
            return Ok(None);
        }
        let mut values = filter_record_batch(&probe, &matched).map_err(internal)?;
        for (exprs, schema) in &self.projections {
            let input = as_scanned(&values, schema)?;
            let columns = exprs
                .iter()
                .map(|e| {
                    e.evaluate(&input)
                        .and_then(|v| v.into_array(input.num_rows()))
                })
                .collect::<datafusion::common::Result<Vec<ArrayRef>>>()
                .map_err(from_df)?;
            values = batch_of(columns)?;
        }
        let values = basalt_query::fit_batch(&self.table, values, &self.store)?;
        if values.num_columns() != rows.num_columns() {
            return Err(BasaltError::Internal(
                "UPDATE's new rows have another shape".into(),
            ));
        }
        // Each row from the old rows, or the next new one where it matched.
        let mut next = 0usize;
        let picks: Vec<(usize, usize)> = (0..rows.num_rows())
            .map(|i| {
                if matched.value(i) {
                    next += 1;
                    (1, next - 1)
                } else {
                    (0, i)
                }
            })
            .collect();
        let columns = rows
            .columns()
            .iter()
            .zip(values.columns())
            .zip(&self.assigned)
            .map(|((old, new), assigned)| {
                if !assigned {
                    return Ok(old.clone());
                }
                let new = if new.data_type() == old.data_type() {
                    new.clone()
                } else {
                    let strict = CastOptions {
                        safe: false,
                        ..Default::default()
                    };
                    cast_with_options(new, old.data_type(), &strict).map_err(internal)?
                };
                interleave(&[old.as_ref(), new.as_ref()], &picks).map_err(internal)
            })
            .collect::<Result<Vec<_>>>()?;
        // NOT NULL is checked by storage, with the column's name in the error.
        let fields: Vec<_> = rows
            .schema()
            .fields()
            .iter()
            .map(|f| f.as_ref().clone().with_nullable(true))
            .collect();
        let schema = Arc::new(datafusion::arrow::datatypes::Schema::new(fields));
        Ok(Some(UpdatedRows {
            rows: RecordBatch::try_new(schema, columns).map_err(internal)?,
            matched,
        }))
    }
}

/// What a correlated subquery in an UPDATE of a Duplicate table is refused in.
const UPDATE_ON_DUPLICATE: &str = "an UPDATE on a DUPLICATE KEY table";

/// `expr` with each uncorrelated subquery replaced by its result, run once before the rows are
/// rewritten: a scalar subquery by its value (NULL without rows, error 1242 with more than
/// one), `IN (SELECT ..)` by the list of its values, EXISTS by whether it has rows. A
/// correlated subquery is refused, naming `statement` (the UPDATE or DELETE and its table).
pub(super) async fn inline_subqueries(
    state: &SessionState,
    expr: Expr,
    schema: &DFSchema,
    statement: &str,
) -> Result<Expr> {
    let mut found: Vec<Expr> = Vec::new();
    expr.apply(|e| {
        Ok(match e {
            Expr::ScalarSubquery(_) | Expr::InSubquery(_) | Expr::Exists(_) => {
                found.push(e.clone());
                TreeNodeRecursion::Jump
            }
            _ => TreeNodeRecursion::Continue,
        })
    })
    .map_err(from_df)?;
    if found.is_empty() {
        return Ok(expr);
    }
    let mut results = Vec::with_capacity(found.len());
    for subquery_expr in &found {
        let subquery = match subquery_expr {
            Expr::ScalarSubquery(s) => s,
            Expr::InSubquery(i) => &i.subquery,
            Expr::Exists(e) => &e.subquery,
            _ => return Err(internal("not a subquery")),
        };
        if !subquery.outer_ref_columns.is_empty() {
            return Err(BasaltError::NotSupported(format!(
                "a correlated subquery in {statement}"
            )));
        }
        let plan = subquery.subquery.as_ref().clone();
        let batches = DataFrame::new(state.clone(), plan)
            .collect()
            .await
            .map_err(from_df)?;
        let values = batches
            .iter()
            .filter(|b| b.num_columns() > 0)
            .flat_map(|b| {
                (0..b.num_rows()).map(move |row| ScalarValue::try_from_array(b.column(0), row))
            })
            .collect::<datafusion::common::Result<Vec<_>>>()
            .map_err(from_df)?;
        let replacement = match subquery_expr {
            Expr::ScalarSubquery(s) => match values.as_slice() {
                [] => {
                    let ty = s.subquery.schema().field(0).data_type().clone();
                    Expr::Literal(ScalarValue::try_from(&ty).map_err(from_df)?, None)
                }
                [one] => Expr::Literal(one.clone(), None),
                _ => return Err(BasaltError::SubqueryReturnsManyRows),
            },
            Expr::InSubquery(i) if values.is_empty() => {
                Expr::Literal(ScalarValue::Boolean(Some(i.negated)), None)
            }
            Expr::InSubquery(i) => {
                let ty = i.expr.get_type(schema).map_err(from_df)?;
                let list = values
                    .into_iter()
                    .map(|v| v.cast_to(&ty).map(|v| Expr::Literal(v, None)))
                    .collect::<datafusion::common::Result<Vec<_>>>()
                    .map_err(from_df)?;
                Expr::InList(InList::new(i.expr.clone(), list, i.negated))
            }
            Expr::Exists(e) => Expr::Literal(
                ScalarValue::Boolean(Some(values.is_empty() == e.negated)),
                None,
            ),
            _ => return Err(internal("not a subquery")),
        };
        results.push(replacement);
    }
    expr.transform(|e| {
        Ok(match found.iter().position(|f| f == &e) {
            Some(i) => Transformed::yes(results[i].clone()),
            None => Transformed::no(e),
        })
    })
    .map(|t| t.data)
    .map_err(from_df)
}

/// `matched` with only its first `left` true values kept; `left` goes down by as many.
fn first_matches(matched: &BooleanArray, left: &AtomicU64) -> BooleanArray {
    let mut allowed = left.load(Ordering::Relaxed);
    let kept = matched
        .iter()
        .map(|m| {
            let keep = m == Some(true) && allowed > 0;
            allowed -= u64::from(keep);
            Some(keep)
        })
        .collect();
    left.store(allowed, Ordering::Relaxed);
    kept
}

/// `rows` with each column in the type `schema` gives it (scans give strings as views).
fn as_scanned(rows: &RecordBatch, schema: &SchemaRef) -> Result<RecordBatch> {
    if schema.fields().len() != rows.num_columns() {
        return Err(BasaltError::Internal(
            "UPDATE's expressions read another shape of row".into(),
        ));
    }
    let columns = rows
        .columns()
        .iter()
        .zip(schema.fields())
        .map(|(c, f)| {
            if c.data_type() == f.data_type() {
                Ok(c.clone())
            } else {
                cast(c, f.data_type())
            }
        })
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(internal)?;
    let fields: Vec<_> = schema
        .fields()
        .iter()
        .map(|f| f.as_ref().clone().with_nullable(true))
        .collect();
    RecordBatch::try_new(
        Arc::new(datafusion::arrow::datatypes::Schema::new(fields)),
        columns,
    )
    .map_err(internal)
}

/// A batch of anonymous columns.
fn batch_of(columns: Vec<ArrayRef>) -> Result<RecordBatch> {
    let fields: Vec<_> = columns
        .iter()
        .enumerate()
        .map(|(i, c)| {
            datafusion::arrow::datatypes::Field::new(format!("c{i}"), c.data_type().clone(), true)
        })
        .collect();
    RecordBatch::try_new(
        Arc::new(datafusion::arrow::datatypes::Schema::new(fields)),
        columns,
    )
    .map_err(internal)
}

fn internal(e: impl std::fmt::Display) -> BasaltError {
    BasaltError::Internal(e.to_string())
}
