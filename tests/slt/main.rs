//! SQL test files: every `tests/sql/**/*.slt` file (the `sqllogictest` format) runs against its
//! own real `basalt` server over the MySQL protocol, through the `mysql_async` driver. Each file
//! is one test, named by its path (`cargo test --test slt -- basics/select` runs one).
//!
//! Results are compared as MySQL's text protocol sends them: NULL is `NULL`, the empty string
//! is `(empty)`. `statement error <regex>` / `query error <regex>` match the text
//! `<mysql code> (<sqlstate>): <message>`, so `statement error 1146` checks the error code.
//!
//! Every file also runs against a cluster (one `basalt frontend` and, file by file in turn, two
//! `basalt backend`s or one: plans then run as stages over several backends, or whole on the
//! one; `BASALT_SLT_BACKENDS=N` runs every file on N), as `cluster/<path>`, with the label
//! `cluster`: a record a cluster cannot run yet is marked `skipif cluster`, a whole file with
//! a `# not on a cluster yet: <why>` line.

// The e2e harness starts and stops the server; the SQL files use only part of it.
#[allow(dead_code)]
#[path = "../e2e/harness.rs"]
mod harness;

// A cluster of one frontend and backends, for the files' cluster runs.
#[allow(dead_code)]
#[path = "../e2e/cluster_harness.rs"]
mod cluster_harness;

use cluster_harness::Cluster;
use harness::TestServer;
use libtest_mimic::{Arguments, Failed, Trial};
use mysql_async::consts::ColumnType as MyType;
use mysql_async::prelude::*;
use mysql_async::{Conn, Opts, Row, Value};
use sqllogictest::{AsyncDB, DBOutput, DefaultColumnType};
use std::path::{Path, PathBuf};

/// An error as the file matches it: `<code> (<sqlstate>): <message>`.
#[derive(Debug)]
struct SqlError(String);

impl std::fmt::Display for SqlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SqlError {}

impl From<mysql_async::Error> for SqlError {
    fn from(e: mysql_async::Error) -> SqlError {
        match e {
            mysql_async::Error::Server(s) => {
                SqlError(format!("{} ({}): {}", s.code, s.state, s.message))
            }
            other => SqlError(other.to_string()),
        }
    }
}

/// One client connection to the file's server.
struct Client {
    conn: Conn,
}

fn column_type(t: MyType) -> DefaultColumnType {
    use MyType::*;
    match t {
        MYSQL_TYPE_TINY | MYSQL_TYPE_SHORT | MYSQL_TYPE_LONG | MYSQL_TYPE_LONGLONG
        | MYSQL_TYPE_INT24 | MYSQL_TYPE_YEAR => DefaultColumnType::Integer,
        MYSQL_TYPE_FLOAT | MYSQL_TYPE_DOUBLE | MYSQL_TYPE_DECIMAL | MYSQL_TYPE_NEWDECIMAL => {
            DefaultColumnType::FloatingPoint
        }
        MYSQL_TYPE_VARCHAR
        | MYSQL_TYPE_VAR_STRING
        | MYSQL_TYPE_STRING
        | MYSQL_TYPE_BLOB
        | MYSQL_TYPE_TINY_BLOB
        | MYSQL_TYPE_MEDIUM_BLOB
        | MYSQL_TYPE_LONG_BLOB => DefaultColumnType::Text,
        _ => DefaultColumnType::Any,
    }
}

/// A value as the text protocol carries it.
fn text(v: &Value) -> String {
    match v {
        Value::NULL => "NULL".to_string(),
        Value::Bytes(b) if b.is_empty() => "(empty)".to_string(),
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        other => other.as_sql(true).trim_matches('\'').to_string(),
    }
}

#[async_trait::async_trait]
impl AsyncDB for Client {
    type Error = SqlError;
    type ColumnType = DefaultColumnType;

    async fn run(&mut self, sql: &str) -> Result<DBOutput<DefaultColumnType>, SqlError> {
        let mut result = self.conn.query_iter(sql).await?;
        let columns = result.columns();
        let rows: Vec<Row> = result.collect().await?;
        let affected = result.affected_rows();
        // Any further result sets (none for one statement) are drained.
        result.drop_result().await?;
        match columns {
            Some(cols) if !cols.is_empty() => Ok(DBOutput::Rows {
                types: cols.iter().map(|c| column_type(c.column_type())).collect(),
                rows: rows
                    .iter()
                    .map(|r| (0..r.len()).map(|i| text(&r[i])).collect())
                    .collect(),
            }),
            _ => Ok(DBOutput::StatementComplete(affected)),
        }
    }

    async fn shutdown(&mut self) {}

    fn engine_name(&self) -> &str {
        "basalt"
    }

    async fn sleep(dur: std::time::Duration) {
        tokio::time::sleep(dur).await;
    }
}

/// Where a file runs: a fresh all-in-one server, or a fresh cluster of one frontend and this
/// many backends (records marked `skipif cluster` are left out there).
#[derive(Clone, Copy)]
enum Target {
    Server,
    Cluster(usize),
}

/// Runs one file against a fresh server or cluster.
fn run_file(path: &Path, target: Target) -> Result<(), Failed> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let (_server, _cluster, opts): (_, _, Opts) = match target {
            Target::Server => {
                let server = TestServer::start().await;
                let opts = server.opts("root", None, None);
                (Some(server), None, opts)
            }
            Target::Cluster(backends) => {
                let cluster = Cluster::start(backends);
                let opts = cluster.opts();
                (None, Some(cluster), opts)
            }
        };
        let mut runner = sqllogictest::Runner::new(move || {
            let opts = opts.clone();
            async move {
                Ok::<_, SqlError>(Client {
                    conn: Conn::new(opts).await?,
                })
            }
        });
        runner.add_label("basalt");
        if let Target::Cluster(_) = target {
            runner.add_label("cluster");
        }
        runner
            .run_file_async(path)
            .await
            .map_err(|e| Failed::from(e.display(true).to_string()))
    })
}

/// The line that keeps a file's cluster run out (with the reason after it).
const NOT_ON_A_CLUSTER: &str = "# not on a cluster yet:";

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            files(&path, out);
        } else if path.extension().is_some_and(|e| e == "slt") {
            out.push(path);
        }
    }
}

fn main() {
    let args = Arguments::from_args();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/sql");
    let mut paths = Vec::new();
    files(&root, &mut paths);
    paths.sort();
    let backends: Option<usize> = std::env::var("BASALT_SLT_BACKENDS")
        .ok()
        .and_then(|n| n.parse().ok());
    let mut trials = Vec::new();
    for (i, path) in paths.into_iter().enumerate() {
        let name = path
            .strip_prefix(&root)
            .unwrap_or(&path)
            .with_extension("")
            .to_string_lossy()
            .into_owned();
        let cluster_path = path.clone();
        // A file whose statements a cluster cannot run yet says so in a line
        // `# not on a cluster yet: <why>`; its cluster run is listed as ignored.
        let not_yet = std::fs::read_to_string(&path)
            .map(|text| text.lines().any(|l| l.starts_with(NOT_ON_A_CLUSTER)))
            .unwrap_or(false);
        trials.push(Trial::test(name.clone(), move || {
            run_file(&path, Target::Server)
        }));
        trials.push(
            Trial::test(format!("cluster/{name}"), move || {
                run_file(
                    &cluster_path,
                    Target::Cluster(backends.unwrap_or(if i % 2 == 0 { 2 } else { 1 })),
                )
            })
            .with_ignored_flag(not_yet),
        );
    }
    libtest_mimic::run(&args, trials).exit();
}
