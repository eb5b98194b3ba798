//! MySQL's spellings inside a column definition that map onto Basalt's own: the integer type
//! synonyms (`MEDIUMINT`, `MIDDLEINT`, `INT1`..`INT8`), `CURRENT_TIMESTAMP` and its synonyms
//! (in `DEFAULT` and `ON UPDATE`), and `DEFAULT (expr)`.

use crate::statement::DefaultValue;
use crate::words::{eat_word, uint_literal};
use sqlparser::ast::{Expr, UnaryOperator, Value};
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

/// Basalt's name for a MySQL integer synonym (upper case), `None` for any other name.
/// MEDIUMINT (3 bytes in MySQL) is stored as INT, whose range holds it.
pub(crate) fn integer_synonym(upper: &str) -> Option<&'static str> {
    Some(match upper {
        "INT1" => "TINYINT",
        "INT2" => "SMALLINT",
        "MEDIUMINT" | "MIDDLEINT" | "INT3" | "INT4" => "INT",
        "INT8" => "BIGINT",
        _ => return None,
    })
}

/// Eats `CURRENT_TIMESTAMP [( [n] )]`, `NOW( [n] )`, `LOCALTIME[( [n] )]` or
/// `LOCALTIMESTAMP[( [n] )]`; false, nothing eaten, when none starts here.
pub(crate) fn eat_current_timestamp(p: &mut Parser) -> Result<bool, ParserError> {
    let now =
        crate::words::peek_word(p, "NOW") && matches!(p.peek_nth_token(1).token, Token::LParen);
    if !(now
        || eat_word(p, "CURRENT_TIMESTAMP")
        || eat_word(p, "LOCALTIMESTAMP")
        || eat_word(p, "LOCALTIME"))
    {
        return Ok(false);
    }
    if now {
        p.next_token();
    }
    if p.consume_token(&Token::LParen) {
        if !matches!(p.peek_token().token, Token::RParen) {
            let t = p.peek_token();
            if uint_literal(p)? > 6 {
                return p.expected("a fraction precision of 0 to 6", t);
            }
        }
        p.expect_token(&Token::RParen)?;
    }
    Ok(true)
}

/// `CURRENT_TIMESTAMP` (or a synonym) after `ON UPDATE`.
pub(crate) fn current_timestamp(p: &mut Parser) -> Result<(), ParserError> {
    match eat_current_timestamp(p)? {
        true => Ok(()),
        false => p.expected("CURRENT_TIMESTAMP", p.peek_token()),
    }
}

/// `DEFAULT (expr)` from its opening parenthesis: a literal, NULL or the current time in
/// parentheses is that default; any other expression is kept as its text
/// ([`DefaultValue::Expression`]).
pub(crate) fn parenthesized_default(p: &mut Parser) -> Result<DefaultValue, ParserError> {
    p.expect_token(&Token::LParen)?;
    let is_time = {
        let before = p.index();
        let time = eat_current_timestamp(p)?;
        let closes = matches!(p.peek_token().token, Token::RParen);
        if !(time && closes) {
            while p.index() > before {
                p.prev_token();
            }
        }
        time && closes
    };
    if is_time {
        p.expect_token(&Token::RParen)?;
        return Ok(DefaultValue::CurrentTimestamp);
    }
    let expr = p.parse_expr()?;
    p.expect_token(&Token::RParen)?;
    Ok(match literal_value(&expr) {
        Some(Some(v)) => DefaultValue::Literal(v),
        Some(None) => DefaultValue::Null,
        None => DefaultValue::Expression(expr.to_string()),
    })
}

/// The text of a literal (`Some(None)` for NULL), a signed number included; `None` for any
/// other expression.
fn literal_value(expr: &Expr) -> Option<Option<String>> {
    match expr {
        Expr::Nested(inner) => literal_value(inner),
        Expr::Value(v) => match &v.value {
            Value::Number(n, _) => Some(Some(n.clone())),
            Value::SingleQuotedString(s) | Value::DoubleQuotedString(s) => Some(Some(s.clone())),
            Value::Boolean(b) => Some(Some(u8::from(*b).to_string())),
            Value::Null => Some(None),
            _ => None,
        },
        Expr::UnaryOp {
            op: UnaryOperator::Minus,
            expr,
        } => match literal_value(expr)? {
            Some(n) if n.parse::<f64>().is_ok() => Some(Some(format!("-{n}"))),
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use crate::{parse_one, ColumnDef, DefaultValue, Statement};
    use basalt_common::SqlType;

    fn columns(sql: &str) -> Vec<ColumnDef> {
        match parse_one(sql).unwrap() {
            Statement::CreateTable(t) => t.columns,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn integer_synonyms() {
        let cols = columns(
            "CREATE TABLE t (a MEDIUMINT(8) UNSIGNED, b MIDDLEINT, c INT1, d INT2, e INT3, f INT4 NOT NULL, g INT8)",
        );
        let types: Vec<SqlType> = cols.into_iter().map(|c| c.ty).collect();
        assert_eq!(
            types,
            vec![
                SqlType::IntUnsigned,
                SqlType::Int,
                SqlType::TinyInt,
                SqlType::SmallInt,
                SqlType::Int,
                SqlType::Int,
                SqlType::BigInt
            ]
        );
    }

    #[test]
    fn unsigned_integers_and_zerofill() {
        let cols = columns(
            "CREATE TABLE t (a TINYINT(3) UNSIGNED NOT NULL, b SMALLINT UNSIGNED ZEROFILL, \
             c INT(10) ZEROFILL, d BIGINT(20) UNSIGNED AUTO_INCREMENT, e DECIMAL(5,2) UNSIGNED, \
             f INT SIGNED, g SERIAL)",
        );
        let types: Vec<SqlType> = cols.into_iter().map(|c| c.ty).collect();
        assert_eq!(
            types,
            vec![
                SqlType::TinyIntUnsigned,
                SqlType::SmallIntUnsigned,
                SqlType::IntUnsigned,
                SqlType::BigIntUnsigned,
                SqlType::Decimal {
                    precision: 5,
                    scale: 2
                },
                SqlType::Int,
                SqlType::BigIntUnsigned,
            ]
        );
        let refused = crate::parse_one("CREATE TABLE t (a VARCHAR(5) UNSIGNED)").unwrap_err();
        assert!(refused.to_string().contains("UNSIGNED"), "{refused}");
    }

    #[test]
    fn on_update_binary_and_parenthesized_defaults() {
        let cols = columns(
            "CREATE TABLE t (a TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP, \
             b DATETIME(3) ON UPDATE NOW(3) DEFAULT LOCALTIMESTAMP, \
             c VARCHAR(20) BINARY NOT NULL DEFAULT (''), d INT DEFAULT (-5), e INT DEFAULT (a + 1), \
             f DATETIME DEFAULT (CURRENT_TIMESTAMP), g INT DEFAULT (NULL))",
        );
        assert!(cols[0].on_update && cols[1].on_update && !cols[2].on_update);
        assert_eq!(cols[0].default, Some(DefaultValue::CurrentTimestamp));
        assert_eq!(cols[1].default, Some(DefaultValue::CurrentTimestamp));
        assert_eq!(cols[2].ty, SqlType::Varchar(20));
        assert_eq!(cols[2].default, Some(DefaultValue::Literal(String::new())));
        assert_eq!(cols[3].default, Some(DefaultValue::Literal("-5".into())));
        assert_eq!(
            cols[4].default,
            Some(DefaultValue::Expression("a + 1".into()))
        );
        assert_eq!(cols[5].default, Some(DefaultValue::CurrentTimestamp));
        assert_eq!(cols[6].default, Some(DefaultValue::Null));
        for (sql, near) in [
            ("CREATE TABLE t (a TIMESTAMP ON UPDATE 5)", "near '5)'"),
            (
                "CREATE TABLE t (a TIMESTAMP ON DELETE NOW())",
                "near 'ON DELETE",
            ),
            ("CREATE TABLE t (a INT DEFAULT (1 +))", "near ')"),
            ("CREATE TABLE t (a DATETIME DEFAULT NOW(7))", "near '7))'"),
        ] {
            let e = parse_one(sql).unwrap_err();
            assert_eq!(e.mysql_code(), 1064, "{sql}");
            assert!(e.to_string().contains(near), "{sql}: {e}");
        }
    }
}
