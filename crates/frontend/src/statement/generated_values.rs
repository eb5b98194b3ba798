//! MySQL's rule for generated columns in INSERT and UPDATE: their values are computed (by the
//! write, see `basalt_functions::generated_columns`), so a statement may give one only
//! `DEFAULT`; any other value is error 3105.

use crate::engine::split_name;
use crate::session::Session;
use crate::statement::ddl::database_of;
use basalt_catalog::TableMeta;
use basalt_common::{BasaltError, Result};
use basalt_sql::ast::{self, Expr};

/// `DEFAULT` as a value (the parser reads the keyword as a bare identifier).
fn is_default(e: &Expr) -> bool {
    matches!(e, Expr::Identifier(i) if i.quote_style.is_none() && i.value.eq_ignore_ascii_case("DEFAULT"))
}

fn refused(table: &TableMeta, column: usize) -> BasaltError {
    BasaltError::GeneratedColumnValue {
        column: table.columns[column].shown_name().to_string(),
        table: table.name.clone(),
    }
}

impl crate::engine::QueryEngine {
    /// 3105 when `insert` gives a generated column a value other than DEFAULT (an unknown
    /// table is left for the planner to report).
    pub(super) fn check_generated_values(
        &self,
        session: &Session,
        insert: &ast::Insert,
    ) -> Result<()> {
        let ast::TableObject::TableName(name) = &insert.table else {
            return Ok(());
        };
        let (db, table) = split_name(name);
        let Ok(table) =
            database_of(session, &db).and_then(|db| self.services.catalog.table(&db, &table))
        else {
            return Ok(());
        };
        if table.generated_columns().is_empty() {
            return Ok(());
        }
        let targets = super::insert_values::insert_targets(&table, insert);
        let generated = |t: &Option<usize>| t.filter(|&i| table.columns[i].generated.is_some());
        let Some(source) = insert.source.as_deref() else {
            return Ok(());
        };
        match source.body.as_ref() {
            ast::SetExpr::Values(values) => {
                for row in &values.rows {
                    for (value, target) in row.content.iter().zip(&targets) {
                        if let Some(i) = generated(target) {
                            if !is_default(value) {
                                return Err(refused(&table, i));
                            }
                        }
                    }
                }
                Ok(())
            }
            // A query's rows give every column they are written to.
            _ => match targets.iter().find_map(generated) {
                Some(i) => Err(refused(&table, i)),
                None => Ok(()),
            },
        }
    }
}

/// 3105 when `assignments` (an UPDATE's SET) give a generated column of `table` a value
/// other than DEFAULT.
pub(super) fn check_assignments(table: &TableMeta, assignments: &[ast::Assignment]) -> Result<()> {
    for a in assignments {
        let ast::AssignmentTarget::ColumnName(name) = &a.target else {
            continue;
        };
        let Some(i) = name
            .0
            .last()
            .and_then(|p| p.as_ident())
            .and_then(|i| table.column_index(&i.value))
        else {
            continue;
        };
        if table.columns[i].generated.is_some() && !is_default(&a.value) {
            return Err(refused(table, i));
        }
    }
    Ok(())
}
