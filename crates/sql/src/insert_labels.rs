//! Doris's `INSERT INTO t [PARTITION (..)] WITH LABEL l [(columns)] ..`: the label is taken out
//! of the tokens (MySQL's grammar has no place for it) and the INSERT it belongs to is parsed
//! as usual, then wrapped in [`crate::Statement::LabelledInsert`].

use crate::group_by_order::is_word;
use crate::partition_words::next_code;
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, TokenWithSpan};

/// The tokens without any INSERT's `WITH LABEL l`, and for each label the index (in the
/// returned tokens) of the INSERT keyword it belongs to.
pub(crate) fn take_insert_labels(
    tokens: Vec<TokenWithSpan>,
) -> (Vec<TokenWithSpan>, Vec<(usize, String)>) {
    if !tokens.iter().any(|t| is_word(&t.token, "LABEL")) {
        return (tokens, Vec::new());
    }
    let mut out: Vec<TokenWithSpan> = Vec::with_capacity(tokens.len());
    let mut labels = Vec::new();
    // The INSERT keyword of the statement being read, while no label was found for it.
    let mut insert_at: Option<usize> = None;
    let mut statement_start = true;
    let mut depth = 0usize;
    let mut i = 0;
    while i < tokens.len() {
        let token = &tokens[i].token;
        match token {
            Token::Whitespace(_) => {}
            Token::SemiColon => {
                statement_start = true;
                insert_at = None;
                depth = 0;
            }
            _ => {
                if statement_start {
                    statement_start = false;
                    if is_word(token, "INSERT") {
                        insert_at = Some(out.len());
                    }
                } else if let Some(at) = insert_at {
                    match token {
                        Token::LParen => depth += 1,
                        Token::RParen => depth = depth.saturating_sub(1),
                        _ => {}
                    }
                    if depth == 0 && is_word(token, "WITH") {
                        if let Some((label, next)) = label_after(&tokens, i) {
                            labels.push((at, label));
                            insert_at = None;
                            i = next;
                            continue;
                        }
                    }
                }
            }
        }
        out.push(tokens[i].clone());
        i += 1;
    }
    (out, labels)
}

/// `LABEL name` after the WITH at `with`: the name and the index after it.
fn label_after(tokens: &[TokenWithSpan], with: usize) -> Option<(String, usize)> {
    let label = next_code(tokens, with)?;
    if !is_word(&tokens[label].token, "LABEL") {
        return None;
    }
    let name = next_code(tokens, label)?;
    match &tokens[name].token {
        Token::Word(w) if w.quote_style.is_some() || w.keyword == Keyword::NoKeyword => {
            Some((w.value.clone(), name + 1))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use crate::Statement;

    fn labelled(sql: &str) -> (String, String) {
        match crate::parse_one(sql) {
            Ok(Statement::LabelledInsert { label, insert }) => (label, insert.to_string()),
            other => panic!("{sql}: {other:?}"),
        }
    }

    #[test]
    fn an_insert_label_wraps_the_insert() {
        assert_eq!(
            labelled("INSERT INTO t WITH LABEL l1 VALUES (1)"),
            ("l1".into(), "INSERT INTO t VALUES (1)".into())
        );
        assert_eq!(
            labelled("insert into t partition (p1, p2) with label `l-2` (a, b) select 1, 2"),
            (
                "l-2".into(),
                "INSERT INTO t (a, b) PARTITION (p1, p2) SELECT 1, 2".into()
            )
        );
        assert_eq!(
            labelled("INSERT INTO t WITH LABEL l3 WITH c AS (SELECT 1) SELECT * FROM c").0,
            "l3"
        );
    }

    #[test]
    fn a_cte_named_label_is_no_label() {
        let stmt = crate::parse_one("INSERT INTO t WITH label AS (SELECT 1) SELECT * FROM label");
        assert!(matches!(stmt, Ok(Statement::Standard(_))), "{stmt:?}");
        let many = crate::parse_statements(
            "INSERT INTO t WITH LABEL a VALUES (1); INSERT INTO t VALUES (2); INSERT INTO t WITH LABEL b VALUES (3)",
        )
        .unwrap();
        assert!(matches!(&many[0], Statement::LabelledInsert { label, .. } if label == "a"));
        assert!(matches!(&many[1], Statement::Standard(_)));
        assert!(matches!(&many[2], Statement::LabelledInsert { label, .. } if label == "b"));
    }
}
