//! Doris's `ASOF [LEFT | INNER] JOIN` spellings. sqlparser reads only `ASOF JOIN r
//! MATCH_CONDITION (..)`; Doris also writes `ASOF LEFT [OUTER] JOIN` (the same join: left rows
//! without a match are kept) and `ASOF INNER JOIN` (they are dropped). The side word goes; an
//! inner one marks the match condition as `MATCH_CONDITION (basalt_asof_inner(..))`, which the
//! frontend reads back when it plans the join.

use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, TokenWithSpan, Whitespace};

/// The call that marks the match condition of an `ASOF INNER JOIN`.
pub const INNER_MARK: &str = "basalt_asof_inner";

/// Spells each `ASOF LEFT [OUTER] JOIN` as `ASOF JOIN` and each `ASOF INNER JOIN` as `ASOF JOIN`
/// with a marked match condition.
pub(crate) fn asof_sides(mut tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    let is = |t: &Token, k: Keyword| matches!(t, Token::Word(w) if w.keyword == k && w.quote_style.is_none());
    if !tokens.iter().any(|t| is(&t.token, Keyword::ASOF)) {
        return tokens;
    }
    let mut i = 0;
    while i < tokens.len() {
        if !is(&tokens[i].token, Keyword::ASOF) {
            i += 1;
            continue;
        }
        let code = next_code(&tokens, i + 1, 3);
        let words: Vec<&Token> = code.iter().map(|&j| &tokens[j].token).collect();
        let (side, inner) = match words[..] {
            [a, b, ..] if is(a, Keyword::LEFT) && is(b, Keyword::JOIN) => (&code[..1], false),
            [a, b, c] if is(a, Keyword::LEFT) && is(b, Keyword::OUTER) && is(c, Keyword::JOIN) => {
                (&code[..2], false)
            }
            [a, b, ..] if is(a, Keyword::INNER) && is(b, Keyword::JOIN) => (&code[..1], true),
            _ => (&code[..0], false),
        };
        for &j in side {
            tokens[j].token = Token::Whitespace(Whitespace::Space);
        }
        if inner {
            mark_inner(&mut tokens, i);
        }
        i += 1;
    }
    tokens
}

/// Indexes of the first `n` tokens from `from` that are not whitespace.
fn next_code(tokens: &[TokenWithSpan], from: usize, n: usize) -> Vec<usize> {
    (from..tokens.len())
        .filter(|&j| !matches!(tokens[j].token, Token::Whitespace(_)))
        .take(n)
        .collect()
}

/// Wraps the parenthesized match condition of the ASOF join at `asof` in the inner mark.
fn mark_inner(tokens: &mut Vec<TokenWithSpan>, asof: usize) {
    // The first MATCH_CONDITION after the join at the same depth (the right side may be a
    // parenthesized subquery).
    let mut depth = 0usize;
    let mut keyword = None;
    for (j, t) in tokens.iter().enumerate().skip(asof + 1) {
        match &t.token {
            Token::LParen => depth += 1,
            Token::RParen if depth == 0 => return,
            Token::RParen => depth -= 1,
            Token::SemiColon => return,
            Token::Word(w) if depth == 0 && w.keyword == Keyword::MATCH_CONDITION => {
                keyword = Some(j);
                break;
            }
            _ => {}
        }
    }
    let Some(keyword) = keyword else { return };
    let Some(&open) = next_code(tokens, keyword + 1, 1).first() else {
        return;
    };
    if tokens[open].token != Token::LParen {
        return;
    }
    let mut depth = 0usize;
    let mut close = None;
    for (j, t) in tokens.iter().enumerate().skip(open) {
        match t.token {
            Token::LParen => depth += 1,
            Token::RParen => {
                depth -= 1;
                if depth == 0 {
                    close = Some(j);
                    break;
                }
            }
            _ => {}
        }
    }
    let Some(close) = close else { return };
    let span = tokens[open].span;
    tokens.insert(close, TokenWithSpan::new(Token::RParen, span));
    tokens.insert(open + 1, TokenWithSpan::new(Token::LParen, span));
    tokens.insert(
        open + 1,
        TokenWithSpan::new(Token::make_word(INNER_MARK, None), span),
    );
}

#[cfg(test)]
mod tests {
    fn spelled(sql: &str) -> String {
        crate::lexer::spelled(sql)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn sides_become_the_plain_join() {
        assert_eq!(
            spelled(
                "SELECT 1 FROM a ASOF LEFT OUTER JOIN b MATCH_CONDITION(a.t >= b.t) ON a.k = b.k"
            ),
            "SELECT 1 FROM a ASOF JOIN b MATCH_CONDITION(a.t >= b.t) ON a.k = b.k"
        );
        assert_eq!(
            spelled("SELECT 1 FROM a asof inner join (SELECT 1) b MATCH_CONDITION ((a.t) < b.t)"),
            "SELECT 1 FROM a asof join (SELECT 1) b MATCH_CONDITION (basalt_asof_inner((a.t) < b.t))"
        );
        assert_eq!(spelled("SELECT asof FROM t"), "SELECT asof FROM t");
    }
}
