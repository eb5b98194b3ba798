//! MySQL's ROW_COUNT(): what the session's previous statement did to rows — the rows an
//! INSERT, UPDATE, DELETE or REPLACE affected, -1 after a statement that returned rows (a
//! SELECT, a SHOW) or failed, 0 after anything else (DDL, SET, USE). The value a statement
//! sees is fixed when it begins, so a query's result, streamed after it ends, still reads
//! the previous statement's count.

use crate::output::Output;
use basalt_common::Result;
use std::sync::atomic::{AtomicI64, Ordering};

/// One session's counts.
#[derive(Debug, Default)]
pub(crate) struct RowCount {
    /// The count of the last statement that ended.
    last: AtomicI64,
    /// What ROW_COUNT() gives in the running statement.
    visible: AtomicI64,
}

impl RowCount {
    /// A statement begins: ROW_COUNT() gives the count of the one before it.
    pub fn begin(&self) {
        self.visible
            .store(self.last.load(Ordering::Relaxed), Ordering::Relaxed);
    }

    /// A statement ended with `result`.
    pub fn finish(&self, result: &Result<Output>) {
        let count = match result {
            Ok(output) => count_of(output),
            Err(_) => -1,
        };
        self.last.store(count, Ordering::Relaxed);
    }

    /// ROW_COUNT() in the running statement.
    pub fn value(&self) -> i64 {
        self.visible.load(Ordering::Relaxed)
    }
}

/// A statement's row count from its output (a CALL's: its last part's).
fn count_of(output: &Output) -> i64 {
    match output {
        Output::Rows { .. } => -1,
        Output::Ok { affected_rows, .. } => i64::try_from(*affected_rows).unwrap_or(i64::MAX),
        Output::Multiple(parts) => match parts.last() {
            Some(Ok(last)) => count_of(last),
            Some(Err(_)) => -1,
            None => 0,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_statement_sees_the_count_of_the_one_before() {
        let count = RowCount::default();
        count.begin();
        assert_eq!(count.value(), 0);
        count.finish(&Ok(Output::affected(3)));
        assert_eq!(count.value(), 0, "fixed until the next statement begins");
        count.begin();
        assert_eq!(count.value(), 3);
        count.finish(&Err(basalt_common::BasaltError::QueryInterrupted));
        count.begin();
        assert_eq!(count.value(), -1);
    }
}
