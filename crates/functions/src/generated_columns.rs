//! Values of generated columns (MySQL's `col T GENERATED ALWAYS AS (expr)`, Doris 2.1's
//! generated columns): each expression is computed over a batch of rows about to be written,
//! with the functions of this crate, and cast to its column's type. Columns are computed in
//! order, so a generated column may use an earlier one. The expression is planned as DataFusion
//! SQL over the batch's columns (lower-case names), so MySQL's own operator rules that
//! Basalt's statement rewrite adds (DECIMAL `/`, NULL on division by zero) do not apply here.

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::compute::cast;
use datafusion::common::{DFSchema, Result};
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
}
