//! MySQL's table options that Basalt accepts and ignores in `CREATE TABLE` (mysqldump and the
//! ORMs write them): the character set and collation (Basalt stores UTF-8 and compares bytes),
//! `AUTO_INCREMENT = n`, and the storage hints of MyISAM, Aria and InnoDB (`ROW_FORMAT`,
//! `MAX_ROWS`, `PACK_KEYS`, `CHECKSUM`, ...), which mean nothing to Basalt's one storage.
//! MySQL lets a comma separate two options; [`eat_option_comma`] takes it.

use crate::words::{eat_word, eat_words, peek_nth_word, string_literal};
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

/// The options of one word followed by `[=] value`.
const VALUED_OPTIONS: &[&str] = &[
    "AUTO_INCREMENT",
    "ROW_FORMAT",
    "MAX_ROWS",
    "MIN_ROWS",
    "AVG_ROW_LENGTH",
    "PACK_KEYS",
    "CHECKSUM",
    "TABLE_CHECKSUM",
    "PAGE_CHECKSUM",
    "DELAY_KEY_WRITE",
    "TRANSACTIONAL",
    "KEY_BLOCK_SIZE",
    "STATS_PERSISTENT",
    "STATS_AUTO_RECALC",
    "STATS_SAMPLE_PAGES",
    "INSERT_METHOD",
    "PAGE_COMPRESSED",
    "PAGE_COMPRESSION_LEVEL",
    "ENCRYPTED",
    "ENCRYPTION_KEY_ID",
    "COMPRESSION",
    "CONNECTION",
    "PASSWORD",
];

/// Eats one ignored table option and its value; false, nothing eaten, when none starts here.
pub(crate) fn eat_ignored_option(p: &mut Parser) -> Result<bool, ParserError> {
    let charset = eat_words(p, &["DEFAULT", "CHARSET"])
        || eat_word(p, "CHARSET")
        || eat_words(p, &["DEFAULT", "CHARACTER", "SET"])
        || eat_words(p, &["CHARACTER", "SET"])
        || eat_words(p, &["DEFAULT", "COLLATE"])
        || eat_word(p, "COLLATE");
    if charset {
        let _ = p.consume_token(&Token::Eq);
        return option_value(p).map(|_| true);
    }
    if eat_words(p, &["DATA", "DIRECTORY"]) || eat_words(p, &["INDEX", "DIRECTORY"]) {
        let _ = p.consume_token(&Token::Eq);
        string_literal(p)?;
        return Ok(true);
    }
    let valued = VALUED_OPTIONS
        .iter()
        .any(|w| peek_nth_word(p, 0, w) && !matches!(p.peek_nth_token(1).token, Token::LParen));
    if !valued {
        return Ok(false);
    }
    p.next_token();
    let _ = p.consume_token(&Token::Eq);
    option_value(p)?;
    Ok(true)
}

/// An option's value: a word, a number or a string.
fn option_value(p: &mut Parser) -> Result<(), ParserError> {
    let t = p.next_token();
    match t.token {
        Token::Word(_)
        | Token::Number(..)
        | Token::SingleQuotedString(_)
        | Token::DoubleQuotedString(_) => Ok(()),
        _ => p.expected("a table option value", t),
    }
}

/// Eats the comma MySQL allows between two table options when a word follows it (never the
/// comma of something else: the options end a statement or precede its query).
pub(crate) fn eat_option_comma(p: &mut Parser) -> bool {
    let word_follows = matches!(p.peek_nth_token(1).token, Token::Word(_))
        && !peek_nth_word(p, 1, "SELECT")
        && !peek_nth_word(p, 1, "WITH");
    word_follows && p.consume_token(&Token::Comma)
}

#[cfg(test)]
mod tests {
    use crate::{parse_one, Statement};

    #[test]
    fn mysql_storage_options_are_accepted() {
        for sql in [
            "CREATE TABLE t (i INT) ENGINE=MyISAM MAX_ROWS=100000000000",
            "CREATE TABLE t (i INT) ENGINE=heap MAX_ROWS=50 PACK_KEYS=1 COMMENT='x' CHECKSUM=1",
            "CREATE TABLE t (i INT) ROW_FORMAT=PAGE, ENGINE=Aria",
            "CREATE TABLE t (i INT) TRANSACTIONAL=0 PAGE_CHECKSUM=1 charset=utf8",
            "CREATE TABLE t (i INT) DEFAULT CHARSET=latin1 COLLATE=latin1_bin AVG_ROW_LENGTH 10",
            "CREATE TABLE t (i INT) STATS_PERSISTENT=DEFAULT DATA DIRECTORY='/tmp' KEY_BLOCK_SIZE=8",
        ] {
            assert!(
                matches!(parse_one(sql), Ok(Statement::CreateTable(_))),
                "{sql}: {:?}",
                parse_one(sql)
            );
        }
        let t = match parse_one("CREATE TABLE t (i INT) ENGINE=MEMORY, MAX_ROWS=3").unwrap() {
            Statement::CreateTable(t) => t,
            other => panic!("{other:?}"),
        };
        assert_eq!(t.engine.as_deref(), Some("MEMORY"));
    }

    #[test]
    fn bad_options_are_positioned_syntax_errors() {
        for (sql, near) in [
            ("CREATE TABLE t (i INT) MAX_ROWS=(1)", "near '(1)'"),
            ("CREATE TABLE t (i INT) ENGINE=InnoDB,", "near ','"),
            (
                "CREATE TABLE t (i INT) PACK_KEYS=1 BOGUS=2",
                "near 'BOGUS=2'",
            ),
        ] {
            let e = parse_one(sql).unwrap_err();
            assert_eq!(e.mysql_code(), 1064, "{sql}");
            assert!(e.to_string().contains(near), "{sql}: {e}");
        }
    }
}
