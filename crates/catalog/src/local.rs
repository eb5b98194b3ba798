//! [`LocalCatalog`], the catalog of one node: in-memory snapshots for readers, serialized
//! durable writers on an embedded `redb` file.
//!
//! Writers take `writer` (one at a time), compute the new records, commit them to the store in one
//! transaction, and only then swap the in-memory state, so a failed commit changes nothing.

use crate::api::{Catalog, CompactedRowset, NewRowset, TabletCatalog};
use crate::load_jobs::LoadJobRecord;
use crate::model::*;
use crate::partitions::check_new_partition;
use crate::privileges::RoleMeta;
use crate::store::{Op, Store};
use crate::users::{native_password_hash, UserMeta, WorkloadGroupMeta, WorkloadPolicyMeta};
use basalt_common::clock::now_ms;
use basalt_common::{BasaltError, Result, TableNameCase};
use parking_lot::{Mutex, RwLock};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

mod backends;
mod name_case;
mod procedures;
mod replica_moves;
mod views;

/// Default bound on a tablet's rowset count (Doris's `max_tablet_version_num`).
pub const DEFAULT_MAX_TABLET_VERSIONS: usize = 500;

/// The maps of databases, tables and views are keyed by [`TableNameCase::key`] of their names
/// (the records keep the stored spelling).
#[derive(Default, Clone)]
struct State {
    databases: BTreeMap<String, DatabaseMeta>,
    /// database -> table name -> table
    tables: BTreeMap<String, BTreeMap<String, Arc<TableMeta>>>,
    users: BTreeMap<String, UserMeta>,
    global_variables: BTreeMap<String, String>,
    /// Committed loads by `LoadJobRecord::key` (labels are unique per database).
    load_jobs: BTreeMap<String, Arc<LoadJobRecord>>,
    workload_groups: BTreeMap<String, WorkloadGroupMeta>,
    workload_policies: BTreeMap<String, WorkloadPolicyMeta>,
    roles: BTreeMap<String, RoleMeta>,
    /// database -> view name -> view
    views: BTreeMap<String, BTreeMap<String, Arc<ViewMeta>>>,
    /// database -> lower-case procedure name -> procedure
    procedures: BTreeMap<String, BTreeMap<String, Arc<crate::procedures::ProcedureMeta>>>,
    /// Scale-out: the backends tablets are placed on, by id (empty on a single node).
    backends: BTreeMap<BackendId, crate::backends::BackendMeta>,
}

/// The catalog of one node: an embedded `redb` file, with in-memory snapshots for readers.
pub struct LocalCatalog {
    store: Store,
    state: RwLock<State>,
    writer: Mutex<()>,
    next_id: Mutex<u64>,
    /// Per table: (next AUTO_INCREMENT value, end of the persisted reservation).
    auto_increment: Mutex<HashMap<TableId, (u64, u64)>>,
    /// Loads fail rather than give a tablet more rowsets than this.
    max_tablet_versions: AtomicUsize,
    /// When labels were last expired (milliseconds since the epoch).
    labels_expired_ms: std::sync::atomic::AtomicI64,
    /// `lower_case_table_names`, fixed when the catalog was created.
    name_case: TableNameCase,
}

/// How often publishing a load also forgets expired labels.
const LABEL_EXPIRY_INTERVAL_MS: i64 = 60 * 1000;

fn label_expired(job: &LoadJobRecord, now: i64) -> bool {
    job.finished_ms.saturating_add(LABEL_KEEP_MS) < now
}

const NEXT_ID: &str = "next_id";
/// Counter key prefix of a table's AUTO_INCREMENT high-water mark.
const AUTO_INCREMENT_PREFIX: &str = "auto_increment/";
/// AUTO_INCREMENT values reserved (and persisted) at a time; values reserved but not used
/// before a restart are skipped, as InnoDB skips them.
const AUTO_INCREMENT_BATCH: u64 = 1024;

/// How long a committed load's label is remembered (Doris keeps labels for three days).
const LABEL_KEEP_MS: i64 = 3 * 24 * 3600 * 1000;

fn to_json<T: serde::Serialize>(v: &T) -> Result<String> {
    serde_json::to_string(v).map_err(|e| BasaltError::Catalog(e.to_string()))
}

fn from_json<T: serde::de::DeserializeOwned>(s: &str) -> Result<T> {
    serde_json::from_str(s)
        .map_err(|e| BasaltError::Catalog(format!("corrupt catalog record: {e}")))
}

impl LocalCatalog {
    /// Opens (or creates) the catalog under `dir`, with the `lower_case_table_names` it was
    /// created with (a new one: 0).
    pub fn open(dir: &Path) -> Result<LocalCatalog> {
        LocalCatalog::open_with(dir, None)
    }

    /// Opens (or creates) the catalog under `dir`; `name_case`, when given, must be the one
    /// the catalog was created with (a new catalog records it; see `name_case.rs`).
    pub fn open_with(dir: &Path, name_case: Option<TableNameCase>) -> Result<LocalCatalog> {
        std::fs::create_dir_all(dir)?;
        let store = Store::open(&dir.join("catalog.redb"))?;
        let loaded = store.load()?;
        let name_case = name_case::settle(&store, &loaded, name_case, dir)?;
        let mut state = State::default();
        let mut max_id = 0u64;
        for d in &loaded.databases {
            let db: DatabaseMeta = from_json(d)?;
            max_id = max_id.max(db.id);
            state.tables.entry(name_case.key(&db.name)).or_default();
            state.databases.insert(name_case.key(&db.name), db);
        }
        let mut rowsets_by_tablet: HashMap<TabletId, Vec<Arc<RowsetMeta>>> = HashMap::new();
        for r in &loaded.rowsets {
            let mut rs: RowsetMeta = from_json(r)?;
            rs.fix_legacy();
            max_id = max_id.max(rs.id);
            rowsets_by_tablet
                .entry(rs.tablet_id)
                .or_default()
                .push(Arc::new(rs));
        }
        let mut bitmaps_by_tablet: HashMap<TabletId, BTreeMap<String, DeleteBitmap>> =
            HashMap::new();
        for (tablet, segment, bitmap) in loaded.delete_bitmaps {
            bitmaps_by_tablet
                .entry(tablet)
                .or_default()
                .insert(segment, bitmap);
        }
        for t in &loaded.tables {
            let mut table: TableMeta = from_json(t)?;
            max_id = max_id.max(table.id);
            for p in table
                .partitions
                .iter_mut()
                .chain(table.temporary_partitions.iter_mut())
            {
                max_id = max_id.max(p.id);
                for tablet in &mut p.tablets {
                    max_id = max_id.max(tablet.id);
                    let mut rs = rowsets_by_tablet.remove(&tablet.id).unwrap_or_default();
                    rs.sort_by_key(|r| r.version);
                    tablet.rowsets = rs;
                    tablet.delete_bitmaps =
                        bitmaps_by_tablet.remove(&tablet.id).unwrap_or_default();
                }
            }
            state
                .tables
                .entry(name_case.key(&table.database))
                .or_default()
                .insert(name_case.key(&table.name), Arc::new(table));
        }
        for v in &loaded.views {
            let view: ViewMeta = from_json(v)?;
            state
                .views
                .entry(name_case.key(&view.database))
                .or_default()
                .insert(name_case.key(&view.name), Arc::new(view));
        }
        for p in &loaded.procedures {
            let procedure: crate::procedures::ProcedureMeta = from_json(p)?;
            state
                .procedures
                .entry(name_case.key(&procedure.database))
                .or_default()
                .insert(procedure.routine_key(), Arc::new(procedure));
        }
        for b in &loaded.backends {
            let backend: crate::backends::BackendMeta = from_json(b)?;
            max_id = max_id.max(backend.id);
            state.backends.insert(backend.id, backend);
        }
        for u in &loaded.users {
            let user: UserMeta = from_json(u)?;
            state
                .users
                .insert(UserMeta::key(&user.user, &user.host), user);
        }
        for r in &loaded.roles {
            let role: RoleMeta = from_json(r)?;
            state.roles.insert(role.name.clone(), role);
        }
        state.global_variables = loaded.variables.into_iter().collect();
        for g in &loaded.workload_groups {
            let group: WorkloadGroupMeta = from_json(g)?;
            max_id = max_id.max(group.id);
            state.workload_groups.insert(group.name.clone(), group);
        }
        for p in &loaded.workload_policies {
            let policy: WorkloadPolicyMeta = from_json(p)?;
            max_id = max_id.max(policy.id);
            state.workload_policies.insert(policy.name.clone(), policy);
        }
        let mut expired_labels = Vec::new();
        for j in &loaded.load_jobs {
            let job: LoadJobRecord = from_json(j)?;
            let key = LoadJobRecord::key(&job.database, &job.label);
            if label_expired(&job, now_ms()) {
                expired_labels.push(Op::DeleteLoadJob(key));
            } else {
                state.load_jobs.insert(key, Arc::new(job));
            }
        }
        if !expired_labels.is_empty() {
            store.commit(expired_labels)?;
        }
        let persisted = loaded
            .counters
            .iter()
            .find(|(k, _)| k == NEXT_ID)
            .map(|(_, v)| *v)
            .unwrap_or(1);
        let auto_increment = loaded
            .counters
            .iter()
            .filter_map(|(k, v)| {
                let id: TableId = k.strip_prefix(AUTO_INCREMENT_PREFIX)?.parse().ok()?;
                Some((id, (*v, *v)))
            })
            .collect();
        let catalog = LocalCatalog {
            auto_increment: Mutex::new(auto_increment),
            store,
            state: RwLock::new(state),
            writer: Mutex::new(()),
            next_id: Mutex::new(persisted.max(max_id + 1)),
            max_tablet_versions: AtomicUsize::new(DEFAULT_MAX_TABLET_VERSIONS),
            labels_expired_ms: std::sync::atomic::AtomicI64::new(now_ms()),
            name_case,
        };
        if catalog.state.read().users.is_empty() {
            let root = UserMeta::new("root", "%", "");
            catalog.store.commit(vec![Op::PutUser(
                UserMeta::key("root", "%"),
                to_json(&root)?,
            )])?;
            catalog
                .state
                .write()
                .users
                .insert(UserMeta::key("root", "%"), root);
        }
        Ok(catalog)
    }

    fn counter_op(&self) -> Op {
        Op::PutCounter(NEXT_ID.to_string(), *self.next_id.lock())
    }

    /// Stores a changed table durably (with the id counter), then shows it in memory.
    fn save_table(&self, table: TableMeta) -> Result<()> {
        self.store.commit(vec![
            Op::PutTable(table.id, to_json(&table)?),
            self.counter_op(),
        ])?;
        self.replace_in_memory(table);
        Ok(())
    }

    fn replace_in_memory(&self, table: TableMeta) {
        self.replace_arc_in_memory(Arc::new(table));
    }

    fn replace_arc_in_memory(&self, table: Arc<TableMeta>) {
        let mut s = self.state.write();
        if let Some(tables) = s.tables.get_mut(&self.key(&table.database)) {
            tables.insert(self.key(&table.name), table);
        }
    }

    /// The map key of a database, table or view name.
    fn key(&self, name: &str) -> String {
        self.name_case.key(name)
    }

    /// The stored spelling of database `name`, if it exists.
    fn database_named(&self, name: &str) -> Option<String> {
        let s = self.state.read();
        s.databases.get(&self.key(name)).map(|d| d.name.clone())
    }
}

impl TabletCatalog for LocalCatalog {
    fn add_auto_partitions(
        &self,
        table_id: TableId,
        partitions: Vec<(String, PartitionBound)>,
    ) -> Result<Arc<TableMeta>> {
        let _w = self.writer.lock();
        let old = self
            .table_by_id(table_id)
            .ok_or_else(|| BasaltError::UnknownTable(format!("table id {table_id}")))?;
        let mut new = (*old).clone();
        for (name, bound) in partitions {
            if let Some(there) = new.partition_by_name(&name) {
                if there.bound == bound {
                    continue;
                }
            }
            let existing: Vec<(String, PartitionBound)> = new
                .partitions
                .iter()
                .map(|p| (p.name.clone(), p.bound.clone()))
                .collect();
            check_new_partition(&name, &bound, &existing)?;
            let buckets = new.distribution.buckets;
            new.partitions
                .push(PartitionMeta::empty(name, bound, buckets, || {
                    self.allocate_id()
                }));
        }
        if new.partitions.len() == old.partitions.len() {
            return Ok(old);
        }
        self.place(&mut new)?;
        self.save_table(new)?;
        self.table_by_id(table_id)
            .ok_or_else(|| BasaltError::UnknownTable(format!("table id {table_id}")))
    }

    fn databases(&self) -> Vec<DatabaseMeta> {
        self.state.read().databases.values().cloned().collect()
    }

    fn tables(&self, database: &str) -> Result<Vec<Arc<TableMeta>>> {
        let s = self.state.read();
        s.tables
            .get(&self.key(database))
            .map(|t| t.values().cloned().collect())
            .ok_or_else(|| BasaltError::UnknownDatabase(self.name_case.stored(database)))
    }

    fn table(&self, database: &str, name: &str) -> Result<Arc<TableMeta>> {
        let s = self.state.read();
        let missing = || {
            let (db, name) = (self.name_case.stored(database), self.name_case.stored(name));
            BasaltError::UnknownTable(format!("{db}.{name}"))
        };
        let tables = s
            .tables
            .get(&self.key(database))
            .ok_or_else(|| BasaltError::UnknownDatabase(self.name_case.stored(database)))?;
        tables.get(&self.key(name)).cloned().ok_or_else(missing)
    }

    fn table_by_id(&self, id: TableId) -> Option<Arc<TableMeta>> {
        let s = self.state.read();
        s.tables
            .values()
            .flat_map(|t| t.values())
            .find(|t| t.id == id)
            .cloned()
    }

    fn allocate_id(&self) -> u64 {
        let mut n = self.next_id.lock();
        let id = *n;
        *n += 1;
        id
    }

    fn check_versions(&self, tablet: &TabletMeta) -> Result<()> {
        let max = self.max_tablet_versions();
        let versions = tablet.rowsets.len() + 1;
        if versions > max {
            return Err(BasaltError::TooManyVersions {
                tablet: tablet.id,
                versions,
                max,
            });
        }
        Ok(())
    }

    fn reserve_auto_increment(&self, table_id: TableId, count: u64, at_least: u64) -> Result<u64> {
        let mut counters = self.auto_increment.lock();
        let entry = counters.entry(table_id).or_insert((1, 1));
        let first = entry.0.max(at_least).max(1);
        let next = first
            .checked_add(count)
            .ok_or_else(|| BasaltError::OutOfRange("AUTO_INCREMENT".into()))?;
        if next > entry.1 {
            let end = next.saturating_add(AUTO_INCREMENT_BATCH);
            self.store.commit(vec![Op::PutCounter(
                format!("{AUTO_INCREMENT_PREFIX}{table_id}"),
                end,
            )])?;
            entry.1 = end;
        }
        entry.0 = next;
        Ok(first)
    }

    fn publish_load(
        &self,
        table_id: TableId,
        rowsets: Vec<NewRowset>,
        job: Option<LoadJobRecord>,
    ) -> Result<Arc<TableMeta>> {
        let _w = self.writer.lock();
        let old = self.table_by_id(table_id).ok_or_else(|| {
            BasaltError::UnknownTable(format!("table id {table_id} (dropped during the load)"))
        })?;
        let now = now_ms();
        let mut job_entry = None;
        if let Some(job) = job {
            let key = LoadJobRecord::key(&job.database, &job.label);
            let taken = self
                .state
                .read()
                .load_jobs
                .get(&key)
                .is_some_and(|j| !label_expired(j, now));
            if taken {
                return Err(BasaltError::LabelAlreadyExists(job.label));
            }
            job_entry = Some((key, Arc::new(job)));
        }
        // Now and then, labels past their time are forgotten in the same transaction.
        let expired: Vec<String> = if now
            - self
                .labels_expired_ms
                .load(std::sync::atomic::Ordering::Relaxed)
            > LABEL_EXPIRY_INTERVAL_MS
        {
            self.labels_expired_ms
                .store(now, std::sync::atomic::Ordering::Relaxed);
            self.state
                .read()
                .load_jobs
                .iter()
                .filter(|(_, j)| label_expired(j, now))
                .map(|(k, _)| k.clone())
                .collect()
        } else {
            Vec::new()
        };
        let mut new = (*old).clone();
        let mut ops = Vec::new();
        let created = now;
        // Replicas that missed this version are marked stale in the same transaction.
        let mut stale_changed = false;
        for nr in rowsets {
            if nr.schema_version != old.schema_version {
                return Err(BasaltError::ConcurrentDdl(format!(
                    "table {} was altered during the load; nothing was loaded, run it again",
                    old.name
                )));
            }
            let tablet = new
                .tablets_mut()
                .find(|t| t.id == nr.tablet_id)
                .ok_or_else(|| {
                    BasaltError::Storage(format!(
                        "tablet {} was dropped during the load",
                        nr.tablet_id
                    ))
                })?;
            self.check_versions(tablet)?;
            stale_changed |= tablet.mark_stale(nr.missing_replicas);
            stale_changed |= tablet.mark_unseen_stale(&nr.seen_replicas);
            let version = tablet.version() + 1;
            let rs = RowsetMeta {
                id: self.allocate_id(),
                tablet_id: tablet.id,
                start_version: version,
                version,
                segments_overlap: nr.segments.len() > 1,
                segments: nr.segments,
                created_ms: created,
            };
            ops.push(Op::PutRowset(tablet.id, rs.id, to_json(&rs)?));
            tablet.rowsets.push(Arc::new(rs));
            for (segment, bitmap) in nr.delete_bitmaps {
                ops.push(Op::PutDeleteBitmap(
                    tablet.id,
                    segment.clone(),
                    bitmap.clone(),
                ));
                tablet.delete_bitmaps.insert(segment, bitmap);
            }
        }
        if stale_changed {
            ops.push(Op::PutTable(new.id, to_json(&new)?));
        }
        ops.push(self.counter_op());
        ops.extend(expired.iter().cloned().map(Op::DeleteLoadJob));
        if let Some((key, job)) = &job_entry {
            ops.push(Op::PutLoadJob(key.clone(), to_json(job.as_ref())?));
        }
        self.store.commit(ops)?;
        let new = Arc::new(new);
        self.replace_arc_in_memory(new.clone());
        let mut state = self.state.write();
        for k in &expired {
            state.load_jobs.remove(k);
        }
        if let Some((key, job)) = job_entry {
            state.load_jobs.insert(key, job);
        }
        Ok(new)
    }

    fn replace_rowsets(
        &self,
        table_id: TableId,
        compacted: CompactedRowset,
    ) -> Result<(Arc<TableMeta>, Vec<Arc<RowsetMeta>>)> {
        let _w = self.writer.lock();
        let stale = |why: &str| {
            BasaltError::Catalog(format!(
                "compaction of tablet {} is stale: {why}",
                compacted.tablet_id
            ))
        };
        let old = self
            .table_by_id(table_id)
            .ok_or_else(|| stale("the table was dropped"))?;
        let mut new = (*old).clone();
        let tablet = new
            .tablets_mut()
            .find(|t| t.id == compacted.tablet_id)
            .ok_or_else(|| stale("the tablet was dropped"))?;
        let first = compacted
            .inputs
            .first()
            .ok_or_else(|| stale("no input rowsets"))?;
        let start = tablet
            .rowsets
            .iter()
            .position(|r| r.id == *first)
            .ok_or_else(|| stale("an input rowset is gone"))?;
        let end = start + compacted.inputs.len();
        let matches = tablet
            .rowsets
            .get(start..end)
            .is_some_and(|run| run.iter().zip(&compacted.inputs).all(|(r, id)| r.id == *id));
        if !matches {
            return Err(stale("the input rowsets are no longer adjacent"));
        }
        if compacted
            .input_deletes_seen
            .iter()
            .any(|(path, seen)| tablet.delete_bitmaps.get(path) != seen.as_ref())
        {
            return Err(stale("rows of its inputs were deleted meanwhile"));
        }
        let mut stale_changed = tablet.mark_stale(compacted.missing_replicas);
        stale_changed |= tablet.mark_unseen_stale(&compacted.seen_replicas);
        let removed: Vec<Arc<RowsetMeta>> = tablet.rowsets.drain(start..end).collect();
        let output = RowsetMeta {
            id: compacted.output_id,
            tablet_id: tablet.id,
            start_version: removed[0].start_version,
            version: removed[removed.len() - 1].version,
            segments: compacted.segments,
            segments_overlap: compacted.segments_overlap,
            created_ms: now_ms(),
        };
        let mut ops = Vec::new();
        for r in &removed {
            ops.push(Op::DeleteRowset(tablet.id, r.id));
            for seg in &r.segments {
                if tablet.delete_bitmaps.remove(&seg.path).is_some() {
                    ops.push(Op::DeleteDeleteBitmap(tablet.id, seg.path.clone()));
                }
            }
        }
        ops.push(Op::PutRowset(tablet.id, output.id, to_json(&output)?));
        for (segment, bitmap) in compacted.delete_bitmaps {
            ops.push(Op::PutDeleteBitmap(
                tablet.id,
                segment.clone(),
                bitmap.clone(),
            ));
            tablet.delete_bitmaps.insert(segment, bitmap);
        }
        tablet.rowsets.insert(start, Arc::new(output));
        if stale_changed {
            ops.push(Op::PutTable(new.id, to_json(&new)?));
        }
        ops.push(self.counter_op());
        self.store.commit(ops)?;
        let new = Arc::new(new);
        self.replace_arc_in_memory(new.clone());
        Ok((new, removed))
    }

    fn alter_table(
        &self,
        based_on: &TableMeta,
        new: TableMeta,
    ) -> Result<(Arc<TableMeta>, Vec<Arc<RowsetMeta>>)> {
        let _w = self.writer.lock();
        let current = self.table_by_id(based_on.id).ok_or_else(|| {
            BasaltError::UnknownTable(format!("{}.{}", based_on.database, based_on.name))
        })?;
        let rowset_ids = |t: &TableMeta| -> Vec<(TabletId, Vec<RowsetId>)> {
            t.tablets()
                .map(|(_, t)| (t.id, t.rowsets.iter().map(|r| r.id).collect()))
                .collect()
        };
        if current.schema_version != based_on.schema_version
            || current.name != based_on.name
            || rowset_ids(&current) != rowset_ids(based_on)
        {
            return Err(BasaltError::ConcurrentDdl(format!(
                "table {} changed while it was being altered",
                current.name
            )));
        }
        let mut new = TableMeta {
            name: self.name_case.stored(&new.name),
            ..new
        };
        replica_moves::carry_replica_changes(based_on, &current, &mut new);
        self.place(&mut new)?;
        if self.key(&new.name) != self.key(&current.name) {
            validate_name(&new.name)?;
            let s = self.state.read();
            let (db, name) = (self.key(&current.database), self.key(&new.name));
            let taken = s.tables.get(&db).is_some_and(|t| t.contains_key(&name))
                || s.views.get(&db).is_some_and(|v| v.contains_key(&name));
            if taken {
                return Err(BasaltError::TableExists(new.name.clone()));
            }
        }
        let (mut ops, removed) = rowset_change_ops(&current, &new, "ALTER")?;
        ops.push(Op::PutTable(new.id, to_json(&new)?));
        ops.push(self.counter_op());
        self.store.commit(ops)?;
        let new = Arc::new(new);
        if let Some(tables) = self
            .state
            .write()
            .tables
            .get_mut(&self.key(&current.database))
        {
            tables.remove(&self.key(&current.name));
            tables.insert(self.key(&new.name), new.clone());
        }
        Ok((new, removed))
    }

    fn referenced_segments(&self) -> std::collections::HashSet<String> {
        let s = self.state.read();
        s.tables
            .values()
            .flat_map(|t| t.values())
            .flat_map(|t| {
                t.tablets()
                    .flat_map(|(_, tablet)| {
                        tablet
                            .rowsets
                            .iter()
                            .flat_map(|r| r.segments.iter().map(|s| s.path.clone()))
                    })
                    .collect::<Vec<_>>()
            })
            .collect()
    }
}

impl Catalog for LocalCatalog {
    fn publish_tables(
        &self,
        changes: Vec<(Arc<TableMeta>, TableMeta)>,
    ) -> Result<Vec<Arc<RowsetMeta>>> {
        let _w = self.writer.lock();
        let rowset_ids = |t: &TableMeta| -> Vec<(TabletId, Vec<RowsetId>)> {
            t.tablets()
                .map(|(_, t)| (t.id, t.rowsets.iter().map(|r| r.id).collect()))
                .collect()
        };
        let mut ops = Vec::new();
        let mut removed = Vec::new();
        let mut published = Vec::with_capacity(changes.len());
        for (based_on, new) in changes {
            let current = self.table_by_id(based_on.id).ok_or_else(|| {
                BasaltError::UnknownTable(format!("{}.{}", based_on.database, based_on.name))
            })?;
            if current.schema_version != based_on.schema_version
                || current.schema_version != new.schema_version
                || rowset_ids(&current) != rowset_ids(&based_on)
            {
                return Err(BasaltError::ConcurrentDdl(format!(
                    "table {} changed while the transaction was committed",
                    current.name
                )));
            }
            for (_, tablet) in new.tablets() {
                if tablet.rowsets.len() > self.max_tablet_versions() {
                    return Err(BasaltError::TooManyVersions {
                        tablet: tablet.id,
                        versions: tablet.rowsets.len(),
                        max: self.max_tablet_versions(),
                    });
                }
            }
            let mut new = new;
            replica_moves::carry_replica_changes(&based_on, &current, &mut new);
            let (table_ops, table_removed) = rowset_change_ops(&current, &new, "COMMIT")?;
            ops.extend(table_ops);
            if replica_moves::replica_sets(&current) != replica_moves::replica_sets(&new) {
                ops.push(Op::PutTable(new.id, to_json(&new)?));
            }
            removed.extend(table_removed);
            published.push(Arc::new(new));
        }
        ops.push(self.counter_op());
        self.store.commit(ops)?;
        for table in published {
            self.replace_arc_in_memory(table);
        }
        Ok(removed)
    }

    fn clear_stale_replica(
        &self,
        table_id: TableId,
        tablet_id: TabletId,
        backend: crate::model::BackendId,
        holds: &HashSet<String>,
    ) -> Result<bool> {
        let _w = self.writer.lock();
        let Some(old) = self.table_by_id(table_id) else {
            return Ok(false);
        };
        let mut new = (*old).clone();
        let Some(tablet) = new.tablets_mut().find(|t| t.id == tablet_id) else {
            return Ok(false);
        };
        if !tablet.stale_replicas.contains(&backend)
            || !tablet.segment_paths().all(|p| holds.contains(p))
        {
            return Ok(false);
        }
        tablet.stale_replicas.retain(|b| *b != backend);
        self.save_table(new)?;
        Ok(true)
    }

    fn set_max_tablet_versions(&self, max: usize) {
        self.max_tablet_versions
            .store(max.max(1), Ordering::Relaxed);
    }

    fn max_tablet_versions(&self) -> usize {
        self.max_tablet_versions.load(Ordering::Relaxed)
    }

    fn table_name_case(&self) -> TableNameCase {
        self.name_case
    }

    fn database_exists(&self, name: &str) -> bool {
        self.state.read().databases.contains_key(&self.key(name))
    }

    fn create_database(&self, name: &str, if_not_exists: bool) -> Result<bool> {
        let name = self.name_case.stored(name);
        validate_name(&name)?;
        let _w = self.writer.lock();
        if let Some(existing) = self.database_named(&name) {
            return if if_not_exists {
                Ok(false)
            } else {
                Err(BasaltError::DatabaseExists(existing))
            };
        }
        let db = DatabaseMeta {
            id: self.allocate_id(),
            name: name.clone(),
            created_ms: now_ms(),
        };
        self.store.commit(vec![
            Op::PutDatabase(name.clone(), to_json(&db)?),
            self.counter_op(),
        ])?;
        let mut s = self.state.write();
        s.databases.insert(self.key(&name), db);
        s.tables.entry(self.key(&name)).or_default();
        Ok(true)
    }

    fn drop_database(&self, name: &str, if_exists: bool) -> Result<Option<Vec<Arc<TableMeta>>>> {
        let _w = self.writer.lock();
        let Some(name) = self.database_named(name) else {
            return if if_exists {
                Ok(None)
            } else {
                Err(BasaltError::DropMissingDatabase(
                    self.name_case.stored(name),
                ))
            };
        };
        let key = self.key(&name);
        let tables: Vec<Arc<TableMeta>> = self
            .state
            .read()
            .tables
            .get(&key)
            .map(|t| t.values().cloned().collect())
            .unwrap_or_default();
        let mut ops = vec![Op::DeleteDatabase(name.clone())];
        for t in &tables {
            ops.extend(delete_table_ops(t));
        }
        let labels: Vec<String> = self
            .state
            .read()
            .load_jobs
            .iter()
            .filter(|(_, j)| j.database == name)
            .map(|(k, _)| k.clone())
            .collect();
        ops.extend(labels.iter().cloned().map(Op::DeleteLoadJob));
        let views: Vec<String> = self
            .state
            .read()
            .views
            .get(&key)
            .map(|v| v.values().map(|v| v.name.clone()).collect())
            .unwrap_or_default();
        ops.extend(
            views
                .iter()
                .map(|v| Op::DeleteView(views::view_key(&name, v))),
        );
        let procedures: Vec<String> = self
            .procedures_of(&name)
            .iter()
            .map(|p| procedures::procedure_key(&name, p))
            .collect();
        ops.extend(procedures.into_iter().map(Op::DeleteProcedure));
        self.store.commit(ops)?;
        let mut s = self.state.write();
        s.databases.remove(&key);
        s.tables.remove(&key);
        s.views.remove(&key);
        s.procedures.remove(&key);
        for k in &labels {
            s.load_jobs.remove(k);
        }
        Ok(Some(tables))
    }

    fn create_table(&self, table: TableMeta, if_not_exists: bool) -> Result<bool> {
        let name = self.name_case.stored(&table.name);
        validate_name(&name)?;
        let _w = self.writer.lock();
        let db = self
            .database_named(&table.database)
            .ok_or_else(|| BasaltError::UnknownDatabase(self.name_case.stored(&table.database)))?;
        {
            let s = self.state.read();
            let (db_key, key) = (self.key(&db), self.key(&name));
            let is_view = s.views.get(&db_key).is_some_and(|v| v.contains_key(&key));
            let is_table = s.tables.get(&db_key).is_some_and(|t| t.contains_key(&key));
            if is_table || is_view {
                return if if_not_exists {
                    Ok(false)
                } else {
                    Err(BasaltError::TableExists(name))
                };
            }
        }
        let mut table = TableMeta {
            database: db.clone(),
            name: name.clone(),
            ..table
        };
        self.place(&mut table)?;
        self.store.commit(vec![
            Op::PutTable(table.id, to_json(&table)?),
            self.counter_op(),
        ])?;
        self.state
            .write()
            .tables
            .entry(self.key(&db))
            .or_default()
            .insert(self.key(&name), Arc::new(table));
        Ok(true)
    }

    fn drop_table(
        &self,
        database: &str,
        name: &str,
        if_exists: bool,
    ) -> Result<Option<Arc<TableMeta>>> {
        let _w = self.writer.lock();
        let table = match self.table(database, name) {
            Ok(t) => t,
            Err(BasaltError::UnknownTable(_)) if if_exists => return Ok(None),
            Err(e) => return Err(e),
        };
        self.store.commit(delete_table_ops(&table))?;
        if let Some(tables) = self
            .state
            .write()
            .tables
            .get_mut(&self.key(&table.database))
        {
            tables.remove(&self.key(&table.name));
        }
        Ok(Some(table))
    }

    fn truncate_table(&self, database: &str, name: &str) -> Result<Arc<TableMeta>> {
        let _w = self.writer.lock();
        let old = self.table(database, name)?;
        let mut ops: Vec<Op> = old
            .tablets()
            .flat_map(|(_, t)| clear_tablet_ops(t))
            .collect();
        let mut new = (*old).clone();
        for t in new.tablets_mut() {
            t.rowsets.clear();
            t.delete_bitmaps.clear();
        }
        // As in Doris, truncating a table drops its temporary partitions.
        if !new.temporary_partitions.is_empty() {
            new.temporary_partitions.clear();
            ops.push(Op::PutTable(new.id, to_json(&new)?));
            ops.push(self.counter_op());
        }
        self.store.commit(ops)?;
        self.replace_in_memory(new);
        Ok(old)
    }

    fn add_partition(
        &self,
        based_on: &TableMeta,
        partition: &str,
        bound: PartitionBound,
        temporary: bool,
    ) -> Result<()> {
        let _w = self.writer.lock();
        let old = self.table(&based_on.database, &based_on.name)?;
        let ids = |t: &TableMeta| t.all_partitions().map(|p| p.id).collect::<Vec<_>>();
        if old.id != based_on.id || ids(&old) != ids(based_on) {
            return Err(BasaltError::ConcurrentDdl(format!(
                "table {} changed while partition {partition} was being added",
                old.name
            )));
        }
        let kind_ok = matches!(
            (old.partition_kind, &bound),
            (PartitionKind::Range, PartitionBound::Range { .. })
                | (PartitionKind::List, PartitionBound::List { .. })
        );
        if !kind_ok {
            return Err(BasaltError::InvalidDdl(format!(
                "partition {partition} does not match the table's {:?} partitioning",
                old.partition_kind
            )));
        }
        crate::temporary_partitions::check_new(&old, partition, &bound, temporary)?;
        let mut new = (*old).clone();
        let partition = PartitionMeta::empty(
            partition.to_string(),
            bound,
            new.distribution.buckets,
            || self.allocate_id(),
        );
        if temporary {
            new.temporary_partitions.push(partition);
        } else {
            new.partitions.push(partition);
        }
        self.place(&mut new)?;
        self.save_table(new)?;
        Ok(())
    }

    fn drop_partition(
        &self,
        database: &str,
        name: &str,
        partition: &str,
        if_exists: bool,
        temporary: bool,
    ) -> Result<Option<PartitionMeta>> {
        let _w = self.writer.lock();
        let old = self.table(database, name)?;
        if old.partition_kind == PartitionKind::Unpartitioned {
            return Err(BasaltError::InvalidDdl(format!(
                "table {} is not partitioned",
                old.name
            )));
        }
        let list = if temporary {
            &old.temporary_partitions
        } else {
            &old.partitions
        };
        let Some(pos) = list
            .iter()
            .position(|p| p.name.eq_ignore_ascii_case(partition))
        else {
            return if if_exists {
                Ok(None)
            } else {
                Err(BasaltError::UnknownPartition(partition.to_string()))
            };
        };
        let mut new = (*old).clone();
        let dropped = if temporary {
            new.temporary_partitions.remove(pos)
        } else {
            new.partitions.remove(pos)
        };
        let mut ops = vec![Op::PutTable(new.id, to_json(&new)?)];
        for t in &dropped.tablets {
            ops.extend(clear_tablet_ops(t));
        }
        self.store.commit(ops)?;
        self.replace_in_memory(new);
        Ok(Some(dropped))
    }

    fn replace_partitions(
        &self,
        database: &str,
        table: &str,
        replacement: &crate::PartitionReplacement,
    ) -> Result<Vec<PartitionMeta>> {
        let _w = self.writer.lock();
        let old = self.table(database, table)?;
        let (new, replaced) = crate::temporary_partitions::replaced(&old, replacement)?;
        let mut ops = vec![Op::PutTable(new.id, to_json(&new)?), self.counter_op()];
        for t in replaced.iter().flat_map(|p| p.tablets.iter()) {
            ops.extend(clear_tablet_ops(t));
        }
        self.store.commit(ops)?;
        self.replace_in_memory(new);
        Ok(replaced)
    }

    fn clean_labels(&self, database: &str, label: Option<&str>) -> Result<usize> {
        let _w = self.writer.lock();
        let db = self
            .database_named(database)
            .ok_or_else(|| BasaltError::UnknownDatabase(database.to_string()))?;
        let keys: Vec<String> = self
            .state
            .read()
            .load_jobs
            .iter()
            .filter(|(_, j)| j.database == db && label.is_none_or(|l| j.label == l))
            .map(|(k, _)| k.clone())
            .collect();
        if keys.is_empty() {
            return Ok(0);
        }
        self.store
            .commit(keys.iter().cloned().map(Op::DeleteLoadJob).collect())?;
        let mut state = self.state.write();
        for k in &keys {
            state.load_jobs.remove(k);
        }
        Ok(keys.len())
    }

    fn rename_partition(&self, database: &str, table: &str, from: &str, to: &str) -> Result<()> {
        let _w = self.writer.lock();
        let old = self.table(database, table)?;
        let Some(pos) = old
            .partitions
            .iter()
            .position(|p| p.name.eq_ignore_ascii_case(from))
        else {
            return Err(BasaltError::UnknownPartition(from.to_string()));
        };
        let taken = old
            .partitions
            .iter()
            .enumerate()
            .any(|(i, p)| i != pos && p.name.eq_ignore_ascii_case(to))
            || old.temporary_partition_by_name(to).is_some();
        if taken {
            return Err(BasaltError::DuplicatePartition(to.to_string()));
        }
        let mut new = (*old).clone();
        new.partitions[pos].name = to.to_string();
        self.save_table(new)
    }

    fn load_job(&self, database: &str, label: &str) -> Option<Arc<LoadJobRecord>> {
        let key = LoadJobRecord::key(&self.database_named(database)?, label);
        let job = self.state.read().load_jobs.get(&key).cloned()?;
        (!label_expired(&job, now_ms())).then_some(job)
    }

    fn load_jobs(&self, database: &str) -> Vec<Arc<LoadJobRecord>> {
        let Some(db) = self.database_named(database) else {
            return Vec::new();
        };
        let mut jobs: Vec<_> = self
            .state
            .read()
            .load_jobs
            .values()
            .filter(|j| j.database == db)
            .cloned()
            .collect();
        jobs.sort_by_key(|j| (j.finished_ms, j.txn_id));
        jobs
    }

    fn workload_groups(&self) -> Vec<WorkloadGroupMeta> {
        self.state
            .read()
            .workload_groups
            .values()
            .cloned()
            .collect()
    }

    fn put_workload_group(&self, group: WorkloadGroupMeta) -> Result<()> {
        let _w = self.writer.lock();
        self.store.commit(vec![Op::PutWorkloadGroup(
            group.name.clone(),
            to_json(&group)?,
        )])?;
        self.state
            .write()
            .workload_groups
            .insert(group.name.clone(), group);
        Ok(())
    }

    fn drop_workload_group(&self, name: &str) -> Result<()> {
        let _w = self.writer.lock();
        self.store
            .commit(vec![Op::DeleteWorkloadGroup(name.to_string())])?;
        self.state.write().workload_groups.remove(name);
        Ok(())
    }

    fn workload_policies(&self) -> Vec<WorkloadPolicyMeta> {
        self.state
            .read()
            .workload_policies
            .values()
            .cloned()
            .collect()
    }

    fn put_workload_policy(&self, policy: WorkloadPolicyMeta) -> Result<()> {
        let _w = self.writer.lock();
        self.store.commit(vec![Op::PutWorkloadPolicy(
            policy.name.clone(),
            to_json(&policy)?,
        )])?;
        self.state
            .write()
            .workload_policies
            .insert(policy.name.clone(), policy);
        Ok(())
    }

    fn drop_workload_policy(&self, name: &str) -> Result<()> {
        let _w = self.writer.lock();
        self.store
            .commit(vec![Op::DeleteWorkloadPolicy(name.to_string())])?;
        self.state.write().workload_policies.remove(name);
        Ok(())
    }

    fn update_user(
        &self,
        user: &str,
        host: &str,
        change: &mut dyn FnMut(&mut UserMeta),
    ) -> Result<bool> {
        let _w = self.writer.lock();
        let key = UserMeta::key(user, host);
        let Some(mut meta) = self.state.read().users.get(&key).cloned() else {
            return Ok(false);
        };
        change(&mut meta);
        self.store
            .commit(vec![Op::PutUser(key.clone(), to_json(&meta)?)])?;
        self.state.write().users.insert(key, meta);
        Ok(true)
    }

    fn users_named(&self, user: &str) -> Vec<UserMeta> {
        self.state
            .read()
            .users
            .values()
            .filter(|u| u.user == user)
            .cloned()
            .collect()
    }

    fn find_user(&self, user: &str, host: &str) -> Option<UserMeta> {
        let s = self.state.read();
        let exact = s.users.get(&UserMeta::key(user, host)).cloned();
        exact.or_else(|| {
            s.users
                .values()
                .find(|u| u.user == user && u.matches_host(host))
                .cloned()
        })
    }

    fn users(&self) -> Vec<UserMeta> {
        self.state.read().users.values().cloned().collect()
    }

    fn create_user(
        &self,
        user: &str,
        host: &str,
        password: Option<&str>,
        if_not_exists: bool,
    ) -> Result<bool> {
        let _w = self.writer.lock();
        let key = UserMeta::key(user, host);
        if self.state.read().users.contains_key(&key) {
            return if if_not_exists {
                Ok(false)
            } else {
                Err(BasaltError::UserOperation {
                    operation: "CREATE USER".into(),
                    user: format!("'{user}'@'{host}'"),
                })
            };
        }
        let meta = UserMeta::new(user, host, password.unwrap_or(""));
        self.store
            .commit(vec![Op::PutUser(key.clone(), to_json(&meta)?)])?;
        self.state.write().users.insert(key, meta);
        Ok(true)
    }

    fn drop_user(&self, user: &str, host: &str, if_exists: bool) -> Result<bool> {
        let _w = self.writer.lock();
        let key = UserMeta::key(user, host);
        if !self.state.read().users.contains_key(&key) {
            return if if_exists {
                Ok(false)
            } else {
                Err(BasaltError::UserOperation {
                    operation: "DROP USER".into(),
                    user: format!("'{user}'@'{host}'"),
                })
            };
        }
        if user == "root" {
            return Err(BasaltError::UserOperation {
                operation: "DROP USER".into(),
                user: "'root' (the built-in administrator)".into(),
            });
        }
        self.store.commit(vec![Op::DeleteUser(key.clone())])?;
        self.state.write().users.remove(&key);
        Ok(true)
    }

    fn set_password(&self, user: &str, host: &str, password: &str) -> Result<()> {
        let _w = self.writer.lock();
        let key = UserMeta::key(user, host);
        let mut meta = self.state.read().users.get(&key).cloned().ok_or_else(|| {
            BasaltError::UserOperation {
                operation: "SET PASSWORD".into(),
                user: format!("'{user}'@'{host}'"),
            }
        })?;
        meta.password_hash = native_password_hash(password);
        self.store
            .commit(vec![Op::PutUser(key.clone(), to_json(&meta)?)])?;
        self.state.write().users.insert(key, meta);
        Ok(())
    }

    fn roles(&self) -> Vec<RoleMeta> {
        self.state.read().roles.values().cloned().collect()
    }

    fn role(&self, name: &str) -> Option<RoleMeta> {
        self.state.read().roles.get(name).cloned()
    }

    fn create_role(&self, name: &str, if_not_exists: bool) -> Result<bool> {
        let _w = self.writer.lock();
        if self.state.read().roles.contains_key(name) {
            return if if_not_exists {
                Ok(false)
            } else {
                Err(BasaltError::UserOperation {
                    operation: "CREATE ROLE".into(),
                    user: format!("'{name}'"),
                })
            };
        }
        let role = RoleMeta {
            name: name.to_string(),
            grants: Default::default(),
        };
        self.store
            .commit(vec![Op::PutRole(name.to_string(), to_json(&role)?)])?;
        self.state.write().roles.insert(name.to_string(), role);
        Ok(true)
    }

    fn drop_role(&self, name: &str, if_exists: bool) -> Result<bool> {
        let _w = self.writer.lock();
        if !self.state.read().roles.contains_key(name) {
            return if if_exists {
                Ok(false)
            } else {
                Err(BasaltError::UserOperation {
                    operation: "DROP ROLE".into(),
                    user: format!("'{name}'"),
                })
            };
        }
        // The role leaves every account that held it, in the same transaction.
        let mut holders: Vec<UserMeta> = self
            .state
            .read()
            .users
            .values()
            .filter(|u| u.roles.contains(name))
            .cloned()
            .collect();
        let mut ops = vec![Op::DeleteRole(name.to_string())];
        for u in &mut holders {
            u.roles.remove(name);
            ops.push(Op::PutUser(UserMeta::key(&u.user, &u.host), to_json(u)?));
        }
        self.store.commit(ops)?;
        let mut state = self.state.write();
        state.roles.remove(name);
        for u in holders {
            state.users.insert(UserMeta::key(&u.user, &u.host), u);
        }
        Ok(true)
    }

    fn update_role(&self, name: &str, change: &mut dyn FnMut(&mut RoleMeta)) -> Result<bool> {
        let _w = self.writer.lock();
        let Some(mut role) = self.state.read().roles.get(name).cloned() else {
            return Ok(false);
        };
        change(&mut role);
        self.store
            .commit(vec![Op::PutRole(name.to_string(), to_json(&role)?)])?;
        self.state.write().roles.insert(name.to_string(), role);
        Ok(true)
    }

    fn views(&self, database: &str) -> Vec<Arc<ViewMeta>> {
        self.views_of(database)
    }

    fn view(&self, database: &str, name: &str) -> Option<Arc<ViewMeta>> {
        self.view_named(database, name)
    }

    fn create_view(&self, view: ViewMeta, or_replace: bool) -> Result<()> {
        self.put_view(view, Some(or_replace))
    }

    fn alter_view(&self, view: ViewMeta) -> Result<()> {
        self.put_view(view, None)
    }

    fn drop_view(&self, database: &str, name: &str, if_exists: bool) -> Result<bool> {
        self.remove_view(database, name, if_exists)
    }

    fn procedures(&self, database: &str) -> Vec<Arc<crate::procedures::ProcedureMeta>> {
        self.procedures_of(database)
    }

    fn procedure(
        &self,
        database: &str,
        name: &str,
    ) -> Option<Arc<crate::procedures::ProcedureMeta>> {
        self.procedure_named(database, name, false)
    }

    fn function(
        &self,
        database: &str,
        name: &str,
    ) -> Option<Arc<crate::procedures::ProcedureMeta>> {
        self.procedure_named(database, name, true)
    }

    fn drop_function(&self, database: &str, name: &str, if_exists: bool) -> Result<bool> {
        self.remove_procedure(database, name, true, if_exists)
    }

    fn create_procedure(
        &self,
        procedure: crate::procedures::ProcedureMeta,
        if_not_exists: bool,
    ) -> Result<bool> {
        self.put_procedure(procedure, if_not_exists)
    }

    fn drop_procedure(&self, database: &str, name: &str, if_exists: bool) -> Result<bool> {
        self.remove_procedure(database, name, false, if_exists)
    }

    fn backends(&self) -> Vec<crate::backends::BackendMeta> {
        self.backend_list()
    }

    fn add_backend(&self, address: &str) -> Result<crate::backends::BackendMeta> {
        self.put_backend(address)
    }

    fn drop_backend(&self, address: &str) -> Result<()> {
        self.remove_backend(address)
    }

    fn set_backend_decommissioned(
        &self,
        address: &str,
        decommissioned: bool,
    ) -> Result<crate::backends::BackendMeta> {
        self.mark_decommissioned(address, decommissioned)
    }

    fn join_replica(
        &self,
        table_id: TableId,
        tablet_id: TabletId,
        backend: crate::model::BackendId,
    ) -> Result<bool> {
        LocalCatalog::join_replica(self, table_id, tablet_id, backend)
    }

    fn end_replica_move(
        &self,
        table_id: TableId,
        tablet_id: TabletId,
        from: crate::model::BackendId,
        to: crate::model::BackendId,
    ) -> Result<bool> {
        LocalCatalog::end_replica_move(self, table_id, tablet_id, from, to)
    }

    fn abandon_replica_move(
        &self,
        table_id: TableId,
        tablet_id: TabletId,
        to: crate::model::BackendId,
    ) -> Result<bool> {
        LocalCatalog::abandon_replica_move(self, table_id, tablet_id, to)
    }

    fn global_variables(&self) -> BTreeMap<String, String> {
        let mut variables = self.state.read().global_variables.clone();
        variables.insert(
            name_case::VARIABLE.to_string(),
            self.name_case.setting().to_string(),
        );
        variables
    }

    fn set_global_variable(&self, name: &str, value: &str) -> Result<()> {
        let _w = self.writer.lock();
        self.store
            .commit(vec![Op::PutVariable(name.to_string(), value.to_string())])?;
        self.state
            .write()
            .global_variables
            .insert(name.to_string(), value.to_string());
        Ok(())
    }
}

fn delete_table_ops(t: &TableMeta) -> Vec<Op> {
    let mut ops = vec![Op::DeleteTable(t.id)];
    for (_, tablet) in t.tablets() {
        ops.extend(clear_tablet_ops(tablet));
    }
    ops
}

/// Operations removing every rowset and delete bitmap of a tablet.
fn clear_tablet_ops(tablet: &TabletMeta) -> Vec<Op> {
    let mut ops: Vec<Op> = tablet
        .rowsets
        .iter()
        .map(|r| Op::DeleteRowset(tablet.id, r.id))
        .collect();
    ops.extend(
        tablet
            .delete_bitmaps
            .keys()
            .map(|seg| Op::DeleteDeleteBitmap(tablet.id, seg.clone())),
    );
    ops
}

fn validate_name(name: &str) -> Result<()> {
    if name.is_empty() || name.len() > 64 || name.contains('/') || name.contains('\0') {
        return Err(BasaltError::InvalidDdl(format!("Incorrect name '{name}'")));
    }
    Ok(())
}

/// The store operations that turn `current`'s rowsets and delete bitmaps into `new`'s (same
/// tablets), and the rowsets that leave the table (files for the caller to delete).
fn rowset_change_ops(
    current: &TableMeta,
    new: &TableMeta,
    what: &str,
) -> Result<(Vec<Op>, Vec<Arc<RowsetMeta>>)> {
    let mut ops = Vec::new();
    let mut removed = Vec::new();
    for (_, old_tablet) in current.tablets() {
        let replacement = new
            .tablets()
            .map(|(_, t)| t)
            .find(|t| t.id == old_tablet.id)
            .ok_or_else(|| {
                BasaltError::Internal(format!("{what} lost tablet {}", old_tablet.id))
            })?;
        let kept: HashSet<RowsetId> = replacement.rowsets.iter().map(|r| r.id).collect();
        for r in &old_tablet.rowsets {
            if !kept.contains(&r.id) {
                ops.push(Op::DeleteRowset(old_tablet.id, r.id));
                for seg in &r.segments {
                    if old_tablet.delete_bitmaps.contains_key(&seg.path) {
                        ops.push(Op::DeleteDeleteBitmap(old_tablet.id, seg.path.clone()));
                    }
                }
                removed.push(r.clone());
            }
        }
        let old_ids: HashSet<RowsetId> = old_tablet.rowsets.iter().map(|r| r.id).collect();
        for r in &replacement.rowsets {
            if !old_ids.contains(&r.id) {
                ops.push(Op::PutRowset(old_tablet.id, r.id, to_json(r.as_ref())?));
            }
        }
        for (seg, bitmap) in &replacement.delete_bitmaps {
            if old_tablet.delete_bitmaps.get(seg) != Some(bitmap) {
                ops.push(Op::PutDeleteBitmap(
                    old_tablet.id,
                    seg.clone(),
                    bitmap.clone(),
                ));
            }
        }
    }
    Ok((ops, removed))
}

#[cfg(test)]
#[path = "local_tests.rs"]
mod tests;
