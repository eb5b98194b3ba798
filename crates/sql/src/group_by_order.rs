//! MySQL 5.7's sort direction on GROUP BY items (`GROUP BY a DESC, b ASC`): the groups come
//! out sorted that way. The directions are taken off the GROUP BY and, when the same SELECT
//! has no ORDER BY of its own, become one (`.. GROUP BY a, b ORDER BY a DESC, b ASC`), placed
//! where ORDER BY goes (before LIMIT, INTO, FOR UPDATE or the SELECT's end). A SELECT that
//! is one side of a UNION gets no ORDER BY (it would not be valid there).

use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, TokenWithSpan, Whitespace};

/// The token stream with GROUP BY directions rewritten as above.
pub(crate) fn group_by_directions(mut tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    if !tokens.iter().any(|t| is_word(&t.token, "GROUP")) {
        return tokens;
    }
    // Positions of the code tokens (not whitespace or comments).
    let code: Vec<usize> = (0..tokens.len())
        .filter(|&i| !matches!(tokens[i].token, Token::Whitespace(_)))
        .collect();
    let mut edits = Edits::default();
    let mut i = 0;
    while i + 1 < code.len() {
        if is_word(&tokens[code[i]].token, "GROUP") && is_word(&tokens[code[i + 1]].token, "BY") {
            i = rewrite_one(&tokens, &code, i + 2, &mut edits);
        } else {
            i += 1;
        }
    }
    // Directions become whitespace; ORDER BYs go in from the end (positions stay valid).
    for b in edits.blanks {
        tokens[b].token = Token::Whitespace(Whitespace::Space);
    }
    edits.inserts.sort_by_key(|(at, _)| std::cmp::Reverse(*at));
    for (at, inserted) in edits.inserts {
        tokens.splice(at..at, inserted);
    }
    tokens
}

#[derive(Default)]
struct Edits {
    /// Tokens to blank out (the directions).
    blanks: Vec<usize>,
    /// Tokens to insert before a position.
    inserts: Vec<(usize, Vec<TokenWithSpan>)>,
}

/// Whether `t` is the unquoted word `w` (any case).
pub(crate) fn is_word(t: &Token, w: &str) -> bool {
    matches!(t, Token::Word(word) if word.quote_style.is_none() && word.value.eq_ignore_ascii_case(w))
}

/// Words that end a GROUP BY list at its own level.
const AFTER_GROUP_BY: &[&str] = &[
    "HAVING",
    "ORDER",
    "LIMIT",
    "WITH",
    "WINDOW",
    "UNION",
    "EXCEPT",
    "INTERSECT",
    "INTO",
    "FOR",
    "LOCK",
    "QUALIFY",
];

/// Rewrites the GROUP BY list whose first item is code token `start`; returns the code token
/// scanning goes on from.
fn rewrite_one(tokens: &[TokenWithSpan], code: &[usize], start: usize, edits: &mut Edits) -> usize {
    let token = |k: usize| code.get(k).map(|&i| &tokens[i].token);
    // The items as code-token ranges, with a direction when one ends the item.
    let mut items: Vec<(usize, usize, Option<bool>)> = Vec::new();
    let mut depth = 0usize;
    let mut item_start = start;
    let mut k = start;
    let end = loop {
        let at_end = match token(k) {
            None | Some(Token::SemiColon) => true,
            Some(Token::RParen) if depth == 0 => true,
            Some(Token::Word(w)) if depth == 0 => {
                w.quote_style.is_none()
                    && AFTER_GROUP_BY
                        .iter()
                        .any(|a| w.value.eq_ignore_ascii_case(a))
            }
            _ => false,
        };
        if at_end || (depth == 0 && token(k) == Some(&Token::Comma)) {
            items.push((item_start, k, None));
            item_start = k + 1;
            if at_end {
                break k;
            }
        }
        match token(k) {
            Some(Token::LParen) => depth += 1,
            Some(Token::RParen) => depth = depth.saturating_sub(1),
            _ => {}
        }
        k += 1;
    };
    let mut any = false;
    for item in items.iter_mut() {
        let (from, to, _) = *item;
        if to > from + 1 {
            let last = &tokens[code[to - 1]].token;
            let direction = if is_word(last, "DESC") {
                Some(false)
            } else if is_word(last, "ASC") {
                Some(true)
            } else {
                None
            };
            if direction.is_some() {
                *item = (from, to - 1, direction);
                edits.blanks.push(code[to - 1]);
                any = true;
            }
        }
    }
    if !any {
        return end;
    }
    // Where ORDER BY would go, and whether the SELECT has one (or is a UNION side).
    let mut depth = 0usize;
    let mut k = end;
    let mut insert_at = None;
    let mut has_order = false;
    let mut union_side = false;
    loop {
        match token(k) {
            None | Some(Token::SemiColon) => break,
            Some(Token::RParen) if depth == 0 => break,
            Some(Token::LParen) => depth += 1,
            Some(Token::RParen) => depth -= 1,
            Some(Token::Word(w)) if depth == 0 && w.quote_style.is_none() => {
                match w.value.to_ascii_uppercase().as_str() {
                    "ORDER" => has_order = true,
                    "UNION" | "EXCEPT" | "INTERSECT" => {
                        union_side = true;
                        break;
                    }
                    "LIMIT" | "INTO" | "FOR" | "LOCK" if insert_at.is_none() => insert_at = Some(k),
                    _ => {}
                }
            }
            _ => {}
        }
        k += 1;
    }
    // Also a UNION side when the SELECT follows a UNION at its level.
    let mut depth = 0usize;
    for &i in code[..start].iter().rev() {
        match &tokens[i].token {
            Token::RParen => depth += 1,
            Token::LParen if depth == 0 => break,
            Token::LParen => depth -= 1,
            Token::SemiColon => break,
            Token::Word(w)
                if depth == 0
                    && w.keyword != Keyword::NoKeyword
                    && ["UNION", "EXCEPT", "INTERSECT"]
                        .iter()
                        .any(|u| w.value.eq_ignore_ascii_case(u)) =>
            {
                union_side = true;
                break;
            }
            _ => {}
        }
    }
    if has_order || union_side {
        return end;
    }
    let at = match insert_at.unwrap_or(k) {
        k if k < code.len() => code[k],
        _ => code.last().map_or(tokens.len(), |&i| i + 1),
    };
    let span = tokens[code[start]].span;
    let space = || TokenWithSpan::new(Token::Whitespace(Whitespace::Space), span);
    let word = |w: &str| TokenWithSpan::new(Token::make_keyword(w), span);
    let mut order = vec![space(), word("ORDER"), space(), word("BY"), space()];
    for (n, (from, to, direction)) in items.iter().enumerate() {
        if n > 0 {
            order.push(TokenWithSpan::new(Token::Comma, span));
            order.push(space());
        }
        order.extend(tokens[code[*from]..=code[to - 1]].iter().cloned());
        if *direction == Some(false) {
            order.push(space());
            order.push(word("DESC"));
        }
    }
    order.push(space());
    edits.inserts.push((at, order));
    end
}

#[cfg(test)]
mod tests {
    use crate::{parse_one, Statement};

    fn text(sql: &str) -> String {
        match parse_one(sql).unwrap() {
            Statement::Standard(s) => s.to_string(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn directions_become_an_order_by() {
        assert_eq!(
            text("SELECT a, count(*) FROM t GROUP BY a DESC"),
            "SELECT a, count(*) FROM t GROUP BY a ORDER BY a DESC"
        );
        assert_eq!(
            text("select a, b from t group by a desc, b having count(*) > 1 limit 3"),
            "SELECT a, b FROM t GROUP BY a, b HAVING count(*) > 1 ORDER BY a DESC, b LIMIT 3"
        );
        assert_eq!(
            text("SELECT a FROM t GROUP BY f(a, 1) ASC"),
            "SELECT a FROM t GROUP BY f(a, 1) ORDER BY f(a, 1)"
        );
    }

    #[test]
    fn an_order_by_or_a_union_keeps_its_own() {
        assert_eq!(
            text("SELECT a FROM t GROUP BY a DESC ORDER BY a"),
            "SELECT a FROM t GROUP BY a ORDER BY a"
        );
        assert_eq!(
            text("SELECT a FROM t GROUP BY a DESC UNION SELECT 1"),
            "SELECT a FROM t GROUP BY a UNION SELECT 1"
        );
        assert_eq!(
            text("SELECT * FROM (SELECT a FROM t GROUP BY a DESC) x"),
            "SELECT * FROM (SELECT a FROM t GROUP BY a ORDER BY a DESC) x"
        );
        // No direction: untouched.
        assert_eq!(
            text("SELECT a FROM t GROUP BY a"),
            "SELECT a FROM t GROUP BY a"
        );
    }
}
