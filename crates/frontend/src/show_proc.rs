//! Doris's `SHOW PROC '<path>'`: the administrator's directory of the cluster's state, answered
//! from Basalt's real catalog, tablets, backends and sessions.
//!
//! Served paths: `/` (the directory names), `/dbs`, `/dbs/<db_id>` (tables and views),
//! `/dbs/<db_id>/<table_id>`, `.../partitions`, `.../partitions/<partition_id>` (its one index),
//! `.../<index_id>` (its tablets), `/backends`, `/frontends`, `/current_queries`, `/statistic`,
//! `/transactions[/<db_id>[/running|finished]]` and `/jobs[/<db_id or name>[/load|delete|rollup|
//! schema_change|export]]` (`loads`),
//! `/cluster_health[/tablet_health]` and `/tasks` (`health`), and `/auth` (`auth`). Columns
//! are Doris's; what Basalt does not track (quotas, consistency checks, transaction counts) is
//! NULL, never a made-up value.

mod auth;
mod health;
pub(crate) mod loads;

use crate::catalog_provider::Services;
use crate::output::Output;
use crate::show::{self, Cell, Col, ResultBuilder};
use basalt_catalog::{DatabaseMeta, PartitionKind, PartitionMeta, TableMeta};
use basalt_common::{BasaltError, Result};
use basalt_load::LoadRegistry;
use std::collections::HashSet;
use std::net::SocketAddr;
use std::sync::Arc;

/// The directories `SHOW PROC '/'` lists, in the order it lists them.
const ROOT: [&str; 10] = [
    "auth",
    "backends",
    "cluster_health",
    "current_queries",
    "dbs",
    "frontends",
    "jobs",
    "statistic",
    "tasks",
    "transactions",
];

/// Where this frontend listens (set by the server once its sockets are bound).
#[derive(Debug, Clone, Copy)]
pub struct ListenAddresses {
    pub query: SocketAddr,
    pub http: SocketAddr,
}

/// Answers `SHOW PROC '<path>'`.
pub(crate) fn show_proc(
    services: &Services,
    loads: &LoadRegistry,
    listening: Option<ListenAddresses>,
    path: &str,
) -> Result<Output> {
    let segments = split_path(path)?;
    let parts: Vec<&str> = segments.iter().map(String::as_str).collect();
    match parts.as_slice() {
        [] => Ok(root()),
        ["dbs"] => Ok(databases(services)),
        ["dbs", db] => Ok(tables(services, &database(services, db)?)),
        ["dbs", db, table] => {
            table_of(services, &database(services, db)?, table)?;
            Ok(table_nodes())
        }
        ["dbs", db, table, "partitions"] => {
            let t = table_of(services, &database(services, db)?, table)?;
            Ok(show::show_partitions(&t, false))
        }
        ["dbs", db, table, "partitions", partition] => {
            let t = table_of(services, &database(services, db)?, table)?;
            partition_of(&t, partition)?;
            Ok(indexes(&t))
        }
        ["dbs", db, table, "partitions", partition, index] => {
            let t = table_of(services, &database(services, db)?, table)?;
            let p = partition_of(&t, partition)?;
            if parse_id(index, "index")? != t.id {
                return Err(not_found(path));
            }
            Ok(tablets(p))
        }
        ["backends"] => Ok(crate::backends::show(services)),
        ["frontends"] => Ok(frontends(services, listening)),
        ["current_queries"] => Ok(current_queries(services)),
        ["statistic"] => Ok(statistic(services)),
        ["transactions"] => Ok(loads::transaction_databases(services, loads)),
        ["transactions", db] => Ok(loads::transaction_states(
            services,
            loads,
            &database(services, db)?,
        )),
        ["transactions", db, state] => {
            let db = database(services, db)?;
            loads::transactions(services, loads, listening, &db, state)
        }
        ["jobs"] => Ok(loads::job_databases(services)),
        ["jobs", db] => Ok(loads::job_counts(
            services,
            loads,
            &jobs_database(services, db)?,
        )),
        ["jobs", db, kind] => loads::jobs_of_type(services, loads, db, kind, path),
        ["cluster_health"] => Ok(health::cluster_health()),
        ["cluster_health", "tablet_health"] => Ok(health::tablet_health(services)),
        ["tasks"] => Ok(health::tasks()),
        ["auth"] => Ok(auth::auth(services.catalog.as_ref())),
        _ => Err(not_found(path)),
    }
}

/// The path's names: it must start with '/'; repeated slashes and a trailing one are ignored
/// (as Doris reads it).
fn split_path(path: &str) -> Result<Vec<String>> {
    let path = path.trim();
    if !path.starts_with('/') {
        return Err(BasaltError::Execution(format!(
            "Path({path}) does not start with '/'"
        )));
    }
    Ok(path
        .split('/')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect())
}

fn not_found(path: &str) -> BasaltError {
    BasaltError::Execution(format!("Proc path '{}' doesn't exist", path.trim()))
}

fn parse_id(text: &str, what: &str) -> Result<u64> {
    text.parse()
        .map_err(|_| BasaltError::Execution(format!("Invalid {what} id format: {text}")))
}

fn database(services: &Services, id: &str) -> Result<DatabaseMeta> {
    let id = parse_id(id, "db")?;
    services
        .catalog
        .databases()
        .into_iter()
        .find(|d| d.id == id)
        .ok_or_else(|| BasaltError::Execution(format!("Database {id} does not exist")))
}

/// The database a `/jobs` path names, by its id or its name (what is neither is an invalid
/// id, as Doris reports it).
fn jobs_database(services: &Services, id: &str) -> Result<DatabaseMeta> {
    if id.parse::<u64>().is_err() {
        if let Some(db) = services
            .catalog
            .databases()
            .into_iter()
            .find(|d| d.name == id)
        {
            return Ok(db);
        }
    }
    database(services, id)
}

fn table_of(services: &Services, db: &DatabaseMeta, id: &str) -> Result<Arc<TableMeta>> {
    let id = parse_id(id, "table")?;
    services
        .catalog
        .tables(&db.name)?
        .into_iter()
        .find(|t| t.id == id)
        .ok_or_else(|| BasaltError::Execution(format!("Table[{id}] does not exist")))
}

fn partition_of<'a>(t: &'a TableMeta, id: &str) -> Result<&'a PartitionMeta> {
    let id = parse_id(id, "partition")?;
    t.partitions
        .iter()
        .find(|p| p.id == id)
        .ok_or_else(|| BasaltError::Execution(format!("Partition[{id}] does not exist")))
}

fn root() -> Output {
    let mut b = ResultBuilder::new(&[Col::str("name")]);
    for name in ROOT {
        b.row(vec![name.into()]);
    }
    b.into_output()
}

/// Replicas of a table: one per tablet on a single node, one per holding backend on a cluster.
fn replica_count(t: &TableMeta) -> i64 {
    t.tablets()
        .map(|(_, tablet)| tablet.replicas.len().max(1) as i64)
        .sum()
}

/// Databases are sorted by id, as Doris sorts them.
fn sorted_databases(services: &Services) -> Vec<DatabaseMeta> {
    let mut dbs = services.catalog.databases();
    dbs.sort_by_key(|d| d.id);
    dbs
}

fn sorted_tables(services: &Services, db: &str) -> Vec<Arc<TableMeta>> {
    let mut tables = services.catalog.tables(db).unwrap_or_default();
    tables.sort_by_key(|t| t.id);
    tables
}

/// `/dbs`. Basalt enforces no data, replica or transaction quotas and runs no consistency
/// checks: those columns are NULL. Running transactions are not counted per database (NULL).
fn databases(services: &Services) -> Output {
    let mut b = ResultBuilder::new(&[
        Col::int("DbId"),
        Col::str("DbName"),
        Col::int("TableNum"),
        Col::str("Size"),
        Col::str("Quota"),
        Col::str("LastConsistencyCheckTime"),
        Col::int("ReplicaCount"),
        Col::int("ReplicaQuota"),
        Col::int("RunningTransactionNum"),
        Col::int("TransactionQuota"),
        Col::str("LastUpdateTime"),
    ]);
    for db in sorted_databases(services) {
        let tables = sorted_tables(services, &db.name);
        let bytes: u64 = tables.iter().map(|t| t.data_bytes()).sum();
        let replicas: i64 = tables.iter().map(|t| replica_count(t)).sum();
        b.row(vec![
            (db.id as i64).into(),
            db.name.clone().into(),
            (tables.len() as i64).into(),
            show::data_size(bytes).into(),
            None::<String>.into(),
            None::<String>.into(),
            replicas.into(),
            None::<i64>.into(),
            None::<i64>.into(),
            None::<i64>.into(),
            None::<String>.into(),
        ]);
    }
    b.into_output()
}

/// `/dbs/<db_id>`: the database's tables (Basalt's tables are all OLAP tables in state
/// NORMAL; schema changes apply at once), then its views by name (Type VIEW; a view has no id
/// in Basalt, and no indexes, partitions, state or replicas, as Doris shows a view: NULL). No
/// consistency checks run: that column is NULL.
fn tables(services: &Services, db: &DatabaseMeta) -> Output {
    let mut b = ResultBuilder::new(&[
        Col::int("TableId"),
        Col::str("TableName"),
        Col::int("IndexNum"),
        Col::str("PartitionColumnName"),
        Col::int("PartitionNum"),
        Col::str("State"),
        Col::str("Type"),
        Col::str("LastConsistencyCheckTime"),
        Col::int("ReplicaCount"),
    ]);
    for t in sorted_tables(services, &db.name) {
        let (partition_column, partitions) = match t.partition_kind {
            PartitionKind::Unpartitioned => (None, 1),
            _ => (
                t.partition_column_meta()
                    .map(|c| c.shown_name().to_string()),
                t.partitions.len() as i64,
            ),
        };
        b.row(vec![
            (t.id as i64).into(),
            t.name.clone().into(),
            1i64.into(),
            partition_column.into(),
            partitions.into(),
            "NORMAL".into(),
            "OLAP".into(),
            None::<String>.into(),
            replica_count(&t).into(),
        ]);
    }
    let mut views = services.catalog.views(&db.name);
    views.sort_by(|a, b| a.name.cmp(&b.name));
    for v in views {
        let mut row: Vec<Cell> = vec![None::<i64>.into(), v.name.clone().into()];
        row.extend([
            None::<i64>.into(),
            None::<String>.into(),
            None::<i64>.into(),
            None::<String>.into(),
            "VIEW".into(),
            None::<String>.into(),
            None::<i64>.into(),
        ]);
        b.row(row);
    }
    b.into_output()
}

/// `/dbs/<db_id>/<table_id>`: what a table's directory holds.
fn table_nodes() -> Output {
    let mut b = ResultBuilder::new(&[Col::str("Nodes")]);
    b.row(vec!["partitions".into()]);
    b.into_output()
}

/// `.../partitions/<partition_id>`: a Basalt table has one index, its base index, which
/// takes the table's id (and name).
fn indexes(t: &TableMeta) -> Output {
    let mut b = ResultBuilder::new(&[
        Col::int("IndexId"),
        Col::str("IndexName"),
        Col::str("State"),
        Col::str("LastConsistencyCheckTime"),
    ]);
    b.row(vec![
        (t.id as i64).into(),
        t.name.clone().into(),
        "NORMAL".into(),
        None::<String>.into(),
    ]);
    b.into_output()
}

/// `.../partitions/<partition_id>/<index_id>`: the partition's tablets, one row per replica
/// (one row per tablet on a single node, where the server holds every tablet: BackendId NULL).
/// Replicas have no ids of their own in Basalt (ReplicaId NULL).
fn tablets(p: &PartitionMeta) -> Output {
    let mut b = ResultBuilder::new(&[
        Col::int("TabletId"),
        Col::int("ReplicaId"),
        Col::int("BackendId"),
        Col::int("Version"),
        Col::int("LocalDataSize"),
        Col::int("RowCount"),
        Col::str("State"),
        Col::int("VersionCount"),
    ]);
    for tablet in &p.tablets {
        let bytes: u64 = tablet.rowsets.iter().map(|r| r.size_bytes()).sum();
        let backends: Vec<Option<i64>> = if tablet.replicas.is_empty() {
            vec![None]
        } else {
            tablet.replicas.iter().map(|b| Some(*b as i64)).collect()
        };
        for backend in backends {
            b.row(vec![
                (tablet.id as i64).into(),
                None::<i64>.into(),
                backend.into(),
                (tablet.version() as i64).into(),
                (bytes as i64).into(),
                (tablet.num_rows() as i64).into(),
                "NORMAL".into(),
                (tablet.rowsets.len() as i64).into(),
            ]);
        }
    }
    b.into_output()
}

/// `/frontends`: this frontend, the only one and so the master. Basalt has no edit log, RPC
/// or Arrow Flight SQL port on the frontend, no cluster id and no journal: those are NULL.
fn frontends(services: &Services, listening: Option<ListenAddresses>) -> Output {
    let mut b = ResultBuilder::new(&[
        Col::str("Name"),
        Col::str("Host"),
        Col::int("EditLogPort"),
        Col::int("HttpPort"),
        Col::int("QueryPort"),
        Col::int("RpcPort"),
        Col::int("ArrowFlightSqlPort"),
        Col::str("Role"),
        Col::str("IsMaster"),
        Col::int("ClusterId"),
        Col::str("Join"),
        Col::str("Alive"),
        Col::int("ReplayedJournalId"),
        Col::str("LastStartTime"),
        Col::str("LastHeartbeat"),
        Col::str("IsHelper"),
        Col::str("ErrMsg"),
        Col::str("Version"),
        Col::str("CurrentConnected"),
    ]);
    let host = listening.map(|l| l.query.ip().to_string());
    let query_port = listening.map(|l| l.query.port() as i64);
    let http_port = listening.map(|l| l.http.port() as i64);
    let uptime_ms = (services.processes.status.uptime_secs() as i64).saturating_mul(1000);
    let started = show::format_ms(chrono::Utc::now().timestamp_millis() - uptime_ms);
    b.row(vec![
        match (&host, query_port) {
            (Some(h), Some(p)) => Some(format!("{h}_{p}")),
            _ => None,
        }
        .into(),
        host.into(),
        None::<i64>.into(),
        http_port.into(),
        query_port.into(),
        None::<i64>.into(),
        None::<i64>.into(),
        "FOLLOWER".into(),
        "true".into(),
        None::<i64>.into(),
        "true".into(),
        "true".into(),
        None::<i64>.into(),
        started.into(),
        None::<String>.into(),
        "true".into(),
        "".into(),
        env!("CARGO_PKG_VERSION").into(),
        "Yes".into(),
    ]);
    b.into_output()
}

/// `/current_queries`: the statements running now (the process list), longest-running first.
/// Basalt gives statements no query id and keeps no SQL digest (QueryId, SqlHash NULL).
fn current_queries(services: &Services) -> Output {
    let mut b = ResultBuilder::new(&[
        Col::str("QueryId"),
        Col::int("ConnectionId"),
        Col::str("Catalog"),
        Col::str("Database"),
        Col::str("User"),
        Col::int("ExecTime"),
        Col::str("SqlHash"),
        Col::str("Statement"),
        Col::int("ScanRows"),
        Col::int("ScanBytes"),
        Col::int("CpuMs"),
        Col::int("MaxPeakMemoryBytes"),
        Col::int("CurrentUsedMemoryBytes"),
    ]);
    let mut running: Vec<_> = services
        .processes
        .all()
        .into_iter()
        .filter_map(|p| {
            let a = p.activity();
            a.sql.clone().map(|sql| (p, a, sql))
        })
        .collect();
    running.sort_by_key(|(_, a, _)| std::cmp::Reverse(a.elapsed_ms));
    for (p, a, sql) in running {
        let usage = crate::process_admin::StatementUsage::of(a.account.as_deref());
        b.row(vec![
            None::<String>.into(),
            (p.id() as i64).into(),
            "internal".into(),
            p.session.database().into(),
            p.session.user.clone().into(),
            (a.elapsed_ms as i64).into(),
            None::<String>.into(),
            sql.into(),
            usage.scan_rows,
            usage.scan_bytes,
            usage.cpu_ms,
            usage.peak_memory,
            usage.memory,
        ]);
    }
    b.into_output()
}

/// `/statistic`: per database counts of tables, partitions, indexes, tablets and replicas,
/// then a Total row (DbId "Total", DbName the number of databases), as Doris shows it.
/// UnhealthyTabletNum counts tablets with a replica on a backend that is not alive or a stale
/// replica (one that missed a version and is catching up); Basalt
/// never clones replicas (CloningTabletNum 0) and runs no consistency checks or bad-replica
/// detection (InconsistentTabletNum, BadTabletNum NULL).
fn statistic(services: &Services) -> Output {
    let mut b = ResultBuilder::new(&[
        Col::str("DbId"),
        Col::str("DbName"),
        Col::int("TableNum"),
        Col::int("PartitionNum"),
        Col::int("IndexNum"),
        Col::int("TabletNum"),
        Col::int("ReplicaNum"),
        Col::int("UnhealthyTabletNum"),
        Col::int("InconsistentTabletNum"),
        Col::int("CloningTabletNum"),
        Col::int("BadTabletNum"),
    ]);
    let dead = dead_backends(services);
    let mut total = [0i64; 6];
    let dbs = sorted_databases(services);
    for db in &dbs {
        let tables = sorted_tables(services, &db.name);
        let mut counts = [tables.len() as i64, 0, tables.len() as i64, 0, 0, 0];
        for t in &tables {
            counts[1] += t.partitions.len() as i64;
            for (_, tablet) in t.tablets() {
                counts[3] += 1;
                counts[4] += tablet.replicas.len().max(1) as i64;
                let stale = !tablet.stale_replicas.is_empty();
                if stale || tablet.replicas.iter().any(|r| dead.contains(r)) {
                    counts[5] += 1;
                }
            }
        }
        for (sum, n) in total.iter_mut().zip(counts) {
            *sum += n;
        }
        b.row(statistic_row(db.id.to_string(), db.name.clone(), counts));
    }
    b.row(statistic_row("Total".into(), dbs.len().to_string(), total));
    b.into_output()
}

fn statistic_row(id: String, name: String, counts: [i64; 6]) -> Vec<Cell> {
    let mut row: Vec<Cell> = vec![id.into(), name.into()];
    row.extend(counts.iter().map(|n| Cell::from(*n)));
    row.extend([None::<i64>.into(), 0i64.into(), None::<i64>.into()]);
    row
}

/// The ids of the backends the cluster's heartbeats call dead (none on a server).
pub(super) fn dead_backends(services: &Services) -> HashSet<u64> {
    services
        .cluster
        .as_ref()
        .map(|c| {
            c.health()
                .into_iter()
                .filter(|(_, h)| !h.alive)
                .map(|(b, _)| b.id)
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_split_on_slashes_and_must_start_with_one() {
        assert_eq!(split_path("/").unwrap(), Vec::<String>::new());
        assert_eq!(split_path(" //dbs/12/ ").unwrap(), vec!["dbs", "12"]);
        assert!(split_path("dbs").is_err());
        assert!(split_path("").is_err());
    }

    #[test]
    fn ids_must_be_numbers() {
        assert_eq!(parse_id("42", "db").unwrap(), 42);
        let e = parse_id("x", "db").unwrap_err().to_string();
        assert!(e.contains("Invalid db id format: x"), "{e}");
    }
}
