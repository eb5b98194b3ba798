//! Doris's `local("key" = "value", ...)` calls rewritten for DataFusion: the arguments are
//! comparisons the planner would fold to `false`, so every call becomes `local('key', 'value',
//! ...)` on the parsed statement before planning; the table function (basalt-load) reads them.

use basalt_common::{BasaltError, Result};
use basalt_load::local_files::{wrong, NAME};
use basalt_sql::ast::{
    BinaryOperator, Expr as SqlExpr, FunctionArg, FunctionArgExpr, FunctionArgOperator, Ident,
    ObjectName, Statement, TableFactor, Value, VisitMut, VisitorMut,
};
use std::ops::ControlFlow;

/// Rewrites every `local("k" = "v", ...)` in `stmt` into `local('k', 'v', ...)`, which
/// DataFusion passes to the `local` table function unchanged. Arguments that are not `key = value`
/// are refused here with a message saying so.
pub fn rewrite_calls(stmt: &mut Statement) -> Result<()> {
    struct Rewriter;
    impl VisitorMut for Rewriter {
        type Break = BasaltError;
        fn pre_visit_table_factor(&mut self, t: &mut TableFactor) -> ControlFlow<BasaltError> {
            if let TableFactor::Table {
                name,
                args: Some(args),
                ..
            } = t
            {
                // local(..) and Doris's numbers(..) take `"key" = "value"` properties.
                let function = match name.0.as_slice() {
                    [part] => part.as_ident().and_then(|i| {
                        [NAME, crate::numbers_table::NAME]
                            .into_iter()
                            .find(|n| i.value.eq_ignore_ascii_case(n))
                    }),
                    _ => None,
                };
                if let Some(function) = function {
                    *name = ObjectName::from(vec![Ident::new(function)]);
                    let mut pairs = Vec::with_capacity(args.args.len() * 2);
                    for arg in &args.args {
                        match key_value(arg) {
                            Ok((k, v)) => {
                                pairs.push(string_arg(k));
                                pairs.push(string_arg(v));
                            }
                            Err(e) => return ControlFlow::Break(e),
                        }
                    }
                    args.args = pairs;
                }
            }
            ControlFlow::Continue(())
        }
    }
    match stmt.visit(&mut Rewriter) {
        ControlFlow::Break(e) => Err(e),
        ControlFlow::Continue(()) => Ok(()),
    }
}

fn string_arg(s: String) -> FunctionArg {
    FunctionArg::Unnamed(FunctionArgExpr::Expr(SqlExpr::value(
        Value::SingleQuotedString(s),
    )))
}

/// `"k" = "v"` (strings or identifiers on either side; numbers and booleans as values).
fn key_value(arg: &FunctionArg) -> Result<(String, String)> {
    let bad = || {
        wrong(format!(
            "expected \"key\" = \"value\" properties, got `{arg}`"
        ))
    };
    let (k, v) = match arg {
        FunctionArg::Unnamed(FunctionArgExpr::Expr(SqlExpr::BinaryOp {
            left,
            op: BinaryOperator::Eq,
            right,
        })) => (
            text_of(left).ok_or_else(bad)?,
            text_of(right).ok_or_else(bad)?,
        ),
        FunctionArg::Named {
            name,
            arg: FunctionArgExpr::Expr(value),
            operator: FunctionArgOperator::Equals,
        } => (name.value.clone(), text_of(value).ok_or_else(bad)?),
        FunctionArg::ExprNamed {
            name,
            arg: FunctionArgExpr::Expr(value),
            operator: FunctionArgOperator::Equals,
        } => (
            text_of(name).ok_or_else(bad)?,
            text_of(value).ok_or_else(bad)?,
        ),
        _ => return Err(bad()),
    };
    Ok((k, v))
}

fn text_of(e: &SqlExpr) -> Option<String> {
    match e {
        SqlExpr::Value(v) => match &v.value {
            Value::SingleQuotedString(s) | Value::DoubleQuotedString(s) => Some(s.clone()),
            Value::Number(n, _) => Some(n.clone()),
            Value::Boolean(b) => Some(b.to_string()),
            _ => None,
        },
        SqlExpr::Identifier(i) => Some(i.value.clone()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rewritten(sql: &str) -> Result<String> {
        let stmt = basalt_sql::parse_one(sql)?;
        let basalt_sql::Statement::Standard(mut s) = stmt else {
            panic!("not a standard statement");
        };
        rewrite_calls(&mut s)?;
        Ok(s.to_string())
    }

    #[test]
    fn doris_properties_become_pairs() {
        let sql = r#"SELECT * FROM local("file_path" = "a/*.csv", "format"="csv", 'column_separator' = ',')"#;
        let out = rewritten(sql).unwrap();
        assert!(
            out.contains("local('file_path', 'a/*.csv', 'format', 'csv', 'column_separator', ',')"),
            "{out}"
        );
        let out = rewritten(
            r#"INSERT INTO t SELECT c1 FROM LOCAL(`file_path` = "x.parquet", format = parquet) AS f"#,
        )
        .unwrap();
        assert!(
            out.contains("local('file_path', 'x.parquet', 'format', 'parquet')"),
            "{out}"
        );
        // Only calls are rewritten: a table named local is left alone.
        assert!(rewritten("SELECT * FROM local")
            .unwrap()
            .contains("FROM local"));
        let e = rewritten(r#"SELECT * FROM local("file_path")"#).unwrap_err();
        assert_eq!(e.mysql_code(), 1210);
        assert!(e.to_string().contains("\"key\" = \"value\""), "{e}");
        let e = rewritten(r#"SELECT * FROM local("a" = 1 + 2)"#).unwrap_err();
        assert_eq!(e.mysql_code(), 1210);
    }
}
