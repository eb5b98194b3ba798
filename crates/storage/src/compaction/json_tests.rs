//! JSON columns across segment forms: a tablet holding text-JSON segments (the form every
//! segment had before binary JSON, written here by the same writer in its text form) and
//! binary-JSON segments reads the same documents from both, merges them on read and in
//! compaction, and reads them again after the engine is opened anew on its files.

use super::policy::CompactionPolicy;
use crate::json_columns::{is_binary_json, JsonForm};
use crate::StorageEngine;
use arrow::array::{Array, ArrayRef, AsArray, Int32Array, RecordBatch, StringArray};
use basalt_catalog::{
    Catalog, ColumnMeta, DistributionMeta, KeysModel, LocalCatalog, PartitionBound, PartitionKind,
    PartitionMeta, TableMeta, TabletCatalog,
};
use basalt_common::SqlType;
use std::path::Path;
use std::sync::Arc;

fn open_engine(dir: &Path, catalog: Arc<LocalCatalog>) -> Arc<StorageEngine> {
    StorageEngine::open(
        dir,
        catalog,
        crate::WriteBufferLimits {
            rows_per_tablet: 1_000_000,
            bytes: 1 << 30,
        },
        1 << 30,
        1 << 20,
    )
    .unwrap()
}

/// Unique-key table d.t `(k INT, doc JSON)` in one tablet.
fn create_table(dir: &Path) -> Arc<LocalCatalog> {
    let catalog = Arc::new(LocalCatalog::open(&dir.join("meta")).unwrap());
    catalog.create_database("d", false).unwrap();
    let column = |name: &str, ty: SqlType, is_key: bool| ColumnMeta {
        name: name.into(),
        display_name: None,
        ty,
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
    let table = TableMeta {
        id: catalog.allocate_id(),
        database: "d".into(),
        name: "t".into(),
        columns: vec![
            column("k", SqlType::Int, true),
            column("doc", SqlType::Json, false),
        ],
        keys_model: KeysModel::Unique,
        num_key_columns: 1,
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
            columns: vec![0],
            buckets: 1,
        },
        properties: Default::default(),
        comment: String::new(),
        created_ms: 0,
        schema_version: 0,
        declared_order: vec![],
        indexes: vec![],
        foreign_keys: vec![],
        auto_partition: None,
    };
    catalog.create_table(table, false).unwrap();
    catalog
}

fn load(engine: &Arc<StorageEngine>, rows: &[(i32, Option<&str>)]) {
    let table = engine.catalog().table("d", "t").unwrap();
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int32Array::from_iter_values(rows.iter().map(|r| r.0))),
        Arc::new(StringArray::from_iter(rows.iter().map(|r| r.1))),
    ];
    let batch = RecordBatch::try_new(table.arrow_schema(), columns).unwrap();
    let mut w = engine.try_begin_load(table).unwrap();
    w.write(&batch).unwrap();
    w.commit().unwrap();
}

/// Every row `k|doc` of the table, merged by key, sorted.
fn rows(engine: &Arc<StorageEngine>) -> Vec<String> {
    let table = engine.catalog().table("d", "t").unwrap();
    let (_, tablet) = table.tablets().next().unwrap();
    let merged = engine.read_tablet_merged(&table, tablet, &[0, 1]).unwrap();
    let keys = merged
        .column(0)
        .as_primitive::<arrow::datatypes::Int32Type>();
    let docs = merged.column(1).as_string::<i32>();
    let mut out: Vec<String> = (0..merged.num_rows())
        .map(|i| {
            let doc = if docs.is_null(i) {
                "NULL"
            } else {
                docs.value(i)
            };
            format!("{}|{doc}", keys.value(i))
        })
        .collect();
    out.sort();
    out
}

/// For each segment of the tablet, in order: does it hold JSON as binary documents?
fn segment_forms(engine: &Arc<StorageEngine>) -> Vec<bool> {
    let table = engine.catalog().table("d", "t").unwrap();
    let (_, tablet) = table.tablets().next().unwrap();
    tablet
        .rowsets
        .iter()
        .flat_map(|r| r.segments.iter())
        .map(|seg| {
            let file = std::fs::File::open(engine.segment_path(&seg.path)).unwrap();
            let reader =
                parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
                    .unwrap();
            let schema = reader.schema().clone();
            is_binary_json(schema.field_with_name("doc").unwrap())
        })
        .collect()
}

#[test]
fn text_and_binary_json_segments_read_merge_compact_and_reopen_alike() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = create_table(dir.path());
    let engine = open_engine(dir.path(), catalog.clone());
    // Segments as every Basalt before binary JSON wrote them.
    assert_eq!(engine.json_form(), JsonForm::Text);
    load(
        &engine,
        &[
            (1, Some(r#"{"a":{"b":5},"n":[1,2.50,1e+2]}"#)),
            (2, Some(r#""old text""#)),
            (3, None),
        ],
    );
    engine.set_json_form(JsonForm::Binary);
    load(
        &engine,
        &[
            (2, Some(r#"{"z":1,"a":[true,null,"x\"y"]}"#)),
            (4, Some("18446744073709551615")),
        ],
    );
    assert_eq!(segment_forms(&engine), vec![false, true]);
    let want = vec![
        r#"1|{"a":{"b":5},"n":[1,2.50,1e+2]}"#.to_string(),
        r#"2|{"z":1,"a":[true,null,"x\"y"]}"#.to_string(),
        "3|NULL".to_string(),
        "4|18446744073709551615".to_string(),
    ];
    assert_eq!(rows(&engine), want);
    // Compaction merges both forms into binary segments.
    let table = engine.catalog().table("d", "t").unwrap();
    let (_, tablet) = table.tablets().next().unwrap();
    let policy = CompactionPolicy {
        quiet_ms: 0,
        ..Default::default()
    };
    let mut runs = 0;
    while engine
        .compact_tablet_now(table.id, tablet.id, &policy)
        .unwrap()
        .is_some()
    {
        runs += 1;
        assert!(runs < 10);
    }
    assert!(runs > 0);
    assert_eq!(segment_forms(&engine), vec![true]);
    assert_eq!(rows(&engine), want);
    // A restart reads the same files.
    drop(engine);
    let engine = open_engine(dir.path(), catalog);
    assert_eq!(rows(&engine), want);
}
