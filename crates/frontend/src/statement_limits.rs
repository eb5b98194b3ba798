//! Limits on the shape of a statement, checked right after parsing and before any planning: how
//! deeply expressions and subqueries nest, how many arms a UNION has, how wide a select list
//! is, how long a numeric literal is, and how many placeholders a prepared statement has. Each
//! is a clear error; without them one statement could exhaust the stack or keep the planner
//! (whose cost grows faster than linearly in these) busy for minutes.

use basalt_common::{BasaltError, Result};
use basalt_sql::ast::{
    BinaryOperator, Expr, Query, SetExpr, SetOperator, SetQuantifier, Statement, Value, Values,
    Visit, VisitMut, Visitor, VisitorMut,
};
use std::ops::ControlFlow;

/// Deepest expression nesting (a chain `1+1+..` of this many terms).
pub const MAX_EXPRESSION_DEPTH: usize = 1_000;
/// Deepest nesting of queries in one another (subqueries, derived tables).
pub const MAX_QUERY_DEPTH: usize = 128;
/// Most arms of one UNION / INTERSECT / EXCEPT chain.
pub const MAX_SET_OPERANDS: usize = 1_000;
/// Most expressions in one select list.
pub const MAX_SELECT_ITEMS: usize = 4_096;
/// Longest numeric literal, in characters (MySQL's DECIMAL holds 65 digits).
pub const MAX_NUMBER_LENGTH: usize = 256;
/// Most `?` placeholders in a prepared statement (the protocol counts them in 16 bits).
pub const MAX_PLACEHOLDERS: usize = 65_535;

/// Balances long AND/OR chains (so `a = 1 OR a = 2 OR ..` of thousands of terms nests
/// logarithmically, not linearly) and long UNION chains (DataFusion flattens nested unions
/// level by level, which costs the square of a left-deep chain's length: 1,000 arms took
/// minutes to plan), checks its LIMIT and COLLATE clauses ([`crate::limit_clause`],
/// [`crate::collations`]), then refuses a statement beyond any of the limits. Returns how many
/// expressions the statement has (its planning cost grows with them).
pub fn prepare(stmt: &mut Statement) -> Result<usize> {
    crate::limit_clause::rewrite(stmt)?;
    crate::collations::rewrite(stmt)?;
    let _ = stmt.visit(&mut BalanceLogic);
    let _ = stmt.visit(&mut BalanceUnions);
    check(stmt)
}

/// Refuses a statement beyond any of the limits; else the number of its expressions.
pub fn check(stmt: &Statement) -> Result<usize> {
    let mut shape = Shape::default();
    match stmt.visit(&mut shape) {
        ControlFlow::Break(e) => Err(e),
        ControlFlow::Continue(()) => Ok(shape.expressions),
    }
}

/// Refuses a prepared statement with more than [`MAX_PLACEHOLDERS`] placeholders (MySQL's
/// error 1390).
pub fn check_placeholders(count: usize) -> Result<()> {
    if count > MAX_PLACEHOLDERS {
        Err(BasaltError::TooManyPlaceholders(count))
    } else {
        Ok(())
    }
}

/// Rebuilds each chain of one logical operator (AND or OR) as a balanced tree with its operands
/// in the same order; AND and OR are associative, so the meaning is unchanged.
struct BalanceLogic;

impl VisitorMut for BalanceLogic {
    type Break = ();

    fn pre_visit_expr(&mut self, expr: &mut Expr) -> ControlFlow<()> {
        let Expr::BinaryOp { op, .. } = expr else {
            return ControlFlow::Continue(());
        };
        if !matches!(op, BinaryOperator::And | BinaryOperator::Or) {
            return ControlFlow::Continue(());
        }
        let op = op.clone();
        let whole = std::mem::replace(expr, Expr::Value(Value::Null.into()));
        let mut operands = Vec::new();
        // Flatten without recursion: the chain may be thousands deep.
        let mut pending = vec![whole];
        while let Some(e) = pending.pop() {
            match e {
                Expr::BinaryOp { left, op: o, right } if o == op => {
                    pending.push(*right);
                    pending.push(*left);
                }
                other => operands.push(other),
            }
        }
        *expr = balanced(operands, &op);
        ControlFlow::Continue(())
    }
}

/// `operands` joined by `op` as a balanced tree.
fn balanced(mut operands: Vec<Expr>, op: &BinaryOperator) -> Expr {
    if operands.len() == 1 {
        return operands.pop().unwrap_or(Expr::Value(Value::Null.into()));
    }
    let right = operands.split_off(operands.len() / 2);
    Expr::BinaryOp {
        left: Box::new(balanced(operands, op)),
        op: op.clone(),
        right: Box::new(balanced(right, op)),
    }
}

/// Rebuilds each chain of UNIONs of one quantifier (`a UNION ALL b UNION ALL c ..`) as a
/// balanced tree with its arms in the same order. Both UNION ALL and UNION DISTINCT are
/// associative, and the first arm, which names the columns, stays first.
struct BalanceUnions;

impl VisitorMut for BalanceUnions {
    type Break = ();

    fn pre_visit_query(&mut self, query: &mut Query) -> ControlFlow<()> {
        let quantifier = match query.body.as_ref() {
            SetExpr::SetOperation {
                op: SetOperator::Union,
                set_quantifier:
                    q @ (SetQuantifier::All | SetQuantifier::Distinct | SetQuantifier::None),
                ..
            } => *q,
            _ => return ControlFlow::Continue(()),
        };
        let empty = SetExpr::Values(Values {
            explicit_row: false,
            value_keyword: false,
            rows: Vec::new(),
        });
        let whole = std::mem::replace(query.body.as_mut(), empty);
        let mut arms = Vec::new();
        // Flatten without recursion: the chain may be a thousand deep.
        let mut pending = vec![whole];
        while let Some(body) = pending.pop() {
            match body {
                SetExpr::SetOperation {
                    op: SetOperator::Union,
                    set_quantifier,
                    left,
                    right,
                } if set_quantifier == quantifier => {
                    pending.push(*right);
                    pending.push(*left);
                }
                other => arms.push(other),
            }
        }
        *query.body = balanced_union(arms, quantifier);
        ControlFlow::Continue(())
    }
}

/// `arms` joined by UNION with `quantifier` as a balanced tree.
fn balanced_union(mut arms: Vec<SetExpr>, quantifier: SetQuantifier) -> SetExpr {
    if arms.len() == 1 {
        if let Some(arm) = arms.pop() {
            return arm;
        }
    }
    let right = arms.split_off(arms.len() / 2);
    SetExpr::SetOperation {
        op: SetOperator::Union,
        set_quantifier: quantifier,
        left: Box::new(balanced_union(arms, quantifier)),
        right: Box::new(balanced_union(right, quantifier)),
    }
}

fn too_complex(what: String) -> ControlFlow<BasaltError> {
    ControlFlow::Break(BasaltError::StatementTooComplex(what))
}

#[derive(Default)]
struct Shape {
    expression_depth: usize,
    query_depth: usize,
    expressions: usize,
}

impl Visitor for Shape {
    type Break = BasaltError;

    fn pre_visit_query(&mut self, query: &Query) -> ControlFlow<BasaltError> {
        self.query_depth += 1;
        if self.query_depth > MAX_QUERY_DEPTH {
            return too_complex(format!(
                "queries nested more than {MAX_QUERY_DEPTH} levels deep"
            ));
        }
        // Walk the set-operation tree without recursion: count its arms and check each
        // select list.
        let mut pending = vec![query.body.as_ref()];
        let mut arms = 0usize;
        while let Some(body) = pending.pop() {
            match body {
                SetExpr::SetOperation { left, right, .. } => {
                    pending.push(left);
                    pending.push(right);
                }
                SetExpr::Select(select) => {
                    arms += 1;
                    if select.projection.len() > MAX_SELECT_ITEMS {
                        return too_complex(format!(
                            "a select list of {} expressions (at most {MAX_SELECT_ITEMS})",
                            select.projection.len()
                        ));
                    }
                }
                _ => arms += 1,
            }
        }
        if arms > MAX_SET_OPERANDS {
            return too_complex(format!(
                "a UNION/INTERSECT/EXCEPT of {arms} queries (at most {MAX_SET_OPERANDS})"
            ));
        }
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, _query: &Query) -> ControlFlow<BasaltError> {
        self.query_depth -= 1;
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, expr: &Expr) -> ControlFlow<BasaltError> {
        self.expressions += 1;
        self.expression_depth += 1;
        if self.expression_depth > MAX_EXPRESSION_DEPTH {
            return too_complex(format!(
                "expressions nested more than {MAX_EXPRESSION_DEPTH} levels deep"
            ));
        }
        if let Expr::Value(v) = expr {
            if let Value::Number(n, _) = &v.value {
                if n.len() > MAX_NUMBER_LENGTH {
                    return too_complex(format!(
                        "a numeric literal of {} characters (at most {MAX_NUMBER_LENGTH})",
                        n.len()
                    ));
                }
            }
        }
        ControlFlow::Continue(())
    }

    fn post_visit_expr(&mut self, _expr: &Expr) -> ControlFlow<BasaltError> {
        self.expression_depth -= 1;
        ControlFlow::Continue(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape_of(sql: &str) -> Result<usize> {
        match basalt_sql::parse_one(sql)? {
            basalt_sql::Statement::Standard(mut s) => prepare(&mut s),
            _ => Ok(0),
        }
    }

    #[test]
    fn each_limit_is_a_clear_error() {
        let union = vec!["SELECT 1"; MAX_SET_OPERANDS + 1].join(" UNION ALL ");
        let sum = format!("SELECT {}", vec!["1"; MAX_EXPRESSION_DEPTH + 2].join("+"));
        let wide = format!("SELECT {}", vec!["1"; MAX_SELECT_ITEMS + 1].join(","));
        let number = format!("SELECT {}", "9".repeat(MAX_NUMBER_LENGTH + 1));
        for (sql, what) in [
            (union, "UNION"),
            (sum, "nested"),
            (wide, "select list"),
            (number, "numeric literal"),
        ] {
            let e = shape_of(&sql).unwrap_err();
            assert_eq!(e.mysql_code(), 1473, "{e}");
            assert!(e.to_string().contains(what), "{e}");
        }
        let fine = vec!["SELECT 1"; 100].join(" UNION ALL ");
        assert!(shape_of(&fine).is_ok());
        // Long OR chains are balanced, not refused, and keep their operands in order.
        let ors: Vec<String> = (0..5000).map(|i| format!("k = {i}")).collect();
        let sql = format!("SELECT 1 FROM t WHERE {} AND v > 0", ors.join(" OR "));
        assert!(shape_of(&sql).is_ok());
        let mut small = match basalt_sql::parse_one("SELECT a OR b OR c OR d").unwrap() {
            basalt_sql::Statement::Standard(s) => s,
            other => panic!("{other:?}"),
        };
        prepare(&mut small).unwrap();
        // Same text (operands in order), but the right side is now a chain of its own.
        assert_eq!(small.to_string(), "SELECT a OR b OR c OR d");
        let mut right_is_chain = false;
        let _ = basalt_sql::ast::visit_expressions(&small, |e: &Expr| {
            if let Expr::BinaryOp { right, .. } = e {
                right_is_chain |= matches!(right.as_ref(), Expr::BinaryOp { .. });
            }
            ControlFlow::<()>::Continue(())
        });
        assert!(right_is_chain);
        assert!(shape_of("SELECT (SELECT MAX(a) FROM t WHERE b IN (SELECT 1)) + 1").is_ok());
        assert_eq!(check_placeholders(70_000).unwrap_err().mysql_code(), 1390);
    }

    /// Depth of a query's set-operation tree.
    fn union_depth(body: &SetExpr) -> usize {
        match body {
            SetExpr::SetOperation { left, right, .. } => {
                1 + union_depth(left).max(union_depth(right))
            }
            _ => 0,
        }
    }

    fn prepared(sql: &str) -> Statement {
        let mut s = match basalt_sql::parse_one(sql).unwrap() {
            basalt_sql::Statement::Standard(s) => *s,
            other => panic!("{other:?}"),
        };
        prepare(&mut s).unwrap();
        s
    }

    #[test]
    fn union_chains_are_balanced_keeping_their_arms_and_kinds() {
        let arms: Vec<String> = (0..1000).map(|i| format!("SELECT {i} AS c")).collect();
        let sql = arms.join(" UNION ALL ");
        let Statement::Query(q) = prepared(&sql) else {
            panic!("not a query")
        };
        assert!(union_depth(&q.body) <= 11, "depth {}", union_depth(&q.body));
        // The arms are in the same order (the text is the same).
        assert_eq!(q.to_string(), sql);
        // A chain changing from UNION to UNION ALL keeps its grouping.
        let mixed = "SELECT 1 UNION SELECT 2 UNION SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5";
        let Statement::Query(q) = prepared(mixed) else {
            panic!("not a query")
        };
        assert_eq!(q.to_string(), mixed);
        let SetExpr::SetOperation {
            set_quantifier,
            left,
            ..
        } = q.body.as_ref()
        else {
            panic!("not a union")
        };
        assert_eq!(*set_quantifier, SetQuantifier::All);
        // The DISTINCT part stays one operand of the UNION ALL chain.
        let distinct_inside = |e: &SetExpr| {
            matches!(
                e,
                SetExpr::SetOperation {
                    set_quantifier: SetQuantifier::None,
                    ..
                }
            )
        };
        let all_left = match left.as_ref() {
            SetExpr::SetOperation {
                set_quantifier: SetQuantifier::All,
                left,
                ..
            } => distinct_inside(left),
            other => distinct_inside(other),
        };
        assert!(all_left, "{}", q.body);
    }
}
