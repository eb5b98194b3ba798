//! Durable persistence of catalog records in one `redb` file. Every change is a list of
//! operations committed in a single ACID transaction (fsync on commit).

use basalt_common::{BasaltError, Result};
use redb::{Database, ReadableDatabase, ReadableTable, TableDefinition};
use std::path::Path;

const DATABASES: TableDefinition<&str, &str> = TableDefinition::new("databases");
const TABLES: TableDefinition<u64, &str> = TableDefinition::new("tables");
const ROWSETS: TableDefinition<(u64, u64), &str> = TableDefinition::new("rowsets");
const DELETE_BITMAPS: TableDefinition<(u64, &str), &[u8]> = TableDefinition::new("delete_bitmaps");
const USERS: TableDefinition<&str, &str> = TableDefinition::new("users");
const VARIABLES: TableDefinition<&str, &str> = TableDefinition::new("global_variables");
const COUNTERS: TableDefinition<&str, u64> = TableDefinition::new("counters");
/// (database NUL label) -> committed load record
const LOAD_JOBS: TableDefinition<&str, &str> = TableDefinition::new("load_jobs");
/// workload group name -> group record
const WORKLOAD_GROUPS: TableDefinition<&str, &str> = TableDefinition::new("workload_groups");
const WORKLOAD_POLICIES: TableDefinition<&str, &str> = TableDefinition::new("workload_policies");
/// (database NUL view name) -> view record
const VIEWS: TableDefinition<&str, &str> = TableDefinition::new("views");
/// (database NUL lower-case procedure name) -> procedure record
const PROCEDURES: TableDefinition<&str, &str> = TableDefinition::new("procedures");
/// role name -> role record (its grants)
const ROLES: TableDefinition<&str, &str> = TableDefinition::new("roles");
/// backend id -> backend record (scale-out: the backends this frontend places tablets on)
const BACKENDS: TableDefinition<u64, &str> = TableDefinition::new("backends");

/// One change to persisted records.
#[derive(Debug)]
pub enum Op {
    PutDatabase(String, String),
    DeleteDatabase(String),
    PutTable(u64, String),
    DeleteTable(u64),
    /// (tablet id, rowset id) -> rowset record
    PutRowset(u64, u64, String),
    DeleteRowset(u64, u64),
    /// (tablet id, segment path) -> serialized delete bitmap
    PutDeleteBitmap(u64, String, crate::model::DeleteBitmap),
    DeleteDeleteBitmap(u64, String),
    PutUser(String, String),
    DeleteUser(String),
    PutVariable(String, String),
    PutCounter(String, u64),
    PutLoadJob(String, String),
    DeleteLoadJob(String),
    PutWorkloadGroup(String, String),
    DeleteWorkloadGroup(String),
    PutWorkloadPolicy(String, String),
    DeleteWorkloadPolicy(String),
    PutRole(String, String),
    DeleteRole(String),
    PutView(String, String),
    DeleteView(String),
    PutProcedure(String, String),
    DeleteProcedure(String),
    PutBackend(u64, String),
    DeleteBackend(u64),
}

/// Everything read back at startup.
#[derive(Default)]
pub struct Loaded {
    pub databases: Vec<String>,
    pub tables: Vec<String>,
    pub rowsets: Vec<String>,
    pub delete_bitmaps: Vec<(u64, String, crate::model::DeleteBitmap)>,
    pub users: Vec<String>,
    pub variables: Vec<(String, String)>,
    pub counters: Vec<(String, u64)>,
    pub load_jobs: Vec<String>,
    pub workload_groups: Vec<String>,
    pub workload_policies: Vec<String>,
    pub roles: Vec<String>,
    pub views: Vec<String>,
    pub procedures: Vec<String>,
    pub backends: Vec<String>,
}

pub struct Store {
    db: Database,
}

fn err(e: impl std::fmt::Display) -> BasaltError {
    BasaltError::Catalog(e.to_string())
}

impl Store {
    pub fn open(path: &Path) -> Result<Store> {
        let db = Database::create(path).map_err(err)?;
        // Make sure every table exists so readers never see "table does not exist".
        let txn = db.begin_write().map_err(err)?;
        txn.open_table(DATABASES).map_err(err)?;
        txn.open_table(TABLES).map_err(err)?;
        txn.open_table(ROWSETS).map_err(err)?;
        txn.open_table(DELETE_BITMAPS).map_err(err)?;
        txn.open_table(USERS).map_err(err)?;
        txn.open_table(VARIABLES).map_err(err)?;
        txn.open_table(COUNTERS).map_err(err)?;
        txn.open_table(LOAD_JOBS).map_err(err)?;
        txn.open_table(WORKLOAD_GROUPS).map_err(err)?;
        txn.open_table(WORKLOAD_POLICIES).map_err(err)?;
        txn.open_table(ROLES).map_err(err)?;
        txn.open_table(VIEWS).map_err(err)?;
        txn.open_table(PROCEDURES).map_err(err)?;
        txn.open_table(BACKENDS).map_err(err)?;
        txn.commit().map_err(err)?;
        Ok(Store { db })
    }

    pub fn load(&self) -> Result<Loaded> {
        let txn = self.db.begin_read().map_err(err)?;
        let mut out = Loaded::default();
        for item in txn
            .open_table(DATABASES)
            .map_err(err)?
            .iter()
            .map_err(err)?
        {
            let (_, v) = item.map_err(err)?;
            out.databases.push(v.value().to_string());
        }
        for item in txn.open_table(TABLES).map_err(err)?.iter().map_err(err)? {
            let (_, v) = item.map_err(err)?;
            out.tables.push(v.value().to_string());
        }
        for item in txn.open_table(ROWSETS).map_err(err)?.iter().map_err(err)? {
            let (_, v) = item.map_err(err)?;
            out.rowsets.push(v.value().to_string());
        }
        for item in txn
            .open_table(DELETE_BITMAPS)
            .map_err(err)?
            .iter()
            .map_err(err)?
        {
            let (k, v) = item.map_err(err)?;
            let (tablet, segment) = k.value();
            out.delete_bitmaps
                .push((tablet, segment.to_string(), decode_bitmap(v.value())?));
        }
        for item in txn.open_table(USERS).map_err(err)?.iter().map_err(err)? {
            let (_, v) = item.map_err(err)?;
            out.users.push(v.value().to_string());
        }
        for item in txn.open_table(ROLES).map_err(err)?.iter().map_err(err)? {
            let (_, v) = item.map_err(err)?;
            out.roles.push(v.value().to_string());
        }
        for item in txn.open_table(VIEWS).map_err(err)?.iter().map_err(err)? {
            let (_, v) = item.map_err(err)?;
            out.views.push(v.value().to_string());
        }
        for item in txn
            .open_table(PROCEDURES)
            .map_err(err)?
            .iter()
            .map_err(err)?
        {
            let (_, v) = item.map_err(err)?;
            out.procedures.push(v.value().to_string());
        }
        for item in txn.open_table(BACKENDS).map_err(err)?.iter().map_err(err)? {
            let (_, v) = item.map_err(err)?;
            out.backends.push(v.value().to_string());
        }
        for item in txn
            .open_table(VARIABLES)
            .map_err(err)?
            .iter()
            .map_err(err)?
        {
            let (k, v) = item.map_err(err)?;
            out.variables
                .push((k.value().to_string(), v.value().to_string()));
        }
        for item in txn.open_table(COUNTERS).map_err(err)?.iter().map_err(err)? {
            let (k, v) = item.map_err(err)?;
            out.counters.push((k.value().to_string(), v.value()));
        }
        for item in txn
            .open_table(LOAD_JOBS)
            .map_err(err)?
            .iter()
            .map_err(err)?
        {
            let (_, v) = item.map_err(err)?;
            out.load_jobs.push(v.value().to_string());
        }
        for item in txn
            .open_table(WORKLOAD_GROUPS)
            .map_err(err)?
            .iter()
            .map_err(err)?
        {
            let (_, v) = item.map_err(err)?;
            out.workload_groups.push(v.value().to_string());
        }
        for item in txn
            .open_table(WORKLOAD_POLICIES)
            .map_err(err)?
            .iter()
            .map_err(err)?
        {
            let (_, v) = item.map_err(err)?;
            out.workload_policies.push(v.value().to_string());
        }
        Ok(out)
    }

    /// Applies all `ops` atomically and durably.
    pub fn commit(&self, ops: Vec<Op>) -> Result<()> {
        let txn = self.db.begin_write().map_err(err)?;
        {
            let mut databases = txn.open_table(DATABASES).map_err(err)?;
            let mut tables = txn.open_table(TABLES).map_err(err)?;
            let mut rowsets = txn.open_table(ROWSETS).map_err(err)?;
            let mut bitmaps = txn.open_table(DELETE_BITMAPS).map_err(err)?;
            let mut users = txn.open_table(USERS).map_err(err)?;
            let mut variables = txn.open_table(VARIABLES).map_err(err)?;
            let mut counters = txn.open_table(COUNTERS).map_err(err)?;
            let mut load_jobs = txn.open_table(LOAD_JOBS).map_err(err)?;
            let mut groups = txn.open_table(WORKLOAD_GROUPS).map_err(err)?;
            let mut policies = txn.open_table(WORKLOAD_POLICIES).map_err(err)?;
            let mut roles = txn.open_table(ROLES).map_err(err)?;
            let mut views = txn.open_table(VIEWS).map_err(err)?;
            let mut procedures = txn.open_table(PROCEDURES).map_err(err)?;
            let mut backends = txn.open_table(BACKENDS).map_err(err)?;
            for op in ops {
                match op {
                    Op::PutDatabase(k, v) => {
                        drop(databases.insert(k.as_str(), v.as_str()).map_err(err)?)
                    }
                    Op::DeleteDatabase(k) => drop(databases.remove(k.as_str()).map_err(err)?),
                    Op::PutTable(k, v) => drop(tables.insert(k, v.as_str()).map_err(err)?),
                    Op::DeleteTable(k) => drop(tables.remove(k).map_err(err)?),
                    Op::PutRowset(t, r, v) => {
                        drop(rowsets.insert((t, r), v.as_str()).map_err(err)?)
                    }
                    Op::DeleteRowset(t, r) => drop(rowsets.remove((t, r)).map_err(err)?),
                    Op::PutDeleteBitmap(t, seg, v) => drop(
                        bitmaps
                            .insert((t, seg.as_str()), encode_bitmap(&v).as_slice())
                            .map_err(err)?,
                    ),
                    Op::DeleteDeleteBitmap(t, seg) => {
                        drop(bitmaps.remove((t, seg.as_str())).map_err(err)?)
                    }
                    Op::PutUser(k, v) => drop(users.insert(k.as_str(), v.as_str()).map_err(err)?),
                    Op::DeleteUser(k) => drop(users.remove(k.as_str()).map_err(err)?),
                    Op::PutRole(k, v) => drop(roles.insert(k.as_str(), v.as_str()).map_err(err)?),
                    Op::DeleteRole(k) => drop(roles.remove(k.as_str()).map_err(err)?),
                    Op::PutView(k, v) => drop(views.insert(k.as_str(), v.as_str()).map_err(err)?),
                    Op::DeleteView(k) => drop(views.remove(k.as_str()).map_err(err)?),
                    Op::PutProcedure(k, v) => {
                        drop(procedures.insert(k.as_str(), v.as_str()).map_err(err)?)
                    }
                    Op::DeleteProcedure(k) => drop(procedures.remove(k.as_str()).map_err(err)?),
                    Op::PutBackend(k, v) => drop(backends.insert(k, v.as_str()).map_err(err)?),
                    Op::DeleteBackend(k) => drop(backends.remove(k).map_err(err)?),
                    Op::PutVariable(k, v) => {
                        drop(variables.insert(k.as_str(), v.as_str()).map_err(err)?)
                    }
                    Op::PutCounter(k, v) => drop(counters.insert(k.as_str(), v).map_err(err)?),
                    Op::PutLoadJob(k, v) => {
                        drop(load_jobs.insert(k.as_str(), v.as_str()).map_err(err)?)
                    }
                    Op::DeleteLoadJob(k) => drop(load_jobs.remove(k.as_str()).map_err(err)?),
                    Op::PutWorkloadGroup(k, v) => {
                        drop(groups.insert(k.as_str(), v.as_str()).map_err(err)?)
                    }
                    Op::DeleteWorkloadGroup(k) => drop(groups.remove(k.as_str()).map_err(err)?),
                    Op::PutWorkloadPolicy(k, v) => {
                        drop(policies.insert(k.as_str(), v.as_str()).map_err(err)?)
                    }
                    Op::DeleteWorkloadPolicy(k) => drop(policies.remove(k.as_str()).map_err(err)?),
                }
            }
        }
        txn.commit().map_err(err)
    }
}

/// Stored form of a delete bitmap: the deleted-row count (u64 LE) then the bitmap bytes.
fn encode_bitmap(b: &crate::model::DeleteBitmap) -> Vec<u8> {
    let mut out = Vec::with_capacity(8 + b.bytes.len());
    out.extend_from_slice(&b.deleted_rows.to_le_bytes());
    out.extend_from_slice(&b.bytes);
    out
}

fn decode_bitmap(v: &[u8]) -> Result<crate::model::DeleteBitmap> {
    if v.len() < 8 {
        return Err(BasaltError::Catalog("corrupt delete bitmap record".into()));
    }
    let mut count = [0u8; 8];
    count.copy_from_slice(&v[..8]);
    Ok(crate::model::DeleteBitmap {
        deleted_rows: u64::from_le_bytes(count),
        bytes: std::sync::Arc::new(v[8..].to_vec()),
    })
}
