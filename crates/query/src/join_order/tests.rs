//! The join order rule on plans over tables with known statistics.

use super::reorder;
use async_trait::async_trait;
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::catalog::default_table_source::provider_as_source;
use datafusion::catalog::{Session, TableProvider};
use datafusion::common::stats::Precision;
use datafusion::common::{not_impl_err, ColumnStatistics, Result, ScalarValue, Statistics};
use datafusion::logical_expr::{col, lit, JoinType, LogicalPlan, LogicalPlanBuilder, TableType};
use datafusion::physical_plan::ExecutionPlan;
use datafusion::prelude::Expr;
use std::sync::Arc;

/// A table known only by its statistics: `rows` rows, each Int32 column spanning [1, max].
#[derive(Debug)]
struct Stats {
    schema: SchemaRef,
    statistics: Statistics,
}

impl Stats {
    fn table(rows: usize, columns: &[(&str, i32)]) -> Arc<dyn TableProvider> {
        let schema = Arc::new(Schema::new(
            columns
                .iter()
                .map(|(n, _)| Field::new(*n, DataType::Int32, true))
                .collect::<Vec<_>>(),
        ));
        let column_statistics = columns
            .iter()
            .map(|(_, max)| ColumnStatistics {
                min_value: Precision::Inexact(ScalarValue::Int32(Some(1))),
                max_value: Precision::Inexact(ScalarValue::Int32(Some(*max))),
                ..Default::default()
            })
            .collect();
        Arc::new(Stats {
            schema,
            statistics: Statistics {
                num_rows: Precision::Inexact(rows),
                total_byte_size: Precision::Absent,
                column_statistics,
            },
        })
    }
}

#[async_trait]
impl TableProvider for Stats {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    fn statistics(&self) -> Option<Statistics> {
        Some(self.statistics.clone())
    }

    async fn scan(
        &self,
        _state: &dyn Session,
        _projection: Option<&Vec<usize>>,
        _filters: &[Expr],
        _limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        not_impl_err!("statistics only")
    }
}

fn scan(name: &str, table: Arc<dyn TableProvider>) -> LogicalPlanBuilder {
    LogicalPlanBuilder::scan(name, provider_as_source(table), None).unwrap()
}

/// Two fact tables sharing only an item key, then a date dimension filtered to a tenth: the
/// shape of TPC-DS Q72 (catalog_sales, inventory, date_dim).
fn facts_then_dimension() -> LogicalPlan {
    let sales = Stats::table(1_000_000, &[("s_item", 1000), ("s_date", 1000)]);
    let stock = Stats::table(10_000_000, &[("k_item", 1000), ("k_date", 1000)]);
    let dates = Stats::table(1000, &[("d_date", 1000), ("d_year", 10)]);
    let dates = scan("dates", dates)
        .filter(col("dates.d_year").eq(lit(5)))
        .unwrap()
        .build()
        .unwrap();
    scan("sales", sales)
        .join_on(
            scan("stock", stock).build().unwrap(),
            JoinType::Inner,
            vec![col("sales.s_item").eq(col("stock.k_item"))],
        )
        .unwrap()
        .join_on(
            dates,
            JoinType::Inner,
            vec![col("sales.s_date").eq(col("dates.d_date"))],
        )
        .unwrap()
        .build()
        .unwrap()
}

/// The tables of the innermost join, left first.
fn first_join(plan: &LogicalPlan) -> Vec<String> {
    if let LogicalPlan::Join(j) = plan {
        if !matches!(j.left.as_ref(), LogicalPlan::Join(_))
            && !matches!(j.right.as_ref(), LogicalPlan::Join(_))
        {
            return [&j.left, &j.right].iter().map(|p| table_of(p)).collect();
        }
    }
    plan.inputs()
        .into_iter()
        .map(first_join)
        .find(|t| !t.is_empty())
        .unwrap_or_default()
}

fn table_of(plan: &LogicalPlan) -> String {
    match plan {
        LogicalPlan::TableScan(s) => s.table_name.to_string(),
        p => p.inputs().first().map(|i| table_of(i)).unwrap_or_default(),
    }
}

#[test]
fn the_filtered_dimension_joins_the_smaller_fact_first() {
    let plan = facts_then_dimension();
    assert_eq!(first_join(&plan), ["sales", "stock"]);
    let reordered = reorder(plan.clone()).unwrap();
    assert!(reordered.transformed);
    // The dimension (about 100 rows) is the build side of the first join.
    assert_eq!(first_join(&reordered.data), ["dates", "sales"]);
    // The same columns in the same order as before.
    assert_eq!(reordered.data.schema(), plan.schema());
}

#[test]
fn two_joined_tables_are_left_alone() {
    let a = Stats::table(10, &[("a", 10)]);
    let b = Stats::table(1_000_000, &[("b", 10)]);
    let plan = scan("a", a)
        .join_on(
            scan("b", b).build().unwrap(),
            JoinType::Inner,
            vec![col("a.a").eq(col("b.b"))],
        )
        .unwrap()
        .build()
        .unwrap();
    assert!(!reorder(plan).unwrap().transformed);
}

#[test]
fn an_outer_join_stays_above_the_reordered_inner_joins() {
    let extra = Stats::table(100, &[("e_item", 1000)]);
    let plan = LogicalPlanBuilder::from(facts_then_dimension())
        .join_on(
            scan("extra", extra).build().unwrap(),
            JoinType::Left,
            vec![col("sales.s_item").eq(col("extra.e_item"))],
        )
        .unwrap()
        .build()
        .unwrap();
    let reordered = reorder(plan.clone()).unwrap().data;
    let LogicalPlan::Join(top) = &reordered else {
        panic!("the left join stays on top: {reordered}");
    };
    assert_eq!(top.join_type, JoinType::Left);
    assert_eq!(first_join(&top.left), ["dates", "sales"]);
    assert_eq!(reordered.schema(), plan.schema());
}
