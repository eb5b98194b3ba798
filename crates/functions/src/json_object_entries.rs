//! `json_object_entries(json)`: a JSON object's members as a MAP from each key to its value's
//! JSON text (`{"a": "x", "b": [1]}` gives `{a: "x", b: [1]}` with the quotes kept), in the
//! document's order; what `LATERAL VIEW explode_json_object(json)` unnests. NULL for NULL, and
//! for a document that is no object (an array, a scalar, `null`); text that is no JSON is an
//! error. Reads JSON text and binary JSON documents (`basalt_common::json_binary`).

use crate::util::{arguments, output, plain_function};
use basalt_common::json_binary;
use datafusion::arrow::array::{Array, AsArray, MapBuilder, StringBuilder};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{exec_err, Result};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, Signature, Volatility,
};
use std::sync::Arc;

pub const NAME: &str = "json_object_entries";

pub fn function() -> ScalarUDF {
    plain_function(
        NAME,
        Signature::any(1, Volatility::Immutable),
        entries_builder().finish().data_type().clone(),
        entries,
    )
}

fn entries_builder() -> MapBuilder<StringBuilder, StringBuilder> {
    MapBuilder::new(None, StringBuilder::new(), StringBuilder::new())
}

fn entries(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let binary = args
        .arg_fields
        .first()
        .is_some_and(|f| json_binary::is_binary_json(f));
    let texts = if binary {
        match json_binary::text_column(arrays[0].as_binary::<i32>()) {
            Ok(texts) => Arc::new(texts) as _,
            Err(e) => return exec_err!("{NAME}: a binary JSON value: {e}"),
        }
    } else {
        match arrays[0].data_type() {
            DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View | DataType::Null => {
                cast(&arrays[0], &DataType::Utf8)?
            }
            other => return exec_err!("{NAME}: expected a JSON document, got {other}"),
        }
    };
    let mut out = entries_builder();
    for text in texts.as_string::<i32>().iter() {
        let Some(text) = text else {
            out.append(false)?;
            continue;
        };
        let value: serde_json::Value = match serde_json::from_str(text) {
            Ok(v) => v,
            Err(e) => return exec_err!("{NAME}: invalid JSON text: {e}"),
        };
        match value {
            serde_json::Value::Object(members) => {
                for (key, member) in members {
                    out.keys().append_value(key);
                    out.values().append_value(member.to_string());
                }
                out.append(true)?;
            }
            _ => out.append(false)?,
        }
    }
    output(Arc::new(out.finish()), scalar)
}
