//! Compound statements as MySQL's clients send them: a `CREATE PROCEDURE .. BEGIN s1; s2; END`
//! arrives as one statement with `;` inside its body (the mysql client's `DELIMITER` is its own
//! business), so splitting a text into statements must not cut inside `BEGIN .. END`; and a
//! procedure's body is a list of statements, nested blocks flattened, to run in order.
//!
//! Blocks nest by words: `BEGIN` and `CASE` open one, `END` closes it, except `END IF`,
//! `END WHILE`, `END LOOP` and `END REPEAT` (their openers are not counted) — strings, quoted
//! identifiers and comments are tokens of their own, so a `;` or `END` inside them never counts.

use crate::dialect::BasaltDialect;
use basalt_common::{BasaltError, Result};
use sqlparser::tokenizer::{Location, Token, TokenWithSpan, Tokenizer};

/// Byte offsets of the 1-based line/column locations of one text.
pub(crate) struct Offsets<'a> {
    sql: &'a str,
    line_starts: Vec<usize>,
}

impl<'a> Offsets<'a> {
    pub(crate) fn new(sql: &'a str) -> Offsets<'a> {
        let line_starts = std::iter::once(0)
            .chain(sql.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        Offsets { sql, line_starts }
    }

    /// The byte offset of `at` (`None` for a location outside the text).
    pub(crate) fn of(&self, at: Location) -> Option<usize> {
        let line_start = *self
            .line_starts
            .get(usize::try_from(at.line).ok()?.checked_sub(1)?)?;
        let column = usize::try_from(at.column).ok()?.checked_sub(1)?;
        let rest = self.sql.get(line_start..)?;
        let within = rest
            .char_indices()
            .nth(column)
            .map_or(rest.len(), |(i, _)| i);
        Some(line_start + within)
    }
}

/// An unquoted word's upper-case text.
fn word(token: &Token) -> Option<String> {
    match token {
        Token::Word(w) if w.quote_style.is_none() => Some(w.value.to_ascii_uppercase()),
        _ => None,
    }
}

fn is_word(token: Option<&Token>, expected: &str) -> bool {
    token.and_then(word).is_some_and(|w| w == expected)
}

/// Follows the block depth over the significant tokens of a text.
#[derive(Default)]
pub(crate) struct BlockDepth {
    depth: i64,
    previous_was_end: bool,
}

impl BlockDepth {
    /// Steps over `token` (`next` is the significant token after it); returns false when an
    /// `END` closes a block that was never opened.
    pub(crate) fn step(&mut self, token: &Token, next: Option<&Token>) -> bool {
        let w = word(token);
        let after_end = std::mem::take(&mut self.previous_was_end);
        match w.as_deref() {
            Some("BEGIN") => self.depth += 1,
            // `END CASE` closes the CASE its END already counted.
            Some("CASE") if !after_end => self.depth += 1,
            Some("END") => {
                let closes_other = ["IF", "WHILE", "LOOP", "REPEAT"]
                    .iter()
                    .any(|k| is_word(next, k));
                if !closes_other {
                    self.depth -= 1;
                    self.previous_was_end = true;
                }
            }
            _ => {}
        }
        self.depth >= 0
    }

    pub(crate) fn depth(&self) -> i64 {
        self.depth
    }
}

/// True for the start of a statement that holds a compound body: `CREATE [DEFINER = ..]
/// PROCEDURE|FUNCTION|TRIGGER|EVENT` (the kind comes before the first parenthesis).
pub(crate) fn starts_routine<'t>(mut significant: impl Iterator<Item = &'t Token>) -> bool {
    if !is_word(significant.next(), "CREATE") {
        return false;
    }
    for t in significant.take(12) {
        if matches!(t, Token::LParen | Token::SemiColon) {
            return false;
        }
        if let Some(w) = word(t) {
            if ["PROCEDURE", "FUNCTION", "TRIGGER", "EVENT"].contains(&w.as_str()) {
                return true;
            }
            if ["TABLE", "VIEW", "DATABASE", "SCHEMA", "USER", "INDEX"].contains(&w.as_str()) {
                return false;
            }
        }
    }
    false
}

/// Byte ranges of the statements of `tokens` (of `sql`), split at the `;` outside blocks:
/// blocks count everywhere when `blocks_everywhere` (a procedure body), else only in statements
/// that create routines. `None` when a token's position is not in the text.
pub(crate) fn statement_ranges(
    sql: &str,
    tokens: &[TokenWithSpan],
    blocks_everywhere: bool,
) -> Option<Vec<(usize, usize)>> {
    let offsets = Offsets::new(sql);
    let significant: Vec<usize> = (0..tokens.len())
        .filter(|&i| !matches!(tokens[i].token, Token::Whitespace(_) | Token::EOF))
        .collect();
    let mut ranges = vec![];
    let mut start = 0;
    let mut has_code = false;
    let mut depth = BlockDepth::default();
    let mut blocks = blocks_everywhere;
    for (k, &i) in significant.iter().enumerate() {
        let token = &tokens[i].token;
        if !has_code {
            blocks = blocks_everywhere
                || starts_routine(significant[k..].iter().map(|&j| &tokens[j].token));
            depth = BlockDepth::default();
        }
        if *token == Token::SemiColon && (!blocks || depth.depth() <= 0) {
            let end = offsets.of(tokens[i].span.start)?;
            if has_code {
                ranges.push((start, end));
            }
            start = end + 1;
            has_code = false;
            continue;
        }
        has_code = true;
        if blocks {
            let next = significant.get(k + 1).map(|&j| &tokens[j].token);
            depth.step(token, next);
        }
    }
    if has_code {
        ranges.push((start, sql.len()));
    }
    Some(ranges)
}

/// The statements a procedure body runs, in order: the statements of a `BEGIN .. END` block
/// (nested blocks flattened), or the body itself when it is one statement. Constructs Basalt
/// does not run (declarations, flow control, cursors, handlers, labels, `SELECT .. INTO` a
/// local name, routine DDL, `USE`) fail with 1235 naming them, so that no body is accepted that
/// could not run; `parameters` are the procedure's parameter names (assigning one is refused).
pub fn procedure_statements(body: &str, parameters: &[String]) -> Result<Vec<String>> {
    let mut out = vec![];
    collect_statements(body, parameters, &mut out)?;
    Ok(out)
}

fn body_syntax(message: &str, body: &str) -> BasaltError {
    BasaltError::syntax_at(message, body, 0, 0)
}

fn collect_statements(text: &str, parameters: &[String], out: &mut Vec<String>) -> Result<()> {
    let dialect = BasaltDialect::default();
    let tokens = Tokenizer::new(&dialect, text)
        .tokenize_with_location()
        .map_err(|e| BasaltError::syntax_at(e.message, text, e.location.line, e.location.column))?;
    let significant: Vec<&TokenWithSpan> = tokens
        .iter()
        .filter(|t| !matches!(t.token, Token::Whitespace(_) | Token::EOF))
        .collect();
    let Some(first) = significant.first() else {
        return Ok(());
    };
    if significant.len() > 1 && significant[1].token == Token::Colon && word(&first.token).is_some()
    {
        return Err(unsupported("labels"));
    }
    if !is_word(Some(&first.token), "BEGIN") {
        check_statement(&significant, parameters)?;
        out.push(text.trim().to_string());
        return Ok(());
    }
    // BEGIN .. END: the block must close at its last word.
    let mut depth = BlockDepth::default();
    let mut end_at = None;
    for (k, t) in significant.iter().enumerate() {
        let next = significant.get(k + 1).map(|t| &t.token);
        if !depth.step(&t.token, next) {
            return Err(body_syntax("END without BEGIN", text));
        }
        if depth.depth() == 0 {
            end_at = Some(k);
            break;
        }
    }
    let Some(end_at) = end_at else {
        return Err(body_syntax("BEGIN without END", text));
    };
    if let Some(after) = significant.get(end_at + 1) {
        if word(&after.token).is_some() && end_at + 2 == significant.len() {
            return Err(unsupported("labels"));
        }
        return Err(body_syntax("text after the END of a block", text));
    }
    let offsets = Offsets::new(text);
    let inner_start = offsets
        .of(first.span.end)
        .ok_or_else(|| body_syntax("a token outside the text", text))?;
    let inner_end = offsets
        .of(significant[end_at].span.start)
        .ok_or_else(|| body_syntax("a token outside the text", text))?;
    let inner = text.get(inner_start..inner_end).unwrap_or_default();
    let inner_tokens = Tokenizer::new(&dialect, inner)
        .tokenize_with_location()
        .map_err(|e| {
            BasaltError::syntax_at(e.message, inner, e.location.line, e.location.column)
        })?;
    let ranges = statement_ranges(inner, &inner_tokens, true)
        .ok_or_else(|| body_syntax("a token outside the text", text))?;
    for (start, end) in ranges {
        collect_statements(inner.get(start..end).unwrap_or_default(), parameters, out)?;
    }
    Ok(())
}

fn unsupported(what: &str) -> BasaltError {
    BasaltError::NotSupported(format!("{what} in a stored procedure"))
}

/// Refuses the statements of a body that Basalt does not run.
fn check_statement(significant: &[&TokenWithSpan], parameters: &[String]) -> Result<()> {
    let words: Vec<Option<String>> = significant.iter().map(|t| word(&t.token)).collect();
    let first = words.first().cloned().flatten().unwrap_or_default();
    let construct = match first.as_str() {
        "DECLARE" => Some("DECLARE (local variables, conditions, cursors and handlers)"),
        "IF" => Some("IF"),
        "CASE" => Some("CASE"),
        "WHILE" => Some("WHILE"),
        "LOOP" => Some("LOOP"),
        "REPEAT" => Some("REPEAT"),
        "LEAVE" => Some("LEAVE"),
        "ITERATE" => Some("ITERATE"),
        "RETURN" => Some("RETURN"),
        "OPEN" | "FETCH" | "CLOSE" => Some("cursors (OPEN, FETCH, CLOSE)"),
        "SIGNAL" | "RESIGNAL" => Some("SIGNAL and RESIGNAL"),
        "GET" => Some("GET DIAGNOSTICS"),
        "USE" => Some("USE"),
        "LOCK" | "UNLOCK" => Some("LOCK TABLES"),
        _ => None,
    };
    if let Some(construct) = construct {
        return Err(unsupported(construct));
    }
    let routine_kind = words
        .iter()
        .take(8)
        .flatten()
        .any(|w| ["PROCEDURE", "FUNCTION", "TRIGGER", "EVENT"].contains(&w.as_str()));
    if ["CREATE", "DROP", "ALTER"].contains(&first.as_str()) && routine_kind {
        return Err(unsupported(&format!("{first} of a stored routine")));
    }
    let is_parameter = |t: &Token| match t {
        Token::Word(w) if w.quote_style.is_none() || w.quote_style == Some('`') => {
            parameters.iter().any(|p| p.eq_ignore_ascii_case(&w.value))
        }
        _ => false,
    };
    // SET p = .. (a parameter, not a user or system variable).
    if first == "SET" {
        let mut expect_target = true;
        let mut depth = 0i64;
        for t in significant.iter().skip(1) {
            match &t.token {
                Token::LParen => depth += 1,
                Token::RParen => depth -= 1,
                Token::Comma if depth == 0 => expect_target = true,
                other if expect_target => {
                    if is_parameter(other) {
                        return Err(unsupported("assigning a parameter (SET parameter = ..)"));
                    }
                    expect_target = false;
                }
                _ => {}
            }
        }
    }
    // SELECT .. INTO name: only user variables (`@x`) and files are targets Basalt knows.
    for (k, w) in words.iter().enumerate() {
        if w.as_deref() != Some("INTO") || first == "INSERT" || first == "REPLACE" {
            continue;
        }
        let target = significant.get(k + 1).map(|t| &t.token);
        let user_variable = matches!(target, Some(Token::Word(w)) if w.value.starts_with('@'))
            || matches!(target, Some(Token::AtSign));
        let file = is_word(target, "OUTFILE") || is_word(target, "DUMPFILE");
        if !user_variable && !file {
            return Err(unsupported("SELECT .. INTO a local name"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(sql: &str) -> Vec<&str> {
        crate::lexer::split_statements(sql)
    }

    #[test]
    fn routine_bodies_stay_whole_when_splitting() {
        let sql = "CREATE PROCEDURE p() BEGIN SELECT 1; IF x THEN SELECT 'END;'; END IF; \
                   BEGIN SELECT CASE WHEN 1 THEN 2 END; END; END; SELECT 2; BEGIN; SELECT 3";
        let pieces = split(sql);
        assert_eq!(pieces.len(), 4, "{pieces:?}");
        assert!(pieces[0].ends_with("END; END"), "{pieces:?}");
        assert_eq!(&pieces[1..], ["SELECT 2", "BEGIN", "SELECT 3"]);
        let definer = "CREATE DEFINER=`root`@`%` PROCEDURE p() BEGIN SELECT 1; END; SELECT 2";
        assert_eq!(split(definer).len(), 2);
    }

    #[test]
    fn bodies_flatten_into_statements() {
        let body = "BEGIN\n  SELECT 'a;b' -- c; d\n  ;\n  BEGIN INSERT INTO t VALUES (1); END;\n  \
                    SELECT `end`, /* END; */ 2;\nEND";
        let got = procedure_statements(body, &[]).unwrap();
        assert_eq!(got.len(), 3, "{got:?}");
        assert!(got[0].starts_with("SELECT 'a;b'"));
        assert_eq!(got[1], "INSERT INTO t VALUES (1)");
        assert_eq!(got[2], "SELECT `end`, /* END; */ 2");
        assert_eq!(procedure_statements("SELECT 1", &[]).unwrap(), ["SELECT 1"]);
        assert!(procedure_statements("BEGIN END", &[]).unwrap().is_empty());
    }

    #[test]
    fn constructs_not_run_are_refused_by_name() {
        let params = vec!["p".to_string()];
        for (body, named) in [
            ("BEGIN DECLARE x INT; END", "DECLARE"),
            ("BEGIN IF 1 THEN SELECT 1; END IF; END", "IF"),
            ("BEGIN WHILE 1 DO SELECT 1; END WHILE; END", "WHILE"),
            ("l: BEGIN SELECT 1; END l", "labels"),
            ("BEGIN SET p = 1; END", "assigning a parameter"),
            ("BEGIN SELECT 1 INTO p; END", "INTO"),
            ("BEGIN OPEN c; END", "cursors"),
        ] {
            let e = procedure_statements(body, &params).unwrap_err();
            assert_eq!(e.mysql_code(), 1235, "{body}");
            assert!(e.to_string().contains(named), "{body}: {e}");
        }
        assert!(procedure_statements("BEGIN SET @x = p; SELECT 1 INTO @y; END", &params).is_ok());
        assert_eq!(
            procedure_statements("BEGIN SELECT 1; ", &[])
                .unwrap_err()
                .mysql_code(),
            1064
        );
    }
}
