//! A signed integer CAST to UNSIGNED, as MySQL converts it: the same 64 bits read unsigned,
//! so `CAST(-2 AS UNSIGNED)` is 18446744073709551614 (and `CAST(-1 AS UNSIGNED)` is BIGINT
//! UNSIGNED's largest value). Arrow's cast refused any negative value and failed the query. (A
//! negative DECIMAL or DOUBLE is 0 in MariaDB, as Arrow's cast leaves it to the other rules.)
//! An analyzer rule before type coercion sends such casts through `unsigned_bits(n)`.

use crate::expr_rules::rewrite_node_expressions;
use crate::util::{arguments, output, plain_function};
use datafusion::arrow::array::{ArrayRef, AsArray, UInt64Array};
use datafusion::arrow::datatypes::{DataType, Int64Type};
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::Transformed;
use datafusion::common::{DFSchema, Result};
use datafusion::logical_expr::expr::TryCast;
use datafusion::logical_expr::{
    Cast, ColumnarValue, Expr, ExprSchemable, LogicalPlan, ScalarFunctionArgs, ScalarUDF,
    Signature, Volatility,
};
use datafusion::optimizer::AnalyzerRule;
use std::sync::{Arc, OnceLock};

/// `unsigned_bits(n)`: a BIGINT's 64 bits as a BIGINT UNSIGNED.
pub fn function() -> &'static ScalarUDF {
    static F: OnceLock<ScalarUDF> = OnceLock::new();
    F.get_or_init(|| {
        plain_function(
            "unsigned_bits",
            Signature::exact(vec![DataType::Int64], Volatility::Immutable),
            DataType::UInt64,
            unsigned_bits,
        )
    })
}

fn unsigned_bits(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let values = datafusion::arrow::compute::cast(&arrays[0], &DataType::Int64)?;
    let out: UInt64Array = values
        .as_primitive::<Int64Type>()
        .iter()
        .map(|v| v.map(|v| v as u64))
        .collect();
    output(Arc::new(out) as ArrayRef, scalar)
}

/// The analyzer rule; it must run before DataFusion's type coercion.
#[derive(Debug, Default)]
pub struct UnsignedCasts;

impl AnalyzerRule for UnsignedCasts {
    fn name(&self) -> &str {
        "mysql_unsigned_casts"
    }

    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        plan.transform_up_with_subqueries(|node| rewrite_node_expressions(node, unsigned))
            .map(|t| t.data)
    }
}

fn is_signed_integer(t: &DataType) -> bool {
    matches!(
        t,
        DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64
    )
}

fn bits(e: Expr) -> Expr {
    function().call(vec![Expr::Cast(Cast::new(Box::new(e), DataType::Int64))])
}

fn unsigned(e: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    let signed = |e: &Expr| e.get_type(schema).is_ok_and(|t| is_signed_integer(&t));
    Ok(match e {
        Expr::Cast(Cast { expr, field })
            if field.data_type() == &DataType::UInt64 && signed(&expr) =>
        {
            Transformed::yes(bits(*expr))
        }
        Expr::TryCast(TryCast { expr, field })
            if field.data_type() == &DataType::UInt64 && signed(&expr) =>
        {
            Transformed::yes(bits(*expr))
        }
        other => Transformed::no(other),
    })
}

#[cfg(test)]
mod tests {
    use datafusion::prelude::SessionContext;

    #[tokio::test]
    async fn negative_integers_keep_their_bits() {
        let ctx = SessionContext::new();
        ctx.add_analyzer_rule(std::sync::Arc::new(super::UnsignedCasts));
        let batches = ctx
            .sql("SELECT CAST(-2 AS BIGINT UNSIGNED) AS a, CAST(7 AS BIGINT UNSIGNED) AS b")
            .await
            .unwrap()
            .collect()
            .await
            .unwrap();
        let text = datafusion::arrow::util::pretty::pretty_format_batches(&batches)
            .unwrap()
            .to_string();
        assert!(text.contains("18446744073709551614"), "{text}");
        assert!(text.contains("| 7 "), "{text}");
    }
}
