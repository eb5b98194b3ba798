//! How database, table and view names keep and compare their case: MySQL's and Doris's
//! `lower_case_table_names`, fixed when a data directory is initialized.
//!
//! - 0 ([`TableNameCase::Exact`], Doris's default): stored as created, compared exactly
//!   (`Foo` and `foo` are two tables).
//! - 1 ([`TableNameCase::Lower`]): stored in lower case, compared without regard to case.
//! - 2 ([`TableNameCase::Insensitive`]): stored as created, compared without regard to case.
//!
//! Column names are not governed by it: they keep their spelling and always match without
//! regard to case.

use std::fmt;

/// The setting `lower_case_table_names` (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TableNameCase {
    #[default]
    Exact,
    Lower,
    Insensitive,
}

impl TableNameCase {
    /// The setting with this number (0, 1 or 2).
    pub fn from_setting(value: u64) -> Option<TableNameCase> {
        match value {
            0 => Some(TableNameCase::Exact),
            1 => Some(TableNameCase::Lower),
            2 => Some(TableNameCase::Insensitive),
            _ => None,
        }
    }

    /// The number `SHOW VARIABLES` shows.
    pub fn setting(self) -> u64 {
        match self {
            TableNameCase::Exact => 0,
            TableNameCase::Lower => 1,
            TableNameCase::Insensitive => 2,
        }
    }

    /// The spelling a name is stored with when created as `name`.
    pub fn stored(self, name: &str) -> String {
        match self {
            TableNameCase::Lower => name.to_lowercase(),
            TableNameCase::Exact | TableNameCase::Insensitive => name.to_string(),
        }
    }

    /// What two names must share to name the same object: the name itself when compared
    /// exactly, else its lower case.
    pub fn key(self, name: &str) -> String {
        match self {
            TableNameCase::Exact => name.to_string(),
            TableNameCase::Lower | TableNameCase::Insensitive => name.to_lowercase(),
        }
    }

    /// Whether `a` and `b` name the same database or table.
    pub fn same(self, a: &str, b: &str) -> bool {
        match self {
            TableNameCase::Exact => a == b,
            TableNameCase::Lower | TableNameCase::Insensitive => {
                a == b || a.to_lowercase() == b.to_lowercase()
            }
        }
    }
}

impl fmt::Display for TableNameCase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.setting())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_setting_stores_and_compares() {
        let exact = TableNameCase::Exact;
        assert_eq!(exact.stored("Foo"), "Foo");
        assert!(!exact.same("Foo", "foo"));
        assert_ne!(exact.key("Foo"), exact.key("foo"));
        let lower = TableNameCase::Lower;
        assert_eq!(lower.stored("Foo"), "foo");
        assert!(lower.same("Foo", "FOO"));
        let insensitive = TableNameCase::Insensitive;
        assert_eq!(insensitive.stored("Foo"), "Foo");
        assert_eq!(insensitive.key("Foo"), insensitive.key("fOO"));
        for n in 0..3 {
            assert_eq!(TableNameCase::from_setting(n).map(|c| c.setting()), Some(n));
        }
        assert_eq!(TableNameCase::from_setting(3), None);
    }
}
