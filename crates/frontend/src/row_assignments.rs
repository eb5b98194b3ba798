//! MySQL's assignments to user variables inside a query: `SELECT @rn := @rn + 1, a FROM t
//! ORDER BY a`, `SELECT (@a := @b := 1.0)`, `SELECT @s := CONCAT(@s, b) ...`. MySQL evaluates
//! the select list one row at a time, in the order the rows are sent, left to right, so a
//! variable assigned by one row (or one item) is what the next reads.
//!
//! The query runs in DataFusion with each select item that reads or assigns a user variable
//! taken out: the parts of such an item that involve no user variable (columns, aggregates,
//! subqueries, functions of them) become hidden result columns, computed as usual. The rows
//! then come back in their output order and the items are evaluated here, row by row: each
//! assignment stores its value in the session as it is reached, and every expression over the
//! row's hidden values and the variables' current values is computed by a DataFusion
//! expression planned once per shape (and per the variables' current types).
//!
//! A derived table that assigns and reads no table (`CROSS JOIN (SELECT @rn := 0) r`, the
//! idiom that starts a row counter) is one row MySQL materializes before the query reads any
//! other: it is evaluated first ([`assigning_derived_tables`]), and the query then reads its
//! values as literals ([`fill_derived_tables`]). A derived table that assigns while reading
//! rows has no order of its own to assign them in: it is not supported.

use crate::session::Session;
use basalt_common::df_error::from_df;
use basalt_common::{BasaltError, Result};
use basalt_sql::ast::{
    self, visit_expressions, BinaryOperator, Expr, Ident, SelectItem, Value, VisitMut, VisitorMut,
};
use datafusion::arrow::array::{new_null_array, ArrayRef, RecordBatch};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::common::{DFSchema, ScalarValue};
use datafusion::logical_expr::simplify::SimplifyContext;
use datafusion::optimizer::simplify_expressions::ExprSimplifier;
use datafusion::physical_expr::PhysicalExpr;
use std::collections::HashMap;
use std::ops::ControlFlow;
use std::sync::Arc;

/// Names of the hidden result columns and of the variables' columns while an item is computed.
const VALUE_PREFIX: &str = "__basalt_row_value_";
const ITEM_PREFIX: &str = "__basalt_row_item_";
const VARIABLE_PREFIX: &str = "__basalt_row_variable_";

/// True when the query assigns a user variable anywhere (`@x := ..`).
pub(crate) fn has_assignment(query: &ast::Query) -> bool {
    visit_expressions(query, |e| {
        if is_assignment(e) {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    })
    .is_break()
}

fn is_assignment(e: &Expr) -> bool {
    matches!(
        e,
        Expr::BinaryOp {
            op: BinaryOperator::Assignment,
            ..
        }
    )
}

/// A user variable's name when `e` reads one (`@x`, not `@@x`).
fn user_variable(e: &Expr) -> Option<&str> {
    let name = match e {
        Expr::Identifier(i) if i.quote_style.is_none() => i.value.as_str(),
        _ => return None,
    };
    let rest = name.strip_prefix('@')?;
    (!rest.starts_with('@') && !rest.is_empty()).then_some(rest)
}

fn involves_variables(e: &Expr) -> bool {
    visit_expressions(e, |e| {
        if is_assignment(e) || user_variable(e).is_some() {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    })
    .is_break()
}

/// ORDER BY an item evaluated here (`SELECT @i := f1 AS j .. ORDER BY 1`, `ORDER BY j`) sorts
/// by the value it assigns (`f1`), which DataFusion computes; the item itself is a NULL
/// placeholder there (ordering by it left the rows unsorted, or found no column `j`). A
/// constant value orders nothing (the key is dropped). An item whose value reads a variable
/// (`@rn := @rn + 1`) is computed in output order, so ascending by it is that order (the key
/// reads the placeholder); descending would need the values before the rows exist: refused.
fn order_by_assigned_values(
    query: &mut ast::Query,
    items: &[Option<(Expr, String)>],
) -> Result<()> {
    let ast::SetExpr::Select(select) = query.body.as_ref() else {
        return Ok(());
    };
    // Positions count select items only while no wildcard (several columns) comes first.
    let positional = select
        .projection
        .iter()
        .take_while(|i| {
            matches!(
                i,
                SelectItem::UnnamedExpr(_) | SelectItem::ExprWithAlias { .. }
            )
        })
        .count();
    let Some(order_by) = query.order_by.as_mut() else {
        return Ok(());
    };
    let ast::OrderByKind::Expressions(order) = &mut order_by.kind else {
        return Ok(());
    };
    let mut kept = Vec::with_capacity(order.len());
    for mut key in order.drain(..) {
        let item = match &key.expr {
            Expr::Value(v) => match &v.value {
                Value::Number(n, _) => n
                    .parse::<usize>()
                    .ok()
                    .filter(|&n| n >= 1 && n <= positional)
                    .map(|n| n - 1),
                _ => None,
            },
            Expr::Identifier(name) => items.iter().position(|item| {
                item.as_ref()
                    .is_some_and(|(_, alias)| alias.eq_ignore_ascii_case(&name.value))
            }),
            _ => None,
        };
        let Some((i, Some((expr, _)))) = item.map(|i| (i, items.get(i).cloned().flatten())) else {
            kept.push(key);
            continue;
        };
        let mut value = &expr;
        while let Expr::BinaryOp {
            op: BinaryOperator::Assignment,
            right,
            ..
        } = value
        {
            value = right;
        }
        if involves_variables(value) {
            if key.options.asc == Some(false) {
                return Err(BasaltError::NotSupported(
                    "ORDER BY .. DESC of a select item whose value reads a user variable".into(),
                ));
            }
            key.expr = Expr::Identifier(Ident::new(format!("{ITEM_PREFIX}{i}")));
        } else if matches!(value, Expr::Value(_)) {
            continue;
        } else {
            key.expr = value.clone();
        }
        kept.push(key);
    }
    if kept.is_empty() {
        query.order_by = None;
    } else {
        *order = kept;
    }
    Ok(())
}

/// The derived tables of `query`'s FROM clause that assign user variables, left to right (the
/// order MySQL materializes them in), each a one-row SELECT without a table.
pub(crate) fn assigning_derived_tables(query: &mut ast::Query) -> Result<Vec<ast::Query>> {
    let mut found = Vec::new();
    each_assigning_derived(query, &mut |q| {
        found.push(q.clone());
        Ok(())
    })?;
    for q in &found {
        if !is_one_row(q) {
            return Err(BasaltError::NotSupported(
                "an assignment to a user variable in a derived table that reads rows".into(),
            ));
        }
    }
    Ok(found)
}

/// Puts the evaluated rows of [`assigning_derived_tables`] (in the same order) in their
/// place: each item that assigns or reads a variable becomes its value, under its name.
pub(crate) fn fill_derived_tables(query: &mut ast::Query, rows: &[RecordBatch]) -> Result<()> {
    let mut rows = rows.iter();
    each_assigning_derived(query, &mut |q| {
        let batch = rows.next().ok_or_else(|| {
            BasaltError::Internal("a derived table was not evaluated before its query".into())
        })?;
        let ast::SetExpr::Select(select) = q.body.as_mut() else {
            return Err(BasaltError::Internal(
                "a derived table is not a SELECT".into(),
            ));
        };
        if batch.num_rows() != 1 || batch.num_columns() != select.projection.len() {
            return Err(BasaltError::Internal(
                "a derived table's row does not match its select list".into(),
            ));
        }
        for (i, item) in select.projection.iter_mut().enumerate() {
            let assigning = match item {
                SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => {
                    involves_variables(e)
                }
                _ => false,
            };
            if !assigning {
                continue;
            }
            let value = ScalarValue::try_from_array(batch.column(i), 0).map_err(from_df)?;
            let digits = basalt_common::fraction_digits(batch.schema().field(i));
            let value = crate::user_variables::from_scalar(&value, digits).map_err(from_df)?;
            *item = SelectItem::ExprWithAlias {
                expr: crate::user_variables::literal(value.as_ref()),
                alias: Ident::with_quote('`', batch.schema().field(i).name()),
            };
        }
        Ok(())
    })
}

/// Calls `f` on each derived table of the query's FROM clause (nested joins included) whose
/// query assigns a user variable, left to right.
fn each_assigning_derived(
    query: &mut ast::Query,
    f: &mut dyn FnMut(&mut ast::Query) -> Result<()>,
) -> Result<()> {
    let ast::SetExpr::Select(select) = query.body.as_mut() else {
        return Ok(());
    };
    for from in &mut select.from {
        in_table_with_joins(from, f)?;
    }
    Ok(())
}

fn in_table_with_joins(
    from: &mut ast::TableWithJoins,
    f: &mut dyn FnMut(&mut ast::Query) -> Result<()>,
) -> Result<()> {
    in_factor(&mut from.relation, f)?;
    for join in &mut from.joins {
        in_factor(&mut join.relation, f)?;
    }
    Ok(())
}

fn in_factor(
    factor: &mut ast::TableFactor,
    f: &mut dyn FnMut(&mut ast::Query) -> Result<()>,
) -> Result<()> {
    match factor {
        ast::TableFactor::Derived { subquery, .. } if has_assignment(subquery) => f(subquery),
        ast::TableFactor::NestedJoin {
            table_with_joins, ..
        } => in_table_with_joins(table_with_joins, f),
        _ => Ok(()),
    }
}

/// A SELECT of exactly one row: no table, no filter, no grouping, no ORDER BY or LIMIT.
fn is_one_row(query: &ast::Query) -> bool {
    let ast::SetExpr::Select(select) = query.body.as_ref() else {
        return false;
    };
    let no_grouping = match &select.group_by {
        ast::GroupByExpr::Expressions(exprs, modifiers) => exprs.is_empty() && modifiers.is_empty(),
        ast::GroupByExpr::All(_) => false,
    };
    query.with.is_none()
        && query.order_by.is_none()
        && query.limit_clause.is_none()
        && select.from.is_empty()
        && select.selection.is_none()
        && select.having.is_none()
        && no_grouping
}

/// A query taken apart: what DataFusion runs, and the items evaluated row by row.
pub(crate) struct RowQuery {
    /// The query with each evaluated item replaced by a NULL placeholder (so positions and
    /// the other items stay) and the hidden values appended to its select list.
    pub query: ast::Query,
    /// Per select item of the original query: the expression evaluated per row (its
    /// variable-free parts replaced by hidden columns) and its result name, or `None` for an
    /// item DataFusion computes.
    items: Vec<Option<(Expr, String)>>,
    /// How many hidden values follow the items.
    hidden: usize,
}

impl RowQuery {
    /// Takes a query with assignments apart; an assignment anywhere but in the select list of
    /// a plain SELECT is not supported.
    pub(crate) fn of(query: &ast::Query) -> Result<RowQuery> {
        let unsupported = || {
            BasaltError::NotSupported(
                "an assignment to a user variable outside the select list of a SELECT".into(),
            )
        };
        let mut query = query.clone();
        let ast::SetExpr::Select(select) = query.body.as_mut() else {
            return Err(unsupported());
        };
        let mut hoisted = Hoister::default();
        let mut items = Vec::with_capacity(select.projection.len());
        for (i, item) in select.projection.iter_mut().enumerate() {
            let (expr, name) = match item {
                SelectItem::UnnamedExpr(e) if involves_variables(e) => (e.clone(), e.to_string()),
                SelectItem::ExprWithAlias { expr, alias } if involves_variables(expr) => {
                    (expr.clone(), alias.value.clone())
                }
                _ => {
                    items.push(None);
                    continue;
                }
            };
            let mut expr = expr;
            let _ = expr.visit(&mut RightAssociative);
            if let ControlFlow::Break(e) = expr.visit(&mut hoisted) {
                return Err(e);
            }
            *item = SelectItem::ExprWithAlias {
                expr: Expr::value(Value::Null),
                alias: Ident::new(format!("{ITEM_PREFIX}{i}")),
            };
            items.push(Some((expr, name)));
        }
        let hidden = hoisted.values.len();
        for (k, value) in hoisted.values.into_iter().enumerate() {
            select.projection.push(SelectItem::ExprWithAlias {
                expr: value,
                alias: Ident::new(format!("{VALUE_PREFIX}{k}")),
            });
        }
        order_by_assigned_values(&mut query, &items)?;
        // What is left must not assign anywhere else (WHERE, GROUP BY, subqueries...).
        let mut rest = query.clone();
        if let ast::SetExpr::Select(s) = rest.body.as_mut() {
            s.projection.truncate(items.len());
        }
        if has_assignment(&rest) {
            return Err(unsupported());
        }
        Ok(RowQuery {
            query,
            items,
            hidden,
        })
    }

    /// The result of the query: `batch` (DataFusion's rows in output order: the items, a
    /// wildcard spelled out as its columns, then the hidden values) with the evaluated items
    /// filled in, row by row, left to right.
    pub(crate) fn finish(&self, session: &Session, batch: &RecordBatch) -> Result<RecordBatch> {
        let visible = batch
            .num_columns()
            .checked_sub(self.hidden)
            .filter(|&n| n >= self.items.len())
            .ok_or_else(|| {
                BasaltError::Internal(
                    "a query with assignments returned an unexpected number of columns".into(),
                )
            })?;
        let schema = batch.schema();
        // Per visible column, the evaluated item it holds (by its placeholder's name).
        let evaluated: Vec<Option<&(Expr, String)>> = schema.fields()[..visible]
            .iter()
            .map(|f| {
                let i: usize = f.name().strip_prefix(ITEM_PREFIX)?.parse().ok()?;
                self.items.get(i)?.as_ref()
            })
            .collect();
        let mut evaluator = RowEvaluator::new(session, batch.slice(0, 0), visible);
        let mut values: Vec<Vec<ScalarValue>> = vec![Vec::new(); visible];
        for row in 0..batch.num_rows() {
            let hidden = batch.slice(row, 1);
            for (c, item) in evaluated.iter().enumerate() {
                if let Some((expr, _)) = item {
                    values[c].push(evaluator.evaluate(expr, &hidden)?);
                }
            }
        }
        let mut fields = Vec::with_capacity(visible);
        let mut columns: Vec<ArrayRef> = Vec::with_capacity(visible);
        for (c, item) in evaluated.iter().enumerate() {
            match item {
                None => {
                    fields.push(schema.field(c).clone());
                    columns.push(batch.column(c).clone());
                }
                Some((_, name)) => {
                    let column = one_column(std::mem::take(&mut values[c]))?;
                    fields.push(Field::new(name, column.data_type().clone(), true));
                    columns.push(column);
                }
            }
        }
        let schema: SchemaRef = Arc::new(Schema::new(fields));
        let options = datafusion::arrow::array::RecordBatchOptions::new()
            .with_row_count(Some(batch.num_rows()));
        RecordBatch::try_new_with_options(schema, columns, &options)
            .map_err(|e| BasaltError::Internal(e.to_string()))
    }
}

/// `@a := @b := 1` is `@a := (@b := 1)` in MySQL; the parser reads `(@a := @b) := 1`.
struct RightAssociative;

impl VisitorMut for RightAssociative {
    type Break = ();

    fn pre_visit_expr(&mut self, expr: &mut Expr) -> ControlFlow<()> {
        while let Expr::BinaryOp {
            left,
            op: BinaryOperator::Assignment,
            right,
        } = expr
        {
            let Expr::BinaryOp {
                left: inner_left,
                op: BinaryOperator::Assignment,
                right: inner_right,
            } = left.as_mut()
            else {
                break;
            };
            let target = std::mem::replace(inner_left.as_mut(), Expr::value(Value::Null));
            let middle = std::mem::replace(inner_right.as_mut(), Expr::value(Value::Null));
            let value = std::mem::replace(right.as_mut(), Expr::value(Value::Null));
            *expr = Expr::BinaryOp {
                left: Box::new(target),
                op: BinaryOperator::Assignment,
                right: Box::new(Expr::BinaryOp {
                    left: Box::new(middle),
                    op: BinaryOperator::Assignment,
                    right: Box::new(value),
                }),
            };
        }
        ControlFlow::Continue(())
    }
}

/// Replaces each variable-free part of an item (that is not a literal) by a hidden column.
#[derive(Default)]
struct Hoister {
    values: Vec<Expr>,
}

impl VisitorMut for Hoister {
    type Break = BasaltError;

    fn pre_visit_expr(&mut self, expr: &mut Expr) -> ControlFlow<BasaltError> {
        let subquery = matches!(
            expr,
            Expr::Subquery(_) | Expr::Exists { .. } | Expr::InSubquery { .. }
        );
        if subquery && has_assignment_in(expr) {
            return ControlFlow::Break(BasaltError::NotSupported(
                "an assignment to a user variable in a subquery".into(),
            ));
        }
        let literal = matches!(
            expr,
            Expr::Value(_) | Expr::Interval(_) | Expr::TypedString { .. }
        );
        if literal || (!subquery && involves_variables(expr)) {
            return ControlFlow::Continue(());
        }
        let k = self.values.len();
        let value = std::mem::replace(
            expr,
            Expr::Identifier(Ident::new(format!("{VALUE_PREFIX}{k}"))),
        );
        self.values.push(value);
        ControlFlow::Continue(())
    }
}

fn has_assignment_in(e: &Expr) -> bool {
    visit_expressions(e, |e| {
        if is_assignment(e) {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    })
    .is_break()
}

/// One column of an item's values: of the first non-NULL value's type (values of another
/// type cast to it), or text when they do not cast.
fn one_column(values: Vec<ScalarValue>) -> Result<ArrayRef> {
    let target = values
        .iter()
        .find(|v| !v.is_null())
        .map(ScalarValue::data_type);
    let Some(target) = target else {
        return Ok(new_null_array(&DataType::Utf8, values.len()));
    };
    let cast: std::result::Result<Vec<ScalarValue>, _> =
        values.iter().map(|v| v.cast_to(&target)).collect();
    let values = match cast {
        Ok(cast) => cast,
        Err(_) => values
            .iter()
            .map(|v| v.cast_to(&DataType::Utf8))
            .collect::<std::result::Result<_, _>>()
            .map_err(from_df)?,
    };
    ScalarValue::iter_to_array(values).map_err(from_df)
}

/// Evaluates the items of one row after another.
struct RowEvaluator<'s> {
    session: &'s Session,
    /// The hidden columns' schema (no rows).
    hidden: SchemaRef,
    /// Columns before the hidden values in a row's batch (the placeholders of the items).
    skip: usize,
    /// Planned expressions by their text and the variables' types they were planned with.
    planned: HashMap<(String, Vec<DataType>), Arc<dyn PhysicalExpr>>,
}

impl<'s> RowEvaluator<'s> {
    fn new(session: &'s Session, empty: RecordBatch, skip: usize) -> RowEvaluator<'s> {
        RowEvaluator {
            session,
            hidden: empty.schema(),
            skip,
            planned: HashMap::new(),
        }
    }

    /// An item's value for one row: its assignments made in order (innermost first, left to
    /// right), then its value computed.
    fn evaluate(&mut self, expr: &Expr, row: &RecordBatch) -> Result<ScalarValue> {
        let mut expr = expr.clone();
        let mut assign = Assign {
            row,
            evaluator: self,
        };
        if let ControlFlow::Break(e) = expr.visit(&mut assign) {
            return Err(e);
        }
        self.compute(&expr, row)
    }

    /// The value of an expression without assignments over the row's hidden values and the
    /// variables' current values.
    fn compute(&mut self, expr: &Expr, row: &RecordBatch) -> Result<ScalarValue> {
        if let Some(name) = user_variable(expr) {
            return Ok(self.variable(name).0);
        }
        // The variables it reads become columns of the one-row batch.
        let mut names: Vec<String> = Vec::new();
        let mut expr = expr.clone();
        let _ = ast::visit_expressions_mut(&mut expr, |e| {
            if let Some(name) = user_variable(e) {
                let name = name.to_ascii_lowercase();
                let k = match names.iter().position(|n| *n == name) {
                    Some(k) => k,
                    None => {
                        names.push(name);
                        names.len() - 1
                    }
                };
                *e = Expr::Identifier(Ident::new(format!("{VARIABLE_PREFIX}{k}")));
            }
            ControlFlow::<()>::Continue(())
        });
        let variables: Vec<(ScalarValue, DataType)> =
            names.iter().map(|n| self.variable(n)).collect();
        let types: Vec<DataType> = variables.iter().map(|(_, t)| t.clone()).collect();
        let key = (expr.to_string(), types);
        let physical = match self.planned.get(&key) {
            Some(p) => p.clone(),
            None => {
                let p = self.plan(&expr, &key.1)?;
                self.planned.insert(key.clone(), p.clone());
                p
            }
        };
        let mut columns: Vec<ArrayRef> = row.columns()[self.skip..].to_vec();
        for (value, data_type) in variables {
            let value = if value.is_null() {
                ScalarValue::try_from(&data_type).map_err(from_df)?
            } else {
                value
            };
            columns.push(value.to_array_of_size(1).map_err(from_df)?);
        }
        let options = datafusion::arrow::array::RecordBatchOptions::new().with_row_count(Some(1));
        let batch = RecordBatch::try_new_with_options(self.schema(&key.1), columns, &options)
            .map_err(|e| BasaltError::Internal(e.to_string()))?;
        let out = physical.evaluate(&batch).map_err(from_df)?;
        let array = out.into_array(1).map_err(from_df)?;
        ScalarValue::try_from_array(&array, 0).map_err(from_df)
    }

    /// A user variable's value and the type it is computed with (NULL for an unset one).
    fn variable(&self, name: &str) -> (ScalarValue, DataType) {
        match self.session.info.vars.read().get_user(name) {
            Some(v) => {
                let t = crate::user_variables::data_type(Some(&v));
                (crate::user_variables::to_scalar(v), t)
            }
            None => (ScalarValue::Null, DataType::Null),
        }
    }

    fn store(&self, name: &str, value: &ScalarValue) -> Result<()> {
        let typed = crate::user_variables::from_scalar(value, None).map_err(from_df)?;
        let mut vars = self.session.info.vars.write();
        match typed {
            Some(v) => vars.set_user(name, v),
            None => vars.unset_user(name),
        }
        Ok(())
    }

    /// The one-row batch's schema: the hidden values, then the variables.
    fn schema(&self, variables: &[DataType]) -> SchemaRef {
        let mut fields: Vec<Field> = self.hidden.fields()[self.skip..]
            .iter()
            .enumerate()
            .map(|(k, f)| Field::new(format!("{VALUE_PREFIX}{k}"), f.data_type().clone(), true))
            .collect();
        for (k, t) in variables.iter().enumerate() {
            fields.push(Field::new(format!("{VARIABLE_PREFIX}{k}"), t.clone(), true));
        }
        Arc::new(Schema::new(fields))
    }

    /// Plans an expression over the one-row batch, with the session's functions and MySQL's
    /// rewrites of them.
    fn plan(&self, expr: &Expr, variables: &[DataType]) -> Result<Arc<dyn PhysicalExpr>> {
        let mut stmt = match basalt_sql::parse_one(&format!("SELECT {expr}"))? {
            basalt_sql::Statement::Standard(s) => *s,
            _ => {
                return Err(BasaltError::Internal(
                    "an item that is no expression".into(),
                ))
            }
        };
        crate::mysql_compat::rewrite(&mut stmt, &self.session.sql_settings());
        let rewritten = match &stmt {
            ast::Statement::Query(q) => match q.body.as_ref() {
                ast::SetExpr::Select(s) => match s.projection.first() {
                    // DataFusion's parser groups operators otherwise than MySQL.
                    Some(SelectItem::UnnamedExpr(e))
                    | Some(SelectItem::ExprWithAlias { expr: e, .. }) => {
                        basalt_sql::parenthesized(e)
                    }
                    _ => basalt_sql::parenthesized(expr),
                },
                _ => basalt_sql::parenthesized(expr),
            },
            _ => basalt_sql::parenthesized(expr),
        };
        let schema = self.schema(variables);
        let df_schema = DFSchema::try_from(schema.as_ref().clone()).map_err(from_df)?;
        let state = self.session.ctx.state();
        let logical = state
            .create_logical_expr(&rewritten, &df_schema)
            .map_err(from_df)?;
        // Some functions (IFNULL's COALESCE) only run once simplified, as a plan's are.
        let started = crate::session_clock::fixed(&self.session.info.vars.read())
            .unwrap_or_else(chrono::Utc::now);
        let context = SimplifyContext::builder()
            .with_schema(Arc::new(df_schema.clone()))
            .with_query_execution_start_time(Some(started))
            .with_config_options(state.config_options().clone())
            .build();
        let coerced = ExprSimplifier::new(context.clone())
            .coerce(logical, &df_schema)
            .map_err(from_df)?;
        let simplified = ExprSimplifier::new(context)
            .simplify(coerced)
            .map_err(from_df)?;
        state
            .create_physical_expr(simplified, &df_schema)
            .map_err(from_df)
    }
}

/// Makes an item's assignments as they are reached: each `@v := expr` (its own inner
/// assignments already made) stores the value and becomes a read of `@v`.
struct Assign<'a, 's> {
    row: &'a RecordBatch,
    evaluator: &'a mut RowEvaluator<'s>,
}

impl VisitorMut for Assign<'_, '_> {
    type Break = BasaltError;

    fn post_visit_expr(&mut self, expr: &mut Expr) -> ControlFlow<BasaltError> {
        let Expr::BinaryOp {
            left,
            op: BinaryOperator::Assignment,
            right,
        } = expr
        else {
            return ControlFlow::Continue(());
        };
        let Some(name) = user_variable(left).map(str::to_string) else {
            return ControlFlow::Break(BasaltError::NotSupported(format!(
                "an assignment to {left}"
            )));
        };
        let value = match self.evaluator.compute(right, self.row) {
            Ok(v) => v,
            Err(e) => return ControlFlow::Break(e),
        };
        if let Err(e) = self.evaluator.store(&name, &value) {
            return ControlFlow::Break(e);
        }
        *expr = Expr::Identifier(Ident::new(format!("@{name}")));
        ControlFlow::Continue(())
    }
}

/// MySQL's `SELECT .. INTO @a, @b`: at most one row, whose values the variables take.
pub(crate) fn assign_row(
    session: &Session,
    variables: &[String],
    batches: &[RecordBatch],
) -> Result<()> {
    let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
    if rows > 1 {
        return Err(BasaltError::Routine {
            code: 1172,
            message: "Result consisted of more than one row".into(),
        });
    }
    let columns = batches.first().map(RecordBatch::num_columns).unwrap_or(0);
    if !batches.is_empty() && columns != variables.len() {
        return Err(BasaltError::Routine {
            code: 1222,
            message: "The used SELECT statements have a different number of columns".into(),
        });
    }
    let Some(batch) = batches.iter().find(|b| b.num_rows() > 0) else {
        session.info.warnings.add(
            "Warning",
            1329,
            "No data - zero rows fetched, selected, or processed".to_string(),
        );
        return Ok(());
    };
    let mut vars = session.info.vars.write();
    let fields = batch.schema().fields().clone();
    for ((name, column), field) in variables.iter().zip(batch.columns()).zip(fields.iter()) {
        let value = ScalarValue::try_from_array(column, 0).map_err(from_df)?;
        let digits = basalt_common::fraction_digits(field);
        match crate::user_variables::from_scalar(&value, digits).map_err(from_df)? {
            Some(v) => vars.set_user(name, v),
            None => vars.unset_user(name),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(sql: &str) -> ast::Query {
        match basalt_sql::parse_one(sql).unwrap() {
            basalt_sql::Statement::Standard(s) => match *s {
                ast::Statement::Query(q) => *q,
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn items_with_variables_are_taken_out() {
        let q = query("SELECT @rn := @rn + 1, a, @s := CONCAT(@s, b) AS s FROM t ORDER BY a");
        assert!(has_assignment(&q));
        let row = RowQuery::of(&q).unwrap();
        assert_eq!(
            row.query.to_string(),
            "SELECT NULL AS __basalt_row_item_0, a, NULL AS __basalt_row_item_2, \
             b AS __basalt_row_value_0 FROM t ORDER BY a"
        );
        assert_eq!(row.hidden, 1);
        let (expr, name) = row.items[2].clone().unwrap();
        assert_eq!(name, "s");
        assert_eq!(expr.to_string(), "@s := CONCAT(@s, __basalt_row_value_0)");
        assert!(row.items[1].is_none());
    }

    #[test]
    fn chained_assignments_assign_right_to_left() {
        let row = RowQuery::of(&query("SELECT @a := @b := @c := 1")).unwrap();
        let (mut expr, _) = row.items[0].clone().unwrap();
        // Each assignment's target is a variable, its value the next assignment.
        for target in ["@a", "@b", "@c"] {
            let Expr::BinaryOp { left, right, .. } = expr else {
                panic!("not an assignment: {expr}");
            };
            assert_eq!(left.to_string(), target);
            expr = *right;
        }
        assert_eq!(expr.to_string(), "1");
    }

    #[test]
    fn assignments_elsewhere_are_refused() {
        assert!(!has_assignment(&query("SELECT @a, a FROM t")));
        for sql in [
            "SELECT a FROM t WHERE (@x := a) > 1",
            "SELECT (SELECT @x := 1)",
            "SELECT @x := 1 UNION SELECT 2",
        ] {
            assert!(RowQuery::of(&query(sql)).is_err(), "{sql}");
        }
    }
}
