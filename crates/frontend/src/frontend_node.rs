//! The frontend `basalt frontend` runs: the catalog and planning on its data directory, the
//! tablets on backends. Loads write segments on the backends that hold each tablet; queries
//! run on them through the distributed engine; compactions run on them too; heartbeats track
//! them.

use crate::engine::QueryEngine;
use basalt_catalog::{Catalog, LocalCatalog};
use basalt_common::config::Config;
use basalt_common::{BasaltError, Result};
use basalt_dist::{BackendSegments, Cluster, ClusterSecret};
use basalt_load::LoadDir;
use basalt_storage::{StorageEngine, WriteBufferLimits};
use std::sync::Arc;

impl QueryEngine {
    /// Opens the frontend's state under `config.data_dir`, adds `backends` ("host:port") that
    /// the catalog does not know yet, and starts heartbeats. Call inside the async runtime.
    pub fn open_frontend(
        config: &Config,
        backends: &[String],
        secret: ClusterSecret,
    ) -> Result<Arc<QueryEngine>> {
        std::fs::create_dir_all(&config.data_dir)?;
        let data_dir = std::fs::canonicalize(&config.data_dir)?;
        let catalog = Arc::new(LocalCatalog::open(&data_dir.join("meta"))?);
        catalog.set_max_tablet_versions(config.max_tablet_versions);
        let known: Vec<String> = catalog.backends().iter().map(|b| b.address()).collect();
        for address in backends {
            let (host, port) = basalt_catalog::parse_backend_address(address)?;
            if !known.contains(&format!("{host}:{port}")) {
                catalog.add_backend(address)?;
            }
        }
        // The frontend's storage engine plans loads (routing, sorting, merging by key model);
        // it never holds segment files: they go to the backends.
        let storage = StorageEngine::open(
            &data_dir,
            catalog.clone(),
            WriteBufferLimits {
                rows_per_tablet: config.write_buffer_rows,
                bytes: config.write_buffer_mb.saturating_mul(1 << 20),
            },
            0,
            0,
        )?;
        let cluster = Cluster::new(catalog.clone(), secret);
        storage.set_remote(Arc::new(BackendSegments(cluster.clone())));
        cluster.start_heartbeats();
        // The frontend picks compactions from its catalog; the backends holding each tablet
        // merge its files, and the frontend publishes the result.
        storage.start_compaction(
            config.compaction_threads,
            std::time::Duration::from_millis(config.compaction_interval_ms.max(10)),
            crate::local_node::compaction_policy(config),
        )?;
        let load_dir = LoadDir::open(&config.load_dir())?;
        let query_memory = config
            .query_memory_bytes()
            .map_err(BasaltError::InvalidData)?;
        let mut engine = QueryEngine::new(catalog, storage, Some(load_dir), query_memory)?;
        engine.set_cluster(cluster)?;
        engine.set_login_policy(crate::LoginPolicy {
            failure_threshold: config.login_failure_threshold,
            max_delay: std::time::Duration::from_millis(config.login_delay_max_ms),
        });
        Ok(engine)
    }
}
