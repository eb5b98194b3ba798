//! What MySQL's DDL declares beside the columns and the key: secondary indexes and foreign
//! keys, and two column attributes (a generated column's expression, the members of an ENUM or
//! SET column). Indexes and foreign keys are informational, as Doris keeps its constraints:
//! they live in the table's definition for SHOW CREATE TABLE, SHOW INDEX and
//! information_schema to show, and do not answer queries (segments keep zone maps on every
//! column and Unique tables a primary-key index) nor check rows (a UNIQUE index does not reject
//! duplicates, a foreign key does not check references). Columns are named in lower case, as
//! [`crate::ColumnMeta::name`] is.

use serde::{Deserialize, Serialize};

/// What an index is: MySQL's kinds, or Doris's `USING INVERTED | BITMAP | NGRAM_BF`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum IndexKind {
    Plain,
    Unique,
    Fulltext,
    Inverted,
    Bitmap,
    NgramBf,
}

impl IndexKind {
    /// SHOW INDEX's Index_type.
    pub fn index_type(&self) -> &'static str {
        match self {
            IndexKind::Plain | IndexKind::Unique => "BTREE",
            IndexKind::Fulltext => "FULLTEXT",
            IndexKind::Inverted => "INVERTED",
            IndexKind::Bitmap => "BITMAP",
            IndexKind::NgramBf => "NGRAM_BF",
        }
    }

    /// Doris's kinds, which Doris's DDL writes as `INDEX name (cols) USING kind`.
    pub fn is_doris(&self) -> bool {
        matches!(
            self,
            IndexKind::Inverted | IndexKind::Bitmap | IndexKind::NgramBf
        )
    }
}

/// One column of an index and its prefix length (MySQL's `name(10)`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexColumnMeta {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub length: Option<u32>,
}

/// A secondary index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexMeta {
    /// As declared (or as MySQL names an unnamed one: after its first column).
    pub name: String,
    pub kind: IndexKind,
    pub columns: Vec<IndexColumnMeta>,
    #[serde(default)]
    pub comment: String,
    /// Doris's `PROPERTIES (..)` of an inverted or n-gram index, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub properties: Vec<(String, String)>,
}

/// A foreign key: `columns` of this table refer to `ref_columns` of `ref_database.ref_table`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForeignKeyMeta {
    pub name: String,
    pub columns: Vec<String>,
    pub ref_database: String,
    pub ref_table: String,
    /// As the DDL spelled them.
    pub ref_columns: Vec<String>,
    /// MySQL's words (`CASCADE`, `SET NULL`, ..); `None` when not said (MySQL's RESTRICT).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_delete: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_update: Option<String>,
}

/// A generated column: its expression as SQL text, computed when rows are written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GeneratedMeta {
    pub expr: String,
    /// MySQL's DDL said STORED (otherwise VIRTUAL); Basalt stores the values either way.
    pub stored: bool,
}

/// The members of an ENUM or SET column (stored as VARCHAR text).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AllowedValues {
    /// SET: a comma-separated subset of the members; ENUM: one member.
    pub set: bool,
    pub values: Vec<String>,
}

impl AllowedValues {
    /// The column's type as MySQL writes it: `enum('a','b')` / `set('a','b')`.
    pub fn column_type(&self) -> String {
        let members: Vec<String> = self
            .values
            .iter()
            .map(|v| format!("'{}'", v.replace('\\', "\\\\").replace('\'', "''")))
            .collect();
        let kind = if self.set { "set" } else { "enum" };
        format!("{kind}({})", members.join(","))
    }

    /// The value as stored when `value` is one the column takes (ENUM members match without
    /// regard to case and trailing spaces and are stored as declared; a SET value's members
    /// are stored once each, in declared order); `None` when it is not. A number that is no
    /// member is MySQL's index: an ENUM's member by position (1 the first), a SET's members by
    /// bits (1 the first, 2 the second, ..).
    pub fn admit(&self, value: &str) -> Option<String> {
        let member = |v: &str| {
            let v = v.trim_end_matches(' ');
            self.values
                .iter()
                .position(|m| m.trim_end_matches(' ').to_lowercase() == v.to_lowercase())
        };
        let index = value.trim().parse::<u64>().ok();
        if !self.set {
            return match (member(value), index) {
                (Some(i), _) => Some(self.values[i].clone()),
                (None, Some(n)) if (1..=self.values.len() as u64).contains(&n) => {
                    Some(self.values[n as usize - 1].clone())
                }
                _ => None,
            };
        }
        if value.is_empty() {
            return Some(String::new());
        }
        let mut chosen = vec![false; self.values.len()];
        match (
            value.split(',').map(member).collect::<Option<Vec<_>>>(),
            index,
        ) {
            (Some(found), _) => found.into_iter().for_each(|i| chosen[i] = true),
            (None, Some(bits)) if self.values.len() >= 64 || bits >> self.values.len() == 0 => {
                for (i, c) in chosen.iter_mut().enumerate() {
                    *c = i < 64 && bits & (1 << i) != 0;
                }
            }
            _ => return None,
        }
        let members: Vec<&str> = self
            .values
            .iter()
            .zip(&chosen)
            .filter(|(_, c)| **c)
            .map(|(m, _)| m.as_str())
            .collect();
        Some(members.join(","))
    }
}

impl crate::TableMeta {
    /// The generated columns in storage order: (storage index, expression).
    pub fn generated_columns(&self) -> Vec<(usize, &str)> {
        self.columns
            .iter()
            .enumerate()
            .filter_map(|(i, c)| c.generated.as_ref().map(|g| (i, g.expr.as_str())))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enum_and_set_values() {
        let e = AllowedValues {
            set: false,
            values: vec!["small".into(), "Big".into(), "it's".into()],
        };
        assert_eq!(e.column_type(), "enum('small','Big','it''s')");
        assert_eq!(e.admit("BIG").as_deref(), Some("Big"));
        assert_eq!(e.admit("small  ").as_deref(), Some("small"));
        assert_eq!(e.admit("medium"), None);
        assert_eq!(e.admit(""), None);
        let s = AllowedValues {
            set: true,
            values: vec!["a".into(), "b".into(), "c".into()],
        };
        assert_eq!(s.column_type(), "set('a','b','c')");
        assert_eq!(s.admit("c,a,A").as_deref(), Some("a,c"));
        assert_eq!(s.admit("").as_deref(), Some(""));
        assert_eq!(s.admit("a,d"), None);
        // Numbers that are no members are MySQL's indexes.
        assert_eq!(e.admit("2").as_deref(), Some("Big"));
        assert_eq!(e.admit("0"), None);
        assert_eq!(e.admit("4"), None);
        assert_eq!(s.admit("5").as_deref(), Some("a,c"));
        assert_eq!(s.admit("0").as_deref(), Some(""));
        assert_eq!(s.admit("8"), None);
        let digits = AllowedValues {
            set: false,
            values: vec!["2".into(), "1".into()],
        };
        assert_eq!(digits.admit("1").as_deref(), Some("1"));
        assert_eq!(digits.admit("3"), None);
    }
}
