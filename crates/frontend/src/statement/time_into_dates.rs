//! A TIME value in an INSERT's VALUES row for a DATE or DATETIME column is stored as MySQL
//! stores it: today's midnight moved by the TIME (`TIME'10:20:30'` into a DATETIME is today at
//! 10:20:30, `TIME'34:00:00'` into a DATE is tomorrow). DataFusion types VALUES by the table's
//! columns and refuses a TIME for a DATE or a TIMESTAMP (Arrow has no such cast), so a value
//! that is a TIME by its form (a TIME literal, a CAST to TIME, a function that gives a TIME, or
//! COALESCE / IFNULL / LEAST / GREATEST of such) is written as a CAST to the column's type,
//! which reads a TIME the way MySQL does (basalt_functions' signed_times).

use basalt_common::SqlType;
use basalt_sql::ast::{self, Expr, FunctionArg, FunctionArgExpr, FunctionArguments};

/// `value` as a CAST to `ty` when `ty` is DATE or DATETIME and `value` is a TIME by its form.
pub(super) fn cast_time_value(ty: &SqlType, value: &mut Expr) {
    let target = match ty {
        SqlType::Date => ast::DataType::Date,
        SqlType::DateTime { scale } => ast::DataType::Datetime(Some(u64::from(*scale))),
        _ => return,
    };
    if !is_time_valued(value) {
        return;
    }
    let time = std::mem::replace(value, Expr::value(ast::Value::Null));
    *value = Expr::Cast {
        kind: ast::CastKind::Cast,
        expr: Box::new(time),
        data_type: target,
        array: false,
        format: None,
    };
}

/// Whether `e` is a TIME by its form alone.
fn is_time_valued(e: &Expr) -> bool {
    match e {
        Expr::TypedString(typed) => matches!(typed.data_type, ast::DataType::Time(..)),
        Expr::Cast { data_type, .. } => matches!(data_type, ast::DataType::Time(..)),
        Expr::Nested(inner) => is_time_valued(inner),
        Expr::Function(f) => {
            let name = f.name.to_string().to_ascii_lowercase();
            match name.as_str() {
                "time" | "sec_to_time" | "maketime" | "curtime" | "current_time" | "timediff" => {
                    true
                }
                "addtime" | "subtime" => first_argument(f).is_some_and(is_time_valued),
                "coalesce" | "ifnull" | "least" | "greatest" => {
                    let args = arguments(f);
                    !args.is_empty()
                        && args.iter().all(|a| is_time_valued(a) || is_null(a))
                        && args.iter().any(|a| is_time_valued(a))
                }
                _ => false,
            }
        }
        _ => false,
    }
}

fn is_null(e: &Expr) -> bool {
    matches!(e, Expr::Value(v) if v.value == ast::Value::Null)
}

fn arguments(f: &ast::Function) -> Vec<&Expr> {
    let FunctionArguments::List(list) = &f.args else {
        return Vec::new();
    };
    list.args
        .iter()
        .filter_map(|a| match a {
            FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => Some(e),
            _ => None,
        })
        .collect()
}

fn first_argument(f: &ast::Function) -> Option<&Expr> {
    arguments(f).into_iter().next()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(sql: &str) -> Expr {
        let sql = format!("INSERT INTO t VALUES ({sql})");
        let Ok(basalt_sql::Statement::Standard(stmt)) = basalt_sql::parse_one(&sql) else {
            panic!("not parsed: {sql}");
        };
        let ast::Statement::Insert(insert) = *stmt else {
            panic!("not an INSERT: {sql}");
        };
        let Some(ast::SetExpr::Values(values)) = insert.source.map(|s| *s.body) else {
            panic!("no VALUES: {sql}");
        };
        values.rows[0].content[0].clone()
    }

    #[test]
    fn times_by_form_become_casts_to_the_column_type() {
        for sql in [
            "TIME '10:20:30'",
            "CAST('10:20:30' AS TIME)",
            "SEC_TO_TIME(5)",
            "COALESCE(TIME '10:20:30')",
            "LEAST(TIME '10:20:30', NULL)",
            "ADDTIME(TIME '10:00:00', '1:00:00')",
        ] {
            let mut e = value(sql);
            cast_time_value(&SqlType::DateTime { scale: 0 }, &mut e);
            assert!(e.to_string().starts_with("CAST("), "{sql}: {e}");
        }
    }

    #[test]
    fn other_values_and_columns_stay() {
        for sql in [
            "'10:20:30'",
            "NOW()",
            "COALESCE(TIME '10:20:30', 1)",
            "ADDTIME(NOW(), 1)",
        ] {
            let mut e = value(sql);
            cast_time_value(&SqlType::DateTime { scale: 0 }, &mut e);
            assert_eq!(e, value(sql), "{sql}");
        }
        let mut e = value("TIME '10:20:30'");
        cast_time_value(&SqlType::Time { scale: 0 }, &mut e);
        assert_eq!(e, value("TIME '10:20:30'"));
    }
}
