//! A session's diagnostics area: the notes and warnings of its last statement, as MySQL keeps
//! them for `SHOW WARNINGS`, `SHOW COUNT(*) WARNINGS`, `@@warning_count` and the warning count
//! of OK packets. A statement that reads no table (`SHOW WARNINGS`, `SELECT @@warning_count`)
//! leaves them as they are; any other clears them when it starts.

use crate::output::Output;
use crate::show::{Col, ResultBuilder};
use basalt_sql::{ast, Statement};
use parking_lot::Mutex;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// `Note`, `Warning` or `Error`.
    pub level: &'static str,
    pub code: u16,
    pub message: String,
}

#[derive(Debug, Default)]
pub struct Warnings(Mutex<Vec<Warning>>);

impl Warnings {
    /// A note (MySQL's level for "nothing to do" outcomes such as DROP TABLE IF EXISTS of a
    /// missing table).
    pub fn note(&self, code: u16, message: String) {
        self.0.lock().push(Warning {
            level: "Note",
            code,
            message,
        });
    }

    /// A diagnostic of the given level (`Note` or `Warning`), such as a non-strict INSERT's
    /// adjusted value.
    pub fn add(&self, level: &'static str, code: u16, message: String) {
        self.0.lock().push(Warning {
            level,
            code,
            message,
        });
    }

    pub fn clear(&self) {
        self.0.lock().clear();
    }

    pub fn count(&self) -> usize {
        self.0.lock().len()
    }

    /// SHOW WARNINGS.
    pub fn show(&self) -> Output {
        let mut b = ResultBuilder::new(&[Col::str("Level"), Col::int("Code"), Col::str("Message")]);
        for w in self.0.lock().iter() {
            b.row(vec![
                w.level.into(),
                i64::from(w.code).into(),
                w.message.clone().into(),
            ]);
        }
        b.into_output()
    }
}

/// Whether `stmt` starts a new diagnostics area: every statement but SHOW WARNINGS / SHOW
/// COUNT(*) WARNINGS and SELECTs that read no table.
pub fn clears(stmt: &Statement) -> bool {
    match stmt {
        Statement::ShowWarnings | Statement::ShowWarningCount => false,
        Statement::Standard(s) => match s.as_ref() {
            ast::Statement::Query(q) => match q.body.as_ref() {
                ast::SetExpr::Select(select) => !select.from.is_empty(),
                _ => true,
            },
            _ => true,
        },
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reading_warnings_keeps_them() {
        let keeps = |sql: &str| !clears(&basalt_sql::parse_one(sql).unwrap());
        assert!(keeps("SHOW WARNINGS"));
        assert!(keeps("SHOW COUNT(*) WARNINGS"));
        assert!(keeps("SELECT @@warning_count"));
        assert!(!keeps("SELECT * FROM t"));
        assert!(!keeps("DROP TABLE IF EXISTS t"));
        let w = Warnings::default();
        w.note(1051, "Unknown table 'd.t'".into());
        assert_eq!(w.count(), 1);
        w.clear();
        assert_eq!(w.count(), 0);
    }
}
