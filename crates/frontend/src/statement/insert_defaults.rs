//! MySQL's DEFAULT in an INSERT's VALUES rows and an UPDATE's assignments (`SET c = DEFAULT`):
//! `VALUES (DEFAULT, 1)`, `DEFAULT(col)`, and the
//! all-defaults rows `INSERT INTO t () VALUES ()` / `INSERT INTO t VALUES ()` (also PostgreSQL's
//! `DEFAULT VALUES`, which MySQL refuses but costs nothing to accept). DataFusion plans neither,
//! so each DEFAULT becomes its column's default before planning: the declared default (a
//! literal, or NOW() for CURRENT_TIMESTAMP), NULL for an AUTO_INCREMENT column (which then
//! takes the next value, as MySQL's does) and for a column without a default (a NOT NULL one
//! then fails as MySQL's strict mode does).

use crate::engine::split_name;
use crate::session::Session;
use crate::statement::ddl::database_of;
use basalt_catalog::{ColumnDefault, ColumnMeta, TableMeta};
use basalt_common::{BasaltError, Result};
use basalt_sql::ast::{
    self, Expr, FunctionArg, FunctionArgExpr, FunctionArguments, Ident, ObjectName, Value,
};

impl crate::engine::QueryEngine {
    /// Replaces the DEFAULTs of `insert`'s VALUES rows (an unknown table is left for the
    /// planner to report).
    pub(super) fn fill_defaults(&self, session: &Session, insert: &mut ast::Insert) -> Result<()> {
        let ast::TableObject::TableName(name) = &insert.table else {
            return Ok(());
        };
        let may_default = match insert.source.as_deref() {
            None => insert.columns.is_empty() && insert.assignments.is_empty(),
            Some(query) => matches!(query.body.as_ref(), ast::SetExpr::Values(_)),
        };
        if !may_default {
            return Ok(());
        }
        let (db, table) = split_name(name);
        let table =
            database_of(session, &db).and_then(|db| self.services.catalog.table(&db, &table));
        match table {
            Ok(table) => fill(&table, insert),
            Err(_) => Ok(()),
        }
    }
}

fn fill(table: &TableMeta, insert: &mut ast::Insert) -> Result<()> {
    if insert.source.is_none() {
        // `DEFAULT VALUES`: one row of defaults.
        insert.source = Some(Box::new(values_query(vec![vec![]])));
    }
    let Some(ast::SetExpr::Values(values)) = insert.source.as_mut().map(|q| q.body.as_mut()) else {
        return Ok(());
    };
    if values.rows.iter().all(|r| r.content.is_empty()) {
        if !insert.columns.is_empty() {
            return Err(BasaltError::ColumnCountMismatch(1));
        }
        // `() VALUES ()`: every column its default, written as the first one's DEFAULT.
        let Some((_, first)) = table.declared_columns().next() else {
            return Ok(());
        };
        insert.columns = vec![ObjectName::from(vec![Ident::new(first.name.clone())])];
        for row in &mut values.rows {
            row.content = vec![default_keyword()];
        }
    }
    let targets: Vec<Option<&ColumnMeta>> = if insert.columns.is_empty() {
        table.declared_columns().map(|(_, c)| Some(c)).collect()
    } else {
        insert
            .columns
            .iter()
            .map(|c| {
                c.0.last()
                    .and_then(|p| p.as_ident())
                    .and_then(|i| table.column_index(&i.value))
                    .map(|i| &table.columns[i])
            })
            .collect()
    };
    for row in &mut values.rows {
        for (value, target) in row.content.iter_mut().zip(&targets) {
            replace_defaults(table, *target, value)?;
        }
        // Column names: the row's earlier values, or the columns' defaults.
        super::row_references::resolve(table, &targets, &mut row.content, &default_of);
    }
    Ok(())
}

/// `DEFAULT` (the whole value, for `target`) and `DEFAULT(col)` (anywhere in it) replaced by
/// the columns' defaults.
fn replace_defaults(
    table: &TableMeta,
    target: Option<&ColumnMeta>,
    value: &mut Expr,
) -> Result<()> {
    if is_default_keyword(value) {
        if let Some(column) = target {
            *value = default_of(column);
        }
        return Ok(());
    }
    let replaced = ast::visit_expressions_mut(value, |e| {
        let Some(named) = default_function_column(e) else {
            return std::ops::ControlFlow::Continue(());
        };
        match table.column_index(&named) {
            Some(i) => {
                *e = default_of(&table.columns[i]);
                std::ops::ControlFlow::Continue(())
            }
            None => std::ops::ControlFlow::Break(BasaltError::UnknownColumn {
                column: named,
                context: "field list".into(),
            }),
        }
    });
    match replaced {
        std::ops::ControlFlow::Break(e) => Err(e),
        std::ops::ControlFlow::Continue(()) => Ok(()),
    }
}

/// `update` with `SET c = DEFAULT` and `DEFAULT(col)` in its assigned values replaced by the
/// columns' defaults, as MySQL's UPDATE reads them.
pub(super) fn update_defaults(table: &TableMeta, update: &ast::Update) -> Result<ast::Update> {
    let mut update = update.clone();
    for assignment in &mut update.assignments {
        let target = match &assignment.target {
            ast::AssignmentTarget::ColumnName(name) => name
                .0
                .last()
                .and_then(|p| p.as_ident())
                .and_then(|i| table.column_index(&i.value))
                .map(|i| &table.columns[i]),
            ast::AssignmentTarget::Tuple(_) => None,
        };
        replace_defaults(table, target, &mut assignment.value)?;
    }
    Ok(update)
}

pub(super) fn values_query(rows: Vec<Vec<Expr>>) -> ast::Query {
    let values = ast::Values {
        explicit_row: false,
        value_keyword: false,
        rows: rows
            .into_iter()
            .map(|content| ast::Parens {
                opening_token: ast::helpers::attached_token::AttachedToken::empty(),
                content,
                closing_token: ast::helpers::attached_token::AttachedToken::empty(),
            })
            .collect(),
    };
    ast::Query {
        with: None,
        body: Box::new(ast::SetExpr::Values(values)),
        order_by: None,
        limit_clause: None,
        fetch: None,
        locks: vec![],
        for_clause: None,
        settings: None,
        format_clause: None,
        pipe_operators: vec![],
    }
}

fn default_keyword() -> Expr {
    Expr::Identifier(Ident::new("DEFAULT"))
}

/// `DEFAULT` as a value (the parser reads the keyword as a bare identifier).
fn is_default_keyword(e: &Expr) -> bool {
    matches!(e, Expr::Identifier(i) if i.quote_style.is_none() && i.value.eq_ignore_ascii_case("default"))
}

/// The column `DEFAULT(col)` names.
fn default_function_column(e: &Expr) -> Option<String> {
    let Expr::Function(f) = e else {
        return None;
    };
    let [ast::ObjectNamePart::Identifier(name)] = f.name.0.as_slice() else {
        return None;
    };
    if !name.value.eq_ignore_ascii_case("default") {
        return None;
    }
    let FunctionArguments::List(list) = &f.args else {
        return None;
    };
    match list.args.as_slice() {
        [FunctionArg::Unnamed(FunctionArgExpr::Expr(Expr::Identifier(c)))] => Some(c.value.clone()),
        [FunctionArg::Unnamed(FunctionArgExpr::Expr(Expr::CompoundIdentifier(parts)))] => {
            parts.last().map(|c| c.value.clone())
        }
        _ => None,
    }
}

/// The value DEFAULT stands for in `column`.
fn default_of(column: &ColumnMeta) -> Expr {
    let null = Expr::value(Value::Null);
    if column.auto_increment {
        return null;
    }
    match &column.default {
        Some(ColumnDefault::Literal(v)) => Expr::value(Value::SingleQuotedString(v.clone())),
        Some(ColumnDefault::CurrentTimestamp) => Expr::Function(ast::Function {
            name: ObjectName::from(vec![Ident::new("now")]),
            uses_odbc_syntax: false,
            parameters: FunctionArguments::None,
            args: FunctionArguments::List(ast::FunctionArgumentList {
                duplicate_treatment: None,
                args: vec![],
                clauses: vec![],
            }),
            filter: None,
            null_treatment: None,
            over: None,
            within_group: vec![],
        }),
        Some(ColumnDefault::Expression(text)) => expression_default(text),
        Some(ColumnDefault::Null) | None => null,
    }
}

/// A column's `DEFAULT (expr)` as the expression (checked when the column was made, so it
/// parses; if it no longer did, a name no table has, which fails the statement).
pub(super) fn expression_default(text: &str) -> Expr {
    let parsed = basalt_sql::parse_one(&format!("SELECT ({text})"));
    if let Ok(basalt_sql::Statement::Standard(stmt)) = parsed {
        if let ast::Statement::Query(query) = *stmt {
            if let ast::SetExpr::Select(select) = *query.body {
                if let Some(ast::SelectItem::UnnamedExpr(e)) = select.projection.first() {
                    return e.clone();
                }
            }
        }
    }
    Expr::Identifier(Ident::with_quote('`', format!("DEFAULT ({text})")))
}
