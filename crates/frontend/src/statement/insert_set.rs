//! MySQL's `INSERT INTO t SET c = expr, ..` (also with REPLACE and ON DUPLICATE KEY UPDATE):
//! one row naming its columns beside their values, which is `INSERT INTO t (c, ..) VALUES
//! (expr, ..)`. DataFusion plans only the VALUES form, so the statement becomes that before
//! anything else reads it (DEFAULT among the values is then filled like any VALUES row's).

use basalt_common::{BasaltError, Result};
use basalt_sql::ast::{self, AssignmentTarget};

/// Rewrites `insert`'s SET list, if it has one, as a column list and one VALUES row; MySQL's
/// `INSERT .. VALUE (..)` is `VALUES (..)`.
pub(super) fn as_values(insert: &mut ast::Insert) -> Result<()> {
    if let Some(ast::SetExpr::Values(values)) = insert.source.as_mut().map(|s| s.body.as_mut()) {
        values.value_keyword = false;
    }
    if insert.assignments.is_empty() {
        return Ok(());
    }
    if insert.source.is_some() || !insert.columns.is_empty() {
        return Err(BasaltError::NotSupported(
            "INSERT with both a SET list and a column list or source".into(),
        ));
    }
    let mut columns = Vec::with_capacity(insert.assignments.len());
    let mut row = Vec::with_capacity(insert.assignments.len());
    for assignment in std::mem::take(&mut insert.assignments) {
        let AssignmentTarget::ColumnName(name) = assignment.target else {
            return Err(BasaltError::NotSupported(
                "INSERT .. SET of a column tuple".into(),
            ));
        };
        columns.push(name);
        row.push(assignment.value);
    }
    insert.columns = columns;
    insert.source = Some(Box::new(super::insert_defaults::values_query(vec![row])));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn insert(sql: &str) -> ast::Insert {
        let Ok(basalt_sql::Statement::Standard(stmt)) = basalt_sql::parse_one(sql) else {
            panic!("not parsed: {sql}");
        };
        let ast::Statement::Insert(insert) = *stmt else {
            panic!("not an INSERT: {sql}");
        };
        insert
    }

    #[test]
    fn set_list_becomes_one_values_row() {
        let mut i = insert("INSERT INTO d.t SET a = 1, `B` = 'x' ON DUPLICATE KEY UPDATE a = 2");
        as_values(&mut i).unwrap();
        assert_eq!(
            ast::Statement::Insert(i).to_string(),
            "INSERT INTO d.t (a, `B`) VALUES (1, 'x') ON DUPLICATE KEY UPDATE a = 2"
        );
    }

    #[test]
    fn replace_set_keeps_replace() {
        let mut i = insert("REPLACE INTO t SET k = 1 + 2");
        as_values(&mut i).unwrap();
        assert!(i.replace_into);
        assert_eq!(
            ast::Statement::Insert(i).to_string(),
            "REPLACE INTO t (k) VALUES (1 + 2)"
        );
    }

    #[test]
    fn values_form_is_left_alone() {
        let mut i = insert("INSERT INTO t (a) VALUES (1)");
        as_values(&mut i).unwrap();
        assert_eq!(
            ast::Statement::Insert(i).to_string(),
            "INSERT INTO t (a) VALUES (1)"
        );
    }
}
