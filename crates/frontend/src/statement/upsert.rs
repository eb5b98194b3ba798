//! MySQL's upserts: `REPLACE INTO` and `INSERT .. ON DUPLICATE KEY UPDATE`. A Unique-key table
//! already replaces a row whose key it has, so REPLACE INTO is its INSERT (and a Duplicate
//! table's: it has no unique key to collide with). ON DUPLICATE KEY UPDATE on a Unique table
//! becomes one `INSERT INTO t SELECT ..` over the new rows left-joined to the rows they collide
//! with: a colliding row is written back with the assignments applied (a bare column is the
//! stored value, `VALUES(c)` the new one), a new row as given. It runs under the table's DML
//! lock like UPDATE.

use super::dml::{quoted, row_query, DmlPlan};
use crate::catalog_provider::Services;
use crate::engine::split_name;
use crate::session::Session;
use crate::statement::ddl::database_of;
use basalt_catalog::{ColumnDefault, ColumnMeta, KeysModel, TableMeta};
use basalt_common::{BasaltError, Result};
use basalt_sql::ast::{
    self, AssignmentTarget, BinaryOperator, CaseWhen, Expr, FunctionArg, FunctionArgExpr,
    FunctionArguments, Ident, ObjectName, OnInsert, SelectItem, TableAlias, TableAliasColumnDef,
    TableFactor, TableWithJoins, Value,
};
use std::ops::ControlFlow;
use std::sync::Arc;

/// The derived tables of the rewritten statement.
const NEW: &str = "__new";
const OLD: &str = "__old";
/// A column of the stored rows that is never NULL: the row exists.
const PRESENT: &str = "__present";

/// What an INSERT with REPLACE or ON DUPLICATE KEY UPDATE runs as; `None` for a plain INSERT.
pub(crate) fn plan_upsert(
    services: &Services,
    session: &Session,
    insert: &ast::Insert,
) -> Result<Option<DmlPlan>> {
    let assignments = match &insert.on {
        Some(OnInsert::DuplicateKeyUpdate(a)) => Some(a),
        Some(_) => return Err(BasaltError::NotSupported("INSERT .. ON CONFLICT".into())),
        None if insert.replace_into => None,
        None => return Ok(None),
    };
    let ast::TableObject::TableName(name) = &insert.table else {
        return Err(BasaltError::NotSupported(
            "INSERT INTO a table function".into(),
        ));
    };
    let (db, table) = split_name(name);
    let table = services
        .catalog
        .table(&database_of(session, &db)?, &table)?;
    let verb = if insert.replace_into {
        "REPLACE INTO"
    } else {
        "INSERT .. ON DUPLICATE KEY UPDATE"
    };
    if table.keys_model == KeysModel::Aggregate {
        return Err(BasaltError::NotSupported(format!(
            "{verb} on {}.{}: an Aggregate-key table merges rows of one key instead of replacing them",
            table.database, table.name
        )));
    }
    let mut plain = insert.clone();
    plain.replace_into = false;
    plain.on = None;
    let statement = match assignments {
        // No unique key to collide with (Duplicate), or one that replaces (Unique).
        None => plain,
        Some(_) if table.keys_model == KeysModel::Duplicate => plain,
        Some(assignments) => upsert_insert(&table, insert, assignments)?,
    };
    Ok(Some(DmlPlan {
        table,
        statement: ast::Statement::Insert(statement),
    }))
}

/// `INSERT INTO t (all columns) SELECT <the row to write> FROM (<source>) AS __new (<columns>)
/// LEFT JOIN (SELECT 1 AS __present, * FROM t) AS __old ON <keys equal>`.
fn upsert_insert(
    table: &Arc<TableMeta>,
    insert: &ast::Insert,
    assignments: &[ast::Assignment],
) -> Result<ast::Insert> {
    let Some(source) = insert.source.clone() else {
        return Err(BasaltError::NotSupported(
            "INSERT .. SET .. ON DUPLICATE KEY UPDATE".into(),
        ));
    };
    let mut source = source;
    let mut inserted: Vec<usize> = if insert.columns.is_empty() {
        table.declared_indexes()
    } else {
        insert
            .columns
            .iter()
            .map(|c| column_index(table, &last_name(c)))
            .collect::<Result<_>>()?
    };
    // VALUES rows are given every column, in the table's order (DataFusion types a VALUES list
    // inside an INSERT by the table's columns).
    if let ast::SetExpr::Values(values) = source.body.as_mut() {
        for (n, row) in values.rows.iter_mut().enumerate() {
            if row.content.len() != inserted.len() {
                return Err(BasaltError::ColumnCountMismatch(n as u64 + 1));
            }
            let given = std::mem::take(&mut row.content);
            row.content = (0..table.columns.len())
                .map(|i| match inserted.iter().position(|&c| c == i) {
                    Some(p) => given[p].clone(),
                    None => default_value(&table.columns[i]),
                })
                .collect();
        }
        inserted = (0..table.columns.len()).collect();
    }
    if let Some(key) = (0..table.num_key_columns).find(|k| !inserted.contains(k)) {
        return Err(BasaltError::NotSupported(format!(
            "INSERT .. ON DUPLICATE KEY UPDATE without key column '{}'",
            table.columns[key].name
        )));
    }
    let new_value = |index: usize| -> Expr {
        if inserted.contains(&index) {
            qualified(NEW, &table.columns[index].name)
        } else {
            default_value(&table.columns[index])
        }
    };
    let mut assigned: Vec<Option<Expr>> = vec![None; table.columns.len()];
    for assignment in assignments {
        let AssignmentTarget::ColumnName(name) = &assignment.target else {
            return Err(BasaltError::NotSupported(
                "ON DUPLICATE KEY UPDATE of a column tuple".into(),
            ));
        };
        let index = column_index(table, &last_name(name))?;
        if index < table.num_key_columns {
            return Err(BasaltError::NotSupported(format!(
                "updating key column '{}' of Unique-key table {}: only value columns can be updated",
                table.columns[index].name, table.name
            )));
        }
        let value = on_stored_row(table, assignment.value.clone(), &new_value)?;
        assigned[index] = Some(value);
    }
    super::on_update_timestamp::assign_touched(table, &mut assigned, |i| {
        qualified(OLD, &table.columns[i].name)
    });
    let present = Expr::IsNotNull(Box::new(qualified(OLD, PRESENT)));
    let projection = table
        .columns
        .iter()
        .enumerate()
        .map(|(index, column)| {
            let when_present = match (index < table.num_key_columns, &assigned[index]) {
                (true, _) => new_value(index),
                (false, Some(value)) => value.clone(),
                (false, None) => qualified(OLD, &column.name),
            };
            SelectItem::ExprWithAlias {
                expr: Expr::Case {
                    case_token: ast::helpers::attached_token::AttachedToken::empty(),
                    end_token: ast::helpers::attached_token::AttachedToken::empty(),
                    operand: None,
                    conditions: vec![CaseWhen {
                        condition: present.clone(),
                        result: when_present,
                    }],
                    else_result: Some(Box::new(new_value(index))),
                },
                alias: quoted(&column.name),
            }
        })
        .collect();
    let keys_equal = (0..table.num_key_columns)
        .map(|k| Expr::BinaryOp {
            left: Box::new(qualified(OLD, &table.columns[k].name)),
            op: BinaryOperator::Spaceship,
            right: Box::new(qualified(NEW, &table.columns[k].name)),
        })
        .reduce(|a, b| Expr::BinaryOp {
            left: Box::new(a),
            op: BinaryOperator::And,
            right: Box::new(b),
        })
        .unwrap_or(Expr::Value(Value::Boolean(true).into()));
    let table_name = super::dml::table_factor(table);
    let stored = row_query(
        vec![
            SelectItem::ExprWithAlias {
                expr: Expr::Value(Value::Number("1".into(), false).into()),
                alias: quoted(PRESENT),
            },
            SelectItem::Wildcard(Default::default()),
        ],
        TableWithJoins {
            relation: table_name,
            joins: vec![],
        },
        None,
        &[],
        None,
    );
    let from = TableWithJoins {
        relation: derived(
            *source,
            NEW,
            inserted.iter().map(|&i| table.columns[i].name.as_str()),
        ),
        joins: vec![ast::Join {
            relation: derived(stored, OLD, std::iter::empty()),
            global: false,
            join_operator: ast::JoinOperator::Left(ast::JoinConstraint::On(keys_equal)),
        }],
    };
    let rows = row_query(projection, from, None, &[], None);
    let mut out = insert.clone();
    out.on = None;
    out.replace_into = false;
    out.columns = table
        .columns
        .iter()
        .map(|c| ObjectName::from(vec![quoted(&c.name)]))
        .collect();
    out.source = Some(Box::new(rows));
    Ok(out)
}

/// An assignment's value over the stored row: a bare (or table-qualified) column is the stored
/// value, `VALUES(c)` the inserted one.
fn on_stored_row(
    table: &TableMeta,
    value: Expr,
    new_value: &dyn Fn(usize) -> Expr,
) -> Result<Expr> {
    let mut value = value;
    let mut failure = None;
    let _ = ast::visit_expressions_mut(&mut value, |e| {
        match e {
            Expr::Function(f)
                if f.name.to_string().eq_ignore_ascii_case("values")
                    && matches!(&f.args, FunctionArguments::List(l) if l.args.len() == 1) =>
            {
                let FunctionArguments::List(list) = &f.args else {
                    return ControlFlow::Continue(());
                };
                let column = match &list.args[0] {
                    FunctionArg::Unnamed(FunctionArgExpr::Expr(Expr::Identifier(i))) => {
                        Some(i.value.clone())
                    }
                    FunctionArg::Unnamed(FunctionArgExpr::Expr(Expr::CompoundIdentifier(p))) => {
                        p.last().map(|i| i.value.clone())
                    }
                    _ => None,
                };
                match column.map(|c| column_index(table, &c)) {
                    Some(Ok(index)) => *e = Expr::Nested(Box::new(new_value(index))),
                    Some(Err(err)) => failure = Some(err),
                    None => {
                        failure = Some(BasaltError::NotSupported(
                            "VALUES() of something other than a column".into(),
                        ))
                    }
                }
            }
            Expr::Identifier(i) if table.column_index(&i.value).is_some() => {
                *e = qualified(OLD, &i.value.clone());
            }
            Expr::CompoundIdentifier(parts)
                if parts.len() == 2
                    && parts[0].value.eq_ignore_ascii_case(&table.name)
                    && table.column_index(&parts[1].value).is_some() =>
            {
                *e = qualified(OLD, &parts[1].value.clone());
            }
            _ => {}
        }
        ControlFlow::<()>::Continue(())
    });
    match failure {
        Some(e) => Err(e),
        None => Ok(Expr::Nested(Box::new(value))),
    }
}

/// `(query) AS alias (columns)`.
pub(super) fn derived<'a>(
    query: ast::Query,
    alias: &str,
    columns: impl Iterator<Item = &'a str>,
) -> TableFactor {
    TableFactor::Derived {
        lateral: false,
        subquery: Box::new(query),
        alias: Some(TableAlias {
            explicit: true,
            name: quoted(alias),
            columns: columns.map(TableAliasColumnDef::from_name).collect(),
            at: None,
        }),
        sample: None,
    }
}

pub(super) fn qualified(relation: &str, column: &str) -> Expr {
    Expr::CompoundIdentifier(vec![quoted(relation), quoted(column)])
}

/// A column's value in a new row that does not give it.
pub(super) fn default_value(column: &ColumnMeta) -> Expr {
    match &column.default {
        Some(ColumnDefault::Literal(text)) => {
            Expr::Value(Value::SingleQuotedString(text.clone()).into())
        }
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
        Some(ColumnDefault::Expression(text)) => super::insert_defaults::expression_default(text),
        Some(ColumnDefault::Null) | None => Expr::Value(Value::Null.into()),
    }
}

pub(super) fn last_name(name: &ObjectName) -> String {
    name.0
        .last()
        .and_then(|p| p.as_ident())
        .map(|i| i.value.clone())
        .unwrap_or_default()
}

pub(super) fn column_index(table: &TableMeta, column: &str) -> Result<usize> {
    table
        .column_index(column)
        .ok_or_else(|| BasaltError::UnknownColumn {
            column: column.to_string(),
            context: "field list".into(),
        })
}

impl crate::engine::QueryEngine {
    /// REPLACE INTO / INSERT .. ON DUPLICATE KEY UPDATE, serialized with the table's DELETEs
    /// and UPDATEs (it reads the rows it rewrites).
    pub(super) async fn upsert(
        &self,
        session: &Session,
        insert: ast::Insert,
    ) -> Result<crate::output::Output> {
        let Some(plan) = plan_upsert(&self.services, session, &insert)? else {
            return self
                .run_datafusion(session, ast::Statement::Insert(insert), false)
                .await;
        };
        let _serialized = self.dml_locks.lock(plan.table.id).await;
        self.run_datafusion(session, plan.statement, false).await
    }
}
