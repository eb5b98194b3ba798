//! MySQL's `INSERT IGNORE`. Its values are fitted to their columns as outside strict mode,
//! whatever `sql_mode` says (`lenient_insert`). Into a Unique-key table, a row whose key the
//! table already has, or that an earlier row of the statement has, is skipped with warning
//! 1062 instead of replacing the stored row (a Unique table's INSERT is an upsert otherwise);
//! the affected rows count only the rows written. Duplicate and Aggregate tables have no key
//! to collide with, so only the fitting applies.
//!
//! The skipping is a rewrite of the statement, not a lookup per row: the source's rows are
//! numbered in the order given, ranked within each key, and left-joined to the stored keys; an
//! `INSERT IGNORE INTO t SELECT ..` writes those with a new key that come first, and a query of
//! the rest (run first, under the table's DML lock like the upserts) names them for the
//! warnings. A row with a NULL key (an AUTO_INCREMENT column's "next value") is always new.

use super::dml::{quoted, row_query};
use super::upsert::{column_index, default_value, derived, last_name, qualified};
use crate::catalog_provider::Services;
use crate::engine::split_name;
use crate::order_keys::{item_position, ordered_select};
use crate::output::Output;
use crate::session::Session;
use crate::statement::ddl::database_of;
use basalt_catalog::{KeysModel, TableMeta};
use basalt_common::{BasaltError, Result};
use basalt_sql::ast::{
    self, BinaryOperator, Expr, ObjectName, SelectItem, TableFactor, TableWithJoins, Value,
};
use datafusion::arrow::array::{Array, AsArray};
use datafusion::arrow::datatypes::DataType;
use futures::TryStreamExt;
use std::sync::Arc;

/// The derived tables and helper columns of the rewrite.
const SOURCE: &str = "__source";
const RANKED: &str = "__ranked";
const NEW: &str = "__new";
const OLD: &str = "__old";
const PRESENT: &str = "__present";
const ORDINAL: &str = "__ordinal";
const RANK: &str = "__rank";

/// What an INSERT IGNORE into a Unique-key table runs as.
pub(crate) struct IgnorePlan {
    pub table: Arc<TableMeta>,
    /// `INSERT IGNORE INTO t (<columns>) SELECT ..` of the rows with a new key.
    pub insert: ast::Insert,
    /// The keys of the rows skipped, as MySQL writes them in warning 1062, in statement order.
    pub skipped: ast::Query,
}

/// The rewrite of `insert` when it is an INSERT IGNORE into a Unique-key table; `None` when
/// nothing is to be skipped (no IGNORE, another key model, ON DUPLICATE KEY UPDATE, or a
/// statement the planner will report).
pub(crate) fn plan_ignore(
    services: &Services,
    session: &Session,
    insert: &ast::Insert,
) -> Result<Option<IgnorePlan>> {
    if !insert.ignore || insert.replace_into || insert.on.is_some() {
        return Ok(None);
    }
    let ast::TableObject::TableName(name) = &insert.table else {
        return Ok(None);
    };
    let (db, table) = split_name(name);
    let Ok(table) = database_of(session, &db).and_then(|db| {
        crate::transaction::storage(services, session)
            .catalog()
            .table(&db, &table)
    }) else {
        return Ok(None);
    };
    if table.keys_model != KeysModel::Unique {
        return Ok(None);
    }
    let Some(source) = insert.source.as_deref() else {
        return Ok(None);
    };
    let inserted: Vec<usize> = if insert.columns.is_empty() {
        table.declared_indexes()
    } else {
        insert
            .columns
            .iter()
            .map(|c| column_index(&table, &last_name(c)))
            .collect::<Result<_>>()?
    };
    let names: Vec<&str> = inserted
        .iter()
        .map(|&i| table.columns[i].name.as_str())
        .collect();
    let key_of = |relation: &str, k: usize| match inserted.iter().position(|&i| i == k) {
        Some(_) => qualified(relation, &table.columns[k].name),
        None => default_value(&table.columns[k]),
    };
    let keys = 0..table.num_key_columns;

    // SELECT __source.* FROM (<source numbered by its ORDER BY>) AS __source (.., __ordinal),
    // or, when the source has no ORDER BY to number by,
    // SELECT __source.*, row_number() OVER () AS __ordinal FROM (<source>) AS __source (..)
    let source_wildcard = || {
        SelectItem::QualifiedWildcard(
            ast::SelectItemQualifiedWildcardKind::ObjectName(ObjectName::from(vec![quoted(
                SOURCE,
            )])),
            Default::default(),
        )
    };
    let numbered = match numbered_by_order(source) {
        Some(source) => row_query(
            vec![source_wildcard()],
            from(derived(
                source,
                SOURCE,
                names.iter().copied().chain(std::iter::once(ORDINAL)),
            )),
            None,
            &[],
            None,
        ),
        None => row_query(
            vec![
                source_wildcard(),
                aliased(numbered_by(output_order(source, &names)), ORDINAL),
            ],
            from(derived(kept_order(source), SOURCE, names.iter().copied())),
            None,
            &[],
            None,
        ),
    };
    // The rank of each row among the statement's rows of its key, in statement order.
    let ranked = row_query(
        vec![
            SelectItem::QualifiedWildcard(
                ast::SelectItemQualifiedWildcardKind::ObjectName(ObjectName::from(vec![quoted(
                    RANKED,
                )])),
                Default::default(),
            ),
            aliased(
                row_number(
                    keys.clone().map(|k| key_of(RANKED, k)).collect(),
                    vec![qualified(RANKED, ORDINAL)],
                ),
                RANK,
            ),
        ],
        from(derived(numbered, RANKED, std::iter::empty())),
        None,
        &[],
        None,
    );
    let stored_keys =
        row_query(
            std::iter::once(aliased(number("1"), PRESENT))
                .chain(keys.clone().map(|k| {
                    SelectItem::UnnamedExpr(Expr::Identifier(quoted(&table.columns[k].name)))
                }))
                .collect(),
            from(super::dml::table_factor(&table)),
            None,
            &[],
            None,
        );
    let keys_equal = and_all(keys.clone().map(|k| Expr::BinaryOp {
        left: Box::new(qualified(OLD, &table.columns[k].name)),
        op: BinaryOperator::Spaceship,
        right: Box::new(key_of(NEW, k)),
    }));
    let joined = TableWithJoins {
        relation: derived(ranked, NEW, std::iter::empty()),
        joins: vec![ast::Join {
            relation: derived(stored_keys, OLD, std::iter::empty()),
            global: false,
            join_operator: ast::JoinOperator::Left(ast::JoinConstraint::On(keys_equal)),
        }],
    };
    // Not stored, and first of its key in the statement (or with a NULL key).
    let first_or_null_key = or_all(
        std::iter::once(Expr::BinaryOp {
            left: Box::new(qualified(NEW, RANK)),
            op: BinaryOperator::Eq,
            right: Box::new(number("1")),
        })
        .chain(keys.clone().map(|k| Expr::IsNull(Box::new(key_of(NEW, k))))),
    );
    let keep = Expr::BinaryOp {
        left: Box::new(Expr::IsNull(Box::new(qualified(OLD, PRESENT)))),
        op: BinaryOperator::And,
        right: Box::new(Expr::Nested(Box::new(first_or_null_key))),
    };
    let rows = row_query(
        names
            .iter()
            .map(|n| aliased(qualified(NEW, n), n))
            .collect(),
        joined.clone(),
        Some(keep.clone()),
        &[],
        None,
    );
    let key_text = basalt_sql::function_call(
        "concat_ws",
        std::iter::once(Expr::value(Value::SingleQuotedString("-".into())))
            .chain(keys.map(|k| Expr::Cast {
                kind: ast::CastKind::Cast,
                expr: Box::new(key_of(NEW, k)),
                data_type: ast::DataType::Varchar(None),
                array: false,
                format: None,
            }))
            .collect(),
    );
    let skipped = row_query(
        vec![aliased(key_text, "entry")],
        joined,
        Some(Expr::UnaryOp {
            op: ast::UnaryOperator::Not,
            expr: Box::new(Expr::Nested(Box::new(keep))),
        }),
        &[ast::OrderByExpr {
            expr: qualified(NEW, ORDINAL),
            options: ast::OrderByOptions {
                asc: None,
                nulls_first: None,
            },
            with_fill: None,
        }],
        None,
    );
    let mut out = insert.clone();
    out.columns = names
        .iter()
        .map(|n| ObjectName::from(vec![quoted(n)]))
        .collect();
    out.source = Some(Box::new(rows));
    Ok(Some(IgnorePlan {
        table,
        insert: out,
        skipped,
    }))
}

/// `source` with one more column, each row's place in its ORDER BY (`row_number() OVER (ORDER
/// BY <its keys>)`), when it is one SELECT with an ORDER BY. Numbering the rows as a sorted
/// derived table delivers them is not enough: no plan promises to keep that order (a cluster's
/// exchanges do not). `None` when there is no ORDER BY, for DISTINCT (the number would make
/// every row distinct), for set operations, and for a key by position past a wildcard.
fn numbered_by_order(source: &ast::Query) -> Option<ast::Query> {
    let (select, order) = ordered_select(source)?;
    if select.distinct.is_some() || order.is_empty() {
        return None;
    }
    let keys = crate::order_keys::window_keys(select, order)?;
    let mut numbered = source.clone();
    if let ast::SetExpr::Select(select) = numbered.body.as_mut() {
        select
            .projection
            .push(aliased(numbered_by(Some(keys)), ORDINAL));
    }
    Some(numbered)
}

/// The source's ORDER BY as columns of the derived table `__source` (named `names`), when
/// each key is a position or an alias of its select list (`ORDER BY rn` of a window's alias).
fn output_order(source: &ast::Query, names: &[&str]) -> Option<Vec<ast::OrderByExpr>> {
    let (select, order) = ordered_select(source)?;
    if select.projection.iter().any(|item| {
        matches!(
            item,
            SelectItem::Wildcard(_) | SelectItem::QualifiedWildcard(..)
        )
    }) {
        return None;
    }
    order
        .iter()
        .map(|key| {
            Some(ast::OrderByExpr {
                expr: qualified(SOURCE, names.get(item_position(select, &key.expr)?)?),
                options: key.options,
                with_fill: None,
            })
        })
        .collect()
}

/// `row_number() OVER (ORDER BY <order>)`, or `OVER ()` without an order.
fn numbered_by(order: Option<Vec<ast::OrderByExpr>>) -> Expr {
    let mut numbering = row_number(vec![], vec![]);
    if let (Expr::Function(f), Some(order)) = (&mut numbering, order) {
        if let Some(ast::WindowType::WindowSpec(spec)) = f.over.as_mut() {
            spec.order_by = order;
        }
    }
    numbering
}

/// `source`, whose ORDER BY (if any) the plan must keep for the rows to be numbered in it:
/// a sort without a LIMIT inside a derived table may be dropped, one with a LIMIT may not
/// (MySQL's own idiom, `LIMIT 18446744073709551615`).
fn kept_order(source: &ast::Query) -> ast::Query {
    let mut kept = source.clone();
    if kept.order_by.is_some() && kept.limit_clause.is_none() {
        kept.limit_clause = Some(ast::LimitClause::LimitOffset {
            limit: Some(number("18446744073709551615")),
            offset: None,
            limit_by: vec![],
        });
    }
    kept
}

fn from(relation: TableFactor) -> TableWithJoins {
    TableWithJoins {
        relation,
        joins: vec![],
    }
}

fn aliased(expr: Expr, alias: &str) -> SelectItem {
    SelectItem::ExprWithAlias {
        expr,
        alias: quoted(alias),
    }
}

fn number(n: &str) -> Expr {
    Expr::value(Value::Number(n.into(), false))
}

fn and_all(exprs: impl Iterator<Item = Expr>) -> Expr {
    join_all(exprs, BinaryOperator::And, true)
}

fn or_all(exprs: impl Iterator<Item = Expr>) -> Expr {
    join_all(exprs, BinaryOperator::Or, false)
}

fn join_all(exprs: impl Iterator<Item = Expr>, op: BinaryOperator, empty: bool) -> Expr {
    exprs
        .reduce(|a, b| Expr::BinaryOp {
            left: Box::new(a),
            op: op.clone(),
            right: Box::new(b),
        })
        .unwrap_or(Expr::value(Value::Boolean(empty)))
}

/// `row_number() OVER (PARTITION BY .. ORDER BY ..)`.
fn row_number(partition_by: Vec<Expr>, order_by: Vec<Expr>) -> Expr {
    let Expr::Function(mut f) = basalt_sql::function_call("row_number", vec![]) else {
        unreachable!("function_call builds a function call")
    };
    f.over = Some(ast::WindowType::WindowSpec(ast::WindowSpec {
        window_name: None,
        partition_by,
        order_by: order_by
            .into_iter()
            .map(|expr| ast::OrderByExpr {
                expr,
                options: ast::OrderByOptions {
                    asc: None,
                    nulls_first: None,
                },
                with_fill: None,
            })
            .collect(),
        window_frame: None,
    }));
    Expr::Function(f)
}

impl crate::engine::QueryEngine {
    /// INSERT IGNORE: into a Unique table without the rows whose key is taken (each a warning
    /// 1062), under the table's DML lock; otherwise the INSERT with lenient fitting.
    pub(crate) async fn insert_ignore(
        &self,
        session: &Session,
        insert: ast::Insert,
    ) -> Result<Output> {
        let Some(plan) = plan_ignore(&self.services, session, &insert)? else {
            return self
                .run_datafusion(session, ast::Statement::Insert(insert), false)
                .await;
        };
        let _serialized = self.dml_locks.lock(plan.table.id).await;
        let skipped = self
            .run_datafusion(
                session,
                ast::Statement::Query(Box::new(plan.skipped)),
                false,
            )
            .await?;
        let Output::Rows { stream, .. } = skipped else {
            return Err(BasaltError::Internal(
                "INSERT IGNORE's duplicate query gave no rows".into(),
            ));
        };
        let batches: Vec<_> = stream.try_collect().await?;
        for batch in batches {
            let entries = datafusion::arrow::compute::cast(batch.column(0), &DataType::Utf8)
                .map_err(|e| BasaltError::Internal(e.to_string()))?;
            let entries = entries.as_string::<i32>();
            for row in 0..entries.len() {
                let entry = match entries.is_null(row) {
                    true => "NULL",
                    false => entries.value(row),
                };
                session.info.warnings.add(
                    "Warning",
                    1062,
                    format!("Duplicate entry '{entry}' for key 'PRIMARY'"),
                );
            }
        }
        self.run_datafusion(session, ast::Statement::Insert(plan.insert), false)
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_number_reads_as_sql() {
        let e = row_number(vec![qualified("r", "k")], vec![qualified("r", ORDINAL)]);
        assert_eq!(
            e.to_string(),
            "row_number() OVER (PARTITION BY `r`.`k` ORDER BY `r`.`__ordinal`)"
        );
        assert_eq!(
            row_number(vec![], vec![]).to_string(),
            "row_number() OVER ()"
        );
    }

    #[test]
    fn empty_conjunction_is_true_and_disjunction_false() {
        assert_eq!(and_all(std::iter::empty()).to_string(), "true");
        assert_eq!(or_all(std::iter::empty()).to_string(), "false");
        let two = or_all([number("1"), number("2")].into_iter());
        assert_eq!(two.to_string(), "1 OR 2");
    }
}
