//! The frontend `basalt frontend` runs: the catalog and planning on its data directory, the
//! tablets on backends. Loads write segments on the backends that hold each tablet; queries
//! run on them through the distributed engine; compactions run on them too; heartbeats track
//! them; once each answers, it drops the files a previous run of the frontend left orphaned;
//! replicas that missed versions catch up in the background; the balancer clones the replicas
//! of a backend down too long, moves a decommissioned backend's away and spreads tablets onto
//! an added one.

use crate::engine::QueryEngine;
use crate::local_node::{assemble, open_catalog, start_compaction, write_buffer};
use basalt_catalog::{Catalog, TabletCatalog};
use basalt_common::config::Config;
use basalt_common::Result;
use basalt_dist::{BackendSegments, Cluster, ClusterSecret};
use basalt_storage::StorageEngine;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

impl QueryEngine {
    /// Opens the frontend's state under `config.data_dir`, adds `backends` ("host:port") that
    /// the catalog does not know yet, and starts heartbeats. Call inside the async runtime.
    pub fn open_frontend(
        config: &Config,
        backends: &[String],
        secret: ClusterSecret,
    ) -> Result<Arc<QueryEngine>> {
        let (data_dir, catalog) = open_catalog(config)?;
        // What the catalog references before anything runs, and an id below every id a load
        // or compaction names its files with from now on: files on the backends that the
        // catalog does not name and whose id is lower can never be named again.
        let referenced = catalog.referenced_segments();
        let ids_below = catalog.allocate_id();
        let known: Vec<String> = catalog.backends().iter().map(|b| b.address()).collect();
        for address in backends {
            let (host, port) = basalt_catalog::parse_backend_address(address)?;
            if !known.contains(&format!("{host}:{port}")) {
                catalog.add_backend(address)?;
            }
        }
        // The frontend's storage engine plans loads (routing, sorting, merging by key model);
        // it never holds segment files: they go to the backends (no caches needed here).
        let storage = StorageEngine::open(&data_dir, catalog.clone(), write_buffer(config), 0, 0)?;
        let cluster = Cluster::new(catalog.clone(), secret)?;
        storage.set_remote(Arc::new(BackendSegments(cluster.clone())));
        cluster.start_heartbeats();
        cluster.remove_orphans_once(referenced, ids_below);
        // Stale replicas (they missed a version while down) copy what they lack.
        basalt_dist::start_replica_repair(
            &cluster,
            catalog.clone(),
            config.catch_up_mb_per_second.saturating_mul(1 << 20),
        );
        // Replicas of a backend down too long are cloned elsewhere, a decommissioned backend's
        // move away, and an added backend gets its share.
        basalt_dist::start_replica_balancer(
            &cluster,
            catalog.clone(),
            basalt_dist::BalancerSettings {
                bytes_per_second: config.catch_up_mb_per_second.saturating_mul(1 << 20),
                clone_after: std::time::Duration::from_secs(config.replica_clone_after_seconds),
            },
        );
        // The frontend picks compactions from its catalog; the backends holding each tablet
        // merge its files, and the frontend publishes the result.
        start_compaction(&storage, config)?;
        let engine = assemble(config, catalog, storage, Some(cluster.clone()))?;
        track_backend_usage(&cluster, &engine.services.workload);
        Ok(engine)
    }
}

/// Keeps each running query's account told what it has used on the backends (their sum, as
/// their heartbeats report it), so workload policies judge the whole query and
/// `active_queries` shows it. A backend's last figures for a query count until the query ends,
/// though the backend stops reporting them a few seconds after its part of the query ends.
fn track_backend_usage(cluster: &Arc<Cluster>, workload: &Arc<basalt_workload::WorkloadManager>) {
    let (cluster, workload) = (Arc::downgrade(cluster), Arc::downgrade(workload));
    tokio::spawn(async move {
        // By backend and query: the backend's latest figures for the query.
        let mut last: HashMap<(basalt_catalog::BackendId, String), basalt_workload::Elsewhere> =
            HashMap::new();
        loop {
            tokio::time::sleep(std::time::Duration::from_millis(500)).await;
            let (Some(cluster), Some(workload)) = (cluster.upgrade(), workload.upgrade()) else {
                return;
            };
            for (backend, health) in cluster.health() {
                if !health.alive {
                    continue;
                }
                for q in &health.status.queries {
                    let figures = basalt_workload::Elsewhere {
                        cpu_ms: q.cpu_ms,
                        scan_rows: q.scan_rows,
                        scan_bytes: q.scan_bytes,
                        memory_bytes: q.memory_bytes,
                        peak_memory_bytes: q.peak_memory_bytes,
                    };
                    last.insert((backend.id, q.query.clone()), figures);
                }
            }
            let accounts = workload.live_accounts();
            let running: HashSet<&str> = accounts
                .iter()
                .filter_map(|a| a.known_cluster_id())
                .collect();
            last.retain(|(_, query), _| running.contains(query.as_str()));
            let mut sums: HashMap<&str, basalt_workload::Elsewhere> = HashMap::new();
            for ((_, query), figures) in &last {
                let sum = sums.entry(query.as_str()).or_default();
                sum.cpu_ms += figures.cpu_ms;
                sum.scan_rows += figures.scan_rows;
                sum.scan_bytes += figures.scan_bytes;
                sum.memory_bytes += figures.memory_bytes;
                sum.peak_memory_bytes += figures.peak_memory_bytes;
            }
            for account in &accounts {
                if let Some(sum) = account.known_cluster_id().and_then(|id| sums.get(id)) {
                    account.set_elsewhere(*sum);
                }
            }
        }
    });
}
