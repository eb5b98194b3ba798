//! The metadata records: what a table is (columns, key model, partitions, distribution) and what
//! data it holds (tablets and their rowsets).

use crate::partition_value::PartitionValue;
use basalt_common::SqlType;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;

pub type TableId = u64;
pub type TabletId = u64;
pub type PartitionId = u64;
pub type RowsetId = u64;
pub type BackendId = u64;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum KeysModel {
    Duplicate,
    Aggregate,
    Unique,
}

impl KeysModel {
    pub fn sql_name(&self) -> &'static str {
        match self {
            KeysModel::Duplicate => "DUPLICATE",
            KeysModel::Aggregate => "AGGREGATE",
            KeysModel::Unique => "UNIQUE",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum AggKind {
    Sum,
    Min,
    Max,
    Replace,
    ReplaceIfNotNull,
    /// Union of BITMAP values.
    BitmapUnion,
    /// Union of HLL sketches.
    HllUnion,
    /// Union of QUANTILE_STATE values.
    QuantileUnion,
}

impl AggKind {
    pub fn sql_name(&self) -> &'static str {
        match self {
            AggKind::Sum => "SUM",
            AggKind::Min => "MIN",
            AggKind::Max => "MAX",
            AggKind::Replace => "REPLACE",
            AggKind::ReplaceIfNotNull => "REPLACE_IF_NOT_NULL",
            AggKind::BitmapUnion => "BITMAP_UNION",
            AggKind::HllUnion => "HLL_UNION",
            AggKind::QuantileUnion => "QUANTILE_UNION",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum ColumnDefault {
    Null,
    Literal(String),
    CurrentTimestamp,
    /// MySQL 8's `DEFAULT (expr)`: the expression's SQL text, computed for each row written
    /// (`basalt_functions::generated_columns::default_expression`).
    Expression(String),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ColumnMeta {
    /// The name in lower case: how the catalog, storage and the planner know the column.
    pub name: String,
    /// The spelling the column was created with, when it is not all lower case (`SELECT *`,
    /// DESCRIBE and information_schema show it; matching is by `name`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    pub ty: SqlType,
    pub nullable: bool,
    pub is_key: bool,
    pub agg: Option<AggKind>,
    pub default: Option<ColumnDefault>,
    pub comment: String,
    pub auto_increment: bool,
    /// A generated column's expression (MySQL's `GENERATED ALWAYS AS (..)`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generated: Option<crate::GeneratedMeta>,
    /// The members of an ENUM or SET column (its `ty` is the VARCHAR holding them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed: Option<crate::AllowedValues>,
    /// MySQL's `ON UPDATE CURRENT_TIMESTAMP`: an UPDATE (or ON DUPLICATE KEY UPDATE) that
    /// changes another column of a row and does not assign this one sets it to the statement's
    /// time.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub on_update_current_timestamp: bool,
}

/// Bounds of one partition. Range bounds are `[lower, upper)`; `None` means unbounded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum PartitionBound {
    /// The single partition of an unpartitioned table.
    All,
    Range {
        lower: Option<PartitionValue>,
        upper: Option<PartitionValue>,
    },
    List {
        values: Vec<PartitionValue>,
    },
}

impl PartitionBound {
    /// True if a row whose partition value is `v` belongs here.
    pub fn contains(&self, v: &PartitionValue) -> bool {
        match self {
            PartitionBound::All => true,
            PartitionBound::Range { lower, upper } => {
                lower.as_ref().is_none_or(|l| v >= l) && upper.as_ref().is_none_or(|u| v < u)
            }
            PartitionBound::List { values } => values.contains(v),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum PartitionKind {
    Unpartitioned,
    Range,
    List,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PartitionMeta {
    pub id: PartitionId,
    pub name: String,
    pub bound: PartitionBound,
    pub tablets: Vec<TabletMeta>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TabletMeta {
    pub id: TabletId,
    pub bucket: u32,
    /// Scale-out: the backends holding this tablet's replicas (empty on a single node, where
    /// the node itself holds every tablet).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replicas: Vec<BackendId>,
    /// Replicas (a subset of `replicas`) that missed a published version — their backend was
    /// down or failed the write — and so serve no reads until they have caught up by copying
    /// the missing rowsets from a healthy replica.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stale_replicas: Vec<BackendId>,
    /// Replicas (a subset of `replicas`) that a move or clone is adding: they take loads and
    /// catch up like stale ones, but are not yet of the tablet's normal set, so a write's
    /// majority is counted over the others (a move never makes loads fail more often). The
    /// move's end removes the replaced replica and this mark in one publish.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub joining_replicas: Vec<BackendId>,
    /// Visible rowsets in version order; persisted separately, one record per rowset.
    #[serde(skip)]
    pub rowsets: Vec<Arc<RowsetMeta>>,
    /// Unique keys (merge-on-write): rows of older segments replaced by newer loads, per
    /// segment path. Persisted separately, one record per segment.
    #[serde(skip)]
    pub delete_bitmaps: BTreeMap<String, DeleteBitmap>,
}

/// A serialized (roaring) set of deleted row ordinals of one segment.
#[derive(Debug, Clone, PartialEq)]
pub struct DeleteBitmap {
    pub bytes: Arc<Vec<u8>>,
    pub deleted_rows: u64,
}

impl TabletMeta {
    /// The replicas that hold every published version and may serve reads.
    pub fn readable_replicas(&self) -> impl Iterator<Item = BackendId> + '_ {
        self.replicas
            .iter()
            .copied()
            .filter(|id| !self.stale_replicas.contains(id))
    }

    /// How many replicas a write's majority is counted over: the normal set, without
    /// replicas a move is still adding.
    pub fn normal_replica_count(&self) -> usize {
        self.replicas
            .iter()
            .filter(|id| !self.joining_replicas.contains(id))
            .count()
    }

    /// Marks as stale every replica not in `seen` (the replicas a write knew of when it
    /// began: one a move added since got none of its segments); empty `seen` marks nothing.
    /// True when that changed anything.
    pub fn mark_unseen_stale(&mut self, seen: &[BackendId]) -> bool {
        if seen.is_empty() {
            return false;
        }
        let unseen: Vec<BackendId> = self
            .replicas
            .iter()
            .copied()
            .filter(|id| !seen.contains(id))
            .collect();
        self.mark_stale(unseen)
    }

    /// Marks those of `missed` that are replicas of this tablet as stale (they lack a published
    /// version); true when that changed anything.
    pub fn mark_stale(&mut self, missed: impl IntoIterator<Item = BackendId>) -> bool {
        let mut changed = false;
        for id in missed {
            if self.replicas.contains(&id) && !self.stale_replicas.contains(&id) {
                self.stale_replicas.push(id);
                changed = true;
            }
        }
        self.stale_replicas.sort_unstable();
        changed
    }

    /// The catalog paths of the segments of the visible rowsets.
    pub fn segment_paths(&self) -> impl Iterator<Item = &str> + '_ {
        self.rowsets
            .iter()
            .flat_map(|r| r.segments.iter().map(|s| s.path.as_str()))
    }

    /// The highest published version (0 for an empty tablet).
    pub fn version(&self) -> u64 {
        self.rowsets.last().map(|r| r.version).unwrap_or(0)
    }

    /// Live rows: stored rows minus rows deleted by newer loads.
    pub fn num_rows(&self) -> u64 {
        let stored: u64 = self.rowsets.iter().map(|r| r.num_rows()).sum();
        stored
            - self
                .delete_bitmaps
                .values()
                .map(|b| b.deleted_rows)
                .sum::<u64>()
                .min(stored)
    }

    pub fn num_segments(&self) -> usize {
        self.rowsets.iter().map(|r| r.segments.len()).sum()
    }

    /// The lowest version still covered (1 for a tablet that has had loads; 0 when empty).
    pub fn start_version(&self) -> u64 {
        self.rowsets.first().map(|r| r.start_version).unwrap_or(0)
    }

    /// Rows marked deleted in delete bitmaps.
    pub fn deleted_rows(&self) -> u64 {
        self.delete_bitmaps.values().map(|b| b.deleted_rows).sum()
    }
}

/// The data one load (or compaction) wrote to one tablet; immutable once published.
///
/// A load's rowset covers one version (`start_version == version`); a compaction's output covers
/// the versions of the rowsets it replaced, `[start_version, version]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RowsetMeta {
    pub id: RowsetId,
    pub tablet_id: TabletId,
    /// First version covered. Records written before compaction existed lack it; they are loaded
    /// with `start_version = version` (see [`RowsetMeta::fix_legacy`]).
    #[serde(default)]
    pub start_version: u64,
    /// Last version covered.
    pub version: u64,
    pub segments: Vec<SegmentMeta>,
    /// True when the key ranges of the segments may overlap (a load that wrote several segments);
    /// false when they are disjoint and ordered (a compaction's output), so that a reader may
    /// treat the rowset as one sorted, already merged run.
    #[serde(default = "overlap_default")]
    pub segments_overlap: bool,
    /// Unix milliseconds when published.
    pub created_ms: i64,
}

fn overlap_default() -> bool {
    true
}

impl RowsetMeta {
    /// Fills in fields that records from older versions lack.
    pub fn fix_legacy(&mut self) {
        if self.start_version == 0 {
            self.start_version = self.version;
        }
    }

    /// True when reading this rowset alone needs no merge across its segments.
    pub fn is_merged_run(&self) -> bool {
        self.segments.len() <= 1 || !self.segments_overlap
    }

    pub fn num_rows(&self) -> u64 {
        self.segments.iter().map(|s| s.num_rows).sum()
    }

    pub fn size_bytes(&self) -> u64 {
        self.segments.iter().map(|s| s.size_bytes).sum()
    }
}

/// One sorted segment file, its path relative to the data directory.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SegmentMeta {
    pub path: String,
    pub num_rows: u64,
    pub size_bytes: u64,
    /// Min/max/null count of the segment's orderable scalar columns, taken from the footer
    /// when the segment was written, so a node that holds no segment files (a cluster's
    /// frontend) plans with the same statistics as one that does. Empty for segments
    /// written before it was kept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub column_stats: Vec<SegmentColumnStats>,
}

/// One column's statistics in a segment; bounds in the column's text form (as Arrow
/// displays the value), read back by casting to the column's type.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SegmentColumnStats {
    pub column: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub null_count: Option<u64>,
}

/// A view: a stored SELECT, expanded wherever a query names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ViewMeta {
    pub database: String,
    pub name: String,
    /// The view's own column names (`CREATE VIEW v (a, b) AS ..`); empty: the query's.
    pub columns: Vec<String>,
    /// The SELECT as written (MySQL's VIEW_DEFINITION).
    pub definition: String,
    /// `user@host` of the account that created it.
    pub definer: String,
    pub created_ms: i64,
    /// ALGORITHM as declared. Basalt always merges the SELECT into the statement naming the
    /// view; the word is kept for SHOW CREATE VIEW.
    #[serde(default)]
    pub algorithm: ViewAlgorithm,
    /// `WITH [CASCADED | LOCAL] CHECK OPTION`: rows written through the view must satisfy it.
    #[serde(default)]
    pub check_option: ViewCheckOption,
    /// Doris's `(a COMMENT 'x', ..)`: each column's comment ("" none), by position.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub column_comments: Vec<String>,
    /// Doris's `COMMENT 'x'` before AS.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub comment: String,
    /// Each column's type as the SELECT gave it when the view was created or altered (what
    /// information_schema.COLUMNS shows), by position; empty for a view stored before Basalt
    /// recorded them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub column_types: Vec<basalt_common::SqlType>,
}

/// A view's ALGORITHM clause.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum ViewAlgorithm {
    #[default]
    Undefined,
    Merge,
    Temptable,
}

impl ViewAlgorithm {
    /// The word MySQL shows (SHOW CREATE VIEW).
    pub fn word(self) -> &'static str {
        match self {
            ViewAlgorithm::Undefined => "UNDEFINED",
            ViewAlgorithm::Merge => "MERGE",
            ViewAlgorithm::Temptable => "TEMPTABLE",
        }
    }
}

/// A view's `WITH [CASCADED | LOCAL] CHECK OPTION`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum ViewCheckOption {
    #[default]
    None,
    Local,
    Cascaded,
}

impl ViewCheckOption {
    /// The word of information_schema.VIEWS.CHECK_OPTION.
    pub fn word(self) -> &'static str {
        match self {
            ViewCheckOption::None => "NONE",
            ViewCheckOption::Local => "LOCAL",
            ViewCheckOption::Cascaded => "CASCADED",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DistributionMeta {
    /// Column indexes of the hash key; empty for RANDOM distribution.
    pub columns: Vec<usize>,
    pub buckets: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TableMeta {
    pub id: TableId,
    pub database: String,
    pub name: String,
    /// In storage order (see `declared_order`).
    pub columns: Vec<ColumnMeta>,
    pub keys_model: KeysModel,
    /// The first `num_key_columns` columns are the key (sort key; merge key for Aggregate/Unique).
    pub num_key_columns: usize,
    pub partition_kind: PartitionKind,
    /// Column index of the partition column (for Range and List).
    pub partition_column: Option<usize>,
    /// The formal partitions: the ones queries read and loads write by default.
    pub partitions: Vec<PartitionMeta>,
    /// Doris's temporary partitions: read and written only when a statement names them
    /// (`TEMPORARY PARTITION (..)`), until `REPLACE PARTITION .. WITH TEMPORARY PARTITION`
    /// makes them formal. Their tablets are the table's like any other ([`TableMeta::tablets`]
    /// lists them) so that storage keeps, compacts and replicates them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub temporary_partitions: Vec<PartitionMeta>,
    pub distribution: DistributionMeta,
    pub properties: BTreeMap<String, String>,
    pub comment: String,
    pub created_ms: i64,
    /// Bumped by every ALTER TABLE that changes the columns: a load written against an older
    /// schema is refused at publish.
    #[serde(default)]
    pub schema_version: u64,
    /// The storage index of each column in the order the table was declared with, when that
    /// differs from `columns` (a MySQL `PRIMARY KEY` naming columns that do not lead the
    /// declaration); empty otherwise. See `declared_order.rs`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub declared_order: Vec<usize>,
    /// Secondary indexes, in the order they were added (see `table_keys`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub indexes: Vec<crate::IndexMeta>,
    /// Foreign keys (informational), in the order they were added.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub foreign_keys: Vec<crate::ForeignKeyMeta>,
    /// Doris's AUTO PARTITION: loads create the partitions their rows need (see
    /// `auto_partitions`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_partition: Option<crate::AutoPartition>,
}

impl ColumnMeta {
    /// The name as created (see `display_name`).
    pub fn shown_name(&self) -> &str {
        self.display_name.as_deref().unwrap_or(&self.name)
    }

    /// Names the column `spelled` (matched in lower case, shown as spelled).
    pub fn set_name(&mut self, spelled: &str) {
        self.name = spelled.to_lowercase();
        self.display_name = (self.name != spelled).then(|| spelled.to_string());
    }
}

impl TableMeta {
    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.columns
            .iter()
            .position(|c| c.name.eq_ignore_ascii_case(name))
    }

    /// True for tables that keep each row encoded in one place (`store_row_column`) for point
    /// lookups.
    pub fn stores_rows(&self) -> bool {
        self.properties
            .get("store_row_column")
            .is_some_and(|v| v.eq_ignore_ascii_case("true"))
    }

    /// True for a Duplicate table without a sort key (Doris's
    /// `enable_duplicate_without_keys_by_default`): rows stay in the order they were loaded.
    pub fn keeps_load_order(&self) -> bool {
        self.keys_model == KeysModel::Duplicate && self.num_key_columns == 0
    }

    pub fn key_columns(&self) -> &[ColumnMeta] {
        &self.columns[..self.num_key_columns]
    }

    /// The Arrow schema rows of this table have.
    pub fn arrow_schema(&self) -> arrow::datatypes::SchemaRef {
        let fields: Vec<arrow::datatypes::Field> = self
            .columns
            .iter()
            .map(|c| c.ty.arrow_field(&c.name, c.nullable))
            .collect();
        Arc::new(arrow::datatypes::Schema::new(fields))
    }

    /// Every tablet the table holds, with its partition: the formal partitions' first, then
    /// the temporary ones'. For storage (publish, compaction, replicas, file lifetimes); what
    /// a query reads comes from `partitions`.
    pub fn tablets(&self) -> impl Iterator<Item = (&PartitionMeta, &TabletMeta)> {
        self.all_partitions()
            .flat_map(|p| p.tablets.iter().map(move |t| (p, t)))
    }

    /// Every tablet the table holds, to change (see [`TableMeta::tablets`]).
    pub fn tablets_mut(&mut self) -> impl Iterator<Item = &mut TabletMeta> {
        self.partitions
            .iter_mut()
            .chain(self.temporary_partitions.iter_mut())
            .flat_map(|p| p.tablets.iter_mut())
    }

    /// The formal partitions, then the temporary ones.
    pub fn all_partitions(&self) -> impl Iterator<Item = &PartitionMeta> {
        self.partitions
            .iter()
            .chain(self.temporary_partitions.iter())
    }

    /// Keeps only the tablets `keep` accepts, and the partitions left with any.
    pub fn retain_tablets(&mut self, mut keep: impl FnMut(&TabletMeta) -> bool) {
        for list in [&mut self.partitions, &mut self.temporary_partitions] {
            for p in list.iter_mut() {
                p.tablets.retain(&mut keep);
            }
            list.retain(|p| !p.tablets.is_empty());
        }
    }

    /// Visible rows of the formal partitions.
    pub fn num_rows(&self) -> u64 {
        self.partitions.iter().map(|p| p.num_rows()).sum()
    }

    /// Bytes of the formal partitions' segment files.
    pub fn data_bytes(&self) -> u64 {
        self.partitions.iter().map(|p| p.data_bytes()).sum()
    }

    pub fn temporary_partition_by_name(&self, name: &str) -> Option<&PartitionMeta> {
        self.temporary_partitions
            .iter()
            .find(|p| p.name.eq_ignore_ascii_case(name))
    }

    pub fn partition_by_name(&self, name: &str) -> Option<&PartitionMeta> {
        self.partitions
            .iter()
            .find(|p| p.name.eq_ignore_ascii_case(name))
    }

    pub fn partition_column_meta(&self) -> Option<&ColumnMeta> {
        self.partition_column.map(|i| &self.columns[i])
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DatabaseMeta {
    pub id: u64,
    pub name: String,
    pub created_ms: i64,
}
