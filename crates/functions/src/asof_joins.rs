//! Doris's ASOF JOIN, planned. The frontend turns `l ASOF [LEFT | INNER] JOIN r
//! MATCH_CONDITION(l.ts >= r.ts) ON l.k = r.k` into a left (or inner) join `ON l.k = r.k AND
//! basalt_asof_match(l.ts >= r.ts)`. The analyzer rule [`AsofJoins`] finds that mark in a
//! join's filter and keeps, for each left row, only its nearest match:
//!
//! ```text
//! Projection: <the join's columns>
//!   Filter: rank = 1
//!     Window: row_number() OVER (PARTITION BY row ORDER BY r.ts DESC)   (ASC for <= and <)
//!       Join: l.k = r.k, filter: l.ts >= r.ts
//!         Window: row_number() OVER () AS row                           (numbers the left rows)
//!           <left>
//!         <right>
//! ```
//!
//! A left row without a match keeps its one NULL-padded row (left join) or none (inner). Among
//! right rows tied for nearest, one is kept. The join still forms every candidate pair before
//! the ranking keeps one, so its cost grows with the candidates per key.

use datafusion::arrow::datatypes::DataType;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{exec_err, plan_err, DFSchema, Result};
use datafusion::functions_window::expr_fn::row_number;
use datafusion::logical_expr::utils::{conjunction, split_conjunction_owned};
use datafusion::logical_expr::{
    col, lit, BinaryExpr, ColumnarValue, Expr, ExprFunctionExt, Join, JoinType, LogicalPlan,
    LogicalPlanBuilder, Operator, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
    Volatility,
};
use datafusion::optimizer::AnalyzerRule;
use std::sync::{Arc, OnceLock};

/// The name of the mark on an ASOF join's match condition.
pub const ASOF_MATCH: &str = "basalt_asof_match";

/// The number of each left row, while the rule's plan runs.
const LEFT_ROW: &str = "__basalt_asof_row";
/// The rank of a match among its left row's, nearest first.
const MATCH_RANK: &str = "__basalt_asof_rank";

/// `basalt_asof_match(condition)`: only a mark. Evaluated, it is an error (the rule replaces
/// every mark it plans, so a mark left over would be a join not planned as ASOF).
pub fn function() -> &'static ScalarUDF {
    static F: OnceLock<ScalarUDF> = OnceLock::new();
    F.get_or_init(|| ScalarUDF::new_from_impl(AsofMatch::default()))
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct AsofMatch {
    signature: Signature,
}

impl Default for AsofMatch {
    fn default() -> Self {
        AsofMatch {
            signature: Signature::any(1, Volatility::Immutable),
        }
    }
}

impl ScalarUDFImpl for AsofMatch {
    fn name(&self) -> &str {
        ASOF_MATCH
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn return_type(&self, _types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Boolean)
    }
    fn invoke_with_args(&self, _args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        exec_err!("MATCH_CONDITION belongs to an ASOF JOIN's own ON clause")
    }
}

/// The analyzer rule (see the module doc); it runs after type coercion.
#[derive(Debug, Default)]
pub struct AsofJoins;

impl AnalyzerRule for AsofJoins {
    fn name(&self) -> &str {
        "doris_asof_joins"
    }

    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        plan.transform_up_with_subqueries(|node| match node {
            LogicalPlan::Join(join) if join.filter.as_ref().is_some_and(has_mark) => {
                nearest_matches(join).map(Transformed::yes)
            }
            other => Ok(Transformed::no(other)),
        })
        .map(|t| t.data)
    }
}

fn is_mark(e: &Expr) -> bool {
    matches!(e, Expr::ScalarFunction(f) if f.name() == ASOF_MATCH)
}

fn has_mark(filter: &Expr) -> bool {
    filter.exists(|e| Ok(is_mark(e))).unwrap_or(false)
}

/// The join `join`, whose filter holds the mark, as the plan of the module doc.
fn nearest_matches(join: Join) -> Result<LogicalPlan> {
    let Some(filter) = join.filter.clone() else {
        return plan_err!("ASOF JOIN without a MATCH_CONDITION");
    };
    let (marks, mut rest): (Vec<Expr>, Vec<Expr>) = split_conjunction_owned(filter)
        .into_iter()
        .partition(is_mark);
    let [Expr::ScalarFunction(mark)] = &marks[..] else {
        return plan_err!("an ASOF JOIN's MATCH_CONDITION must stand beside its ON keys only");
    };
    if rest.iter().any(has_mark) {
        return plan_err!("an ASOF JOIN's MATCH_CONDITION must stand beside its ON keys only");
    }
    if !matches!(join.join_type, JoinType::Left | JoinType::Inner) {
        return plan_err!("ASOF JOIN is a LEFT or INNER join");
    }
    let Some(condition) = mark.args.first().cloned() else {
        return plan_err!("ASOF JOIN without a MATCH_CONDITION");
    };
    let (nearest_first, right_value) = direction(&condition, &join)?;
    rest.push(condition);
    let numbered_left = LogicalPlanBuilder::from(Arc::unwrap_or_clone(join.left))
        .window(vec![row_number().alias(LEFT_ROW)])?
        .build()?;
    let candidates = Join::try_new(
        Arc::new(numbered_left),
        join.right,
        join.on,
        conjunction(rest),
        join.join_type,
        join.join_constraint,
        join.null_equality,
        false,
    )?;
    let rank = row_number()
        .partition_by(vec![col(LEFT_ROW)])
        .order_by(vec![right_value.sort(nearest_first, false)])
        .build()?
        .alias(MATCH_RANK);
    let columns: Vec<Expr> = join
        .schema
        .columns()
        .into_iter()
        .map(Expr::Column)
        .collect();
    LogicalPlanBuilder::from(LogicalPlan::Join(candidates))
        .window(vec![rank])?
        .filter(col(MATCH_RANK).eq(lit(1u64)))?
        .project(columns)?
        .build()
}

/// Whether the nearest match has the smallest right value (`l.ts <= r.ts`, `l.ts < r.ts`),
/// and the right side's expression of the condition.
fn direction(condition: &Expr, join: &Join) -> Result<(bool, Expr)> {
    let refused = || {
        plan_err!(
            "an ASOF JOIN's MATCH_CONDITION compares a left-side expression to a right-side one \
             with >=, >, <= or <: {condition}"
        )
    };
    let Expr::BinaryExpr(BinaryExpr { left, op, right }) = condition else {
        return refused();
    };
    let at_most = match op {
        Operator::GtEq | Operator::Gt => true,
        Operator::LtEq | Operator::Lt => false,
        _ => return refused(),
    };
    let (lefts, rights) = (join.left.schema(), join.right.schema());
    if reads_only(left, lefts) && reads_only(right, rights) {
        // l >= r: the right value is at most the left's, the nearest is the largest.
        Ok((!at_most, (**right).clone()))
    } else if reads_only(left, rights) && reads_only(right, lefts) {
        Ok((at_most, (**left).clone()))
    } else {
        refused()
    }
}

/// True when `e` reads columns, all of them from `schema`.
fn reads_only(e: &Expr, schema: &DFSchema) -> bool {
    let columns = e.column_refs();
    !columns.is_empty() && columns.iter().all(|c| schema.has_column(c))
}
