//! `variant_element(doc, key, ..)`: the value of a VARIANT document under the keys, one level
//! each (a key with dots also reads as the path it spells, as Doris flattens paths: `v['a.b']`
//! is `v['a']['b']` unless `a.b` is a key itself); an integer subscript is an array's index,
//! zero-based and counted from the end when negative (Doris's `v['arr'][0]`, `[-1]`). A string comes without its quotes, any other
//! value in compact JSON; a missing path, JSON null, a document that is no JSON or a level that
//! is no object give NULL. Only the subscript planner builds calls, so the function is in no
//! registry (see `crate::wire`).

use crate::util::{arguments, output};
use basalt_common::variant::element_field;
use datafusion::arrow::array::{Array, ArrayRef, AsArray, StringBuilder};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, FieldRef, Int64Type};
use datafusion::common::{plan_err, Result};
use datafusion::logical_expr::{
    ColumnarValue, Expr, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
    Volatility,
};
use serde_json::Value;
use std::sync::{Arc, OnceLock};

pub(crate) const NAME: &str = "variant_element";

#[derive(Debug, PartialEq, Eq, Hash)]
struct VariantElement {
    signature: Signature,
}

/// The one instance of the function.
pub(crate) fn function() -> &'static ScalarUDF {
    static FUNCTION: OnceLock<ScalarUDF> = OnceLock::new();
    FUNCTION.get_or_init(|| {
        ScalarUDF::new_from_impl(VariantElement {
            signature: Signature::variadic_any(Volatility::Immutable),
        })
    })
}

/// A call reading `doc` at `keys`.
pub(crate) fn call(doc: Expr, keys: Vec<Expr>) -> Expr {
    let mut args = vec![doc];
    args.extend(keys);
    function().call(args)
}

impl ScalarUDFImpl for VariantElement {
    fn name(&self) -> &str {
        NAME
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Utf8)
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        if args.arg_fields.len() < 2 {
            return plan_err!("{NAME} takes a VARIANT and at least one key");
        }
        Ok(Arc::new(element_field(NAME)))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let (arrays, scalar) = arguments(&args)?;
        let rows = arrays.first().map_or(args.number_rows, |a| a.len());
        let (doc, subscripts) = arrays.split_first().expect("checked: a document and keys");
        let doc = cast(doc, &DataType::Utf8)?;
        let doc = doc.as_string::<i32>();
        let subscripts = subscripts
            .iter()
            .map(Subscripts::of)
            .collect::<Result<Vec<_>>>()?;
        let mut out = StringBuilder::with_capacity(rows, rows * 8);
        let mut path: Vec<Step> = Vec::with_capacity(subscripts.len());
        for row in 0..rows {
            path.clear();
            if doc.is_null(row) {
                out.append_null();
                continue;
            }
            match subscripts
                .iter()
                .map(|s| s.step(row))
                .collect::<Option<Vec<_>>>()
            {
                Some(steps) => path.extend(steps),
                None => {
                    out.append_null();
                    continue;
                }
            }
            match read(doc.value(row), &path) {
                Some(text) => out.append_value(text),
                None => out.append_null(),
            }
        }
        output(Arc::new(out.finish()), scalar)
    }
}

/// One subscript of a path: an object's key (`v['a']`) or an array's index (`v['arr'][0]`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Step<'a> {
    Key(&'a str),
    Index(i64),
}

/// One subscript argument's values: keys (text) or indexes (integers).
enum Subscripts {
    Keys(ArrayRef),
    Indexes(ArrayRef),
}

impl Subscripts {
    fn of(array: &ArrayRef) -> Result<Subscripts> {
        Ok(if array.data_type().is_integer() {
            Subscripts::Indexes(cast(array, &DataType::Int64)?)
        } else {
            Subscripts::Keys(cast(array, &DataType::Utf8)?)
        })
    }

    /// The subscript of `row`; None for a NULL one.
    fn step(&self, row: usize) -> Option<Step<'_>> {
        match self {
            Subscripts::Keys(a) => {
                let keys = a.as_string::<i32>();
                (!keys.is_null(row)).then(|| Step::Key(keys.value(row)))
            }
            Subscripts::Indexes(a) => {
                let indexes = a.as_primitive::<Int64Type>();
                (!indexes.is_null(row)).then(|| Step::Index(indexes.value(row)))
            }
        }
    }
}

/// The text of the value of document `text` at `path` (see the module's doc).
pub(crate) fn read(text: &str, path: &[Step]) -> Option<String> {
    let doc: Value = serde_json::from_str(text).ok()?;
    let mut at = &doc;
    for step in path {
        at = match step {
            Step::Key(key) => member(at, key)?,
            Step::Index(i) => item(at, *i)?,
        };
    }
    match at {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

/// The item of an array at a zero-based index, or counted from the end for a negative one
/// (Doris's VARIANT: `v['arr'][0]` is the first item, `[-1]` the last).
fn item(value: &Value, index: i64) -> Option<&Value> {
    let items = value.as_array()?;
    let at = if index < 0 {
        items
            .len()
            .checked_sub(usize::try_from(index.unsigned_abs()).ok()?)?
    } else {
        usize::try_from(index).ok()?
    };
    items.get(at)
}

/// The member of an object under `key`, or (when there is none) under the path the key's dots
/// spell.
fn member<'a>(value: &'a Value, key: &str) -> Option<&'a Value> {
    let object = value.as_object()?;
    if let Some(v) = object.get(key) {
        return Some(v);
    }
    if !key.contains('.') {
        return None;
    }
    key.split('.')
        .try_fold(value, |at, part| at.as_object()?.get(part))
}

#[cfg(test)]
mod tests {
    use super::{read, Step};

    fn keys<'a>(names: &[&'a str]) -> Vec<Step<'a>> {
        names.iter().map(|k| Step::Key(k)).collect()
    }

    const DOC: &str = r#"{"a": 1, "b": {"c": "x", "d": null}, "arr": [1, 2], "e.f": true}"#;

    #[test]
    fn values_at_paths() {
        assert_eq!(read(DOC, &keys(&["a"])).as_deref(), Some("1"));
        assert_eq!(read(DOC, &keys(&["b", "c"])).as_deref(), Some("x"));
        assert_eq!(
            read(DOC, &keys(&["b"])).as_deref(),
            Some(r#"{"c":"x","d":null}"#)
        );
        assert_eq!(read(DOC, &keys(&["arr"])).as_deref(), Some("[1,2]"));
        assert_eq!(read(DOC, &keys(&["b.c"])).as_deref(), Some("x"));
        assert_eq!(read(DOC, &keys(&["e.f"])).as_deref(), Some("true"));
    }

    #[test]
    fn missing_paths_and_json_null_are_null() {
        assert_eq!(read(DOC, &keys(&["zz"])), None);
        assert_eq!(read(DOC, &keys(&["a", "b"])), None);
        assert_eq!(read(DOC, &keys(&["b", "d"])), None);
        assert_eq!(read("not json", &keys(&["a"])), None);
        assert_eq!(read("[1]", &keys(&["a"])), None);
    }

    #[test]
    fn array_items_by_index() {
        let at = |path: &[Step]| read(DOC, path);
        assert_eq!(
            at(&[Step::Key("arr"), Step::Index(0)]).as_deref(),
            Some("1")
        );
        assert_eq!(
            at(&[Step::Key("arr"), Step::Index(1)]).as_deref(),
            Some("2")
        );
        assert_eq!(
            at(&[Step::Key("arr"), Step::Index(-1)]).as_deref(),
            Some("2")
        );
        assert_eq!(
            at(&[Step::Key("arr"), Step::Index(-2)]).as_deref(),
            Some("1")
        );
        assert_eq!(at(&[Step::Key("arr"), Step::Index(2)]), None);
        assert_eq!(at(&[Step::Key("arr"), Step::Index(-3)]), None);
        assert_eq!(at(&[Step::Key("b"), Step::Index(0)]), None);
        assert_eq!(at(&[Step::Key("arr"), Step::Key("0")]), None);
    }
}
