//! Basalt's metadata: databases, tables (schema, key model, partitions, buckets), tablets and their
//! visible rowsets, users with their privileges and roles, workload groups and policies, and persisted global variables — behind
//! the [`Catalog`] and [`TabletCatalog`] traits. [`LocalCatalog`] keeps them in one `redb` file:
//! every change is one durable transaction; readers get cheap immutable snapshots
//! (`Arc<TableMeta>`).

mod api;
mod auto_partitions;
mod backends;
mod declared_order;
mod load_jobs;
mod local;
mod model;
mod partition_value;
mod partitions;
mod privileges;
mod procedures;
mod store;
mod table_keys;
mod temporary_partitions;
mod users;

pub use api::{Catalog, CompactedRowset, NewRowset, TabletCatalog};
pub use auto_partitions::{
    auto_partition_for, check_auto_partition, list_partition_name, AutoPartition, DATE_TRUNC_UNITS,
};
pub use backends::{parse_backend_address, replication_num, BackendMeta};
pub use load_jobs::LoadJobRecord;
pub use local::{LocalCatalog, DEFAULT_MAX_TABLET_VERSIONS};
pub use model::*;
pub use partition_value::PartitionValue;
pub use partitions::check_new_partition;
pub use privileges::{AccessRights, GrantObject, Grants, Privilege, PrivilegeSet, RoleMeta};
pub use procedures::{ParameterMode, ProcedureMeta, ProcedureParameter};
pub use table_keys::{
    AllowedValues, ForeignKeyMeta, GeneratedMeta, IndexColumnMeta, IndexKind, IndexMeta,
};
pub use temporary_partitions::PartitionReplacement;
pub use users::{native_password_hash, UserMeta, WorkloadGroupMeta, WorkloadPolicyMeta};
