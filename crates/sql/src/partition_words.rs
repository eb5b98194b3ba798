//! Doris's ways of naming the partitions a query reads, as MySQL's `t PARTITION (p1, p2)`:
//! `t PARTITIONS (p1, p2)` and `t PARTITION p1`. Only after a table's name (a name following
//! FROM, JOIN, `,` or a qualifier's `.`), so DDL's `PARTITION p1 VALUES ..` and `SHOW
//! PARTITIONS` keep their meaning. Doris's `INSERT OVERWRITE TABLE t PARTITION (*)` (the
//! partitions the rows fall in) reads as a partition named `` `*` ``, which no partition can be
//! (Doris names start with a letter), and its `INSERT INTO t PARTITION (p1) (a, b) ..` (the
//! column list after the partitions) reads as MySQL's `INSERT INTO t (a, b) PARTITION (p1) ..`.
//! Doris's `t TEMPORARY PARTITION (tp1)` (in FROM and INSERT) reads as a partition list whose
//! names carry [`TEMPORARY_MARK`]; [`temporary_partition`] reads such a name back.

use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Span, Token, TokenWithSpan, Word};

/// The tokens with each such partition list in MySQL's form.
pub(crate) fn partition_lists(mut tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    let mut i = 0;
    while i < tokens.len() {
        if is_partition_word(&tokens[i].token) && follows_table_name(&tokens, i) {
            tokens[i].token = Token::make_keyword("PARTITION");
            if let Some(next) = next_code(&tokens, i) {
                if is_name(&tokens[next].token) {
                    let span = tokens[next].span;
                    tokens.insert(next + 1, TokenWithSpan::new(Token::RParen, end_of(span)));
                    tokens.insert(next, TokenWithSpan::new(Token::LParen, span));
                }
            }
        }
        i += 1;
    }
    tokens
}

/// What starts the name of a temporary partition in a partition list (no partition name can
/// hold a control character).
pub const TEMPORARY_MARK: &str = "\u{1}TEMPORARY ";

/// The temporary partition a partition-list name names, if it is marked as one.
pub fn temporary_partition(name: &str) -> Option<&str> {
    name.strip_prefix(TEMPORARY_MARK)
}

/// Each `TEMPORARY PARTITION[S] (tp1, ..)` (or `TEMPORARY PARTITION tp1`) after a table's name
/// in FROM or INSERT as `PARTITION (..)` with marked names (see [`TEMPORARY_MARK`]).
pub(crate) fn temporary_partition_lists(mut tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    let mut i = 0;
    while i < tokens.len() {
        let temporary = matches!(&tokens[i].token, Token::Word(w)
            if w.quote_style.is_none() && w.value.eq_ignore_ascii_case("TEMPORARY"));
        let partition = temporary
            .then(|| next_code(&tokens, i))
            .flatten()
            .filter(|&j| is_partition_word(&tokens[j].token));
        let Some(partition) = partition else {
            i += 1;
            continue;
        };
        if !follows_table_name(&tokens, i) && !follows_insert_target(&tokens, i) {
            i += 1;
            continue;
        }
        tokens[i].token = Token::Whitespace(sqlparser::tokenizer::Whitespace::Space);
        tokens[partition].token = Token::make_keyword("PARTITION");
        let Some(next) = next_code(&tokens, partition) else {
            break;
        };
        let names = if tokens[next].token == Token::LParen {
            let close = matching_paren(&tokens, next).unwrap_or(tokens.len());
            next + 1..close
        } else {
            let span = tokens[next].span;
            tokens.insert(next + 1, TokenWithSpan::new(Token::RParen, end_of(span)));
            tokens.insert(next, TokenWithSpan::new(Token::LParen, span));
            next + 1..next + 2
        };
        for j in names {
            if let Token::Word(w) = &tokens[j].token {
                tokens[j].token = Token::Word(Word {
                    value: format!("{TEMPORARY_MARK}{}", w.value),
                    quote_style: Some('`'),
                    keyword: Keyword::NoKeyword,
                });
            }
        }
        i = partition + 1;
    }
    tokens
}

/// Whether the word at `i` follows the table of `INSERT INTO t` / `INSERT OVERWRITE TABLE t`.
fn follows_insert_target(tokens: &[TokenWithSpan], i: usize) -> bool {
    let Some(mut name) = previous_code(tokens, i) else {
        return false;
    };
    if !is_name(&tokens[name].token) {
        return false;
    }
    // A qualified name: step over `db.`.
    while let Some(dot) = previous_code(tokens, name).filter(|&d| tokens[d].token == Token::Period)
    {
        match previous_code(tokens, dot) {
            Some(db) => name = db,
            None => return false,
        }
    }
    previous_code(tokens, name).is_some_and(|before| {
        matches!(&tokens[before].token, Token::Word(w) if matches!(w.keyword, Keyword::INTO | Keyword::TABLE))
    })
}

/// The partition list `PARTITION (*)` with its star as the quoted name `` `*` ``.
pub(crate) fn partition_stars(mut tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    let mut i = 0;
    while i < tokens.len() {
        if is_partition_word(&tokens[i].token) {
            let open = next_code(&tokens, i).filter(|&j| tokens[j].token == Token::LParen);
            let star = open
                .and_then(|j| next_code(&tokens, j))
                .filter(|&j| tokens[j].token == Token::Mul);
            let close = star
                .and_then(|j| next_code(&tokens, j))
                .filter(|&j| tokens[j].token == Token::RParen);
            if let (Some(star), Some(_)) = (star, close) {
                tokens[star].token = Token::Word(Word {
                    value: "*".into(),
                    quote_style: Some('`'),
                    keyword: Keyword::NoKeyword,
                });
            }
        }
        i += 1;
    }
    tokens
}

/// In each INSERT, `PARTITION (..) (columns)` as `(columns) PARTITION (..)`.
pub(crate) fn insert_columns_first(mut tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    let mut start = 0;
    while start < tokens.len() {
        tokens = insert_columns_first_at(tokens, start);
        start = match (start..tokens.len()).find(|&i| tokens[i].token == Token::SemiColon) {
            Some(semicolon) => semicolon + 1,
            None => break,
        };
    }
    tokens
}

/// [`insert_columns_first`] for the statement starting at `start`.
fn insert_columns_first_at(mut tokens: Vec<TokenWithSpan>, start: usize) -> Vec<TokenWithSpan> {
    let Some(first) = next_code_from(&tokens, start) else {
        return tokens;
    };
    if !matches!(&tokens[first].token, Token::Word(w) if w.keyword == Keyword::INSERT) {
        return tokens;
    }
    let Some(partition) = (first..tokens.len())
        .take_while(|&i| tokens[i].token != Token::SemiColon)
        .find(|&i| is_partition_word(&tokens[i].token))
    else {
        return tokens;
    };
    let Some(open) = next_code(&tokens, partition).filter(|&j| tokens[j].token == Token::LParen)
    else {
        return tokens;
    };
    let Some(close) = matching_paren(&tokens, open) else {
        return tokens;
    };
    let Some(columns_open) =
        next_code(&tokens, close).filter(|&j| tokens[j].token == Token::LParen)
    else {
        return tokens;
    };
    let is_query = next_code(&tokens, columns_open).is_some_and(|j| {
        matches!(&tokens[j].token, Token::Word(w)
            if matches!(w.keyword, Keyword::SELECT | Keyword::WITH | Keyword::VALUES)
                || w.value.eq_ignore_ascii_case("TABLE"))
            || tokens[j].token == Token::LParen
    });
    let Some(columns_close) = matching_paren(&tokens, columns_open) else {
        return tokens;
    };
    if is_query {
        return tokens;
    }
    // Moved, not added to: the statements after keep their token positions.
    let columns: Vec<TokenWithSpan> = tokens.drain(columns_open..=columns_close).collect();
    tokens.splice(partition..partition, columns);
    tokens
}

fn matching_paren(tokens: &[TokenWithSpan], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, t) in tokens.iter().enumerate().skip(open) {
        match t.token {
            Token::LParen => depth += 1,
            Token::RParen => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            Token::SemiColon => return None,
            _ => {}
        }
    }
    None
}

fn next_code_from(tokens: &[TokenWithSpan], i: usize) -> Option<usize> {
    (i..tokens.len()).find(|&j| !matches!(tokens[j].token, Token::Whitespace(_)))
}

fn is_partition_word(t: &Token) -> bool {
    matches!(t, Token::Word(w) if w.quote_style.is_none()
        && (w.value.eq_ignore_ascii_case("PARTITION") || w.value.eq_ignore_ascii_case("PARTITIONS")))
}

/// A word that can only be a name here: quoted, or no keyword at all.
fn is_name(t: &Token) -> bool {
    matches!(t, Token::Word(w) if w.quote_style.is_some() || w.keyword == Keyword::NoKeyword)
}

/// Whether the word at `i` follows a table's name in a FROM clause.
fn follows_table_name(tokens: &[TokenWithSpan], i: usize) -> bool {
    let Some(name) = previous_code(tokens, i) else {
        return false;
    };
    if !is_name(&tokens[name].token) {
        return false;
    }
    let Some(before) = previous_code(tokens, name) else {
        return false;
    };
    match &tokens[before].token {
        Token::Period | Token::Comma => true,
        Token::Word(w) => matches!(w.keyword, Keyword::FROM | Keyword::JOIN),
        _ => false,
    }
}

fn previous_code(tokens: &[TokenWithSpan], i: usize) -> Option<usize> {
    (0..i)
        .rev()
        .find(|&j| !matches!(tokens[j].token, Token::Whitespace(_)))
}

/// The next token after `i` that is not whitespace or a comment.
pub(crate) fn next_code(tokens: &[TokenWithSpan], i: usize) -> Option<usize> {
    (i + 1..tokens.len()).find(|&j| !matches!(tokens[j].token, Token::Whitespace(_)))
}

fn end_of(span: Span) -> Span {
    Span::new(span.end, span.end)
}

#[cfg(test)]
mod tests {
    fn parsed(sql: &str) -> String {
        match crate::parse_one(sql) {
            Ok(crate::Statement::Standard(s)) => s.to_string(),
            other => panic!("{sql}: {other:?}"),
        }
    }

    #[test]
    fn doris_partition_lists_read_as_mysql_writes_them() {
        for (doris, mysql) in [
            (
                "SELECT * FROM tp PARTITIONS (p1, p3) WHERE k > 1",
                "SELECT * FROM tp PARTITION (p1, p3) WHERE k > 1",
            ),
            (
                "SELECT * FROM db.tp PARTITION p2 ORDER BY k",
                "SELECT * FROM db.tp PARTITION (p2) ORDER BY k",
            ),
            (
                "SELECT * FROM a JOIN tp PARTITION `p2` ON a.k = tp.k",
                "SELECT * FROM a JOIN tp PARTITION (`p2`) ON a.k = tp.k",
            ),
        ] {
            assert_eq!(parsed(doris), parsed(mysql));
        }
        assert!(parsed("SELECT * FROM tp PARTITION (p1)").contains("PARTITION (p1)"));
    }

    #[test]
    fn temporary_partition_lists_read_as_marked_names() {
        let marked = |n: &str| format!("`{}{n}`", super::TEMPORARY_MARK);
        for (doris, mysql) in [
            (
                "SELECT * FROM t TEMPORARY PARTITION(tp1, tp2) WHERE k > 1",
                format!(
                    "SELECT * FROM t PARTITION ({}, {}) WHERE k > 1",
                    marked("tp1"),
                    marked("tp2")
                ),
            ),
            (
                "SELECT * FROM d.t TEMPORARY PARTITIONS tp1",
                format!("SELECT * FROM d.t PARTITION ({})", marked("tp1")),
            ),
            (
                "INSERT INTO d.t TEMPORARY PARTITION (tp1) VALUES (1)",
                format!("INSERT INTO d.t PARTITION ({}) VALUES (1)", marked("tp1")),
            ),
            (
                "INSERT INTO t TEMPORARY PARTITION (tp1) (a) SELECT 1",
                format!("INSERT INTO t (a) PARTITION ({}) SELECT 1", marked("tp1")),
            ),
        ] {
            assert_eq!(parsed(doris), parsed(&mysql), "{doris}");
            assert!(parsed(doris).contains(&marked("tp1")), "{doris}");
        }
        let name = format!("{}tp1", super::TEMPORARY_MARK);
        assert_eq!(super::temporary_partition(&name), Some("tp1"));
        assert_eq!(super::temporary_partition("tp1"), None);
        // A table aliased `temporary` keeps its alias.
        assert!(!parsed("SELECT * FROM t temporary WHERE k > 1").contains("PARTITION"));
    }

    #[test]
    fn a_partition_star_reads_as_the_quoted_name_star() {
        assert_eq!(
            parsed("INSERT OVERWRITE TABLE t PARTITION (*) SELECT * FROM s"),
            "INSERT OVERWRITE TABLE t PARTITION (`*`) SELECT * FROM s"
        );
        assert_eq!(
            parsed("INSERT INTO t PARTITION(p1, p2) VALUES (1)"),
            "INSERT INTO t PARTITION (p1, p2) VALUES (1)"
        );
        assert_eq!(
            parsed("INSERT INTO t PARTITION (p1) (a, b) SELECT 1, 2"),
            "INSERT INTO t (a, b) PARTITION (p1) SELECT 1, 2"
        );
        assert_eq!(
            parsed("INSERT INTO t PARTITION (p1) (SELECT 1, 2)"),
            "INSERT INTO t PARTITION (p1) (SELECT 1, 2)"
        );
    }
}
