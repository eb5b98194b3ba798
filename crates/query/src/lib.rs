//! DataFusion over Basalt's tablets: [`BasaltTable`] (the table provider), scans with partition,
//! bucket, segment and key-range pruning, merge-on-read for Aggregate/Unique tables, the
//! physical rules and kernels Basalt adds (LIKE, lazy conjunctions), and the INSERT sink.

mod binary_json;
mod enum_numbers;
mod fast_like;
mod full_text_indexes;
mod join_order;
mod key_range;
mod lazy_conjunction;
mod lenient_store;
mod merge_exec;
mod nested_literal_types;
mod outer_aggregate_calls;
mod outer_aggregates;
mod provider;
mod pruning;
mod query_planner;
mod recursion_depth;
mod scalar_subquery_rows;
mod scan;
mod scan_io;
mod scanned_tables;
mod segment_scan;
mod set_multiplicity;
mod sink;
mod subquery_apply;
mod subquery_exprs;
mod table_statistics;
mod tablet_scan;
mod union_nullability;
mod values_subqueries;

pub use binary_json::BinaryJsonColumns;
pub use enum_numbers::EnumNumbers;
pub use fast_like::FastLikeRule;
pub use full_text_indexes::FullTextIndexes;
pub use join_order::ReorderJoins;
pub use lenient_store::{fit_batch, StoreWarning, StoreWarnings};
pub use nested_literal_types::RetypeNestedLiterals;
pub use outer_aggregate_calls::outer_aggregate_call;
pub use outer_aggregates::{aggregates_outer_values, OuterAggregates};
pub use provider::{table_schema, BasaltTable};
pub use query_planner::BasaltQueryPlanner;
pub use recursion_depth::{limited_recursion_name, RecursionDepth};
pub use scalar_subquery_rows::SingleRowScalarSubqueries;
pub use scan::{register_segment_store, ScanReports};
pub use set_multiplicity::SetOperationMultiplicity;
pub use sink::{
    compute_generated, delete_rows, GeneratedIds, InsertLabel, KeyMoves, NextInsert,
    PartitionTargets, TargetPartitions,
};
pub use subquery_apply::{
    ApplyRefusedSubqueries, ApplyRemainingSubqueries, SubqueryApply, SubqueryApplyExec,
};
pub use subquery_exprs::{subquery_of, subquery_of_mut};
pub use tablet_scan::{BackendStorage, ClusterScans, TabletScanExec, TabletScanSpec};
pub use union_nullability::UnionNullability;
pub use values_subqueries::ValuesWithSubqueries;
