//! `expr COLLATE name` (in a select list, a comparison, ORDER BY). Basalt compares strings by
//! their bytes, as Doris does, which is what the binary collations (`utf8mb4_bin`, `binary`,
//! any `*_bin`) ask for: COLLATE with one of those leaves the expression as it is. Any other
//! collation (`utf8mb4_general_ci`, `utf8mb4_0900_ai_ci`, ...) asks for case- and
//! accent-insensitive comparison that Basalt does not have: the statement fails naming it,
//! rather than comparing bytes where the user asked for something else.

use basalt_common::{BasaltError, Result};
use basalt_sql::ast::{visit_expressions_mut, Expr, ObjectName, Statement};
use std::ops::ControlFlow;

/// Drops binary COLLATE clauses from `stmt`; fails on any other collation.
pub fn rewrite(stmt: &mut Statement) -> Result<()> {
    let outcome = visit_expressions_mut(stmt, |e| {
        if let Expr::Collate { expr, collation } = e {
            if !is_binary(collation) {
                return ControlFlow::Break(BasaltError::NotSupported(format!(
                    "COLLATE {collation} (Basalt compares strings by their bytes; \
                     the binary collations such as utf8mb4_bin are accepted)"
                )));
            }
            let inner = std::mem::replace(expr.as_mut(), Expr::value(basalt_sql::ast::Value::Null));
            *e = inner;
        }
        ControlFlow::Continue(())
    });
    match outcome {
        ControlFlow::Break(e) => Err(e),
        ControlFlow::Continue(()) => Ok(()),
    }
}

/// True for `binary` and the `<charset>_bin` collations.
fn is_binary(collation: &ObjectName) -> bool {
    let name = collation
        .to_string()
        .trim_matches(['`', '"', '\''])
        .to_ascii_lowercase();
    name == "binary" || name.ends_with("_bin")
}

#[cfg(test)]
mod tests {
    use super::rewrite;

    fn rewritten(sql: &str) -> Result<String, String> {
        let mut stmts = basalt_sql::parse_statements(sql).map_err(|e| e.to_string())?;
        let Some(basalt_sql::Statement::Standard(stmt)) = stmts.first_mut() else {
            return Err("not a query".into());
        };
        rewrite(stmt).map_err(|e| e.to_string())?;
        Ok(stmt.to_string())
    }

    #[test]
    fn binary_collations_compare_as_basalt_does() {
        assert_eq!(
            rewritten("SELECT a FROM t ORDER BY a COLLATE utf8mb4_bin").unwrap(),
            "SELECT a FROM t ORDER BY a"
        );
        assert_eq!(
            rewritten("SELECT a FROM t WHERE a = 'x' COLLATE `binary`").unwrap(),
            "SELECT a FROM t WHERE a = 'x'"
        );
    }

    #[test]
    fn other_collations_are_refused_by_name() {
        let e = rewritten("SELECT a FROM t WHERE a = 'X' COLLATE utf8mb4_general_ci").unwrap_err();
        assert!(e.contains("utf8mb4_general_ci"), "{e}");
    }
}
