//! `/` of two integers as MySQL computes it: DECIMAL division, the quotient keeping four more
//! decimals than the dividend (`div_precision_increment`), so `1 / 2` is 0.5000, not 0.
//! DataFusion's decimal division has that scale rule, so an analyzer rule running before type
//! coercion turns both integers into DECIMAL(digits, 0); coercion then fits the expressions
//! around the quotient to it (`10 / 4 * 4` is 10.0000).

use datafusion::arrow::datatypes::DataType;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{DFSchema, Result};
use datafusion::logical_expr::expr_rewriter::NamePreserver;
use datafusion::logical_expr::utils::merge_schema;
use datafusion::logical_expr::{BinaryExpr, Expr, ExprSchemable, LogicalPlan, Operator};
use datafusion::optimizer::AnalyzerRule;

/// The analyzer rule; it must run before DataFusion's type coercion.
#[derive(Debug, Default)]
pub struct IntegerDivision;

impl AnalyzerRule for IntegerDivision {
    fn name(&self) -> &str {
        "mysql_integer_division"
    }

    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        plan.transform_up_with_subqueries(|node| {
            if matches!(node, LogicalPlan::TableScan(_)) {
                return Ok(Transformed::no(node));
            }
            let schema = merge_schema(&node.inputs());
            let preserver = NamePreserver::new(&node);
            let rewritten = node.map_expressions(|e| {
                let saved = preserver.save(&e);
                let new = e.transform_up(|e| decimal_division(e, &schema))?;
                Ok(if new.transformed {
                    new.update_data(|e| saved.restore(e))
                } else {
                    new
                })
            })?;
            if rewritten.transformed {
                rewritten.map_data(|p| p.recompute_schema())
            } else {
                Ok(rewritten)
            }
        })
        .map(|t| t.data)
    }
}

/// `l / r` of two integers with both made DECIMAL; anything else unchanged.
fn decimal_division(e: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    let Expr::BinaryExpr(BinaryExpr {
        left,
        op: Operator::Divide,
        right,
    }) = &e
    else {
        return Ok(Transformed::no(e));
    };
    let (Ok(lt), Ok(rt)) = (left.get_type(schema), right.get_type(schema)) else {
        return Ok(Transformed::no(e));
    };
    let (Some(lp), Some(rp)) = (integer_digits(&lt), integer_digits(&rt)) else {
        return Ok(Transformed::no(e));
    };
    let decimal = |x: &Expr, digits: u8| {
        x.as_ref()
            .clone()
            .cast_to(&DataType::Decimal128(digits, 0), schema)
    };
    Ok(Transformed::yes(Expr::BinaryExpr(BinaryExpr::new(
        Box::new(decimal(left, lp)?),
        Operator::Divide,
        Box::new(decimal(right, rp)?),
    ))))
}

/// The decimal digits every value of an integer type fits in.
fn integer_digits(t: &DataType) -> Option<u8> {
    Some(match t {
        DataType::Int8 | DataType::UInt8 => 3,
        DataType::Int16 | DataType::UInt16 => 5,
        DataType::Int32 | DataType::UInt32 => 10,
        DataType::Int64 => 19,
        DataType::UInt64 => 20,
        _ => return None,
    })
}
