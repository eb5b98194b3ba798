//! An open transaction's writes: the [`Overlay`] of the tables it wrote and the storage engine
//! that stages into it. Its statements write ordinary segment files that no published rowset
//! names; COMMIT publishes them (`commit`), and anything else — ROLLBACK, disconnect, KILL of
//! the connection, a failed COMMIT — drops the transaction, which deletes them. (A crash before
//! COMMIT leaves them unreferenced: the engine removes such files when it opens.)

use super::overlay::{Overlay, StagedTable};
use crate::catalog_provider::Services;
use crate::read_snapshot::ReadSnapshot;
use basalt_catalog::TableMeta;
use basalt_storage::{ReadGuard, StorageEngine};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

pub(crate) struct StagedWrites {
    pub(super) overlay: Arc<Overlay>,
    /// Publishes to `overlay`: what the session's statements write with.
    pub(crate) storage: Arc<StorageEngine>,
    /// The shared engine: where staged files are removed.
    shared: Arc<StorageEngine>,
    /// Keeps the published versions the transaction builds on readable (a compaction may
    /// replace them meanwhile) until it ends.
    _guard: ReadGuard,
    published: AtomicBool,
}

impl std::fmt::Debug for StagedWrites {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StagedWrites")
            .field("overlay", &self.overlay)
            .finish()
    }
}

impl StagedWrites {
    /// Staging for a transaction whose read view is `snapshot`.
    pub fn new(services: &Services, snapshot: Arc<ReadSnapshot>) -> StagedWrites {
        let guard = services.storage.begin_read();
        let overlay = Arc::new(Overlay::new(services.catalog.clone(), snapshot));
        let storage = services.storage.staging(overlay.clone());
        StagedWrites {
            overlay,
            storage,
            shared: services.storage.clone(),
            _guard: guard,
            published: AtomicBool::new(false),
        }
    }

    /// A table as the transaction sees it (its staged copy once written).
    pub fn table(&self, database: &str, name: &str) -> basalt_common::Result<Arc<TableMeta>> {
        basalt_catalog::TabletCatalog::table(self.overlay.as_ref(), database, name)
    }

    /// After a successful COMMIT: the staged files belong to the published tables now.
    pub(super) fn mark_published(&self) {
        self.published.store(true, Ordering::Relaxed);
    }

    /// Deletes the files of what was staged (ROLLBACK and every other end without COMMIT).
    fn discard(&self) {
        for staged in self.overlay.take() {
            remove_staged(&self.shared, &staged);
        }
    }
}

fn remove_staged(storage: &StorageEngine, staged: &StagedTable) {
    let rowsets = staged.staged_rowsets();
    if !rowsets.is_empty() {
        storage.retire_rowsets(&staged.current, &rowsets);
    }
}

impl Drop for StagedWrites {
    fn drop(&mut self) {
        if !self.published.load(Ordering::Relaxed) {
            self.discard();
        }
    }
}
