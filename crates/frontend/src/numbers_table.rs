//! Doris's `numbers("number" = "N")` table: one BIGINT column `number` holding 0 .. N-1, made
//! lazily (DataFusion's `range`), so a large N costs no memory up front. The statement rewrite
//! turns its `"key" = "value"` arguments into literal pairs (`local_calls`).

use basalt_common::BasaltError;
use datafusion::catalog::{TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::common::{plan_err, Column, Result};
use datafusion::datasource::{provider_as_source, ViewTable};
use datafusion::logical_expr::{lit, Expr, LogicalPlanBuilder};
use std::sync::Arc;

/// The function's name.
pub const NAME: &str = "numbers";

/// `numbers(..)`.
#[derive(Debug, Default)]
pub struct NumbersFunction;

impl TableFunctionImpl for NumbersFunction {
    fn call_with_args(&self, args: TableFunctionArgs) -> Result<Arc<dyn TableProvider>> {
        let texts: Vec<String> = args
            .exprs()
            .iter()
            .map(|e| match e {
                Expr::Literal(v, _) => Ok(v.to_string()),
                other => plan_err!("numbers() takes \"key\" = \"value\" properties, not {other}"),
            })
            .collect::<Result<_>>()?;
        let mut count = None;
        for pair in texts.chunks(2) {
            match pair {
                [key, value] if key.eq_ignore_ascii_case("number") => {
                    count = Some(
                        value
                            .trim()
                            .parse::<i64>()
                            .ok()
                            .filter(|n| *n >= 0)
                            .ok_or_else(|| {
                                datafusion::error::DataFusionError::External(Box::new(
                                    BasaltError::InvalidData(format!(
                                    "numbers(): \"number\" must be a count of rows, not '{value}'"
                                )),
                                ))
                            })?,
                    );
                }
                [key, _] => return plan_err!("numbers(): unknown property \"{key}\""),
                _ => return plan_err!("numbers() takes \"key\" = \"value\" properties"),
            }
        }
        let Some(count) = count else {
            return plan_err!("numbers() needs \"number\" = \"<rows>\"");
        };
        let bounds = [lit(0i64), lit(count)];
        let range = datafusion::functions_table::generate_series::RangeFunc {}
            .call_with_args(TableFunctionArgs::new(&bounds, args.session()))?;
        let plan = LogicalPlanBuilder::scan(NAME, provider_as_source(range), None)?
            .project(vec![
                Expr::Column(Column::from_name("value")).alias("number")
            ])?
            .build()?;
        Ok(Arc::new(ViewTable::new(plan, None)))
    }
}
