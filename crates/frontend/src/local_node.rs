//! The all-in-one node `basalt server` runs: the catalog, storage (with background compaction)
//! and the engine on one data directory. The doors (MySQL, HTTP) get the engine and nothing
//! else. The steps a cluster's frontend shares ([`crate::frontend_node`]) are here too.

use crate::engine::QueryEngine;
use basalt_catalog::{Catalog, LocalCatalog};
use basalt_common::config::Config;
use basalt_common::{BasaltError, Result};
use basalt_load::LoadDir;
use basalt_storage::{CompactionPolicy, StorageEngine, WriteBufferLimits};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

impl QueryEngine {
    /// Opens all state under `config.data_dir` (made absolute) and starts compaction.
    pub fn open_local(config: &Config) -> Result<Arc<QueryEngine>> {
        let (data_dir, catalog) = open_catalog(config)?;
        let storage = StorageEngine::open(
            &data_dir,
            catalog.clone(),
            write_buffer(config),
            config.column_cache_bytes(),
            config.row_cache_bytes().map_err(BasaltError::InvalidData)?,
        )?;
        storage.set_json_form(json_form(config));
        start_compaction(&storage, config)?;
        assemble(config, catalog, storage, None)
    }
}

/// The form new segments hold JSON columns in (`json_binary_segments`).
pub(crate) fn json_form(config: &Config) -> basalt_storage::json_columns::JsonForm {
    if config.json_binary_segments {
        basalt_storage::json_columns::JsonForm::Binary
    } else {
        basalt_storage::json_columns::JsonForm::Text
    }
}

/// The absolute data directory (created if missing) and the catalog under it (refused when
/// the configured `lower_case_table_names` is not the one it was created with).
pub(crate) fn open_catalog(config: &Config) -> Result<(PathBuf, Arc<LocalCatalog>)> {
    std::fs::create_dir_all(&config.data_dir)?;
    let data_dir = std::fs::canonicalize(&config.data_dir)?;
    let name_case = config.table_name_case().map_err(BasaltError::InvalidData)?;
    let catalog = Arc::new(LocalCatalog::open_with(&data_dir.join("meta"), name_case)?);
    tracing::info!(
        "lower_case_table_names = {}",
        catalog.table_name_case().setting()
    );
    catalog.set_max_tablet_versions(config.max_tablet_versions);
    Ok((data_dir, catalog))
}

/// How much a load buffers before writing segments.
pub(crate) fn write_buffer(config: &Config) -> WriteBufferLimits {
    WriteBufferLimits {
        rows_per_tablet: config.write_buffer_rows,
        bytes: config.write_buffer_mb.saturating_mul(1 << 20),
    }
}

/// Background compaction with the configured threads and interval.
pub(crate) fn start_compaction(storage: &Arc<StorageEngine>, config: &Config) -> Result<()> {
    storage.start_compaction(
        config.compaction_threads,
        Duration::from_millis(config.compaction_interval_ms.max(10)),
        compaction_policy(config),
    )
}

/// The engine over `catalog` and `storage` (on a cluster's frontend, with its backends), with
/// `local()`'s directory, the query memory limit and the login policy.
pub(crate) fn assemble(
    config: &Config,
    catalog: Arc<LocalCatalog>,
    storage: Arc<StorageEngine>,
    cluster: Option<Arc<basalt_dist::Cluster>>,
) -> Result<Arc<QueryEngine>> {
    let load_dir = LoadDir::open(&config.load_dir())?;
    tracing::info!("local() reads files under {}", load_dir.path().display());
    let query_memory = config
        .query_memory_bytes()
        .map_err(BasaltError::InvalidData)?;
    let mut engine = QueryEngine::new(catalog, storage, Some(load_dir), query_memory)?;
    if let Some(cluster) = cluster {
        engine.set_cluster(cluster)?;
    }
    engine.set_login_policy(crate::LoginPolicy {
        failure_threshold: config.login_failure_threshold,
        max_delay: Duration::from_millis(config.login_delay_max_ms),
    });
    crate::dynamic_partitions::start_checks(
        engine.services.catalog.clone(),
        engine.services.storage.clone(),
        Duration::from_secs(config.dynamic_partition_check_interval_seconds),
    );
    Ok(engine)
}

/// The compaction policy of a node: the defaults, with merges forced well before loads hit the
/// version bound.
fn compaction_policy(config: &Config) -> CompactionPolicy {
    CompactionPolicy {
        force_rowsets: CompactionPolicy::default()
            .force_rowsets
            .min(config.max_tablet_versions / 2)
            .max(2),
        ..CompactionPolicy::default()
    }
}
