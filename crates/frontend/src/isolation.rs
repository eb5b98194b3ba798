//! Transaction isolation levels: `SET [GLOBAL | SESSION] TRANSACTION ISOLATION LEVEL ..`,
//! `SET transaction_isolation = ..` (and its old name `tx_isolation`, kept equal), and the
//! access mode (`READ ONLY` / `READ WRITE`, `transaction_read_only` / `tx_read_only`).
//!
//! All four of MySQL's levels are accepted and stored — per session, or globally for new
//! sessions, or (without a scope word) checked only, since MySQL applies that form to the next
//! transaction alone — and `@@transaction_isolation` shows the level set. What Basalt gives is
//! the same for every level: **REPEATABLE READ** as InnoDB gives it (see `transaction`): a
//! transaction reads every table as a consistent snapshot taken at its first statement that
//! reads or writes tables, plus its own staged writes, which no other session sees before
//! COMMIT. So:
//! - READ-UNCOMMITTED and READ-COMMITTED get a stronger level: no other session's uncommitted
//!   rows (never visible in Basalt), and no newer committed rows after the snapshot;
//! - REPEATABLE-READ is what it says;
//! - SERIALIZABLE gets a weaker level: snapshot reads, no locking reads, so concurrent
//!   transactions are not serialized (write skew is possible).
//!
//! Setting a level other than REPEATABLE-READ gives a warning naming what Basalt gives, as Doris
//! does for isolation it does not support.

use crate::engine::QueryEngine;
use crate::output::Output;
use crate::session::Session;
use basalt_common::{BasaltError, Result};
use basalt_sql::ast::{TransactionAccessMode, TransactionIsolationLevel, TransactionMode};
use basalt_sql::TransactionScope;

/// MySQL's level names, in the order of their numbers (`SET transaction_isolation = 1`).
const LEVELS: [&str; 4] = [
    "READ-UNCOMMITTED",
    "READ-COMMITTED",
    "REPEATABLE-READ",
    "SERIALIZABLE",
];

/// A level as `transaction_isolation` stores it (MySQL's spelling), from any case or number.
pub(crate) fn canonical_level(value: &str) -> Option<&'static str> {
    let value = value.trim();
    if let Ok(n) = value.parse::<usize>() {
        return LEVELS.get(n).copied();
    }
    LEVELS
        .iter()
        .copied()
        .find(|l| l.eq_ignore_ascii_case(value))
}

/// The variable kept equal to `name` (MySQL 5.7's old name and 8.0's new one).
pub(crate) fn twin(name: &str) -> Option<&'static str> {
    match name {
        "transaction_isolation" => Some("tx_isolation"),
        "tx_isolation" => Some("transaction_isolation"),
        "transaction_read_only" => Some("tx_read_only"),
        "tx_read_only" => Some("transaction_read_only"),
        _ => None,
    }
}

/// After `name` was set to `value`: the warning for a level Basalt gives differently.
pub(crate) fn warn_level(session: &Session, name: &str, value: &str) {
    if !matches!(name, "transaction_isolation" | "tx_isolation") {
        return;
    }
    let Some(level) = canonical_level(value) else {
        return;
    };
    let gives = match level {
        "READ-UNCOMMITTED" | "READ-COMMITTED" => "stronger",
        "SERIALIZABLE" => "weaker (no locking reads)",
        _ => return,
    };
    session.info.warnings.add(
        "Warning",
        1105,
        format!(
            "Basalt runs {level} transactions as REPEATABLE-READ, {gives}: each transaction \
             reads one consistent snapshot and its own writes"
        ),
    );
}

fn level_name(level: &TransactionIsolationLevel) -> Result<&'static str> {
    Ok(match level {
        TransactionIsolationLevel::ReadUncommitted => LEVELS[0],
        TransactionIsolationLevel::ReadCommitted => LEVELS[1],
        TransactionIsolationLevel::RepeatableRead => LEVELS[2],
        TransactionIsolationLevel::Serializable => LEVELS[3],
        other => {
            return Err(BasaltError::NotSupported(format!(
                "isolation level {other}"
            )))
        }
    })
}

impl QueryEngine {
    /// `SET [GLOBAL | SESSION] TRANSACTION mode, ..`.
    pub(crate) fn set_transaction(
        &self,
        session: &Session,
        scope: TransactionScope,
        modes: &[TransactionMode],
    ) -> Result<Output> {
        if scope == TransactionScope::Next && session.info.transaction.is_open() {
            return Err(BasaltError::Execution(
                "Transaction characteristics can't be changed while a transaction is in \
                 progress"
                    .into(),
            ));
        }
        let mut settings = Vec::new();
        for mode in modes {
            settings.push(match mode {
                TransactionMode::IsolationLevel(level) => {
                    ("transaction_isolation", level_name(level)?.to_string())
                }
                TransactionMode::AccessMode(TransactionAccessMode::ReadOnly) => {
                    ("transaction_read_only", "1".to_string())
                }
                TransactionMode::AccessMode(TransactionAccessMode::ReadWrite) => {
                    ("transaction_read_only", "0".to_string())
                }
            });
        }
        if scope == TransactionScope::Global {
            crate::statement::ddl::require_admin(session, "SET GLOBAL TRANSACTION")?;
        }
        for (name, value) in &settings {
            match scope {
                // The next transaction only: Basalt gives every level alike, so it is checked.
                TransactionScope::Next => {}
                TransactionScope::Session => {
                    session.info.vars.write().set_session(name, value)?;
                }
                TransactionScope::Global => {
                    let (n, text) = session.info.vars.write().set_global(name, value)?;
                    self.services.catalog.set_global_variable(&n, &text)?;
                    if let Some(twin) = twin(&n) {
                        self.services.catalog.set_global_variable(twin, &text)?;
                    }
                }
            }
            warn_level(session, name, value);
        }
        Ok(Output::ok())
    }
}
