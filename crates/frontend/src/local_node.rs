//! The all-in-one node `basalt server` runs: the catalog, storage (with background compaction)
//! and the engine on one data directory. The doors (MySQL, HTTP) get the engine and nothing
//! else.

use crate::engine::QueryEngine;
use basalt_catalog::{Catalog, LocalCatalog};
use basalt_common::config::Config;
use basalt_common::{BasaltError, Result};
use basalt_load::LoadDir;
use basalt_storage::{CompactionPolicy, StorageEngine, WriteBufferLimits};
use std::sync::Arc;
use std::time::Duration;

impl QueryEngine {
    /// Opens all state under `config.data_dir` (made absolute) and starts compaction.
    pub fn open_local(config: &Config) -> Result<Arc<QueryEngine>> {
        std::fs::create_dir_all(&config.data_dir)?;
        let data_dir = std::fs::canonicalize(&config.data_dir)?;
        let catalog = Arc::new(LocalCatalog::open(&data_dir.join("meta"))?);
        catalog.set_max_tablet_versions(config.max_tablet_versions);
        let storage = StorageEngine::open(
            &data_dir,
            catalog.clone(),
            WriteBufferLimits {
                rows_per_tablet: config.write_buffer_rows,
                bytes: config.write_buffer_mb.saturating_mul(1 << 20),
            },
            config.column_cache_bytes(),
            config.row_cache_bytes().map_err(BasaltError::InvalidData)?,
        )?;
        storage.start_compaction(
            config.compaction_threads,
            Duration::from_millis(config.compaction_interval_ms.max(10)),
            compaction_policy(config),
        )?;
        let load_dir = LoadDir::open(&config.load_dir())?;
        tracing::info!("local() reads files under {}", load_dir.path().display());
        let query_memory = config
            .query_memory_bytes()
            .map_err(BasaltError::InvalidData)?;
        let engine = QueryEngine::new(catalog, storage, Some(load_dir), query_memory)?;
        engine.set_login_policy(crate::LoginPolicy {
            failure_threshold: config.login_failure_threshold,
            max_delay: Duration::from_millis(config.login_delay_max_ms),
        });
        Ok(engine)
    }
}

/// The compaction policy of a node: the defaults, with merges forced well before loads hit the
/// version bound.
pub(crate) fn compaction_policy(config: &Config) -> CompactionPolicy {
    CompactionPolicy {
        force_rowsets: CompactionPolicy::default()
            .force_rowsets
            .min(config.max_tablet_versions / 2)
            .max(2),
        ..CompactionPolicy::default()
    }
}
