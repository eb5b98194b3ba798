//! The `local(...)` table function: Doris's way to query files on the server, so that
//! `INSERT INTO t SELECT ... FROM local("file_path" = "in/*.csv", "format" = "csv")` loads them
//! through the ordinary INSERT path (one transaction, the same conversions and NOT NULL checks).
//!
//! Properties (keys case-insensitive):
//! - `file_path` (required): a file or glob, relative to the allowed load directory or absolute
//!   inside it; see [`crate::load_path`] for how it is confined.
//! - `format` (required): `parquet` (its own schema), `csv` (columns `c1`, `c2`, ... as text),
//!   `csv_with_names` (columns named by the header line, as text) or `json` (schema inferred).
//! - CSV: `column_separator` (default `\t`), `line_delimiter` (default `\n`), `enclose`
//!   (default `"`), `escape`; single bytes, also written as `\x01`. The field `\N` reads as NULL.
//! - JSON: `read_json_by_line` (default true), `strip_outer_array` (default false; true reads
//!   each file as one JSON array of objects).
//! - CSV and JSON: `compress_type` (`plain`, `gz`, `bz2`, `xz`, `zstd`; default from the suffix).
//! - `backend_id`, `shared_storage`: accepted and ignored (one node).
//!
//! The files are read by DataFusion's listing table (streaming, split across partitions).
//! Doris's `"key" = "value"` arguments are not valid DataFusion table-function arguments (they
//! are comparisons that the planner would fold to `false`), so the frontend turns them into
//! `'key', 'value'` pairs on the parsed statement first.

use crate::load_path::LoadDir;
use basalt_common::df_error::to_df;
use basalt_common::{BasaltError, Result};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::catalog::{Session as DfSession, TableFunctionArgs, TableFunctionImpl};
use datafusion::common::{Column, ScalarValue};
use datafusion::datasource::file_format::csv::CsvFormat;
use datafusion::datasource::file_format::file_compression_type::FileCompressionType;
use datafusion::datasource::file_format::json::JsonFormat;
use datafusion::datasource::file_format::parquet::ParquetFormat;
use datafusion::datasource::file_format::FileFormat;
use datafusion::datasource::listing::{
    ListingOptions, ListingTable, ListingTableConfig, ListingTableUrl,
};
use datafusion::datasource::{provider_as_source, TableProvider, ViewTable};
use datafusion::logical_expr::{lit, Expr, LogicalPlanBuilder};
use datafusion::object_store::ObjectStoreExt;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The table function's name.
pub const NAME: &str = "local";

/// Error 1210 for a bad `local()` call.
pub fn wrong(message: impl Into<String>) -> BasaltError {
    BasaltError::WrongArguments {
        function: NAME.into(),
        message: message.into(),
    }
}

/// File formats `local()` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Parquet,
    Csv { header: bool },
    Json,
}

/// The parsed properties of one `local(...)` call.
#[derive(Debug)]
struct Properties {
    file_path: String,
    format: Format,
    format_name: String,
    column_separator: u8,
    /// None: `\n` or `\r\n`.
    line_delimiter: Option<u8>,
    enclose: u8,
    escape: Option<u8>,
    strip_outer_array: bool,
    compression: Option<FileCompressionType>,
}

const KNOWN_KEYS: &[&str] = &[
    "file_path",
    "format",
    "column_separator",
    "line_delimiter",
    "enclose",
    "escape",
    "read_json_by_line",
    "strip_outer_array",
    "compress_type",
    "backend_id",
    "shared_storage",
];

impl Properties {
    fn parse(pairs: Vec<(String, String)>) -> Result<Properties> {
        let mut map = BTreeMap::new();
        for (k, v) in pairs {
            let key = k.trim().to_ascii_lowercase();
            if !KNOWN_KEYS.contains(&key.as_str()) {
                return Err(wrong(format!(
                    "unknown property \"{k}\" (supported: {})",
                    KNOWN_KEYS.join(", ")
                )));
            }
            if map.insert(key, v).is_some() {
                return Err(wrong(format!("property \"{k}\" given twice")));
            }
        }
        let file_path = map
            .remove("file_path")
            .ok_or_else(|| wrong("property \"file_path\" is required"))?;
        let format_name = map
            .remove("format")
            .ok_or_else(|| wrong("property \"format\" is required"))?;
        let format_name = format_name.trim().to_ascii_lowercase();
        let format = match format_name.as_str() {
            "parquet" => Format::Parquet,
            "csv" => Format::Csv { header: false },
            "csv_with_names" => Format::Csv { header: true },
            "json" => Format::Json,
            other => {
                return Err(wrong(format!(
                    "format \"{other}\" is not supported (use parquet, csv, csv_with_names or json)"
                )))
            }
        };
        let byte = |key: &str, default: Option<u8>| -> Result<Option<u8>> {
            match map.get(key) {
                None => Ok(default),
                Some(v) => single_byte(v)
                    .map(Some)
                    .ok_or_else(|| wrong(format!("\"{key}\" must be a single byte, got \"{v}\""))),
            }
        };
        let column_separator = byte("column_separator", Some(b'\t'))?.unwrap_or(b'\t');
        let line_delimiter = match map.get("line_delimiter").map(|s| unescape(s)) {
            None => None,
            Some(d) if d == "\n" || d == "\r\n" => None,
            Some(_) => byte("line_delimiter", None)?,
        };
        let enclose = byte("enclose", Some(b'"'))?.unwrap_or(b'"');
        let escape = byte("escape", None)?;
        let flag = |key: &str, default: bool| -> Result<bool> {
            match map.get(key).map(|v| v.trim().to_ascii_lowercase()) {
                None => Ok(default),
                Some(v) if v == "true" || v == "1" => Ok(true),
                Some(v) if v == "false" || v == "0" => Ok(false),
                Some(v) => Err(wrong(format!(
                    "\"{key}\" must be true or false, got \"{v}\""
                ))),
            }
        };
        // Without an outer array, DataFusion reads a stream of JSON objects whether or not each
        // sits on its own line, so `read_json_by_line` only needs validating.
        flag("read_json_by_line", true)?;
        let strip_outer_array = flag("strip_outer_array", false)?;
        flag("shared_storage", false)?;
        let compression = match map.get("compress_type") {
            None => None,
            Some(v) => Some(match v.trim().to_ascii_lowercase().as_str() {
                "plain" | "unknown" | "" => FileCompressionType::UNCOMPRESSED,
                "gz" | "gzip" => FileCompressionType::GZIP,
                "bz2" | "bzip2" => FileCompressionType::BZIP2,
                "xz" => FileCompressionType::XZ,
                "zstd" | "zst" => FileCompressionType::ZSTD,
                other => {
                    return Err(wrong(format!(
                    "compress_type \"{other}\" is not supported (use plain, gz, bz2, xz or zstd)"
                )))
                }
            }),
        };
        Ok(Properties {
            file_path,
            format,
            format_name,
            column_separator,
            line_delimiter,
            enclose,
            escape,
            strip_outer_array,
            compression,
        })
    }

    /// Compression: as given, else from the file name's suffix.
    fn compression_for(&self, first_file: &std::path::Path) -> FileCompressionType {
        if let Some(c) = self.compression {
            return c;
        }
        match first_file.extension().and_then(|e| e.to_str()) {
            Some("gz") => FileCompressionType::GZIP,
            Some("bz2") => FileCompressionType::BZIP2,
            Some("xz") => FileCompressionType::XZ,
            Some("zst") => FileCompressionType::ZSTD,
            _ => FileCompressionType::UNCOMPRESSED,
        }
    }

    fn file_format(
        &self,
        session: &dyn DfSession,
        first_file: &std::path::Path,
    ) -> Arc<dyn FileFormat> {
        match self.format {
            Format::Parquet => Arc::new(
                ParquetFormat::default().with_options(session.table_options().parquet.clone()),
            ),
            Format::Csv { header } => Arc::new(
                CsvFormat::default()
                    .with_has_header(header)
                    .with_delimiter(self.column_separator)
                    .with_terminator(self.line_delimiter)
                    .with_quote(self.enclose)
                    .with_escape(self.escape)
                    .with_file_compression_type(self.compression_for(first_file)),
            ),
            Format::Json => Arc::new(
                JsonFormat::default()
                    .with_newline_delimited(!self.strip_outer_array)
                    .with_file_compression_type(self.compression_for(first_file)),
            ),
        }
    }
}

/// Doris writes separators as the byte itself, `\t`-style escapes, or `\xNN`.
fn unescape(s: &str) -> String {
    match s {
        "\\t" => "\t".into(),
        "\\n" => "\n".into(),
        "\\r\\n" => "\r\n".into(),
        "\\r" => "\r".into(),
        _ => s.to_string(),
    }
}

fn single_byte(s: &str) -> Option<u8> {
    let s = unescape(s);
    if let Some(hex) = s.strip_prefix("\\x").or_else(|| s.strip_prefix("\\X")) {
        return u8::from_str_radix(hex, 16).ok();
    }
    match s.as_bytes() {
        [b] => Some(*b),
        _ => None,
    }
}

/// The caller's permission to read the server's files, asked before any file is touched.
pub type AccessGate = Arc<dyn Fn() -> Result<()> + Send + Sync>;

/// `local(...)`, bound to the server's load directory (None: loading from files is disabled)
/// and to the calling session's permission.
pub struct LocalFunction {
    dir: Option<Arc<LoadDir>>,
    gate: AccessGate,
}

impl std::fmt::Debug for LocalFunction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalFunction")
            .field("dir", &self.dir)
            .finish_non_exhaustive()
    }
}

impl LocalFunction {
    pub fn new(dir: Option<Arc<LoadDir>>, gate: AccessGate) -> LocalFunction {
        LocalFunction { dir, gate }
    }

    fn provider(&self, exprs: &[Expr], session: &dyn DfSession) -> Result<Arc<dyn TableProvider>> {
        (self.gate)()?;
        let props = Properties::parse(pairs_of(exprs)?)?;
        let dir = self.dir.as_ref().ok_or_else(|| {
            BasaltError::FileAccessDenied("no load directory is configured".into())
        })?;
        let files = dir.resolve(&props.file_path)?;
        let format = props.file_format(session, &files[0]);
        let urls = files
            .iter()
            .map(|f| file_url(f))
            .collect::<Result<Vec<_>>>()?;
        let file_schema = infer_schema(session, format.as_ref(), &urls).map_err(|e| match e {
            BasaltError::Execution(m) => BasaltError::Execution(format!(
                "cannot read '{}' as {}: {m}",
                props.file_path, props.format_name
            )),
            other => other,
        })?;
        let schema = match props.format {
            // Doris reads CSV as text (named c1, c2, ... without a header); INSERT converts.
            Format::Csv { header } => Arc::new(Schema::new(
                file_schema
                    .fields()
                    .iter()
                    .enumerate()
                    .map(|(i, f)| {
                        let name = if header {
                            f.name().clone()
                        } else {
                            format!("c{}", i + 1)
                        };
                        Field::new(name, DataType::Utf8, true)
                    })
                    .collect::<Vec<_>>(),
            )),
            _ => file_schema,
        };
        let options = ListingOptions::new(format).with_file_extension("");
        let config = ListingTableConfig::new_with_multi_paths(urls)
            .with_listing_options(options)
            .with_schema(schema.clone());
        let table: Arc<dyn TableProvider> =
            Arc::new(ListingTable::try_new(config).map_err(basalt_common::df_error::from_df)?);
        match props.format {
            Format::Csv { .. } => null_marker_view(table, &schema),
            _ => Ok(table),
        }
    }
}

impl TableFunctionImpl for LocalFunction {
    fn call_with_args(
        &self,
        args: TableFunctionArgs,
    ) -> datafusion::common::Result<Arc<dyn TableProvider>> {
        self.provider(args.exprs(), args.session()).map_err(to_df)
    }
}

/// The `'key', 'value', ...` literals [`rewrite_calls`] produced.
fn pairs_of(exprs: &[Expr]) -> Result<Vec<(String, String)>> {
    let texts = exprs
        .iter()
        .map(|e| match e {
            Expr::Literal(v, _) => match v.try_as_str() {
                Some(Some(s)) => Some(s.to_string()),
                Some(None) => None,
                None if !v.is_null() => Some(v.to_string()),
                None => None,
            },
            _ => None,
        })
        .collect::<Option<Vec<String>>>()
        .ok_or_else(|| wrong("expected \"key\" = \"value\" properties"))?;
    if texts.len() % 2 != 0 {
        return Err(wrong("expected \"key\" = \"value\" properties"));
    }
    Ok(texts
        .chunks(2)
        .map(|kv| (kv[0].clone(), kv[1].clone()))
        .collect())
}

fn file_url(path: &std::path::Path) -> Result<ListingTableUrl> {
    let url = url::Url::from_file_path(path)
        .map_err(|_| BasaltError::Internal(format!("bad file path {}", path.display())))?;
    ListingTableUrl::try_new(url, None).map_err(basalt_common::df_error::from_df)
}

/// The files' schema as DataFusion's format infers it (Parquet footers, the first CSV/JSON
/// records). Planning is synchronous here, the inference is not: run it to completion.
fn infer_schema(
    session: &dyn DfSession,
    format: &dyn FileFormat,
    urls: &[ListingTableUrl],
) -> Result<SchemaRef> {
    let store = session
        .runtime_env()
        .object_store(&urls[0])
        .map_err(basalt_common::df_error::from_df)?;
    let fut = async {
        let mut objects = Vec::with_capacity(urls.len());
        for u in urls {
            let meta = store
                .head(u.prefix())
                .await
                .map_err(|e| BasaltError::Io(std::io::Error::other(e)))?;
            // Empty files say nothing about the schema (and some readers fail on them).
            if meta.size > 0 {
                objects.push(meta);
            }
        }
        format
            .infer_schema(session, &store, &objects)
            .await
            .map_err(basalt_common::df_error::from_df)
    };
    block_on(fut)
}

fn block_on<F: std::future::Future>(fut: F) -> F::Output {
    use tokio::runtime::{Handle, RuntimeFlavor};
    match Handle::try_current() {
        Ok(h) if h.runtime_flavor() == RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(|| futures::executor::block_on(fut))
        }
        _ => futures::executor::block_on(fut),
    }
}

/// CSV fields `\N` (Doris's and MySQL's NULL marker) read as NULL.
fn null_marker_view(
    table: Arc<dyn TableProvider>,
    schema: &SchemaRef,
) -> Result<Arc<dyn TableProvider>> {
    let exprs = schema.fields().iter().map(|f| {
        datafusion::functions::core::expr_fn::nullif(
            Expr::Column(Column::from_name(f.name())),
            lit(ScalarValue::Utf8(Some("\\N".into()))),
        )
        .alias(f.name())
    });
    let plan = LogicalPlanBuilder::scan(NAME, provider_as_source(table), None)
        .and_then(|b| b.project(exprs))
        .and_then(|b| b.build())
        .map_err(basalt_common::df_error::from_df)?;
    Ok(Arc::new(ViewTable::new(plan, None)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(pairs: &[(&str, &str)]) -> Result<Properties> {
        Properties::parse(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    }

    #[test]
    fn parses_properties() {
        let p = props(&[("file_path", "x"), ("FORMAT", "CSV")]).unwrap();
        assert_eq!(p.format, Format::Csv { header: false });
        assert_eq!(p.column_separator, b'\t');
        assert_eq!(p.line_delimiter, None);
        let p = props(&[
            ("file_path", "x"),
            ("format", "csv_with_names"),
            ("column_separator", "\\x01"),
            ("line_delimiter", "\\r\\n"),
        ])
        .unwrap();
        assert_eq!(p.format, Format::Csv { header: true });
        assert_eq!(p.column_separator, 1);
        assert_eq!(p.line_delimiter, None);
        let p = props(&[
            ("file_path", "x"),
            ("format", "csv"),
            ("column_separator", "|"),
            ("line_delimiter", ";"),
        ])
        .unwrap();
        assert_eq!((p.column_separator, p.line_delimiter), (b'|', Some(b';')));
        let p = props(&[
            ("file_path", "x"),
            ("format", "json"),
            ("strip_outer_array", "true"),
        ])
        .unwrap();
        assert!(p.strip_outer_array);
        assert_eq!(
            p.compression_for(std::path::Path::new("a.json.gz")),
            FileCompressionType::GZIP
        );

        for bad in [
            vec![("format", "csv")],
            vec![("file_path", "x")],
            vec![("file_path", "x"), ("format", "orc")],
            vec![
                ("file_path", "x"),
                ("format", "csv"),
                ("column_separator", "||"),
            ],
            vec![("file_path", "x"), ("format", "csv"), ("jsonpaths", "$.a")],
            vec![("file_path", "x"), ("format", "csv"), ("format", "csv")],
            vec![
                ("file_path", "x"),
                ("format", "json"),
                ("read_json_by_line", "maybe"),
            ],
            vec![
                ("file_path", "x"),
                ("format", "json"),
                ("compress_type", "lzo"),
            ],
        ] {
            let e = props(&bad).unwrap_err();
            assert_eq!(e.mysql_code(), 1210, "{bad:?}: {e}");
        }
    }
}
