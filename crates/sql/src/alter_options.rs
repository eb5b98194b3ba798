//! The table options and clauses of MySQL's `ALTER TABLE` that change nothing Basalt stores,
//! or only its AUTO_INCREMENT counter: `ENGINE [=] e`, `AUTO_INCREMENT [=] n`, `ORDER BY
//! cols`, `ALGORITHM [=] ..`, `LOCK [=] ..`, `FORCE`, `ENABLE | DISABLE KEYS`, `CONVERT TO
//! CHARACTER SET cs [COLLATE c]`, `[DEFAULT] CHARACTER SET | COLLATE ..` and the storage hints
//! CREATE TABLE ignores too ([`crate::table_options`]). MySQL writes table options one after
//! the other, with or without commas.

use crate::statement::{AlterTableOp, AlterTableOption};
use crate::table_options;
use crate::words::{eat_word, eat_words, ident, uint_literal};
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

const ALGORITHMS: &[&str] = &["DEFAULT", "INPLACE", "COPY", "NOCOPY", "INSTANT"];
const LOCKS: &[&str] = &["DEFAULT", "NONE", "SHARED", "EXCLUSIVE"];

/// The option or clause starting here; `None`, nothing eaten, when none does.
pub(crate) fn parse_alter_option(p: &mut Parser) -> Result<Option<AlterTableOp>, ParserError> {
    let option = if eat_word(p, "ENGINE") {
        let _ = p.consume_token(&Token::Eq);
        AlterTableOption::Engine(ident(p)?)
    } else if eat_word(p, "AUTO_INCREMENT") {
        let _ = p.consume_token(&Token::Eq);
        AlterTableOption::AutoIncrement(uint_literal(p)?)
    } else if eat_words(p, &["ORDER", "BY"]) {
        order_by_list(p)?;
        AlterTableOption::OrderBy
    } else if eat_word(p, "ALGORITHM") {
        AlterTableOption::Algorithm(one_of(
            p,
            ALGORITHMS,
            "DEFAULT, INPLACE, COPY, NOCOPY or INSTANT",
        )?)
    } else if eat_word(p, "LOCK") {
        AlterTableOption::Lock(one_of(p, LOCKS, "DEFAULT, NONE, SHARED or EXCLUSIVE")?)
    } else if eat_word(p, "FORCE")
        || eat_words(p, &["ENABLE", "KEYS"])
        || eat_words(p, &["DISABLE", "KEYS"])
    {
        AlterTableOption::NoEffect
    } else if eat_words(p, &["CONVERT", "TO"]) {
        if !(eat_words(p, &["CHARACTER", "SET"]) || eat_word(p, "CHARSET")) {
            return p.expected("CHARACTER SET after CONVERT TO", p.peek_token());
        }
        ident(p)?;
        if eat_word(p, "COLLATE") {
            ident(p)?;
        }
        AlterTableOption::NoEffect
    } else if table_options::eat_ignored_option(p)? {
        AlterTableOption::NoEffect
    } else {
        return Ok(None);
    };
    Ok(Some(AlterTableOp::Option(option)))
}

/// `[=] value` where the value is one of `allowed`; in upper case.
fn one_of(p: &mut Parser, allowed: &[&str], expected: &str) -> Result<String, ParserError> {
    let _ = p.consume_token(&Token::Eq);
    let t = p.next_token();
    match &t.token {
        Token::Word(w) if allowed.iter().any(|a| w.value.eq_ignore_ascii_case(a)) => {
            Ok(w.value.to_ascii_uppercase())
        }
        _ => p.expected(expected, t),
    }
}

/// `[t.]col [ASC | DESC], ..` of `ORDER BY`.
fn order_by_list(p: &mut Parser) -> Result<(), ParserError> {
    loop {
        ident(p)?;
        while p.consume_token(&Token::Period) {
            ident(p)?;
        }
        let _ = eat_word(p, "ASC") || eat_word(p, "DESC");
        if !p.consume_token(&Token::Comma) {
            return Ok(());
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::{parse_one, AlterTableOp, AlterTableOption, Statement};

    fn ops(sql: &str) -> Vec<AlterTableOp> {
        match parse_one(sql) {
            Ok(Statement::AlterTable { ops, .. }) => ops,
            other => panic!("{sql}: {other:?}"),
        }
    }

    #[test]
    fn options_with_and_without_commas() {
        assert_eq!(
            ops("ALTER TABLE t ENGINE=InnoDB DEFAULT CHARSET=utf8mb4, AUTO_INCREMENT 7"),
            vec![
                AlterTableOp::Option(AlterTableOption::Engine("InnoDB".into())),
                AlterTableOp::Option(AlterTableOption::NoEffect),
                AlterTableOp::Option(AlterTableOption::AutoIncrement(7)),
            ]
        );
        assert_eq!(
            ops("ALTER TABLE t ADD INDEX i (b), ALGORITHM = INPLACE, LOCK=NONE").len(),
            3
        );
        let got = ops("ALTER TABLE t ADD c INT, ORDER BY t.a ASC, b DESC");
        assert_eq!(got.len(), 2);
        assert_eq!(got[1], AlterTableOp::Option(AlterTableOption::OrderBy));
        for sql in [
            "ALTER TABLE t CONVERT TO CHARACTER SET latin1 COLLATE latin1_bin",
            "ALTER TABLE t FORCE",
            "ALTER TABLE t MAX_ROWS=100, PACK_KEYS 1",
            "ALTER TABLE t MODIFY a INT, DISABLE KEYS",
        ] {
            assert!(!ops(sql).is_empty(), "{sql}");
        }
        assert!(ops("ALTER TABLE t").is_empty());
        assert!(parse_one("ALTER TABLE t ALGORITHM=FAST").is_err());
        assert!(parse_one("ALTER TABLE t LOCK=ALL").is_err());
        assert!(parse_one("ALTER TABLE t ENGINE=InnoDB BOGUS").is_err());
    }
}
