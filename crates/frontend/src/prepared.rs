//! A session's prepared statements (COM_STMT_PREPARE and SQL-level PREPARE): the statement text
//! with the byte positions of its `?` placeholders, the result columns known at prepare time,
//! the short-circuit plan of a point query, and binding parameter values into executable text.

use crate::point_query::PointQuery;
use basalt_common::{BasaltError, ParamValue, Result};
use datafusion::arrow::datatypes::SchemaRef;
use std::collections::HashMap;
use std::sync::Arc;

/// One prepared statement.
pub struct PreparedStatement {
    pub sql: String,
    /// Byte offsets of the `?` placeholders in `sql`.
    pub placeholders: Vec<usize>,
    /// Result columns, when known before execution.
    pub columns: Option<SchemaRef>,
    /// The short-circuit plan when the statement is a primary-key point query.
    pub point: Option<Arc<PointQuery>>,
}

impl PreparedStatement {
    pub fn param_count(&self) -> usize {
        self.placeholders.len()
    }

    /// Checks that `params` has one value per placeholder.
    pub fn check_params(&self, params: &[ParamValue]) -> Result<()> {
        if params.len() != self.placeholders.len() {
            return Err(BasaltError::WrongArguments {
                function: "EXECUTE".into(),
                message: format!(
                    "the statement has {} parameter(s), {} given",
                    self.placeholders.len(),
                    params.len()
                ),
            });
        }
        Ok(())
    }

    /// The statement text with each placeholder replaced by its value as a literal.
    pub fn bind(&self, params: &[ParamValue]) -> Result<String> {
        self.check_params(params)?;
        let mut out = String::with_capacity(self.sql.len() + 16 * params.len());
        let mut at = 0;
        for (offset, value) in self.placeholders.iter().zip(params) {
            out.push_str(&self.sql[at..*offset]);
            out.push_str(&value.to_sql_literal());
            at = offset + 1;
        }
        out.push_str(&self.sql[at..]);
        Ok(out)
    }
}

/// The prepared statements of one session, by protocol id and by SQL-level name.
#[derive(Default)]
pub struct PreparedStatements {
    by_id: foldhash::HashMap<u32, Arc<PreparedStatement>>,
    names: HashMap<String, u32>,
    next_id: u32,
}

impl PreparedStatements {
    /// Keeps `stmt` under a new id (and `name`, replacing a statement of that name), refusing
    /// more than `limit` statements.
    pub fn add(&mut self, stmt: PreparedStatement, name: Option<&str>, limit: u64) -> Result<u32> {
        let replaced = name.and_then(|n| self.names.get(&n.to_lowercase()).copied());
        if let Some(old) = replaced {
            self.by_id.remove(&old);
        }
        if self.by_id.len() as u64 >= limit {
            return Err(BasaltError::TooManyPreparedStatements(limit));
        }
        self.next_id = self.next_id.wrapping_add(1).max(1);
        while self.by_id.contains_key(&self.next_id) {
            self.next_id = self.next_id.wrapping_add(1).max(1);
        }
        let id = self.next_id;
        self.by_id.insert(id, Arc::new(stmt));
        if let Some(n) = name {
            self.names.insert(n.to_lowercase(), id);
        }
        Ok(id)
    }

    pub fn get(&self, id: u32) -> Option<Arc<PreparedStatement>> {
        self.by_id.get(&id).cloned()
    }

    pub fn id_of(&self, name: &str) -> Option<u32> {
        self.names.get(&name.to_lowercase()).copied()
    }

    /// Removes a statement; returns whether it existed.
    pub fn remove(&mut self, id: u32) -> bool {
        self.names.retain(|_, v| *v != id);
        self.by_id.remove(&id).is_some()
    }

    pub fn clear(&mut self) {
        self.by_id.clear();
        self.names.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stmt(sql: &str) -> PreparedStatement {
        PreparedStatement {
            sql: sql.to_string(),
            placeholders: basalt_sql::placeholder_offsets(sql).unwrap(),
            columns: None,
            point: None,
        }
    }

    #[test]
    fn binds_values_in_order() {
        let s = stmt("SELECT '?', ? FROM t WHERE a = ? /* ? */ AND b = ?");
        assert_eq!(s.param_count(), 3);
        let text = s
            .bind(&[
                ParamValue::Int(1),
                ParamValue::Bytes(b"x'y".to_vec()),
                ParamValue::Null,
            ])
            .unwrap();
        assert_eq!(
            text,
            "SELECT '?', 1 FROM t WHERE a = 'x''y' /* ? */ AND b = NULL"
        );
        let err = s.bind(&[ParamValue::Int(1)]).unwrap_err();
        assert_eq!(err.mysql_code(), 1210);
    }

    #[test]
    fn non_ascii_text_before_placeholders() {
        let s = stmt("SELECT 'grüße',\n  ? + ?");
        let text = s.bind(&[ParamValue::Int(1), ParamValue::Int(2)]).unwrap();
        assert_eq!(text, "SELECT 'grüße',\n  1 + 2");
    }

    #[test]
    fn bounded_and_named() {
        let mut all = PreparedStatements::default();
        let a = all.add(stmt("SELECT 1"), Some("S"), 2).unwrap();
        let b = all.add(stmt("SELECT 2"), None, 2).unwrap();
        assert_ne!(a, b);
        assert_eq!(
            all.add(stmt("SELECT 3"), None, 2).unwrap_err().mysql_code(),
            1461
        );
        // Re-preparing a name replaces its statement.
        let c = all.add(stmt("SELECT 3"), Some("s"), 2).unwrap();
        assert_eq!(all.id_of("s"), Some(c));
        assert!(all.get(a).is_none());
        assert!(all.remove(c));
        assert!(!all.remove(c));
        assert_eq!(all.id_of("s"), None);
    }
}
