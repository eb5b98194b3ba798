//! The new values of a single-table UPDATE's columns, as MySQL assigns them: left to right,
//! each assignment seeing the values the ones before it gave. `SET x = x + 1, y = x` sets `y`
//! to the new `x`, and `SET x = 3, x = 4` leaves 4 (it was refused). Basalt evaluates every new
//! value over the old row, so a reference to a column assigned earlier is replaced by that
//! column's new value expression (not inside subqueries, whose columns are their own tables').

use basalt_catalog::TableMeta;
use basalt_common::{BasaltError, Result};
use basalt_sql::ast::{
    self, AssignmentTarget, Expr, Ident, Query, TableFactor, VisitMut, VisitorMut,
};
use std::ops::ControlFlow;

/// The longest new value, as SQL text, an assignment may expand to.
const MAX_VALUE_TEXT: usize = 1 << 20;

/// Each column's new value (`None`: not assigned), in the table's column order.
pub(crate) fn assigned_values(
    table: &TableMeta,
    update: &ast::Update,
) -> Result<Vec<Option<Expr>>> {
    let qualifier = target_qualifier(&update.table.relation);
    let mut values: Vec<Option<Expr>> = vec![None; table.columns.len()];
    for assignment in &update.assignments {
        let AssignmentTarget::ColumnName(name) = &assignment.target else {
            return Err(BasaltError::NotSupported("UPDATE of a column tuple".into()));
        };
        let column = name
            .0
            .last()
            .and_then(|p| p.as_ident())
            .map(|i| i.value.clone())
            .unwrap_or_default();
        let index = table
            .column_index(&column)
            .ok_or_else(|| BasaltError::UnknownColumn {
                column: column.clone(),
                context: "field list".into(),
            })?;
        let mut value = assignment.value.clone();
        crate::bit_literals::for_column(&table.columns[index].ty, &mut value);
        let _ = VisitMut::visit(
            &mut value,
            &mut EarlierValues {
                table,
                qualifier: qualifier.as_deref(),
                values: &values,
                subquery_depth: 0,
            },
        );
        // Each assignment may repeat the ones before it (`SET a = a + a, a = a + a, ..`): a
        // statement whose values outgrow any real one is refused, not expanded without end.
        if value.to_string().len() > MAX_VALUE_TEXT {
            return Err(BasaltError::NotSupported(
                "UPDATE whose assignments, each in terms of the ones before it, expand past 1 MB of SQL".into(),
            ));
        }
        values[index] = Some(value);
    }
    Ok(values)
}

/// The name the statement's columns may be qualified with: the table's alias, else its name.
fn target_qualifier(relation: &TableFactor) -> Option<String> {
    match relation {
        TableFactor::Table { alias: Some(a), .. } => Some(a.name.value.clone()),
        TableFactor::Table { name, .. } => name
            .0
            .last()
            .and_then(|p| p.as_ident())
            .map(|i| i.value.clone()),
        _ => None,
    }
}

/// Replaces references to columns already assigned by their new values.
struct EarlierValues<'a> {
    table: &'a TableMeta,
    qualifier: Option<&'a str>,
    values: &'a [Option<Expr>],
    subquery_depth: usize,
}

impl EarlierValues<'_> {
    /// The new value of the target's column `name`, if an earlier assignment gave one.
    fn earlier(&self, name: &Ident) -> Option<&Expr> {
        let index = self.table.column_index(&name.value)?;
        self.values[index].as_ref()
    }

    fn names_target(&self, qualifier: &Ident) -> bool {
        self.qualifier
            .is_some_and(|q| q.eq_ignore_ascii_case(&qualifier.value))
    }
}

impl VisitorMut for EarlierValues<'_> {
    type Break = ();

    fn pre_visit_query(&mut self, _query: &mut Query) -> ControlFlow<()> {
        self.subquery_depth += 1;
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, _query: &mut Query) -> ControlFlow<()> {
        self.subquery_depth -= 1;
        ControlFlow::Continue(())
    }

    fn post_visit_expr(&mut self, expr: &mut Expr) -> ControlFlow<()> {
        if self.subquery_depth > 0 {
            return ControlFlow::Continue(());
        }
        let replacement = match &*expr {
            Expr::Identifier(name) => self.earlier(name),
            Expr::CompoundIdentifier(parts) if parts.len() == 2 && self.names_target(&parts[0]) => {
                self.earlier(&parts[1])
            }
            _ => None,
        };
        if let Some(value) = replacement {
            *expr = Expr::Nested(Box::new(value.clone()));
        }
        ControlFlow::Continue(())
    }
}
