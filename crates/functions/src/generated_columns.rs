//! Values of generated columns (MySQL's `col T GENERATED ALWAYS AS (expr)`, Doris 2.1's
//! generated columns): each expression is computed over a batch of rows about to be written,
//! with the functions of this crate, and cast to its column's type. Columns are computed in
//! order, so a generated column may use an earlier one. The expression is planned as DataFusion
//! SQL over the batch's columns (lower-case names), so MySQL's own operator rules that
//! Basalt's statement rewrite adds (DECIMAL `/`, NULL on division by zero) do not apply here.
//!
//! MySQL 8's expression defaults (`c INT DEFAULT (1 + 1)`, `u VARCHAR(36) DEFAULT (uuid())`)
//! are planned the same way, over no columns ([`default_expression`], [`default_values`]); a
//! division or modulo is refused in them, as its MySQL meaning would be lost.

use datafusion::arrow::array::{ArrayRef, RecordBatch, RecordBatchOptions};
use datafusion::arrow::compute::{can_cast_types, cast};
use datafusion::arrow::datatypes::{DataType, Schema};
use datafusion::common::tree_node::TreeNode;
use datafusion::common::{plan_err, DFSchema, Result};
use datafusion::logical_expr::{BinaryExpr, Expr, ExprSchemable, Operator};
use datafusion::prelude::{SessionConfig, SessionContext};
use std::sync::{Arc, OnceLock};

/// A session with this crate's functions, parsing MySQL's SQL, built once.
fn context() -> &'static SessionContext {
    static CONTEXT: OnceLock<SessionContext> = OnceLock::new();
    CONTEXT.get_or_init(|| {
        let config = SessionConfig::new().set_str("datafusion.sql_parser.dialect", "MySQL");
        let ctx = SessionContext::new_with_config(config);
        crate::register_all(&ctx);
        ctx
    })
}

/// `batch` with the columns at the given indexes replaced by their expressions' values.
pub fn compute(batch: RecordBatch, generated: &[(usize, &str)]) -> Result<RecordBatch> {
    if generated.is_empty() || batch.num_rows() == 0 {
        return Ok(batch);
    }
    let ctx = context();
    let mut batch = batch;
    for &(index, expr) in generated {
        let schema = batch.schema();
        let df_schema = DFSchema::try_from(schema.as_ref().clone())?;
        let logical = ctx.parse_sql_expr(expr, &df_schema)?;
        let physical = ctx.create_physical_expr(logical, &df_schema)?;
        let values = physical.evaluate(&batch)?.into_array(batch.num_rows())?;
        let values = cast(&values, schema.field(index).data_type())?;
        let mut columns = batch.columns().to_vec();
        columns[index] = values;
        batch = RecordBatch::try_new(Arc::clone(&schema), columns)?;
    }
    Ok(batch)
}

/// A column's `DEFAULT (expr)` (its SQL text) as an expression over no columns, cast to the
/// column's type `ty`: an error when it names a column, aggregates, divides, or gives a value
/// that cannot become a `ty`.
pub fn default_expression(text: &str, ty: &DataType) -> Result<Expr> {
    let schema = DFSchema::empty();
    let expr = context().parse_sql_expr(text, &schema)?;
    let divides = expr.exists(|e| {
        Ok(matches!(
            e,
            Expr::BinaryExpr(BinaryExpr {
                op: Operator::Divide | Operator::Modulo,
                ..
            })
        ))
    })?;
    if divides {
        return plan_err!("a DEFAULT expression may not divide (/, DIV, %, MOD) in Basalt");
    }
    let from = expr.get_type(&schema)?;
    if !can_cast_types(&from, ty) {
        return plan_err!("a DEFAULT expression of type {from} cannot be stored as {ty}");
    }
    // Planned once now so that a function DataFusion cannot compute alone fails here.
    context().create_physical_expr(expr.clone(), &schema)?;
    Ok(datafusion::logical_expr::cast(expr, ty.clone()))
}

/// `rows` values of a column's `DEFAULT (expr)`, each computed (`uuid()` differs per row).
pub fn default_values(text: &str, ty: &DataType, rows: usize) -> Result<ArrayRef> {
    let expr = default_expression(text, ty)?;
    let schema = DFSchema::empty();
    let physical = context().create_physical_expr(expr, &schema)?;
    let options = RecordBatchOptions::new().with_row_count(Some(rows));
    let batch = RecordBatch::try_new_with_options(Arc::new(Schema::empty()), vec![], &options)?;
    physical.evaluate(&batch)?.into_array(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{Array, AsArray, Int32Array, Int64Array, StringArray};
    use datafusion::arrow::datatypes::{DataType, Field, Int32Type, Int64Type, Schema};

    #[test]
    fn computes_in_order_and_casts() {
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int32, true),
            Field::new("g", DataType::Int64, true),
            Field::new("h", DataType::Utf8, true),
        ]));
        let batch = RecordBatch::try_new(
            schema,
            vec![
                Arc::new(Int32Array::from(vec![Some(1), Some(20), None])),
                Arc::new(Int64Array::from(vec![Some(99), None, None])),
                Arc::new(StringArray::from(vec![None::<&str>, None, None])),
            ],
        )
        .unwrap();
        let out = compute(batch, &[(1, "id * 2"), (2, "concat('v', g + 1)")]).unwrap();
        let g = out.column(1).as_primitive::<Int64Type>();
        assert_eq!(g.iter().collect::<Vec<_>>(), vec![Some(2), Some(40), None]);
        let h = out.column(2).as_string::<i32>();
        assert_eq!(h.value(0), "v3");
        assert_eq!(h.value(1), "v41");
        assert!(out.column(0).as_primitive::<Int32Type>().is_valid(0));
        assert!(compute(out, &[(1, "no_such_column + 1")]).is_err());
    }

    #[test]
    fn default_expressions() {
        let values = default_values("1 + 1", &DataType::Int32, 3).unwrap();
        let values = values.as_primitive::<Int32Type>();
        assert_eq!(values.iter().collect::<Vec<_>>(), vec![Some(2); 3]);
        let text = default_values("concat('a', 'b')", &DataType::Utf8, 1).unwrap();
        assert_eq!(text.as_string::<i32>().value(0), "ab");
        assert!(default_expression("1 / 2", &DataType::Int32).is_err());
        assert!(default_expression("a + 1", &DataType::Int32).is_err());
        assert!(default_expression("no_such_function(1)", &DataType::Int32).is_err());
    }
}
