//! Compaction against a real catalog and segment files: each key model keeps its results, the
//! version range and files follow, concurrent merge-on-write loads are carried over, and races
//! with TRUNCATE publish nothing; a compaction's lineage is known as soon as its output is, and
//! `disable_auto_compaction` keeps background compaction off a table.

use super::policy::CompactionPolicy;
use crate::delete_bitmap;
use crate::segment::read_segment;
use crate::StorageEngine;
use arrow::array::{ArrayRef, Int32Array, Int64Array, RecordBatch, StringArray};
use arrow::util::display::array_value_to_string;
use basalt_catalog::{
    AggKind, Catalog, ColumnMeta, DistributionMeta, KeysModel, LocalCatalog, PartitionBound,
    PartitionKind, PartitionMeta, TableMeta, TabletCatalog, TabletMeta,
};
use basalt_common::BasaltError;
use basalt_common::SqlType;
use std::collections::HashSet;
use std::sync::Arc;

struct Fixture {
    _dir: tempfile::TempDir,
    catalog: Arc<LocalCatalog>,
    engine: Arc<StorageEngine>,
}

/// Table d.t `(k INT, a BIGINT, s VARCHAR(10))` keyed on `k` in one tablet, with the value
/// columns' aggregations for Aggregate tables.
fn fixture(keys_model: KeysModel, aggs: [Option<AggKind>; 2]) -> Fixture {
    fixture_with_keys(keys_model, aggs, 1)
}

/// The same table with `num_keys` (0 or 1) key columns.
fn fixture_with_keys(
    keys_model: KeysModel,
    aggs: [Option<AggKind>; 2],
    num_keys: usize,
) -> Fixture {
    fixture_with_properties(keys_model, aggs, num_keys, Default::default())
}

/// The same table with table properties.
fn fixture_with_properties(
    keys_model: KeysModel,
    aggs: [Option<AggKind>; 2],
    num_keys: usize,
    properties: std::collections::BTreeMap<String, String>,
) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let catalog = Arc::new(LocalCatalog::open(&dir.path().join("meta")).unwrap());
    catalog.create_database("d", false).unwrap();
    let column = |name: &str, ty: SqlType, agg: Option<AggKind>| ColumnMeta {
        name: name.into(),
        display_name: None,
        ty,
        nullable: true,
        is_key: num_keys > 0 && agg.is_none() && name == "k",
        agg,
        default: None,
        comment: String::new(),
        auto_increment: false,
        generated: None,
        allowed: None,
        on_update_current_timestamp: false,
    };
    let table = TableMeta {
        id: catalog.allocate_id(),
        database: "d".into(),
        name: "t".into(),
        columns: vec![
            column("k", SqlType::Int, None),
            column("a", SqlType::BigInt, aggs[0]),
            column("s", SqlType::Varchar(10), aggs[1]),
        ],
        keys_model,
        num_key_columns: num_keys,
        partition_kind: PartitionKind::Unpartitioned,
        partition_column: None,
        temporary_partitions: Vec::new(),
        partitions: vec![PartitionMeta::empty(
            "t".into(),
            PartitionBound::All,
            1,
            || catalog.allocate_id(),
        )],
        distribution: DistributionMeta {
            columns: (0..num_keys).collect(),
            buckets: 1,
        },
        properties,
        comment: String::new(),
        created_ms: 0,
        schema_version: 0,
        declared_order: vec![],
        indexes: vec![],
        foreign_keys: vec![],
        auto_partition: None,
    };
    catalog.create_table(table, false).unwrap();
    let engine = StorageEngine::open(
        dir.path(),
        catalog.clone(),
        crate::WriteBufferLimits {
            rows_per_tablet: 1_000_000,
            bytes: 1 << 30,
        },
        1 << 30,
        1 << 20,
    )
    .unwrap();
    Fixture {
        _dir: dir,
        catalog,
        engine,
    }
}

impl Fixture {
    fn table(&self) -> Arc<TableMeta> {
        self.engine.catalog().table("d", "t").unwrap()
    }

    fn tablet(&self) -> TabletMeta {
        self.table().tablets().next().unwrap().1.clone()
    }

    /// Loads rows `(k, a, s)` in one load.
    fn load(&self, rows: &[(i32, i64, &str)]) -> basalt_common::Result<()> {
        let table = self.table();
        let columns: Vec<ArrayRef> = vec![
            Arc::new(Int32Array::from_iter_values(rows.iter().map(|r| r.0))),
            Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.1))),
            Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.2))),
        ];
        let batch = RecordBatch::try_new(table.arrow_schema(), columns).unwrap();
        let mut w = self.engine.try_begin_load(table).unwrap();
        w.write(&batch)?;
        w.commit().map(|_| ())
    }

    /// Every visible row as text, sorted: delete bitmaps applied, Aggregate merged when needed.
    fn rows(&self) -> Vec<String> {
        let mut out = self.rows_in_storage_order();
        out.sort();
        out
    }

    /// Every visible row as text, in the order the tablet's rowsets and segments hold them.
    fn rows_in_storage_order(&self) -> Vec<String> {
        let table = self.table();
        let all: Vec<usize> = (0..table.columns.len()).collect();
        let mut batches = Vec::new();
        for (_, tablet) in table.tablets() {
            if StorageEngine::needs_merge(&table, tablet) {
                batches.push(
                    self.engine
                        .read_tablet_merged(&table, tablet, &all)
                        .unwrap(),
                );
                continue;
            }
            for seg in tablet.rowsets.iter().flat_map(|r| r.segments.iter()) {
                let deleted = tablet
                    .delete_bitmaps
                    .get(&seg.path)
                    .map(|b| delete_bitmap::decode(b).unwrap())
                    .unwrap_or_default();
                let mut row = 0u32;
                for b in read_segment(&self.engine.segment_path(&seg.path), &all).unwrap() {
                    let keep: Vec<u32> = (0..b.num_rows() as u32)
                        .filter(|i| !deleted.contains(row + i))
                        .collect();
                    row += b.num_rows() as u32;
                    let idx = arrow::array::UInt32Array::from(keep);
                    batches.push(arrow::compute::take_record_batch(&b, &idx).unwrap());
                }
            }
        }
        batches
            .iter()
            .flat_map(|b| {
                (0..b.num_rows()).map(move |i| {
                    b.columns()
                        .iter()
                        .map(|c| array_value_to_string(c, i).unwrap())
                        .collect::<Vec<_>>()
                        .join(",")
                })
            })
            .collect()
    }

    /// Compacts until the policy (quiet at once) finds nothing more to do; returns how many ran.
    fn compact_all(&self, policy: &CompactionPolicy) -> usize {
        let tablet = self.tablet();
        let mut n = 0;
        while let Some(_stats) = self
            .engine
            .compact_tablet_now(self.table().id, tablet.id, policy)
            .unwrap()
        {
            n += 1;
            assert!(n < 100, "compaction does not converge");
        }
        n
    }

    fn segment_files(&self) -> usize {
        crate::files::list_files(self.engine.data_dir(), &self.engine.data_dir().join("data"))
            .unwrap()
            .len()
    }
}

fn settle() -> CompactionPolicy {
    CompactionPolicy {
        quiet_ms: 0,
        ..Default::default()
    }
}

fn ranges(t: &TabletMeta) -> Vec<(u64, u64)> {
    t.rowsets
        .iter()
        .map(|r| (r.start_version, r.version))
        .collect()
}

#[test]
fn duplicate_keys_keep_every_row() {
    let f = fixture(KeysModel::Duplicate, [None, None]);
    for i in 0..30 {
        f.load(&[(i % 7, i as i64, "x")]).unwrap();
    }
    let before = f.rows();
    assert_eq!(f.tablet().rowsets.len(), 30);
    let ran = f.compact_all(&settle());
    assert!(ran >= 1);
    let t = f.tablet();
    assert_eq!(ranges(&t), vec![(1, 30)]);
    assert_eq!(f.rows(), before);
    // With no reader holding them, the replaced files are gone at once.
    assert_eq!(f.segment_files(), 1);
    // Loads continue after the compacted range.
    f.load(&[(1, 100, "y")]).unwrap();
    assert_eq!(ranges(&f.tablet()), vec![(1, 30), (31, 31)]);
}

#[test]
fn duplicate_without_keys_keeps_load_order() {
    let f = fixture_with_keys(KeysModel::Duplicate, [None, None], 0);
    let mut want = Vec::new();
    for i in 0..20 {
        // Two rows per load, in descending key order: a sort would reorder them.
        let rows = [(100 - i, i as i64, "a"), (50 - i, i as i64, "b")];
        f.load(&rows).unwrap();
        want.extend(rows.iter().map(|(k, a, s)| format!("{k},{a},{s}")));
    }
    assert_eq!(f.rows_in_storage_order(), want);
    assert!(f.compact_all(&settle()) >= 1);
    assert_eq!(ranges(&f.tablet()), vec![(1, 20)]);
    assert_eq!(f.rows_in_storage_order(), want);
}

#[test]
fn aggregate_keys_aggregate_and_need_no_merge_after() {
    let f = fixture(
        KeysModel::Aggregate,
        [Some(AggKind::Sum), Some(AggKind::Replace)],
    );
    let mut expected = std::collections::BTreeMap::new();
    for i in 0..25i64 {
        let k = (i % 5) as i32;
        let s = format!("v{i}");
        f.load(&[(k, i, &s)]).unwrap();
        let e = expected.entry(k).or_insert((0i64, String::new()));
        e.0 += i;
        e.1 = s;
    }
    let want: Vec<String> = expected
        .iter()
        .map(|(k, (a, s))| format!("{k},{a},{s}"))
        .collect();
    assert_eq!(f.rows(), want);
    assert!(StorageEngine::needs_merge(&f.table(), &f.tablet()));
    // Output split into segments of at most 2 rows: still one merged run.
    let policy = CompactionPolicy {
        output_segment_rows: 2,
        ..settle()
    };
    f.compact_all(&policy);
    let t = f.tablet();
    assert_eq!(ranges(&t), vec![(1, 25)]);
    assert_eq!(t.num_segments(), 3);
    assert_eq!(t.num_rows(), 5);
    assert!(!StorageEngine::needs_merge(&f.table(), &t));
    assert_eq!(f.rows(), want);
    // A newer load is merged on read again, REPLACE taking the newest value.
    f.load(&[(0, 1000, "new")]).unwrap();
    assert!(StorageEngine::needs_merge(&f.table(), &f.tablet()));
    let rows = f.rows();
    assert!(
        rows[0].starts_with("0,") && rows[0].ends_with(",new"),
        "{rows:?}"
    );
}

#[test]
fn only_adjacent_rowsets_merge_so_replace_keeps_the_newest() {
    let f = fixture(
        KeysModel::Aggregate,
        [Some(AggKind::Max), Some(AggKind::Replace)],
    );
    // A big rowset in the middle keeps the small ones on either side apart.
    f.load(&[(1, 1, "old")]).unwrap();
    f.load(&[(1, 2, "older?")]).unwrap();
    let big: Vec<(i32, i64, String)> = (0..200_000)
        .map(|i| (i + 10, i as i64, format!("bbbbbbbb{i}")))
        .collect();
    let big: Vec<(i32, i64, &str)> = big.iter().map(|(k, a, s)| (*k, *a, s.as_str())).collect();
    f.load(&big).unwrap();
    let policy = settle();
    let big_bytes = f.tablet().rowsets[2].size_bytes();
    assert!(
        policy.tier(big_bytes) > 0,
        "{big_bytes} bytes is not a bigger tier"
    );
    f.load(&[(1, 0, "newest")]).unwrap();
    f.load(&[(2, 5, "x")]).unwrap();
    f.compact_all(&settle());
    let t = f.tablet();
    assert_eq!(ranges(&t), vec![(1, 2), (3, 3), (4, 5)], "{:?}", ranges(&t));
    let rows = f.rows();
    assert_eq!(rows[0], "1,2,newest");
}

#[test]
fn unique_keys_drop_deleted_rows_and_follow_concurrent_loads() {
    let f = fixture(KeysModel::Unique, [None, None]);
    for i in 0..12 {
        f.load(&[(i % 6, i as i64, "a")]).unwrap();
    }
    let t = f.tablet();
    assert_eq!(t.num_rows(), 6);
    assert!(t.deleted_rows() > 0);
    // The compaction reads its snapshot, then a load replaces rows of its inputs before it
    // publishes.
    let policy = CompactionPolicy {
        output_segment_rows: 4,
        ..settle()
    };
    let job = f
        .engine
        .pick_compaction(&policy, &HashSet::new())
        .expect("something to compact");
    assert_eq!((job.pick.start, job.pick.end), (0, 12));
    f.load(&[(0, 100, "late"), (5, 105, "late"), (9, 109, "new")])
        .unwrap();
    let stats = f.engine.compact(job).unwrap();
    assert_eq!(stats.input_rows, 12);
    assert_eq!(stats.output_rows, 6, "deleted rows are dropped");
    assert_eq!(stats.carried_deletes, 2);
    let t = f.tablet();
    assert_eq!(ranges(&t), vec![(1, 12), (13, 13)]);
    assert_eq!(t.num_rows(), 7);
    let want = vec![
        "0,100,late",
        "1,7,a",
        "2,8,a",
        "3,9,a",
        "4,10,a",
        "5,105,late",
        "9,109,new",
    ];
    assert_eq!(f.rows(), want);
    // The cached primary-key index now points into the output: replacing rows of it works.
    f.load(&[(1, 201, "b"), (0, 200, "b")]).unwrap();
    let want_after = vec![
        "0,200,b",
        "1,201,b",
        "2,8,a",
        "3,9,a",
        "4,10,a",
        "5,105,late",
        "9,109,new",
    ];
    assert_eq!(f.rows(), want_after);
    assert_eq!(f.tablet().num_rows(), 7);
    // A fresh index built from the catalog (as after a restart) agrees.
    f.engine.pk_indexes.write().clear();
    f.load(&[(2, 302, "c")]).unwrap();
    let rows = f.rows();
    assert_eq!(rows.len(), 7);
    assert!(rows.contains(&"2,302,c".to_string()), "{rows:?}");
    // Everything compacts to one rowset with no deleted rows.
    f.compact_all(&policy);
    let t = f.tablet();
    assert_eq!(t.rowsets.len(), 1);
    assert_eq!(t.deleted_rows(), 0);
    assert_eq!(t.num_rows(), 7);
    assert_eq!(f.rows().len(), 7);
}

#[test]
fn a_compaction_racing_truncate_publishes_nothing_and_leaves_no_files() {
    let f = fixture(KeysModel::Unique, [None, None]);
    for i in 0..5 {
        f.load(&[(i, 1, "a")]).unwrap();
    }
    let job = f
        .engine
        .pick_compaction(&settle(), &HashSet::new())
        .unwrap();
    let old = f.catalog.truncate_table("d", "t").unwrap();
    f.engine.remove_tablet_files(old.tablets().map(|(_, t)| t));
    let err = f.engine.compact(job).unwrap_err();
    assert!(matches!(err, BasaltError::Catalog(_)), "{err}");
    drop(err);
    assert!(f.tablet().rowsets.is_empty());
    assert_eq!(f.segment_files(), 0);
}

#[test]
fn loads_fail_fast_past_the_version_bound_and_leave_no_files() {
    let f = fixture(KeysModel::Duplicate, [None, None]);
    f.catalog.set_max_tablet_versions(3);
    for i in 0..3 {
        f.load(&[(i, 1, "a")]).unwrap();
    }
    let err = f.load(&[(9, 1, "a")]).unwrap_err();
    assert!(
        matches!(
            err,
            BasaltError::TooManyVersions {
                versions: 4,
                max: 3,
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(f.segment_files(), 3);
    f.compact_all(&settle());
    f.load(&[(9, 1, "a")]).unwrap();
    assert_eq!(f.rows().len(), 4);
}

#[test]
fn background_threads_compact_after_loads() {
    let f = fixture(
        KeysModel::Aggregate,
        [Some(AggKind::Sum), Some(AggKind::Replace)],
    );
    f.engine
        .start_compaction(
            1,
            std::time::Duration::from_millis(50),
            CompactionPolicy {
                quiet_ms: 100,
                ..Default::default()
            },
        )
        .unwrap();
    for i in 0..40 {
        f.load(&[(i % 3, 1, "z")]).unwrap();
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while f.tablet().rowsets.len() > 1 {
        assert!(
            std::time::Instant::now() < deadline,
            "background compaction did not settle"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(f.rows(), vec!["0,14,z", "1,13,z", "2,13,z"]);
    f.engine.stop_compaction();
}

#[test]
fn a_compactions_lineage_is_known_as_soon_as_its_output_is_published() {
    let f = fixture(KeysModel::Unique, [None, None]);
    for i in 0..5 {
        f.load(&[(i % 2, i.into(), "a")]).unwrap();
    }
    let before = f.tablet();
    // A compaction asked for by name, not through the background scheduler: a transaction
    // that read `before` and commits now must see the new version as only compacted.
    assert!(f.compact_all(&settle()) > 0);
    let after = f.tablet();
    assert_ne!(ranges(&after), ranges(&before));
    assert!(f.engine.only_compacted(&before, &after));
    // A load is not a compaction.
    f.load(&[(9, 9, "b")]).unwrap();
    assert!(!f.engine.only_compacted(&before, &f.tablet()));
}

#[test]
fn disable_auto_compaction_keeps_background_compaction_off_the_table() {
    let properties = [("disable_auto_compaction".to_string(), "true".to_string())].into();
    let f = fixture_with_properties(KeysModel::Unique, [None, None], 1, properties);
    for i in 0..5 {
        f.load(&[(i, 1, "a")]).unwrap();
    }
    assert!(f
        .engine
        .pick_compaction(&settle(), &HashSet::new())
        .is_none());
    // Compaction asked for by name still runs.
    assert!(f.compact_all(&settle()) > 0);
    let enabled = fixture(KeysModel::Unique, [None, None]);
    for i in 0..5 {
        enabled.load(&[(i, 1, "a")]).unwrap();
    }
    assert!(enabled
        .engine
        .pick_compaction(&settle(), &HashSet::new())
        .is_some());
}
