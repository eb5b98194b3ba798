//! Doris's `TRIM(s, rhs)`: `s` without the string `rhs` repeated at both ends, which is MySQL's
//! `TRIM(BOTH rhs FROM s)`. sqlparser reads the comma form for other dialects only, so the
//! tokens are spelled as MySQL's form.

use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, TokenWithSpan, Whitespace};

/// Spells each `TRIM(s, rhs)` in `tokens` as `TRIM(BOTH rhs FROM s)`.
pub(crate) fn trim_pairs(tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    let is_trim = |t: &Token| matches!(t, Token::Word(w) if w.keyword == Keyword::TRIM && w.quote_style.is_none());
    if !tokens.iter().any(|t| is_trim(&t.token)) {
        return tokens;
    }
    let mut out = Vec::with_capacity(tokens.len() + 4);
    let mut i = 0;
    while i < tokens.len() {
        if is_trim(&tokens[i].token) {
            if let Some((open, comma, close)) = pair_call(&tokens, i) {
                let span = tokens[open].span;
                let word = |k: &str| TokenWithSpan::new(Token::make_keyword(k), span);
                let space = || TokenWithSpan::new(Token::Whitespace(Whitespace::Space), span);
                out.extend_from_slice(&tokens[i..=open]);
                out.push(word("BOTH"));
                out.extend_from_slice(&tokens[comma + 1..close]);
                out.push(space());
                out.push(word("FROM"));
                out.push(space());
                out.extend_from_slice(&tokens[open + 1..comma]);
                out.push(tokens[close].clone());
                i = close + 1;
                continue;
            }
        }
        out.push(tokens[i].clone());
        i += 1;
    }
    out
}

/// For the TRIM at `at`: its `(`, its one top-level comma and its `)`, when the call is
/// `TRIM(a, b)` (no BOTH / LEADING / TRAILING / FROM at its top level).
fn pair_call(tokens: &[TokenWithSpan], at: usize) -> Option<(usize, usize, usize)> {
    let open =
        (at + 1..tokens.len()).find(|&j| !matches!(tokens[j].token, Token::Whitespace(_)))?;
    if tokens[open].token != Token::LParen {
        return None;
    }
    let mut depth = 0usize;
    let mut comma = None;
    for (j, t) in tokens.iter().enumerate().skip(open) {
        match &t.token {
            Token::LParen | Token::LBracket => depth += 1,
            Token::RParen | Token::RBracket => {
                depth -= 1;
                if depth == 0 {
                    return comma.map(|c| (open, c, j));
                }
            }
            Token::Comma if depth == 1 => {
                if comma.is_some() {
                    return None;
                }
                comma = Some(j);
            }
            Token::Word(w)
                if depth == 1
                    && w.quote_style.is_none()
                    && matches!(
                        w.keyword,
                        Keyword::BOTH | Keyword::LEADING | Keyword::TRAILING | Keyword::FROM
                    ) =>
            {
                return None;
            }
            Token::SemiColon => return None,
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use crate::lexer::spelled;

    #[test]
    fn the_comma_form_is_both_from() {
        assert_eq!(
            spelled("SELECT trim('xxhixx', 'x'), TRIM(f(a, b), concat('a', 'b'))"),
            "SELECT trim(BOTH 'x' FROM 'xxhixx'), TRIM(BOTH concat('a', 'b') FROM f(a, b))"
        );
        let kept = "SELECT TRIM(LEADING 'x' FROM s), TRIM(s), TRIM(BOTH ',' FROM s)";
        assert_eq!(spelled(kept), kept);
    }
}
