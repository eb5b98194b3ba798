//! Stream Load request options: Doris's HTTP headers (`format`, `column_separator`, `columns`,
//! `where`, `max_filter_ratio`, ...) parsed and checked before any data is read.

use basalt_common::{BasaltError, Result};
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadFormat {
    Csv,
    /// CSV whose first line names the columns.
    CsvWithNames,
    /// CSV whose first line names the columns and second line gives their types.
    CsvWithNamesAndTypes,
    Json,
    Parquet,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    None,
    Gzip,
    Zstd,
}

/// Unique-key tables: whether the rows of a load are upserts, deletes, or either by condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MergeType {
    Append,
    Delete,
    Merge,
}

/// One entry of the `columns` header: a column of the data, or a column computed from them.
#[derive(Debug, Clone, PartialEq)]
pub enum ColumnItem {
    Source(String),
    Derived { name: String, expr: String },
}

#[derive(Debug, Clone)]
pub struct LoadOptions {
    pub label: Option<String>,
    pub format: LoadFormat,
    pub column_separator: Vec<u8>,
    pub line_delimiter: Vec<u8>,
    pub enclose: Option<u8>,
    pub escape: Option<u8>,
    pub trim_double_quotes: bool,
    /// `lenient_field_count`: MySQL's LOAD DATA rule for lines with too many or too few fields
    /// (the extra ones are ignored, missing ones are NULL) instead of filtering them.
    pub lenient_field_count: bool,
    /// `mysql_escapes`: MySQL's LOAD DATA escapes (the escape character works in every field,
    /// `\t`, `\n`, ... stand for their bytes) instead of Doris's (only in enclosed fields).
    pub mysql_escapes: bool,
    pub skip_lines: usize,
    pub columns: Option<Vec<ColumnItem>>,
    pub where_expr: Option<String>,
    pub max_filter_ratio: f64,
    pub partitions: Option<Vec<String>>,
    /// Doris's `temporary_partitions` header: rows go only to these temporary partitions.
    pub temporary_partitions: Option<Vec<String>>,
    pub timeout: Duration,
    pub strict_mode: bool,
    pub compression: Compression,
    pub strip_outer_array: bool,
    pub read_json_by_line: bool,
    pub jsonpaths: Option<Vec<String>>,
    pub json_root: Option<String>,
    pub merge_type: MergeType,
    pub delete_condition: Option<String>,
}

/// Doris's default load timeout.
const DEFAULT_TIMEOUT_SECS: u64 = 600;

fn invalid(msg: impl Into<String>) -> BasaltError {
    BasaltError::InvalidData(msg.into())
}

impl LoadOptions {
    /// Reads the options from request headers (names are case-insensitive).
    pub fn from_headers<'a>(
        headers: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<LoadOptions> {
        let mut o = LoadOptions {
            label: None,
            format: LoadFormat::Csv,
            column_separator: b"\t".to_vec(),
            line_delimiter: b"\n".to_vec(),
            enclose: None,
            escape: None,
            trim_double_quotes: false,
            lenient_field_count: false,
            mysql_escapes: false,
            skip_lines: 0,
            columns: None,
            where_expr: None,
            max_filter_ratio: 0.0,
            partitions: None,
            temporary_partitions: None,
            timeout: Duration::from_secs(DEFAULT_TIMEOUT_SECS),
            strict_mode: false,
            compression: Compression::None,
            strip_outer_array: false,
            read_json_by_line: false,
            jsonpaths: None,
            json_root: None,
            merge_type: MergeType::Append,
            delete_condition: None,
        };
        let mut format_text = None;
        for (name, value) in headers {
            let value = value.trim();
            match name.to_ascii_lowercase().as_str() {
                "label" if !value.is_empty() => o.label = Some(valid_label(value)?),
                "format" => format_text = Some(value.to_ascii_lowercase()),
                "column_separator" => o.column_separator = separator(name, value)?,
                "line_delimiter" => o.line_delimiter = separator(name, value)?,
                "enclose" => o.enclose = single_byte(name, value)?,
                "escape" => o.escape = single_byte(name, value)?,
                "trim_double_quotes" => o.trim_double_quotes = boolean(name, value)?,
                "lenient_field_count" => o.lenient_field_count = boolean(name, value)?,
                "mysql_escapes" => o.mysql_escapes = boolean(name, value)?,
                "skip_lines" => {
                    o.skip_lines = value
                        .parse()
                        .map_err(|_| invalid(format!("skip_lines must be a count: '{value}'")))?
                }
                "columns" if !value.is_empty() => o.columns = Some(parse_columns(value)?),
                "where" if !value.is_empty() => o.where_expr = Some(value.to_string()),
                "max_filter_ratio" => {
                    let r: f64 = value.parse().map_err(|_| {
                        invalid(format!("max_filter_ratio must be a number: '{value}'"))
                    })?;
                    if !(0.0..=1.0).contains(&r) {
                        return Err(invalid(format!(
                            "max_filter_ratio must be between 0 and 1, got {value}"
                        )));
                    }
                    o.max_filter_ratio = r;
                }
                "partitions" | "temporary_partitions" if !value.is_empty() => {
                    let names = value
                        .split(',')
                        .map(|p| p.trim().trim_matches('`').to_string())
                        .filter(|p| !p.is_empty())
                        .collect();
                    if name.eq_ignore_ascii_case("partitions") {
                        o.partitions = Some(names);
                    } else {
                        o.temporary_partitions = Some(names);
                    }
                }
                "timeout" => {
                    let secs: u64 = value.parse().map_err(|_| {
                        invalid(format!("timeout must be a number of seconds: '{value}'"))
                    })?;
                    if secs == 0 {
                        return Err(invalid("timeout must be at least 1 second"));
                    }
                    o.timeout = Duration::from_secs(secs);
                }
                "strict_mode" => o.strict_mode = boolean(name, value)?,
                "compress_type" => {
                    o.compression = match value.to_ascii_lowercase().as_str() {
                        "" | "plain" => Compression::None,
                        "gz" | "gzip" => Compression::Gzip,
                        "zstd" | "zst" => Compression::Zstd,
                        other => {
                            return Err(invalid(format!(
                                "compress_type '{other}' is not supported (use gz or zstd)"
                            )))
                        }
                    }
                }
                "strip_outer_array" => o.strip_outer_array = boolean(name, value)?,
                "read_json_by_line" => o.read_json_by_line = boolean(name, value)?,
                "jsonpaths" if !value.is_empty() => {
                    let paths: Vec<String> = serde_json::from_str(value).map_err(|e| {
                        invalid(format!("jsonpaths must be a JSON array of strings: {e}"))
                    })?;
                    for p in &paths {
                        crate::json::JsonPath::parse(p)?;
                    }
                    o.jsonpaths = Some(paths);
                }
                "json_root" if !value.is_empty() => {
                    crate::json::JsonPath::parse(value)?;
                    o.json_root = Some(value.to_string());
                }
                "merge_type" => {
                    o.merge_type = match value.to_ascii_uppercase().as_str() {
                        "" | "APPEND" => MergeType::Append,
                        "DELETE" => MergeType::Delete,
                        "MERGE" => MergeType::Merge,
                        other => {
                            return Err(invalid(format!(
                                "merge_type must be APPEND, DELETE or MERGE, got '{other}'"
                            )))
                        }
                    }
                }
                "delete" if !value.is_empty() => o.delete_condition = Some(value.to_string()),
                other => check_other_doris_header(other, value)?,
            }
        }
        if let Some(f) = format_text {
            o.format = match f.as_str() {
                "" | "csv" => LoadFormat::Csv,
                "csv_with_names" => LoadFormat::CsvWithNames,
                "csv_with_names_and_types" => LoadFormat::CsvWithNamesAndTypes,
                "json" => LoadFormat::Json,
                "parquet" => LoadFormat::Parquet,
                other => {
                    return Err(invalid(format!(
                        "format '{other}' is not supported (csv, csv_with_names, \
                         csv_with_names_and_types, json, parquet)"
                    )))
                }
            };
        }
        if o.partitions.is_some() && o.temporary_partitions.is_some() {
            return Err(invalid(
                "a load names partitions or temporary_partitions, not both",
            ));
        }
        if o.column_separator.is_empty() {
            return Err(invalid("column_separator must not be empty"));
        }
        if o.line_delimiter.is_empty() {
            return Err(invalid("line_delimiter must not be empty"));
        }
        if o.merge_type == MergeType::Merge && o.delete_condition.is_none() {
            return Err(invalid(
                "merge_type MERGE needs a `delete` header with the condition that marks deletes",
            ));
        }
        if o.merge_type != MergeType::Merge && o.delete_condition.is_some() {
            return Err(invalid(
                "the `delete` header is only valid with merge_type MERGE",
            ));
        }
        Ok(o)
    }

    pub fn is_csv(&self) -> bool {
        matches!(
            self.format,
            LoadFormat::Csv | LoadFormat::CsvWithNames | LoadFormat::CsvWithNamesAndTypes
        )
    }
}

/// Doris headers Basalt does not act on: ones that only tune Doris's own machinery are
/// accepted (with their values checked), ones that would change what is loaded are refused
/// unless they ask for the default, so a load never silently means something else.
/// Headers that are not Doris's (HTTP's own, proxies', clients') are left alone.
fn check_other_doris_header(name: &str, value: &str) -> Result<()> {
    let unsupported = |what: &str| {
        Err(invalid(format!(
            "header {name}: {value} is not supported by Basalt ({what}); nothing was loaded"
        )))
    };
    match name {
        "two_phase_commit" if boolean(name, value)? => {
            unsupported("loads commit in one phase when the body is complete")
        }
        "partial_columns" if boolean(name, value)? => {
            unsupported("partial-column updates are not implemented")
        }
        "unique_key_update_mode"
            if !matches!(value.to_ascii_uppercase().as_str(), "" | "UPSERT") =>
        {
            unsupported("only UPSERT is implemented")
        }
        "function_column.sequence_col" | "sequence_col" if !value.is_empty() => {
            unsupported("sequence columns are not implemented")
        }
        "hidden_columns" if !value.is_empty() => {
            unsupported("use merge_type and delete to load deletes")
        }
        "load_to_single_tablet" if boolean(name, value)? => {
            unsupported("it needs RANDOM distribution")
        }
        "timezone" | "time_zone"
            if !matches!(
                value.to_ascii_uppercase().as_str(),
                "" | "UTC" | "+00:00" | "GMT" | "ETC/UTC"
            ) =>
        {
            unsupported("loads convert times in UTC")
        }
        "group_commit"
            if !matches!(
                value.to_ascii_lowercase().as_str(),
                "" | "off_mode" | "sync_mode" | "async_mode"
            ) =>
        {
            Err(invalid(format!(
                "group_commit must be off_mode, sync_mode or async_mode, got '{value}'"
            )))
        }
        // Accepted: every load here is already synchronous and visible when acknowledged
        // (group_commit), or they tune Doris's own execution.
        "fuzzy_parse" | "num_as_string" | "memtable_on_sink_node" | "enable_profile" => {
            boolean(name, value).map(|_| ())
        }
        "exec_mem_limit" | "send_batch_parallelism" | "load_mem_limit"
            if !value.is_empty() && value.parse::<u64>().is_err() =>
        {
            Err(invalid(format!("{name} must be a number, got '{value}'")))
        }
        _ => Ok(()),
    }
}

fn boolean(name: &str, value: &str) -> Result<bool> {
    match value.to_ascii_lowercase().as_str() {
        "true" | "1" => Ok(true),
        "false" | "0" | "" => Ok(false),
        _ => Err(invalid(format!(
            "{name} must be true or false, got '{value}'"
        ))),
    }
}

fn single_byte(name: &str, value: &str) -> Result<Option<u8>> {
    let bytes = separator(name, value)?;
    match bytes.len() {
        0 => Ok(None),
        1 => Ok(Some(bytes[0])),
        _ => Err(invalid(format!(
            "{name} must be a single character, got '{value}'"
        ))),
    }
}

/// A separator as Doris writes it: literal text, `\t`/`\n`/`\r`/`\\`, or hex bytes after `\x`
/// (`\x01`, `\x0102`).
fn separator(name: &str, value: &str) -> Result<Vec<u8>> {
    if let Some(hex) = value
        .strip_prefix("\\x")
        .or_else(|| value.strip_prefix("\\X"))
    {
        if hex.is_empty() || hex.len() % 2 != 0 {
            return Err(invalid(format!("{name}: bad hex separator '{value}'")));
        }
        return (0..hex.len())
            .step_by(2)
            .map(|i| {
                u8::from_str_radix(&hex[i..i + 2], 16)
                    .map_err(|_| invalid(format!("{name}: bad hex separator '{value}'")))
            })
            .collect();
    }
    let mut out = Vec::with_capacity(value.len());
    let mut bytes = value.bytes();
    while let Some(b) = bytes.next() {
        if b == b'\\' {
            match bytes.next() {
                Some(b't') => out.push(b'\t'),
                Some(b'n') => out.push(b'\n'),
                Some(b'r') => out.push(b'\r'),
                Some(b'\\') => out.push(b'\\'),
                Some(other) => {
                    out.push(b'\\');
                    out.push(other);
                }
                None => out.push(b'\\'),
            }
        } else {
            out.push(b);
        }
    }
    Ok(out)
}

/// Splits the `columns` header at top-level commas (not inside parentheses or quotes).
fn parse_columns(value: &str) -> Result<Vec<ColumnItem>> {
    let mut items = Vec::new();
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    let mut start = 0;
    let mut parts = Vec::new();
    for (i, ch) in value.char_indices() {
        match quote {
            Some(q) if ch == q => quote = None,
            Some(_) => {}
            None => match ch {
                '\'' | '"' | '`' => quote = Some(ch),
                '(' => depth += 1,
                ')' => depth -= 1,
                ',' if depth == 0 => {
                    parts.push(&value[start..i]);
                    start = i + 1;
                }
                _ => {}
            },
        }
    }
    parts.push(&value[start..]);
    for part in parts {
        let part = part.trim();
        if part.is_empty() {
            return Err(invalid(format!("columns: empty entry in '{value}'")));
        }
        match top_level_assignment(part) {
            Some(eq) => {
                let name = clean_name(&part[..eq]);
                let expr = part[eq + 1..].trim().to_string();
                if name.is_empty() || expr.is_empty() {
                    return Err(invalid(format!("columns: bad entry '{part}'")));
                }
                items.push(ColumnItem::Derived { name, expr });
            }
            None => {
                let name = clean_name(part);
                if name.is_empty() || name.contains(|c: char| c.is_whitespace()) {
                    return Err(invalid(format!("columns: bad column name '{part}'")));
                }
                items.push(ColumnItem::Source(name));
            }
        }
    }
    Ok(items)
}

/// Position of the `=` of `name = expr` (not `==`, `<=`, `>=`, `!=`, and not inside quotes).
fn top_level_assignment(part: &str) -> Option<usize> {
    let bytes = part.as_bytes();
    let mut quote = None;
    for (i, &b) in bytes.iter().enumerate() {
        match quote {
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None => match b {
                b'\'' | b'"' => quote = Some(b),
                b'(' => return None,
                b'=' => {
                    let prev = if i > 0 { bytes[i - 1] } else { 0 };
                    let next = bytes.get(i + 1).copied().unwrap_or(0);
                    if !matches!(prev, b'<' | b'>' | b'!' | b'=') && next != b'=' {
                        return Some(i);
                    }
                }
                _ => {}
            },
        }
    }
    None
}

fn clean_name(s: &str) -> String {
    s.trim().trim_matches('`').to_lowercase()
}

/// Doris's rule for labels: 1 to 128 characters of `[-_A-Za-z0-9:]`.
fn valid_label(label: &str) -> Result<String> {
    let ok = label.len() <= 128
        && label
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b':'));
    if ok {
        Ok(label.to_string())
    } else {
        Err(BasaltError::InvalidData(format!(
            "Label format error. regex: ^[-_A-Za-z0-9:]{{1,128}}$, label: {label}"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(h: &[(&str, &str)]) -> Result<LoadOptions> {
        LoadOptions::from_headers(h.iter().copied())
    }

    #[test]
    fn separators_and_defaults() {
        let o = opts(&[]).unwrap();
        assert_eq!(o.column_separator, b"\t");
        assert_eq!(o.format, LoadFormat::Csv);
        let o = opts(&[("column_separator", "\\x01"), ("line_delimiter", "\\n")]).unwrap();
        assert_eq!(o.column_separator, vec![1u8]);
        assert_eq!(o.line_delimiter, b"\n");
        let o = opts(&[("Column_Separator", "||")]).unwrap();
        assert_eq!(o.column_separator, b"||");
        assert!(opts(&[("column_separator", "\\x1")]).is_err());
        assert!(opts(&[("max_filter_ratio", "1.5")]).is_err());
        assert!(opts(&[("format", "orcx")]).is_err());
        assert!(opts(&[("merge_type", "MERGE")]).is_err());
        assert!(opts(&[("compress_type", "lzo")]).is_err());
    }

    #[test]
    fn doris_headers_that_would_change_the_load_are_refused() {
        for (name, value) in [
            ("two_phase_commit", "true"),
            ("partial_columns", "true"),
            ("unique_key_update_mode", "UPDATE_FIXED_COLUMNS"),
            ("function_column.sequence_col", "ts"),
            ("hidden_columns", "__DORIS_DELETE_SIGN__"),
            ("timezone", "Asia/Shanghai"),
            ("group_commit", "fast"),
            ("exec_mem_limit", "lots"),
            ("fuzzy_parse", "maybe"),
        ] {
            let e = opts(&[(name, value)]).unwrap_err().to_string();
            assert!(e.contains(name), "{name}: {e}");
        }
        // Defaults and tuning hints are accepted; headers that are not Doris's are ignored.
        for (name, value) in [
            ("two_phase_commit", "false"),
            ("partial_columns", "false"),
            ("timezone", "UTC"),
            ("group_commit", "sync_mode"),
            ("exec_mem_limit", "2147483648"),
            ("fuzzy_parse", "true"),
            ("X-Request-Id", "abc"),
            ("User-Agent", "curl/8"),
        ] {
            assert!(opts(&[(name, value)]).is_ok(), "{name}: {value}");
        }
    }

    #[test]
    fn columns_with_expressions() {
        let o = opts(&[(
            "columns",
            "k1, `K2`, tmp, v = tmp * 2, s = concat(k1, ',', k2), b = k1 >= 3",
        )])
        .unwrap();
        let cols = o.columns.unwrap();
        assert_eq!(cols[0], ColumnItem::Source("k1".into()));
        assert_eq!(cols[1], ColumnItem::Source("k2".into()));
        assert_eq!(
            cols[3],
            ColumnItem::Derived {
                name: "v".into(),
                expr: "tmp * 2".into()
            }
        );
        assert_eq!(
            cols[4],
            ColumnItem::Derived {
                name: "s".into(),
                expr: "concat(k1, ',', k2)".into()
            }
        );
        assert_eq!(
            cols[5],
            ColumnItem::Derived {
                name: "b".into(),
                expr: "k1 >= 3".into()
            }
        );
        assert!(opts(&[("columns", "a,,b")]).is_err());
    }
}
