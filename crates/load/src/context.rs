//! What a load needs from the process around it, and nothing more: the catalog, storage, the
//! registry of running loads, and a way to plan the load's column and WHERE expressions. The
//! frontend implements [`LoadContext`]; only it parses SQL.

use crate::registry::LoadRegistry;
use basalt_catalog::{Catalog, TableMeta};
use basalt_common::Result;
use basalt_storage::StorageEngine;
use datafusion::execution::context::SessionState;
use std::sync::Arc;

/// One expression in MySQL's syntax (as Doris users write `columns` and `where`), rewritten into
/// SQL that DataFusion's parser reads with the same meaning.
pub type ToDataFusionSql = Arc<dyn Fn(&str) -> Result<String> + Send + Sync>;

/// Plans a load's expressions as the loading user's session would.
#[derive(Clone)]
pub struct LoadExpressions {
    /// The DataFusion state (functions, options) expressions are planned in.
    pub state: SessionState,
    pub to_datafusion_sql: ToDataFusionSql,
}

/// The services a Stream Load runs on.
pub trait LoadContext: Send + Sync {
    fn catalog(&self) -> &Arc<dyn Catalog>;
    fn storage(&self) -> &Arc<StorageEngine>;
    /// Running and recently failed loads, and their error logs.
    fn load_registry(&self) -> &Arc<LoadRegistry>;
    /// Refuses (1142) a load by `user` from `host` into a table it may not load into.
    fn authorize(&self, user: &str, host: &str, database: &str, table: &str) -> Result<()>;
    /// How `user`'s load plans its expressions.
    fn expressions(&self, user: &str, host: &str) -> LoadExpressions;
    /// The table the load writes, as the load's writes see it: the newest published version,
    /// or inside a SQL transaction the transaction's own (staged) version.
    fn table(&self, database: &str, name: &str) -> Result<Arc<TableMeta>> {
        self.catalog().table(database, name)
    }
}
