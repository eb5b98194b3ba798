//! SHOW statements (databases, tables, columns, variables, create table, partitions, tablets) and
//! the small result builder they and information_schema share.

use crate::output::Output;
use basalt_catalog::{ColumnDefault, ColumnMeta, PartitionBound, PartitionKind, TableMeta};
use basalt_common::SqlType;
use datafusion::arrow::array::{
    ArrayRef, Float64Builder, Int64Builder, RecordBatch, StringBuilder,
};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use std::sync::Arc;

/// A result column: text, integer or floating point.
pub struct Col {
    name: String,
    kind: DataType,
}

impl Col {
    pub fn str(name: &str) -> Col {
        Col {
            name: name.to_string(),
            kind: DataType::Utf8,
        }
    }

    pub fn int(name: &str) -> Col {
        Col {
            name: name.to_string(),
            kind: DataType::Int64,
        }
    }

    pub fn float(name: &str) -> Col {
        Col {
            name: name.to_string(),
            kind: DataType::Float64,
        }
    }
}

/// A value of a result row.
pub enum Cell {
    Str(Option<String>),
    Int(Option<i64>),
    Float(Option<f64>),
}

impl From<&str> for Cell {
    fn from(s: &str) -> Cell {
        Cell::Str(Some(s.to_string()))
    }
}

impl From<String> for Cell {
    fn from(s: String) -> Cell {
        Cell::Str(Some(s))
    }
}

impl From<Option<String>> for Cell {
    fn from(s: Option<String>) -> Cell {
        Cell::Str(s)
    }
}

impl From<Option<&str>> for Cell {
    fn from(s: Option<&str>) -> Cell {
        Cell::Str(s.map(str::to_string))
    }
}

impl From<i64> for Cell {
    fn from(i: i64) -> Cell {
        Cell::Int(Some(i))
    }
}

impl From<Option<i64>> for Cell {
    fn from(i: Option<i64>) -> Cell {
        Cell::Int(i)
    }
}

impl From<f64> for Cell {
    fn from(f: f64) -> Cell {
        Cell::Float(Some(f))
    }
}

impl From<Option<f64>> for Cell {
    fn from(f: Option<f64>) -> Cell {
        Cell::Float(f)
    }
}

/// Builds a small in-memory result row by row.
pub struct ResultBuilder {
    fields: Vec<Field>,
    columns: Vec<Builder>,
}

enum Builder {
    Str(StringBuilder),
    Int(Int64Builder),
    Float(Float64Builder),
}

impl ResultBuilder {
    pub fn new(cols: &[Col]) -> ResultBuilder {
        ResultBuilder {
            fields: cols
                .iter()
                .map(|c| Field::new(&c.name, c.kind.clone(), true))
                .collect(),
            columns: cols
                .iter()
                .map(|c| match c.kind {
                    DataType::Int64 => Builder::Int(Int64Builder::new()),
                    DataType::Float64 => Builder::Float(Float64Builder::new()),
                    _ => Builder::Str(StringBuilder::new()),
                })
                .collect(),
        }
    }

    /// Adds a row; cells must match the columns in number (and are converted to their kind).
    pub fn row(&mut self, cells: Vec<Cell>) {
        debug_assert_eq!(
            cells.len(),
            self.columns.len(),
            "cells for {:?}",
            self.fields
        );
        for (b, cell) in self.columns.iter_mut().zip(cells) {
            match (b, cell) {
                (Builder::Str(b), Cell::Str(v)) => b.append_option(v),
                (Builder::Int(b), Cell::Int(v)) => b.append_option(v),
                (Builder::Float(b), Cell::Float(v)) => b.append_option(v),
                (Builder::Str(b), Cell::Int(v)) => b.append_option(v.map(|i| i.to_string())),
                (Builder::Str(b), Cell::Float(v)) => b.append_option(v.map(|f| f.to_string())),
                (Builder::Int(b), Cell::Str(v)) => b.append_option(v.and_then(|s| s.parse().ok())),
                (Builder::Int(b), Cell::Float(v)) => b.append_option(v.map(|f| f as i64)),
                (Builder::Float(b), Cell::Int(v)) => b.append_option(v.map(|i| i as f64)),
                (Builder::Float(b), Cell::Str(v)) => {
                    b.append_option(v.and_then(|s| s.parse().ok()))
                }
            }
        }
    }

    /// Column names in lower case (how DataFusion resolves unquoted identifiers).
    pub fn lowercase_names(mut self) -> Self {
        self.fields = self
            .fields
            .into_iter()
            .map(|f| f.clone().with_name(f.name().to_lowercase()))
            .collect();
        self
    }

    pub fn finish(self) -> (SchemaRef, RecordBatch) {
        let schema = Arc::new(Schema::new(self.fields));
        let arrays: Vec<ArrayRef> = self
            .columns
            .into_iter()
            .map(|b| match b {
                Builder::Str(mut b) => Arc::new(b.finish()) as ArrayRef,
                Builder::Int(mut b) => Arc::new(b.finish()) as ArrayRef,
                Builder::Float(mut b) => Arc::new(b.finish()) as ArrayRef,
            })
            .collect();
        let batch = RecordBatch::try_new(schema.clone(), arrays)
            .unwrap_or_else(|_| RecordBatch::new_empty(schema.clone()));
        (schema, batch)
    }

    pub fn into_output(self) -> Output {
        let (schema, batch) = self.finish();
        Output::batches(schema, vec![batch])
    }
}

pub fn format_ms(ms: i64) -> Option<String> {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.naive_utc().format("%Y-%m-%d %H:%M:%S").to_string())
}

/// (character length, numeric precision, numeric scale) for information_schema.columns.
pub fn type_dimensions(ty: &SqlType) -> (Option<i64>, Option<i64>, Option<i64>) {
    match ty {
        SqlType::Char(n) | SqlType::Varchar(n) => (Some(*n as i64), None, None),
        SqlType::String => (Some(2147483647), None, None),
        SqlType::Binary(n) | SqlType::Varbinary(n) => (Some(i64::from(*n)), None, None),
        SqlType::Blob => (Some(65535), None, None),
        SqlType::Bitmap
        | SqlType::Hll
        | SqlType::QuantileState
        | SqlType::Json
        | SqlType::Variant
        | SqlType::Ipv4
        | SqlType::Ipv6
        | SqlType::Array(_)
        | SqlType::Map(..)
        | SqlType::Struct(_) => (None, None, None),
        SqlType::Boolean | SqlType::TinyInt => (None, Some(3), Some(0)),
        SqlType::SmallInt => (None, Some(5), Some(0)),
        SqlType::Year => (None, None, None),
        SqlType::Int => (None, Some(10), Some(0)),
        SqlType::BigInt => (None, Some(19), Some(0)),
        SqlType::LargeInt => (None, Some(39), Some(0)),
        SqlType::TinyIntUnsigned => (None, Some(3), Some(0)),
        SqlType::SmallIntUnsigned => (None, Some(5), Some(0)),
        SqlType::IntUnsigned => (None, Some(10), Some(0)),
        SqlType::BigIntUnsigned => (None, Some(20), Some(0)),
        SqlType::Bit(n) => (None, Some(i64::from(*n)), None),
        SqlType::Float => (None, Some(12), None),
        SqlType::Double => (None, Some(22), None),
        SqlType::Decimal { precision, scale } => {
            (None, Some(*precision as i64), Some(*scale as i64))
        }
        SqlType::Date | SqlType::DateTime { .. } | SqlType::Time { .. } => (None, None, None),
    }
}

pub fn default_text(c: &ColumnMeta) -> Option<String> {
    match &c.default {
        Some(ColumnDefault::Literal(v)) => Some(v.clone()),
        Some(ColumnDefault::CurrentTimestamp) => Some("CURRENT_TIMESTAMP".into()),
        Some(ColumnDefault::Expression(text)) => Some(text.clone()),
        _ => None,
    }
}

/// `CURRENT_TIMESTAMP`, with the fraction digits of a DATETIME(p) column (as MySQL shows them).
fn current_timestamp_text(c: &ColumnMeta) -> String {
    match c.ty {
        SqlType::DateTime { scale } if scale > 0 => format!("CURRENT_TIMESTAMP({scale})"),
        _ => "CURRENT_TIMESTAMP".into(),
    }
}

pub fn extra_text(c: &ColumnMeta) -> String {
    let mut parts = Vec::new();
    if let Some(a) = c.agg {
        parts.push(a.sql_name().to_string());
    }
    if c.auto_increment {
        parts.push("auto_increment".into());
    }
    if c.on_update_current_timestamp {
        parts.push(format!("on update {}", current_timestamp_text(c)));
    }
    if let Some(g) = &c.generated {
        parts.push(
            if g.stored {
                "STORED GENERATED"
            } else {
                "VIRTUAL GENERATED"
            }
            .into(),
        );
    }
    parts.join(" ")
}

/// `DESC t` / `SHOW COLUMNS FROM t`.
/// The columns of DESCRIBE / SHOW COLUMNS.
pub fn describe_result() -> ResultBuilder {
    ResultBuilder::new(&[
        Col::str("Field"),
        Col::str("Type"),
        Col::str("Null"),
        Col::str("Key"),
        Col::str("Default"),
        Col::str("Extra"),
    ])
}

pub fn describe(t: &TableMeta) -> Output {
    let mut b = describe_result();
    for (_, c) in t.declared_columns() {
        b.row(vec![
            c.shown_name().into(),
            c.ty.to_string().into(),
            (if c.nullable { "YES" } else { "NO" }).into(),
            (if c.is_key { "true" } else { "false" }).into(),
            default_text(c).into(),
            extra_text(c).into(),
        ]);
    }
    b.into_output()
}

fn quote(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

fn bound_values(t: &TableMeta, v: &Option<basalt_catalog::PartitionValue>) -> String {
    let ty = &t
        .partition_column_meta()
        .map(|c| c.ty.clone())
        .unwrap_or(SqlType::Int);
    match v {
        Some(v) => format!("\"{}\"", quote(&v.display(ty))),
        None => "MAXVALUE".to_string(),
    }
}

/// A string literal as MySQL's SHOW CREATE TABLE writes it.
fn sql_string(s: &str) -> String {
    crate::ddl_text::sql_string(s)
}

/// The DDL that recreates `t`, laid out as MySQL's SHOW CREATE TABLE is (what SQLAlchemy and
/// other reflecting tools parse): one column per line, the primary key of a Unique table as
/// `PRIMARY KEY (..)` in the column list, then Doris's clauses (key model, comment,
/// distribution, properties) on the closing `) ENGINE=OLAP` line, partitions one per line.
pub fn create_table_sql(t: &TableMeta) -> String {
    let q = crate::ddl_text::quote_ident;
    let mut s = format!("CREATE TABLE {} (\n", q(&t.name));
    let mut lines: Vec<String> = t
        .declared_columns()
        .map(|(_, c)| {
            let mut line = format!(
                "  {} {}{}",
                q(c.shown_name()),
                crate::ddl_text::column_type(c),
                crate::ddl_text::generated_clause(c)
            );
            if let Some(a) = c.agg {
                line.push_str(&format!(" {}", a.sql_name()));
            }
            line.push_str(if c.nullable { " NULL" } else { " NOT NULL" });
            if c.auto_increment {
                line.push_str(" AUTO_INCREMENT");
            }
            match &c.default {
                Some(ColumnDefault::Literal(v)) => {
                    line.push_str(&format!(" DEFAULT {}", sql_string(v)))
                }
                Some(ColumnDefault::CurrentTimestamp) => {
                    line.push_str(&format!(" DEFAULT {}", current_timestamp_text(c)))
                }
                Some(ColumnDefault::Null) => line.push_str(" DEFAULT NULL"),
                Some(ColumnDefault::Expression(text)) => {
                    line.push_str(&format!(" DEFAULT ({text})"))
                }
                None => {}
            }
            if c.on_update_current_timestamp {
                line.push_str(&format!(" ON UPDATE {}", current_timestamp_text(c)));
            }
            if !c.comment.is_empty() {
                line.push_str(&format!(" COMMENT {}", sql_string(&c.comment)));
            }
            line
        })
        .collect();
    let keys: Vec<String> = t.key_columns().iter().map(|c| q(c.shown_name())).collect();
    if t.keys_model == basalt_catalog::KeysModel::Unique {
        lines.push(format!("  PRIMARY KEY ({})", keys.join(", ")));
    }
    lines.extend(crate::ddl_text::key_lines(t));
    s.push_str(&lines.join(",\n"));
    s.push_str("\n) ENGINE=OLAP");
    // A table in load order has no key clause (its property says so).
    if !t.keeps_load_order() {
        s.push_str(&format!(
            " {} KEY({})",
            t.keys_model.sql_name(),
            keys.join(", ")
        ));
    }
    if !t.comment.is_empty() {
        s.push_str(&format!(" COMMENT {}", sql_string(&t.comment)));
    }
    if let Some(pc) = t.partition_column_meta() {
        let kind = if t.partition_kind == PartitionKind::Range {
            "RANGE"
        } else {
            "LIST"
        };
        let column = q(pc.shown_name());
        match &t.auto_partition {
            Some(auto) => match &auto.date_trunc_unit {
                Some(unit) => s.push_str(&format!(
                    " AUTO PARTITION BY {kind} (date_trunc({column}, {}))\n(",
                    sql_string(unit)
                )),
                None => s.push_str(&format!(" AUTO PARTITION BY {kind} ({column})\n(")),
            },
            None => s.push_str(&format!(" PARTITION BY {kind}({column})\n(")),
        }
        let parts: Vec<String> = t
            .partitions
            .iter()
            .map(|p| match &p.bound {
                PartitionBound::Range { lower, upper } => {
                    let lower = match lower {
                        Some(_) => bound_values(t, lower),
                        None => "MINVALUE".to_string(),
                    };
                    if lower == "MINVALUE" {
                        format!(
                            "PARTITION {} VALUES LESS THAN ({})",
                            p.name,
                            bound_values(t, upper)
                        )
                    } else {
                        format!(
                            "PARTITION {} VALUES [({}), ({}))",
                            p.name,
                            lower,
                            bound_values(t, upper)
                        )
                    }
                }
                PartitionBound::List { values } => {
                    let vals: Vec<String> = values
                        .iter()
                        .map(|v| bound_values(t, &Some(v.clone())))
                        .collect();
                    format!("PARTITION {} VALUES IN ({})", p.name, vals.join(", "))
                }
                PartitionBound::All => String::new(),
            })
            .collect();
        s.push_str(&parts.join(",\n"));
        // The rest stays on the last partition's line (a line of its own would be unknown
        // content to a MySQL reflection parser).
        s.push(')');
    }
    if t.distribution.columns.is_empty() {
        s.push_str(&format!(
            " DISTRIBUTED BY RANDOM BUCKETS {}",
            t.distribution.buckets
        ));
    } else {
        let cols: Vec<String> = t
            .distribution
            .columns
            .iter()
            .map(|i| q(t.columns[*i].shown_name()))
            .collect();
        s.push_str(&format!(
            " DISTRIBUTED BY HASH({}) BUCKETS {}",
            cols.join(", "),
            t.distribution.buckets
        ));
    }
    let mut props: Vec<String> = vec!["\"replication_num\" = \"1\"".to_string()];
    for (k, v) in &t.properties {
        if k != "replication_num" {
            props.push(format!("\"{}\" = \"{}\"", quote(k), quote(v)));
        }
    }
    s.push_str(&format!(" PROPERTIES ({})", props.join(", ")));
    s
}

pub fn show_create_table(t: &TableMeta) -> Output {
    let mut b = ResultBuilder::new(&[Col::str("Table"), Col::str("Create Table")]);
    b.row(vec![t.name.clone().into(), create_table_sql(t).into()]);
    b.into_output()
}

/// SHOW CREATE TABLE of a temporary table: named and created as the session knows it.
pub fn show_create_temporary_table(t: &TableMeta, shown: &str) -> Output {
    let ddl = create_table_sql(t).replacen(
        &format!("CREATE TABLE `{}`", t.name),
        &format!("CREATE TEMPORARY TABLE `{shown}`"),
        1,
    );
    let mut b = ResultBuilder::new(&[Col::str("Table"), Col::str("Create Table")]);
    b.row(vec![shown.to_string().into(), ddl.into()]);
    b.into_output()
}

/// SHOW PARTITIONS: the formal partitions, or (`temporary`) the temporary ones.
pub fn show_partitions(t: &TableMeta, temporary: bool) -> Output {
    let mut b = ResultBuilder::new(&[
        Col::int("PartitionId"),
        Col::str("PartitionName"),
        Col::int("VisibleVersion"),
        Col::str("PartitionKey"),
        Col::str("Range"),
        Col::str("DistributionKey"),
        Col::int("Buckets"),
        Col::int("RowCount"),
        Col::int("DataSize"),
    ]);
    let ty = t
        .partition_column_meta()
        .map(|c| c.ty.clone())
        .unwrap_or(SqlType::Int);
    let dist: Vec<String> = t
        .distribution
        .columns
        .iter()
        .map(|i| t.columns[*i].shown_name().to_string())
        .collect();
    let partitions = if temporary {
        &t.temporary_partitions
    } else {
        &t.partitions
    };
    for p in partitions {
        let range = match &p.bound {
            PartitionBound::All => String::new(),
            PartitionBound::Range { lower, upper } => format!(
                "[{}, {})",
                lower
                    .as_ref()
                    .map(|v| v.display(&ty))
                    .unwrap_or_else(|| "MIN".into()),
                upper
                    .as_ref()
                    .map(|v| v.display(&ty))
                    .unwrap_or_else(|| "MAX".into())
            ),
            PartitionBound::List { values } => {
                format!(
                    "({})",
                    values
                        .iter()
                        .map(|v| v.display(&ty))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            }
        };
        let rows = p.num_rows();
        let bytes = p.data_bytes();
        let version = p.tablets.iter().map(|t| t.version()).max().unwrap_or(0);
        b.row(vec![
            (p.id as i64).into(),
            p.name.clone().into(),
            (version as i64).into(),
            t.partition_column_meta()
                .map(|c| c.shown_name().to_string())
                .unwrap_or_default()
                .into(),
            range.into(),
            (if dist.is_empty() {
                "RANDOM".to_string()
            } else {
                dist.join(", ")
            })
            .into(),
            (p.tablets.len() as i64).into(),
            (rows as i64).into(),
            (bytes as i64).into(),
        ]);
    }
    b.into_output()
}

/// Bytes as Doris's SHOW DATA prints them (`1.500 KB`).
pub(crate) fn data_size(bytes: u64) -> String {
    let units = ["", "KB", "MB", "GB", "TB", "PB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < units.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.3} {}", units[unit])
}

/// Doris's `SHOW DATA`: each table's size and replica count, then the total.
pub fn show_database_data(tables: &[std::sync::Arc<TableMeta>]) -> Output {
    let mut b = ResultBuilder::new(&[
        Col::str("TableName"),
        Col::str("Size"),
        Col::int("ReplicaCount"),
        Col::str("RemoteSize"),
    ]);
    let (mut total, mut replicas) = (0u64, 0i64);
    let mut sorted: Vec<_> = tables.iter().collect();
    sorted.sort_by(|a, b| a.name.cmp(&b.name));
    for t in sorted {
        let count = t.tablets().count() as i64;
        total += t.data_bytes();
        replicas += count;
        b.row(vec![
            t.name.clone().into(),
            data_size(t.data_bytes()).into(),
            count.into(),
            data_size(0).into(),
        ]);
    }
    b.row(vec![
        "Total".into(),
        data_size(total).into(),
        replicas.into(),
        data_size(0).into(),
    ]);
    b.into_output()
}

/// Doris's `SHOW DATA FROM t`: the table's size, replicas and rows.
pub fn show_table_data(t: &TableMeta) -> Output {
    let mut b = ResultBuilder::new(&[
        Col::str("TableName"),
        Col::str("IndexName"),
        Col::str("Size"),
        Col::int("ReplicaCount"),
        Col::int("RowCount"),
        Col::str("RemoteSize"),
    ]);
    let count = t.tablets().count() as i64;
    let rows = t.num_rows() as i64;
    b.row(vec![
        t.name.clone().into(),
        t.name.clone().into(),
        data_size(t.data_bytes()).into(),
        count.into(),
        rows.into(),
        data_size(0).into(),
    ]);
    b.row(vec![
        "".into(),
        "Total".into(),
        data_size(t.data_bytes()).into(),
        count.into(),
        None::<i64>.into(),
        data_size(0).into(),
    ]);
    b.into_output()
}

/// SHOW TABLETS: every tablet of `t`, or of the `partitions` named.
pub fn show_tablets(t: &TableMeta, partitions: &[String]) -> Output {
    let mut b = ResultBuilder::new(&[
        Col::int("TabletId"),
        Col::str("PartitionName"),
        Col::int("Bucket"),
        Col::int("Version"),
        Col::int("RowsetCount"),
        Col::int("SegmentCount"),
        Col::int("RowCount"),
        Col::int("DataSize"),
        Col::str("VersionRange"),
        Col::int("DeletedRows"),
        Col::str("BackendIds"),
    ]);
    let shown = |name: &str| {
        partitions.is_empty() || partitions.iter().any(|p| p.eq_ignore_ascii_case(name))
    };
    for (p, tablet) in t.tablets().filter(|(p, _)| shown(&p.name)) {
        // The versions the visible rowsets cover, e.g. [1-250] after compaction; empty tablets
        // (never loaded, or truncated) cover none.
        let range = if tablet.rowsets.is_empty() {
            String::new()
        } else {
            format!("[{}-{}]", tablet.start_version(), tablet.version())
        };
        b.row(vec![
            (tablet.id as i64).into(),
            p.name.clone().into(),
            (tablet.bucket as i64).into(),
            (tablet.version() as i64).into(),
            (tablet.rowsets.len() as i64).into(),
            (tablet.num_segments() as i64).into(),
            (tablet.num_rows() as i64).into(),
            (tablet.rowsets.iter().map(|r| r.size_bytes()).sum::<u64>() as i64).into(),
            range.into(),
            (tablet.deleted_rows() as i64).into(),
            // The backends holding its replicas (a cluster's frontend; empty on one node).
            tablet
                .replicas
                .iter()
                .map(|b| b.to_string())
                .collect::<Vec<_>>()
                .join(",")
                .into(),
        ]);
    }
    b.into_output()
}

/// `SHOW LOAD` (Doris's job columns) or `SHOW STREAM LOAD` (its stream-load columns).
pub fn show_load(jobs: &[std::sync::Arc<basalt_catalog::LoadJobRecord>], stream: bool) -> Output {
    let time = |ms: i64| {
        chrono::DateTime::from_timestamp_millis(ms)
            .map(|t| {
                t.with_timezone(&chrono::Local)
                    .format("%Y-%m-%d %H:%M:%S")
                    .to_string()
            })
            .unwrap_or_default()
    };
    if stream {
        let mut b = ResultBuilder::new(&[
            Col::str("Label"),
            Col::str("Db"),
            Col::str("Table"),
            Col::str("Status"),
            Col::str("Message"),
            Col::str("Url"),
            Col::int("TotalRows"),
            Col::int("LoadedRows"),
            Col::int("FilteredRows"),
            Col::int("UnselectedRows"),
            Col::int("LoadBytes"),
            Col::str("StartTime"),
            Col::str("FinishTime"),
            Col::str("User"),
        ]);
        for j in jobs {
            b.row(vec![
                j.label.clone().into(),
                j.database.clone().into(),
                j.table.clone().into(),
                if j.state == "FINISHED" {
                    "Success"
                } else {
                    "Fail"
                }
                .to_string()
                .into(),
                j.message.clone().into(),
                j.error_url.clone().unwrap_or_default().into(),
                (j.total_rows as i64).into(),
                (j.loaded_rows as i64).into(),
                (j.filtered_rows as i64).into(),
                (j.unselected_rows as i64).into(),
                (j.load_bytes as i64).into(),
                time(j.created_ms).into(),
                time(j.finished_ms).into(),
                j.user.clone().into(),
            ]);
        }
        return b.into_output();
    }
    let mut b = ResultBuilder::new(&[
        Col::int("JobId"),
        Col::str("Label"),
        Col::str("State"),
        Col::str("Progress"),
        Col::str("Type"),
        Col::str("EtlInfo"),
        Col::str("TaskInfo"),
        Col::str("ErrorMsg"),
        Col::str("CreateTime"),
        Col::str("LoadFinishTime"),
        Col::str("URL"),
        Col::str("JobDetails"),
        Col::int("TransactionId"),
        Col::str("User"),
    ]);
    for j in jobs {
        let details = format!(
            "{{\"Table\":\"{}\",\"TotalRows\":{},\"LoadedRows\":{},\"FilteredRows\":{},\"UnselectedRows\":{},\"LoadBytes\":{}}}",
            j.table, j.total_rows, j.loaded_rows, j.filtered_rows, j.unselected_rows, j.load_bytes
        );
        b.row(vec![
            (j.txn_id as i64).into(),
            j.label.clone().into(),
            j.state.clone().into(),
            if j.state == "FINISHED" {
                "100.00% (1/1)"
            } else {
                "0.00% (0/1)"
            }
            .to_string()
            .into(),
            j.kind.clone().into(),
            format!(
                "unselected.rows={}; dpp.abnorm.ALL={}; dpp.norm.ALL={}",
                j.unselected_rows, j.filtered_rows, j.loaded_rows
            )
            .into(),
            "cluster:N/A; timeout(s):N/A; max_filter_ratio:N/A"
                .to_string()
                .into(),
            j.message.clone().into(),
            time(j.created_ms).into(),
            time(j.finished_ms).into(),
            j.error_url.clone().unwrap_or_default().into(),
            details.into(),
            (j.txn_id as i64).into(),
            j.user.clone().into(),
        ]);
    }
    b.into_output()
}

/// SQL LIKE matching for SHOW ... LIKE (`%` and `_`, case-insensitive).
pub fn like(pattern: &str, text: &str) -> bool {
    fn rec(p: &[char], t: &[char]) -> bool {
        match p.split_first() {
            None => t.is_empty(),
            Some(('%', rest)) => (0..=t.len()).any(|i| rec(rest, &t[i..])),
            Some(('_', rest)) => !t.is_empty() && rec(rest, &t[1..]),
            Some(('\\', rest)) if !rest.is_empty() => {
                !t.is_empty() && t[0] == rest[0] && rec(&rest[1..], &t[1..])
            }
            Some((c, rest)) => !t.is_empty() && t[0] == *c && rec(rest, &t[1..]),
        }
    }
    let p: Vec<char> = pattern.to_lowercase().chars().collect();
    let t: Vec<char> = text.to_lowercase().chars().collect();
    rec(&p, &t)
}

#[cfg(test)]
mod tests {
    use super::like;

    #[test]
    fn like_patterns() {
        assert!(like("char%", "character_set_client"));
        assert!(like("%_timeout", "wait_timeout"));
        assert!(!like("wait", "wait_timeout"));
        assert!(like("w_it_timeout", "WAIT_TIMEOUT"));
    }
}
