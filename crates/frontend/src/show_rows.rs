//! Doris's `WHERE` / `ORDER BY` / `LIMIT` after SHOW PARTITIONS (and its other SHOWs of that
//! form): the rows the SHOW gives are filtered, sorted and cut by DataFusion, in a context that
//! holds those rows alone (the clauses can name the SHOW's columns, in any letter case, and
//! nothing else).

use crate::output::Output;
use basalt_common::df_error::from_df;
use basalt_common::{BasaltError, Result};
use basalt_sql::ast::{self, VisitMut, VisitorMut};
use basalt_sql::ShowRows;
use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::{Field, Schema};
use datafusion::datasource::MemTable;
use datafusion::prelude::SessionContext;
use futures::{StreamExt, TryStreamExt};
use std::ops::ControlFlow;
use std::sync::Arc;

/// `rows` with every name in lower case: a column's name matches in any letter case, quoted
/// (`` `Range` ``) or not.
fn lower_case_names(rows: &ShowRows) -> ShowRows {
    struct Lower;
    impl VisitorMut for Lower {
        type Break = ();
        fn pre_visit_expr(&mut self, expr: &mut ast::Expr) -> ControlFlow<()> {
            match expr {
                ast::Expr::Identifier(ident) => ident.value = ident.value.to_lowercase(),
                ast::Expr::CompoundIdentifier(idents) => {
                    idents
                        .iter_mut()
                        .for_each(|i| i.value = i.value.to_lowercase());
                }
                _ => {}
            }
            ControlFlow::Continue(())
        }
    }
    let mut rows = rows.clone();
    let exprs = rows
        .filter
        .iter_mut()
        .chain(rows.order_by.iter_mut().map(|o| &mut o.expr));
    for expr in exprs {
        let _ = expr.visit(&mut Lower);
    }
    rows
}

/// `output`'s rows under `rows`' clauses.
pub(crate) async fn apply(output: Output, rows: &ShowRows) -> Result<Output> {
    if rows.is_all() {
        return Ok(output);
    }
    let Output::Rows { schema, stream } = output else {
        return Ok(output);
    };
    let batches: Vec<RecordBatch> = stream.try_collect().await?;
    // Unquoted names are folded to lower case by the planner: the table's are, too.
    let lower = Arc::new(Schema::new(
        schema
            .fields()
            .iter()
            .map(|f| Field::new(f.name().to_lowercase(), f.data_type().clone(), true))
            .collect::<Vec<_>>(),
    ));
    let relabel = |batch: &RecordBatch, to: &Arc<Schema>| {
        RecordBatch::try_new(to.clone(), batch.columns().to_vec())
            .map_err(|e| BasaltError::Internal(format!("SHOW rows: {e}")))
    };
    let lowered = batches
        .iter()
        .map(|b| relabel(b, &lower))
        .collect::<Result<Vec<_>>>()?;
    let ctx = SessionContext::new();
    let table = MemTable::try_new(lower, vec![lowered]).map_err(from_df)?;
    ctx.register_table("show_rows", Arc::new(table))
        .map_err(from_df)?;
    let sql = format!("SELECT * FROM show_rows{}", lower_case_names(rows));
    let kept = ctx
        .sql(&sql)
        .await
        .map_err(from_df)?
        .collect()
        .await
        .map_err(from_df)?;
    let kept = kept
        .iter()
        .map(|b| relabel(b, &Arc::new(Schema::new(schema.fields().clone()))))
        .collect::<Result<Vec<_>>>()?;
    Ok(Output::Rows {
        schema,
        stream: futures::stream::iter(kept.into_iter().map(Ok)).boxed(),
    })
}
