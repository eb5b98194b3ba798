//! MySQL's outer aggregates: an aggregate in a subquery whose arguments name only the outer
//! query's columns is the outer query's aggregate (`SELECT a, (SELECT SUM(t1.b) FROM t2 LIMIT 1)
//! FROM t1 GROUP BY a` sums `t1.b` over each group of `t1`, then reads that sum in the
//! subquery), where the outer query may aggregate: its select list, HAVING and ORDER BY.
//!
//! DataFusion plans such an aggregate inside the subquery, over an outer reference, which it
//! can neither decorrelate nor execute. [`OuterAggregates`] (analyzer, first) moves it:
//! - into the outer query's `Aggregate`, under a new name, with its outer references as plain
//!   columns;
//! - in the subquery, the aggregate's column becomes an outer reference to that name; its
//!   `Aggregate` keeps its groups and own aggregates, and disappears when none are left (the
//!   subquery then gives a row per row of its FROM, as MySQL's does);
//! - a select list of an ungrouped query that only reads outer aggregates makes that query
//!   aggregate (one row, as MySQL's `SELECT (SELECT SUM(t1.b) FROM t2 LIMIT 1) FROM t1`).
//!
//! Elsewhere (WHERE, ON, GROUP BY) the outer query cannot aggregate and the aggregate stays
//! the subquery's, over the outer row's value: those subqueries are evaluated per row
//! ([`aggregates_outer_values`] tells `ApplyRefusedSubqueries`). What this rule cannot place
//! the MySQL way (an outer aggregate two subqueries deep, beside ungrouped columns, or behind
//! a projection) is refused with an error instead of an answer MySQL would not give.

use crate::outer_aggregate_calls::MarkedAggregate;
use crate::subquery_exprs::{subquery_of, subquery_of_mut};
use basalt_common::{df_error::to_df, BasaltError};
use datafusion::arrow::datatypes::Field;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::{not_impl_err, Column, DFSchema, DFSchemaRef, Result};
use datafusion::logical_expr::expr_rewriter::NamePreserver;
use datafusion::logical_expr::{Aggregate, Expr, ExprSchemable, LogicalPlan, Projection};
use datafusion::optimizer::AnalyzerRule;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Analyzer rule: aggregates of outer columns moved to the outer query that owns them.
#[derive(Debug, Default)]
pub struct OuterAggregates;

impl AnalyzerRule for OuterAggregates {
    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        let plan = plan.transform_up_with_subqueries(lift_into)?.data;
        // An aggregate of a WHERE that no outer query could take.
        if has_marker(&plan)? {
            return Err(to_df(BasaltError::InvalidGroupFunction));
        }
        Ok(plan)
    }

    fn name(&self) -> &str {
        "outer_aggregates"
    }
}

/// Names of the moved aggregates, unique within any plan.
static NEXT_NAME: AtomicU64 = AtomicU64::new(0);

/// True when `plan` (its nested subqueries included) aggregates an expression that reads an
/// outer reference: such a subquery can only be evaluated per outer row.
pub fn aggregates_outer_values(plan: &LogicalPlan) -> bool {
    plan.exists(|node| {
        if let LogicalPlan::Aggregate(a) = node {
            if a.aggr_expr.iter().any(has_outer_reference) {
                return Ok(true);
            }
        }
        let mut nested = false;
        node.apply_expressions(|e| {
            e.apply(|x| {
                if let Some(s) = subquery_of(x) {
                    nested |= aggregates_outer_values(&s.subquery);
                }
                Ok(TreeNodeRecursion::Continue)
            })
        })?;
        Ok(nested)
    })
    .unwrap_or(true)
}

/// Where, relative to a node holding subqueries, the outer query may aggregate.
enum Place {
    /// Over an `Aggregate` reached through filters, sorts and limits (select list, HAVING):
    /// the aggregated rows are its input's.
    Grouped(DFSchemaRef),
    /// A select list over rows that are not aggregated: it may make its query aggregate.
    Ungrouped(DFSchemaRef),
    /// Nowhere (WHERE, ON, GROUP BY, ..): aggregates stay in their subqueries.
    Nowhere,
}

fn place_of(node: &LogicalPlan) -> Place {
    let aggregated_rows = |mut plan: &LogicalPlan| loop {
        match plan {
            LogicalPlan::Aggregate(a) => return Some(a.input.schema().clone()),
            LogicalPlan::Filter(f) => plan = &f.input,
            LogicalPlan::Sort(s) => plan = &s.input,
            LogicalPlan::Limit(l) => plan = &l.input,
            _ => return None,
        }
    };
    let (input, selects) = match node {
        LogicalPlan::Projection(p) => (&p.input, true),
        LogicalPlan::Filter(f) => (&f.input, false),
        LogicalPlan::Sort(s) => (&s.input, false),
        _ => return Place::Nowhere,
    };
    match aggregated_rows(input) {
        Some(rows) => Place::Grouped(rows),
        None if selects => Place::Ungrouped(input.schema().clone()),
        None => Place::Nowhere,
    }
}

/// Moves the outer aggregates in `node`'s subqueries into `node`'s query.
fn lift_into(node: LogicalPlan) -> Result<Transformed<LogicalPlan>> {
    if let LogicalPlan::Aggregate(a) = &node {
        // MySQL cannot group by an aggregate.
        let rows = a.input.schema();
        for e in &a.group_expr {
            if has_outer_aggregate(e, rows, true)? {
                return Err(to_df(BasaltError::InvalidGroupFunction));
            }
        }
    }
    let place = place_of(&node);
    let input = match &place {
        Place::Grouped(rows) | Place::Ungrouped(rows) => rows.clone(),
        Place::Nowhere => return Ok(Transformed::no(node)),
    };
    if matches!(place, Place::Grouped(_)) {
        check_grouped_references(&node, &input)?;
    }
    if !node
        .expressions()
        .iter()
        .any(|e| has_outer_aggregate(e, &input, false).unwrap_or(false))
    {
        // Deeper ones that would be this query's: not placed (yet).
        if node
            .expressions()
            .iter()
            .any(|e| has_outer_aggregate(e, &input, true).unwrap_or(false))
        {
            return not_impl_err!("an aggregate of outer columns in a nested subquery");
        }
        return Ok(Transformed::no(node));
    }
    if matches!(node, LogicalPlan::Sort(_)) {
        return not_impl_err!("an aggregate of outer columns in a subquery of ORDER BY");
    }
    let mut lifted: Vec<(Expr, Column)> = vec![];
    let rewritten =
        node.map_expressions(|e| e.transform_up(|x| lift_from_subquery(x, &input, &mut lifted)))?;
    let node = rewritten.data;
    let new_input = match place {
        Place::Grouped(_) => with_aggregates(node.inputs()[0].clone(), &lifted)?,
        _ => {
            // Only outer aggregates may be read: the query becomes one group.
            let reads_rows = node.expressions().iter().any(|e| {
                !e.column_refs().is_empty()
                    || e.exists(|x| {
                        Ok(subquery_of(x).is_some_and(|s| {
                            s.outer_ref_columns.iter().any(|o| match o {
                                Expr::OuterReferenceColumn(_, c) => {
                                    !lifted.iter().any(|(_, l)| l == c)
                                }
                                _ => true,
                            })
                        }))
                    })
                    .unwrap_or(true)
            });
            if reads_rows {
                return not_impl_err!(
                    "an aggregate of outer columns in a subquery beside columns of ungrouped rows"
                );
            }
            let aggregates = lifted
                .iter()
                .map(|(e, c)| e.clone().alias(c.name.clone()))
                .collect();
            LogicalPlan::Aggregate(Aggregate::try_new(
                Arc::new(node.inputs()[0].clone()),
                vec![],
                aggregates,
            )?)
        }
    };
    let exprs = node.expressions();
    Ok(Transformed::yes(
        node.with_new_exprs(exprs, vec![new_input])?,
    ))
}

/// Refuses a subquery of a grouped query's select list, HAVING or ORDER BY (`node`) that
/// reads a column of the grouped `rows` outside an aggregate and not grouped: it has no value
/// per group (MySQL's ONLY_FULL_GROUP_BY error; DataFusion would filter the rows before
/// grouping instead).
fn check_grouped_references(node: &LogicalPlan, rows: &DFSchema) -> Result<()> {
    let grouped = node.inputs()[0].schema().clone();
    for e in node.expressions() {
        e.apply(|x| {
            let Some(s) = subquery_of(x) else {
                return Ok(TreeNodeRecursion::Continue);
            };
            let mut ungrouped = None;
            s.subquery.apply_with_subqueries(|inner| {
                if let LogicalPlan::Aggregate(a) = inner {
                    if a.aggr_expr.iter().any(|e| is_outer_aggregate(e, rows)) {
                        // Moved out by this rule: its references are the outer query's.
                        return Ok(TreeNodeRecursion::Continue);
                    }
                }
                inner.apply_expressions(|e| {
                    e.apply(|y| {
                        if is_outer_marker(y, rows) {
                            return Ok(TreeNodeRecursion::Jump);
                        }
                        if let Expr::OuterReferenceColumn(_, c) = y {
                            if rows.has_column(c) && !grouped.has_column(c) {
                                ungrouped.get_or_insert_with(|| c.flat_name());
                            }
                        }
                        Ok(TreeNodeRecursion::Continue)
                    })
                })
            })?;
            match ungrouped {
                Some(column) => Err(to_df(BasaltError::NotInGroupBy(column))),
                None => Ok(TreeNodeRecursion::Jump),
            }
        })?;
    }
    Ok(())
}

/// `plan` (an `Aggregate` under filters, sorts and limits) with `lifted` among its aggregates.
fn with_aggregates(plan: LogicalPlan, lifted: &[(Expr, Column)]) -> Result<LogicalPlan> {
    match plan {
        LogicalPlan::Aggregate(a) => {
            let mut aggregates = a.aggr_expr.clone();
            aggregates.extend(lifted.iter().map(|(e, c)| e.clone().alias(c.name.clone())));
            Ok(LogicalPlan::Aggregate(Aggregate::try_new(
                a.input.clone(),
                a.group_expr.clone(),
                aggregates,
            )?))
        }
        other => {
            let child = with_aggregates(other.inputs()[0].clone(), lifted)?;
            let exprs = other.expressions();
            other.with_new_exprs(exprs, vec![child])
        }
    }
}

fn has_outer_reference(e: &Expr) -> bool {
    e.exists(|x| Ok(matches!(x, Expr::OuterReferenceColumn(..))))
        .unwrap_or(true)
}

/// True when `aggregate` reads only outer references, all of them columns of `outer`: it is
/// the aggregate of the query whose rows `outer` describes.
fn is_outer_aggregate(aggregate: &Expr, outer: &DFSchema) -> bool {
    let mut outer_refs = 0;
    let mut own = false;
    let _ = aggregate.apply(|x| {
        match x {
            Expr::OuterReferenceColumn(_, c) => {
                outer_refs += 1;
                own |= !outer.has_column(c);
            }
            Expr::Column(_) => own = true,
            x if subquery_of(x).is_some() => own = true,
            _ => {}
        }
        Ok(TreeNodeRecursion::Continue)
    });
    outer_refs > 0 && !own
}

/// True when a subquery in `e` aggregates only columns of `outer`: in its own plan, or with
/// `nested`, in the plans of the subqueries within it.
fn has_outer_aggregate(e: &Expr, outer: &DFSchema, nested: bool) -> Result<bool> {
    e.exists(|x| {
        let Some(s) = subquery_of(x) else {
            return Ok(false);
        };
        s.subquery.exists(|node| {
            if let LogicalPlan::Aggregate(a) = node {
                if a.aggr_expr.iter().any(|e| is_outer_aggregate(e, outer)) {
                    return Ok(true);
                }
            }
            if has_outer_marker(node, outer)? {
                return Ok(true);
            }
            if !nested {
                return Ok(false);
            }
            let mut deeper = false;
            node.apply_expressions(|e| {
                e.apply(|x| {
                    if subquery_of(x).is_some() {
                        deeper |= has_outer_aggregate(x, outer, true)?;
                    }
                    Ok(TreeNodeRecursion::Continue)
                })
            })?;
            Ok(deeper)
        })
    })
}

/// In the subquery `expr` stands for (when it does), takes the aggregates of `outer`'s columns
/// out of its plan into `lifted`.
fn lift_from_subquery(
    mut expr: Expr,
    outer: &DFSchema,
    lifted: &mut Vec<(Expr, Column)>,
) -> Result<Transformed<Expr>> {
    let Some(subquery) = subquery_of_mut(&mut expr) else {
        return Ok(Transformed::no(expr));
    };
    let plan = Arc::unwrap_or_clone(subquery.subquery.clone());
    let rewritten = plan.transform_up(|node| match node {
        LogicalPlan::Aggregate(a) if a.aggr_expr.iter().any(|e| is_outer_aggregate(e, outer)) => {
            split_aggregate(a, outer, lifted).map(Transformed::yes)
        }
        other if has_outer_marker(&other, outer)? => lift_markers(other, outer, lifted),
        other => Ok(Transformed::no(other)),
    })?;
    if !rewritten.transformed {
        return Ok(Transformed::no(expr));
    }
    let plan = rewritten.data;
    subquery.outer_ref_columns = plan.all_out_ref_exprs();
    subquery.subquery = Arc::new(plan);
    Ok(Transformed::yes(expr))
}

/// The aggregate `a` without its aggregates of `outer`'s columns (moved to `lifted`), under a
/// projection that gives its columns as before: those aggregates read from the outer row.
fn split_aggregate(
    a: Aggregate,
    outer: &DFSchema,
    lifted: &mut Vec<(Expr, Column)>,
) -> Result<LogicalPlan> {
    let group_count = a.group_expr.len();
    let mut kept = vec![];
    // Per aggregate column: None when kept, the outer reference when moved.
    let mut moved: Vec<Option<Expr>> = vec![];
    for (i, e) in a.aggr_expr.iter().enumerate() {
        if !is_outer_aggregate(e, outer) {
            kept.push(e.clone());
            moved.push(None);
            continue;
        }
        let unaliased = match e {
            Expr::Alias(alias) => alias.expr.as_ref().clone(),
            other => other.clone(),
        };
        let own = unaliased
            .transform(|x| match x {
                Expr::OuterReferenceColumn(_, c) => Ok(Transformed::yes(Expr::Column(c))),
                other => Ok(Transformed::no(other)),
            })?
            .data;
        let column = lifted_column(own, lifted);
        let field = a.schema.field(group_count + i);
        let typed = Field::new(&column.name, field.data_type().clone(), true);
        moved.push(Some(Expr::OuterReferenceColumn(Arc::new(typed), column)));
    }
    let input = if a.group_expr.is_empty() && kept.is_empty() {
        // Nothing of its own left to aggregate: a row per row of its input.
        a.input.clone()
    } else {
        Arc::new(LogicalPlan::Aggregate(Aggregate::try_new(
            a.input.clone(),
            a.group_expr.clone(),
            kept,
        )?))
    };
    let below = input.schema().clone();
    let mut kept_index = group_count;
    let mut exprs = vec![];
    for (i, (qualifier, field)) in a.schema.iter().enumerate() {
        let name = Column::new(qualifier.cloned(), field.name());
        let value = if i < group_count {
            Expr::Column(Column::from(below.qualified_field(i)))
        } else if let Some(outer_ref) = &moved[i - group_count] {
            outer_ref.clone()
        } else {
            let column = Expr::Column(Column::from(below.qualified_field(kept_index)));
            kept_index += 1;
            column
        };
        exprs.push(value.alias_qualified(name.relation, name.name));
    }
    Ok(LogicalPlan::Projection(Projection::try_new(exprs, input)?))
}

/// The name the outer query gives the aggregate `own` (one name per distinct aggregate).
fn lifted_column(own: Expr, lifted: &mut Vec<(Expr, Column)>) -> Column {
    if let Some((_, c)) = lifted.iter().find(|(e, _)| *e == own) {
        return c.clone();
    }
    let name = format!(
        "__outer_aggregate_{}",
        NEXT_NAME.fetch_add(1, Ordering::Relaxed)
    );
    lifted.push((own, Column::from_name(name.clone())));
    Column::from_name(name)
}

/// True when `e` is a marked aggregate ([`MarkedAggregate`]) that `outer`'s query computes:
/// its arguments read no column of their own query, and name one of `outer`'s columns or none
/// at all (`COUNT(*)`, aggregated by the nearest query that may).
fn is_outer_marker(e: &Expr, outer: &DFSchema) -> bool {
    let Some(marked) = MarkedAggregate::of(e) else {
        return false;
    };
    let (mut refs, mut outer_refs, mut own) = (0, 0, false);
    for arg in &marked.args {
        let _ = arg.apply(|x| {
            match x {
                Expr::OuterReferenceColumn(_, c) => {
                    refs += 1;
                    outer_refs += usize::from(outer.has_column(c));
                }
                Expr::Column(_) => own = true,
                x if subquery_of(x).is_some() => own = true,
                _ => {}
            }
            Ok(TreeNodeRecursion::Continue)
        });
    }
    !own && (refs == 0 || outer_refs > 0)
}

/// True when one of `node`'s own expressions holds a marked aggregate of `outer`'s query.
fn has_outer_marker(node: &LogicalPlan, outer: &DFSchema) -> Result<bool> {
    let mut found = false;
    node.apply_expressions(|e| {
        found |= e.exists(|x| Ok(is_outer_marker(x, outer)))?;
        Ok(TreeNodeRecursion::Continue)
    })?;
    Ok(found)
}

/// True when `plan` or a subquery in it still holds a marked aggregate.
fn has_marker(plan: &LogicalPlan) -> Result<bool> {
    let mut found = false;
    plan.apply_with_subqueries(|node| {
        node.apply_expressions(|e| {
            found |= e.exists(|x| Ok(MarkedAggregate::of(x).is_some()))?;
            Ok(TreeNodeRecursion::Continue)
        })?;
        Ok(if found {
            TreeNodeRecursion::Stop
        } else {
            TreeNodeRecursion::Continue
        })
    })?;
    Ok(found)
}

/// `node` (of a subquery) with its marked aggregates of `outer`'s query moved to `lifted`,
/// read as outer references.
fn lift_markers(
    node: LogicalPlan,
    outer: &DFSchema,
    lifted: &mut Vec<(Expr, Column)>,
) -> Result<Transformed<LogicalPlan>> {
    let Some(input) = node.inputs().first().map(|i| i.schema().clone()) else {
        return Ok(Transformed::no(node));
    };
    let preserver = NamePreserver::new(&node);
    node.map_expressions(|e| {
        let saved = preserver.save(&e);
        let rewritten = e.transform_up(|x| {
            if !is_outer_marker(&x, outer) {
                return Ok(Transformed::no(x));
            }
            let Some(marked) = MarkedAggregate::of(&x) else {
                return Ok(Transformed::no(x));
            };
            let data_type = x.get_type(&input)?;
            let own = marked
                .call()
                .transform(|y| match y {
                    Expr::OuterReferenceColumn(_, c) if outer.has_column(&c) => {
                        Ok(Transformed::yes(Expr::Column(c)))
                    }
                    other => Ok(Transformed::no(other)),
                })?
                .data;
            let column = lifted_column(own, lifted);
            let field = Field::new(&column.name, data_type, true);
            Ok(Transformed::yes(Expr::OuterReferenceColumn(
                Arc::new(field),
                column,
            )))
        })?;
        Ok(rewritten.update_data(|e| saved.restore(e)))
    })
}
