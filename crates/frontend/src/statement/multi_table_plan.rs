//! Planning of multiple-table DELETE and UPDATE: which tables a statement changes, and the one
//! query over its joined tables that finds each one's rows.
//!
//! Forms: MySQL's `DELETE t1[, t2] FROM <tables> [WHERE ..]`, `DELETE FROM t1[, t2] USING
//! <tables> [WHERE ..]`, `UPDATE <tables> SET .. [WHERE ..]` (a comma list or joins); Doris's
//! `DELETE FROM t USING <other tables> WHERE ..` (t itself not among them: it joins them)
//! and `UPDATE t SET .. FROM <other tables> WHERE ..` (only t is assigned).
//!
//! A DELETE's targets are named by alias when the FROM gives one, else by table name; a name
//! that is none of them is MySQL's 1109. An UPDATE's targets are the tables its assignments
//! name: `alias.col` / `table.col`, or a bare column that exactly one table has (1052 when
//! several do, 1054 when none). ORDER BY and LIMIT are refused (1221 for UPDATE; a syntax
//! error for DELETE, whose grammar has neither in MySQL). `UPDATE IGNORE` of one table is
//! planned here too, as a join of that one table.
//!
//! Each target's query selects, per joined row, every column of the target's row (storage
//! order) and, for UPDATE, each assigned column's new value after them. A target row may come
//! out once per row it joins; `multi_table_apply` keeps its first.

use crate::catalog_provider::Services;
use crate::engine::split_name;
use crate::session::Session;
use crate::statement::ddl::database_of;
use crate::statement::dml::{quoted, row_query};
use basalt_catalog::{KeysModel, TableMeta};
use basalt_common::{BasaltError, Result};
use basalt_sql::ast::{
    self, AssignmentTarget, Expr, FromTable, Ident, ObjectName, SelectItem, TableFactor,
    TableWithJoins, UpdateTableFromKind,
};
use std::sync::Arc;

/// One table a statement changes and the query that finds its rows.
pub(crate) struct Target {
    pub table: Arc<TableMeta>,
    /// Every column of the target's matching rows, then (UPDATE) the assigned values.
    pub query: ast::Query,
    /// UPDATE: for each column of the table, where among the query's columns its new value
    /// is (`None`: kept).
    pub assigned: Vec<Option<usize>>,
}

/// Whether a DELETE names more than its one table (a target list or USING).
pub(crate) fn is_multi_delete(delete: &ast::Delete) -> bool {
    !delete.tables.is_empty() || delete.using.is_some()
}

/// Whether an UPDATE reads more than the table it changes (joins, a table list or FROM).
pub(crate) fn is_multi_update(update: &ast::Update) -> bool {
    update.from.is_some() || !update.table.joins.is_empty()
}

/// Whether an UPDATE is planned here: one over several tables, or `UPDATE IGNORE` (whose
/// values are fitted as outside strict mode, which this path does for any table).
pub(crate) fn is_planned_here(update: &ast::Update) -> bool {
    is_multi_update(update) || update.or == Some(ast::SqliteOnConflict::Ignore)
}

/// A table (or derived table) of the statement's FROM: how its columns are named, and the
/// table when it is one.
struct Source {
    /// The alias, if the statement gives one.
    alias: Option<String>,
    /// Database and name, for a table.
    name: Option<(String, String)>,
    /// What qualifies its columns in the row query.
    qualifier: Vec<Ident>,
    meta: Option<Arc<TableMeta>>,
    /// Its place in the FROM, for messages.
    shown: String,
}

/// The tables of `from`, in order (tables inside parenthesized joins too).
fn sources(services: &Services, session: &Session, from: &[TableWithJoins]) -> Result<Vec<Source>> {
    let mut out = Vec::new();
    for t in from {
        collect(services, session, &t.relation, &mut out)?;
        for join in &t.joins {
            collect(services, session, &join.relation, &mut out)?;
        }
    }
    Ok(out)
}

fn collect(
    services: &Services,
    session: &Session,
    factor: &TableFactor,
    out: &mut Vec<Source>,
) -> Result<()> {
    match factor {
        TableFactor::Table { name, alias, .. } => {
            let (db, table) = split_name(name);
            let db = database_of(session, &db)?;
            // A view or missing table is no target; the row query reports a missing one.
            let meta = crate::transaction::storage(services, session)
                .catalog()
                .table(&db, &table)
                .ok();
            let alias = alias.as_ref().map(|a| a.name.value.clone());
            let qualifier = match &alias {
                Some(a) => vec![quoted(a)],
                None => name
                    .0
                    .iter()
                    .filter_map(|p| p.as_ident().cloned())
                    .collect(),
            };
            out.push(Source {
                shown: alias.clone().unwrap_or_else(|| table.clone()),
                alias,
                name: Some((db, table)),
                qualifier,
                meta,
            });
        }
        TableFactor::NestedJoin {
            table_with_joins, ..
        } => {
            collect(services, session, &table_with_joins.relation, out)?;
            for join in &table_with_joins.joins {
                collect(services, session, &join.relation, out)?;
            }
        }
        other => {
            let alias = match other {
                TableFactor::Derived { alias, .. } | TableFactor::Function { alias, .. } => {
                    alias.as_ref().map(|a| a.name.value.clone())
                }
                _ => None,
            };
            if let Some(alias) = alias {
                out.push(Source {
                    qualifier: vec![quoted(&alias)],
                    shown: alias.clone(),
                    alias: Some(alias),
                    name: None,
                    meta: None,
                });
            }
        }
    }
    Ok(())
}

/// The source a statement's `name` (`t`, `alias` or `db.t`) means.
fn find<'a>(session: &Session, sources: &'a [Source], name: &[Ident]) -> Option<&'a Source> {
    match name {
        [one] => sources.iter().find(|s| match (&s.alias, &s.name) {
            (Some(alias), _) => alias.eq_ignore_ascii_case(&one.value),
            (None, Some((_, table))) => table.eq_ignore_ascii_case(&one.value),
            (None, None) => false,
        }),
        [db, table] => {
            let db = database_of(session, &Some(db.value.clone())).ok()?;
            sources.iter().find(|s| {
                s.alias.is_none()
                    && s.name.as_ref().is_some_and(|(d, t)| {
                        d.eq_ignore_ascii_case(&db) && t.eq_ignore_ascii_case(&table.value)
                    })
            })
        }
        _ => None,
    }
}

fn idents(name: &ObjectName) -> Vec<Ident> {
    name.0
        .iter()
        .filter_map(|p| p.as_ident().cloned())
        .collect()
}

/// The targets of a multiple-table DELETE, each with the query of its rows to delete.
pub(crate) fn plan_delete(
    services: &Services,
    session: &Session,
    delete: &ast::Delete,
) -> Result<Vec<Target>> {
    if delete.returning.is_some() || delete.output.is_some() {
        return Err(BasaltError::NotSupported("DELETE ... RETURNING".into()));
    }
    if !delete.order_by.is_empty() || delete.limit.is_some() {
        let clause = if delete.order_by.is_empty() {
            "LIMIT"
        } else {
            "ORDER BY"
        };
        return Err(BasaltError::Syntax {
            message: "a multiple-table DELETE has no ORDER BY or LIMIT".into(),
            near: clause.into(),
            line: 1,
        });
    }
    let from = match &delete.from {
        FromTable::WithFromKeyword(f) | FromTable::WithoutKeyword(f) => f,
    };
    let (names, mut tables): (Vec<Vec<Ident>>, Vec<TableWithJoins>) = match &delete.using {
        // DELETE t1, t2 FROM <tables>
        None => (delete.tables.iter().map(idents).collect(), from.clone()),
        // DELETE FROM t1, t2 USING <tables>
        Some(using) => {
            let mut names = Vec::new();
            for t in from {
                match &t.relation {
                    TableFactor::Table { name, .. } if t.joins.is_empty() => {
                        names.push(idents(name))
                    }
                    _ => {
                        return Err(BasaltError::NotSupported(
                            "DELETE FROM <joined tables> USING ..".into(),
                        ))
                    }
                }
            }
            (names, using.clone())
        }
    };
    let mut found = sources(services, session, &tables)?;
    // Doris: `DELETE FROM t USING t2 ..` joins t to the USING tables.
    if let (Some(_), [only]) = (&delete.using, from.as_slice()) {
        if names.len() == 1 && find(session, &found, &names[0]).is_none() {
            tables.insert(0, only.clone());
            found = sources(services, session, &tables)?;
        }
    }
    let mut targets: Vec<Target> = Vec::new();
    for name in &names {
        // `DELETE t1.* FROM ..` names t1.
        let name: Vec<Ident> = name.iter().filter(|i| i.value != "*").cloned().collect();
        let source =
            find(session, &found, &name).ok_or_else(|| BasaltError::UnknownTableInStatement {
                table: name.last().map(|i| i.value.clone()).unwrap_or_default(),
                statement: "MULTI DELETE",
            })?;
        let table = updatable(source, "DELETE")?;
        if targets.iter().any(|t| t.table.id == table.id) {
            continue;
        }
        let (rows_from, qualifier, present) = target_rows(&tables, &found, source);
        let projection = old_columns(&table, &qualifier);
        targets.push(Target {
            query: query(
                projection,
                &rows_from,
                both(delete.selection.clone(), present),
            )?,
            assigned: vec![None; table.columns.len()],
            table,
        });
    }
    Ok(targets)
}

/// The targets of a multiple-table UPDATE, each with the query of its rows' old and new values.
pub(crate) fn plan_update(
    services: &Services,
    session: &Session,
    update: &ast::Update,
) -> Result<Vec<Target>> {
    let ignore = update.or == Some(ast::SqliteOnConflict::Ignore);
    if update.returning.is_some() || update.output.is_some() || (update.or.is_some() && !ignore) {
        return Err(BasaltError::NotSupported(
            "UPDATE with RETURNING/OUTPUT/OR".into(),
        ));
    }
    let clause = match (update.order_by.is_empty(), update.limit.is_some()) {
        (false, _) => Some("ORDER BY"),
        (true, true) => Some("LIMIT"),
        (true, false) => None,
    };
    if let Some(clause) = clause {
        if !is_multi_update(update) {
            return Err(BasaltError::NotSupported(format!(
                "UPDATE IGNORE .. {clause}"
            )));
        }
        return Err(BasaltError::IncorrectUsage {
            statement: "UPDATE",
            clause,
        });
    }
    let mut tables = vec![update.table.clone()];
    let doris_form = matches!(update.from, Some(UpdateTableFromKind::AfterSet(_)));
    match &update.from {
        Some(UpdateTableFromKind::AfterSet(more) | UpdateTableFromKind::BeforeSet(more)) => {
            tables.extend(more.iter().cloned())
        }
        None => {}
    }
    let found = sources(services, session, &tables)?;
    // Doris's form assigns its first table only.
    let assignable = if doris_form {
        &found[..1.min(found.len())]
    } else {
        &found[..]
    };
    // Per source: its assigned columns and their values (a later assignment wins).
    let mut values: Vec<Vec<Option<Expr>>> = found
        .iter()
        .map(|s| vec![None; s.meta.as_ref().map_or(0, |m| m.columns.len())])
        .collect();
    for assignment in &update.assignments {
        let AssignmentTarget::ColumnName(name) = &assignment.target else {
            return Err(BasaltError::NotSupported("UPDATE of a column tuple".into()));
        };
        let parts = idents(name);
        let Some((column, qualifier)) = parts.split_last() else {
            return Err(BasaltError::NotSupported(
                "UPDATE of an unnamed column".into(),
            ));
        };
        let unknown = || BasaltError::UnknownColumn {
            column: parts
                .iter()
                .map(|i| i.value.as_str())
                .collect::<Vec<_>>()
                .join("."),
            context: "field list".into(),
        };
        let source = if qualifier.is_empty() {
            let mut having = assignable.iter().filter(|s| {
                s.meta
                    .as_ref()
                    .is_some_and(|m| m.column_index(&column.value).is_some())
            });
            let first = having.next().ok_or_else(unknown)?;
            if having.next().is_some() {
                return Err(BasaltError::AmbiguousColumn {
                    column: column.value.clone(),
                    context: "field list".into(),
                });
            }
            first
        } else {
            find(session, assignable, qualifier).ok_or_else(unknown)?
        };
        let table = updatable(source, "UPDATE")?;
        let index = table.column_index(&column.value).ok_or_else(unknown)?;
        let position = found
            .iter()
            .position(|s| std::ptr::eq(s, source))
            .ok_or_else(unknown)?;
        let mut value = assignment.value.clone();
        crate::bit_literals::for_column(&table.columns[index].ty, &mut value);
        values[position][index] = Some(value);
    }
    let mut targets: Vec<Target> = Vec::new();
    for (source, values) in found.iter().zip(values) {
        if values.iter().all(Option::is_none) {
            continue;
        }
        let table = updatable(source, "UPDATE")?;
        if targets.iter().any(|t| t.table.id == table.id) {
            return Err(BasaltError::NotSupported(format!(
                "UPDATE of table {} under two names in one statement",
                table.name
            )));
        }
        check_updatable(&table, &values, update)?;
        let (rows_from, qualifier, present) = target_rows(&tables, &found, source);
        let mut values = values;
        super::on_update_timestamp::assign_touched(&table, &mut values, |i| {
            let mut name = qualifier.clone();
            name.push(quoted(&table.columns[i].name));
            Expr::CompoundIdentifier(name)
        });
        let mut projection = old_columns(&table, &qualifier);
        let mut assigned = vec![None; table.columns.len()];
        for (i, value) in values.into_iter().enumerate() {
            if let Some(value) = value {
                assigned[i] = Some(projection.len());
                projection.push(SelectItem::ExprWithAlias {
                    expr: Expr::Nested(Box::new(value)),
                    alias: quoted(&format!("new {i}")),
                });
            }
        }
        targets.push(Target {
            query: query(
                projection,
                &rows_from,
                both(update.selection.clone(), present),
            )?,
            assigned,
            table,
        });
    }
    Ok(targets)
}

/// What a target must be: a table of the database.
fn updatable(source: &Source, statement: &'static str) -> Result<Arc<TableMeta>> {
    source
        .meta
        .clone()
        .ok_or_else(|| BasaltError::NotUpdatable {
            table: source.shown.clone(),
            statement,
        })
}

/// What the single-table UPDATE refuses, refused here too.
fn check_updatable(table: &TableMeta, values: &[Option<Expr>], update: &ast::Update) -> Result<()> {
    match table.keys_model {
        KeysModel::Aggregate => {
            return Err(BasaltError::NotSupported(format!(
                "UPDATE on {}.{}, an AGGREGATE KEY table: its rows are aggregates of their loads",
                table.database, table.name
            )))
        }
        // A row whose key is assigned moves to its new key (`key_updates::check_moves`).
        KeysModel::Unique => {}
        _ => {
            if !table.generated_columns().is_empty() {
                return Err(BasaltError::NotSupported(format!(
                    "UPDATE of {}, a {} KEY table with generated columns",
                    table.name,
                    table.keys_model.sql_name()
                )));
            }
        }
    }
    // Generated columns take no values but DEFAULT.
    let own: Vec<ast::Assignment> = update
        .assignments
        .iter()
        .filter(|a| match &a.target {
            AssignmentTarget::ColumnName(name) => idents(name)
                .last()
                .and_then(|c| table.column_index(&c.value))
                .is_some_and(|i| values[i].is_some()),
            _ => false,
        })
        .cloned()
        .collect();
    super::generated_values::check_assignments(table, &own)
}

/// The FROM a target's rows are read from, what qualifies its columns there, and the
/// condition that keeps only its existing rows when an outer join may leave it missing (see
/// [`super::outer_join_targets`]).
fn target_rows(
    tables: &[TableWithJoins],
    sources: &[Source],
    source: &Source,
) -> (Vec<TableWithJoins>, Vec<Ident>, Option<Expr>) {
    let unchanged = || (tables.to_vec(), source.qualifier.clone(), None);
    if !super::outer_join_targets::has_outer_join(tables) {
        return unchanged();
    }
    let Some(name) = source.qualifier.last().cloned() else {
        return unchanged();
    };
    // The marked table goes by `name` alone: not when another table of the statement (of
    // another database) has that name too.
    let shown = |s: &Source| {
        s.alias
            .clone()
            .or_else(|| s.name.as_ref().map(|(_, t)| t.clone()))
            .unwrap_or_default()
    };
    if sources
        .iter()
        .any(|s| !std::ptr::eq(s, source) && shown(s).eq_ignore_ascii_case(&name.value))
    {
        return unchanged();
    }
    let is_target = |f: &TableFactor| match f {
        TableFactor::Table {
            name: written,
            alias,
            ..
        } => match (&source.alias, alias, &source.name) {
            (Some(a), Some(fa), _) => fa.name.value.eq_ignore_ascii_case(a),
            (None, None, Some((db, table))) => {
                let (written_db, written_table) = split_name(written);
                written_table.eq_ignore_ascii_case(table)
                    && written_db.is_none_or(|d| d.eq_ignore_ascii_case(db))
            }
            _ => false,
        },
        _ => false,
    };
    match super::outer_join_targets::marked(tables, &is_target, &name) {
        Some((marked, present)) => (marked, vec![name], Some(present)),
        None => unchanged(),
    }
}

/// `a AND b` of the conditions there are.
fn both(a: Option<Expr>, b: Option<Expr>) -> Option<Expr> {
    match (a, b) {
        (Some(a), Some(b)) => Some(Expr::BinaryOp {
            left: Box::new(Expr::Nested(Box::new(a))),
            op: ast::BinaryOperator::And,
            right: Box::new(b),
        }),
        (a, b) => a.or(b),
    }
}

/// Every column of the target's row (its columns qualified by `qualifier`), in the table's
/// storage order.
fn old_columns(table: &TableMeta, qualifier: &[Ident]) -> Vec<SelectItem> {
    table
        .columns
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let mut name = qualifier.to_vec();
            name.push(quoted(&c.name));
            SelectItem::ExprWithAlias {
                expr: Expr::CompoundIdentifier(name),
                alias: quoted(&format!("old {i}")),
            }
        })
        .collect()
}

/// `SELECT projection FROM tables [WHERE ..]`.
fn query(
    projection: Vec<SelectItem>,
    tables: &[TableWithJoins],
    selection: Option<Expr>,
) -> Result<ast::Query> {
    let Some((first, rest)) = tables.split_first() else {
        return Err(BasaltError::Internal(
            "a DELETE or UPDATE without tables".into(),
        ));
    };
    let mut query = row_query(projection, first.clone(), selection, &[], None);
    if let ast::SetExpr::Select(select) = query.body.as_mut() {
        select.from.extend(rest.iter().cloned());
    }
    Ok(query)
}
