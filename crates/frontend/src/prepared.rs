//! A session's prepared statements (COM_STMT_PREPARE and SQL-level PREPARE): the parsed
//! statement and the byte positions of its `?` placeholders, the result columns known at
//! prepare time, the short-circuit plan of a point query, and binding parameter values into the
//! parsed statement (each placeholder replaced by a literal; nothing is parsed again).

use crate::point_query::PointQuery;
use basalt_common::{BasaltError, Literal, ParamValue, Result};
use basalt_sql::ast::{self, Expr, Value};
use basalt_sql::Statement;
use datafusion::arrow::datatypes::SchemaRef;
use std::collections::HashMap;
use std::ops::ControlFlow;
use std::sync::Arc;

/// One prepared statement.
pub struct PreparedStatement {
    pub sql: String,
    /// `sql` parsed.
    pub statement: Statement,
    /// Byte offsets of the `?` placeholders in `sql`.
    pub placeholders: Vec<usize>,
    /// Result columns, when known before execution.
    pub columns: Option<SchemaRef>,
    /// The short-circuit plan when the statement is a primary-key point query.
    pub point: Option<Arc<PointQuery>>,
}

impl PreparedStatement {
    pub fn param_count(&self) -> usize {
        self.placeholders.len()
    }

    /// Checks that `params` has one value per placeholder.
    pub fn check_params(&self, params: &[ParamValue]) -> Result<()> {
        if params.len() != self.placeholders.len() {
            return Err(BasaltError::WrongArguments {
                function: "EXECUTE".into(),
                message: format!(
                    "the statement has {} parameter(s), {} given",
                    self.placeholders.len(),
                    params.len()
                ),
            });
        }
        Ok(())
    }

    /// The statement with each placeholder replaced by its value as a literal, in the order the
    /// placeholders appear in the text.
    pub fn bind(&self, params: &[ParamValue]) -> Result<Statement> {
        self.check_params(params)?;
        let mut statement = self.statement.clone();
        if params.is_empty() {
            return Ok(statement);
        }
        if let Statement::Standard(stmt) = &mut statement {
            if bind_placeholders(stmt, params) {
                return Ok(statement);
            }
        }
        // Placeholders the parser keeps outside expressions (none in the statements Basalt
        // runs today): bind into the text and parse that.
        basalt_sql::parse_one(&self.bind_text(params)?)
    }

    /// The statement text with each placeholder replaced by its value as a literal.
    pub fn bind_text(&self, params: &[ParamValue]) -> Result<String> {
        self.check_params(params)?;
        let mut out = String::with_capacity(self.sql.len() + 16 * params.len());
        let mut at = 0;
        for (offset, value) in self.placeholders.iter().zip(params) {
            out.push_str(&self.sql[at..*offset]);
            out.push_str(&value.to_sql_literal());
            at = offset + 1;
        }
        out.push_str(&self.sql[at..]);
        Ok(out)
    }
}

fn is_placeholder(e: &Expr) -> Option<&ast::ValueWithSpan> {
    match e {
        Expr::Value(v) if matches!(&v.value, Value::Placeholder(p) if p == "?") => Some(v),
        _ => None,
    }
}

/// Replaces the `?` placeholders of `stmt` by `params` in text order (by their positions, not
/// the AST's field order). False, changing nothing, unless the expressions hold exactly one
/// placeholder per parameter.
fn bind_placeholders(stmt: &mut ast::Statement, params: &[ParamValue]) -> bool {
    let mut positions = Vec::with_capacity(params.len());
    let _ = ast::visit_expressions(stmt, |e| {
        if let Some(v) = is_placeholder(e) {
            positions.push((v.span.start.line, v.span.start.column));
        }
        ControlFlow::<()>::Continue(())
    });
    if positions.len() != params.len() {
        return false;
    }
    // The n-th placeholder visited is the rank[n]-th in the text.
    let mut by_text: Vec<usize> = (0..positions.len()).collect();
    by_text.sort_by_key(|&i| positions[i]);
    let mut rank = vec![0; positions.len()];
    for (r, &i) in by_text.iter().enumerate() {
        rank[i] = r;
    }
    let mut visited = 0;
    let _ = ast::visit_expressions_mut(stmt, |e| {
        if is_placeholder(e).is_some() {
            *e = literal_expr(&params[rank[visited]]);
            visited += 1;
        }
        ControlFlow::<()>::Continue(())
    });
    true
}

/// The expression the parser makes of the value's literal (a negative number is a minus
/// applied to its magnitude).
fn literal_expr(param: &ParamValue) -> Expr {
    match param.literal() {
        Literal::Null => Expr::value(Value::Null),
        Literal::Number(n) => match n.strip_prefix('-') {
            Some(magnitude) => Expr::UnaryOp {
                op: ast::UnaryOperator::Minus,
                expr: Box::new(Expr::value(Value::Number(magnitude.to_string(), false))),
            },
            None => {
                let n = n.strip_prefix('+').unwrap_or(&n).to_string();
                Expr::value(Value::Number(n, false))
            }
        },
        Literal::Text(t) => Expr::value(Value::SingleQuotedString(t)),
    }
}

/// The prepared statements of one session, by protocol id and by SQL-level name.
#[derive(Default)]
pub struct PreparedStatements {
    by_id: foldhash::HashMap<u32, Arc<PreparedStatement>>,
    names: HashMap<String, u32>,
    next_id: u32,
}

impl PreparedStatements {
    /// Keeps `stmt` under a new id (and `name`, replacing a statement of that name), refusing
    /// more than `limit` statements.
    pub fn add(&mut self, stmt: PreparedStatement, name: Option<&str>, limit: u64) -> Result<u32> {
        let replaced = name.and_then(|n| self.names.get(&n.to_lowercase()).copied());
        if let Some(old) = replaced {
            self.by_id.remove(&old);
        }
        if self.by_id.len() as u64 >= limit {
            return Err(BasaltError::TooManyPreparedStatements(limit));
        }
        self.next_id = self.next_id.wrapping_add(1).max(1);
        while self.by_id.contains_key(&self.next_id) {
            self.next_id = self.next_id.wrapping_add(1).max(1);
        }
        let id = self.next_id;
        self.by_id.insert(id, Arc::new(stmt));
        if let Some(n) = name {
            self.names.insert(n.to_lowercase(), id);
        }
        Ok(id)
    }

    pub fn get(&self, id: u32) -> Option<Arc<PreparedStatement>> {
        self.by_id.get(&id).cloned()
    }

    pub fn id_of(&self, name: &str) -> Option<u32> {
        self.names.get(&name.to_lowercase()).copied()
    }

    /// Removes a statement; returns whether it existed.
    pub fn remove(&mut self, id: u32) -> bool {
        self.names.retain(|_, v| *v != id);
        self.by_id.remove(&id).is_some()
    }

    pub fn clear(&mut self) {
        self.by_id.clear();
        self.names.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A standard statement as the parser prints it back (spans and layout aside).
    fn printed(s: Statement) -> String {
        match s {
            Statement::Standard(s) => s.to_string(),
            other => panic!("{other:?}"),
        }
    }

    fn stmt(sql: &str) -> PreparedStatement {
        PreparedStatement {
            sql: sql.to_string(),
            statement: basalt_sql::parse_one(sql).unwrap(),
            placeholders: basalt_sql::placeholder_offsets(sql).unwrap(),
            columns: None,
            point: None,
        }
    }

    #[test]
    fn binds_values_in_order() {
        let s = stmt("SELECT '?', ? FROM t WHERE a = ? /* ? */ AND b = ?");
        assert_eq!(s.param_count(), 3);
        let params = [
            ParamValue::Int(1),
            ParamValue::Bytes(b"x'y".to_vec()),
            ParamValue::Null,
        ];
        let text = s.bind_text(&params).unwrap();
        assert_eq!(
            text,
            "SELECT '?', 1 FROM t WHERE a = 'x''y' /* ? */ AND b = NULL"
        );
        assert_eq!(
            printed(s.bind(&params).unwrap()),
            printed(basalt_sql::parse_one(&text).unwrap())
        );
        let err = s.bind(&[ParamValue::Int(1)]).unwrap_err();
        assert_eq!(err.mysql_code(), 1210);
    }

    #[test]
    fn non_ascii_text_before_placeholders() {
        let s = stmt("SELECT 'grüße',\n  ? + ?");
        let text = s
            .bind_text(&[ParamValue::Int(1), ParamValue::Int(2)])
            .unwrap();
        assert_eq!(text, "SELECT 'grüße',\n  1 + 2");
    }

    /// Parameters follow the text's order, whatever order the AST keeps its parts in.
    #[test]
    fn binds_the_parsed_statement_in_text_order() {
        for (sql, bound) in [
            (
                "SELECT a FROM t WHERE b BETWEEN ? AND ? ORDER BY a LIMIT ?, ?",
                "SELECT a FROM t WHERE b BETWEEN 1 AND 2 ORDER BY a LIMIT 3, 4",
            ),
            (
                "UPDATE t SET v = ?, w = ? WHERE k IN (?, ?)",
                "UPDATE t SET v = 1, w = 2 WHERE k IN (3, 4)",
            ),
            (
                "SELECT CASE WHEN ? THEN ? WHEN ? THEN ? END",
                "SELECT CASE WHEN 1 THEN 2 WHEN 3 THEN 4 END",
            ),
        ] {
            let s = stmt(sql);
            let params: Vec<ParamValue> = (1..=4).map(ParamValue::Int).collect();
            assert_eq!(
                printed(s.bind(&params).unwrap()),
                printed(basalt_sql::parse_one(bound).unwrap()),
                "{sql}"
            );
        }
        let s = stmt("SELECT ?, ?, ?");
        let bound = s
            .bind(&[
                ParamValue::Double(0.5),
                ParamValue::Decimal("-12.50".into()),
                ParamValue::Date {
                    year: 2024,
                    month: 2,
                    day: 29,
                },
            ])
            .unwrap();
        assert_eq!(
            printed(bound),
            printed(basalt_sql::parse_one("SELECT 5e-1, -12.50, '2024-02-29'").unwrap())
        );
    }

    #[test]
    fn bounded_and_named() {
        let mut all = PreparedStatements::default();
        let a = all.add(stmt("SELECT 1"), Some("S"), 2).unwrap();
        let b = all.add(stmt("SELECT 2"), None, 2).unwrap();
        assert_ne!(a, b);
        assert_eq!(
            all.add(stmt("SELECT 3"), None, 2).unwrap_err().mysql_code(),
            1461
        );
        // Re-preparing a name replaces its statement.
        let c = all.add(stmt("SELECT 3"), Some("s"), 2).unwrap();
        assert_eq!(all.id_of("s"), Some(c));
        assert!(all.get(a).is_none());
        assert!(all.remove(c));
        assert!(!all.remove(c));
        assert_eq!(all.id_of("s"), None);
    }
}
