//! Whether a session is inside a transaction, as MySQL reports it in every OK and EOF packet
//! (SERVER_STATUS_IN_TRANS) and drivers read it (`in_transaction`, pool resets on return).
//!
//! BEGIN / START TRANSACTION open one; COMMIT and ROLLBACK (not ROLLBACK TO SAVEPOINT) end it;
//! with `autocommit` off the first write (INSERT, UPDATE, DELETE, LOAD) opens one; DDL and
//! account statements end it (MySQL's implicit commit), as does `SET autocommit = 1` when
//! autocommit was off. Reads never open one (MariaDB's behaviour for SELECT with autocommit
//! off). Every Basalt statement is atomic on its own and published when it ends, so the flag
//! describes the session's statement sequence only: COMMIT publishes nothing further and
//! ROLLBACK undoes nothing.

use crate::session::Session;
use basalt_sql::{ast, Statement};
use std::sync::atomic::{AtomicBool, Ordering};

/// The session's transaction flag.
#[derive(Debug, Default)]
pub struct TransactionState {
    open: AtomicBool,
}

impl TransactionState {
    pub fn is_open(&self) -> bool {
        self.open.load(Ordering::Relaxed)
    }

    fn set(&self, open: bool) {
        self.open.store(open, Ordering::Relaxed);
    }
}

/// What a statement does to the session's transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Effect {
    /// BEGIN / START TRANSACTION (also WITH CONSISTENT SNAPSHOT).
    Begin,
    /// COMMIT / ROLLBACK, and statements that commit implicitly (DDL, accounts).
    End,
    /// INSERT, UPDATE, DELETE, LOAD: opens one when autocommit is off.
    Write,
    /// SET: ends the transaction if it turned autocommit on.
    Set,
    /// Reads, SHOW, USE, savepoints, PREPARE: no change.
    None,
}

impl Effect {
    pub(crate) fn of(stmt: &Statement) -> Effect {
        match stmt {
            Statement::Standard(s) => standard_effect(s),
            Statement::StartConsistentSnapshot => Effect::Begin,
            Statement::LoadData(_) => Effect::Write,
            Statement::CreateTable(_)
            | Statement::CreateTableAs(_)
            | Statement::AlterPartitions { .. }
            | Statement::AlterTable { .. }
            | Statement::AlterTableKeys { .. }
            | Statement::CreateUser { .. }
            | Statement::DropUser { .. }
            | Statement::SetPassword { .. }
            | Statement::CreateIndex { .. }
            | Statement::DropIndex { .. }
            | Statement::Grant { .. }
            | Statement::GrantRole { .. }
            | Statement::CreateRole { .. }
            | Statement::DropRole { .. }
            | Statement::CreateProcedure(_)
            | Statement::DropProcedure { .. } => Effect::End,
            _ => Effect::None,
        }
    }
}

fn standard_effect(stmt: &ast::Statement) -> Effect {
    use ast::Statement as S;
    match stmt {
        S::StartTransaction { .. } => Effect::Begin,
        S::Commit { .. }
        | S::Rollback {
            savepoint: None, ..
        } => Effect::End,
        S::Insert(_) | S::Update(_) | S::Delete(_) => Effect::Write,
        S::Set(_) => Effect::Set,
        S::CreateTable(_)
        | S::CreateView(_)
        | S::AlterView { .. }
        | S::AlterTable(_)
        | S::CreateIndex(_)
        | S::CreateDatabase { .. }
        | S::CreateSchema { .. }
        | S::Drop { .. }
        | S::Truncate(_)
        | S::Grant(_)
        | S::Revoke(_)
        | S::CreateUser(_)
        | S::CreateRole(_)
        | S::LockTables { .. }
        | S::UnlockTables => Effect::End,
        _ => Effect::None,
    }
}

/// Ends the session's transaction (COM_RESET_CONNECTION).
pub(crate) fn end(session: &Session) {
    session.info.transaction.set(false);
}

/// After a statement ran: updates the session's flag. `autocommit_before` is `autocommit` as
/// the statement began; a statement that failed opens nothing (but a failed COMMIT still ends).
pub(crate) fn after_statement(
    session: &Session,
    effect: Effect,
    autocommit_before: bool,
    succeeded: bool,
) {
    let state = &session.info.transaction;
    match effect {
        Effect::Begin if succeeded => state.set(true),
        Effect::End => state.set(false),
        Effect::Write if succeeded && !session.autocommit() => state.set(true),
        Effect::Set if !autocommit_before && session.autocommit() => state.set(false),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn effect(sql: &str) -> Effect {
        Effect::of(&basalt_sql::parse_one(sql).unwrap())
    }

    #[test]
    fn statements_are_classified_as_mysql_commits_them() {
        assert_eq!(effect("BEGIN"), Effect::Begin);
        assert_eq!(effect("START TRANSACTION"), Effect::Begin);
        assert_eq!(
            effect("START TRANSACTION WITH CONSISTENT SNAPSHOT"),
            Effect::Begin
        );
        assert_eq!(effect("COMMIT"), Effect::End);
        assert_eq!(effect("ROLLBACK"), Effect::End);
        assert_eq!(effect("ROLLBACK TO SAVEPOINT s"), Effect::None);
        assert_eq!(effect("INSERT INTO t VALUES (1)"), Effect::Write);
        assert_eq!(effect("DELETE FROM t WHERE a = 1"), Effect::Write);
        assert_eq!(effect("SET autocommit = 1"), Effect::Set);
        assert_eq!(effect("SELECT * FROM t"), Effect::None);
        assert_eq!(effect("SHOW TABLES"), Effect::None);
        assert_eq!(effect("DROP TABLE t"), Effect::End);
        assert_eq!(effect("CREATE DATABASE d"), Effect::End);
        assert_eq!(
            effect("CREATE TABLE t (a INT) DISTRIBUTED BY HASH(a) BUCKETS 1"),
            Effect::End
        );
    }
}
