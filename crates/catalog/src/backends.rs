//! Scale-out membership and placement: the backends a frontend knows (Doris's `ALTER SYSTEM ADD
//! BACKEND`), and which of them hold each tablet's replicas, balanced by tablet count.

use crate::model::{BackendId, TableMeta};
use basalt_common::{BasaltError, Result};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// One backend: where its service listens.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BackendMeta {
    pub id: BackendId,
    pub host: String,
    pub port: u16,
    /// ALTER SYSTEM DECOMMISSION BACKEND: no new tablets are placed here, and the replicas
    /// held here are being moved to other backends, after which the backend is removed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub decommissioned: bool,
}

impl BackendMeta {
    /// `host:port`, as ALTER SYSTEM and SHOW BACKENDS write it.
    pub fn address(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }
}

/// Splits `host:port` (the port is required).
pub fn parse_backend_address(address: &str) -> Result<(String, u16)> {
    let bad = || {
        BasaltError::InvalidDdl(format!(
            "backend address '{address}' is not host:port (e.g. \"127.0.0.1:9050\")"
        ))
    };
    let (host, port) = address.trim().rsplit_once(':').ok_or_else(bad)?;
    let port: u16 = port.parse().map_err(|_| bad())?;
    if host.is_empty() || port == 0 {
        return Err(bad());
    }
    Ok((host.to_string(), port))
}

/// How many replicas each tablet of `table` wants: its `replication_num` (or Doris's
/// `replication_allocation` = "tag.location.default: N") property, else three or as many as
/// there are backends.
pub fn replication_num(table: &TableMeta, backends: usize) -> Result<usize> {
    let from_allocation = table
        .properties
        .get("replication_allocation")
        .map(|v| v.rsplit(':').next().unwrap_or_default().trim().to_string());
    let wanted = table
        .properties
        .get("replication_num")
        .cloned()
        .or(from_allocation);
    match wanted {
        None => Ok(backends.clamp(1, 3)),
        Some(v) => match v.trim().parse::<usize>() {
            Ok(n) if n >= 1 => Ok(n),
            _ => Err(BasaltError::InvalidDdl(format!(
                "replication_num must be a positive integer, got '{v}'"
            ))),
        },
    }
}

/// What a backend holds: tablet replicas, and the bytes of their segments.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct BackendLoad {
    pub tablets: usize,
    pub bytes: u64,
}

/// Gives every tablet of `table` that has no replicas yet `replication_num` distinct backends,
/// each time the ones holding the fewest tablets, then the fewest bytes (`load`, updated as
/// tablets are placed). Does nothing when there are no backends (a single node holds every
/// tablet itself).
pub fn place_tablets(
    table: &mut TableMeta,
    backends: &[BackendMeta],
    load: &mut HashMap<BackendId, BackendLoad>,
) -> Result<()> {
    // A single node holds every tablet itself, one replica: only an explicit replication_num
    // above one is refused there (as before clusters existed; Doris's replication_allocation
    // is accepted and has no effect).
    if backends.is_empty() && !table.properties.contains_key("replication_num") {
        return Ok(());
    }
    let replicas = replication_num(table, backends.len())?;
    let available = backends.len().max(1);
    if replicas > available {
        return Err(BasaltError::InvalidDdl(format!(
            "replication_num {replicas} is more than the number of backends ({available}); use \
             \"replication_num\" = \"{available}\" or add backends"
        )));
    }
    if backends.is_empty() {
        return Ok(());
    }
    for tablet in table.tablets_mut() {
        if !tablet.replicas.is_empty() {
            continue;
        }
        let mut order: Vec<&BackendMeta> = backends.iter().collect();
        order.sort_by_key(|b| (load.get(&b.id).copied().unwrap_or_default(), b.id));
        tablet.replicas = order[..replicas].iter().map(|b| b.id).collect();
        for id in &tablet.replicas {
            load.entry(*id).or_default().tablets += 1;
        }
    }
    Ok(())
}

/// Tablet replicas and their bytes per backend over `tables`.
pub fn load_per_backend<'a>(
    tables: impl Iterator<Item = &'a TableMeta>,
) -> HashMap<BackendId, BackendLoad> {
    let mut load: HashMap<BackendId, BackendLoad> = HashMap::new();
    for table in tables {
        for (_, tablet) in table.tablets() {
            let bytes: u64 = tablet
                .rowsets
                .iter()
                .flat_map(|r| &r.segments)
                .map(|s| s.size_bytes)
                .sum();
            for id in &tablet.replicas {
                let entry = load.entry(*id).or_default();
                entry.tablets += 1;
                entry.bytes += bytes;
            }
        }
    }
    load
}
