//! The JSON scalar functions, one [`JsonFunction`] per name: arguments are read row by row
//! (documents and paths as text, constructor values by their SQL type) and each row gives one
//! cell of the function's result type.

use super::edits;
use super::node::{BinaryNode, JsonNode};
use super::path::{member_path, JsonPath, LastLeg};
use crate::util::{arguments, output};
use basalt_common::is_json_field;
use basalt_common::json_binary::{self, Root};
use basalt_common::types::{EXTENSION_NAME_KEY, JSON_EXTENSION_NAME};
use datafusion::arrow::array::{
    new_null_array, Array, ArrayRef, AsArray, BooleanBuilder, Float64Builder, Int32Builder,
    Int64Builder, StringBuilder,
};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::{exec_err, plan_err, Result, ScalarValue};
use datafusion::logical_expr::{
    ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
    TypeSignature, Volatility,
};
use serde_json::Value;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    Extract,
    Unquote,
    Valid,
    Type,
    Length,
    Keys,
    Contains,
    ContainsPath,
    Array,
    /// Doris's json_array_ignore_null: json_array without the NULL arguments.
    ArrayIgnoreNull,
    Object,
    Quote,
    Parse,
    /// Doris's json_parse_error_to_null / _to_value: an invalid text is NULL, or the default
    /// document (`{}` when not given).
    ParseLenient {
        to_value: bool,
    },
    ExistsPath,
    /// Doris's get_json_* (a bad document is NULL) and json_extract_* (an error).
    Typed {
        lenient: bool,
        out: Out,
    },
    ExtractIsNull,
    Overlaps,
    MergePreserve,
    MergePatch,
    Depth,
    Remove,
    Replace,
    /// json_set (replace or insert) and json_insert (insert only): [`insert_value`].
    Set,
    Insert,
    ArrayAppend,
    ArrayInsert,
    Search,
}

/// The SQL type of a function's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Out {
    Json,
    Text,
    Int32,
    Int64,
    Double,
    Bool,
}

/// One result value.
enum Cell {
    Text(String),
    Int(i64),
    Double(f64),
    Bool(bool),
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct JsonFunction {
    name: &'static str,
    aliases: Vec<String>,
    kind: Kind,
    signature: Signature,
}

/// Every JSON function.
pub fn functions() -> Vec<ScalarUDF> {
    let typed = |lenient, out| Kind::Typed { lenient, out };
    let list: Vec<(&'static str, &[&str], Kind)> = vec![
        ("json_extract", &["jsonb_extract"], Kind::Extract),
        ("json_unquote", &[], Kind::Unquote),
        ("json_valid", &["jsonb_valid"], Kind::Valid),
        ("json_type", &["jsonb_type"], Kind::Type),
        ("json_length", &[], Kind::Length),
        ("json_keys", &["jsonb_keys"], Kind::Keys),
        ("json_contains", &[], Kind::Contains),
        ("json_contains_path", &[], Kind::ContainsPath),
        ("json_array", &[], Kind::Array),
        ("json_array_ignore_null", &[], Kind::ArrayIgnoreNull),
        ("json_object", &[], Kind::Object),
        ("json_quote", &[], Kind::Quote),
        (
            "json_parse",
            &[
                "jsonb_parse",
                "json_parse_nullable",
                "jsonb_parse_nullable",
                "json_parse_notnull",
                "jsonb_parse_notnull",
            ],
            Kind::Parse,
        ),
        (
            "json_parse_error_to_null",
            &[
                "jsonb_parse_error_to_null",
                "json_parse_nullable_error_to_null",
                "jsonb_parse_nullable_error_to_null",
            ],
            Kind::ParseLenient { to_value: false },
        ),
        (
            "json_parse_error_to_value",
            &[
                "jsonb_parse_error_to_value",
                "json_parse_nullable_error_to_value",
                "jsonb_parse_nullable_error_to_value",
                "json_parse_notnull_error_to_value",
                "jsonb_parse_notnull_error_to_value",
            ],
            Kind::ParseLenient { to_value: true },
        ),
        ("json_exists_path", &["jsonb_exists_path"], Kind::ExistsPath),
        ("get_json_string", &[], typed(true, Out::Text)),
        ("get_json_int", &[], typed(true, Out::Int32)),
        ("get_json_bigint", &[], typed(true, Out::Int64)),
        ("get_json_double", &[], typed(true, Out::Double)),
        (
            "json_extract_string",
            &["jsonb_extract_string"],
            typed(false, Out::Text),
        ),
        (
            "json_extract_int",
            &["jsonb_extract_int"],
            typed(false, Out::Int32),
        ),
        (
            "json_extract_bigint",
            &["jsonb_extract_bigint"],
            typed(false, Out::Int64),
        ),
        (
            "json_extract_double",
            &["jsonb_extract_double"],
            typed(false, Out::Double),
        ),
        (
            "json_extract_bool",
            &["jsonb_extract_bool"],
            typed(false, Out::Bool),
        ),
        (
            "json_extract_isnull",
            &["jsonb_extract_isnull"],
            Kind::ExtractIsNull,
        ),
        ("json_overlaps", &[], Kind::Overlaps),
        ("json_merge_preserve", &["json_merge"], Kind::MergePreserve),
        ("json_merge_patch", &[], Kind::MergePatch),
        ("json_depth", &[], Kind::Depth),
        ("json_remove", &[], Kind::Remove),
        ("json_replace", &[], Kind::Replace),
        ("json_set", &["jsonb_set"], Kind::Set),
        ("json_insert", &["jsonb_insert"], Kind::Insert),
        ("json_array_append", &[], Kind::ArrayAppend),
        ("json_array_insert", &[], Kind::ArrayInsert),
        ("json_search", &[], Kind::Search),
    ];
    list.into_iter()
        .map(|(name, aliases, kind)| {
            ScalarUDF::new_from_impl(JsonFunction {
                name,
                aliases: aliases.iter().map(|a| a.to_string()).collect(),
                kind,
                signature: Signature::one_of(
                    vec![TypeSignature::VariadicAny, TypeSignature::Nullary],
                    Volatility::Immutable,
                ),
            })
        })
        .collect()
}

/// Whether `udf` is a JSON function that reads only what its paths name in its first argument
/// (which may then be a binary JSON document: [`basalt_common::json_binary`]).
pub fn reads_json_paths(udf: &ScalarUDF) -> bool {
    udf.inner()
        .downcast_ref::<JsonFunction>()
        .is_some_and(|f| f.kind.reads_paths())
}

impl Kind {
    fn out(self) -> Out {
        match self {
            Kind::Extract
            | Kind::Keys
            | Kind::Array
            | Kind::ArrayIgnoreNull
            | Kind::Object
            | Kind::Quote
            | Kind::Parse
            | Kind::ParseLenient { .. }
            | Kind::MergePreserve
            | Kind::MergePatch
            | Kind::Remove
            | Kind::Replace
            | Kind::Set
            | Kind::Insert
            | Kind::ArrayAppend
            | Kind::ArrayInsert
            | Kind::Search => Out::Json,
            Kind::Overlaps | Kind::Depth => Out::Int32,
            Kind::Unquote | Kind::Type => Out::Text,
            Kind::Valid | Kind::Contains | Kind::ContainsPath => Out::Int32,
            Kind::Length => Out::Int64,
            Kind::ExistsPath | Kind::ExtractIsNull => Out::Bool,
            Kind::Typed { out, .. } => out,
        }
    }

    /// (fewest, most) arguments.
    fn arity(self) -> (usize, usize) {
        match self {
            Kind::Extract => (2, usize::MAX),
            Kind::Unquote | Kind::Valid | Kind::Quote | Kind::Parse => (1, 1),
            // MySQL's JSON_TYPE(doc); Doris's json_type(doc, path).
            Kind::Type => (1, 2),
            Kind::ParseLenient { to_value } => (1, 1 + to_value as usize),
            Kind::Length | Kind::Keys => (1, 2),
            Kind::Contains => (2, 3),
            Kind::ContainsPath => (3, usize::MAX),
            Kind::Array | Kind::ArrayIgnoreNull | Kind::Object => (0, usize::MAX),
            Kind::ExistsPath | Kind::Typed { .. } | Kind::ExtractIsNull | Kind::Overlaps => (2, 2),
            Kind::MergePreserve | Kind::MergePatch | Kind::Remove => (2, usize::MAX),
            Kind::Depth => (1, 1),
            Kind::Replace
            | Kind::Set
            | Kind::Insert
            | Kind::ArrayAppend
            | Kind::ArrayInsert
            | Kind::Search => (3, usize::MAX),
        }
    }

    /// Functions that read only the values their paths name in the document (argument 0): a
    /// binary document is walked along the paths, never decoded whole.
    fn reads_paths(self) -> bool {
        matches!(
            self,
            Kind::Extract
                | Kind::ContainsPath
                | Kind::ExistsPath
                | Kind::ExtractIsNull
                | Kind::Typed { .. }
                | Kind::Type
                | Kind::Length
                | Kind::Keys
                | Kind::Contains
        )
    }

    /// Whether argument `i` (after the document) is not a path: json_contains_path's
    /// one-or-all, json_contains' candidate.
    fn not_a_path(self, i: usize) -> bool {
        i == 1 && matches!(self, Kind::ContainsPath | Kind::Contains)
    }

    /// Functions taking (path, value) pairs after the document.
    fn takes_pairs(self) -> bool {
        matches!(
            self,
            Kind::Replace | Kind::Set | Kind::Insert | Kind::ArrayAppend | Kind::ArrayInsert
        )
    }

    /// Whether argument `i` may be NULL without the result being NULL: a value to put in the
    /// document (it is JSON null), JSON_SEARCH's escape character (the default `\`).
    fn null_allowed(self, i: usize) -> bool {
        (self.takes_pairs() && i >= 2 && i.is_multiple_of(2))
            || (self == Kind::Search && i == 3)
            || (matches!(self, Kind::ParseLenient { .. }) && i == 1)
    }
}

pub(super) fn json_field(name: &str) -> Field {
    Field::new(name, DataType::Utf8, true).with_metadata(HashMap::from([(
        EXTENSION_NAME_KEY.to_string(),
        JSON_EXTENSION_NAME.to_string(),
    )]))
}

impl ScalarUDFImpl for JsonFunction {
    fn name(&self) -> &str {
        self.name
    }

    fn aliases(&self) -> &[String] {
        &self.aliases
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _types: &[DataType]) -> Result<DataType> {
        Ok(match self.kind.out() {
            Out::Json | Out::Text => DataType::Utf8,
            Out::Int32 => DataType::Int32,
            Out::Int64 => DataType::Int64,
            Out::Double => DataType::Float64,
            Out::Bool => DataType::Boolean,
        })
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let (min, max) = self.kind.arity();
        let n = args.arg_fields.len();
        if n < min || n > max {
            return plan_err!(
                "Incorrect parameter count in the call to native function '{}'",
                self.name
            );
        }
        if (self.kind == Kind::Object && n % 2 == 1)
            || (self.kind.takes_pairs() && n.is_multiple_of(2))
        {
            return plan_err!(
                "Incorrect parameter count in the call to native function '{}'",
                self.name
            );
        }
        for f in args.arg_fields {
            if f.data_type().is_nested() {
                return plan_err!("{} does not take {}", self.name, f.data_type());
            }
        }
        let types: Vec<DataType> = args
            .arg_fields
            .iter()
            .map(|f| f.data_type().clone())
            .collect();
        Ok(Arc::new(match self.kind.out() {
            Out::Json => json_field(self.name),
            _ => Field::new(self.name, self.return_type(&types)?, true),
        }))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        if self.kind.reads_paths() {
            // Constant arguments (the paths, usually) stay one value each.
            let scalars: Vec<bool> = args
                .args
                .iter()
                .map(|a| matches!(a, ColumnarValue::Scalar(_)))
                .collect();
            let arrays = args
                .args
                .iter()
                .map(|a| a.to_array(1))
                .collect::<Result<Vec<_>>>()?;
            let rows = if scalars.iter().all(|s| *s) {
                1
            } else {
                args.number_rows
            };
            let out = self.evaluate(&arrays, &args.arg_fields, rows, &scalars)?;
            return output(out, scalars.iter().all(|s| *s));
        }
        let (arrays, scalar) = arguments(&args)?;
        let rows = arrays.first().map_or(args.number_rows, |a| a.len());
        let one_each = vec![false; arrays.len()];
        output(
            self.evaluate(&arrays, &args.arg_fields, rows, &one_each)?,
            scalar,
        )
    }
}

/// The paths of one batch, parsed once each (a path is usually the same on every row).
#[derive(Default)]
struct PathCache {
    parsed: HashMap<String, Rc<JsonPath>>,
    /// The path parsed last, checked before the map.
    last: Option<(String, Rc<JsonPath>)>,
}

impl PathCache {
    /// At most this many distinct paths are kept per batch.
    const LIMIT: usize = 256;

    fn parse(&mut self, text: &str, function: &str) -> Result<Rc<JsonPath>> {
        if let Some((last, p)) = &self.last {
            if last == text {
                return Ok(Rc::clone(p));
            }
        }
        if let Some(p) = self.parsed.get(text) {
            let p = Rc::clone(p);
            self.last = Some((text.to_string(), Rc::clone(&p)));
            return Ok(p);
        }
        let p = Rc::new(JsonPath::parse(text).or_else(|e| exec_err!("{e} (in {function})"))?);
        if self.parsed.len() >= Self::LIMIT {
            self.parsed.clear();
        }
        self.parsed.insert(text.to_string(), Rc::clone(&p));
        self.last = Some((text.to_string(), Rc::clone(&p)));
        Ok(p)
    }
}

/// The arguments of every row: as text (None for NULL), except a binary JSON document in
/// argument 0 of a function that [reads paths](Kind::reads_paths), which stays binary.
struct TextArgs {
    columns: Vec<ArrayRef>,
    /// Arguments given as one value for every row (arrays of one).
    scalars: Vec<bool>,
    /// Argument 0's binary documents, when it has them and they are read as such.
    documents: Option<ArrayRef>,
}

impl TextArgs {
    fn new(
        arrays: &[ArrayRef],
        fields: &[FieldRef],
        kind: Kind,
        scalars: &[bool],
    ) -> Result<TextArgs> {
        let binary = |i: usize| {
            fields
                .get(i)
                .is_some_and(|f| json_binary::is_binary_json(f))
        };
        let documents = (kind.reads_paths() && binary(0)).then(|| arrays[0].clone());
        let columns = arrays
            .iter()
            .enumerate()
            .map(|(i, a)| match i {
                0 if documents.is_some() => Ok(new_null_array(&DataType::Utf8, a.len())),
                _ if binary(i) => binary_as_text(a),
                _ => cast(a, &DataType::Utf8).map_err(Into::into),
            })
            .collect::<Result<_>>()?;
        Ok(TextArgs {
            columns,
            scalars: scalars.to_vec(),
            documents,
        })
    }

    /// Where argument `arg`'s value for `row` is in its array.
    fn at(&self, arg: usize, row: usize) -> usize {
        if self.scalars.get(arg) == Some(&true) {
            0
        } else {
            row
        }
    }

    fn get(&self, arg: usize, row: usize) -> Option<&str> {
        let c = self.columns[arg].as_string::<i32>();
        let at = self.at(arg, row);
        c.is_valid(at).then(|| c.value(at))
    }

    fn is_null(&self, arg: usize, row: usize) -> bool {
        let at = self.at(arg, row);
        match &self.documents {
            Some(d) if arg == 0 => d.is_null(at),
            _ => self.columns[arg].is_null(at),
        }
    }

    /// Argument 0 of `row` as a binary document, when it is one.
    fn document(&self, row: usize) -> Option<&[u8]> {
        let d = self.documents.as_ref()?.as_binary::<i32>();
        let at = self.at(0, row);
        d.is_valid(at).then(|| d.value(at))
    }
}

/// Binary JSON documents as their text.
fn binary_as_text(array: &ArrayRef) -> Result<ArrayRef> {
    json_binary::text_column(array.as_binary::<i32>())
        .map(|texts| Arc::new(texts) as ArrayRef)
        .map_err(binary_error)
}

/// A binary document that cannot be read (a damaged file).
fn binary_error(e: String) -> datafusion::common::DataFusionError {
    datafusion::common::DataFusionError::Execution(format!("a binary JSON value: {e}"))
}

impl JsonFunction {
    /// The results of `rows` rows; `scalars[i]`: argument `i` is one value for every row.
    fn evaluate(
        &self,
        arrays: &[ArrayRef],
        fields: &[FieldRef],
        rows: usize,
        scalars: &[bool],
    ) -> Result<ArrayRef> {
        let constructor = matches!(
            self.kind,
            Kind::Array | Kind::ArrayIgnoreNull | Kind::Object
        );
        let text = if constructor {
            None
        } else {
            Some(TextArgs::new(arrays, fields, self.kind, scalars)?)
        };
        let mut paths = PathCache::default();
        let fixed_paths = match &text {
            Some(text) if self.kind.reads_paths() => self.constant_paths(text, &mut paths),
            _ => None,
        };
        let mut cells = Vec::with_capacity(rows);
        for row in 0..rows {
            let cell = match &text {
                Some(text) => self.row(text, (arrays, fields), row, (&mut paths, &fixed_paths))?,
                None => Some(Cell::Text(self.construct(arrays, fields, row)?.to_string())),
            };
            cells.push(cell);
        }
        build(self.kind.out(), cells)
    }

    /// The path arguments of a function that reads paths, parsed once, when each is one
    /// valid path for every row.
    fn constant_paths(&self, args: &TextArgs, cache: &mut PathCache) -> Option<Vec<Rc<JsonPath>>> {
        let mut paths = Vec::new();
        for i in (1..args.columns.len()).filter(|&i| !self.kind.not_a_path(i)) {
            match (args.scalars.get(i), args.get(i, 0)) {
                (Some(true), Some(text)) => match cache.parse(text, self.name) {
                    Ok(p) => paths.push(p),
                    // A bad path is an error only on a row that reads it (not a NULL one).
                    Err(_) => return None,
                },
                _ => return None,
            }
        }
        Some(paths)
    }

    /// MySQL's functions: a document that is not JSON is an error naming the argument.
    fn document(&self, text: &str, arg: usize) -> Result<Value> {
        serde_json::from_str(text).or_else(|e| {
            exec_err!(
                "Invalid JSON text in argument {} to function {}: \"{e}\"",
                arg + 1,
                self.name
            )
        })
    }

    fn row(
        &self,
        args: &TextArgs,
        (arrays, fields): (&[ArrayRef], &[FieldRef]),
        row: usize,
        (paths, fixed_paths): (&mut PathCache, &Option<Vec<Rc<JsonPath>>>),
    ) -> Result<Option<Cell>> {
        let n = arrays.len();
        let arg = |i: usize| args.get(i, row);
        let mut path = |text: &str| paths.parse(text, self.name);
        // Any NULL argument gives NULL (MySQL and Doris alike for these functions), except
        // the values some put into the document.
        if (0..n).any(|i| args.is_null(i, row) && !self.kind.null_allowed(i)) {
            return Ok(None);
        }
        if self.kind.reads_paths() {
            let per_row;
            let paths: &[Rc<JsonPath>] = match &fixed_paths {
                Some(fixed) => fixed,
                None => {
                    per_row = (1..n)
                        .filter(|&i| !self.kind.not_a_path(i))
                        .map(|i| path(arg(i).unwrap_or_default()))
                        .collect::<Result<Vec<_>>>()?;
                    &per_row
                }
            };
            let second = (n > 1).then(|| arg(1)).flatten();
            return match args.document(row) {
                Some(bytes) => match json_binary::root(bytes).map_err(binary_error)? {
                    Root::Value(v) => self.read_paths(BinaryNode(v), paths, second),
                    Root::Text(text) => self.read_paths(&self.document(text, 0)?, paths, second),
                },
                None => {
                    let text = arg(0).unwrap_or_default();
                    let doc = match (self.kind, serde_json::from_str::<Value>(text)) {
                        (_, Ok(doc)) => doc,
                        (Kind::Typed { lenient: true, .. }, Err(_)) => return Ok(None),
                        _ => self.document(text, 0)?,
                    };
                    self.read_paths(&doc, paths, second)
                }
            };
        }
        let value = |i: usize| -> Result<Value> {
            let scalar = ScalarValue::try_from_array(&arrays[i], row)?;
            sql_value(&scalar, fields.get(i).is_some_and(|f| is_json_field(f)))
        };
        let text = |i: usize| arg(i).unwrap_or_default();
        Ok(match self.kind {
            Kind::Unquote => Some(Cell::Text(unquote(text(0)))),
            Kind::Valid => Some(Cell::Int(
                serde_json::from_str::<serde::de::IgnoredAny>(text(0)).is_ok() as i64,
            )),
            Kind::Quote => Some(Cell::Text(Value::String(text(0).to_string()).to_string())),
            Kind::Parse => Some(Cell::Text(self.document(text(0), 0)?.to_string())),
            Kind::ParseLenient { to_value } => match serde_json::from_str::<Value>(text(0)) {
                Ok(doc) => Some(Cell::Text(doc.to_string())),
                Err(_) if !to_value => None,
                Err(_) if n < 2 => Some(Cell::Text("{}".to_string())),
                Err(_) => match arg(1) {
                    None => None,
                    Some(default) => Some(Cell::Text(self.document(default, 1)?.to_string())),
                },
            },
            Kind::Overlaps => {
                let a = self.document(text(0), 0)?;
                let b = self.document(text(1), 1)?;
                Some(Cell::Int(edits::overlaps(&a, &b) as i64))
            }
            Kind::Depth => Some(Cell::Int(edits::depth(&self.document(text(0), 0)?))),
            Kind::MergePreserve | Kind::MergePatch => {
                let mut merged = self.document(text(0), 0)?;
                for i in 1..n {
                    let next = self.document(text(i), i)?;
                    merged = if self.kind == Kind::MergePatch {
                        edits::merge_patch(merged, next)
                    } else {
                        edits::merge_preserve(merged, next)
                    };
                }
                Some(Cell::Text(merged.to_string()))
            }
            Kind::Remove => {
                let mut doc = self.document(text(0), 0)?;
                for i in 1..n {
                    let p = self.place(&*path(text(i))?, text(i))?;
                    remove(&mut doc, &p);
                }
                Some(Cell::Text(doc.to_string()))
            }
            Kind::Replace | Kind::Set | Kind::Insert | Kind::ArrayAppend | Kind::ArrayInsert => {
                let mut doc = self.document(text(0), 0)?;
                for pair in (1..n).step_by(2) {
                    let p = path(text(pair))?;
                    if p.has_wildcards() {
                        return self.wildcard_error();
                    }
                    let v = value(pair + 1)?;
                    match self.kind {
                        Kind::Replace | Kind::Set | Kind::Insert => match p.get_mut(&mut doc) {
                            Some(target) => {
                                if self.kind != Kind::Insert {
                                    *target = v;
                                }
                            }
                            None => {
                                if self.kind != Kind::Replace {
                                    insert_value(&mut doc, &p, v);
                                }
                            }
                        },
                        Kind::ArrayAppend => {
                            if let Some(target) = p.get_mut(&mut doc) {
                                match target {
                                    Value::Array(items) => items.push(v),
                                    other => {
                                        let old = std::mem::take(other);
                                        *other = Value::Array(vec![old, v]);
                                    }
                                }
                            }
                        }
                        _ => {
                            let Some((parent, LastLeg::Element { from_end, offset })) =
                                p.split_last()
                            else {
                                return exec_err!(
                                    "A path expression is not a path to a cell in an array (in {})",
                                    self.name
                                );
                            };
                            if let Some(Value::Array(items)) = parent.get_mut(&mut doc) {
                                // `[last]` inserts after the last element (MariaDB).
                                let at = if from_end {
                                    items.len().saturating_sub(offset)
                                } else {
                                    offset.min(items.len())
                                };
                                items.insert(at, v);
                            }
                        }
                    }
                }
                Some(Cell::Text(doc.to_string()))
            }
            Kind::Search => {
                let doc = self.document(text(0), 0)?;
                let all = match text(1).to_ascii_lowercase().as_str() {
                    "all" => true,
                    "one" => false,
                    _ => return exec_err!("The oneOrAll argument to json_search may take these values: 'one' or 'all'."),
                };
                let pattern = text(2);
                let escape = match (n > 3).then(|| arg(3)).flatten() {
                    None | Some("") => '\\',
                    Some(e) if e.chars().count() == 1 => e.chars().next().unwrap_or('\\'),
                    Some(_) => return exec_err!("Incorrect arguments to ESCAPE (in json_search)"),
                };
                let scopes = if n > 4 {
                    (4..n).map(|i| path(text(i))).collect::<Result<Vec<_>>>()?
                } else {
                    vec![path("$")?]
                };
                let mut found: Vec<String> = Vec::new();
                for scope in &scopes {
                    for (at, v) in scope.select_located(&doc) {
                        search_strings(&at, v, pattern, escape, &mut found);
                    }
                }
                found.dedup();
                match found.len() {
                    0 => None,
                    1 => Some(Cell::Text(Value::String(found.remove(0)).to_string())),
                    _ if !all => Some(Cell::Text(Value::String(found.remove(0)).to_string())),
                    _ => Some(Cell::Text(
                        Value::Array(found.into_iter().map(Value::String).collect()).to_string(),
                    )),
                }
            }
            Kind::Array
            | Kind::ArrayIgnoreNull
            | Kind::Object
            | Kind::Extract
            | Kind::ContainsPath
            | Kind::ExistsPath
            | Kind::ExtractIsNull
            | Kind::Typed { .. }
            | Kind::Type
            | Kind::Length
            | Kind::Keys
            | Kind::Contains => None,
        })
    }

    /// The functions that read only what their paths name, over either form of document.
    /// `paths` are the path arguments; `second` is argument 1 as text (json_contains_path's
    /// one-or-all, json_contains' candidate).
    fn read_paths<N: JsonNode>(
        &self,
        doc: N,
        paths: &[Rc<JsonPath>],
        second: Option<&str>,
    ) -> Result<Option<Cell>> {
        let failed = |e: String| {
            datafusion::common::DataFusionError::Execution(format!("{}: {e}", self.name))
        };
        let text = |v: N| v.to_text().map_err(failed);
        Ok(match self.kind {
            Kind::Extract => {
                if let [only] = paths {
                    if !only.has_wildcards() {
                        return only
                            .get(doc)
                            .map(text)
                            .transpose()
                            .map(|t| t.map(Cell::Text));
                    }
                }
                let found = paths
                    .iter()
                    .flat_map(|p| p.select(doc))
                    .map(text)
                    .collect::<Result<Vec<_>>>()?;
                (!found.is_empty()).then(|| Cell::Text(format!("[{}]", found.join(","))))
            }
            Kind::ContainsPath => {
                let all = match second.unwrap_or_default().to_ascii_lowercase().as_str() {
                    "all" => true,
                    "one" => false,
                    _ => return exec_err!("The oneOrAll argument to json_contains_path may take these values: 'one' or 'all'."),
                };
                let mut found = paths.iter().map(|p| !p.select(doc).is_empty());
                Some(Cell::Int(if all {
                    found.all(|f| f)
                } else {
                    found.any(|f| f)
                } as i64))
            }
            Kind::ExistsPath => Some(Cell::Bool(paths.iter().all(|p| !p.select(doc).is_empty()))),
            Kind::ExtractIsNull => paths
                .first()
                .and_then(|p| p.get(doc))
                .map(|v| Cell::Bool(v.is_null())),
            Kind::Typed { out, .. } => match paths.first().and_then(|p| p.get(doc)) {
                Some(v) => typed(&v.to_value().map_err(failed)?, out),
                None => None,
            },
            Kind::Type => match paths.first() {
                None => Some(Cell::Text(doc.type_name().map_err(failed)?.into())),
                Some(p) => match p.get(doc) {
                    Some(v) => Some(Cell::Text(
                        doris_type_name(&v.to_value().map_err(failed)?).into(),
                    )),
                    None => None,
                },
            },
            Kind::Length | Kind::Keys | Kind::Contains => {
                // json_contains' candidate must be JSON even where the path names nothing.
                let candidate = match self.kind {
                    Kind::Contains => Some(self.document(second.unwrap_or_default(), 1)?),
                    _ => None,
                };
                // The value the optional path names (NULL when it names none).
                let target = match paths.first() {
                    Some(p) => match p.get(doc) {
                        Some(v) => v,
                        None => return Ok(None),
                    },
                    None => doc,
                };
                match self.kind {
                    Kind::Length => Some(Cell::Int(target.length() as i64)),
                    Kind::Keys => target
                        .keys()
                        .map(|keys| Cell::Text(Value::from(keys).to_string())),
                    _ => {
                        let target = target.to_value().map_err(failed)?;
                        candidate.map(|c| Cell::Int(contains(&target, &c) as i64))
                    }
                }
            }
            _ => None,
        })
    }

    /// A path naming one place that may be removed (no wildcards, not `$` itself).
    fn place(&self, p: &JsonPath, text: &str) -> Result<(JsonPath, LastLeg)> {
        if p.has_wildcards() {
            return self.wildcard_error();
        }
        match p.split_last() {
            Some(place) => Ok(place),
            None => exec_err!(
                "The path expression '{text}' is not allowed in this context (in {}).",
                self.name
            ),
        }
    }

    fn wildcard_error<T>(&self) -> Result<T> {
        exec_err!(
            "In this situation, path expressions may not contain the * and ** tokens (in {}).",
            self.name
        )
    }

    /// json_array / json_object of one row: values by their SQL type, JSON arguments nested.
    fn construct(&self, arrays: &[ArrayRef], fields: &[FieldRef], row: usize) -> Result<Value> {
        let value = |i: usize| -> Result<Value> {
            let scalar = ScalarValue::try_from_array(&arrays[i], row)?;
            sql_value(&scalar, fields.get(i).is_some_and(|f| is_json_field(f)))
        };
        if self.kind == Kind::Array {
            return Ok(Value::Array(
                (0..arrays.len()).map(value).collect::<Result<_>>()?,
            ));
        }
        if self.kind == Kind::ArrayIgnoreNull {
            return Ok(Value::Array(
                (0..arrays.len())
                    .filter(|&i| !arrays[i].logical_nulls().is_some_and(|n| n.is_null(row)))
                    .map(value)
                    .collect::<Result<_>>()?,
            ));
        }
        let mut map = serde_json::Map::new();
        for pair in (0..arrays.len()).step_by(2) {
            let key = match value(pair)? {
                Value::Null => {
                    return exec_err!("JSON documents may not contain NULL member names.")
                }
                Value::String(s) => s,
                other => other.to_string(),
            };
            map.insert(key, value(pair + 1)?);
        }
        Ok(Value::Object(map))
    }
}

/// Puts `v` where `path` names a place that holds nothing yet, as MySQL's JSON_SET and
/// JSON_INSERT do: a new member of an existing object, an element appended to an existing
/// array (an index past its end), or, for an index past a non-array value, that value wrapped
/// into an array with `v` after it. A path whose parent is missing changes nothing.
fn insert_value(doc: &mut Value, path: &JsonPath, v: Value) {
    let Some((parent, last)) = path.split_last() else {
        return;
    };
    match (parent.get_mut(doc), last) {
        (Some(Value::Object(m)), LastLeg::Member(name)) => {
            m.insert(name, v);
        }
        // Past the end appends; `[last-N]` before the start names nothing.
        (Some(Value::Array(items)), LastLeg::Element { from_end, offset })
            if !from_end || offset == 0 =>
        {
            items.push(v);
        }
        (Some(Value::Array(_)), LastLeg::Element { .. }) => {}
        (Some(other), LastLeg::Element { .. }) => {
            let old = std::mem::take(other);
            *other = Value::Array(vec![old, v]);
        }
        _ => {}
    }
}

/// Removes the value at `(parent, last)` from `doc`, if there is one.
fn remove(doc: &mut Value, (parent, last): &(JsonPath, LastLeg)) {
    match (parent.get_mut(doc), last) {
        (Some(Value::Object(m)), LastLeg::Member(name)) => {
            m.shift_remove(name);
        }
        (Some(Value::Array(items)), LastLeg::Element { from_end, offset }) => {
            if let Some(i) = LastLeg::index(*from_end, *offset, items.len()) {
                if i < items.len() {
                    items.remove(i);
                }
            }
        }
        _ => {}
    }
}

/// The paths of the strings at or inside `v` (itself at `at`) that match `pattern`.
fn search_strings(at: &str, v: &Value, pattern: &str, escape: char, out: &mut Vec<String>) {
    match v {
        Value::String(s) if edits::like(s, pattern, escape) && !out.iter().any(|p| p == at) => {
            out.push(at.to_string());
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                search_strings(&format!("{at}[{i}]"), item, pattern, escape, out);
            }
        }
        Value::Object(m) => {
            for (k, item) in m {
                search_strings(&member_path(at, k), item, pattern, escape, out);
            }
        }
        _ => {}
    }
}

/// A SQL value as a JSON value: numbers as numbers, booleans as booleans, JSON text nested,
/// everything else as its text.
pub(super) fn sql_value(v: &ScalarValue, is_json: bool) -> Result<Value> {
    if v.is_null() {
        return Ok(Value::Null);
    }
    Ok(match v {
        ScalarValue::Boolean(Some(b)) => Value::Bool(*b),
        ScalarValue::Int8(Some(x)) => (*x).into(),
        ScalarValue::Int16(Some(x)) => (*x).into(),
        ScalarValue::Int32(Some(x)) => (*x).into(),
        ScalarValue::Int64(Some(x)) => (*x).into(),
        ScalarValue::UInt8(Some(x)) => (*x).into(),
        ScalarValue::UInt16(Some(x)) => (*x).into(),
        ScalarValue::UInt32(Some(x)) => (*x).into(),
        ScalarValue::UInt64(Some(x)) => (*x).into(),
        ScalarValue::Float32(Some(x)) => {
            serde_json::Number::from_f64(f64::from(*x)).map_or(Value::Null, Value::Number)
        }
        ScalarValue::Float64(Some(x)) => {
            serde_json::Number::from_f64(*x).map_or(Value::Null, Value::Number)
        }
        ScalarValue::Decimal128(..) | ScalarValue::Decimal256(..) => {
            let text = v.to_string();
            serde_json::from_str(&text).unwrap_or(Value::String(text))
        }
        ScalarValue::Utf8(Some(s))
        | ScalarValue::Utf8View(Some(s))
        | ScalarValue::LargeUtf8(Some(s))
            if is_json =>
        {
            serde_json::from_str(s).or_else(|e| exec_err!("Invalid JSON text: \"{e}\""))?
        }
        ScalarValue::Utf8(Some(s))
        | ScalarValue::Utf8View(Some(s))
        | ScalarValue::LargeUtf8(Some(s)) => Value::String(s.clone()),
        other => {
            let text = cast(&other.to_array()?, &DataType::Utf8)?;
            Value::String(text.as_string::<i32>().value(0).to_string())
        }
    })
}

/// A JSON string's contents; other text unchanged (MySQL's JSON_UNQUOTE).
fn unquote(text: &str) -> String {
    if text.len() >= 2 && text.starts_with('"') && text.ends_with('"') {
        if let Ok(Value::String(s)) = serde_json::from_str::<Value>(text) {
            return s;
        }
    }
    text.to_string()
}

/// MySQL's JSON_CONTAINS: a scalar contains an equal scalar; an array contains a value that one
/// of its elements contains, or an array whose every element it contains; an object contains an
/// object whose every member it has with a contained value.
fn contains(target: &Value, candidate: &Value) -> bool {
    match (target, candidate) {
        (Value::Array(t), Value::Array(c)) => {
            c.iter().all(|cv| contains(target, cv) || t.contains(cv))
        }
        (Value::Array(t), c) => t.iter().any(|tv| contains(tv, c)),
        (Value::Object(t), Value::Object(c)) => c
            .iter()
            .all(|(k, cv)| t.get(k).is_some_and(|tv| contains(tv, cv))),
        (Value::Number(a), Value::Number(b)) => a.as_f64() == b.as_f64(),
        (a, b) => a == b,
    }
}

/// A JSON value as a Doris get_json_* / json_extract_* result: strings unquoted, numbers that
/// fit the type, anything else NULL (for text, other values as their JSON text).
fn typed(v: &Value, out: Out) -> Option<Cell> {
    match out {
        Out::Text | Out::Json => match v {
            Value::Null => None,
            Value::String(s) => Some(Cell::Text(s.clone())),
            other => Some(Cell::Text(other.to_string())),
        },
        Out::Int32 => v
            .as_i64()
            .filter(|n| i32::try_from(*n).is_ok())
            .map(Cell::Int),
        Out::Int64 => v.as_i64().map(Cell::Int),
        Out::Double => v.as_f64().map(Cell::Double),
        Out::Bool => v.as_bool().map(Cell::Bool),
    }
}

fn build(out: Out, cells: Vec<Option<Cell>>) -> Result<ArrayRef> {
    Ok(match out {
        Out::Json | Out::Text => {
            let mut b = StringBuilder::new();
            for c in cells {
                match c {
                    Some(Cell::Text(s)) => b.append_value(s),
                    _ => b.append_null(),
                }
            }
            Arc::new(b.finish())
        }
        Out::Int32 => {
            let mut b = Int32Builder::new();
            for c in cells {
                b.append_option(match c {
                    Some(Cell::Int(i)) => i32::try_from(i).ok(),
                    _ => None,
                });
            }
            Arc::new(b.finish())
        }
        Out::Int64 => {
            let mut b = Int64Builder::new();
            for c in cells {
                b.append_option(match c {
                    Some(Cell::Int(i)) => Some(i),
                    _ => None,
                });
            }
            Arc::new(b.finish())
        }
        Out::Double => {
            let mut b = Float64Builder::new();
            for c in cells {
                b.append_option(match c {
                    Some(Cell::Double(d)) => Some(d),
                    Some(Cell::Int(i)) => Some(i as f64),
                    _ => None,
                });
            }
            Arc::new(b.finish())
        }
        Out::Bool => {
            let mut b = BooleanBuilder::new();
            for c in cells {
                b.append_option(match c {
                    Some(Cell::Bool(v)) => Some(v),
                    _ => None,
                });
            }
            Arc::new(b.finish())
        }
    })
}

/// Doris's `json_type(doc, path)` name of a value: its JSONB type, integers by the narrowest of
/// INT, BIGINT and LARGEINT that holds them.
fn doris_type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) if i32::try_from(i).is_ok() => "int",
            (Some(_), _) => "bigint",
            (None, Some(_)) => "largeint",
            _ => "double",
        },
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// What the binary form is for, through the function itself: json_extract of one path
    /// over 200,000 documents as text and as binary documents. `cargo test -p
    /// basalt-functions --release json_extract_over_both_forms -- --ignored --nocapture`
    /// prints both times.
    #[test]
    #[ignore]
    fn json_extract_over_both_forms() {
        use datafusion::arrow::array::{BinaryArray, StringArray};
        let docs = json_binary::sample_documents(200_000);
        let text: ArrayRef = Arc::new(StringArray::from_iter_values(&docs));
        let binary: ArrayRef = Arc::new(BinaryArray::from_iter_values(
            docs.iter().map(|d| json_binary::encode_text(d).unwrap()),
        ));
        let text_field: FieldRef = Arc::new(json_field("doc"));
        let binary_field: FieldRef = Arc::new(json_binary::binary_field(&text_field));
        let path: ArrayRef = Arc::new(StringArray::from(vec!["$.a.b"]));
        let path_field: FieldRef = Arc::new(Field::new("p", DataType::Utf8, false));
        let udf = functions()
            .into_iter()
            .find(|f| f.name() == "json_extract")
            .unwrap();
        let f = udf.inner().downcast_ref::<JsonFunction>().unwrap();
        let run = |doc: &ArrayRef, field: &FieldRef| {
            let started = std::time::Instant::now();
            let mut out = None;
            for chunk in 0..(200_000 / 8192 + 1) {
                let at = chunk * 8192;
                let len = 8192.min(200_000 - at);
                let arrays = [doc.slice(at, len), path.clone()];
                let fields = [field.clone(), path_field.clone()];
                out = Some(f.evaluate(&arrays, &fields, len, &[false, true]).unwrap());
            }
            (started.elapsed(), out.unwrap())
        };
        let (text_time, from_text) = run(&text, &text_field);
        let (binary_time, from_binary) = run(&binary, &binary_field);
        println!("json_extract: text {text_time:?}, binary {binary_time:?}");
        assert_eq!(&from_text, &from_binary);
    }

    #[test]
    fn contains_follows_mysql() {
        assert!(contains(&json!([1, 2, [3]]), &json!(3)));
        assert!(contains(&json!([1, 2, 3]), &json!([3, 1])));
        assert!(!contains(&json!([1, 2]), &json!([3])));
        assert!(contains(
            &json!({"a": 1, "b": {"c": 2}}),
            &json!({"b": {"c": 2}})
        ));
        assert!(!contains(&json!({"a": 1}), &json!({"a": 2})));
        assert!(contains(&json!(1.0), &json!(1)));
    }

    #[test]
    fn unquote_only_unwraps_json_strings() {
        assert_eq!(unquote(r#""a\"b""#), "a\"b");
        assert_eq!(unquote("[1]"), "[1]");
        assert_eq!(unquote("\"x"), "\"x");
    }
}
