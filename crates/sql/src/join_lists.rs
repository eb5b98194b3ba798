//! MySQL's comma inside a parenthesized join: `t1 LEFT JOIN (t2, t3) ON ..` and `FROM (t1, t2)`
//! join the listed tables as a comma does at the top of FROM, a cross join. sqlparser reads only
//! joins inside such parentheses ("Expected: joined table"), so there a comma is read as
//! `CROSS JOIN`. A parenthesized join is a `(` right after FROM or JOIN (or right after the `(`
//! or a comma of one) that does not open a subquery.

use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, TokenWithSpan, Whitespace};

/// Spells each comma of a parenthesized join list in `tokens` as `CROSS JOIN`.
pub(crate) fn comma_joins(mut tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    if !tokens.iter().any(|t| t.token == Token::Comma) {
        return tokens;
    }
    // Per token: a `(` opening a join list, or a comma of one.
    let mut in_list = vec![false; tokens.len()];
    let mut previous: Option<usize> = None;
    for i in 0..tokens.len() {
        if matches!(tokens[i].token, Token::Whitespace(_)) {
            continue;
        }
        let opens_join = tokens[i].token == Token::LParen
            && previous.is_some_and(|p| {
                in_list[p]
                    || matches!(&tokens[p].token, Token::Word(w)
                        if matches!(w.keyword, Keyword::FROM | Keyword::JOIN | Keyword::STRAIGHT_JOIN))
            })
            && !opens_subquery(&tokens, i);
        if opens_join {
            in_list[i] = true;
            for comma in list_commas(&tokens, i) {
                in_list[comma] = true;
            }
        }
        previous = Some(i);
    }
    let mut out = Vec::with_capacity(tokens.len() + 4);
    for (i, t) in tokens.drain(..).enumerate() {
        if in_list[i] && t.token == Token::Comma {
            let span = t.span;
            for token in [
                Token::Whitespace(Whitespace::Space),
                Token::make_keyword("CROSS"),
                Token::Whitespace(Whitespace::Space),
                Token::make_keyword("JOIN"),
                Token::Whitespace(Whitespace::Space),
            ] {
                out.push(TokenWithSpan::new(token, span));
            }
        } else {
            out.push(t);
        }
    }
    out
}

/// True when the `(` at `open` starts a subquery (or a VALUES list), not tables.
fn opens_subquery(tokens: &[TokenWithSpan], open: usize) -> bool {
    let first = tokens[open + 1..]
        .iter()
        .find(|t| !matches!(t.token, Token::Whitespace(_)));
    matches!(first.map(|t| &t.token), Some(Token::Word(w))
        if matches!(w.keyword, Keyword::SELECT | Keyword::WITH | Keyword::VALUES | Keyword::TABLE))
}

/// Words that, directly inside the parentheses, make them a query's.
const QUERY_WORDS: [Keyword; 9] = [
    Keyword::SELECT,
    Keyword::UNION,
    Keyword::EXCEPT,
    Keyword::INTERSECT,
    Keyword::ORDER,
    Keyword::LIMIT,
    Keyword::WHERE,
    Keyword::GROUP,
    Keyword::HAVING,
];

/// The commas directly inside the parentheses opened at `open` (none when they hold a query).
fn list_commas(tokens: &[TokenWithSpan], open: usize) -> Vec<usize> {
    let mut depth = 0usize;
    let mut commas = Vec::new();
    for (i, t) in tokens.iter().enumerate().skip(open) {
        match t.token {
            Token::LParen => depth += 1,
            Token::RParen => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            Token::Comma if depth == 1 => commas.push(i),
            // A query in parentheses (`((SELECT ..) UNION (SELECT ..) ORDER BY a, b)`).
            Token::Word(ref w) if depth == 1 && QUERY_WORDS.contains(&w.keyword) => {
                return Vec::new()
            }
            _ => {}
        }
    }
    commas
}

#[cfg(test)]
mod tests {
    use crate::dialect::BasaltDialect;
    use sqlparser::tokenizer::Tokenizer;

    fn read(sql: &str) -> String {
        let tokens = Tokenizer::new(&BasaltDialect::default(), sql)
            .tokenize_with_location()
            .expect("tokenizes");
        super::comma_joins(tokens)
            .into_iter()
            .map(|t| t.token.to_string())
            .collect()
    }

    #[test]
    fn commas_of_parenthesized_joins_are_cross_joins() {
        assert_eq!(
            read("SELECT * FROM t1 LEFT JOIN (t2, t3) ON t1.a = t3.a"),
            "SELECT * FROM t1 LEFT JOIN (t2 CROSS JOIN  t3) ON t1.a = t3.a"
        );
        assert_eq!(
            read("SELECT a, b FROM (t1, (t2, t3)), t4"),
            "SELECT a, b FROM (t1 CROSS JOIN  (t2 CROSS JOIN  t3)), t4"
        );
    }

    #[test]
    fn other_commas_are_left() {
        for sql in [
            "SELECT a, b FROM (SELECT a, b FROM t) AS d",
            "SELECT * FROM t1 JOIN t2 USING (a, b)",
            "SELECT (a, b) IN (SELECT a, b FROM t) FROM t",
            "INSERT INTO t (a, b) VALUES (1, 2)",
            "SELECT * FROM (VALUES (1, 2)) AS v",
            "SELECT * FROM (t1 JOIN t2 ON f(t1.a, t2.b))",
            "SELECT * FROM (((SELECT a FROM t) UNION (SELECT a FROM u)) ORDER BY a, b) AS r",
        ] {
            assert_eq!(read(sql), sql);
        }
    }
}
