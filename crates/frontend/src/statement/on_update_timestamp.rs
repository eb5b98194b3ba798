//! MySQL's `ON UPDATE CURRENT_TIMESTAMP`: a statement that rewrites a row (UPDATE, multi-table
//! UPDATE, INSERT .. ON DUPLICATE KEY UPDATE) sets such a column to the statement's time when it
//! does not assign the column itself and some other column of the row takes a different value.
//! A row the statement leaves as it was keeps its timestamp, as in MySQL.
//!
//! Each rewrite path has the new value of every assigned column as an expression over the stored
//! row; [`assign_touched`] adds, for each such column left unassigned,
//! `CASE WHEN new1 <=> old1 AND .. THEN old ELSE CURRENT_TIMESTAMP(p) END`.

use basalt_catalog::TableMeta;
use basalt_common::SqlType;
use basalt_sql::ast::{
    helpers::attached_token::AttachedToken, BinaryOperator, CaseWhen, Expr, Value,
};

/// Gives each unassigned `ON UPDATE CURRENT_TIMESTAMP` column of `table` its new value, given
/// the statement's new values (`values[i]`, `None` where column `i` is not assigned) and each
/// column's stored value (`stored(i)`).
pub(crate) fn assign_touched(
    table: &TableMeta,
    values: &mut [Option<Expr>],
    stored: impl Fn(usize) -> Expr,
) {
    let touched: Vec<usize> = (0..table.columns.len())
        .filter(|&i| table.columns[i].on_update_current_timestamp && values[i].is_none())
        .collect();
    if touched.is_empty() {
        return;
    }
    let Some(unchanged) = values
        .iter()
        .enumerate()
        .filter_map(|(i, value)| {
            let value = value.as_ref()?;
            Some(Expr::BinaryOp {
                left: Box::new(Expr::Nested(Box::new(value.clone()))),
                op: BinaryOperator::Spaceship,
                right: Box::new(stored(i)),
            })
        })
        .reduce(|a, b| Expr::BinaryOp {
            left: Box::new(a),
            op: BinaryOperator::And,
            right: Box::new(b),
        })
    else {
        return;
    };
    for i in touched {
        values[i] = Some(Expr::Case {
            case_token: AttachedToken::empty(),
            end_token: AttachedToken::empty(),
            operand: None,
            conditions: vec![CaseWhen {
                condition: unchanged.clone(),
                result: stored(i),
            }],
            else_result: Some(Box::new(current_timestamp(&table.columns[i].ty))),
        });
    }
}

/// `CURRENT_TIMESTAMP(p)` with the column's fraction digits.
fn current_timestamp(ty: &SqlType) -> Expr {
    let args = match ty {
        SqlType::DateTime { scale } if *scale > 0 => {
            vec![Expr::value(Value::Number(scale.to_string(), false))]
        }
        _ => vec![],
    };
    crate::mysql_compat::call("current_timestamp", args)
}
