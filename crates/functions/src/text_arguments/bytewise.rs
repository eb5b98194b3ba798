//! A text-only function run on binary strings byte by byte (see the parent module): every text
//! or binary argument becomes one character per byte (U+0000..U+00FF, so positions, lengths
//! and matches count bytes), and a text result becomes those bytes again.

use crate::mysql_values::bytes;
use datafusion::arrow::array::{Array, ArrayRef, BinaryArray, Int64Array, StringArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::{exec_err, Result, ScalarValue};
use datafusion::logical_expr::{ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF};
use std::sync::Arc;

/// Functions that leave a binary string as it is (it has no letter case).
fn is_case_mapping(name: &str) -> bool {
    matches!(name, "upper" | "lower" | "initcap" | "ucase" | "lcase")
}

/// Functions that count the UTF-8 bytes of their text (the byte count of a binary string,
/// times 8 for `bit_length`).
fn byte_count_factor(name: &str) -> Option<i64> {
    match name {
        "length" | "octet_length" => Some(1),
        "bit_length" => Some(8),
        _ => None,
    }
}

fn is_text(t: &DataType) -> bool {
    matches!(t, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View)
}

fn is_text_or_bytes(t: &DataType) -> bool {
    is_text(t)
        || matches!(
            t,
            DataType::Binary | DataType::LargeBinary | DataType::BinaryView
        )
}

/// The result field of `name` run byte by byte, given the wrapped function's result for text.
pub(super) fn result_field(name: &str, inner: FieldRef) -> FieldRef {
    if is_case_mapping(name) || is_text(inner.data_type()) {
        Arc::new(Field::new(
            inner.name(),
            DataType::Binary,
            inner.is_nullable(),
        ))
    } else {
        inner
    }
}

/// One character per byte.
fn bytes_as_chars(b: &[u8]) -> String {
    b.iter().map(|b| char::from(*b)).collect()
}

/// The bytes of characters made by [`bytes_as_chars`].
fn chars_as_bytes(s: &str) -> Result<Vec<u8>> {
    s.chars()
        .map(|c| u8::try_from(u32::from(c)).ok())
        .collect::<Option<Vec<u8>>>()
        .map_or_else(
            || exec_err!("a function on a binary string gave a character that is no byte"),
            Ok,
        )
}

/// Runs `inner` on `args` byte by byte.
pub(super) fn invoke(inner: &ScalarUDF, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
    let name = inner.name().to_ascii_lowercase();
    let scalar = args
        .args
        .iter()
        .all(|a| matches!(a, ColumnarValue::Scalar(_)));
    if is_case_mapping(&name) {
        return Ok(args
            .args
            .into_iter()
            .next()
            .unwrap_or(ColumnarValue::Scalar(ScalarValue::Binary(None))));
    }
    let arrays = ColumnarValue::values_to_arrays(&args.args)?;
    if let Some(factor) = byte_count_factor(&name) {
        let counts: Int64Array = bytes(&arrays[0])?
            .into_iter()
            .map(|v| v.map(|b| b.len() as i64 * factor))
            .collect();
        let out = cast(&counts, args.return_field.data_type())?;
        return crate::util::output(out, scalar);
    }
    let mut fields = Vec::with_capacity(arrays.len());
    let mut values = Vec::with_capacity(arrays.len());
    for (array, field) in arrays.iter().zip(&args.arg_fields) {
        if is_text_or_bytes(array.data_type()) {
            let chars: StringArray = bytes(array)?
                .iter()
                .map(|v| v.as_deref().map(bytes_as_chars))
                .collect();
            fields.push(Arc::new(Field::new(
                field.name(),
                DataType::Utf8,
                field.is_nullable(),
            )));
            values.push(Arc::new(chars) as ArrayRef);
        } else {
            fields.push(field.clone());
            values.push(array.clone());
        }
    }
    let constants: Vec<Option<ScalarValue>> = values
        .iter()
        .map(|v| {
            (scalar && v.len() == 1)
                .then(|| ScalarValue::try_from_array(v, 0).ok())
                .flatten()
        })
        .collect();
    let constant_refs: Vec<Option<&ScalarValue>> = constants.iter().map(Option::as_ref).collect();
    let return_field = inner.return_field_from_args(ReturnFieldArgs {
        arg_fields: &fields,
        scalar_arguments: &constant_refs,
    })?;
    let result = inner.invoke_with_args(ScalarFunctionArgs {
        args: values.into_iter().map(ColumnarValue::Array).collect(),
        arg_fields: fields,
        number_rows: args.number_rows,
        return_field,
        config_options: args.config_options,
    })?;
    let result = match result {
        ColumnarValue::Array(a) => a,
        ColumnarValue::Scalar(s) => s.to_array_of_size(args.number_rows.max(1))?,
    };
    let out: ArrayRef = if is_text(result.data_type()) {
        let text = cast(&result, &DataType::Utf8)?;
        let text = text
            .as_any()
            .downcast_ref::<StringArray>()
            .map_or_else(|| exec_err!("expected text"), Ok)?;
        let mut out = Vec::with_capacity(text.len());
        for v in text.iter() {
            out.push(v.map(chars_as_bytes).transpose()?);
        }
        Arc::new(BinaryArray::from_iter(out))
    } else {
        result
    };
    crate::util::output(out, scalar)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_and_characters_round_trip() {
        let all: Vec<u8> = (0..=255).collect();
        let chars = bytes_as_chars(&all);
        assert_eq!(chars.chars().count(), 256);
        assert_eq!(chars_as_bytes(&chars).expect("bytes"), all);
        assert!(chars_as_bytes("я").is_err());
    }
}
