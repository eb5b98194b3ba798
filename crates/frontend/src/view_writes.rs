//! INSERT, UPDATE and DELETE through a view (MySQL's updatable views). A view is updatable
//! when its SELECT reads one table (or one updatable view) without DISTINCT, GROUP BY,
//! HAVING, aggregates, LIMIT or a set operation, and is not ALGORITHM=TEMPTABLE. The write
//! becomes the same write on the table: the view's columns become the table's (a column the
//! view computes can be read, not written: UPDATE of it is 1348, and INSERT naming it, or
//! naming no columns, 1471), UPDATE and DELETE keep to the view's rows
//! (its WHERE, and those of the views under it, are added to the statement's).
//!
//! `WITH CHECK OPTION`: a row written must be one the view shows. CASCADED checks the view's
//! WHERE and those of every view under it, LOCAL its own and those of the views under it that
//! have a check option themselves. A row that fails is error 1369 (INSERT IGNORE and UPDATE
//! IGNORE leave it out instead). The check reads the rows to write before writing them.
//!
//! Any other view is read-only: INSERT into it is error 1471, UPDATE and DELETE 1288.

use crate::engine::{split_name, QueryEngine};
use crate::output::Output;
use crate::session::Session;
use basalt_catalog::{Catalog, ViewAlgorithm, ViewCheckOption, ViewMeta};
use basalt_common::{BasaltError, Result};
use basalt_sql::ast::{
    self, BinaryOperator, Expr, GroupByExpr, Ident, ObjectName, ObjectNamePart, Query, SelectItem,
    SetExpr, TableFactor, TableObject, Value,
};
use futures::TryStreamExt;
use std::collections::HashMap;

/// Views inside views stop here (as their expansion does).
const MAX_DEPTH: usize = 64;

/// The table a write through a view goes to.
struct Target {
    /// `db.table`.
    table: ObjectName,
    /// Each view column (lower case) and what it is over the table's columns.
    columns: HashMap<String, Expr>,
    /// The view's columns in order.
    order: Vec<String>,
    /// The WHERE of the view and of the views under it, over the table's columns.
    conditions: Vec<Condition>,
}

struct Condition {
    expr: Expr,
    /// A check option asks rows written to satisfy it.
    checked: bool,
}

/// Why a view takes no writes.
struct ReadOnly;

impl Target {
    /// The base expression of a view column.
    fn column(&self, name: &str) -> Option<&Expr> {
        self.columns.get(&name.to_lowercase())
    }

    /// The table column a view column is, if it is one (not an expression).
    fn table_column(&self, name: &str) -> Option<Ident> {
        match self.column(name)? {
            Expr::Identifier(i) => Some(i.clone()),
            _ => None,
        }
    }

    /// All conditions ANDed, or none.
    fn filter(&self) -> Option<Expr> {
        and_all(self.conditions.iter().map(|c| c.expr.clone()))
    }

    /// The checked conditions ANDed, or none.
    fn check(&self) -> Option<Expr> {
        and_all(
            self.conditions
                .iter()
                .filter(|c| c.checked)
                .map(|c| c.expr.clone()),
        )
    }
}

fn and_all(exprs: impl Iterator<Item = Expr>) -> Option<Expr> {
    exprs.map(nested).reduce(|a, b| Expr::BinaryOp {
        left: Box::new(a),
        op: BinaryOperator::And,
        right: Box::new(b),
    })
}

pub(crate) fn nested(e: Expr) -> Expr {
    match e {
        Expr::Identifier(_) | Expr::CompoundIdentifier(_) | Expr::Value(_) | Expr::Nested(_) => e,
        other => Expr::Nested(Box::new(other)),
    }
}

/// `COALESCE(cond, FALSE)`: true only where the condition holds (NULL fails a check).
fn holds(cond: Expr) -> Expr {
    Expr::Function(ast::Function {
        name: ObjectName::from(vec![Ident::new("coalesce")]),
        uses_odbc_syntax: false,
        parameters: ast::FunctionArguments::None,
        args: ast::FunctionArguments::List(ast::FunctionArgumentList {
            duplicate_treatment: None,
            args: vec![
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(cond)),
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(Expr::Value(
                    Value::Boolean(false).into(),
                ))),
            ],
            clauses: vec![],
        }),
        filter: None,
        null_treatment: None,
        over: None,
        within_group: vec![],
    })
}

fn not(e: Expr) -> Expr {
    Expr::UnaryOp {
        op: ast::UnaryOperator::Not,
        expr: Box::new(nested(e)),
    }
}

fn and(a: Option<Expr>, b: Expr) -> Expr {
    match a {
        Some(a) => Expr::BinaryOp {
            left: Box::new(nested(a)),
            op: BinaryOperator::And,
            right: Box::new(nested(b)),
        },
        None => b,
    }
}

/// Replaces the column references of `expr` (outside its subqueries) by what `columns` maps
/// their names to; other names are left as written.
fn substitute(expr: &mut Expr, columns: &dyn Fn(&str) -> Option<Expr>) {
    crate::view_merge::resolve(expr, &|parts| {
        parts.last().and_then(|name| columns(&name.value))
    });
}

/// The name a single-table UPDATE or DELETE through a view keeps for its table: the alias
/// written, else the view's own name (its subqueries may say `v.c1` of the row written).
fn outer_name(written: &ObjectName, alias: Option<&ast::TableAlias>) -> Ident {
    match alias {
        Some(a) => a.name.clone(),
        None => Ident::new(split_name(written).1),
    }
}

/// `name AS alias`, as the statement's table.
fn table_alias(name: Ident) -> ast::TableAlias {
    ast::TableAlias {
        explicit: true,
        name,
        columns: vec![],
        at: None,
    }
}

/// Inside the subqueries of `expr`, `outer.col` (a view column of the row being written)
/// becomes what the column is over the table, its columns qualified by `outer` (which the
/// statement then keeps as its table's alias); true if one did. A subquery whose FROM names
/// `outer` itself reads its own rows there and is left alone.
fn substitute_in_subqueries(expr: &mut Expr, outer: &Ident, target: &Target) -> bool {
    use basalt_sql::ast::{Visit, VisitMut, Visitor, VisitorMut};
    use std::ops::ControlFlow;
    struct Qualify<'a>(&'a Ident);
    impl VisitorMut for Qualify<'_> {
        type Break = ();
        fn post_visit_expr(&mut self, e: &mut Expr) -> ControlFlow<()> {
            if let Expr::Identifier(i) = e {
                *e = Expr::CompoundIdentifier(vec![self.0.clone(), i.clone()]);
            }
            ControlFlow::Continue(())
        }
    }
    struct Sub<'a> {
        outer: &'a Ident,
        target: &'a Target,
        /// Per query entered: whether its FROM names `outer` again.
        scopes: Vec<bool>,
        changed: bool,
    }
    impl VisitorMut for Sub<'_> {
        type Break = ();
        fn pre_visit_query(&mut self, q: &mut Query) -> ControlFlow<()> {
            self.scopes.push(names_relation(q, self.outer));
            ControlFlow::Continue(())
        }
        fn post_visit_query(&mut self, _: &mut Query) -> ControlFlow<()> {
            self.scopes.pop();
            ControlFlow::Continue(())
        }
        fn post_visit_expr(&mut self, e: &mut Expr) -> ControlFlow<()> {
            let Expr::CompoundIdentifier(parts) = e else {
                return ControlFlow::Continue(());
            };
            if self.scopes.is_empty()
                || self.scopes.iter().any(|shadowed| *shadowed)
                || parts.len() != 2
                || !same_name(&parts[0], self.outer)
            {
                return ControlFlow::Continue(());
            }
            if let Some(column) = self.target.column(&parts[1].value) {
                let mut column = column.clone();
                let _ = VisitMut::visit(&mut column, &mut Qualify(self.outer));
                *e = nested(column);
                self.changed = true;
            }
            ControlFlow::Continue(())
        }
    }
    // Only statements with a subquery naming the row need the walk.
    struct HasQuery(bool);
    impl Visitor for HasQuery {
        type Break = ();
        fn pre_visit_query(&mut self, _: &Query) -> ControlFlow<()> {
            self.0 = true;
            ControlFlow::Break(())
        }
    }
    let mut has = HasQuery(false);
    let _ = Visit::visit(&*expr, &mut has);
    if !has.0 {
        return false;
    }
    let mut sub = Sub {
        outer,
        target,
        scopes: vec![],
        changed: false,
    };
    let _ = expr.visit(&mut sub);
    sub.changed
}

/// Whether the FROM of `q` (one SELECT) names a relation `name` (its alias, or an unaliased
/// table's name).
fn names_relation(q: &Query, name: &Ident) -> bool {
    fn factor(f: &TableFactor, name: &Ident) -> bool {
        match f {
            TableFactor::Table {
                name: table, alias, ..
            } => match alias {
                Some(a) => same_name(&a.name, name),
                None => same_name(&Ident::new(split_name(table).1), name),
            },
            TableFactor::Derived { alias, .. } => {
                alias.as_ref().is_some_and(|a| same_name(&a.name, name))
            }
            TableFactor::NestedJoin {
                table_with_joins, ..
            } => {
                factor(&table_with_joins.relation, name)
                    || table_with_joins
                        .joins
                        .iter()
                        .any(|j| factor(&j.relation, name))
            }
            _ => false,
        }
    }
    let SetExpr::Select(select) = q.body.as_ref() else {
        return false;
    };
    select
        .from
        .iter()
        .any(|t| factor(&t.relation, name) || t.joins.iter().any(|j| factor(&j.relation, name)))
}

/// `expr` (the view's conditions, over the table) with the columns it qualifies by the table's
/// name qualified by `outer`, the alias the statement now gives the table.
fn requalified(mut expr: Expr, table: &ObjectName, outer: &Ident) -> Expr {
    let table_name = Ident::new(split_name(table).1);
    let _ = ast::visit_expressions_mut(&mut expr, |e| {
        if let Expr::CompoundIdentifier(parts) = e {
            if parts.len() >= 2 && same_name(&parts[parts.len() - 2], &table_name) {
                let column = parts[parts.len() - 1].clone();
                *parts = vec![outer.clone(), column];
            }
        }
        std::ops::ControlFlow::<()>::Continue(())
    });
    expr
}

fn same_name(a: &Ident, b: &Ident) -> bool {
    a.value.eq_ignore_ascii_case(&b.value)
}

/// The table a write through `view` goes to, or why it can take none.
fn resolve(
    catalog: &dyn Catalog,
    view: &ViewMeta,
    depth: usize,
) -> Result<std::result::Result<Target, ReadOnly>> {
    if depth > MAX_DEPTH || view.algorithm == ViewAlgorithm::Temptable {
        return Ok(Err(ReadOnly));
    }
    let query = match basalt_sql::parse_one(&view.definition)? {
        basalt_sql::Statement::Standard(s) => match *s {
            ast::Statement::Query(q) => q,
            _ => return Ok(Err(ReadOnly)),
        },
        _ => return Ok(Err(ReadOnly)),
    };
    if query.with.is_some() || query.limit_clause.is_some() || query.fetch.is_some() {
        return Ok(Err(ReadOnly));
    }
    let SetExpr::Select(select) = *query.body else {
        return Ok(Err(ReadOnly));
    };
    let grouped = match &select.group_by {
        GroupByExpr::All(_) => true,
        GroupByExpr::Expressions(e, _) => !e.is_empty(),
    };
    if select.distinct.is_some()
        || grouped
        || select.having.is_some()
        || select.from.len() != 1
        || !select.from[0].joins.is_empty()
        || crate::view_merge::has_aggregate(&select.projection)
    {
        return Ok(Err(ReadOnly));
    }
    let TableFactor::Table {
        name, args: None, ..
    } = &select.from[0].relation
    else {
        return Ok(Err(ReadOnly));
    };
    let (db, table) = split_name(name);
    let db = db.unwrap_or_else(|| view.database.clone());
    // What the view's SELECT reads: a table (its columns are themselves) or a view.
    let inner = match catalog.view(&db, &table) {
        Some(inner) => match resolve(catalog, &inner, depth + 1)? {
            Ok(target) => Some(target),
            Err(ReadOnly) => return Ok(Err(ReadOnly)),
        },
        None => None,
    };
    let below = |name: &str| -> Option<Expr> {
        match &inner {
            Some(t) => t.column(name).cloned(),
            None => Some(Expr::Identifier(Ident::with_quote(
                '`',
                name.to_lowercase(),
            ))),
        }
    };
    let mut columns = HashMap::new();
    match select.projection.as_slice() {
        [SelectItem::Wildcard(_)] | [SelectItem::QualifiedWildcard(..)] => {
            for c in &view.columns {
                let Some(e) = below(c) else {
                    return Ok(Err(ReadOnly));
                };
                columns.insert(c.to_lowercase(), e);
            }
        }
        items => {
            if items.len() != view.columns.len() {
                return Ok(Err(ReadOnly));
            }
            for (item, c) in items.iter().zip(&view.columns) {
                let mut e = match item {
                    SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => {
                        e.clone()
                    }
                    _ => return Ok(Err(ReadOnly)),
                };
                substitute(&mut e, &below);
                columns.insert(c.to_lowercase(), e);
            }
        }
    }
    let cascaded = view.check_option == ViewCheckOption::Cascaded;
    let mut conditions: Vec<Condition> = match &inner {
        Some(t) => t
            .conditions
            .iter()
            .map(|c| Condition {
                expr: c.expr.clone(),
                checked: c.checked || cascaded,
            })
            .collect(),
        None => vec![],
    };
    if let Some(mut w) = select.selection.clone() {
        substitute(&mut w, &below);
        conditions.push(Condition {
            expr: w,
            checked: view.check_option != ViewCheckOption::None,
        });
    }
    let table = match inner {
        Some(t) => t.table,
        None => ObjectName(vec![
            ObjectNamePart::Identifier(Ident::with_quote('`', db)),
            ObjectNamePart::Identifier(Ident::with_quote('`', table)),
        ]),
    };
    Ok(Ok(Target {
        table,
        columns,
        order: view.columns.clone(),
        conditions,
    }))
}

/// The view a write's target names, if it names one.
fn target_view(
    catalog: &dyn Catalog,
    session: &Session,
    name: &ObjectName,
) -> Option<std::sync::Arc<ViewMeta>> {
    let (db, table) = split_name(name);
    let db = db.or_else(|| session.database())?;
    catalog.view(&db, &table)
}

fn view_label(view: &ViewMeta) -> String {
    format!("{}.{}", view.database, view.name)
}

impl QueryEngine {
    /// A write naming a view as the same write on its table (see the module doc); any other
    /// statement as it is.
    pub(crate) async fn write_through_view(
        &self,
        session: &Session,
        stmt: ast::Statement,
    ) -> Result<ast::Statement> {
        let catalog = self.services.catalog.as_ref();
        match stmt {
            ast::Statement::Insert(mut insert) => {
                let TableObject::TableName(name) = &insert.table else {
                    return Ok(ast::Statement::Insert(insert));
                };
                let Some(view) = target_view(catalog, session, name) else {
                    return Ok(ast::Statement::Insert(insert));
                };
                let Ok(target) = resolve(catalog, &view, 0)? else {
                    // A view joining tables takes rows into one of them.
                    match crate::view_merge::merge(catalog, &view, &view.name)? {
                        Some(merged) if merged.is_join() => {
                            crate::join_view_writes::insert_into_join_view(
                                &merged,
                                &view_label(&view),
                                &view.name,
                                &mut insert,
                            )?;
                            return Ok(ast::Statement::Insert(insert));
                        }
                        _ => return Err(BasaltError::NotInsertable(view.name.clone())),
                    }
                };
                self.insert_through(session, &view, &target, &mut insert)
                    .await?;
                Ok(ast::Statement::Insert(insert))
            }
            ast::Statement::Update(mut update) => {
                if !update.table.joins.is_empty() || update.from.is_some() {
                    self.update_through_views(session, &mut update).await?;
                    return Ok(ast::Statement::Update(update));
                }
                let TableFactor::Table { name, .. } = &update.table.relation else {
                    return Ok(ast::Statement::Update(update));
                };
                let Some(view) = target_view(catalog, session, name) else {
                    return Ok(ast::Statement::Update(update));
                };
                let Ok(target) = resolve(catalog, &view, 0)? else {
                    // A view joining tables: an UPDATE of its tables.
                    self.update_through_views(session, &mut update).await?;
                    return Ok(ast::Statement::Update(update));
                };
                self.update_through(session, &view, &target, &mut update)
                    .await?;
                Ok(ast::Statement::Update(update))
            }
            ast::Statement::Delete(mut delete) => {
                let from = match &mut delete.from {
                    ast::FromTable::WithFromKeyword(f) | ast::FromTable::WithoutKeyword(f) => f,
                };
                if from.len() != 1
                    || !from[0].joins.is_empty()
                    || !delete.tables.is_empty()
                    || delete.using.is_some()
                {
                    crate::join_view_writes::merge_delete(catalog, session, &mut delete)?;
                    return Ok(ast::Statement::Delete(delete));
                }
                let TableFactor::Table { name, alias, .. } = &mut from[0].relation else {
                    return Ok(ast::Statement::Delete(delete));
                };
                let Some(view) = target_view(catalog, session, name) else {
                    return Ok(ast::Statement::Delete(delete));
                };
                let Ok(target) = resolve(catalog, &view, 0)? else {
                    return Err(
                        match crate::view_merge::merge(catalog, &view, &view.name)? {
                            Some(merged) if merged.is_join() => {
                                BasaltError::JoinViewDelete(view_label(&view))
                            }
                            _ => BasaltError::NotUpdatable {
                                table: view.name.clone(),
                                statement: "DELETE",
                            },
                        },
                    );
                };
                let outer = outer_name(name, alias.as_ref());
                let view_columns = |c: &str| target.column(c).cloned();
                let mut renamed = false;
                if let Some(w) = delete.selection.as_mut() {
                    renamed = substitute_in_subqueries(w, &outer, &target);
                    substitute(w, &view_columns);
                }
                // Subqueries name the row by the view's name: the table takes that name.
                *alias = renamed.then(|| table_alias(outer.clone()));
                *name = target.table.clone();
                for o in delete.order_by.iter_mut() {
                    substitute(&mut o.expr, &view_columns);
                }
                let filter = target.filter().map(|f| {
                    if renamed {
                        requalified(f, &target.table, &outer)
                    } else {
                        f
                    }
                });
                if let Some(f) = filter {
                    delete.selection = Some(match delete.selection.take() {
                        Some(w) => and(Some(f), w),
                        None => f,
                    });
                }
                Ok(ast::Statement::Delete(delete))
            }
            other => Ok(other),
        }
    }

    async fn insert_through(
        &self,
        session: &Session,
        view: &ViewMeta,
        target: &Target,
        insert: &mut ast::Insert,
    ) -> Result<()> {
        let named: Vec<String> = match insert.columns.is_empty() {
            true => target.order.clone(),
            false => insert
                .columns
                .iter()
                .filter_map(|c| {
                    c.0.last()
                        .and_then(|p| p.as_ident())
                        .map(|i| i.value.clone())
                })
                .collect(),
        };
        let mut table_columns = Vec::with_capacity(named.len());
        for c in &named {
            match target.table_column(c) {
                Some(t) => table_columns.push(t),
                None if target.column(c).is_some() => {
                    return Err(BasaltError::NotInsertable(view.name.clone()))
                }
                None => {
                    return Err(BasaltError::UnknownColumn {
                        column: c.clone(),
                        context: "field list".into(),
                    })
                }
            }
        }
        insert.table = TableObject::TableName(target.table.clone());
        insert.table_alias = None;
        insert.columns = table_columns
            .iter()
            .map(|t| ObjectName(vec![ObjectNamePart::Identifier(t.clone())]))
            .collect();
        if let Some(ast::OnInsert::DuplicateKeyUpdate(assignments)) = insert.on.as_mut() {
            for a in assignments.iter_mut() {
                if let ast::AssignmentTarget::ColumnName(n) = &mut a.target {
                    let last =
                        n.0.last()
                            .and_then(|p| p.as_ident())
                            .map(|i| i.value.clone());
                    if let Some(t) = last.as_deref().and_then(|c| target.table_column(c)) {
                        *n = ObjectName(vec![ObjectNamePart::Identifier(t)]);
                    }
                }
            }
        }
        let (Some(check), Some(source)) = (target.check(), insert.source.as_mut()) else {
            return Ok(());
        };
        // The rows to insert, named by the table's columns, against the check: columns the
        // INSERT leaves out are NULL here.
        let row_names: Vec<Ident> = (0..table_columns.len())
            .map(|i| Ident::new(format!("__basalt_c{i}")))
            .collect();
        let mut cond = check;
        let by_column: HashMap<String, Expr> = table_columns
            .iter()
            .zip(&row_names)
            .map(|(t, r)| (t.value.to_lowercase(), Expr::Identifier(r.clone())))
            .collect();
        substitute(&mut cond, &|c| {
            Some(
                by_column
                    .get(&c.to_lowercase())
                    .cloned()
                    .unwrap_or(Expr::Value(Value::Null.into())),
            )
        });
        let alias = ast::TableAlias {
            explicit: true,
            name: Ident::new("__basalt_rows"),
            columns: row_names
                .iter()
                .map(|r| ast::TableAliasColumnDef::from_name(r.value.as_str()))
                .collect(),
            at: None,
        };
        if insert.ignore {
            // INSERT IGNORE leaves the failing rows out.
            let filtered = format!("SELECT * FROM ({source}) {alias} WHERE {}", holds(cond));
            *source = parse_query(&filtered)?;
            return Ok(());
        }
        let count = format!(
            "SELECT COUNT(*) FROM ({source}) {alias} WHERE {}",
            not(holds(cond))
        );
        if self.count_rows(session, &count).await? > 0 {
            return Err(BasaltError::CheckOptionFailed(view_label(view)));
        }
        Ok(())
    }

    async fn update_through(
        &self,
        session: &Session,
        view: &ViewMeta,
        target: &Target,
        update: &mut ast::Update,
    ) -> Result<()> {
        let view_columns = |c: &str| target.column(c).cloned();
        let outer = match &update.table.relation {
            TableFactor::Table { name, alias, .. } => outer_name(name, alias.as_ref()),
            _ => Ident::new(view.name.clone()),
        };
        let mut renamed = false;
        let mut assigned: HashMap<String, Expr> = HashMap::new();
        for a in update.assignments.iter_mut() {
            let ast::AssignmentTarget::ColumnName(n) = &mut a.target else {
                continue;
            };
            let Some(c) =
                n.0.last()
                    .and_then(|p| p.as_ident())
                    .map(|i| i.value.clone())
            else {
                continue;
            };
            let Some(t) = target.table_column(&c) else {
                return Err(match target.column(&c) {
                    Some(_) => BasaltError::ColumnNotUpdatable(c),
                    None => BasaltError::UnknownColumn {
                        column: c,
                        context: "field list".into(),
                    },
                });
            };
            *n = ObjectName(vec![ObjectNamePart::Identifier(t.clone())]);
            renamed |= substitute_in_subqueries(&mut a.value, &outer, target);
            substitute(&mut a.value, &view_columns);
            assigned.insert(t.value.to_lowercase(), a.value.clone());
        }
        if let Some(w) = update.selection.as_mut() {
            renamed |= substitute_in_subqueries(w, &outer, target);
            substitute(w, &view_columns);
        }
        // Subqueries name the row by the view's name: the table takes that name.
        let over_table = |e: Expr| {
            if renamed {
                requalified(e, &target.table, &outer)
            } else {
                e
            }
        };
        if let Some(f) = target.filter().map(over_table) {
            update.selection = Some(match update.selection.take() {
                Some(w) => and(Some(f), w),
                None => f,
            });
        }
        if let TableFactor::Table { name, alias, .. } = &mut update.table.relation {
            *name = target.table.clone();
            *alias = renamed.then(|| table_alias(outer.clone()));
        }
        let table = if renamed {
            format!("{} AS {}", target.table, outer)
        } else {
            target.table.to_string()
        };
        let Some(mut check) = target.check() else {
            return Ok(());
        };
        // The rows as the UPDATE leaves them, against the check.
        substitute(&mut check, &|c| assigned.get(&c.to_lowercase()).cloned());
        if update.or == Some(ast::SqliteOnConflict::Ignore) {
            update.selection = Some(and(update.selection.take(), holds(check)));
            return Ok(());
        }
        let count = match update.limit.is_some() {
            // With a LIMIT only the rows the UPDATE reaches count.
            true => format!(
                "SELECT COUNT(*) FROM (SELECT * FROM {} WHERE {}{}{}) AS __basalt_rows WHERE {}",
                table,
                update
                    .selection
                    .clone()
                    .unwrap_or(Expr::Value(Value::Boolean(true).into())),
                order_by_text(&update.order_by),
                update
                    .limit
                    .as_ref()
                    .map(|l| format!(" LIMIT {l}"))
                    .unwrap_or_default(),
                not(holds(check))
            ),
            false => format!(
                "SELECT COUNT(*) FROM {} WHERE {}",
                table,
                and(update.selection.clone(), not(holds(check)))
            ),
        };
        if self.count_rows(session, &count).await? > 0 {
            return Err(BasaltError::CheckOptionFailed(view_label(view)));
        }
        Ok(())
    }

    /// An UPDATE naming views among several tables (or one join view) as the UPDATE of their
    /// tables (`join_view_writes`), checking the check options it must keep.
    async fn update_through_views(
        &self,
        session: &Session,
        update: &mut ast::Update,
    ) -> Result<()> {
        let catalog = self.services.catalog.as_ref();
        let Some(checks) = crate::join_view_writes::merge_update(catalog, session, update)? else {
            return Ok(());
        };
        for check in checks {
            if update.or == Some(ast::SqliteOnConflict::Ignore) {
                update.selection = Some(and(update.selection.take(), holds(check.condition)));
                continue;
            }
            let mut tables = vec![update.table.to_string()];
            if let Some(
                ast::UpdateTableFromKind::AfterSet(more)
                | ast::UpdateTableFromKind::BeforeSet(more),
            ) = &update.from
            {
                tables.extend(more.iter().map(|t| t.to_string()));
            }
            let count = format!(
                "SELECT COUNT(*) FROM {} WHERE {}",
                tables.join(", "),
                and(update.selection.clone(), not(holds(check.condition)))
            );
            if self.count_rows(session, &count).await? > 0 {
                return Err(BasaltError::CheckOptionFailed(check.label));
            }
        }
        Ok(())
    }

    /// The one number a `SELECT COUNT(*) ..` returns.
    async fn count_rows(&self, session: &Session, sql: &str) -> Result<i64> {
        let query = parse_query(sql)?;
        let out = self
            .run_datafusion_checked(session, ast::Statement::Query(query), false, true)
            .await?;
        let batches: Vec<datafusion::arrow::record_batch::RecordBatch> = match out {
            Output::Rows { stream, .. } => stream.try_collect().await?,
            _ => return Err(BasaltError::Internal("a count gave no rows".into())),
        };
        let n = batches
            .first()
            .filter(|b| b.num_rows() > 0)
            .map(|b| {
                datafusion::arrow::compute::cast(
                    b.column(0),
                    &datafusion::arrow::datatypes::DataType::Int64,
                )
            })
            .transpose()
            .map_err(|e| BasaltError::Internal(e.to_string()))?
            .and_then(|a| {
                a.as_any()
                    .downcast_ref::<datafusion::arrow::array::Int64Array>()
                    .map(|a| a.value(0))
            })
            .unwrap_or(0);
        Ok(n)
    }
}

fn order_by_text(order_by: &[ast::OrderByExpr]) -> String {
    match order_by.is_empty() {
        true => String::new(),
        false => format!(
            " ORDER BY {}",
            order_by
                .iter()
                .map(|o| o.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn parse_query(sql: &str) -> Result<Box<Query>> {
    match basalt_sql::parse_one(sql)? {
        basalt_sql::Statement::Standard(s) => match *s {
            ast::Statement::Query(q) => Ok(q),
            _ => Err(BasaltError::Internal(format!("not a query: {sql}"))),
        },
        _ => Err(BasaltError::Internal(format!("not a query: {sql}"))),
    }
}
