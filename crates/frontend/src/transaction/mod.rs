//! A session's transaction: whether one is open, as MySQL reports it in every OK and EOF packet
//! (SERVER_STATUS_IN_TRANS) and drivers read it (`in_transaction`, pool resets on return), and
//! the writes it staged.
//!
//! BEGIN / START TRANSACTION open one; COMMIT and ROLLBACK (not ROLLBACK TO SAVEPOINT) end it;
//! with `autocommit` off the first write (INSERT, UPDATE, DELETE, REPLACE) opens one; DDL and
//! account statements end it (MySQL's implicit commit, before they run), as do BEGIN and
//! `SET autocommit = 1` when autocommit was off.
//!
//! Inside a transaction writes are staged, not published ([`staged`], [`overlay`]): other
//! sessions do not see them, the session's later statements do; COMMIT publishes them all
//! atomically ([`commit`]) and ROLLBACK — or disconnecting — discards them. Reads open nothing
//! (MariaDB's behaviour for SELECT with autocommit off) and read the newest published versions
//! of tables the transaction did not write.

mod commit;
mod overlay;
mod staged;

pub(crate) use staged::StagedWrites;

use crate::catalog_provider::Services;
use crate::session::Session;
use basalt_common::Result;
use basalt_sql::{ast, Statement};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// The session's transaction flag and staged writes.
#[derive(Debug, Default)]
pub struct TransactionState {
    open: AtomicBool,
    staged: parking_lot::Mutex<Option<Arc<StagedWrites>>>,
}

impl TransactionState {
    pub fn is_open(&self) -> bool {
        self.open.load(Ordering::Relaxed)
    }

    /// The writes the open transaction staged, if it wrote anything yet.
    pub(crate) fn staged_writes(&self) -> Option<Arc<StagedWrites>> {
        self.staged.lock().clone()
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

/// The writes the session's open transaction staged, if it wrote anything yet.
pub(crate) fn staged(session: &Session) -> Option<Arc<StagedWrites>> {
    session.info.transaction.staged_writes()
}

/// The storage a session's statements write with (and look tables up in for writing): its
/// transaction's staging, else the shared engine.
pub(crate) fn storage(
    services: &Services,
    session: &Session,
) -> Arc<basalt_storage::StorageEngine> {
    match staged(session) {
        Some(writes) => writes.storage.clone(),
        None => services.storage.clone(),
    }
}

/// Ends the session's transaction, discarding its writes (COM_RESET_CONNECTION).
pub(crate) fn end(session: &Session) {
    session.info.transaction.set(false);
    session.info.transaction.staged.lock().take();
}

fn is_rollback(stmt: &Statement) -> bool {
    matches!(stmt, Statement::Standard(s) if matches!(
        s.as_ref(),
        ast::Statement::Rollback { savepoint: None, .. }
    ))
}

/// Publishes the staged writes, if any (COMMIT and the implicit commits).
fn commit_staged(services: &Services, session: &Session) -> Result<()> {
    let taken = session.info.transaction.staged.lock().take();
    match taken {
        // Dropping `writes` after a failed COMMIT discards them.
        Some(writes) => commit::commit(services, &writes),
        None => Ok(()),
    }
}

/// The implicit commit of a statement that cannot be part of a transaction (LOAD DATA LOCAL
/// INFILE, which publishes on its own): what the transaction staged is published first, and
/// the transaction ends, as DDL ends one.
pub(crate) fn commit_implicitly(services: &Services, session: &Session) -> Result<()> {
    let result = commit_staged(services, session);
    session.info.transaction.set(false);
    result
}

/// Before a statement runs: COMMIT, DDL and BEGIN publish what the transaction staged (a
/// failed COMMIT is the statement's error); ROLLBACK discards it; a write inside a transaction
/// (or with autocommit off) gets the staging it writes through.
pub(crate) fn before_statement(
    services: &Services,
    session: &Session,
    stmt: &Statement,
    effect: Effect,
) -> Result<()> {
    match effect {
        Effect::End if is_rollback(stmt) => {
            session.info.transaction.staged.lock().take();
            Ok(())
        }
        Effect::Begin | Effect::End => commit_staged(services, session),
        Effect::Write => {
            let state = &session.info.transaction;
            if state.is_open() || !session.autocommit() {
                let mut slot = state.staged.lock();
                if slot.is_none() {
                    *slot = Some(Arc::new(StagedWrites::new(services)));
                }
            }
            Ok(())
        }
        Effect::Set | Effect::None => Ok(()),
    }
}

/// After a statement ran: updates the session's flag. `autocommit_before` is `autocommit` as
/// the statement began; a statement that failed opens nothing (but a failed COMMIT still ends).
/// `SET autocommit = 1` inside a transaction commits it (its failure is the statement's).
pub(crate) fn after_statement<T>(
    services: &Services,
    session: &Session,
    effect: Effect,
    autocommit_before: bool,
    result: Result<T>,
) -> Result<T> {
    let state = &session.info.transaction;
    match effect {
        Effect::Begin if result.is_ok() => state.set(true),
        Effect::End => state.set(false),
        Effect::Write if result.is_ok() && !session.autocommit() => state.set(true),
        Effect::Set if !autocommit_before && session.autocommit() => {
            state.set(false);
            commit_staged(services, session)?;
        }
        _ => {}
    }
    result
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
