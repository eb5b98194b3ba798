//! Parameters bound to values: each argument of a CALL is evaluated once (a literal, a user
//! variable, any expression) and becomes a literal of its parameter's type, which replaces the
//! parameter wherever a body statement uses it as a value — never inside string literals,
//! qualified names or the names of tables and columns being defined.

use basalt_catalog::ProcedureParameter;
use basalt_sql::ast::{self, visit_expressions, visit_expressions_mut, Expr, Value, VisitMut};
use datafusion::arrow::array::{Array, RecordBatch, StringArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::DataType;
use std::ops::ControlFlow;

/// A parameter's name and the literal it stands for.
pub(crate) struct Bound {
    pub(super) name: String,
    pub(super) value: Expr,
}

/// The literals of the arguments, from the one-row result of `SELECT arg, ..` (a missing row or
/// column binds NULL), each fitted to its parameter's type (`fitting`; `strict` as the routine's
/// `sql_mode`, warnings to `warn`); OUT parameters start as NULL.
pub(crate) fn bind(
    parameters: &[ProcedureParameter],
    row: Option<&RecordBatch>,
    strict: bool,
    warn: &mut dyn FnMut(u16, String),
) -> basalt_common::Result<Vec<Bound>> {
    let mut bound = Vec::with_capacity(parameters.len());
    for (i, p) in parameters.iter().enumerate() {
        let text = match p.mode {
            basalt_catalog::ParameterMode::Out => None,
            _ => row.and_then(|batch| cell_text(batch, 0, i)),
        };
        let (text, warning) = super::fitting::fit(&p.data_type, &p.name, text, strict)?;
        if let Some((code, message)) = warning {
            warn(code, message);
        }
        bound.push(Bound {
            name: p.name.clone(),
            value: literal(&p.data_type, text),
        });
    }
    Ok(bound)
}

/// The text of the cell at `row`, `column` (`None` for NULL).
pub(super) fn cell_text(batch: &RecordBatch, row: usize, column: usize) -> Option<String> {
    if row >= batch.num_rows() || column >= batch.num_columns() {
        return None;
    }
    let array = batch.column(column);
    // A NULL literal's column has no null buffer: every value of it is NULL.
    if array.is_null(row) || array.data_type() == &DataType::Null {
        return None;
    }
    if array.data_type() == &DataType::Boolean {
        let b = array
            .as_any()
            .downcast_ref::<datafusion::arrow::array::BooleanArray>()?;
        return Some(if b.value(row) { "1" } else { "0" }.to_string());
    }
    let text = cast(&array.slice(row, 1), &DataType::Utf8).ok()?;
    let strings = text.as_any().downcast_ref::<StringArray>()?;
    Some(strings.value(0).to_string())
}

/// What kind of literal a declared type takes.
#[derive(Debug, PartialEq)]
enum TypeClass {
    Integer,
    Number,
    Text,
}

fn type_class(data_type: &str) -> TypeClass {
    let t = data_type.to_ascii_uppercase();
    let base = t.split(['(', ' ']).next().unwrap_or_default();
    match base {
        "TINYINT" | "SMALLINT" | "MEDIUMINT" | "INT" | "INTEGER" | "BIGINT" | "BOOL"
        | "BOOLEAN" | "LARGEINT" => TypeClass::Integer,
        "DECIMAL" | "DEC" | "NUMERIC" | "FLOAT" | "DOUBLE" | "REAL" | "DECIMALV3" => {
            TypeClass::Number
        }
        _ => TypeClass::Text,
    }
}

/// The literal of a value (as text) for a parameter of `data_type`: a number for numeric
/// types (text that is no number reads as its leading number, or 0, as MySQL converts it;
/// integer types round), a string otherwise.
pub(super) fn literal(data_type: &str, text: Option<String>) -> Expr {
    let Some(text) = text else {
        return Expr::value(Value::Null);
    };
    match type_class(data_type) {
        TypeClass::Text => Expr::value(Value::SingleQuotedString(text)),
        class => {
            let number = leading_number(text.trim());
            let number = if class == TypeClass::Integer && number.contains(['.', 'e', 'E']) {
                match number.parse::<f64>() {
                    Ok(f) if f.is_finite() && f.abs() < 9.2e18 => format!("{}", f.round() as i64),
                    _ => number,
                }
            } else {
                number
            };
            // A negative literal is a unary minus over a number.
            match number.strip_prefix('-') {
                Some(positive) => Expr::UnaryOp {
                    op: ast::UnaryOperator::Minus,
                    expr: Box::new(Expr::value(Value::Number(positive.to_string(), false))),
                },
                None => Expr::value(Value::Number(number, false)),
            }
        }
    }
}

/// The longest prefix of `text` that is a decimal number (`0` when there is none).
pub(super) fn leading_number(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut end = 0;
    if matches!(bytes.first(), Some(b'-' | b'+')) {
        end = 1;
    }
    let digits_start = end;
    while end < bytes.len() && bytes[end].is_ascii_digit() {
        end += 1;
    }
    if end < bytes.len() && bytes[end] == b'.' {
        end += 1;
        while end < bytes.len() && bytes[end].is_ascii_digit() {
            end += 1;
        }
    }
    let mantissa = &text[digits_start..end];
    if !mantissa.chars().any(|c| c.is_ascii_digit()) {
        return "0".to_string();
    }
    if end < bytes.len() && matches!(bytes[end], b'e' | b'E') {
        let mut e = end + 1;
        if e < bytes.len() && matches!(bytes[e], b'-' | b'+') {
            e += 1;
        }
        let exp_digits = e;
        while e < bytes.len() && bytes[e].is_ascii_digit() {
            e += 1;
        }
        if e > exp_digits {
            end = e;
        }
    }
    let number = text[..end].trim_start_matches('+');
    number.trim_end_matches('.').to_string()
}

/// Replaces the parameters a statement uses as values by their literals; a SELECT's result
/// columns keep the names MySQL gives them (`SELECT p, p + 1` names its columns `p`, `p + 1`).
pub(crate) fn substitute_statement(statement: &mut ast::Statement, bound: &[Bound]) {
    if bound.is_empty() {
        return;
    }
    if let ast::Statement::Query(query) = statement {
        // A parameter alone in ORDER BY or GROUP BY is a value: in parentheses, its number is
        // not read as a column's position.
        if let Some(ast::OrderBy {
            kind: ast::OrderByKind::Expressions(items),
            ..
        }) = &mut query.order_by
        {
            for item in items {
                parenthesize_parameter(&mut item.expr, bound);
            }
        }
        if let ast::SetExpr::Select(select) = query.body.as_mut() {
            if let ast::GroupByExpr::Expressions(exprs, _) = &mut select.group_by {
                for expr in exprs {
                    parenthesize_parameter(expr, bound);
                }
            }
            for item in &mut select.projection {
                let ast::SelectItem::UnnamedExpr(expr) = item else {
                    continue;
                };
                if !mentions(expr, bound) {
                    continue;
                }
                let alias = match &*expr {
                    Expr::Identifier(ident) => ident.value.clone(),
                    other => other.to_string(),
                };
                *item = ast::SelectItem::ExprWithAlias {
                    expr: expr.clone(),
                    alias: ast::Ident::with_quote('`', alias),
                };
            }
        }
    }
    substitute(statement, bound);
}

fn parenthesize_parameter(expr: &mut Expr, bound: &[Bound]) {
    if let Expr::Identifier(ident) = expr {
        if let Some(b) = bound_to(bound, ident) {
            *expr = Expr::Nested(Box::new(b.value.clone()));
        }
    }
}

/// True when `expr` uses a parameter as a value.
fn mentions(expr: &Expr, bound: &[Bound]) -> bool {
    visit_expressions(expr, |e| match e {
        Expr::Identifier(ident) if bound_to(bound, ident).is_some() => ControlFlow::Break(()),
        _ => ControlFlow::Continue(()),
    })
    .is_break()
}

fn bound_to<'b>(bound: &'b [Bound], ident: &ast::Ident) -> Option<&'b Bound> {
    if !matches!(ident.quote_style, None | Some('`')) {
        return None;
    }
    bound
        .iter()
        .find(|b| b.name.eq_ignore_ascii_case(&ident.value))
}

/// Replaces the parameters a statement (or an expression) uses as values by their literals.
pub(crate) fn substitute<N: VisitMut>(statement: &mut N, bound: &[Bound]) {
    if bound.is_empty() {
        return;
    }
    let _ = visit_expressions_mut(statement, |expr| {
        if let Expr::Identifier(ident) = expr {
            if let Some(b) = bound_to(bound, ident) {
                *expr = b.value.clone();
            }
        }
        ControlFlow::<()>::Continue(())
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn param(name: &str, data_type: &str) -> ProcedureParameter {
        ProcedureParameter {
            mode: basalt_catalog::ParameterMode::In,
            name: name.into(),
            data_type: data_type.into(),
        }
    }

    fn substituted(sql: &str, bound: &[Bound]) -> String {
        let basalt_sql::Statement::Standard(mut s) = basalt_sql::parse_one(sql).unwrap() else {
            panic!("{sql}")
        };
        substitute_statement(&mut s, bound);
        s.to_string()
    }

    #[test]
    fn parameters_become_typed_literals_only_where_they_are_values() {
        let bound = vec![
            Bound {
                name: "t".into(),
                value: literal("VARCHAR(255)", Some("it's".into())),
            },
            Bound {
                name: "n".into(),
                value: literal("INT", Some("-2.5".into())),
            },
        ];
        assert_eq!(
            substituted(
                "SELECT pos, 't', x.t FROM t WHERE tree = T AND k > n",
                &bound
            ),
            "SELECT pos, 't', x.t FROM t WHERE tree = 'it''s' AND k > -3"
        );
        assert_eq!(
            substituted("INSERT INTO t (t) VALUES (t, `n`)", &bound),
            "INSERT INTO t (t) VALUES ('it''s', -3)"
        );
    }

    #[test]
    fn numbers_read_as_mysql_converts_text() {
        assert_eq!(leading_number("12abc"), "12");
        assert_eq!(leading_number("abc"), "0");
        assert_eq!(leading_number("-1.5e3x"), "-1.5e3");
        assert_eq!(leading_number("7."), "7");
        assert_eq!(literal("DECIMAL(10,2)", None), Expr::value(Value::Null));
        assert_eq!(type_class("bigint(20) unsigned"), TypeClass::Integer);
        let _ = param("a", "INT");
    }
}
