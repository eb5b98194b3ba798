//! `variant_element(doc, key, ..)`: the value of a VARIANT document under the keys, one level
//! each (a key with dots also reads as the path it spells, as Doris flattens paths: `v['a.b']`
//! is `v['a']['b']` unless `a.b` is a key itself). A string comes without its quotes, any other
//! value in compact JSON; a missing path, JSON null, a document that is no JSON or a level that
//! is no object give NULL. Only the subscript planner builds calls, so the function is in no
//! registry (see `crate::wire`).

use crate::util::{arguments, output};
use basalt_common::variant::element_field;
use datafusion::arrow::array::{Array, ArrayRef, AsArray, StringBuilder};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, FieldRef};
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
        let texts = arrays
            .iter()
            .map(|a| cast(a, &DataType::Utf8))
            .collect::<std::result::Result<Vec<ArrayRef>, _>>()?;
        let (doc, keys) = texts.split_first().expect("checked: a document and keys");
        let doc = doc.as_string::<i32>();
        let keys: Vec<_> = keys.iter().map(|k| k.as_string::<i32>()).collect();
        let mut out = StringBuilder::with_capacity(rows, rows * 8);
        let mut path: Vec<&str> = Vec::with_capacity(keys.len());
        for row in 0..rows {
            path.clear();
            if doc.is_null(row) || keys.iter().any(|k| k.is_null(row)) {
                out.append_null();
                continue;
            }
            path.extend(keys.iter().map(|k| k.value(row)));
            match read(doc.value(row), &path) {
                Some(text) => out.append_value(text),
                None => out.append_null(),
            }
        }
        output(Arc::new(out.finish()), scalar)
    }
}

/// The text of the value of document `text` at `path` (see the module's doc).
pub(crate) fn read(text: &str, path: &[&str]) -> Option<String> {
    let doc: Value = serde_json::from_str(text).ok()?;
    let mut at = &doc;
    for key in path {
        at = member(at, key)?;
    }
    match at {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
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
    use super::read;

    const DOC: &str = r#"{"a": 1, "b": {"c": "x", "d": null}, "arr": [1, 2], "e.f": true}"#;

    #[test]
    fn values_at_paths() {
        assert_eq!(read(DOC, &["a"]).as_deref(), Some("1"));
        assert_eq!(read(DOC, &["b", "c"]).as_deref(), Some("x"));
        assert_eq!(read(DOC, &["b"]).as_deref(), Some(r#"{"c":"x","d":null}"#));
        assert_eq!(read(DOC, &["arr"]).as_deref(), Some("[1,2]"));
        assert_eq!(read(DOC, &["b.c"]).as_deref(), Some("x"));
        assert_eq!(read(DOC, &["e.f"]).as_deref(), Some("true"));
    }

    #[test]
    fn missing_paths_and_json_null_are_null() {
        assert_eq!(read(DOC, &["zz"]), None);
        assert_eq!(read(DOC, &["a", "b"]), None);
        assert_eq!(read(DOC, &["b", "d"]), None);
        assert_eq!(read("not json", &["a"]), None);
        assert_eq!(read("[1]", &["a"]), None);
    }
}
