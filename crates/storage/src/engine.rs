//! The storage engine handle: the data directory, the catalog it publishes to, load creation,
//! reading a tablet with its key model applied, and removal of files nothing references.

use crate::files::{list_files, table_dir};
use crate::merge::{sort_and_merge, MergeSpec};
use crate::segment::read_segment;
use crate::storage_err;
use crate::writer::LoadWriter;
use arrow::array::RecordBatch;
use arrow::compute::concat_batches;
use basalt_catalog::{Catalog, KeysModel, PartitionMeta, TableMeta, TabletMeta};
use basalt_common::Result;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub struct StorageEngine {
    data_dir: PathBuf,
    catalog: Arc<Catalog>,
    write_buffer_rows: usize,
}

impl std::fmt::Debug for StorageEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StorageEngine")
            .field("data_dir", &self.data_dir)
            .finish()
    }
}

impl StorageEngine {
    /// Opens the engine and deletes files that no published rowset references (left by loads
    /// that were interrupted before they published).
    pub fn open(
        data_dir: &Path,
        catalog: Arc<Catalog>,
        write_buffer_rows: usize,
    ) -> Result<Arc<StorageEngine>> {
        std::fs::create_dir_all(data_dir.join("data"))?;
        let engine = Arc::new(StorageEngine {
            data_dir: data_dir.to_path_buf(),
            catalog,
            write_buffer_rows: write_buffer_rows.max(1),
        });
        let removed = engine.collect_garbage()?;
        if removed > 0 {
            tracing::info!("removed {removed} unreferenced segment files");
        }
        Ok(engine)
    }

    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    pub fn catalog(&self) -> &Arc<Catalog> {
        &self.catalog
    }

    pub fn write_buffer_rows(&self) -> usize {
        self.write_buffer_rows
    }

    /// Starts a load into `table`; nothing is visible until [`LoadWriter::commit`].
    pub fn begin_load(self: &Arc<Self>, table: Arc<TableMeta>) -> LoadWriter {
        let load_id = self.catalog.allocate_id();
        LoadWriter::new(self.clone(), table, load_id)
    }

    /// Absolute path of a segment recorded in the catalog.
    pub fn segment_path(&self, rel: &str) -> PathBuf {
        self.data_dir.join(rel)
    }

    /// True when reading `tablet` needs the key model applied across segments.
    pub fn needs_merge(table: &TableMeta, tablet: &TabletMeta) -> bool {
        table.keys_model != KeysModel::Duplicate && tablet.num_segments() > 1
    }

    /// Reads `columns` (sorted table column indexes, including all key columns) of every
    /// rowset of `tablet`, merged by the table's key model.
    pub fn read_tablet_merged(
        &self,
        table: &TableMeta,
        tablet: &TabletMeta,
        columns: &[usize],
    ) -> Result<RecordBatch> {
        let full = table.arrow_schema();
        let schema = Arc::new(full.project(columns).map_err(storage_err)?);
        let mut batches = Vec::new();
        for rowset in &tablet.rowsets {
            for seg in &rowset.segments {
                batches.extend(read_segment(&self.segment_path(&seg.path), columns)?);
            }
        }
        let all = concat_batches(&schema, &batches).map_err(storage_err)?;
        sort_and_merge(&all, &MergeSpec::for_columns(table, columns))
    }

    /// Deletes the files of a dropped table (after the catalog change committed).
    pub fn remove_table_files(&self, table: &TableMeta) {
        let dir = self.data_dir.join(table_dir(table.id));
        if let Err(e) = std::fs::remove_dir_all(&dir) {
            if e.kind() != std::io::ErrorKind::NotFound {
                tracing::warn!("could not remove {}: {e}", dir.display());
            }
        }
    }

    /// Deletes the segment files of tablets whose rowsets were removed (truncate, drop partition).
    pub fn remove_tablet_files<'a>(&self, tablets: impl Iterator<Item = &'a TabletMeta>) {
        for t in tablets {
            for r in &t.rowsets {
                for s in &r.segments {
                    let _ = std::fs::remove_file(self.segment_path(&s.path));
                }
            }
        }
    }

    pub fn remove_partition_files(&self, partition: &PartitionMeta) {
        self.remove_tablet_files(partition.tablets.iter());
    }

    /// Removes every file under `data/` that the catalog does not reference. Only safe when no
    /// load is running (at startup).
    fn collect_garbage(&self) -> Result<usize> {
        let referenced = self.catalog.referenced_segments();
        let mut removed = 0;
        for rel in list_files(&self.data_dir, &self.data_dir.join("data"))? {
            if !referenced.contains(rel.to_string_lossy().as_ref()) {
                std::fs::remove_file(self.data_dir.join(&rel))?;
                removed += 1;
            }
        }
        Ok(removed)
    }
}
