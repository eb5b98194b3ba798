//! INSERT from files: `local("file_path" = ..., "format" = ...)` over Parquet, CSV and JSON files
//! in the allowed load directory, and every way out of that directory refused.

use crate::harness::*;
use arrow::array::{ArrayRef, Float64Array, Int64Array, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use arrow::record_batch::RecordBatch;
use mysql_async::prelude::Queryable;
use std::path::Path;
use std::sync::Arc;

fn write_parquet(path: &Path, ks: Vec<i64>, names: Vec<Option<&str>>, prices: Vec<f64>) {
    let schema = Arc::new(Schema::new(vec![
        Field::new("k", DataType::Int64, false),
        Field::new("name", DataType::Utf8, true),
        Field::new("price", DataType::Float64, false),
    ]));
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from(ks)),
        Arc::new(StringArray::from(names)),
        Arc::new(Float64Array::from(prices)),
    ];
    let batch = RecordBatch::try_new(schema.clone(), columns).unwrap();
    let file = std::fs::File::create(path).unwrap();
    let mut writer = parquet::arrow::ArrowWriter::try_new(file, schema, None).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
}

async fn error_of(conn: &mut mysql_async::Conn, sql: &str) -> (u16, String) {
    match conn.query_drop(sql).await {
        Ok(()) => panic!("{sql}: expected an error"),
        Err(mysql_async::Error::Server(e)) => (e.code, e.message),
        Err(other) => panic!("{sql}: {other:?}"),
    }
}

#[tokio::test]
async fn local_files_load_parquet_csv_and_json() {
    let server = TestServer::start().await;
    // The default load directory: <data_dir>/load_files, created at startup.
    let dir = server.data_dir.path().join("load_files");
    assert!(dir.is_dir());
    let mut c = server.connect().await;
    exec(&mut c, "CREATE DATABASE lf").await;
    exec(&mut c, "USE lf").await;
    exec(
        &mut c,
        "CREATE TABLE dup (k INT NOT NULL, name VARCHAR(20), price DECIMAL(10,2)) \
         DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2",
    )
    .await;
    exec(
        &mut c,
        "CREATE TABLE uniq (k INT NOT NULL, v VARCHAR(20), n BIGINT) \
         UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2",
    )
    .await;

    // Parquet: its own schema and types; INSERT converts to the table's.
    write_parquet(
        &dir.join("items.parquet"),
        vec![1, 2, 3],
        vec![Some("apple"), None, Some("cherry")],
        vec![1.5, 2.25, 10.0],
    );
    exec(
        &mut c,
        r#"INSERT INTO dup SELECT * FROM local("file_path" = "items.parquet", "format" = "parquet")"#,
    )
    .await;
    assert_eq!(c.affected_rows(), 3);
    assert_eq!(
        rows(&mut c, "SELECT k, name, price FROM dup ORDER BY k").await,
        vec![
            vec![s("1"), s("apple"), s("1.50")],
            vec![s("2"), None, s("2.25")],
            vec![s("3"), s("cherry"), s("10.00")]
        ]
    );
    // An absolute path inside the directory works too, and SELECT reads files directly.
    let abs = dir.join("items.parquet");
    assert_eq!(
        rows(
            &mut c,
            &format!(
                r#"SELECT k, price FROM local("file_path" = "{}", "format" = "parquet") WHERE k > 1 ORDER BY k"#,
                abs.display()
            )
        )
        .await,
        vec![vec![s("2"), s("2.25")], vec![s("3"), s("10")]]
    );

    // CSV, Doris defaults: tab separated, columns c1, c2, ..., `\N` is NULL.
    std::fs::write(dir.join("a.csv"), "1\tone\t10\n2\t\\N\t20\n3\tthree\t\\N\n").unwrap();
    assert_eq!(
        rows(
            &mut c,
            r#"SELECT c1, c2, c3 FROM local("file_path" = "a.csv", "format" = "csv") ORDER BY c1"#
        )
        .await,
        vec![
            vec![s("1"), s("one"), s("10")],
            vec![s("2"), None, s("20")],
            vec![s("3"), s("three"), None]
        ]
    );
    exec(
        &mut c,
        r#"INSERT INTO uniq SELECT c1, c2, c3 FROM local("file_path" = "a.csv", "format" = "csv")"#,
    )
    .await;
    assert_eq!(c.affected_rows(), 3);

    // csv_with_names over a glob, with a separator: later rows replace keys in a Unique table.
    std::fs::create_dir(dir.join("parts")).unwrap();
    std::fs::write(
        dir.join("parts/p1.csv"),
        "id,label,num\n3,THREE,33\n4,four,44\n",
    )
    .unwrap();
    std::fs::write(dir.join("parts/p2.csv"), "id,label,num\n5,five,55\n").unwrap();
    std::fs::write(dir.join("parts/skip.txt"), "not,matched\n").unwrap();
    exec(
        &mut c,
        r#"INSERT INTO uniq (k, v, n) SELECT id, label, num FROM local(
             "file_path" = "parts/*.csv", "format" = "csv_with_names", "column_separator" = ",")"#,
    )
    .await;
    assert_eq!(c.affected_rows(), 3);

    // JSON, one object per line (names and types from the file).
    std::fs::write(
        dir.join("rows.json"),
        "{\"k\": 1, \"v\": \"uno\", \"n\": 100}\n{\"k\": 6, \"v\": \"six\", \"n\": null}\n",
    )
    .unwrap();
    exec(
        &mut c,
        r#"INSERT INTO uniq SELECT k, v, n FROM local("file_path" = "rows.json", "format" = "json")"#,
    )
    .await;
    // JSON array with strip_outer_array.
    std::fs::write(
        dir.join("array.json"),
        "[{\"k\": 7, \"v\": \"seven\", \"n\": 7},\n {\"k\": 8, \"v\": \"eight\", \"n\": 8}]",
    )
    .unwrap();
    exec(
        &mut c,
        r#"INSERT INTO uniq SELECT k, v, n FROM local("file_path" = "array.json", "format" = "json",
             "strip_outer_array" = "true", "read_json_by_line" = "false")"#,
    )
    .await;
    assert_eq!(
        rows(&mut c, "SELECT k, v, n FROM uniq ORDER BY k").await,
        vec![
            vec![s("1"), s("uno"), s("100")],
            vec![s("2"), None, s("20")],
            vec![s("3"), s("THREE"), s("33")],
            vec![s("4"), s("four"), s("44")],
            vec![s("5"), s("five"), s("55")],
            vec![s("6"), s("six"), None],
            vec![s("7"), s("seven"), s("7")],
            vec![s("8"), s("eight"), s("8")]
        ]
    );

    // All or nothing: a value that does not convert, or a NULL key, loads no row at all.
    std::fs::write(dir.join("bad.csv"), "10\tok\t1\nxyz\tbad\t2\n").unwrap();
    let (code, _) = error_of(
        &mut c,
        r#"INSERT INTO uniq SELECT c1, c2, c3 FROM local("file_path" = "bad.csv", "format" = "csv")"#,
    )
    .await;
    assert_ne!(code, 0);
    std::fs::write(dir.join("nullkey.csv"), "11\tok\t1\n\\N\tnull key\t2\n").unwrap();
    let (code, _) = error_of(
        &mut c,
        r#"INSERT INTO uniq SELECT c1, c2, c3 FROM local("file_path" = "nullkey.csv", "format" = "csv")"#,
    )
    .await;
    assert_eq!(code, 1048);
    assert_eq!(
        rows(&mut c, "SELECT COUNT(*) FROM uniq").await[0][0],
        s("8")
    );
}

#[tokio::test]
async fn local_files_refuse_paths_outside_the_directory() {
    let server = TestServer::start().await;
    let dir = server.data_dir.path().join("load_files");
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.csv"), "42\tsecret\n").unwrap();
    std::fs::write(server.data_dir.path().join("beside.csv"), "1\tx\n").unwrap();
    std::fs::write(dir.join("ok.csv"), "1\tx\n").unwrap();
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(outside.path().join("secret.csv"), dir.join("link.csv"))
            .unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.join("linkdir")).unwrap();
    }
    let mut c = server.connect().await;
    let q =
        |path: &str| format!(r#"SELECT * FROM local("file_path" = "{path}", "format" = "csv")"#);

    let secret = outside.path().join("secret.csv");
    let mut refused = vec![
        "../beside.csv".to_string(),
        "../../etc/passwd".to_string(),
        "ok/../../beside.csv".to_string(),
        "/etc/passwd".to_string(),
        "/no/such/dir/x.csv".to_string(),
        secret.display().to_string(),
        format!("{}/*.csv", outside.path().display()),
    ];
    if cfg!(unix) {
        refused.extend([
            "link.csv".into(),
            "linkdir/secret.csv".into(),
            "linkdir/*".into(),
        ]);
    }
    for path in &refused {
        let (code, message) = error_of(&mut c, &q(path)).await;
        assert_eq!(code, 1290, "{path}: {message}");
        assert!(message.contains("--allowed-load-dir"), "{path}: {message}");
        assert!(!message.contains("secret\t"), "{path}: {message}");
    }
    // The same refusal through INSERT, which then loads nothing.
    exec(&mut c, "CREATE DATABASE lf").await;
    exec(
        &mut c,
        "CREATE TABLE lf.t (k INT, v VARCHAR(10)) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1",
    )
    .await;
    let (code, _) = error_of(
        &mut c,
        r#"INSERT INTO lf.t SELECT c1, c2 FROM local("file_path" = "link.csv", "format" = "csv")"#,
    )
    .await;
    assert_eq!(code, if cfg!(unix) { 1290 } else { 29 });
    assert_eq!(
        rows(&mut c, "SELECT COUNT(*) FROM lf.t").await[0][0],
        s("0")
    );

    // Missing files and malformed calls get clear errors.
    let (code, message) = error_of(&mut c, &q("missing.csv")).await;
    assert_eq!(code, 29, "{message}");
    assert!(message.contains("missing.csv"), "{message}");
    let (code, _) = error_of(&mut c, &q("nothing*.csv")).await;
    assert_eq!(code, 29);
    for (sql, needle) in [
        (r#"SELECT * FROM local("file_path")"#, "\"key\" = \"value\""),
        (
            r#"SELECT * FROM local("file_path" = "ok.csv")"#,
            "\"format\" is required",
        ),
        (
            r#"SELECT * FROM local("file_path" = "ok.csv", "format" = "orc")"#,
            "not supported",
        ),
        (
            r#"SELECT * FROM local("file_path" = "ok.csv", "format" = "csv", "jsonpaths" = "x")"#,
            "unknown property",
        ),
        (
            r#"SELECT * FROM local("file_path" = "ok.csv", "format" = "csv", "column_separator" = "ab")"#,
            "single byte",
        ),
    ] {
        let (code, message) = error_of(&mut c, sql).await;
        assert_eq!(code, 1210, "{sql}: {message}");
        assert!(message.contains(needle), "{sql}: {message}");
    }
    // Inside is fine.
    assert_eq!(rows(&mut c, &q("ok.csv")).await, vec![vec![s("1"), s("x")]]);
}

#[tokio::test]
async fn allowed_load_dir_flag_moves_the_directory() {
    let load = tempfile::tempdir().unwrap();
    let arg = load.path().display().to_string();
    let server = TestServer::start_with_args(&["--allowed-load-dir", &arg]).await;
    std::fs::write(load.path().join("in.csv"), "5|five\n6|six\n").unwrap();
    let default_dir = server.data_dir.path().join("load_files");
    std::fs::create_dir_all(&default_dir).unwrap();
    std::fs::write(default_dir.join("in.csv"), "1|one\n").unwrap();
    let mut c = server.connect().await;
    let sql = |path: &str| {
        format!(
            r#"SELECT c1, c2 FROM local("file_path" = "{path}", "format" = "csv", "column_separator" = "|") ORDER BY c1"#
        )
    };
    let expected = vec![vec![s("5"), s("five")], vec![s("6"), s("six")]];
    assert_eq!(rows(&mut c, &sql("in.csv")).await, expected);
    let abs = load.path().join("in.csv");
    assert_eq!(
        rows(&mut c, &sql(&abs.display().to_string())).await,
        expected
    );
    // The default directory is no longer allowed.
    let (code, _) = error_of(
        &mut c,
        &sql(&default_dir.join("in.csv").display().to_string()),
    )
    .await;
    assert_eq!(code, 1290);
}
