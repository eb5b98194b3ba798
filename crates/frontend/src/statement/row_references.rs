//! Column names in an INSERT's VALUES row (and its SET list, which becomes one): MySQL reads
//! a column of the table being written as the value this row gives it, when an earlier value
//! of the row (left to right) assigns it, else as the column's default
//! (`INSERT INTO t (a, b) VALUES (15, a * 2)`, `INSERT INTO t SET a = 1, b = a + 1`).
//! DataFusion plans VALUES without columns in scope, so each such name is replaced by that
//! value or default before planning. Names inside a subquery are the subquery's own
//! (`VALUES ((SELECT MAX(a) FROM t))`) and stay as they are.

use basalt_catalog::{ColumnMeta, TableMeta};
use basalt_common::SqlType;
use basalt_sql::ast::{self, Expr, VisitMut, VisitorMut};
use std::ops::ControlFlow;

/// Replaces the table's column names in `row` (its values for `targets`, in order; `None`
/// for a target that is no column) by what they stand for; `default_of` gives a column's
/// default.
pub(super) fn resolve(
    table: &TableMeta,
    targets: &[Option<&ColumnMeta>],
    row: &mut [Expr],
    default_of: &dyn Fn(&ColumnMeta) -> Expr,
) {
    let mut assigned: Vec<Option<Expr>> = vec![None; table.columns.len()];
    for (value, target) in row.iter_mut().zip(targets) {
        let mut names = RowNames {
            table,
            assigned: &assigned,
            default_of,
            depth: 0,
        };
        let _ = value.visit(&mut names);
        if let Some(index) = target.and_then(|c| table.column_index(&c.name)) {
            assigned[index] = Some(stored(value.clone(), &table.columns[index]));
        }
    }
}

/// `value` as the column holds it, where its type class differs from what the expression may
/// give: an integer column holds `'5' + 1` as 6 (not 6.0), a decimal one at its scale.
fn stored(value: Expr, column: &ColumnMeta) -> Expr {
    let data_type = match &column.ty {
        ty if ty.is_integer() => ast::DataType::Signed,
        SqlType::Decimal { precision, scale } => ast::DataType::Decimal(
            ast::ExactNumberInfo::PrecisionAndScale(u64::from(*precision), i64::from(*scale)),
        ),
        _ => return value,
    };
    Expr::Cast {
        kind: ast::CastKind::Cast,
        expr: Box::new(value),
        data_type,
        array: false,
        format: None,
    }
}

/// The visitor replacing column names outside subqueries.
struct RowNames<'a> {
    table: &'a TableMeta,
    assigned: &'a [Option<Expr>],
    default_of: &'a dyn Fn(&ColumnMeta) -> Expr,
    /// How many queries (subqueries) the visit is inside.
    depth: usize,
}

impl RowNames<'_> {
    /// The column a name in the row refers to (`a`; a qualified `t.a` is left to the planner).
    fn column(&self, e: &Expr) -> Option<usize> {
        match e {
            Expr::Identifier(i) => self.table.column_index(&i.value),
            _ => None,
        }
    }
}

impl VisitorMut for RowNames<'_> {
    type Break = ();

    fn pre_visit_query(&mut self, _query: &mut ast::Query) -> ControlFlow<()> {
        self.depth += 1;
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, _query: &mut ast::Query) -> ControlFlow<()> {
        self.depth -= 1;
        ControlFlow::Continue(())
    }

    fn post_visit_expr(&mut self, e: &mut Expr) -> ControlFlow<()> {
        if self.depth > 0 {
            return ControlFlow::Continue(());
        }
        if let Some(index) = self.column(e) {
            *e = match &self.assigned[index] {
                Some(value) => Expr::Nested(Box::new(value.clone())),
                None => (self.default_of)(&self.table.columns[index]),
            };
        }
        ControlFlow::Continue(())
    }
}
