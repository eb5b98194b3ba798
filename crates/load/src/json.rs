//! JSON for Stream Load: one object per line (`read_json_by_line`) or a whole document (an
//! object, or an array of objects with `strip_outer_array`), `json_root` to pick the rows'
//! parent, and `jsonpaths` to pick each column's value. Values become string columns that the
//! load then converts like CSV fields.

use super::csv::SplitChunk;
use super::rejects::Rejects;
use basalt_common::{BasaltError, Result};
use datafusion::arrow::array::{ArrayRef, StringBuilder};
use serde_json::Value;
use std::sync::Arc;

#[derive(Debug, Clone, PartialEq)]
enum Step {
    Key(String),
    Index(usize),
}

/// A JSON path as Doris accepts it: `$.a.b`, `$.a[0]`, `$['a']`, `$`.
#[derive(Debug, Clone, PartialEq)]
pub struct JsonPath {
    steps: Vec<Step>,
}

impl JsonPath {
    pub fn parse(text: &str) -> Result<JsonPath> {
        let bad = || BasaltError::InvalidData(format!("invalid json path '{text}'"));
        let t = text.trim();
        let rest = t.strip_prefix('$').ok_or_else(bad)?;
        let b = rest.as_bytes();
        let mut steps = Vec::new();
        let mut i = 0;
        while i < b.len() {
            match b[i] {
                b'.' => {
                    let start = i + 1;
                    let mut j = start;
                    while j < b.len() && b[j] != b'.' && b[j] != b'[' {
                        j += 1;
                    }
                    if j == start {
                        return Err(bad());
                    }
                    steps.push(Step::Key(rest[start..j].to_string()));
                    i = j;
                }
                b'[' => {
                    let close = rest[i..].find(']').map(|p| p + i).ok_or_else(bad)?;
                    let inner = rest[i + 1..close].trim();
                    if let Some(q) = inner
                        .strip_prefix('\'')
                        .and_then(|s| s.strip_suffix('\''))
                        .or_else(|| inner.strip_prefix('"').and_then(|s| s.strip_suffix('"')))
                    {
                        steps.push(Step::Key(q.to_string()));
                    } else {
                        steps.push(Step::Index(inner.parse().map_err(|_| bad())?));
                    }
                    i = close + 1;
                }
                _ => return Err(bad()),
            }
        }
        Ok(JsonPath { steps })
    }

    pub fn get<'a>(&self, mut v: &'a Value) -> Option<&'a Value> {
        for s in &self.steps {
            v = match (s, v) {
                (Step::Key(k), Value::Object(m)) => lookup(m, k)?,
                (Step::Index(i), Value::Array(a)) => a.get(*i)?,
                _ => return None,
            };
        }
        Some(v)
    }
}

/// Object member by name: exact first, then ignoring ASCII case (column names are
/// case-insensitive).
fn lookup<'a>(m: &'a serde_json::Map<String, Value>, key: &str) -> Option<&'a Value> {
    m.get(key).or_else(|| {
        m.iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(key))
            .map(|(_, v)| v)
    })
}

/// Turns JSON rows into string columns named `names`.
#[derive(Debug, Clone)]
pub struct JsonReader {
    names: Vec<String>,
    paths: Option<Vec<JsonPath>>,
    root: Option<JsonPath>,
    strip_outer_array: bool,
}

impl JsonReader {
    pub fn new(
        names: Vec<String>,
        jsonpaths: Option<&[String]>,
        json_root: Option<&str>,
        strip_outer_array: bool,
    ) -> Result<JsonReader> {
        let paths = match jsonpaths {
            Some(p) => {
                if p.len() != names.len() {
                    return Err(BasaltError::InvalidData(format!(
                        "jsonpaths has {} paths but there are {} columns",
                        p.len(),
                        names.len()
                    )));
                }
                Some(
                    p.iter()
                        .map(|s| JsonPath::parse(s))
                        .collect::<Result<_>>()?,
                )
            }
            None => None,
        };
        Ok(JsonReader {
            names,
            paths,
            root: json_root.map(JsonPath::parse).transpose()?,
            strip_outer_array,
        })
    }

    /// Parses `data`: each line a JSON document when `by_line`, else one document.
    pub fn split(&self, data: &[u8], by_line: bool) -> SplitChunk {
        let mut out = Columns::new(self.names.len());
        let mut rejects = Rejects::default();
        if by_line {
            for line in data.split(|b| *b == b'\n') {
                let line = line.strip_suffix(b"\r").unwrap_or(line);
                if line.iter().all(|b| b.is_ascii_whitespace()) {
                    continue;
                }
                match serde_json::from_slice::<Value>(line) {
                    Ok(v) => self.add_document(v, &mut out, &mut rejects),
                    Err(e) => rejects.add(
                        || String::from_utf8_lossy(line).into_owned(),
                        || format!("invalid JSON: {e}"),
                    ),
                }
            }
        } else if !data.iter().all(|b| b.is_ascii_whitespace()) {
            match serde_json::from_slice::<Value>(data) {
                Ok(v) => self.add_document(v, &mut out, &mut rejects),
                Err(e) => rejects.add(
                    || String::from_utf8_lossy(&data[..data.len().min(256)]).into_owned(),
                    || format!("invalid JSON: {e}"),
                ),
            }
        }
        SplitChunk {
            columns: out.finish(),
            row_lines: Vec::new(),
            rejects,
        }
    }

    fn add_document(&self, doc: Value, out: &mut Columns, rejects: &mut Rejects) {
        let doc = match &self.root {
            Some(root) => match root.get(&doc) {
                Some(v) => v.clone(),
                None => {
                    rejects.add(|| doc.to_string(), || "json_root not found".into());
                    return;
                }
            },
            None => doc,
        };
        match doc {
            Value::Array(items) if self.strip_outer_array => {
                for item in items {
                    self.add_row(item, out, rejects);
                }
            }
            Value::Array(_) => rejects.add(
                || doc.to_string(),
                || "JSON data is an array: set strip_outer_array to true".into(),
            ),
            other => self.add_row(other, out, rejects),
        }
    }

    fn add_row(&self, row: Value, out: &mut Columns, rejects: &mut Rejects) {
        if self.paths.is_none() && !row.is_object() {
            rejects.add(|| row.to_string(), || "JSON row is not an object".into());
            return;
        }
        for (i, name) in self.names.iter().enumerate() {
            let v = match (&self.paths, &row) {
                (Some(paths), _) => paths[i].get(&row),
                (None, Value::Object(m)) => lookup(m, name),
                _ => None,
            };
            out.push(i, v);
        }
        out.rows += 1;
    }
}

struct Columns {
    builders: Vec<StringBuilder>,
    rows: usize,
}

impl Columns {
    fn new(n: usize) -> Columns {
        Columns {
            builders: (0..n).map(|_| StringBuilder::new()).collect(),
            rows: 0,
        }
    }

    fn push(&mut self, col: usize, v: Option<&Value>) {
        let b = &mut self.builders[col];
        match v {
            None | Some(Value::Null) => b.append_null(),
            Some(Value::String(s)) => b.append_value(s),
            Some(Value::Bool(x)) => b.append_value(if *x { "true" } else { "false" }),
            Some(Value::Number(n)) => b.append_value(n.to_string()),
            Some(other) => b.append_value(other.to_string()),
        }
    }

    fn finish(self) -> Vec<ArrayRef> {
        self.builders
            .into_iter()
            .map(|mut b| Arc::new(b.finish()) as ArrayRef)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::AsArray;

    fn strings(c: &SplitChunk, i: usize) -> Vec<Option<String>> {
        c.columns[i]
            .as_string::<i32>()
            .iter()
            .map(|v| v.map(str::to_string))
            .collect()
    }

    #[test]
    fn paths() {
        let v: Value = serde_json::from_str(r#"{"a":{"b":[1,{"c":"x"}]},"K":2}"#).unwrap();
        assert_eq!(JsonPath::parse("$.a.b[1].c").unwrap().get(&v).unwrap(), "x");
        assert_eq!(JsonPath::parse("$['a'].b[0]").unwrap().get(&v).unwrap(), 1);
        assert_eq!(JsonPath::parse("$.k").unwrap().get(&v).unwrap(), 2);
        assert!(JsonPath::parse("a.b").is_err());
        assert!(JsonPath::parse("$.").is_err());
    }

    #[test]
    fn lines_arrays_and_roots() {
        let r = JsonReader::new(vec!["id".into(), "name".into()], None, None, false).unwrap();
        let c = r.split(b"{\"id\":1,\"name\":\"a\"}\n{\"id\":2}\nnot json\n", true);
        assert_eq!(strings(&c, 0), vec![Some("1".into()), Some("2".into())]);
        assert_eq!(strings(&c, 1), vec![Some("a".into()), None]);
        assert_eq!(c.rejects.count, 1);

        let r = JsonReader::new(vec!["id".into()], None, Some("$.data"), true).unwrap();
        let c = r.split(br#"{"data":[{"id":1},{"id":"x"},5]}"#, false);
        assert_eq!(strings(&c, 0), vec![Some("1".into()), Some("x".into())]);
        assert_eq!(c.rejects.count, 1);

        let r = JsonReader::new(vec!["id".into()], None, None, false).unwrap();
        let c = r.split(br#"[{"id":1}]"#, false);
        assert_eq!(c.rejects.count, 1);

        let paths = vec!["$.x.y".to_string()];
        let r = JsonReader::new(vec!["v".into()], Some(&paths), None, false).unwrap();
        let c = r.split(br#"{"x":{"y":{"z":true}}}"#, false);
        assert_eq!(strings(&c, 0), vec![Some(r#"{"z":true}"#.into())]);
    }
}
