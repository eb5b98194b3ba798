//! Joins that merge columns by name (`USING (c)`, `NATURAL`) as MySQL shows them. The merged
//! column `c` is one column with the value of the side that is never NULL: the left table's in
//! a left (or inner) join, the right table's in a right join, the first non-NULL in a full
//! join. DataFusion keeps one of the two `c` columns by the sort order of the table names, so
//! `SELECT * FROM orders LEFT JOIN customers USING (id)` showed `customers.id`, NULL on every
//! order without a customer.
//! - `A RIGHT JOIN B USING (c)` (and `NATURAL RIGHT JOIN`) becomes `B LEFT JOIN A USING (c)`:
//!   an unqualified `c` then reads B's, as MySQL's does.
//! - `SELECT *` over one USING join of two named tables is spelled out in MySQL's order: the
//!   merged columns (from the preserved side), then the rest of the left table's columns, then
//!   the rest of the right table's (`A.c, A.* EXCLUDE (c), B.* EXCLUDE (c)`).
//!
//! A join ON a condition names its columns and is left as written.

use basalt_sql::ast::{
    ExcludeSelectItem, Expr, Ident, Join, JoinConstraint, JoinOperator, ObjectName, ObjectNamePart,
    Select, SelectItem, SelectItemQualifiedWildcardKind, Statement, TableFactor, TableWithJoins,
    VisitMut, VisitorMut, WildcardAdditionalOptions,
};
use std::ops::ControlFlow;

/// Rewrites every USING or NATURAL right join in `stmt`, and `SELECT *` over a USING join.
pub fn rewrite(stmt: &mut Statement) {
    let _ = stmt.visit(&mut SwapRightJoins);
}

struct SwapRightJoins;

impl VisitorMut for SwapRightJoins {
    type Break = ();

    fn pre_visit_select(&mut self, select: &mut Select) -> ControlFlow<()> {
        select.from.iter_mut().for_each(swap_in);
        spell_out_wildcard(select);
        ControlFlow::Continue(())
    }

    fn pre_visit_table_factor(&mut self, factor: &mut TableFactor) -> ControlFlow<()> {
        if let TableFactor::NestedJoin {
            table_with_joins, ..
        } = factor
        {
            swap_in(table_with_joins);
        }
        ControlFlow::Continue(())
    }
}

/// The constraint of a right join that merges columns by name, if `operator` is one.
fn merging_right_join(operator: &JoinOperator) -> Option<JoinConstraint> {
    match operator {
        JoinOperator::Right(c) | JoinOperator::RightOuter(c)
            if matches!(c, JoinConstraint::Using(_) | JoinConstraint::Natural) =>
        {
            Some(c.clone())
        }
        _ => None,
    }
}

/// Swaps the sides of each merging right join of one FROM item, left to right: everything
/// joined before it becomes the (nested) right side of a left join.
fn swap_in(from: &mut TableWithJoins) {
    while let Some(at) = from
        .joins
        .iter()
        .position(|j| merging_right_join(&j.join_operator).is_some())
    {
        let mut rest = from.joins.split_off(at);
        let right_join = rest.remove(0);
        let Some(constraint) = merging_right_join(&right_join.join_operator) else {
            return;
        };
        let before = std::mem::take(&mut from.joins);
        let left = if before.is_empty() {
            from.relation.clone()
        } else {
            TableFactor::NestedJoin {
                table_with_joins: Box::new(TableWithJoins {
                    relation: from.relation.clone(),
                    joins: before,
                }),
                alias: None,
            }
        };
        from.relation = right_join.relation;
        from.joins = std::iter::once(Join {
            relation: left,
            global: right_join.global,
            join_operator: JoinOperator::LeftOuter(constraint),
        })
        .chain(rest)
        .collect();
    }
}

/// `SELECT *` over `A [LEFT | FULL] JOIN B USING (c, ..)` as MySQL lists it.
fn spell_out_wildcard(select: &mut Select) {
    let [TableWithJoins { relation, joins }] = select.from.as_slice() else {
        return;
    };
    let [join] = joins.as_slice() else {
        return;
    };
    let (JoinOperator::Join(JoinConstraint::Using(names))
    | JoinOperator::Inner(JoinConstraint::Using(names))
    | JoinOperator::Left(JoinConstraint::Using(names))
    | JoinOperator::LeftOuter(JoinConstraint::Using(names))
    | JoinOperator::FullOuter(JoinConstraint::Using(names))) = &join.join_operator
    else {
        return;
    };
    let full = matches!(join.join_operator, JoinOperator::FullOuter(_));
    let (Some(left), Some(right)) = (qualifier(relation), qualifier(&join.relation)) else {
        return;
    };
    let Some(merged) = names
        .iter()
        .map(|n| n.0.last().and_then(ObjectNamePart::as_ident).cloned())
        .collect::<Option<Vec<Ident>>>()
    else {
        return;
    };
    if !select
        .projection
        .iter()
        .any(|item| matches!(item, SelectItem::Wildcard(options) if is_plain(options)))
    {
        return;
    }
    let column = |table: &ObjectName, name: &Ident| {
        let mut parts = table.0.clone();
        parts.push(ObjectNamePart::Identifier(name.clone()));
        Expr::CompoundIdentifier(
            parts
                .into_iter()
                .filter_map(|p| p.as_ident().cloned())
                .collect(),
        )
    };
    let rest_of = |table: &ObjectName| {
        SelectItem::QualifiedWildcard(
            SelectItemQualifiedWildcardKind::ObjectName(table.clone()),
            WildcardAdditionalOptions {
                opt_exclude: Some(ExcludeSelectItem::Multiple(
                    merged
                        .iter()
                        .map(|n| ObjectName::from(vec![n.clone()]))
                        .collect(),
                )),
                ..Default::default()
            },
        )
    };
    let mut spelled: Vec<SelectItem> = merged
        .iter()
        .map(|name| {
            if full {
                SelectItem::ExprWithAlias {
                    expr: crate::mysql_compat::call(
                        "coalesce",
                        vec![column(&left, name), column(&right, name)],
                    ),
                    alias: name.clone(),
                }
            } else {
                SelectItem::UnnamedExpr(column(&left, name))
            }
        })
        .collect();
    spelled.push(rest_of(&left));
    spelled.push(rest_of(&right));
    select.projection = std::mem::take(&mut select.projection)
        .into_iter()
        .flat_map(|item| match item {
            SelectItem::Wildcard(options) if is_plain(&options) => spelled.clone(),
            other => vec![other],
        })
        .collect();
}

/// A bare `*`, without EXCLUDE, REPLACE or the like.
fn is_plain(options: &WildcardAdditionalOptions) -> bool {
    options.opt_ilike.is_none()
        && options.opt_exclude.is_none()
        && options.opt_except.is_none()
        && options.opt_replace.is_none()
        && options.opt_rename.is_none()
        && options.opt_alias.is_none()
}

/// The name a table's columns are qualified by: its alias, else its name as written.
fn qualifier(factor: &TableFactor) -> Option<ObjectName> {
    match factor {
        TableFactor::Table {
            alias: Some(alias), ..
        }
        | TableFactor::Derived {
            alias: Some(alias), ..
        } => Some(ObjectName::from(vec![alias.name.clone()])),
        TableFactor::Table {
            name, alias: None, ..
        } => Some(name.clone()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rewritten(sql: &str) -> String {
        let mut stmt = basalt_sql::parse_one(sql).unwrap();
        let basalt_sql::Statement::Standard(inner) = &mut stmt else {
            panic!("not a query: {sql}");
        };
        rewrite(inner);
        inner.to_string()
    }

    #[test]
    fn swaps_using_and_natural_right_joins() {
        assert_eq!(
            rewritten("SELECT a.x FROM a RIGHT JOIN b USING (k)"),
            "SELECT a.x FROM b LEFT OUTER JOIN a USING(k)"
        );
        assert_eq!(
            rewritten(
                "SELECT * FROM x JOIN a ON x.i = a.i NATURAL RIGHT JOIN b JOIN c ON c.k = b.k"
            ),
            "SELECT * FROM b NATURAL LEFT OUTER JOIN (x JOIN a ON x.i = a.i) JOIN c ON c.k = b.k"
        );
        assert_eq!(
            rewritten("SELECT * FROM a RIGHT JOIN b ON a.k = b.k"),
            "SELECT * FROM a RIGHT JOIN b ON a.k = b.k"
        );
    }

    #[test]
    fn spells_out_star_over_a_using_join() {
        assert_eq!(
            rewritten("SELECT * FROM o LEFT JOIN c AS cu USING (id, k)"),
            "SELECT o.id, o.k, o.* EXCLUDE (id, k), cu.* EXCLUDE (id, k) FROM o LEFT JOIN c AS cu USING(id, k)"
        );
        assert_eq!(
            rewritten("SELECT * FROM a RIGHT JOIN db.b USING (k)"),
            "SELECT db.b.k, db.b.* EXCLUDE (k), a.* EXCLUDE (k) FROM db.b LEFT OUTER JOIN a USING(k)"
        );
        assert_eq!(
            rewritten("SELECT * FROM a FULL JOIN b USING (k)"),
            "SELECT coalesce(a.k, b.k) AS k, a.* EXCLUDE (k), b.* EXCLUDE (k) FROM a FULL JOIN b USING(k)"
        );
    }
}
