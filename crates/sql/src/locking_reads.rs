//! MySQL's locking reads: `SELECT .. FOR UPDATE`, `FOR SHARE` (with `NOWAIT` / `SKIP LOCKED`,
//! which `sqlparser` parses into the query's lock clauses) and the older `LOCK IN SHARE MODE`
//! (taken here, as a FOR SHARE clause).
//!
//! Basalt takes no row locks: as Doris does, it accepts the clause and reads as without it.
//! Outside a transaction that is exactly MySQL's answer (the lock ends with the statement).
//! Inside a Basalt transaction the read is a snapshot read at the transaction's read view
//! (REPEATABLE READ, see the frontend's `transaction` and `isolation`), not MySQL's locking
//! read of the newest committed rows, and nothing stops another session changing the rows
//! read; a Unique-key row the transaction then writes, that another session changed since the
//! snapshot, fails its COMMIT with 1213 instead (optimistic, where MySQL would have waited).

use crate::words::{eat_word, eat_words, peek_nth_word, peek_word};
use sqlparser::ast::{LockClause, LockType, NonBlock, Query, Statement};
use sqlparser::parser::Parser;

/// After a statement: `LOCK IN SHARE MODE` ending a SELECT becomes its FOR SHARE clause.
pub fn take_lock_in_share_mode(p: &mut Parser, stmt: &mut Statement) {
    if let Statement::Query(query) = stmt {
        take_query_lock_in_share_mode(p, query);
    }
}

/// [`take_lock_in_share_mode`] after a query that is part of a statement (a view's SELECT).
pub fn take_query_lock_in_share_mode(p: &mut Parser, query: &mut Query) {
    let follows = peek_word(p, "LOCK")
        && peek_nth_word(p, 1, "IN")
        && peek_nth_word(p, 2, "SHARE")
        && peek_nth_word(p, 3, "MODE");
    if follows && eat_words(p, &["LOCK", "IN", "SHARE", "MODE"]) {
        // MariaDB's NOWAIT / SKIP LOCKED after it, as after FOR SHARE.
        let nonblock = if eat_word(p, "NOWAIT") {
            Some(NonBlock::Nowait)
        } else if eat_words(p, &["SKIP", "LOCKED"]) {
            Some(NonBlock::SkipLocked)
        } else {
            None
        };
        query.locks.push(LockClause {
            lock_type: LockType::Share,
            of: None,
            nonblock,
        });
    }
}
