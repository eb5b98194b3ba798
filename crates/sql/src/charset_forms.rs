//! MySQL's expression forms around character sets and binary strings that `sqlparser` reads
//! otherwise or not at all, read at the start of an operand ([`parse`], called from the
//! dialect's prefix hook):
//!
//! - `CAST(x AS type)` and `CONVERT(x, type)` with MySQL's own targets: `CHAR[(n)]` followed by
//!   `CHARACTER SET cs` / `CHARSET cs` / `ASCII` (latin1) / `UNICODE` (ucs2) / `BINARY` (a
//!   `_bin` collation: the same characters) and `COLLATE c`, in any order; `SIGNED INT[EGER]`
//!   and `UNSIGNED INT[EGER]`. A target with a character set is
//!   `Expr::Convert { data_type: CHAR(n), charset }`, as `CONVERT(x USING cs)` is one without
//!   a type.
//! - `CHAR(n, .. USING cs)`: `char(n, .., using => cs)`, the character set as a named
//!   argument.
//! - `TRIM(LEADING | TRAILING | BOTH FROM s)`: spaces trimmed on that side.
//! - `BINARY x`: a cast of the operand right after it, binding as tightly as unary minus
//!   (`BINARY 'a' IN ..` casts `'a'`, not the IN; sqlparser cast the whole expression).

use crate::words::{eat_word, eat_words, peek_nth_word, peek_word};
use sqlparser::ast::{
    CastKind, CharacterLength, DataType, Expr, Function, FunctionArg, FunctionArgExpr,
    FunctionArgOperator, FunctionArgumentList, FunctionArguments, Ident, ObjectName, Value,
};
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

/// One of this module's forms, if the parser is at one; `tightest` is the binding strength of
/// unary operators (for `BINARY x`).
pub(crate) fn parse(p: &mut Parser, tightest: u8) -> Option<Result<Expr, ParserError>> {
    let at_call =
        |p: &Parser, word: &str| peek_word(p, word) && p.peek_nth_token(1).token == Token::LParen;
    if at_call(p, "CAST") {
        p.next_token();
        return Some(parse_cast(p));
    }
    if at_call(p, "CONVERT") {
        p.next_token();
        return Some(parse_convert(p));
    }
    if at_call(p, "CHAR") {
        return maybe(p, parse_char_using);
    }
    if at_call(p, "TRIM") {
        return maybe(p, parse_trim_side);
    }
    if peek_word(p, "BINARY") && starts_operand(&p.peek_nth_token(1).token) {
        return maybe(p, |p| {
            p.next_token();
            let operand = p.parse_subexpr(tightest)?;
            Ok(cast(operand, DataType::Binary(None)))
        });
    }
    None
}

/// `f`'s expression, or None (nothing consumed) when the text is not its form.
fn maybe(
    p: &mut Parser,
    f: impl FnMut(&mut Parser) -> Result<Expr, ParserError>,
) -> Option<Result<Expr, ParserError>> {
    match p.maybe_parse(f) {
        Ok(Some(e)) => Some(Ok(e)),
        Ok(None) => None,
        Err(e) => Some(Err(e)),
    }
}

/// A token that can begin the operand of `BINARY`.
fn starts_operand(t: &Token) -> bool {
    matches!(
        t,
        Token::SingleQuotedString(_)
            | Token::DoubleQuotedString(_)
            | Token::HexStringLiteral(_)
            | Token::NationalStringLiteral(_)
            | Token::Number(..)
            | Token::LParen
            | Token::Minus
            | Token::Plus
            | Token::Tilde
            | Token::ExclamationMark
            | Token::Placeholder(_)
            | Token::AtSign
    ) || matches!(t, Token::Word(w) if w.keyword == sqlparser::keywords::Keyword::NoKeyword
        || w.quote_style.is_some()
        || ["NULL", "CONCAT", "CAST", "CONVERT", "CHAR", "TRUE", "FALSE"]
            .iter()
            .any(|k| w.value.eq_ignore_ascii_case(k)))
}

fn cast(expr: Expr, data_type: DataType) -> Expr {
    Expr::Cast {
        kind: CastKind::Cast,
        expr: Box::new(expr),
        data_type,
        array: false,
        format: None,
    }
}

/// `(x AS type)` after CAST.
fn parse_cast(p: &mut Parser) -> Result<Expr, ParserError> {
    p.expect_token(&Token::LParen)?;
    let expr = p.parse_expr()?;
    p.expect_keyword_is(sqlparser::keywords::Keyword::AS)?;
    if let Some(target) = mysql_target(p)? {
        p.expect_token(&Token::RParen)?;
        return Ok(target.applied_to(expr));
    }
    let data_type = p.parse_data_type()?;
    let array = p.parse_keyword(sqlparser::keywords::Keyword::ARRAY);
    let format = p.parse_optional_cast_format()?;
    p.expect_token(&Token::RParen)?;
    Ok(Expr::Cast {
        kind: CastKind::Cast,
        expr: Box::new(expr),
        data_type,
        array,
        format,
    })
}

/// `(x, type)` or `(x USING cs)` after CONVERT.
fn parse_convert(p: &mut Parser) -> Result<Expr, ParserError> {
    p.expect_token(&Token::LParen)?;
    let expr = p.parse_expr()?;
    if p.parse_keyword(sqlparser::keywords::Keyword::USING) {
        let charset = p.parse_object_name(false)?;
        p.expect_token(&Token::RParen)?;
        return Ok(convert(expr, None, Some(charset)));
    }
    p.expect_token(&Token::Comma)?;
    if let Some(target) = mysql_target(p)? {
        p.expect_token(&Token::RParen)?;
        return Ok(target.applied_to(expr));
    }
    let data_type = p.parse_data_type()?;
    let charset = if eat_words(p, &["CHARACTER", "SET"]) || eat_word(p, "CHARSET") {
        Some(p.parse_object_name(false)?)
    } else {
        None
    };
    p.expect_token(&Token::RParen)?;
    Ok(convert(expr, Some(data_type), charset))
}

fn convert(expr: Expr, data_type: Option<DataType>, charset: Option<ObjectName>) -> Expr {
    Expr::Convert {
        is_try: false,
        expr: Box::new(expr),
        data_type,
        charset,
        target_before_value: false,
        styles: vec![],
    }
}

/// A cast target only MySQL spells.
enum Target {
    /// SIGNED INT[EGER] / UNSIGNED INT[EGER].
    Integer(DataType),
    /// CHAR[(n)] with a character set (None: the connection's) or collation.
    Text {
        length: Option<u64>,
        charset: Option<String>,
    },
}

impl Target {
    fn applied_to(self, expr: Expr) -> Expr {
        match self {
            Target::Integer(t) => cast(expr, t),
            Target::Text { length, charset } => {
                let data_type = DataType::Char(
                    length.map(|length| CharacterLength::IntegerLength { length, unit: None }),
                );
                match charset {
                    Some(cs) => convert(
                        expr,
                        Some(data_type),
                        Some(ObjectName::from(vec![Ident::new(cs)])),
                    ),
                    None => cast(expr, data_type),
                }
            }
        }
    }
}

/// The MySQL-only target at the parser, or None (nothing consumed) for any other type.
fn mysql_target(p: &mut Parser) -> Result<Option<Target>, ParserError> {
    for (sign, t) in [
        ("SIGNED", DataType::Signed),
        ("UNSIGNED", DataType::Unsigned),
    ] {
        if peek_word(p, sign) && (peek_nth_word(p, 1, "INT") || peek_nth_word(p, 1, "INTEGER")) {
            p.next_token();
            p.next_token();
            return Ok(Some(Target::Integer(t)));
        }
    }
    let char_word = ["CHAR", "CHARACTER", "NCHAR"]
        .iter()
        .any(|w| peek_word(p, w));
    if !char_word {
        return Ok(None);
    }
    // CHAR[(n)] followed by an attribute; plain CHAR[(n)] is left to sqlparser.
    p.maybe_parse(text_target)
}

/// `CHAR[(n)]` with attributes; fails (for the caller to go back) without any.
fn text_target(p: &mut Parser) -> Result<Target, ParserError> {
    let national = peek_word(p, "NCHAR");
    p.next_token();
    let length = if p.consume_token(&Token::LParen) {
        let n = crate::words::uint_literal(p)?;
        p.expect_token(&Token::RParen)?;
        Some(n)
    } else {
        None
    };
    let mut charset = national.then(|| "utf8".to_string());
    let mut attributes = 0;
    loop {
        if eat_words(p, &["CHARACTER", "SET"]) || eat_word(p, "CHARSET") {
            charset = Some(p.parse_identifier()?.value);
        } else if eat_word(p, "ASCII") {
            charset = Some("latin1".into());
        } else if eat_word(p, "UNICODE") {
            charset = Some("ucs2".into());
        } else if eat_word(p, "BINARY") || eat_word(p, "BYTE") {
            // A `_bin` collation of the character set: the same characters.
        } else if eat_word(p, "COLLATE") {
            p.parse_identifier()?;
        } else {
            break;
        }
        attributes += 1;
    }
    if attributes == 0 && !national {
        return Err(ParserError::ParserError("a plain CHAR".into()));
    }
    Ok(Target::Text { length, charset })
}

/// `CHAR(n, .. USING cs)`; fails (for the plain call to be read) without USING.
fn parse_char_using(p: &mut Parser) -> Result<Expr, ParserError> {
    let name = p.parse_identifier()?;
    p.expect_token(&Token::LParen)?;
    let mut args = Vec::new();
    loop {
        args.push(FunctionArg::Unnamed(FunctionArgExpr::Expr(p.parse_expr()?)));
        if !p.consume_token(&Token::Comma) {
            break;
        }
    }
    p.expect_keyword_is(sqlparser::keywords::Keyword::USING)?;
    let charset = p.parse_identifier()?.value;
    p.expect_token(&Token::RParen)?;
    args.push(FunctionArg::Named {
        name: Ident::new("using"),
        arg: FunctionArgExpr::Expr(Expr::value(Value::SingleQuotedString(charset))),
        operator: FunctionArgOperator::RightArrow,
    });
    Ok(Expr::Function(Function {
        name: ObjectName::from(vec![name]),
        uses_odbc_syntax: false,
        parameters: FunctionArguments::None,
        args: FunctionArguments::List(FunctionArgumentList {
            duplicate_treatment: None,
            args,
            clauses: vec![],
        }),
        filter: None,
        null_treatment: None,
        over: None,
        within_group: vec![],
    }))
}

/// `TRIM(LEADING | TRAILING | BOTH FROM s)`; fails for every other TRIM.
fn parse_trim_side(p: &mut Parser) -> Result<Expr, ParserError> {
    p.next_token();
    p.expect_token(&Token::LParen)?;
    let side = p.parse_trim_where()?;
    p.expect_keyword_is(sqlparser::keywords::Keyword::FROM)?;
    let expr = p.parse_expr()?;
    p.expect_token(&Token::RParen)?;
    Ok(Expr::Trim {
        expr: Box::new(expr),
        trim_where: Some(side),
        trim_what: None,
        trim_characters: None,
    })
}

#[cfg(test)]
mod tests {
    use crate::{parse_one, Statement};
    use sqlparser::ast::{SelectItem, SetExpr};

    fn first_item(sql: &str) -> String {
        let Statement::Standard(stmt) = parse_one(&format!("SELECT {sql}")).expect("parses") else {
            panic!("not a standard statement");
        };
        let sqlparser::ast::Statement::Query(q) = *stmt else {
            panic!("not a query");
        };
        let SetExpr::Select(select) = *q.body else {
            panic!("not a select");
        };
        match &select.projection[0] {
            SelectItem::UnnamedExpr(e) => format!("{e:?}"),
            other => panic!("unexpected {other}"),
        }
    }

    #[test]
    fn cast_targets_with_character_sets_are_conversions() {
        let c = first_item("CAST(a AS CHAR CHARACTER SET utf8)");
        assert!(c.starts_with("Convert") && c.contains("\"utf8\""), "{c}");
        let c = first_item("CAST('a' AS CHAR(10) CHARACTER SET utf8mb4 COLLATE DEFAULT)");
        assert!(c.contains("IntegerLength { length: 10"), "{c}");
        let c = first_item("CONVERT(a, CHAR(3) ASCII BINARY)");
        assert!(c.contains("\"latin1\""), "{c}");
        let c = first_item("CONVERT(t USING latin1)");
        assert!(
            c.starts_with("Convert") && c.contains("data_type: None"),
            "{c}"
        );
        // `CHAR(2) BINARY` is a `_bin` collation: a plain cast to CHAR(2).
        let c = first_item("CAST('a' AS CHAR(2) BINARY)");
        assert!(c.starts_with("Cast") && c.contains("Char(Some"), "{c}");
        let c = first_item("CAST(a AS CHAR(4))");
        assert!(c.starts_with("Cast"), "{c}");
        let c = first_item("CAST(CAST(1 AS SIGNED INT) AS UNSIGNED INTEGER)");
        assert!(c.contains("Signed") && c.contains("Unsigned"), "{c}");
    }

    #[test]
    fn char_using_trim_side_and_binary_operand() {
        let c = first_item("CHAR(0xd1, 0x8f USING utf8mb4)");
        assert!(c.contains("Named") && c.contains("utf8mb4"), "{c}");
        assert!(first_item("CHAR(65)").starts_with("Function"));
        let c = first_item("TRIM(LEADING FROM '  a')");
        assert!(
            c.contains("Leading") && c.contains("trim_what: None"),
            "{c}"
        );
        assert!(first_item("TRIM('x' FROM 'xax')").contains("trim_what: Some"));
        let c = first_item("POSITION(BINARY 'll' IN 'hello')");
        assert!(c.starts_with("Position"), "{c}");
        let c = first_item("BINARY 'a' = 'A'");
        assert!(c.starts_with("BinaryOp"), "{c}");
    }
}
