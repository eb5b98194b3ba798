//! The tablet engine: routes rows to tablets (partition x bucket), writes immutable sorted
//! segment files (Parquet with page statistics), applies the key models' merge rules, publishes
//! loads atomically through the catalog, reads tablets back, compacts them in the background,
//! and removes files nothing references.
//! Storage knows nothing of SQL.

pub mod bit_values;
pub mod column_cache;
pub mod compaction;
mod compaction_lineage;
pub mod conform;
pub mod delete_bitmap;
mod engine;
pub mod files;
pub mod hashing;
pub mod json_columns;
pub mod merge;
mod pk_index;
mod point_lookup;
mod read_tracker;
pub mod remote;
pub mod rewrite;
pub mod routing;
pub mod row_cache;
pub mod row_store;
pub mod segment;
pub mod segment_lru;
mod segment_stats;
pub mod segment_store;
mod staged_deletes;
pub mod update_rows;
mod writer;

pub use compaction::policy::CompactionPolicy;
pub use compaction::CompactionStats;
pub use engine::{KeyFilter, StorageEngine, WriteBufferLimits};
pub use read_tracker::ReadGuard;
pub use rewrite::{RewriteRows, RewriteScope, RewriteStats};
pub use update_rows::{RowUpdate, UpdateStats, UpdatedRows};
pub use writer::{no_partition_error, LoadSummary, LoadWriter};

fn storage_err(e: impl std::fmt::Display) -> basalt_common::BasaltError {
    basalt_common::BasaltError::Storage(e.to_string())
}
