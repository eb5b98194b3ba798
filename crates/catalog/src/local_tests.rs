//! Tests of the local catalog: durability across reopen, atomic publishing, labels, compaction
//! replacing rowsets, and the version bound.

use super::*;

/// An unpartitioned table `name (k INT, v INT)` keyed on `k`, hashed into `buckets` tablets, as
/// the frontend's CREATE TABLE would build it.
fn int_table(
    c: &LocalCatalog,
    database: &str,
    name: &str,
    keys_model: KeysModel,
    buckets: u32,
) -> TableMeta {
    let column = |name: &str, is_key: bool| ColumnMeta {
        name: name.into(),
        display_name: None,
        ty: basalt_common::SqlType::Int,
        nullable: true,
        is_key,
        agg: None,
        default: None,
        comment: String::new(),
        auto_increment: false,
        generated: None,
        allowed: None,
        on_update_current_timestamp: false,
    };
    TableMeta {
        id: c.allocate_id(),
        database: database.into(),
        name: name.into(),
        columns: vec![column("k", true), column("v", false)],
        keys_model,
        num_key_columns: 1,
        partition_kind: PartitionKind::Unpartitioned,
        partition_column: None,
        temporary_partitions: Vec::new(),
        partitions: vec![PartitionMeta::empty(
            name.into(),
            PartitionBound::All,
            buckets,
            || c.allocate_id(),
        )],
        distribution: DistributionMeta {
            columns: vec![0],
            buckets,
        },
        properties: Default::default(),
        comment: String::new(),
        created_ms: 0,
        schema_version: 0,
        declared_order: vec![],
        indexes: vec![],
        foreign_keys: vec![],
        auto_partition: None,
    }
}

fn job(label: &str, finished_ms: i64) -> LoadJobRecord {
    LoadJobRecord {
        label: label.into(),
        database: "demo".into(),
        table: "t".into(),
        txn_id: 1,
        state: "FINISHED".into(),
        message: String::new(),
        total_rows: 0,
        loaded_rows: 0,
        filtered_rows: 0,
        unselected_rows: 0,
        load_bytes: 0,
        user: "root".into(),
        created_ms: finished_ms,
        finished_ms,
        error_url: None,
        kind: "STREAM LOAD".into(),
    }
}

#[test]
fn labels_expire_while_running_and_at_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let old = now_ms() - LABEL_KEEP_MS - 1000;
    let c = LocalCatalog::open(dir.path()).unwrap();
    c.create_database("demo", false).unwrap();
    c.create_table(int_table(&c, "demo", "t", KeysModel::Duplicate, 1), false)
        .unwrap();
    let t = c.table("demo", "t").unwrap();
    c.publish_load(t.id, vec![], Some(job("old", old))).unwrap();
    c.publish_load(t.id, vec![], Some(job("new", now_ms())))
        .unwrap();
    // An expired label is free at once, even before it is swept.
    assert!(c.load_job("demo", "old").is_none());
    assert!(c.load_job("demo", "new").is_some());
    assert!(matches!(
        c.publish_load(t.id, vec![], Some(job("new", now_ms()))),
        Err(BasaltError::LabelAlreadyExists(_))
    ));
    // The next publish after the sweep interval forgets it durably.
    c.labels_expired_ms
        .store(0, std::sync::atomic::Ordering::Relaxed);
    c.publish_load(t.id, vec![], None).unwrap();
    assert_eq!(c.state.read().load_jobs.len(), 1);
    drop(c);
    let c = LocalCatalog::open(dir.path()).unwrap();
    assert_eq!(c.load_jobs("demo").len(), 1);
}

#[test]
fn catalog_survives_reopen_and_publishes_atomically() {
    let dir = tempfile::tempdir().unwrap();
    {
        // Names fold to lower case (lower_case_table_names = 1).
        let c = LocalCatalog::open_with(dir.path(), Some(TableNameCase::Lower)).unwrap();
        c.create_database("Demo", false).unwrap();
        assert!(!c.create_database("demo", true).unwrap());
        assert_eq!(
            c.create_database("demo", false).unwrap_err().mysql_code(),
            1007
        );
        c.create_table(int_table(&c, "demo", "T", KeysModel::Duplicate, 2), false)
            .unwrap();
        let t = c.table("demo", "T").unwrap();
        let tablets: Vec<u64> = t.tablets().map(|(_, t)| t.id).collect();
        c.publish(
            t.id,
            tablets
                .iter()
                .map(|id| NewRowset {
                    tablet_id: *id,
                    segments: vec![SegmentMeta {
                        path: format!("x/{id}"),
                        num_rows: 5,
                        size_bytes: 10,
                        ..Default::default()
                    }],
                    delete_bitmaps: vec![],
                    schema_version: 0,
                    missing_replicas: Vec::new(),
                    seen_replicas: Vec::new(),
                })
                .collect(),
        )
        .unwrap();
        assert_eq!(c.table("demo", "t").unwrap().num_rows(), 10);
        // A publish naming a tablet that does not exist publishes nothing.
        let err = c.publish(
            t.id,
            vec![
                NewRowset {
                    tablet_id: tablets[0],
                    segments: vec![],
                    delete_bitmaps: vec![],
                    schema_version: 0,
                    missing_replicas: Vec::new(),
                    seen_replicas: Vec::new(),
                },
                NewRowset {
                    tablet_id: 999_999,
                    segments: vec![],
                    delete_bitmaps: vec![],
                    schema_version: 0,
                    missing_replicas: Vec::new(),
                    seen_replicas: Vec::new(),
                },
            ],
        );
        assert!(err.is_err());
        assert_eq!(
            c.table("demo", "t")
                .unwrap()
                .tablets()
                .next()
                .unwrap()
                .1
                .version(),
            1
        );
    }
    let c = LocalCatalog::open(dir.path()).unwrap();
    let t = c.table("demo", "t").unwrap();
    assert_eq!(t.num_rows(), 10);
    // A later load that replaces two rows of an older segment (merge-on-write).
    let first = t.tablets().next().unwrap().1.id;
    let bitmap = DeleteBitmap {
        bytes: Arc::new(vec![1, 2, 3]),
        deleted_rows: 2,
    };
    c.publish(
        t.id,
        vec![NewRowset {
            tablet_id: first,
            segments: vec![SegmentMeta {
                path: "y".into(),
                num_rows: 2,
                size_bytes: 1,
                ..Default::default()
            }],
            delete_bitmaps: vec![(format!("x/{first}"), bitmap.clone())],
            schema_version: 0,
            missing_replicas: Vec::new(),
            seen_replicas: Vec::new(),
        }],
    )
    .unwrap();
    drop(c);
    let c = LocalCatalog::open(dir.path()).unwrap();
    let t = c.table("demo", "t").unwrap();
    assert_eq!(t.num_rows(), 10);
    assert_eq!(
        t.tablets()
            .next()
            .unwrap()
            .1
            .delete_bitmaps
            .get(&format!("x/{first}")),
        Some(&bitmap)
    );
    assert_eq!(t.keys_model, KeysModel::Duplicate);
    assert!(c.find_user("root", "127.0.0.1").is_some());
    let id = c.allocate_id();
    assert!(t.tablets().all(|(_, tablet)| tablet.id < id));
}

fn seg(path: &str, rows: u64) -> SegmentMeta {
    SegmentMeta {
        path: path.into(),
        num_rows: rows,
        size_bytes: rows * 10,
        ..Default::default()
    }
}

/// A catalog with table d.t (one tablet) and `loads` published one-segment rowsets.
fn one_tablet_with_loads(dir: &Path, loads: usize) -> (LocalCatalog, TableId, TabletId) {
    let c = LocalCatalog::open(dir).unwrap();
    c.create_database("d", false).unwrap();
    c.create_table(int_table(&c, "d", "t", KeysModel::Unique, 1), false)
        .unwrap();
    let t = c.table("d", "t").unwrap();
    let tablet = t.tablets().next().unwrap().1.id;
    for i in 0..loads {
        c.publish(
            t.id,
            vec![NewRowset {
                tablet_id: tablet,
                segments: vec![seg(&format!("s{i}"), 2)],
                delete_bitmaps: vec![],
                schema_version: 0,
                missing_replicas: Vec::new(),
                seen_replicas: Vec::new(),
            }],
        )
        .unwrap();
    }
    (c, t.id, tablet)
}

fn tablet_of(c: &LocalCatalog) -> TabletMeta {
    c.table("d", "t")
        .unwrap()
        .tablets()
        .next()
        .unwrap()
        .1
        .clone()
}

fn bitmap(rows: u64) -> DeleteBitmap {
    DeleteBitmap {
        bytes: Arc::new(vec![rows as u8]),
        deleted_rows: rows,
    }
}

#[test]
fn compaction_replaces_adjacent_rowsets_atomically_and_durably() {
    let dir = tempfile::tempdir().unwrap();
    let (c, table, tablet) = one_tablet_with_loads(dir.path(), 4);
    // Loads 3 and 4 replaced rows of the older segments.
    c.publish(
        table,
        vec![NewRowset {
            tablet_id: tablet,
            segments: vec![seg("s4", 1)],
            delete_bitmaps: vec![("s1".into(), bitmap(1)), ("s3".into(), bitmap(2))],
            schema_version: 0,
            missing_replicas: Vec::new(),
            seen_replicas: Vec::new(),
        }],
    )
    .unwrap();
    let before = tablet_of(&c);
    assert_eq!(before.rowsets.len(), 5);
    assert_eq!(before.rowsets[0].start_version, 1);
    assert_eq!(before.num_rows(), 9 - 3);
    let inputs: Vec<RowsetId> = before.rowsets[1..4].iter().map(|r| r.id).collect();
    let (_, removed) = c
        .replace_rowsets(
            table,
            CompactedRowset {
                output_id: c.allocate_id(),
                tablet_id: tablet,
                inputs: inputs.clone(),
                segments: vec![seg("c1", 3)],
                delete_bitmaps: vec![("c1".into(), bitmap(1))],
                segments_overlap: false,
                missing_replicas: Vec::new(),
                seen_replicas: Vec::new(),
                input_deletes_seen: Vec::new(),
            },
        )
        .unwrap();
    assert_eq!(removed.len(), 3);
    let check = |t: TabletMeta| {
        let ranges: Vec<(u64, u64)> = t
            .rowsets
            .iter()
            .map(|r| (r.start_version, r.version))
            .collect();
        assert_eq!(ranges, vec![(1, 1), (2, 4), (5, 5)]);
        assert_eq!(t.version(), 5);
        assert_eq!(t.start_version(), 1);
        let bitmaps: Vec<&str> = t.delete_bitmaps.keys().map(|k| k.as_str()).collect();
        assert_eq!(bitmaps, vec!["c1"], "bitmaps of replaced segments are gone");
        assert_eq!(t.num_rows(), 2 + 3 - 1 + 1);
        assert!(!t.rowsets[1].segments_overlap);
        assert!(t.rowsets[1].is_merged_run());
    };
    check(tablet_of(&c));
    // Replaying the same compaction (its inputs are gone) fails and changes nothing.
    let again = c.replace_rowsets(
        table,
        CompactedRowset {
            output_id: c.allocate_id(),
            tablet_id: tablet,
            inputs,
            segments: vec![seg("c2", 3)],
            delete_bitmaps: vec![],
            segments_overlap: false,
            missing_replicas: Vec::new(),
            seen_replicas: Vec::new(),
            input_deletes_seen: Vec::new(),
        },
    );
    assert!(again.is_err());
    check(tablet_of(&c));
    drop(c);
    let c = LocalCatalog::open(dir.path()).unwrap();
    check(tablet_of(&c));
    // Loads continue after the compacted range.
    c.publish(
        table,
        vec![NewRowset {
            tablet_id: tablet,
            segments: vec![seg("s5", 1)],
            delete_bitmaps: vec![],
            schema_version: 0,
            missing_replicas: Vec::new(),
            seen_replicas: Vec::new(),
        }],
    )
    .unwrap();
    assert_eq!(tablet_of(&c).version(), 6);
}

/// A compaction made from its inputs' rows as they were: when a publish deletes more of them
/// before the compaction's (a COMMIT replacing a row), the output would bring that row back,
/// so the compaction is stale and changes nothing.
#[test]
fn compaction_is_stale_when_its_inputs_lost_rows_meanwhile() {
    let dir = tempfile::tempdir().unwrap();
    let (c, table, tablet) = one_tablet_with_loads(dir.path(), 3);
    let inputs: Vec<RowsetId> = tablet_of(&c).rowsets[..2].iter().map(|r| r.id).collect();
    let seen = vec![("s0".to_string(), None), ("s1".to_string(), None)];
    let compaction = |seen: Vec<(String, Option<DeleteBitmap>)>| CompactedRowset {
        output_id: c.allocate_id(),
        tablet_id: tablet,
        inputs: inputs.clone(),
        segments: vec![seg("c", 4)],
        delete_bitmaps: vec![],
        segments_overlap: false,
        missing_replicas: Vec::new(),
        seen_replicas: Vec::new(),
        input_deletes_seen: seen,
    };
    // A later write deletes a row of s1 (its key was replaced).
    c.publish(
        table,
        vec![NewRowset {
            tablet_id: tablet,
            segments: vec![seg("s3", 1)],
            delete_bitmaps: vec![("s1".into(), bitmap(1))],
            schema_version: 0,
            missing_replicas: Vec::new(),
            seen_replicas: Vec::new(),
        }],
    )
    .unwrap();
    let ids = |t: TabletMeta| -> Vec<RowsetId> { t.rowsets.iter().map(|r| r.id).collect() };
    let before = ids(tablet_of(&c));
    let err = c.replace_rowsets(table, compaction(seen)).unwrap_err();
    assert!(err.to_string().contains("deleted meanwhile"), "{err}");
    assert_eq!(
        ids(tablet_of(&c)),
        before,
        "a stale compaction changes nothing"
    );
    assert!(tablet_of(&c).delete_bitmaps.contains_key("s1"));
    // Made from the rows as they are now, it publishes.
    let now = vec![
        ("s0".to_string(), None),
        ("s1".to_string(), Some(bitmap(1))),
    ];
    c.replace_rowsets(table, compaction(now)).unwrap();
    assert_eq!(tablet_of(&c).rowsets.len(), 3);
}

#[test]
fn compaction_fails_unless_inputs_are_exactly_present_and_adjacent() {
    let dir = tempfile::tempdir().unwrap();
    let (c, table, tablet) = one_tablet_with_loads(dir.path(), 4);
    let ids: Vec<RowsetId> = tablet_of(&c).rowsets.iter().map(|r| r.id).collect();
    let attempt = |inputs: Vec<RowsetId>, tablet_id: TabletId| {
        c.replace_rowsets(
            table,
            CompactedRowset {
                output_id: c.allocate_id(),
                tablet_id,
                inputs,
                segments: vec![seg("c", 1)],
                delete_bitmaps: vec![],
                segments_overlap: false,
                missing_replicas: Vec::new(),
                seen_replicas: Vec::new(),
                input_deletes_seen: Vec::new(),
            },
        )
    };
    assert!(
        attempt(vec![ids[0], ids[2]], tablet).is_err(),
        "not adjacent"
    );
    assert!(
        attempt(vec![ids[1], ids[0]], tablet).is_err(),
        "out of order"
    );
    assert!(attempt(vec![], tablet).is_err(), "no inputs");
    assert!(
        attempt(vec![ids[3], 424_242], tablet).is_err(),
        "unknown rowset"
    );
    assert!(attempt(vec![ids[0]], 424_242).is_err(), "unknown tablet");
    assert!(
        c.replace_rowsets(
            987_654,
            CompactedRowset {
                output_id: c.allocate_id(),
                tablet_id: tablet,
                inputs: vec![ids[0]],
                segments: vec![],
                delete_bitmaps: vec![],
                segments_overlap: false,
                missing_replicas: Vec::new(),
                seen_replicas: Vec::new(),
                input_deletes_seen: Vec::new(),
            }
        )
        .is_err(),
        "unknown table"
    );
    assert_eq!(tablet_of(&c).rowsets.len(), 4);
    // TRUNCATE raced the compaction: the inputs are gone.
    c.truncate_table("d", "t").unwrap();
    assert!(attempt(ids[..2].to_vec(), tablet).is_err());
    assert!(tablet_of(&c).rowsets.is_empty());
    drop(c);
    let c = LocalCatalog::open(dir.path()).unwrap();
    assert!(tablet_of(&c).rowsets.is_empty());
}

#[test]
fn loads_fail_fast_past_the_version_bound() {
    let dir = tempfile::tempdir().unwrap();
    let (c, table, tablet) = one_tablet_with_loads(dir.path(), 3);
    c.set_max_tablet_versions(3);
    let load = |name: &str| {
        c.publish(
            table,
            vec![NewRowset {
                tablet_id: tablet,
                segments: vec![seg(name, 1)],
                delete_bitmaps: vec![],
                schema_version: 0,
                missing_replicas: Vec::new(),
                seen_replicas: Vec::new(),
            }],
        )
    };
    let err = load("x").unwrap_err();
    assert_eq!(err.mysql_code(), 1637);
    assert!(err.to_string().contains("(4 > 3)"), "{err}");
    assert_eq!(tablet_of(&c).rowsets.len(), 3);
    // Compaction makes room again.
    let ids: Vec<RowsetId> = tablet_of(&c).rowsets.iter().map(|r| r.id).collect();
    c.replace_rowsets(
        table,
        CompactedRowset {
            output_id: c.allocate_id(),
            tablet_id: tablet,
            inputs: ids,
            segments: vec![seg("c", 6)],
            delete_bitmaps: vec![],
            segments_overlap: false,
            missing_replicas: Vec::new(),
            seen_replicas: Vec::new(),
            input_deletes_seen: Vec::new(),
        },
    )
    .unwrap();
    load("x").unwrap();
    assert_eq!(tablet_of(&c).rowsets.len(), 2);
    assert_eq!(tablet_of(&c).version(), 4);
}

#[test]
fn rowsets_from_before_compaction_load_with_their_own_version_range() {
    let old = r#"{"id":5,"tablet_id":3,"version":7,"segments":[],"created_ms":1}"#;
    let mut r: RowsetMeta = from_json(old).unwrap();
    r.fix_legacy();
    assert_eq!((r.start_version, r.version), (7, 7));
    assert!(r.segments_overlap);
}

#[test]
fn views_survive_reopen_share_names_with_tables_and_go_with_their_database() {
    let dir = tempfile::tempdir().unwrap();
    let view = |name: &str, definition: &str| ViewMeta {
        database: "demo".into(),
        name: name.into(),
        columns: vec!["a".into()],
        definition: definition.into(),
        definer: "root@%".into(),
        created_ms: 0,
        algorithm: Default::default(),
        check_option: Default::default(),
        column_comments: Vec::new(),
        comment: String::new(),
        column_types: Vec::new(),
    };
    {
        let c = LocalCatalog::open_with(dir.path(), Some(TableNameCase::Lower)).unwrap();
        c.create_database("demo", false).unwrap();
        c.create_table(int_table(&c, "demo", "t", KeysModel::Duplicate, 1), false)
            .unwrap();
        c.create_view(view("V", "SELECT 1"), false).unwrap();
        // One namespace: a view may not take a table's name, nor a table a view's.
        assert_eq!(
            c.create_view(view("t", "SELECT 2"), true)
                .unwrap_err()
                .mysql_code(),
            1050
        );
        let clash = int_table(&c, "demo", "v", KeysModel::Duplicate, 1);
        assert_eq!(c.create_table(clash, false).unwrap_err().mysql_code(), 1050);
        assert_eq!(
            c.create_view(view("v", "SELECT 2"), false)
                .unwrap_err()
                .mysql_code(),
            1050
        );
        c.create_view(view("v", "SELECT 3"), true).unwrap();
        assert_eq!(
            c.alter_view(view("w", "SELECT 4"))
                .unwrap_err()
                .mysql_code(),
            1146
        );
    }
    let c = LocalCatalog::open(dir.path()).unwrap();
    assert_eq!(c.view("demo", "V").unwrap().definition, "SELECT 3");
    assert_eq!(c.views("demo").len(), 1);
    assert_eq!(
        c.drop_view("demo", "w", false).unwrap_err().mysql_code(),
        1051
    );
    assert!(!c.drop_view("demo", "w", true).unwrap());
    c.drop_database("demo", false).unwrap();
    c.create_database("demo", false).unwrap();
    assert!(c.view("demo", "v").is_none());
    drop(c);
    let c = LocalCatalog::open(dir.path()).unwrap();
    assert!(c.views("demo").is_empty());
}

#[test]
fn alter_table_replaces_definition_and_rowsets_together_and_durably() {
    let dir = tempfile::tempdir().unwrap();
    let (c, table_id, tablet) = one_tablet_with_loads(dir.path(), 2);
    let before = c.table("d", "t").unwrap();
    // The rewritten table: renamed, one more column, its two rowsets become one.
    let mut after = (*before).clone();
    after.name = "T2".into();
    after.schema_version = 1;
    after.columns.push(ColumnMeta {
        name: "w".into(),
        ..before.columns[1].clone()
    });
    let rewritten = Arc::new(RowsetMeta {
        id: c.allocate_id(),
        tablet_id: tablet,
        start_version: 1,
        version: 2,
        segments: vec![seg("r0", 4)],
        segments_overlap: false,
        created_ms: 0,
    });
    after.partitions[0].tablets[0].rowsets = vec![rewritten.clone()];
    // A snapshot that is no longer current is refused.
    let mut stale = (*before).clone();
    stale.partitions[0].tablets[0].rowsets.pop();
    assert_eq!(
        c.alter_table(&stale, after.clone())
            .unwrap_err()
            .mysql_code(),
        1412
    );
    let (new, removed) = c.alter_table(&before, after).unwrap();
    assert_eq!(removed.len(), 2);
    // lower_case_table_names = 0: the new name keeps its case.
    assert_eq!(new.name, "T2");
    assert!(c.table("d", "t2").is_err());
    assert_eq!(c.table("d", "t").unwrap_err().mysql_code(), 1146);
    // A load written against the old definition publishes nothing.
    let load = |version: u64| {
        c.publish(
            table_id,
            vec![NewRowset {
                tablet_id: tablet,
                segments: vec![seg("late", 1)],
                delete_bitmaps: vec![],
                schema_version: version,
                missing_replicas: Vec::new(),
                seen_replicas: Vec::new(),
            }],
        )
    };
    assert_eq!(load(0).unwrap_err().mysql_code(), 1412);
    load(1).unwrap();
    drop(c);
    let c = LocalCatalog::open(dir.path()).unwrap();
    let t = c.table("d", "T2").unwrap();
    assert_eq!(t.columns.len(), 3);
    assert_eq!(t.schema_version, 1);
    let rowsets: Vec<&str> = t.partitions[0].tablets[0]
        .rowsets
        .iter()
        .flat_map(|r| r.segments.iter().map(|s| s.path.as_str()))
        .collect();
    assert_eq!(rowsets, vec!["r0", "late"]);
    assert_eq!(t.partitions[0].tablets[0].version(), 3);
}

#[test]
fn new_tablets_go_to_the_backends_holding_fewest_tablets_then_fewest_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let c = LocalCatalog::open(dir.path()).unwrap();
    let first = c.add_backend("127.0.0.1:9001").unwrap();
    let second = c.add_backend("127.0.0.1:9002").unwrap();
    c.create_database("d", false).unwrap();
    let replicas = |name: &str, buckets: u32| -> Vec<Vec<u64>> {
        let mut t = int_table(&c, "d", name, KeysModel::Duplicate, buckets);
        t.properties.insert("replication_num".into(), "1".into());
        c.create_table(t, false).unwrap();
        let t = c.table("d", name).unwrap();
        t.tablets().map(|(_, t)| t.replicas.clone()).collect()
    };
    // Equal backends: by id, then the other one.
    assert_eq!(replicas("a", 2), vec![vec![first.id], vec![second.id]]);
    // The first backend's tablet gets data: the next tablet goes to the second, which holds
    // as many tablets but fewer bytes.
    let a = c.table("d", "a").unwrap();
    let on_first = a
        .tablets()
        .find(|(_, t)| t.replicas == vec![first.id])
        .unwrap()
        .1
        .id;
    c.publish(
        a.id,
        vec![NewRowset {
            tablet_id: on_first,
            segments: vec![seg("s0", 100)],
            delete_bitmaps: vec![],
            schema_version: 0,
            missing_replicas: Vec::new(),
            seen_replicas: Vec::new(),
        }],
    )
    .unwrap();
    assert_eq!(replicas("b", 1), vec![vec![second.id]]);
    // Now the second holds more tablets: the first gets the next one despite its bytes.
    assert_eq!(replicas("c", 1), vec![vec![first.id]]);
}

#[test]
fn names_keep_their_case_and_match_exactly_by_default() {
    let dir = tempfile::tempdir().unwrap();
    let c = LocalCatalog::open(dir.path()).unwrap();
    assert_eq!(c.table_name_case(), TableNameCase::Exact);
    assert_eq!(c.global_variables()["lower_case_table_names"], "0");
    c.create_database("Sales", false).unwrap();
    c.create_database("sales", false).unwrap();
    assert_eq!(c.databases().len(), 2);
    c.create_table(
        int_table(&c, "Sales", "Foo", KeysModel::Duplicate, 1),
        false,
    )
    .unwrap();
    c.create_table(
        int_table(&c, "Sales", "foo", KeysModel::Duplicate, 1),
        false,
    )
    .unwrap();
    assert_eq!(c.table("Sales", "Foo").unwrap().name, "Foo");
    assert_eq!(c.table("Sales", "FOO").unwrap_err().mysql_code(), 1146);
    assert_eq!(c.table("SALES", "Foo").unwrap_err().mysql_code(), 1049);
    assert!(c.tables("sales").unwrap().is_empty());
    c.drop_table("Sales", "foo", false).unwrap();
    assert_eq!(c.tables("Sales").unwrap().len(), 1);
    c.drop_database("sales", false).unwrap();
    drop(c);
    let c = LocalCatalog::open(dir.path()).unwrap();
    assert_eq!(c.table("Sales", "Foo").unwrap().database, "Sales");
    assert!(!c.database_exists("sales"));
}

#[test]
fn names_keep_their_case_and_match_without_it_under_2() {
    let dir = tempfile::tempdir().unwrap();
    let c = LocalCatalog::open_with(dir.path(), Some(TableNameCase::Insensitive)).unwrap();
    c.create_database("Sales", false).unwrap();
    assert_eq!(
        c.create_database("SALES", false).unwrap_err().mysql_code(),
        1007
    );
    c.create_table(
        int_table(&c, "sales", "Foo", KeysModel::Duplicate, 1),
        false,
    )
    .unwrap();
    let t = c.table("SALES", "foo").unwrap();
    assert_eq!((t.database.as_str(), t.name.as_str()), ("Sales", "Foo"));
    let clash = int_table(&c, "Sales", "FOO", KeysModel::Duplicate, 1);
    assert_eq!(c.create_table(clash, false).unwrap_err().mysql_code(), 1050);
    // Renaming to another spelling of the same name.
    let before = c.table("Sales", "Foo").unwrap();
    let mut after = (*before).clone();
    after.name = "FOO".into();
    c.alter_table(&before, after).unwrap();
    drop(c);
    let c = LocalCatalog::open(dir.path()).unwrap();
    assert_eq!(c.table_name_case(), TableNameCase::Insensitive);
    assert_eq!(c.table("sales", "foo").unwrap().name, "FOO");
    assert_eq!(c.tables("SaLeS").unwrap().len(), 1);
}

#[test]
fn the_setting_is_fixed_when_the_catalog_is_created() {
    let dir = tempfile::tempdir().unwrap();
    drop(LocalCatalog::open_with(dir.path(), Some(TableNameCase::Lower)).unwrap());
    let refused = LocalCatalog::open_with(dir.path(), Some(TableNameCase::Exact))
        .err()
        .expect("a changed setting is refused");
    assert!(
        refused
            .to_string()
            .contains("initialized with lower_case_table_names = 1"),
        "{refused}"
    );
    let c = LocalCatalog::open_with(dir.path(), Some(TableNameCase::Lower)).unwrap();
    assert_eq!(c.table_name_case(), TableNameCase::Lower);
    drop(c);
    assert_eq!(
        LocalCatalog::open(dir.path()).unwrap().table_name_case(),
        TableNameCase::Lower
    );
}

#[test]
fn a_catalog_from_before_the_setting_keeps_lower_case_names() {
    let dir = tempfile::tempdir().unwrap();
    {
        // What an older Basalt left: records (its root account, a lower-case database) but no
        // setting.
        let store = Store::open(&dir.path().join("catalog.redb")).unwrap();
        let root = UserMeta::new("root", "%", "");
        let db = DatabaseMeta {
            id: 1,
            name: "sales".into(),
            created_ms: 0,
        };
        store
            .commit(vec![
                Op::PutUser(UserMeta::key("root", "%"), to_json(&root).unwrap()),
                Op::PutDatabase("sales".into(), to_json(&db).unwrap()),
            ])
            .unwrap();
    }
    assert!(LocalCatalog::open_with(dir.path(), Some(TableNameCase::Exact)).is_err());
    let c = LocalCatalog::open(dir.path()).unwrap();
    assert_eq!(c.table_name_case(), TableNameCase::Lower);
    assert!(c.database_exists("SALES"));
    drop(c);
    let c = LocalCatalog::open(dir.path()).unwrap();
    assert_eq!(c.global_variables()["lower_case_table_names"], "1");
}

#[test]
fn missed_replicas_turn_stale_with_the_publish_and_clear_once_they_hold_every_segment() {
    let dir = tempfile::tempdir().unwrap();
    let seg = |p: &str| SegmentMeta {
        path: p.into(),
        num_rows: 1,
        size_bytes: 1,
        ..Default::default()
    };
    let (table_id, tablet_id, replicas) = {
        let c = LocalCatalog::open(dir.path()).unwrap();
        for port in 1..=3 {
            c.add_backend(&format!("127.0.0.1:{port}")).unwrap();
        }
        c.create_database("demo", false).unwrap();
        let mut t = int_table(&c, "demo", "t", KeysModel::Duplicate, 1);
        t.properties.insert("replication_num".into(), "3".into());
        c.create_table(t, false).unwrap();
        let t = c.table("demo", "t").unwrap();
        let tablet = t.tablets().next().unwrap().1.clone();
        assert_eq!(tablet.replicas.len(), 3);
        let missed = tablet.replicas[2];
        c.publish(
            t.id,
            vec![NewRowset {
                tablet_id: tablet.id,
                segments: vec![seg("data/1/2/10_0.parquet")],
                delete_bitmaps: vec![],
                schema_version: 0,
                missing_replicas: vec![missed, 999],
                seen_replicas: Vec::new(),
            }],
        )
        .unwrap();
        (t.id, tablet.id, tablet.replicas)
    };
    // Durable: the stale mark survives a reopen; only real replicas are marked.
    let c = LocalCatalog::open(dir.path()).unwrap();
    let tablet = |c: &LocalCatalog| {
        c.table_by_id(table_id)
            .unwrap()
            .tablets()
            .next()
            .unwrap()
            .1
            .clone()
    };
    assert_eq!(tablet(&c).stale_replicas, vec![replicas[2]]);
    assert_eq!(tablet(&c).readable_replicas().count(), 2);
    // A later load it also missed: the catch-up that copied only the first segment is refused.
    c.publish(
        table_id,
        vec![NewRowset {
            tablet_id,
            segments: vec![seg("data/1/2/11_0.parquet")],
            delete_bitmaps: vec![],
            schema_version: 0,
            missing_replicas: vec![replicas[2]],
            seen_replicas: Vec::new(),
        }],
    )
    .unwrap();
    let mut holds: HashSet<String> = ["data/1/2/10_0.parquet".to_string()].into();
    assert!(!c
        .clear_stale_replica(table_id, tablet_id, replicas[2], &holds)
        .unwrap());
    assert_eq!(tablet(&c).stale_replicas, vec![replicas[2]]);
    holds.insert("data/1/2/11_0.parquet".into());
    assert!(c
        .clear_stale_replica(table_id, tablet_id, replicas[2], &holds)
        .unwrap());
    // Not stale any more: nothing to clear.
    assert!(!c
        .clear_stale_replica(table_id, tablet_id, replicas[2], &holds)
        .unwrap());
    drop(c);
    let c = LocalCatalog::open(dir.path()).unwrap();
    assert!(tablet(&c).stale_replicas.is_empty());
    // A compaction's output that a replica lacks makes it stale too.
    let inputs: Vec<u64> = tablet(&c).rowsets.iter().map(|r| r.id).collect();
    c.replace_rowsets(
        table_id,
        CompactedRowset {
            output_id: c.allocate_id(),
            tablet_id,
            inputs,
            segments: vec![seg("data/1/2/c12_0.parquet")],
            delete_bitmaps: vec![],
            segments_overlap: false,
            missing_replicas: vec![replicas[0]],
            seen_replicas: Vec::new(),
            input_deletes_seen: Vec::new(),
        },
    )
    .unwrap();
    drop(c);
    let c = LocalCatalog::open(dir.path()).unwrap();
    assert_eq!(tablet(&c).stale_replicas, vec![replicas[0]]);
}

#[test]
fn a_replica_move_joins_stale_ends_only_once_caught_up_and_survives_older_writers() {
    let dir = tempfile::tempdir().unwrap();
    let seg = |p: &str| SegmentMeta {
        path: p.into(),
        num_rows: 1,
        size_bytes: 1,
        ..Default::default()
    };
    let c = LocalCatalog::open(dir.path()).unwrap();
    for port in 1..=4 {
        c.add_backend(&format!("127.0.0.1:{port}")).unwrap();
    }
    c.create_database("demo", false).unwrap();
    let mut t = int_table(&c, "demo", "t", KeysModel::Duplicate, 1);
    t.properties.insert("replication_num".into(), "3".into());
    c.create_table(t, false).unwrap();
    let before = c.table("demo", "t").unwrap();
    let (table_id, old) = (before.id, before.tablets().next().unwrap().1.clone());
    let tablet = |c: &LocalCatalog| {
        c.table_by_id(table_id)
            .unwrap()
            .tablets()
            .next()
            .unwrap()
            .1
            .clone()
    };
    let spare = (1..=4u64)
        .map(|p| {
            c.backends()
                .into_iter()
                .find(|b| b.port == p as u16)
                .unwrap()
                .id
        })
        .find(|id| !old.replicas.contains(id))
        .unwrap();
    let from = old.replicas[0];
    assert!(c.join_replica(table_id, old.id, spare).unwrap());
    assert!(!c.join_replica(table_id, old.id, spare).unwrap());
    let joined = tablet(&c);
    assert_eq!(joined.replicas.len(), 4);
    assert_eq!(joined.stale_replicas, vec![spare]);
    assert_eq!(joined.normal_replica_count(), 3);
    // Not caught up: the move cannot end.
    assert!(!c.end_replica_move(table_id, old.id, from, spare).unwrap());
    let holds: HashSet<String> = HashSet::new();
    assert!(c
        .clear_stale_replica(table_id, old.id, spare, &holds)
        .unwrap());
    // A load that began before the join publishes now: the joined replica lacks its segment.
    let load = |c: &LocalCatalog, path: &str, seen: Vec<BackendId>| {
        c.publish(
            table_id,
            vec![NewRowset {
                tablet_id: old.id,
                segments: vec![seg(path)],
                delete_bitmaps: vec![],
                schema_version: 0,
                missing_replicas: vec![],
                seen_replicas: seen,
            }],
        )
        .unwrap();
    };
    load(&c, "data/1/2/20_0.parquet", old.replicas.clone());
    assert_eq!(tablet(&c).stale_replicas, vec![spare]);
    // One that saw it does not.
    let holds: HashSet<String> = ["data/1/2/20_0.parquet".to_string()].into();
    assert!(c
        .clear_stale_replica(table_id, old.id, spare, &holds)
        .unwrap());
    load(&c, "data/1/2/21_0.parquet", tablet(&c).replicas);
    assert!(tablet(&c).stale_replicas.is_empty());
    assert!(c.end_replica_move(table_id, old.id, from, spare).unwrap());
    let moved = tablet(&c);
    assert!(!moved.replicas.contains(&from) && moved.replicas.contains(&spare));
    assert!(moved.joining_replicas.is_empty());
    // A transaction read before the move publishes after it: the moved replica stays gone.
    let snapshot = c.table("demo", "t").unwrap();
    let mut stale_view = (*snapshot).clone();
    for p in &mut stale_view.partitions {
        p.tablets[0].replicas = old.replicas.clone();
    }
    let stale_view = Arc::new(stale_view);
    c.publish_tables(vec![(stale_view.clone(), (*stale_view).clone())])
        .unwrap();
    assert_eq!(tablet(&c).replicas, moved.replicas);
    drop(c);
    let c = LocalCatalog::open(dir.path()).unwrap();
    assert_eq!(tablet(&c).replicas, moved.replicas);
    // The old backend holds nothing now: DROP BACKEND removes it. A decommissioned backend
    // gets no new tablets.
    let gone = c.backends().into_iter().find(|b| b.id == from).unwrap();
    c.drop_backend(&gone.address()).unwrap();
    let keep = c.backends().into_iter().find(|b| b.id == spare).unwrap();
    let err = c.drop_backend(&keep.address()).unwrap_err().to_string();
    assert!(err.contains("DECOMMISSION"), "{err}");
    c.set_backend_decommissioned(&keep.address(), true).unwrap();
    let mut t = int_table(&c, "demo", "u", KeysModel::Duplicate, 4);
    t.properties.insert("replication_num".into(), "2".into());
    c.create_table(t, false).unwrap();
    let u = c.table("demo", "u").unwrap();
    assert!(u.tablets().all(|(_, t)| !t.replicas.contains(&spare)));
    drop(c);
    let c = LocalCatalog::open(dir.path()).unwrap();
    assert!(c
        .backends()
        .iter()
        .any(|b| b.id == spare && b.decommissioned));
}
