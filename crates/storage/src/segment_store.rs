//! How readers outside storage reach segment files: a segment is named by its catalog path (its
//! key: `data/<table>/<partition>/<tablet>/<file>`), and is read either through one
//! `object_store` (which DataFusion's Parquet reader and footer cache use) or opened for
//! synchronous reads of its byte ranges (the column cache's decoder). Callers never build file
//! paths; a store on another node or an object-store layout can stand behind the same names.

use basalt_common::{BasaltError, Result};
use object_store::local::LocalFileSystem;
use object_store::path::Path as ObjectPath;
use object_store::ObjectStore;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The address DataFusion registers the segment store under (scheme and host only).
const SEGMENTS_URL: &str = "basalt-segments://local/";

/// The segment files of one storage engine.
#[derive(Debug)]
pub struct SegmentStore {
    root: PathBuf,
    store: Arc<dyn ObjectStore>,
    url: url::Url,
}

impl SegmentStore {
    /// The segments under the data directory `root`.
    pub fn open(root: &Path) -> Result<SegmentStore> {
        let store = LocalFileSystem::new_with_prefix(root).map_err(|e| {
            BasaltError::Internal(format!("segment store at {}: {e}", root.display()))
        })?;
        let url = url::Url::parse(SEGMENTS_URL)
            .map_err(|e| BasaltError::Internal(format!("segment store address: {e}")))?;
        Ok(SegmentStore {
            root: root.to_path_buf(),
            store: Arc::new(store),
            url,
        })
    }

    /// The store every segment is read through, by [`SegmentStore::location`].
    pub fn object_store(&self) -> Arc<dyn ObjectStore> {
        self.store.clone()
    }

    /// The address to register [`SegmentStore::object_store`] under.
    pub fn url(&self) -> &url::Url {
        &self.url
    }

    /// Where a segment (by its catalog path) is in [`SegmentStore::object_store`].
    pub fn location(&self, segment: &str) -> ObjectPath {
        ObjectPath::from(segment)
    }

    /// Opens a segment for synchronous reads of its byte ranges.
    pub fn open_segment(&self, segment: &str) -> Result<std::fs::File> {
        std::fs::File::open(self.file(segment))
            .map_err(|e| BasaltError::Storage(format!("cannot open segment {segment}: {e}")))
    }

    /// The file of a segment on this node (storage's own readers and writers).
    pub(crate) fn file(&self, segment: &str) -> PathBuf {
        self.root.join(segment)
    }
}
