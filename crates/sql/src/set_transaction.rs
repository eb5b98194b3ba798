//! `SET [GLOBAL | SESSION | LOCAL] TRANSACTION mode, ..` (isolation level, READ ONLY / READ
//! WRITE). `sqlparser` parses the modes but drops the scope word, which decides where MySQL
//! keeps the setting: GLOBAL for new sessions, SESSION for this one, none for the next
//! transaction only.

use crate::statement::{Statement, TransactionScope};
use crate::words::{expect_word, peek_nth_word, peek_word};
use sqlparser::parser::{Parser, ParserError};

/// The statement, if `SET [scope] TRANSACTION` begins here (nothing is consumed otherwise).
pub fn parse(p: &mut Parser) -> Result<Option<Statement>, ParserError> {
    if !peek_word(p, "SET") {
        return Ok(None);
    }
    let scope = [
        ("GLOBAL", TransactionScope::Global),
        ("SESSION", TransactionScope::Session),
        ("LOCAL", TransactionScope::Session),
    ]
    .into_iter()
    .find(|(w, _)| peek_nth_word(p, 1, w) && peek_nth_word(p, 2, "TRANSACTION"));
    let scope = match scope {
        Some((_, scope)) => scope,
        // `SET TRANSACTION SNAPSHOT ..` is not MySQL's; sqlparser refuses or takes it.
        None if peek_nth_word(p, 1, "TRANSACTION") && !peek_nth_word(p, 2, "SNAPSHOT") => {
            TransactionScope::Next
        }
        None => return Ok(None),
    };
    expect_word(p, "SET")?;
    if scope != TransactionScope::Next {
        p.next_token();
    }
    expect_word(p, "TRANSACTION")?;
    let modes = p.parse_transaction_modes()?;
    Ok(Some(Statement::SetTransaction { scope, modes }))
}
