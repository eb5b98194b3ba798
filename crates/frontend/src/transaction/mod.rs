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
//! (MariaDB's behaviour for SELECT with autocommit off), but read as InnoDB's REPEATABLE READ
//! does: the first statement that reads or writes tables inside a transaction (or with
//! autocommit off) takes a read view ([`ReadSnapshot`]) — `START TRANSACTION WITH CONSISTENT
//! SNAPSHOT` takes it at once — and every later statement reads each table at its version
//! there (plus the transaction's own writes) until COMMIT, ROLLBACK or an implicit commit.

mod commit;
mod overlay;
mod staged;
mod staged_load;

pub(crate) use overlay::rowset_ids;
pub(crate) use staged::StagedWrites;
pub(crate) use staged_load::StagedLoad;

use crate::catalog_provider::Services;
use crate::read_snapshot::ReadSnapshot;
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
    /// Doris's `BEGIN WITH LABEL l`: the open transaction's label and id.
    label: parking_lot::Mutex<Option<(String, u64)>>,
    /// The label, id and end state (VISIBLE or ABORTED) of the labelled transaction the
    /// statement running now ended, for its OK packet.
    ended: parking_lot::Mutex<Option<(String, u64, &'static str)>>,
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
            Statement::StartConsistentSnapshot | Statement::BeginWithLabel { .. } => Effect::Begin,
            Statement::LoadData(_) => Effect::Write,
            Statement::CreateTable(_)
            | Statement::CreateTableAs(_)
            | Statement::View(_)
            | Statement::CreateTableLike { .. }
            | Statement::CreateTemporaryTable(_)
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

/// The writes of one statement that changes several tables outside a transaction (a
/// multiple-table DELETE or UPDATE): staged as a transaction's are, and published together
/// when it ends, so all its tables change or none. Inside a transaction it adds nothing.
pub(crate) struct StatementWrites {
    own: bool,
}

/// Stages the session's writes until [`StatementWrites::finish`], unless they are staged
/// already (an open transaction's).
pub(crate) fn stage_statement(services: &Services, session: &Session) -> StatementWrites {
    let mut slot = session.info.transaction.staged.lock();
    if slot.is_some() {
        return StatementWrites { own: false };
    }
    let view = Arc::new(ReadSnapshot::take(services));
    *slot = Some(Arc::new(StagedWrites::new(services, view)));
    StatementWrites { own: true }
}

impl StatementWrites {
    /// Publishes the statement's writes when it succeeded (a failed publish is its error);
    /// discards them when it failed.
    pub(crate) fn finish<T>(
        self,
        services: &Services,
        session: &Session,
        result: Result<T>,
    ) -> Result<T> {
        if !self.own {
            return result;
        }
        let taken = session.info.transaction.staged.lock().take();
        match (result, taken) {
            (Ok(value), Some(writes)) => commit::commit(services, &writes).map(|()| value),
            (result, _) => result,
        }
    }
}

/// Ends the session's transaction, discarding its writes (COM_RESET_CONNECTION).
pub(crate) fn end(session: &Session) {
    session.info.transaction.set(false);
    session.info.transaction.staged.lock().take();
    session.info.transaction.label.lock().take();
    session.info.snapshot.lock().take();
}

/// The statements whose OK packet reports a labelled transaction as Doris does:
/// `{'label':'l', 'status':'PREPARE|VISIBLE|ABORTED', 'txnId':'n'}`.
#[derive(Debug, Clone, Copy)]
pub(crate) enum LabelReport {
    /// `BEGIN WITH LABEL`: the transaction it opened.
    Began,
    /// COMMIT / ROLLBACK: the labelled transaction it ended, if any.
    Ended,
}

impl LabelReport {
    pub(crate) fn of(stmt: &Statement) -> Option<LabelReport> {
        match stmt {
            Statement::BeginWithLabel { .. } => Some(LabelReport::Began),
            Statement::Standard(s)
                if matches!(
                    s.as_ref(),
                    ast::Statement::Commit { .. }
                        | ast::Statement::Rollback {
                            savepoint: None,
                            ..
                        }
                ) =>
            {
                Some(LabelReport::Ended)
            }
            _ => None,
        }
    }

    /// The report, after the statement ran.
    pub(crate) fn report(self, session: &Session) -> Option<String> {
        let state = &session.info.transaction;
        let (label, id, status) = match self {
            LabelReport::Began => {
                let (label, _) = state.label.lock().clone()?;
                (label, String::new(), "PREPARE")
            }
            LabelReport::Ended => {
                let (label, id, status) = state.ended.lock().take()?;
                (label, id.to_string(), status)
            }
        };
        Some(format!(
            "{{'label':'{label}', 'status':'{status}', 'txnId':'{id}'}}"
        ))
    }
}

/// Whether the session's statements are inside a transaction: one is open, or autocommit is
/// off (where every statement is part of one, MySQL's rule).
fn in_transaction(session: &Session) -> bool {
    session.info.transaction.is_open() || !session.autocommit()
}

/// Whether a statement reads or writes tables (so takes the transaction's read view).
fn reads_tables(stmt: &Statement) -> bool {
    match stmt {
        Statement::Standard(s) => matches!(
            s.as_ref(),
            ast::Statement::Query(_)
                | ast::Statement::Insert(_)
                | ast::Statement::Update(_)
                | ast::Statement::Delete(_)
                | ast::Statement::Explain { .. }
        ),
        Statement::LoadData(_) | Statement::Execute { .. } => true,
        _ => false,
    }
}

/// The transaction's read view, taken now if it has none yet.
fn read_view(services: &Services, session: &Session) -> Arc<ReadSnapshot> {
    session
        .info
        .snapshot
        .lock()
        .get_or_insert_with(|| Arc::new(ReadSnapshot::take(services)))
        .clone()
}

/// Ends the transaction's read view.
fn drop_read_view(session: &Session) {
    session.info.snapshot.lock().take();
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

/// Before a statement runs: COMMIT, DDL and BEGIN publish what the transaction staged (a
/// failed COMMIT is the statement's error) and end its read view; ROLLBACK discards both;
/// `START TRANSACTION WITH CONSISTENT SNAPSHOT` takes a read view at once, the first statement
/// inside a transaction that reads or writes tables when it comes; a write inside a
/// transaction (or with autocommit off) gets the staging it writes through.
pub(crate) fn before_statement(
    services: &Services,
    session: &Session,
    stmt: &Statement,
    effect: Effect,
) -> Result<()> {
    if !in_transaction(session) && effect != Effect::Begin {
        // A view left by a transaction that ended without this module's help.
        drop_read_view(session);
    }
    let state = &session.info.transaction;
    state.ended.lock().take();
    match effect {
        Effect::End if is_rollback(stmt) => {
            state.staged.lock().take();
            drop_read_view(session);
            if let Some((label, id)) = state.label.lock().take() {
                *state.ended.lock() = Some((label, id, "ABORTED"));
            }
            Ok(())
        }
        Effect::Begin | Effect::End => {
            let committed = commit_staged(services, session);
            drop_read_view(session);
            if let Some((label, id)) = state.label.lock().take() {
                let status = if committed.is_ok() {
                    "VISIBLE"
                } else {
                    "ABORTED"
                };
                *state.ended.lock() = Some((label, id, status));
            }
            if let (Ok(()), Statement::BeginWithLabel { label }) = (&committed, stmt) {
                *state.label.lock() = Some((label.clone(), services.catalog.allocate_id()));
            }
            if committed.is_ok() && matches!(stmt, Statement::StartConsistentSnapshot) {
                read_view(services, session);
            }
            committed
        }
        Effect::Write => {
            if in_transaction(session) {
                let view = read_view(services, session);
                let mut slot = session.info.transaction.staged.lock();
                if slot.is_none() {
                    *slot = Some(Arc::new(StagedWrites::new(services, view)));
                }
            }
            Ok(())
        }
        Effect::Set | Effect::None => {
            if in_transaction(session) && reads_tables(stmt) {
                read_view(services, session);
            }
            Ok(())
        }
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
            state.label.lock().take();
            drop_read_view(session);
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
