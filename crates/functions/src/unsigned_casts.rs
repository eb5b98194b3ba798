//! A signed integer CAST to UNSIGNED, as MySQL converts it: the same 64 bits read unsigned,
//! so `CAST(-2 AS UNSIGNED)` is 18446744073709551614 (and `CAST(-1 AS UNSIGNED)` is BIGINT
//! UNSIGNED's largest value). Arrow's cast refused any negative value and failed the query. (A
//! negative DECIMAL or DOUBLE is 0 in MariaDB, as Arrow's cast leaves it to the other rules.)
//! The way back too: a BIGINT UNSIGNED CAST to SIGNED keeps its bits in a query, so
//! `CAST(18446744073709551615 AS SIGNED)` is -1 (Arrow's cast failed the query past BIGINT);
//! a statement that stores rows keeps the range check.
//! An analyzer rule before type coercion sends such casts through `unsigned_bits(n)` and
//! `signed_bits(n)`.

use crate::expr_rules::rewrite_node_expressions;
use crate::util::{arguments, output, plain_function};
use datafusion::arrow::array::{ArrayRef, AsArray, Int64Array, UInt64Array};
use datafusion::arrow::datatypes::{DataType, Int64Type, UInt64Type};
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

/// `signed_bits(n)`: a BIGINT UNSIGNED's 64 bits as a BIGINT.
pub fn signed_function() -> &'static ScalarUDF {
    static F: OnceLock<ScalarUDF> = OnceLock::new();
    F.get_or_init(|| {
        plain_function(
            "signed_bits",
            Signature::exact(vec![DataType::UInt64], Volatility::Immutable),
            DataType::Int64,
            signed_bits,
        )
    })
}

fn signed_bits(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let values = datafusion::arrow::compute::cast(&arrays[0], &DataType::UInt64)?;
    let out: Int64Array = values.as_primitive::<UInt64Type>().unary(|v| v as i64);
    output(Arc::new(out) as ArrayRef, scalar)
}

fn unsigned_bits(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let values = datafusion::arrow::compute::cast(&arrays[0], &DataType::Int64)?;
    let out: UInt64Array = values.as_primitive::<Int64Type>().unary(|v| v as u64);
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
        // A statement that stores rows keeps its range checks: an unsigned value too large for
        // a signed column is an error there, not a negative number.
        let stores = matches!(plan, LogicalPlan::Dml(_));
        plan.transform_up_with_subqueries(|node| {
            rewrite_node_expressions(node, |e, schema| unsigned(e, schema, !stores))
        })
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

fn unsigned(e: Expr, schema: &DFSchema, to_signed: bool) -> Result<Transformed<Expr>> {
    let signed = |e: &Expr| e.get_type(schema).is_ok_and(|t| is_signed_integer(&t));
    let unsigned_big =
        |e: &Expr| to_signed && e.get_type(schema).is_ok_and(|t| t == DataType::UInt64);
    let signed_bits = |e: Expr| signed_function().call(vec![e]);
    Ok(match e {
        Expr::Cast(Cast { expr, field })
            if field.data_type() == &DataType::Int64 && unsigned_big(&expr) =>
        {
            Transformed::yes(signed_bits(*expr))
        }
        Expr::TryCast(TryCast { expr, field })
            if field.data_type() == &DataType::Int64 && unsigned_big(&expr) =>
        {
            Transformed::yes(signed_bits(*expr))
        }
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

    /// `sql`'s result as text, planned with the rule.
    async fn run(sql: &str) -> String {
        let ctx = SessionContext::new();
        ctx.add_analyzer_rule(std::sync::Arc::new(super::UnsignedCasts));
        let batches = ctx.sql(sql).await.unwrap().collect().await.unwrap();
        datafusion::arrow::util::pretty::pretty_format_batches(&batches)
            .unwrap()
            .to_string()
    }

    #[tokio::test]
    async fn negative_integers_keep_their_bits() {
        let text =
            run("SELECT CAST(-2 AS BIGINT UNSIGNED) AS a, CAST(7 AS BIGINT UNSIGNED) AS b").await;
        assert!(text.contains("18446744073709551614"), "{text}");
        assert!(text.contains("| 7 "), "{text}");
    }

    #[tokio::test]
    async fn large_unsigned_integers_keep_their_bits() {
        let text = run("SELECT CAST(CAST(18446744073709551615 AS BIGINT UNSIGNED) AS BIGINT) AS a, CAST(CAST(5 AS BIGINT UNSIGNED) AS BIGINT) AS b").await;
        assert!(text.contains("| -1 "), "{text}");
        assert!(text.contains("| 5 "), "{text}");
    }
}
