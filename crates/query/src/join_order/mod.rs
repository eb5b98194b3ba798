//! [`ReorderJoins`]: join order from estimated cardinalities. DataFusion joins tables in the
//! order the query names them and only swaps the two inputs of each join; a query that names
//! two large tables first (TPC-DS Q72: catalog_sales, then inventory, joined on the item alone)
//! builds an intermediate result hundreds of times larger than needed.
//!
//! The rule takes each maximal tree of inner joins (through the column-only projections and
//! filters between them), with every join condition and filter in it as one pool of
//! conjuncts, and joins the inputs again greedily (greedy operator ordering): at each step the
//! two connected parts whose join is estimated smallest, the smaller of them as the build
//! (left) side, each conjunct applied at the first join that sees all its columns. A
//! projection on top restores the original column order. Estimates are in `estimate.rs`.
//!
//! Only inner joins move; outer, semi and anti joins stay where they are (their inputs are
//! reordered inside). `SET disable_join_reorder = 1` (Doris's variable) turns the rule off.
//! Upstream DataFusion has no such rule yet; this one is Basalt-side.

mod estimate;

use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{Column, DFSchema, Result};
use datafusion::logical_expr::utils::{conjunction, split_conjunction_owned};
use datafusion::logical_expr::{
    BinaryExpr, Expr, Filter, Join, JoinConstraint, JoinType, LogicalPlan, Operator, Projection,
};
use datafusion::optimizer::{ApplyOrder, OptimizerConfig, OptimizerRule};
use estimate::{estimate, keys_selectivity, Estimate};
use std::collections::HashSet;
use std::sync::Arc;

/// Inputs beyond which a join tree is left as written (the greedy search is quadratic per
/// step, and leaf sets are bit masks).
const MAX_INPUTS: usize = 32;
/// Selectivity assumed for each non-equality condition between two parts.
const JOIN_FILTER: f64 = 1.0 / 3.0;

/// The optimizer rule; see the module documentation.
#[derive(Debug, Default)]
pub struct ReorderJoins;

impl OptimizerRule for ReorderJoins {
    fn name(&self) -> &str {
        "basalt_reorder_joins"
    }

    fn apply_order(&self) -> Option<ApplyOrder> {
        None
    }

    fn supports_rewrite(&self) -> bool {
        true
    }

    fn rewrite(
        &self,
        plan: LogicalPlan,
        config: &dyn OptimizerConfig,
    ) -> Result<Transformed<LogicalPlan>> {
        let disabled = config
            .options()
            .extensions
            .get::<basalt_functions::MySqlOptions>()
            .is_some_and(|o| o.disable_join_reorder);
        if disabled {
            return Ok(Transformed::no(plan));
        }
        reorder(plan)
    }
}

fn reorder(plan: LogicalPlan) -> Result<Transformed<LogicalPlan>> {
    if !movable_join(&plan) {
        return plan.map_children(reorder);
    }
    let mut tree = JoinTree::default();
    flatten(plan.clone(), &mut tree);
    if tree.inputs.len() < 3 || tree.inputs.len() > MAX_INPUTS || tree.has_subqueries() {
        return plan.map_children(reorder);
    }
    let inputs = tree
        .inputs
        .into_iter()
        .map(|i| reorder(i).map(|t| t.data))
        .collect::<Result<Vec<_>>>()?;
    match greedy_order(inputs, tree.conjuncts, plan.schema())? {
        Some(ordered) if ordered != plan => Ok(Transformed::yes(ordered)),
        _ => plan.map_children(reorder),
    }
}

/// An inner join this rule may move: ON conditions, nulls never equal.
fn movable_join(plan: &LogicalPlan) -> bool {
    matches!(plan, LogicalPlan::Join(j)
        if j.join_type == JoinType::Inner
            && j.join_constraint == JoinConstraint::On
            && j.null_equality == datafusion::common::NullEquality::NullEqualsNothing
            && !j.null_aware)
}

/// A movable join, possibly under column-only projections and deterministic filters.
fn join_below(plan: &LogicalPlan) -> bool {
    match plan {
        LogicalPlan::Projection(p) if column_only(p) => join_below(&p.input),
        LogicalPlan::Filter(f) if !f.predicate.is_volatile() => join_below(&f.input),
        p => movable_join(p),
    }
}

fn column_only(p: &Projection) -> bool {
    p.expr.iter().all(|e| matches!(e, Expr::Column(_)))
}

/// The inputs and conditions of one tree of inner joins.
#[derive(Default)]
struct JoinTree {
    inputs: Vec<LogicalPlan>,
    conjuncts: Vec<Expr>,
}

impl JoinTree {
    fn has_subqueries(&self) -> bool {
        self.conjuncts.iter().any(|c| {
            c.exists(|e| {
                Ok(matches!(
                    e,
                    Expr::ScalarSubquery(_)
                        | Expr::Exists(_)
                        | Expr::InSubquery(_)
                        | Expr::OuterReferenceColumn(..)
                ))
            })
            .unwrap_or(true)
        })
    }
}

fn flatten(plan: LogicalPlan, tree: &mut JoinTree) {
    if !join_below(&plan) {
        tree.inputs.push(plan);
        return;
    }
    match plan {
        LogicalPlan::Join(j) => {
            flatten(Arc::unwrap_or_clone(j.left), tree);
            flatten(Arc::unwrap_or_clone(j.right), tree);
            for (l, r) in j.on {
                tree.conjuncts.push(l.eq(r));
            }
            if let Some(f) = j.filter {
                tree.conjuncts.extend(split_conjunction_owned(f));
            }
        }
        LogicalPlan::Projection(p) => flatten(Arc::unwrap_or_clone(p.input), tree),
        LogicalPlan::Filter(f) => {
            tree.conjuncts.extend(split_conjunction_owned(f.predicate));
            flatten(Arc::unwrap_or_clone(f.input), tree);
        }
        other => tree.inputs.push(other),
    }
}

/// Inputs joined so far: the plan, which inputs it covers (bits), its estimate.
struct Part {
    plan: LogicalPlan,
    inputs: u64,
    estimate: Estimate,
}

/// A condition and the inputs its columns come from.
struct Condition {
    expr: Expr,
    inputs: u64,
}

/// The inputs joined greedily under `conditions`, projected to `schema`; `None` when a
/// condition's columns cannot be placed (the tree is then left as it was).
fn greedy_order(
    inputs: Vec<LogicalPlan>,
    conditions: Vec<Expr>,
    schema: &DFSchema,
) -> Result<Option<LogicalPlan>> {
    let mut parts: Vec<Part> = Vec::with_capacity(inputs.len());
    let mut pending: Vec<Condition> = Vec::new();
    let mut constant: Vec<Expr> = Vec::new();
    let mut own: Vec<Vec<Expr>> = vec![Vec::new(); inputs.len()];
    for expr in dedup(conditions) {
        let Some(set) = inputs_of(&expr, &inputs) else {
            return Ok(None);
        };
        match set.count_ones() {
            0 => constant.push(expr),
            1 => own[set.trailing_zeros() as usize].push(expr),
            _ => pending.push(Condition { expr, inputs: set }),
        }
    }
    for (i, (plan, filters)) in inputs.into_iter().zip(own).enumerate() {
        let plan = match conjunction(filters) {
            Some(predicate) => LogicalPlan::Filter(Filter::try_new(predicate, Arc::new(plan))?),
            None => plan,
        };
        let estimate = estimate(&plan);
        parts.push(Part {
            plan,
            inputs: 1 << i,
            estimate,
        });
    }
    while parts.len() > 1 {
        let mut best: Option<(bool, f64, usize, usize)> = None;
        for i in 0..parts.len() {
            for j in i + 1..parts.len() {
                let (a, b) = (&parts[i], &parts[j]);
                let (keys, filters) = split_conditions(&pending, a, b);
                let connected = !keys.is_empty();
                let rows = joined_rows(a, b, &keys, filters.len());
                let better = match best {
                    None => true,
                    Some((c, r, _, _)) => (connected && !c) || (connected == c && rows < r),
                };
                if better {
                    best = Some((connected, rows, i, j));
                }
            }
        }
        let Some((_, rows, i, j)) = best else {
            break;
        };
        // Remove the later index first so the earlier stays valid.
        let b = parts.remove(j);
        let a = parts.remove(i);
        let (keys, filters) = split_conditions(&pending, &a, &b);
        let covered = a.inputs | b.inputs;
        pending.retain(|c| {
            !(c.inputs & !covered == 0 && c.inputs & a.inputs != 0 && c.inputs & b.inputs != 0)
        });
        // The smaller part is the build side (the left input of DataFusion's hash join).
        let (left, right, on) = if a.estimate.rows <= b.estimate.rows {
            (a, b, keys)
        } else {
            let swapped = keys.into_iter().map(|(l, r)| (r, l)).collect();
            (b, a, swapped)
        };
        let mut columns = left.estimate.columns.clone();
        columns.extend(right.estimate.columns.iter().cloned());
        let estimate = Estimate { rows, columns }.clamp();
        let join = Join::try_new(
            Arc::new(left.plan),
            Arc::new(right.plan),
            on,
            conjunction(filters),
            JoinType::Inner,
            JoinConstraint::On,
            datafusion::common::NullEquality::NullEqualsNothing,
            false,
        )?;
        parts.push(Part {
            plan: LogicalPlan::Join(join),
            inputs: covered,
            estimate,
        });
    }
    let Some(mut plan) = parts.pop().map(|p| p.plan) else {
        return Ok(None);
    };
    let rest: Vec<Expr> = constant
        .into_iter()
        .chain(pending.into_iter().map(|c| c.expr))
        .collect();
    if let Some(predicate) = conjunction(rest) {
        plan = LogicalPlan::Filter(Filter::try_new(predicate, Arc::new(plan))?);
    }
    let columns: Vec<Expr> = schema
        .iter()
        .map(|(q, f)| Expr::Column(Column::new(q.cloned(), f.name())))
        .collect();
    let same_order = plan.schema().fields().len() == columns.len()
        && plan
            .schema()
            .iter()
            .zip(schema.iter())
            .all(|(a, b)| a.0 == b.0 && a.1.name() == b.1.name());
    if !same_order {
        plan = LogicalPlan::Projection(Projection::try_new(columns, Arc::new(plan))?);
    }
    Ok(Some(plan))
}

/// Conditions in their first-seen order, each once (a join key also written in WHERE).
fn dedup(conditions: Vec<Expr>) -> Vec<Expr> {
    let mut seen = HashSet::new();
    conditions
        .into_iter()
        .filter(|c| seen.insert(c.clone()))
        .collect()
}

/// Which inputs `expr`'s columns come from; `None` when a column is in none of them or in
/// more than one.
fn inputs_of(expr: &Expr, inputs: &[LogicalPlan]) -> Option<u64> {
    let mut set = 0u64;
    for column in expr.column_refs() {
        let mut found = inputs
            .iter()
            .enumerate()
            .filter(|(_, p)| p.schema().has_column(column));
        let (i, _) = found.next()?;
        if found.next().is_some() {
            return None;
        }
        set |= 1 << i;
    }
    Some(set)
}

/// The pending conditions that a join of `a` and `b` applies: equalities between a column
/// expression of each side (the join keys, oriented a-to-b) and the rest (the join filter).
fn split_conditions(pending: &[Condition], a: &Part, b: &Part) -> (Vec<(Expr, Expr)>, Vec<Expr>) {
    let covered = a.inputs | b.inputs;
    let mut keys = Vec::new();
    let mut filters = Vec::new();
    for c in pending {
        if c.inputs & !covered != 0 || c.inputs & a.inputs == 0 || c.inputs & b.inputs == 0 {
            continue;
        }
        match equality_sides(&c.expr, a, b) {
            Some(pair) => keys.push(pair),
            None => filters.push(c.expr.clone()),
        }
    }
    (keys, filters)
}

/// `x = y` with x over `a`'s columns only and y over `b`'s (either written first).
fn equality_sides(expr: &Expr, a: &Part, b: &Part) -> Option<(Expr, Expr)> {
    let Expr::BinaryExpr(BinaryExpr {
        left,
        op: Operator::Eq,
        right,
    }) = expr
    else {
        return None;
    };
    let over = |e: &Expr, p: &Part| {
        let refs = e.column_refs();
        !refs.is_empty() && refs.iter().all(|c| p.plan.schema().has_column(c))
    };
    if over(left, a) && over(right, b) {
        Some((left.as_ref().clone(), right.as_ref().clone()))
    } else if over(left, b) && over(right, a) {
        Some((right.as_ref().clone(), left.as_ref().clone()))
    } else {
        None
    }
}

/// Estimated rows of joining `a` and `b` on `keys` with `filters` further conditions.
fn joined_rows(a: &Part, b: &Part, keys: &[(Expr, Expr)], filters: usize) -> f64 {
    let s = keys_selectivity(
        keys,
        &a.estimate,
        a.plan.schema(),
        &b.estimate,
        b.plan.schema(),
    );
    (a.estimate.rows * b.estimate.rows * s * JOIN_FILTER.powi(filters as i32)).max(1.0)
}

#[cfg(test)]
mod tests;
