//! The storage caches (decoded columns, encoded rows) hold their bytes under the process's
//! `mem_limit`, beside queries: they grow only into memory queries leave free and give it back
//! when a query's reservation or the resident-memory guard finds the process short.

use basalt_storage::segment_lru::CacheBudget;
use basalt_storage::StorageEngine;
use basalt_workload::ProcessMemory;
use std::sync::Arc;

/// A cache's budget: the process's memory account.
struct ProcessBudget(Arc<ProcessMemory>);

impl CacheBudget for ProcessBudget {
    fn try_take(&self, bytes: usize) -> bool {
        self.0.try_hold_cached(bytes)
    }

    fn give_back(&self, bytes: usize) {
        self.0.release_cached(bytes);
    }
}

/// Puts the storage engine's caches under `process`'s limit, the column cache giving memory
/// back first (rows serve point queries, which are cheap to keep).
pub(crate) fn share_process_memory(storage: &Arc<StorageEngine>, process: &Arc<ProcessMemory>) {
    let budget: Arc<dyn CacheBudget> = Arc::new(ProcessBudget(process.clone()));
    storage.column_cache().set_budget(budget.clone());
    storage.row_cache().set_budget(budget);
    let columns = storage.column_cache().clone();
    let rows = storage.row_cache().clone();
    process.set_reclaimer(Box::new(move |bytes| {
        let freed = columns.release(bytes);
        if freed >= bytes {
            freed
        } else {
            freed + rows.release(bytes - freed)
        }
    }));
}
