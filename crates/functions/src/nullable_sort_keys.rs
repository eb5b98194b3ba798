//! ORDER BY above an outer join, kept. DataFusion 55 carries the constants of a join's inputs
//! into its output for outer joins too: after `l LEFT JOIN (SELECT * FROM r WHERE b = 105) r`,
//! `r.b` counts as the constant 105 although the rows without a match hold NULL there, and
//! `ORDER BY r.b` was dropped as already satisfied, a silently unsorted answer. The optimizer
//! rule [`OuterJoinSortKeys`] (after DataFusion's) gives each key of a sort above an outer join
//! the form `basalt_sort_key(key, random())`: the value of `key`, which no equivalence reasoning
//! takes for a constant (a call with an argument of no columns is never one), so the sort runs.

use datafusion::arrow::datatypes::DataType;
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::{exec_err, Result};
use datafusion::logical_expr::{
    ColumnarValue, Expr, JoinType, LogicalPlan, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF,
    ScalarUDFImpl, Signature, SortExpr, Volatility,
};
use datafusion::optimizer::{OptimizerConfig, OptimizerRule};
use std::sync::{Arc, OnceLock};

/// The function's name.
pub const NAME: &str = "basalt_sort_key";

/// `basalt_sort_key(value, marker)`: `value`.
pub fn function() -> &'static ScalarUDF {
    static F: OnceLock<ScalarUDF> = OnceLock::new();
    F.get_or_init(|| ScalarUDF::new_from_impl(SortKey::default()))
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct SortKey {
    signature: Signature,
}

impl Default for SortKey {
    fn default() -> Self {
        SortKey {
            signature: Signature::any(2, Volatility::Volatile),
        }
    }
}

impl ScalarUDFImpl for SortKey {
    fn name(&self) -> &str {
        NAME
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn return_type(&self, types: &[DataType]) -> Result<DataType> {
        match types.first() {
            Some(t) => Ok(t.clone()),
            None => exec_err!("{NAME} takes a value"),
        }
    }
    fn return_field_from_args(
        &self,
        args: ReturnFieldArgs,
    ) -> Result<datafusion::arrow::datatypes::FieldRef> {
        match args.arg_fields.first() {
            Some(field) => Ok(Arc::clone(field)),
            None => exec_err!("{NAME} takes a value"),
        }
    }
    fn invoke_with_args(&self, mut args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        if args.args.is_empty() {
            return exec_err!("{NAME} takes a value");
        }
        Ok(args.args.swap_remove(0))
    }
}

/// The optimizer rule (see the module doc).
#[derive(Debug, Default)]
pub struct OuterJoinSortKeys;

impl OptimizerRule for OuterJoinSortKeys {
    fn name(&self) -> &str {
        "basalt_outer_join_sort_keys"
    }

    fn supports_rewrite(&self) -> bool {
        true
    }

    fn rewrite(
        &self,
        plan: LogicalPlan,
        _config: &dyn OptimizerConfig,
    ) -> Result<Transformed<LogicalPlan>> {
        plan.transform_up_with_subqueries(|node| {
            let LogicalPlan::Sort(mut sort) = node else {
                return Ok(Transformed::no(node));
            };
            if !has_outer_join(&sort.input) || sort.expr.iter().all(|s| kept(&s.expr)) {
                return Ok(Transformed::no(LogicalPlan::Sort(sort)));
            }
            sort.expr = sort.expr.into_iter().map(keep).collect();
            Ok(Transformed::yes(LogicalPlan::Sort(sort)))
        })
    }
}

fn has_outer_join(plan: &LogicalPlan) -> bool {
    let mut found = false;
    let _ = plan.apply(|node| {
        if let LogicalPlan::Join(join) = node {
            if matches!(
                join.join_type,
                JoinType::Left | JoinType::Right | JoinType::Full
            ) {
                found = true;
                return Ok(TreeNodeRecursion::Stop);
            }
        }
        Ok(TreeNodeRecursion::Continue)
    });
    found
}

fn kept(e: &Expr) -> bool {
    matches!(e, Expr::ScalarFunction(f) if f.name() == NAME) || matches!(e, Expr::Literal(..))
}

fn keep(s: SortExpr) -> SortExpr {
    if kept(&s.expr) {
        return s;
    }
    let random = datafusion::functions::math::random().call(vec![]);
    SortExpr {
        expr: function().call(vec![s.expr, random]),
        ..s
    }
}
