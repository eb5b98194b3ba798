//! `variant_type(v)`: the JSON type of a VARIANT value as Doris names it — `object`, `array`,
//! `string`, `boolean`, `double`, and for a whole number the narrowest of `tinyint`,
//! `smallint`, `int`, `bigint`, `largeint`; NULL for NULL. A value read at a path is text
//! without quotes, so it is named by what that text reads as (text that is no JSON is a
//! `string`).

use crate::util::{arguments, output};
use datafusion::arrow::array::{Array, AsArray, StringBuilder};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::Result;
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use serde_json::Value;
use std::sync::Arc;

#[derive(Debug, PartialEq, Eq, Hash)]
struct VariantType {
    signature: Signature,
}

pub(super) fn function() -> ScalarUDF {
    ScalarUDF::new_from_impl(VariantType {
        signature: Signature::any(1, Volatility::Immutable),
    })
}

impl ScalarUDFImpl for VariantType {
    fn name(&self) -> &str {
        "variant_type"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Utf8)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let (arrays, scalar) = arguments(&args)?;
        let text = cast(&arrays[0], &DataType::Utf8)?;
        let text = text.as_string::<i32>();
        let mut out = StringBuilder::with_capacity(text.len(), text.len() * 6);
        for v in text.iter() {
            match v {
                Some(v) => out.append_value(type_name(v)),
                None => out.append_null(),
            }
        }
        output(Arc::new(out.finish()), scalar)
    }
}

/// The type name of a value's text.
fn type_name(text: &str) -> &'static str {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(_)) => "object",
        Ok(Value::Array(_)) => "array",
        Ok(Value::String(_)) | Err(_) => "string",
        Ok(Value::Bool(_)) => "boolean",
        Ok(Value::Null) => "null",
        Ok(Value::Number(n)) => number_name(&n.to_string()),
    }
}

fn number_name(digits: &str) -> &'static str {
    match digits.parse::<i128>() {
        Ok(n) if i8::try_from(n).is_ok() => "tinyint",
        Ok(n) if i16::try_from(n).is_ok() => "smallint",
        Ok(n) if i32::try_from(n).is_ok() => "int",
        Ok(n) if i64::try_from(n).is_ok() => "bigint",
        Ok(_) => "largeint",
        Err(_) => "double",
    }
}

#[cfg(test)]
mod tests {
    use super::type_name;

    #[test]
    fn json_types_by_doris_names() {
        assert_eq!(type_name(r#"{"a":1}"#), "object");
        assert_eq!(type_name("[1]"), "array");
        assert_eq!(type_name(r#""x""#), "string");
        assert_eq!(type_name("x"), "string");
        assert_eq!(type_name("true"), "boolean");
        assert_eq!(type_name("1"), "tinyint");
        assert_eq!(type_name("300"), "smallint");
        assert_eq!(type_name("70000"), "int");
        assert_eq!(type_name("5000000000"), "bigint");
        assert_eq!(type_name("1.5"), "double");
    }
}
