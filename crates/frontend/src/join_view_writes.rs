//! Writes through views that `view_writes` cannot turn into a write on one table: views that
//! join tables (MySQL's join views), and views named among the tables of a multiple-table
//! UPDATE or DELETE. Each view named is laid out over its tables (`view_merge`) where it
//! stood, its WHERE joins the statement's (the ON of its join when it is the inner side of a
//! LEFT JOIN), and the statement's references to its columns become their expressions: the
//! statement is then an ordinary multiple-table UPDATE or DELETE (`multi_table_plan`).
//!
//! MySQL's rules for join views: an UPDATE changes the columns of one of its tables (1393
//! otherwise), an INSERT names its columns (1394) and they are one table's (1393), a DELETE
//! is refused (1395). A view column that is an expression takes no value (1348, and 1471 for
//! INSERT). `WITH CHECK OPTION`: the rows an UPDATE leaves must meet the view's checked
//! conditions; `check_conditions` gives them over the statement's tables and new values.

use crate::engine::split_name;
use crate::join_operators::join_constraint_mut;
use crate::session::Session;
use crate::view_merge::{merge, resolve, Merged};
use basalt_catalog::Catalog;
use basalt_common::{BasaltError, Result};
use basalt_sql::ast::{
    self, AssignmentTarget, BinaryOperator, Expr, FromTable, Ident, ObjectName, ObjectNamePart,
    TableFactor, TableObject, TableWithJoins, UpdateTableFromKind,
};

/// A view the statement names, laid out.
struct Named {
    /// The name the statement gives it (its alias, else its name).
    qualifier: String,
    /// `db.view`, for messages.
    label: String,
    merged: Merged,
}

/// A check option an UPDATE must keep: rows for which `condition` is not true fail it.
pub(crate) struct ViewCheck {
    pub label: String,
    /// Over the statement's tables, the assigned columns replaced by their new values.
    pub condition: Expr,
}

fn view_label(db: &str, name: &str) -> String {
    format!("{db}.{name}")
}

fn quoted(name: &str) -> Ident {
    Ident::with_quote('`', name)
}

fn idents(name: &ObjectName) -> Vec<Ident> {
    name.0
        .iter()
        .filter_map(|p| p.as_ident().cloned())
        .collect()
}

pub(crate) fn and(a: Option<Expr>, b: Expr) -> Expr {
    let nested = |e: Expr| match e {
        Expr::Identifier(_) | Expr::CompoundIdentifier(_) | Expr::Value(_) | Expr::Nested(_) => e,
        other => Expr::Nested(Box::new(other)),
    };
    match a {
        Some(a) => Expr::BinaryOp {
            left: Box::new(nested(a)),
            op: BinaryOperator::And,
            right: Box::new(nested(b)),
        },
        None => b,
    }
}

/// The views among a statement's tables, in the order a walk of them meets them.
struct Views<'a> {
    catalog: &'a dyn Catalog,
    session: &'a Session,
    statement: &'static str,
    named: Vec<Named>,
}

impl Views<'_> {
    /// The view a table factor names, if it names one.
    fn view_of(
        &self,
        factor: &TableFactor,
    ) -> Option<(std::sync::Arc<basalt_catalog::ViewMeta>, String)> {
        let TableFactor::Table {
            name,
            alias,
            args: None,
            ..
        } = factor
        else {
            return None;
        };
        let (db, table) = split_name(name);
        let db = db.or_else(|| self.session.database())?;
        let view = self.catalog.view(&db, &table)?;
        let qualifier = alias
            .as_ref()
            .map_or_else(|| table.clone(), |a| a.name.value.clone());
        Some((view, qualifier))
    }

    fn collect(&mut self, t: &TableWithJoins) -> Result<()> {
        self.factor(&t.relation)?;
        for j in &t.joins {
            self.factor(&j.relation)?;
        }
        Ok(())
    }

    fn factor(&mut self, factor: &TableFactor) -> Result<()> {
        if let TableFactor::NestedJoin {
            table_with_joins, ..
        } = factor
        {
            return self.collect(table_with_joins);
        }
        let Some((view, qualifier)) = self.view_of(factor) else {
            return Ok(());
        };
        let merged =
            merge(self.catalog, &view, &qualifier)?.ok_or_else(|| BasaltError::NotUpdatable {
                table: view.name.clone(),
                statement: self.statement,
            })?;
        self.named.push(Named {
            qualifier,
            label: view_label(&view.database, &view.name),
            merged,
        });
        Ok(())
    }

    /// What a column reference of the statement is when it names a view's column.
    fn lookup(&self, parts: &[Ident]) -> Option<Expr> {
        self.owner(parts)
            .and_then(|(n, c)| self.named[n].merged.column(&c).cloned())
    }

    /// The view (index) and column a reference names, if it names a view's column.
    fn owner(&self, parts: &[Ident]) -> Option<(usize, String)> {
        match parts {
            [c] => {
                let mut hits = self
                    .named
                    .iter()
                    .enumerate()
                    .filter(|(_, n)| n.merged.column(&c.value).is_some());
                let (i, _) = hits.next()?;
                match hits.next() {
                    Some(_) => None,
                    None => Some((i, c.value.clone())),
                }
            }
            [.., q, c] => self
                .named
                .iter()
                .position(|n| n.qualifier.eq_ignore_ascii_case(&q.value))
                .filter(|&i| self.named[i].merged.column(&c.value).is_some())
                .map(|i| (i, c.value.clone())),
            [] => None,
        }
    }

    /// The ON conditions of the statement's own joins over the views' tables.
    fn join_conditions(&self, t: &mut TableWithJoins) {
        crate::view_merge::resolve_join_conditions(t, &|parts| self.lookup(parts));
    }

    /// Puts each view's layout where it was named; the WHEREs of views on the inner side of
    /// a LEFT JOIN join its ON, the others are returned for the statement's WHERE.
    fn replace(&self, t: &mut TableWithJoins, next: &mut usize, wheres: &mut Vec<Expr>) {
        self.replace_factor(&mut t.relation, next, wheres);
        for j in t.joins.iter_mut() {
            let mut own = Vec::new();
            self.replace_factor(&mut j.relation, next, &mut own);
            let inner_side = matches!(
                j.join_operator,
                ast::JoinOperator::Left(_) | ast::JoinOperator::LeftOuter(_)
            );
            match join_constraint_mut(&mut j.join_operator) {
                Some(ast::JoinConstraint::On(on)) if inner_side => {
                    for w in own {
                        *on = and(Some(on.clone()), w);
                    }
                }
                _ => wheres.extend(own),
            }
        }
    }

    fn replace_factor(&self, factor: &mut TableFactor, next: &mut usize, wheres: &mut Vec<Expr>) {
        if let TableFactor::NestedJoin {
            table_with_joins, ..
        } = factor
        {
            return self.replace(table_with_joins, next, wheres);
        }
        if self.view_of(factor).is_none() {
            return;
        }
        let Some(n) = self.named.get(*next) else {
            return;
        };
        *next += 1;
        *factor = n.merged.factor();
        wheres.extend(n.merged.conditions.iter().map(|c| c.expr.clone()));
    }
}

/// A laid-out single view standing alone as a statement's table: its joins as the
/// statement's (so that the statement is planned as one over several tables).
fn flatten(t: &mut TableWithJoins) {
    if !t.joins.is_empty() {
        return;
    }
    if let TableFactor::NestedJoin {
        table_with_joins,
        alias: None,
    } = &t.relation
    {
        *t = (**table_with_joins).clone();
    }
}

/// An UPDATE naming views among its tables (or one join view) as one over their tables;
/// `None` when it names no view. The check options it must keep are returned.
pub(crate) fn merge_update(
    catalog: &dyn Catalog,
    session: &Session,
    update: &mut ast::Update,
) -> Result<Option<Vec<ViewCheck>>> {
    let mut views = Views {
        catalog,
        session,
        statement: "UPDATE",
        named: vec![],
    };
    views.collect(&update.table)?;
    if let Some(UpdateTableFromKind::AfterSet(more) | UpdateTableFromKind::BeforeSet(more)) =
        &update.from
    {
        for t in more {
            views.collect(t)?;
        }
    }
    if views.named.is_empty() {
        return Ok(None);
    }
    views.join_conditions(&mut update.table);
    // Per view: the (table, column, new value) its assignments set.
    let mut assigned: Vec<Vec<(String, String, Expr)>> = vec![vec![]; views.named.len()];
    for a in update.assignments.iter_mut() {
        resolve(&mut a.value, &|parts| views.lookup(parts));
        let AssignmentTarget::ColumnName(name) = &mut a.target else {
            continue;
        };
        let Some((n, column)) = views.owner(&idents(name)) else {
            continue;
        };
        let Some((alias, base)) = views.named[n].merged.base_column(&column) else {
            return Err(BasaltError::ColumnNotUpdatable(column));
        };
        *name = ObjectName(vec![
            ObjectNamePart::Identifier(quoted(&alias)),
            ObjectNamePart::Identifier(base.clone()),
        ]);
        assigned[n].push((alias, base.value.clone(), a.value.clone()));
    }
    for (n, set) in views.named.iter().zip(&assigned) {
        if set.iter().any(|(alias, ..)| *alias != set[0].0) {
            return Err(BasaltError::JoinViewManyTables(n.label.clone()));
        }
    }
    if let Some(w) = update.selection.as_mut() {
        resolve(w, &|parts| views.lookup(parts));
    }
    let checks = views
        .named
        .iter()
        .zip(&assigned)
        .filter(|(_, set)| !set.is_empty())
        .filter_map(|(n, set)| {
            let checked = n
                .merged
                .conditions
                .iter()
                .filter(|c| c.checked)
                .map(|c| c.expr.clone())
                .reduce(|a, b| and(Some(a), b))?;
            let mut condition = checked;
            resolve(&mut condition, &|parts| match parts {
                [alias, column] => set
                    .iter()
                    .rev()
                    .find(|(a, c, _)| *a == alias.value && c.eq_ignore_ascii_case(&column.value))
                    .map(|(_, _, v)| v.clone()),
                _ => None,
            });
            Some(ViewCheck {
                label: n.label.clone(),
                condition,
            })
        })
        .collect();
    let mut wheres = Vec::new();
    let mut next = 0;
    views.replace(&mut update.table, &mut next, &mut wheres);
    if let Some(UpdateTableFromKind::AfterSet(more) | UpdateTableFromKind::BeforeSet(more)) =
        &mut update.from
    {
        for t in more.iter_mut() {
            views.replace(t, &mut next, &mut wheres);
        }
    }
    flatten(&mut update.table);
    for w in wheres {
        update.selection = Some(and(update.selection.take(), w));
    }
    Ok(Some(checks))
}

/// A multiple-table DELETE naming views among its tables as one over their tables; false when
/// it names no view.
pub(crate) fn merge_delete(
    catalog: &dyn Catalog,
    session: &Session,
    delete: &mut ast::Delete,
) -> Result<bool> {
    let mut views = Views {
        catalog,
        session,
        statement: "DELETE",
        named: vec![],
    };
    let from = match &mut delete.from {
        FromTable::WithFromKeyword(f) | FromTable::WithoutKeyword(f) => f,
    };
    // The tables the rows come from, and the names of those to delete from.
    let (tables, targets): (&mut Vec<TableWithJoins>, Vec<&mut ObjectName>) =
        match &mut delete.using {
            Some(using) => (
                using,
                from.iter_mut()
                    .filter_map(|t| match &mut t.relation {
                        TableFactor::Table { name, .. } => Some(name),
                        _ => None,
                    })
                    .collect(),
            ),
            None => (from, delete.tables.iter_mut().collect()),
        };
    for t in tables.iter() {
        views.collect(t)?;
    }
    if views.named.is_empty() {
        return Ok(false);
    }
    for target in targets {
        let parts: Vec<Ident> = idents(target)
            .into_iter()
            .filter(|i| i.value != "*")
            .collect();
        let Some(last) = parts.last() else { continue };
        let Some(n) = views
            .named
            .iter()
            .find(|n| n.qualifier.eq_ignore_ascii_case(&last.value))
        else {
            continue;
        };
        if n.merged.is_join() {
            return Err(BasaltError::JoinViewDelete(n.label.clone()));
        }
        if let Some(base) = n.merged.bases.first() {
            *target = ObjectName(vec![ObjectNamePart::Identifier(quoted(&base.alias))]);
        }
    }
    for t in tables.iter_mut() {
        views.join_conditions(t);
    }
    if let Some(w) = delete.selection.as_mut() {
        resolve(w, &|parts| views.lookup(parts));
    }
    let mut wheres = Vec::new();
    let mut next = 0;
    for t in tables.iter_mut() {
        views.replace(t, &mut next, &mut wheres);
    }
    for w in wheres {
        delete.selection = Some(and(delete.selection.take(), w));
    }
    Ok(true)
}

/// An INSERT into a join view as the INSERT into the one table whose columns it names.
pub(crate) fn insert_into_join_view(
    merged: &Merged,
    label: &str,
    view_name: &str,
    insert: &mut ast::Insert,
) -> Result<()> {
    if insert.columns.is_empty() {
        return Err(BasaltError::JoinViewNoFields(label.to_string()));
    }
    if merged.conditions.iter().any(|c| c.checked) {
        return Err(BasaltError::NotSupported(format!(
            "INSERT into {label}, a view joining tables WITH CHECK OPTION"
        )));
    }
    let base_of = |c: &str| -> Result<(String, Ident)> {
        match merged.base_column(c) {
            Some(b) => Ok(b),
            None if merged.column(c).is_some() => {
                Err(BasaltError::NotInsertable(view_name.to_string()))
            }
            None => Err(BasaltError::UnknownColumn {
                column: c.to_string(),
                context: "field list".into(),
            }),
        }
    };
    let mut table: Option<String> = None;
    let mut one_table = |alias: String| -> Result<()> {
        match &table {
            Some(t) if *t != alias => Err(BasaltError::JoinViewManyTables(label.to_string())),
            _ => {
                table = Some(alias);
                Ok(())
            }
        }
    };
    let mut columns = Vec::with_capacity(insert.columns.len());
    for c in &insert.columns {
        let name = idents(c)
            .last()
            .map(|i| i.value.clone())
            .unwrap_or_default();
        let (alias, column) = base_of(&name)?;
        one_table(alias)?;
        columns.push(ObjectName(vec![ObjectNamePart::Identifier(column)]));
    }
    if let Some(ast::OnInsert::DuplicateKeyUpdate(assignments)) = insert.on.as_mut() {
        for a in assignments.iter_mut() {
            if let AssignmentTarget::ColumnName(n) = &mut a.target {
                let name = idents(n)
                    .last()
                    .map(|i| i.value.clone())
                    .unwrap_or_default();
                let (alias, column) = base_of(&name)?;
                one_table(alias)?;
                *n = ObjectName(vec![ObjectNamePart::Identifier(column)]);
            }
        }
    }
    let alias = table.unwrap_or_default();
    let base = merged
        .base(&alias)
        .ok_or_else(|| BasaltError::Internal(format!("join view {label} lost table {alias}")))?;
    // The new values name the view's columns of that table by the table's names; one
    // reading another table's column would change more than the one table.
    if let Some(ast::OnInsert::DuplicateKeyUpdate(assignments)) = insert.on.as_mut() {
        let elsewhere = std::cell::Cell::new(false);
        for a in assignments.iter_mut() {
            resolve(&mut a.value, &|parts| {
                let c = parts.last()?;
                merged.column(&c.value)?;
                match merged.base_column(&c.value) {
                    Some((a, column)) if a == alias => Some(Expr::Identifier(column)),
                    _ => {
                        elsewhere.set(true);
                        None
                    }
                }
            });
        }
        if elsewhere.get() {
            return Err(BasaltError::JoinViewManyTables(label.to_string()));
        }
    }
    insert.table = TableObject::TableName(ObjectName(vec![
        ObjectNamePart::Identifier(quoted(&base.database)),
        ObjectNamePart::Identifier(quoted(&base.table)),
    ]));
    insert.table_alias = None;
    insert.columns = columns;
    Ok(())
}
