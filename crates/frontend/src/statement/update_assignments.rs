//! The new values of a single-table UPDATE's columns, as MySQL assigns them: left to right,
//! each assignment seeing the values the ones before it gave. `SET x = x + 1, y = x` sets `y`
//! to the new `x`, and `SET x = 3, x = 4` leaves 4 (it was refused). Basalt evaluates every new
//! value over the old row, so a reference to a column assigned earlier is replaced by that
//! column's new value expression, converted as the column stores it (`SET price = price * 1.1,
//! total = price * qty` reads the price rounded to its DECIMAL digits), but not inside
//! subqueries, whose columns are their own tables'. (A correlated subquery reads the old row,
//! where MySQL's reads the new one.) A value with RAND(), UUID() or SYSDATE() cannot be repeated
//! so: a statement reading a column assigned one is refused.

use basalt_catalog::TableMeta;
use basalt_common::{BasaltError, Result, SqlType};
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
        let mut earlier = EarlierValues {
            table,
            qualifier: qualifier.as_deref(),
            values: &values,
            subquery_depth: 0,
            repeats_volatile: false,
        };
        let _ = VisitMut::visit(&mut value, &mut earlier);
        // `SET a = RAND(), b = a`: b must be a's value, not another call's.
        if earlier.repeats_volatile {
            return Err(BasaltError::NotSupported(
                "UPDATE assigning a column from one assigned a random value (RAND, UUID, SYSDATE) earlier in the statement".into(),
            ));
        }
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
    /// Whether a value repeated here calls a function that gives a new value each call.
    repeats_volatile: bool,
}

impl EarlierValues<'_> {
    /// The new value of the target's column `name`, if an earlier assignment gave one, as the
    /// column holds it (a number rounded to an INT or DECIMAL column's digits, text for a
    /// string column).
    fn earlier(&self, name: &Ident) -> Option<Expr> {
        let index = self.table.column_index(&name.value)?;
        let value = self.values[index].clone()?;
        Some(stored_as(value, &self.table.columns[index].ty))
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
            self.repeats_volatile |= is_volatile(&value);
            *expr = Expr::Nested(Box::new(value));
        }
        ControlFlow::Continue(())
    }
}

/// `value` converted as a column of type `ty` stores it, where the conversion changes what a
/// later assignment reads (MySQL's later assignments see the stored value).
fn stored_as(value: Expr, ty: &SqlType) -> Expr {
    use crate::mysql_compat::cast;
    use basalt_sql::ast::{DataType, ExactNumberInfo};
    match ty {
        t if t.is_integer() && t.is_unsigned() => cast(value, DataType::Unsigned),
        t if t.is_integer() => cast(value, DataType::Signed),
        SqlType::Decimal { precision, scale } => cast(
            value,
            DataType::Decimal(ExactNumberInfo::PrecisionAndScale(
                *precision as u64,
                *scale as i64,
            )),
        ),
        t if t.is_string() => cast(value, DataType::Char(None)),
        _ => value,
    }
}

/// Whether `e` calls a function whose every call gives a new value.
fn is_volatile(e: &Expr) -> bool {
    let mut found = false;
    let _ = basalt_sql::ast::visit_expressions(e, |e| {
        if let Expr::Function(f) = e {
            let name = f.name.to_string().to_ascii_lowercase();
            found |= matches!(
                name.as_str(),
                "rand" | "random" | "uuid" | "uuid_short" | "uuid_numeric" | "sysdate"
            );
        }
        ControlFlow::<()>::Continue(())
    });
    found
}
