//! MySQL's JSON operators: `doc -> path` is `json_extract(doc, path)` and `doc ->> path` is
//! `json_unquote(json_extract(doc, path))`.

use datafusion::common::{DFSchema, Result};
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::planner::{ExprPlanner, PlannerResult, RawBinaryExpr};
use datafusion::logical_expr::{Expr, ScalarUDF};
use datafusion::sql::sqlparser::ast::BinaryOperator;
use std::sync::{Arc, OnceLock};

/// Plans `->` and `->>`.
#[derive(Debug, Default)]
pub struct JsonOperatorPlanner;

fn udf(name: &str) -> Arc<ScalarUDF> {
    static FUNCTIONS: OnceLock<Vec<Arc<ScalarUDF>>> = OnceLock::new();
    let all = FUNCTIONS.get_or_init(|| super::functions().into_iter().map(Arc::new).collect());
    all.iter()
        .find(|f| f.name() == name)
        .cloned()
        .expect("the JSON operators name functions this module defines")
}

impl ExprPlanner for JsonOperatorPlanner {
    fn plan_binary_op(
        &self,
        expr: RawBinaryExpr,
        _schema: &DFSchema,
    ) -> Result<PlannerResult<RawBinaryExpr>> {
        let unquote = match expr.op {
            BinaryOperator::Arrow => false,
            BinaryOperator::LongArrow => true,
            _ => return Ok(PlannerResult::Original(expr)),
        };
        let extract = Expr::ScalarFunction(ScalarFunction::new_udf(
            udf("json_extract"),
            vec![expr.left, expr.right],
        ));
        Ok(PlannerResult::Planned(if unquote {
            Expr::ScalarFunction(ScalarFunction::new_udf(udf("json_unquote"), vec![extract]))
        } else {
            extract
        }))
    }
}
