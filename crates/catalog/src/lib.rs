//! Basalt's metadata: databases, tables (schema, key model, partitions, buckets), tablets and their
//! visible rowsets, users, and persisted global variables. Every change is one durable `redb`
//! transaction; readers get cheap immutable snapshots (`Arc<TableMeta>`).

mod catalog;
mod load_jobs;
mod model;
mod partition_value;
mod store;
mod table_def;
mod users;

pub use catalog::{Catalog, CompactedRowset, NewRowset, DEFAULT_MAX_TABLET_VERSIONS};
pub use load_jobs::LoadJobRecord;
pub use model::*;
pub use partition_value::PartitionValue;
pub use users::{native_password_hash, UserMeta, WorkloadGroupMeta, WorkloadPolicyMeta};
