//! A load inside a SQL transaction (`LOAD DATA LOCAL INFILE` after BEGIN or with autocommit
//! off): the frontend's [`LoadContext`], except that the load finds its table as the
//! transaction sees it and writes through the transaction's staging, so it is staged as an
//! INSERT is — COMMIT publishes it with the transaction's other writes, ROLLBACK discards it.

use super::StagedWrites;
use crate::engine::QueryEngine;
use basalt_catalog::{Catalog, TableMeta};
use basalt_common::Result;
use basalt_load::{LoadContext, LoadExpressions, LoadRegistry};
use basalt_storage::StorageEngine;
use std::sync::Arc;

/// The load context of one load staged in `writes`.
pub(crate) struct StagedLoad<'a> {
    pub engine: &'a QueryEngine,
    pub writes: Arc<StagedWrites>,
}

impl LoadContext for StagedLoad<'_> {
    /// The shared catalog: labels of published loads (a staged load records none).
    fn catalog(&self) -> &Arc<dyn Catalog> {
        LoadContext::catalog(self.engine)
    }

    fn storage(&self) -> &Arc<StorageEngine> {
        &self.writes.storage
    }

    fn load_registry(&self) -> &Arc<LoadRegistry> {
        LoadContext::load_registry(self.engine)
    }

    fn authorize(&self, user: &str, host: &str, database: &str, table: &str) -> Result<()> {
        self.engine.authorize(user, host, database, table)
    }

    fn expressions(&self, user: &str, host: &str) -> LoadExpressions {
        self.engine.expressions(user, host)
    }

    fn table(&self, database: &str, name: &str) -> Result<Arc<TableMeta>> {
        self.writes.table(database, name)
    }
}
