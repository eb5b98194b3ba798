//! A view's SELECT laid out over the tables it reads (MySQL's MERGE algorithm), for writes
//! that go through a view joining several tables or that name views among the tables of a
//! multiple-table UPDATE or DELETE.
//!
//! A view can be merged when its SELECT is one SELECT (no set operation, WITH or LIMIT)
//! without DISTINCT, GROUP BY, HAVING or aggregates, reading tables and mergeable views (no
//! derived tables or table functions), and it is not ALGORITHM=TEMPTABLE: what MySQL calls an
//! updatable view (`information_schema.VIEWS.IS_UPDATABLE`).
//!
//! The layout is the view's FROM with each table given a name of its own: the name the
//! statement gives the view when the view reads one table (so `v.col` in the statement is that
//! table's column), else `<view>#<table>`; views under it are laid out in their place. Each
//! view column becomes its expression over those names, and the view's WHERE (and those of the
//! views under it) a condition the statement's rows must meet; a check option marks the
//! conditions rows written must still meet (CASCADED: those of the views under it too), with
//! the ON conditions of its inner joins.

use crate::engine::split_name;
use crate::join_operators::join_constraint_mut;
use basalt_catalog::{Catalog, ViewAlgorithm, ViewCheckOption, ViewMeta};
use basalt_common::Result;
use basalt_sql::ast::{
    self, Expr, GroupByExpr, Ident, ObjectName, ObjectNamePart, Query, SelectItem,
    SelectItemQualifiedWildcardKind, SetExpr, TableAlias, TableFactor, TableWithJoins, VisitMut,
    VisitorMut,
};
use std::ops::ControlFlow;

/// Views inside views stop here (as their expansion does).
const MAX_DEPTH: usize = 64;

/// A table the layout reads.
pub(crate) struct Base {
    /// Its name in the layout.
    pub alias: String,
    pub database: String,
    pub table: String,
}

/// A view's WHERE over the layout's names.
pub(crate) struct Condition {
    pub expr: Expr,
    /// A check option asks rows written to still meet it.
    pub checked: bool,
}

/// A view laid out over its tables (see the module doc).
pub(crate) struct Merged {
    /// The view's FROM, its tables renamed.
    pub from: TableWithJoins,
    /// The view's columns in order, each with its expression over the layout.
    pub columns: Vec<(String, Expr)>,
    pub conditions: Vec<Condition>,
    pub bases: Vec<Base>,
}

impl Merged {
    /// The expression of a view column.
    pub fn column(&self, name: &str) -> Option<&Expr> {
        self.columns
            .iter()
            .find(|(c, _)| c.eq_ignore_ascii_case(name))
            .map(|(_, e)| e)
    }

    /// The table (by its layout name) and column a view column is, when it is a column of
    /// one table rather than an expression.
    pub fn base_column(&self, name: &str) -> Option<(String, Ident)> {
        match self.column(name)? {
            Expr::CompoundIdentifier(parts) => match parts.as_slice() {
                [alias, column] => Some((alias.value.clone(), column.clone())),
                _ => None,
            },
            _ => None,
        }
    }

    /// The base table a layout name stands for.
    pub fn base(&self, alias: &str) -> Option<&Base> {
        self.bases.iter().find(|b| b.alias == alias)
    }

    /// Whether the view reads more than one table (MySQL's join view).
    pub fn is_join(&self) -> bool {
        self.bases.len() > 1
    }

    /// The layout as one table factor, to stand where the view was named.
    pub fn factor(&self) -> TableFactor {
        match self.from.joins.is_empty() {
            true => self.from.relation.clone(),
            false => TableFactor::NestedJoin {
                table_with_joins: Box::new(self.from.clone()),
                alias: None,
            },
        }
    }
}

/// Whether `view` can be merged (is updatable, in MySQL's words).
pub(crate) fn is_mergeable(catalog: &dyn Catalog, view: &ViewMeta) -> bool {
    matches!(merge(catalog, view, &view.name), Ok(Some(_)))
}

/// `view` laid out over its tables, named `name` in the statement; `None` when it cannot be.
pub(crate) fn merge(catalog: &dyn Catalog, view: &ViewMeta, name: &str) -> Result<Option<Merged>> {
    merge_at(catalog, view, name, 0)
}

/// One table of a view's FROM, as the view's own expressions name it.
struct Scope {
    /// The name the view's SELECT gives it (lower case).
    qualifier: String,
    columns: Vec<(String, Expr)>,
}

/// What laying out a FROM collects.
struct Layout<'a> {
    catalog: &'a dyn Catalog,
    database: &'a str,
    name: &'a str,
    /// The FROM reads one table: it takes the view's name.
    single: bool,
    depth: usize,
    cascaded: bool,
    scopes: Vec<Scope>,
    bases: Vec<Base>,
    conditions: Vec<Condition>,
}

fn merge_at(
    catalog: &dyn Catalog,
    view: &ViewMeta,
    name: &str,
    depth: usize,
) -> Result<Option<Merged>> {
    if depth > MAX_DEPTH || view.algorithm == ViewAlgorithm::Temptable {
        return Ok(None);
    }
    let query = match basalt_sql::parse_one(&view.definition)? {
        basalt_sql::Statement::Standard(s) => match *s {
            ast::Statement::Query(q) => q,
            _ => return Ok(None),
        },
        _ => return Ok(None),
    };
    if query.with.is_some() || query.limit_clause.is_some() || query.fetch.is_some() {
        return Ok(None);
    }
    let SetExpr::Select(select) = *query.body else {
        return Ok(None);
    };
    let grouped = match &select.group_by {
        GroupByExpr::All(_) => true,
        GroupByExpr::Expressions(e, _) => !e.is_empty(),
    };
    if select.distinct.is_some()
        || grouped
        || select.having.is_some()
        || select.from.is_empty()
        || has_aggregate(&select.projection)
    {
        return Ok(None);
    }
    let mut from = select.from.clone();
    let single = from.len() == 1
        && from[0].joins.is_empty()
        && matches!(from[0].relation, TableFactor::Table { .. });
    let mut layout = Layout {
        catalog,
        database: &view.database,
        name,
        single,
        depth,
        cascaded: view.check_option == ViewCheckOption::Cascaded,
        scopes: vec![],
        bases: vec![],
        conditions: vec![],
    };
    for t in from.iter_mut() {
        if !layout.table(&mut t.relation)? {
            return Ok(None);
        }
        for j in t.joins.iter_mut() {
            if !layout.table(&mut j.relation)? {
                return Ok(None);
            }
        }
    }
    // The joins' conditions, once every table has its name.
    for t in from.iter_mut() {
        layout.join_conditions(t);
    }
    let mut exprs = Vec::new();
    for item in &select.projection {
        match item {
            SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => {
                let mut e = e.clone();
                resolve(&mut e, &|parts| layout.lookup(parts));
                exprs.push((item_name(item), e));
            }
            SelectItem::Wildcard(_) => {
                for s in &layout.scopes {
                    exprs.extend(s.columns.iter().cloned());
                }
            }
            SelectItem::QualifiedWildcard(SelectItemQualifiedWildcardKind::ObjectName(q), _) => {
                let (_, q) = split_name(q);
                let Some(s) = layout.scope(&q) else {
                    return Ok(None);
                };
                exprs.extend(s.columns.iter().cloned());
            }
            _ => return Ok(None),
        }
    }
    let columns = match view.columns.is_empty() {
        true => exprs,
        false if view.columns.len() == exprs.len() => view
            .columns
            .iter()
            .cloned()
            .zip(exprs.into_iter().map(|(_, e)| e))
            .collect(),
        false => return Ok(None),
    };
    let mut conditions = std::mem::take(&mut layout.conditions);
    // A check option checks the ON conditions of the view's inner joins too.
    if view.check_option != ViewCheckOption::None {
        let mut ons = Vec::new();
        for t in &from {
            inner_join_conditions(t, &mut ons);
        }
        conditions.extend(ons.into_iter().map(|expr| Condition {
            expr,
            checked: true,
        }));
    }
    if let Some(mut w) = select.selection.clone() {
        resolve(&mut w, &|parts| layout.lookup(parts));
        conditions.push(Condition {
            expr: w,
            checked: view.check_option != ViewCheckOption::None,
        });
    }
    // Laid out as one FROM: a comma list is a chain of cross joins.
    let mut tables = from.into_iter();
    let Some(mut first) = tables.next() else {
        return Ok(None);
    };
    for t in tables {
        first.joins.push(ast::Join {
            relation: match t.joins.is_empty() {
                true => t.relation,
                false => TableFactor::NestedJoin {
                    table_with_joins: Box::new(t),
                    alias: None,
                },
            },
            global: false,
            join_operator: ast::JoinOperator::CrossJoin(ast::JoinConstraint::None),
        });
    }
    Ok(Some(Merged {
        from: first,
        columns,
        conditions,
        bases: layout.bases,
    }))
}

impl Layout<'_> {
    fn scope(&self, qualifier: &str) -> Option<&Scope> {
        let q = qualifier.to_lowercase();
        self.scopes.iter().find(|s| s.qualifier == q)
    }

    /// What a column reference of the view's SELECT is over the layout.
    fn lookup(&self, parts: &[Ident]) -> Option<Expr> {
        let find = |s: &Scope, c: &str| {
            s.columns
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(c))
                .map(|(_, e)| e.clone())
        };
        match parts {
            [c] => self.scopes.iter().find_map(|s| find(s, &c.value)),
            [.., q, c] => find(self.scope(&q.value)?, &c.value),
            [] => None,
        }
    }

    /// Lays out one table factor in place; false when the view cannot be merged.
    fn table(&mut self, factor: &mut TableFactor) -> Result<bool> {
        match factor {
            TableFactor::Table {
                name,
                alias,
                args: None,
                ..
            } => {
                let (db, table) = split_name(name);
                let db = db.unwrap_or_else(|| self.database.to_string());
                let qualifier = alias
                    .as_ref()
                    .map_or_else(|| table.clone(), |a| a.name.value.clone());
                let renamed = match self.single {
                    true => self.name.to_string(),
                    false => format!("{}#{}", self.name, qualifier),
                };
                if let Some(inner) = self.catalog.view(&db, &table) {
                    let Some(m) = merge_at(self.catalog, &inner, &renamed, self.depth + 1)? else {
                        return Ok(false);
                    };
                    let cascaded = self.cascaded;
                    self.conditions
                        .extend(m.conditions.iter().map(|c| Condition {
                            expr: c.expr.clone(),
                            checked: c.checked || cascaded,
                        }));
                    *factor = m.factor();
                    self.scopes.push(Scope {
                        qualifier: qualifier.to_lowercase(),
                        columns: m.columns,
                    });
                    self.bases.extend(m.bases);
                    return Ok(true);
                }
                let Ok(meta) = self.catalog.table(&db, &table) else {
                    return Ok(false);
                };
                let columns = meta
                    .columns
                    .iter()
                    .map(|c| {
                        (
                            c.name.clone(),
                            Expr::CompoundIdentifier(vec![quoted(&renamed), quoted(&c.name)]),
                        )
                    })
                    .collect();
                *name = ObjectName(vec![
                    ObjectNamePart::Identifier(quoted(&db)),
                    ObjectNamePart::Identifier(quoted(&table)),
                ]);
                *alias = Some(TableAlias {
                    explicit: true,
                    name: quoted(&renamed),
                    columns: vec![],
                    at: None,
                });
                self.scopes.push(Scope {
                    qualifier: qualifier.to_lowercase(),
                    columns,
                });
                self.bases.push(Base {
                    alias: renamed,
                    database: db,
                    table,
                });
                Ok(true)
            }
            TableFactor::NestedJoin {
                table_with_joins,
                alias: None,
            } => {
                if !self.table(&mut table_with_joins.relation)? {
                    return Ok(false);
                }
                for j in table_with_joins.joins.iter_mut() {
                    if !self.table(&mut j.relation)? {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// The ON conditions of a laid-out FROM over the layout's names.
    fn join_conditions(&self, t: &mut TableWithJoins) {
        resolve_join_conditions(t, &|parts| self.lookup(parts));
    }
}

/// The ON conditions of the inner joins of a FROM (those inside parenthesized inner joins
/// too): every row of the join meets them.
fn inner_join_conditions(t: &TableWithJoins, out: &mut Vec<Expr>) {
    if let TableFactor::NestedJoin {
        table_with_joins, ..
    } = &t.relation
    {
        inner_join_conditions(table_with_joins, out);
    }
    for j in &t.joins {
        let (ast::JoinOperator::Join(c)
        | ast::JoinOperator::Inner(c)
        | ast::JoinOperator::CrossJoin(c)
        | ast::JoinOperator::StraightJoin(c)) = &j.join_operator
        else {
            continue;
        };
        if let TableFactor::NestedJoin {
            table_with_joins, ..
        } = &j.relation
        {
            inner_join_conditions(table_with_joins, out);
        }
        if let ast::JoinConstraint::On(on) = c {
            out.push(on.clone());
        }
    }
}

/// The name a select item gives its column.
fn item_name(item: &SelectItem) -> String {
    match item {
        SelectItem::ExprWithAlias { alias, .. } => alias.value.clone(),
        SelectItem::UnnamedExpr(Expr::Identifier(i)) => i.value.clone(),
        SelectItem::UnnamedExpr(Expr::CompoundIdentifier(parts)) => {
            parts.last().map(|i| i.value.clone()).unwrap_or_default()
        }
        other => other.to_string(),
    }
}

fn quoted(name: &str) -> Ident {
    Ident::with_quote('`', name)
}

/// Replaces the column references of `expr` (outside its subqueries) that `lookup` knows by
/// what it gives; others are left as written.
pub(crate) fn resolve(expr: &mut Expr, lookup: &dyn Fn(&[Ident]) -> Option<Expr>) {
    struct Sub<'a> {
        lookup: &'a dyn Fn(&[Ident]) -> Option<Expr>,
        depth: usize,
    }
    impl VisitorMut for Sub<'_> {
        type Break = ();
        fn pre_visit_query(&mut self, _: &mut Query) -> ControlFlow<()> {
            self.depth += 1;
            ControlFlow::Continue(())
        }
        fn post_visit_query(&mut self, _: &mut Query) -> ControlFlow<()> {
            self.depth -= 1;
            ControlFlow::Continue(())
        }
        fn post_visit_expr(&mut self, expr: &mut Expr) -> ControlFlow<()> {
            if self.depth > 0 {
                return ControlFlow::Continue(());
            }
            let found = match expr {
                Expr::Identifier(i) => (self.lookup)(std::slice::from_ref(i)),
                Expr::CompoundIdentifier(parts) => (self.lookup)(parts),
                _ => None,
            };
            if let Some(to) = found {
                *expr = crate::view_writes::nested(to);
            }
            ControlFlow::Continue(())
        }
    }
    let _ = expr.visit(&mut Sub { lookup, depth: 0 });
}

/// The ON conditions of `t`'s joins (nested ones too) with their names resolved by `lookup`
/// (as [`resolve`]).
pub(crate) fn resolve_join_conditions(
    t: &mut TableWithJoins,
    lookup: &dyn Fn(&[Ident]) -> Option<Expr>,
) {
    if let TableFactor::NestedJoin {
        table_with_joins, ..
    } = &mut t.relation
    {
        resolve_join_conditions(table_with_joins, lookup);
    }
    for j in t.joins.iter_mut() {
        if let TableFactor::NestedJoin {
            table_with_joins, ..
        } = &mut j.relation
        {
            resolve_join_conditions(table_with_joins, lookup);
        }
        if let Some(ast::JoinConstraint::On(e)) = join_constraint_mut(&mut j.join_operator) {
            resolve(e, lookup);
        }
    }
}

/// An aggregate call among the select items (`COUNT(*)`, `SUM(a)`, ..), at any depth.
pub(crate) fn has_aggregate(items: &[SelectItem]) -> bool {
    items.iter().any(|item| {
        ast::visit_expressions(item, |e| match e {
            Expr::Function(f)
                if crate::tableless_subqueries::is_aggregate(
                    &f.name.to_string().to_lowercase(),
                ) =>
            {
                ControlFlow::Break(())
            }
            _ => ControlFlow::Continue(()),
        })
        .is_break()
    })
}
