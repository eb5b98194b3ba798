//! Small helpers for matching non-reserved words (Doris keywords that sqlparser does not know)
//! case-insensitively on a `sqlparser` token stream.

use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

/// True if the next token is the word `w`.
pub fn peek_word(p: &Parser, w: &str) -> bool {
    peek_nth_word(p, 0, w)
}

/// True if the token `n` ahead is the word `w`.
pub fn peek_nth_word(p: &Parser, n: usize, w: &str) -> bool {
    matches!(&p.peek_nth_token(n).token, Token::Word(word) if word.quote_style.is_none() && word.value.eq_ignore_ascii_case(w))
}

/// Consumes the word `w` if it is next.
pub fn eat_word(p: &mut Parser, w: &str) -> bool {
    if peek_word(p, w) {
        p.next_token();
        true
    } else {
        false
    }
}

/// Consumes the words `ws` if they are all next, in order; otherwise consumes nothing.
pub fn eat_words(p: &mut Parser, ws: &[&str]) -> bool {
    if ws.iter().enumerate().all(|(i, w)| peek_nth_word(p, i, w)) {
        for _ in ws {
            p.next_token();
        }
        true
    } else {
        false
    }
}

/// Consumes the word `w` or fails with a positioned syntax error.
pub fn expect_word(p: &mut Parser, w: &str) -> Result<(), ParserError> {
    if eat_word(p, w) {
        Ok(())
    } else {
        p.expected(w, p.peek_token())
    }
}

/// Reads an identifier (bare, backquoted or double-quoted word) and returns its text.
pub fn ident(p: &mut Parser) -> Result<String, ParserError> {
    Ok(p.parse_identifier()?.value)
}

/// Reads a string literal in single or double quotes.
pub fn string_literal(p: &mut Parser) -> Result<String, ParserError> {
    let t = p.next_token();
    match t.token {
        Token::SingleQuotedString(s) | Token::DoubleQuotedString(s) => Ok(s),
        _ => p.expected("a quoted string", t),
    }
}

/// Reads an unsigned integer literal.
pub fn uint_literal(p: &mut Parser) -> Result<u64, ParserError> {
    let t = p.next_token();
    match &t.token {
        Token::Number(n, _) => match n.parse() {
            Ok(v) => Ok(v),
            Err(_) => p.expected("an unsigned integer", t),
        },
        _ => p.expected("an unsigned integer", t),
    }
}
