//! MySQL's `LOAD DATA [LOCAL] INFILE 'file' [REPLACE | IGNORE] INTO TABLE t [CHARACTER SET cs]
//! [{FIELDS | COLUMNS} [TERMINATED BY 's'] [[OPTIONALLY] ENCLOSED BY 'c'] [ESCAPED BY 'c']]
//! [LINES [STARTING BY 's'] [TERMINATED BY 's']] [IGNORE n {LINES | ROWS}] [(col | @var, ..)]
//! [SET col = expr, ..]`.

use crate::parser::parse_table_name;
use crate::statement::{LoadData, Statement};
use crate::words::{
    eat_word, eat_words, expect_word, ident, peek_word, string_literal, uint_literal,
};
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

/// A LOAD DATA statement at the parser's position, or None (nothing consumed).
pub(crate) fn parse_load_data(p: &mut Parser) -> Result<Option<Statement>, ParserError> {
    if !peek_word(p, "LOAD") || !crate::words::peek_nth_word(p, 1, "DATA") {
        return Ok(None);
    }
    p.next_token();
    p.next_token();
    let _ = eat_word(p, "LOW_PRIORITY") || eat_word(p, "CONCURRENT");
    let local = eat_word(p, "LOCAL");
    expect_word(p, "INFILE")?;
    let file = string_literal(p)?;
    let _ = eat_word(p, "REPLACE") || eat_word(p, "IGNORE");
    expect_word(p, "INTO")?;
    expect_word(p, "TABLE")?;
    let table = parse_table_name(p)?;
    let mut load = LoadData {
        local,
        file,
        table,
        fields_terminated_by: None,
        enclosed_by: None,
        escaped_by: None,
        lines_terminated_by: None,
        lines_starting_by: None,
        ignore_lines: 0,
        columns: Vec::new(),
        set: Vec::new(),
    };
    if eat_word(p, "PARTITION") {
        p.expect_token(&Token::LParen)?;
        p.parse_comma_separated(ident)?;
        p.expect_token(&Token::RParen)?;
    }
    if eat_words(p, &["CHARACTER", "SET"]) || eat_word(p, "CHARSET") {
        let charset = ident(p)?.to_lowercase();
        if !matches!(
            charset.as_str(),
            "utf8" | "utf8mb4" | "utf8mb3" | "binary" | "ascii"
        ) {
            return Err(ParserError::ParserError(format!(
                "character set '{charset}' is not supported by LOAD DATA (files are read as UTF-8)"
            )));
        }
    }
    if eat_word(p, "FIELDS") || eat_word(p, "COLUMNS") {
        loop {
            if eat_words(p, &["TERMINATED", "BY"]) {
                load.fields_terminated_by = Some(string_literal(p)?);
            } else if eat_words(p, &["OPTIONALLY", "ENCLOSED", "BY"])
                || eat_words(p, &["ENCLOSED", "BY"])
            {
                load.enclosed_by = Some(string_literal(p)?);
            } else if eat_words(p, &["ESCAPED", "BY"]) {
                load.escaped_by = Some(string_literal(p)?);
            } else {
                break;
            }
        }
    }
    if eat_word(p, "LINES") {
        loop {
            if eat_words(p, &["STARTING", "BY"]) {
                load.lines_starting_by = Some(string_literal(p)?);
            } else if eat_words(p, &["TERMINATED", "BY"]) {
                load.lines_terminated_by = Some(string_literal(p)?);
            } else {
                break;
            }
        }
    }
    if eat_word(p, "IGNORE") {
        load.ignore_lines = uint_literal(p)?;
        if !eat_word(p, "LINES") {
            expect_word(p, "ROWS")?;
        }
    }
    if p.consume_token(&Token::LParen) {
        load.columns = p.parse_comma_separated(|p| {
            let t = p.next_token();
            match t.token {
                Token::Word(w) => Ok(w.value.trim_start_matches('@').to_string()),
                Token::AtSign => ident(p),
                _ => p.expected("a column or @variable", t),
            }
        })?;
        p.expect_token(&Token::RParen)?;
    }
    if eat_word(p, "SET") {
        load.set = p.parse_comma_separated(|p| {
            let column = ident(p)?;
            p.expect_token(&Token::Eq)?;
            let expr = p.parse_expr()?;
            // `@var` in the expression names the file's field the column list gave that name.
            Ok((column, expr.to_string().replace('@', "")))
        })?;
    }
    Ok(Some(Statement::LoadData(Box::new(load))))
}

#[cfg(test)]
mod tests {
    use crate::{parse_one, Statement};

    #[test]
    fn load_data_forms() {
        let Statement::LoadData(l) = parse_one(
            "LOAD DATA LOCAL INFILE '/tmp/x.csv' REPLACE INTO TABLE d.t CHARACTER SET utf8mb4 \
             FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '\"' ESCAPED BY '\\\\' \
             LINES TERMINATED BY '\\r\\n' IGNORE 1 LINES (a, @b, c) SET d = @b * 2",
        )
        .unwrap() else {
            panic!("not LOAD DATA");
        };
        assert!(l.local);
        assert_eq!(l.file, "/tmp/x.csv");
        assert_eq!(l.table.database.as_deref(), Some("d"));
        assert_eq!(l.fields_terminated_by.as_deref(), Some(","));
        assert_eq!(l.enclosed_by.as_deref(), Some("\""));
        assert_eq!(l.escaped_by.as_deref(), Some("\\"));
        assert_eq!(l.lines_terminated_by.as_deref(), Some("\r\n"));
        assert_eq!(l.ignore_lines, 1);
        assert_eq!(l.columns, ["a", "b", "c"]);
        assert_eq!(l.set, [("d".to_string(), "b * 2".to_string())]);
        let Statement::LoadData(l) = parse_one("LOAD DATA INFILE 'f' INTO TABLE t").unwrap() else {
            panic!("not LOAD DATA");
        };
        assert!(!l.local && l.columns.is_empty() && l.fields_terminated_by.is_none());
        assert!(parse_one("LOAD DATA LOCAL INFILE 'f' INTO t").is_err());
    }
}
