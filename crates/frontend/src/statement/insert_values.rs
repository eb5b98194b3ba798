//! String literals in an INSERT's VALUES rows that go to ARRAY, MAP or STRUCT columns are read
//! as Doris's literal text (`'[1, 2]'`, `'{"k": 1}'`). DataFusion types VALUES by the table's
//! columns and would refuse such a string for a MAP or STRUCT column, and wrap it for an ARRAY
//! one (`'[1]'` as a one-element list of text); each becomes a call of the function that reads
//! nested values from text. A literal for a BIT column is the number its bytes spell
//! ([`crate::bit_literals::as_bit_number`]), so is a hex or bit literal for a numeric column
//! ([`crate::bit_literals::hex_as_number`]); a decimal literal for a TIME column is read as
//! MySQL's `[-]HHMMSS.frac`; a TIME for a DATE or DATETIME column is cast to it
//! ([`super::time_into_dates`]).

use crate::engine::split_name;
use crate::session::Session;
use crate::statement::ddl::database_of;
use basalt_catalog::TableMeta;
use basalt_common::SqlType;
use basalt_sql::ast::{
    self, Expr, FunctionArg, FunctionArgExpr, FunctionArgumentList, FunctionArguments, Ident,
    ObjectName, Value,
};

impl crate::engine::QueryEngine {
    /// Rewrites the string literals of `insert`'s VALUES rows that target nested columns (an
    /// unknown table is left for the planner to report).
    pub(super) fn read_nested_literals(&self, session: &Session, insert: &mut ast::Insert) {
        if let ast::TableObject::TableName(name) = &insert.table {
            let (db, table) = split_name(name);
            let table =
                database_of(session, &db).and_then(|db| self.services.catalog.table(&db, &table));
            if let Ok(table) = table {
                rewrite_values(&table, insert);
            }
        }
    }
}

fn rewrite_values(table: &TableMeta, insert: &mut ast::Insert) {
    let is_bit = |ty: &SqlType| matches!(ty, SqlType::Bit(_));
    let is_time = |ty: &SqlType| matches!(ty, SqlType::Time { .. });
    let is_number = |ty: &SqlType| ty.is_numeric() || matches!(ty, SqlType::Boolean);
    let is_date = |ty: &SqlType| matches!(ty, SqlType::Date | SqlType::DateTime { .. });
    if !table.columns.iter().any(|c| {
        c.ty.is_nested() || is_bit(&c.ty) || is_time(&c.ty) || is_number(&c.ty) || is_date(&c.ty)
    }) {
        return;
    }
    let targets = insert_targets(table, insert);
    let Some(source) = insert.source.as_mut() else {
        return;
    };
    let ast::SetExpr::Values(values) = source.body.as_mut() else {
        return;
    };
    for row in &mut values.rows {
        for (position, value) in row.content.iter_mut().enumerate() {
            let Some(Some(column)) = targets.get(position) else {
                continue;
            };
            let ty = &table.columns[*column].ty;
            if ty.is_nested() && is_string_literal(value) {
                let text = std::mem::replace(value, Expr::value(Value::Null));
                *value = call(
                    text,
                    &basalt_functions::without_metadata(&ty.arrow_type()).to_string(),
                );
            } else if is_bit(ty) {
                crate::bit_literals::as_bit_number(value);
            } else if is_time(ty) {
                decimal_as_time_text(value);
            } else if is_number(ty) {
                crate::bit_literals::hex_as_number(value);
            } else if is_date(ty) {
                super::time_into_dates::cast_time_value(ty, value);
            }
        }
    }
}

/// A decimal literal for a TIME column (`123456.5`, `-101112.25`) as the same digits in text,
/// which MySQL reads alike (`[-]HHMMSS[.frac]`, 12:34:56.5) and which converts to a TIME the
/// way text does (DataFusion has no cast from a DECIMAL to a TIME and refuses the row).
fn decimal_as_time_text(value: &mut Expr) {
    let (negative, number) = match &*value {
        Expr::UnaryOp {
            op: ast::UnaryOperator::Minus,
            expr,
        } => (true, expr.as_ref()),
        e => (false, e),
    };
    let Expr::Value(v) = number else {
        return;
    };
    let Value::Number(digits, _) = &v.value else {
        return;
    };
    let Some((whole, fraction)) = digits.split_once('.') else {
        return;
    };
    let plain = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if !plain(whole) || !plain(fraction) {
        return;
    }
    let sign = if negative { "-" } else { "" };
    let text = format!("{sign}{digits}");
    *value = Expr::value(Value::SingleQuotedString(text));
}

fn is_string_literal(e: &Expr) -> bool {
    matches!(
        e,
        Expr::Value(v) if matches!(
            v.value,
            Value::SingleQuotedString(_) | Value::DoubleQuotedString(_)
        )
    )
}

/// `cast_text_to_nested(text, '<arrow type>', true)`.
fn call(text: Expr, arrow_type: &str) -> Expr {
    let arg = |e: Expr| FunctionArg::Unnamed(FunctionArgExpr::Expr(e));
    Expr::Function(ast::Function {
        name: ObjectName::from(vec![Ident::new(basalt_functions::TEXT_TO_NESTED)]),
        uses_odbc_syntax: false,
        parameters: FunctionArguments::None,
        args: FunctionArguments::List(FunctionArgumentList {
            duplicate_treatment: None,
            args: vec![
                arg(text),
                arg(Expr::value(Value::SingleQuotedString(
                    arrow_type.to_string(),
                ))),
                arg(Expr::value(Value::Boolean(true))),
            ],
            clauses: vec![],
        }),
        filter: None,
        null_treatment: None,
        over: None,
        within_group: vec![],
    })
}

/// The table column each value of an INSERT row goes to, in order (None for a name the table
/// lacks): the named columns, or every declared column when none are named.
pub(super) fn insert_targets(table: &TableMeta, insert: &ast::Insert) -> Vec<Option<usize>> {
    if insert.columns.is_empty() {
        return table.declared_indexes().into_iter().map(Some).collect();
    }
    insert
        .columns
        .iter()
        .map(|c| {
            c.0.last()
                .and_then(|p| p.as_ident())
                .and_then(|i| table.column_index(&i.value))
        })
        .collect()
}
