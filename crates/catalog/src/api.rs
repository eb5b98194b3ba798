//! The catalog as the rest of Basalt sees it: two traits, so a replicated or remote catalog can
//! stand behind them later. [`TabletCatalog`] is what storage needs (tables by id, ids, versions,
//! publishing rowsets); [`Catalog`] adds what the frontend needs (DDL, users, workload groups and
//! policies, global variables, load labels). [`crate::LocalCatalog`] implements both on `redb`.

use crate::load_jobs::LoadJobRecord;
use crate::model::*;
use crate::privileges::RoleMeta;
use crate::users::{UserMeta, WorkloadGroupMeta, WorkloadPolicyMeta};
use basalt_common::Result;
use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

/// A segment set written for one tablet, to be published as a new rowset.
#[derive(Debug, Clone)]
pub struct NewRowset {
    pub tablet_id: TabletId,
    pub segments: Vec<SegmentMeta>,
    /// Unique keys: new delete bitmaps (segment path -> bitmap) for this tablet's segments.
    pub delete_bitmaps: Vec<(String, DeleteBitmap)>,
    /// The table's `schema_version` the segments were written with; the publish fails if an
    /// ALTER TABLE changed the columns since.
    pub schema_version: u64,
    /// Scale-out: replicas of the tablet that do not hold the segments (their backend was down
    /// or failed the write); the publish adds them to the tablet's `stale_replicas`.
    pub missing_replicas: Vec<BackendId>,
    /// Scale-out: the tablet's replicas when the write began; the publish marks stale any
    /// replica not among them (a move added it since, so it got none of the segments). Empty
    /// on a single node.
    pub seen_replicas: Vec<BackendId>,
}

/// The output of compacting a run of adjacent rowsets of one tablet, to replace them.
#[derive(Debug, Clone)]
pub struct CompactedRowset {
    pub tablet_id: TabletId,
    /// Id of the output rowset, allocated by the caller (`allocate_id`) before the publish, so
    /// what the output was made of can be recorded before any reader can see it.
    pub output_id: RowsetId,
    /// Ids of the replaced rowsets: adjacent in the tablet, in version order.
    pub inputs: Vec<RowsetId>,
    pub segments: Vec<SegmentMeta>,
    /// Delete bitmaps of the output segments (Unique keys: rows replaced by loads that published
    /// while the compaction ran).
    pub delete_bitmaps: Vec<(String, DeleteBitmap)>,
    /// The delete bitmap of each input segment (by path; `None`: no deletes) as the output was
    /// made: the publish is stale when one has changed since, as the output would bring rows
    /// deleted meanwhile back.
    pub input_deletes_seen: Vec<(String, Option<DeleteBitmap>)>,
    /// False when the output segments hold disjoint, ordered key ranges.
    pub segments_overlap: bool,
    /// Scale-out: replicas that do not hold the output (skipped as stale, or their compaction
    /// failed); the publish adds them to the tablet's `stale_replicas`.
    pub missing_replicas: Vec<BackendId>,
    /// Scale-out: the tablet's replicas when the compaction began (see
    /// [`NewRowset::seen_replicas`]).
    pub seen_replicas: Vec<BackendId>,
}

/// What the storage engine asks of the catalog: snapshots of tables, fresh ids, and atomic
/// publication of the rowsets loads and compactions write.
pub trait TabletCatalog: Send + Sync {
    fn databases(&self) -> Vec<DatabaseMeta>;
    /// The tables of a database (1049 if it does not exist).
    fn tables(&self, database: &str) -> Result<Vec<Arc<TableMeta>>>;
    /// One table by name (names are case-insensitive; 1049/1146 when missing).
    fn table(&self, database: &str, name: &str) -> Result<Arc<TableMeta>>;
    /// The current snapshot of a table, if it still exists.
    fn table_by_id(&self, id: TableId) -> Option<Arc<TableMeta>>;
    /// A fresh id, unique across tables, partitions, tablets and rowsets.
    fn allocate_id(&self) -> u64;
    /// Fails if adding one rowset to `tablet` would exceed the version bound.
    fn check_versions(&self, tablet: &TabletMeta) -> Result<()>;
    /// Reserves `count` consecutive AUTO_INCREMENT values of a table, none below `at_least`;
    /// returns the first. Durable: after a restart no reserved value is handed out again.
    fn reserve_auto_increment(&self, table_id: TableId, count: u64, at_least: u64) -> Result<u64>;
    /// Publishes one load: every new rowset becomes visible together, in one durable
    /// transaction, with its label record when given. Fails (publishing nothing) if the table
    /// or a target tablet is gone, the label is taken, or a tablet would pass the version bound.
    fn publish_load(
        &self,
        table_id: TableId,
        rowsets: Vec<NewRowset>,
        job: Option<LoadJobRecord>,
    ) -> Result<Arc<TableMeta>>;
    /// [`TabletCatalog::publish_load`] without a label.
    fn publish(&self, table_id: TableId, rowsets: Vec<NewRowset>) -> Result<Arc<TableMeta>> {
        self.publish_load(table_id, rowsets, None)
    }
    /// Publishes a compaction: in one durable transaction, the input rowsets of a tablet (and
    /// their delete bitmaps) give way to one rowset covering their versions. Fails, changing
    /// nothing, unless the tablet still holds exactly those rowsets, adjacent and in order.
    /// Returns the new table and the replaced rowsets (whose files are the caller's to delete).
    fn replace_rowsets(
        &self,
        table_id: TableId,
        compacted: CompactedRowset,
    ) -> Result<(Arc<TableMeta>, Vec<Arc<RowsetMeta>>)>;
    /// Replaces a table's definition and data in one durable transaction (ALTER TABLE): `new`
    /// is `based_on` changed, its tablets holding the rowsets the table should have afterwards
    /// (rewritten ones under fresh ids, or the old ones untouched). Fails with
    /// `BasaltError::ConcurrentDdl` (1412), changing nothing, if the table's schema or any
    /// tablet's rowsets changed since `based_on` was read; with 1050 if a rename's new name is
    /// taken. Returns the new table and the rowsets that left it (files for the caller to delete).
    fn alter_table(
        &self,
        based_on: &TableMeta,
        new: TableMeta,
    ) -> Result<(Arc<TableMeta>, Vec<Arc<RowsetMeta>>)>;
    /// Every segment path some visible rowset refers to.
    fn referenced_segments(&self) -> HashSet<String>;

    /// AUTO PARTITION: adds `partitions` (name and bound, each new or already there with the
    /// same bound, as a concurrent load may have made it) to table `table_id`, their tablets
    /// placed, and returns the table as it is then. Catalogs that cannot create partitions
    /// (a backend's) refuse; a transaction's creates them in the catalog it stages over.
    fn add_auto_partitions(
        &self,
        table_id: TableId,
        partitions: Vec<(String, PartitionBound)>,
    ) -> Result<Arc<TableMeta>> {
        let _ = partitions;
        Err(basalt_common::BasaltError::NotSupported(format!(
            "creating AUTO PARTITION partitions here (table id {table_id}): load the rows outside a transaction"
        )))
    }
}

/// Everything the frontend asks of the catalog: storage's part plus DDL, accounts, workload
/// administration, variables and load labels.
pub trait Catalog: TabletCatalog {
    /// Publishes a SQL transaction: each table's rowsets and delete bitmaps become `new`'s
    /// (same definition and tablets), all tables in one durable catalog transaction. Fails with
    /// `BasaltError::ConcurrentDdl` (1412), changing nothing, if any table's definition or
    /// rowsets changed since its `based_on` was read. Returns the rowsets that left the tables
    /// (files for the caller to delete).
    fn publish_tables(
        &self,
        changes: Vec<(Arc<TableMeta>, TableMeta)>,
    ) -> Result<Vec<Arc<RowsetMeta>>>;
    /// The most rowsets a tablet may have; a publish that would pass it fails.
    fn max_tablet_versions(&self) -> usize;
    fn set_max_tablet_versions(&self, max: usize);
    /// Scale-out catch-up: removes `backend` from the stale replicas of tablet `tablet_id` of
    /// table `table_id` if it holds (`holds`, catalog segment paths verified on it) every
    /// segment of the tablet's visible rowsets, in one durable transaction. Ok(false), changing
    /// nothing, when a load or compaction published segments it does not hold meanwhile (copy
    /// those and try again) or when it is not stale (any more).
    fn clear_stale_replica(
        &self,
        table_id: TableId,
        tablet_id: TabletId,
        backend: BackendId,
        holds: &HashSet<String>,
    ) -> Result<bool>;

    // ------------------------------------------------------------ databases
    /// How database, table and view names keep and compare their case
    /// (`lower_case_table_names`, fixed when the catalog was created). The catalog's lookups
    /// apply it; callers compare names with it too (privileges, statements naming a table).
    fn table_name_case(&self) -> basalt_common::TableNameCase;
    fn database_exists(&self, name: &str) -> bool;
    /// Creates a database; false if it existed and `if_not_exists` was given.
    fn create_database(&self, name: &str, if_not_exists: bool) -> Result<bool>;
    /// Drops a database and its tables; returns the tables (their files are the caller's to
    /// delete), or `None` when missing and `if_exists` was given.
    fn drop_database(&self, name: &str, if_exists: bool) -> Result<Option<Vec<Arc<TableMeta>>>>;

    // ------------------------------------------------------------ tables
    /// Creates a complete table (validated, ids from [`TabletCatalog::allocate_id`]); false if
    /// one of that name existed and `if_not_exists` was given.
    fn create_table(&self, table: TableMeta, if_not_exists: bool) -> Result<bool>;
    /// Drops a table; returns it (its files are the caller's to delete) or `None` when missing
    /// and `if_exists` was given.
    fn drop_table(
        &self,
        database: &str,
        name: &str,
        if_exists: bool,
    ) -> Result<Option<Arc<TableMeta>>>;
    /// Removes every rowset of the table; returns the table as it was (files to delete).
    fn truncate_table(&self, database: &str, name: &str) -> Result<Arc<TableMeta>>;
    /// Adds an empty partition with the table's bucket count to the table `based_on` is a
    /// snapshot of; fails if the name is taken or the bound overlaps another partition's, and
    /// with `BasaltError::ConcurrentDdl` (1412) if the table or its partitions changed since the
    /// snapshot (the bound may depend on them: resolve it again). A temporary partition (Doris)
    /// may overlap formal partitions but no other temporary one; no two partitions of either
    /// kind share a name.
    fn add_partition(
        &self,
        based_on: &TableMeta,
        partition: &str,
        bound: PartitionBound,
        temporary: bool,
    ) -> Result<()>;
    /// Doris's CLEAN LABEL: forgets the load labels of `database` (only `label` when given);
    /// returns how many.
    fn clean_labels(&self, database: &str, label: Option<&str>) -> Result<usize>;
    /// Renames a partition (1735 if missing, 1517 if the new name is taken).
    fn rename_partition(&self, database: &str, table: &str, from: &str, to: &str) -> Result<()>;
    /// Drops a partition (a temporary one when `temporary`); returns it (its files are the
    /// caller's to delete).
    fn drop_partition(
        &self,
        database: &str,
        table: &str,
        partition: &str,
        if_exists: bool,
        temporary: bool,
    ) -> Result<Option<PartitionMeta>>;
    /// Doris's `REPLACE PARTITION (..) WITH TEMPORARY PARTITION (..)`: the named temporary
    /// partitions become formal in place of the named formal ones, atomically; returns the
    /// replaced partitions (their files are the caller's to delete).
    fn replace_partitions(
        &self,
        database: &str,
        table: &str,
        replacement: &crate::PartitionReplacement,
    ) -> Result<Vec<PartitionMeta>>;

    // ------------------------------------------------------------ load labels
    fn load_job(&self, database: &str, label: &str) -> Option<Arc<LoadJobRecord>>;
    fn load_jobs(&self, database: &str) -> Vec<Arc<LoadJobRecord>>;

    // ------------------------------------------------------------ workload groups and policies
    fn workload_groups(&self) -> Vec<WorkloadGroupMeta>;
    fn put_workload_group(&self, group: WorkloadGroupMeta) -> Result<()>;
    fn drop_workload_group(&self, name: &str) -> Result<()>;
    fn workload_policies(&self) -> Vec<WorkloadPolicyMeta>;
    fn put_workload_policy(&self, policy: WorkloadPolicyMeta) -> Result<()>;
    fn drop_workload_policy(&self, name: &str) -> Result<()>;

    // ------------------------------------------------------------ users
    /// Changes one account in place; false when it does not exist.
    fn update_user(
        &self,
        user: &str,
        host: &str,
        change: &mut dyn FnMut(&mut UserMeta),
    ) -> Result<bool>;
    /// The accounts of this user name, from any host.
    fn users_named(&self, user: &str) -> Vec<UserMeta>;
    /// The account `user` logs in as from `host`: the exact host first, then a matching pattern.
    fn find_user(&self, user: &str, host: &str) -> Option<UserMeta>;
    fn users(&self) -> Vec<UserMeta>;
    /// Creates an account; false if it existed and `if_not_exists` was given.
    fn create_user(
        &self,
        user: &str,
        host: &str,
        password: Option<&str>,
        if_not_exists: bool,
    ) -> Result<bool>;
    /// Drops an account; false if it did not exist and `if_exists` was given.
    fn drop_user(&self, user: &str, host: &str, if_exists: bool) -> Result<bool>;
    fn set_password(&self, user: &str, host: &str, password: &str) -> Result<()>;

    // ------------------------------------------------------------ roles
    fn roles(&self) -> Vec<RoleMeta>;
    fn role(&self, name: &str) -> Option<RoleMeta>;
    /// Creates a role without privileges; false if it existed and `if_not_exists` was given.
    fn create_role(&self, name: &str, if_not_exists: bool) -> Result<bool>;
    /// Drops a role and takes it from every account; false if it did not exist and
    /// `if_exists` was given.
    fn drop_role(&self, name: &str, if_exists: bool) -> Result<bool>;
    /// Changes one role in place (its grants); false when it does not exist.
    fn update_role(&self, name: &str, change: &mut dyn FnMut(&mut RoleMeta)) -> Result<bool>;

    // ------------------------------------------------------------ global variables
    /// The views of `database`, by name.
    fn views(&self, database: &str) -> Vec<Arc<ViewMeta>>;
    fn view(&self, database: &str, name: &str) -> Option<Arc<ViewMeta>>;
    /// Creates (or, with `or_replace`, replaces) a view; 1050 when a table or (without
    /// `or_replace`) a view has the name.
    fn create_view(&self, view: ViewMeta, or_replace: bool) -> Result<()>;
    /// ALTER VIEW: replaces an existing view's definition (1146 when there is none).
    fn alter_view(&self, view: ViewMeta) -> Result<()>;
    /// Drops a view; false when it did not exist and `if_exists` (else 1051).
    fn drop_view(&self, database: &str, name: &str, if_exists: bool) -> Result<bool>;

    // ------------------------------------------------------------ stored procedures
    /// The stored routines of `database` (procedures and functions), by lower-case name.
    fn procedures(&self, database: &str) -> Vec<Arc<crate::procedures::ProcedureMeta>>;
    /// A stored function by name (names match without regard to case; a function and a
    /// procedure may share a name, as in MySQL).
    fn function(&self, database: &str, name: &str)
        -> Option<Arc<crate::procedures::ProcedureMeta>>;
    /// Drops a stored function; false when it did not exist and `if_exists` (else 1305).
    fn drop_function(&self, database: &str, name: &str, if_exists: bool) -> Result<bool>;
    /// A procedure by name (names match without regard to case).
    fn procedure(
        &self,
        database: &str,
        name: &str,
    ) -> Option<Arc<crate::procedures::ProcedureMeta>>;
    /// Creates a procedure (or a function, when `returns` is set); false if one of the name
    /// existed and `if_not_exists` was given (else 1304); 1049 when the database does not
    /// exist.
    fn create_procedure(
        &self,
        procedure: crate::procedures::ProcedureMeta,
        if_not_exists: bool,
    ) -> Result<bool>;
    /// Drops a procedure; false when it did not exist and `if_exists` (else 1305).
    fn drop_procedure(&self, database: &str, name: &str, if_exists: bool) -> Result<bool>;

    fn global_variables(&self) -> BTreeMap<String, String>;

    // ------------------------------------------------------------ scale-out
    /// The backends tablets are placed on (none on a single node).
    fn backends(&self) -> Vec<crate::backends::BackendMeta>;
    /// ALTER SYSTEM ADD BACKEND "host:port": new tablets are placed on it from now on.
    fn add_backend(&self, address: &str) -> Result<crate::backends::BackendMeta>;
    /// ALTER SYSTEM DROP BACKEND "host:port"; refused while it holds tablet replicas.
    fn drop_backend(&self, address: &str) -> Result<()>;
    /// ALTER SYSTEM DECOMMISSION BACKEND "host:port" (true) and CANCEL DECOMMISSION (false):
    /// a decommissioned backend gets no new tablets; its replicas are moved away.
    fn set_backend_decommissioned(
        &self,
        address: &str,
        decommissioned: bool,
    ) -> Result<crate::backends::BackendMeta>;
    /// A replica move's first step: adds `backend` to tablet `tablet_id`'s replicas as a
    /// stale, joining replica (loads write it, it catches up, it does not count towards a
    /// write's majority yet). Ok(false) when it is a replica already or the tablet is gone.
    fn join_replica(
        &self,
        table_id: TableId,
        tablet_id: TabletId,
        backend: BackendId,
    ) -> Result<bool>;
    /// A replica move's last step: removes `from` from the tablet's replicas and `to`'s
    /// joining mark, in one publish, if `to` is readable (caught up) now; Ok(false), changing
    /// nothing, otherwise.
    fn end_replica_move(
        &self,
        table_id: TableId,
        tablet_id: TabletId,
        from: BackendId,
        to: BackendId,
    ) -> Result<bool>;
    /// Gives a move up: removes the joining replica `to` (Ok(false) when it is not joining).
    fn abandon_replica_move(
        &self,
        table_id: TableId,
        tablet_id: TabletId,
        to: BackendId,
    ) -> Result<bool>;
    fn set_global_variable(&self, name: &str, value: &str) -> Result<()>;
}
