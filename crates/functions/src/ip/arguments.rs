//! Reading the arguments of the IP functions whatever their type (text, numbers, bytes, IPV4,
//! IPV6, NULL) and building their results.

use basalt_common::ip_address::{
    ipv4_to_ipv6, ipv6_from_bytes, parse_ipv4, parse_ipv6, IPV6_BYTES,
};
use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, BinaryArray, BooleanArray, Int64Array, StringArray, UInt32Array,
};
use datafusion::arrow::compute::{cast, cast_with_options, CastOptions};
use datafusion::arrow::datatypes::{DataType, UInt32Type};
use datafusion::common::{exec_err, DataFusionError, Result};
use std::sync::Arc;

/// A text argument as `Utf8` (numbers and other values as their text).
pub(crate) fn texts(array: &ArrayRef) -> Result<StringArray> {
    Ok(cast(array, &DataType::Utf8)?.as_string::<i32>().clone())
}

/// An integer argument as `Int64` (text that is no number: NULL).
pub(crate) fn integers(array: &ArrayRef) -> Result<Int64Array> {
    let options = CastOptions {
        safe: true,
        ..Default::default()
    };
    Ok(cast_with_options(array, &DataType::Int64, &options)?
        .as_primitive()
        .clone())
}

/// Byte strings (binary or text) of an argument: each value's bytes, None for NULL.
pub(crate) fn byte_values(array: &ArrayRef) -> Result<Vec<Option<Vec<u8>>>> {
    let binary = match array.data_type() {
        DataType::Binary => array.clone(),
        DataType::Null => return Ok(vec![None; array.len()]),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => {
            let text = cast(array, &DataType::Utf8)?;
            Arc::new(BinaryArray::from(text.as_string::<i32>().clone())) as ArrayRef
        }
        _ => cast(array, &DataType::Binary)?,
    };
    Ok(binary
        .as_binary::<i32>()
        .iter()
        .map(|v| v.map(<[u8]>::to_vec))
        .collect())
}

/// IPv4 addresses of an argument: IPV4 values (or integers, checked to be addresses) as they
/// are, text parsed; a value that is no address is an error.
pub(crate) fn ipv4_values(func: &str, array: &ArrayRef) -> Result<Vec<Option<u32>>> {
    match array.data_type() {
        DataType::UInt32 => Ok(array.as_primitive::<UInt32Type>().iter().collect()),
        DataType::Null => Ok(vec![None; array.len()]),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => texts(array)?
            .iter()
            .map(|t| {
                t.map(|t| parse_ipv4(t.trim()).ok_or_else(|| invalid(func, "IPv4", t)))
                    .transpose()
            })
            .collect(),
        t if t.is_integer() => integers(array)?
            .iter()
            .map(|v| {
                v.map(|v| u32::try_from(v).map_err(|_| invalid(func, "IPv4", &v.to_string())))
                    .transpose()
            })
            .collect(),
        other => exec_err!("{func}: expected an IPv4 address, got {other}"),
    }
}

/// IPv6 addresses of an argument: IPV6 values and 16-byte strings as they are, IPV4 values as
/// their IPv6 form, text parsed; a value that is no address is an error.
pub(crate) fn ipv6_values(func: &str, array: &ArrayRef) -> Result<Vec<Option<u128>>> {
    match array.data_type() {
        DataType::UInt32 => Ok(array
            .as_primitive::<UInt32Type>()
            .iter()
            .map(|v| v.map(ipv4_to_ipv6))
            .collect()),
        DataType::Null => Ok(vec![None; array.len()]),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => texts(array)?
            .iter()
            .map(|t| {
                t.map(|t| {
                    parse_ipv6(t.trim())
                        .or_else(|| ipv6_from_bytes(t.as_bytes()))
                        .ok_or_else(|| invalid(func, "IPv6", t))
                })
                .transpose()
            })
            .collect(),
        _ => byte_values(array)?
            .into_iter()
            .map(|b| {
                b.map(|b| {
                    ipv6_from_bytes(&b)
                        .ok_or_else(|| invalid(func, "IPv6", &String::from_utf8_lossy(&b)))
                })
                .transpose()
            })
            .collect(),
    }
}

/// The error for a value that is no address.
pub(crate) fn invalid(func: &str, family: &str, text: &str) -> DataFusionError {
    DataFusionError::Execution(format!("{func}: Invalid {family} value '{text}'"))
}

/// An IPV4 result.
pub(crate) fn ipv4_array(values: impl IntoIterator<Item = Option<u32>>) -> ArrayRef {
    Arc::new(values.into_iter().collect::<UInt32Array>())
}

/// An IPV6 result (16 big-endian bytes per value).
pub(crate) fn ipv6_array(values: impl IntoIterator<Item = Option<u128>>) -> ArrayRef {
    Arc::new(
        values
            .into_iter()
            .map(|v| v.map(u128::to_be_bytes))
            .collect::<BinaryArray>(),
    )
}

/// A BOOLEAN result.
pub(crate) fn booleans(values: impl IntoIterator<Item = Option<bool>>) -> ArrayRef {
    Arc::new(values.into_iter().collect::<BooleanArray>())
}

/// A text result.
pub(crate) fn strings(values: impl IntoIterator<Item = Option<String>>) -> ArrayRef {
    Arc::new(values.into_iter().collect::<StringArray>())
}

/// The 16 bytes of an address given as a byte string: shorter strings are padded with zero
/// bytes, longer ones and empty ones are no address (Doris's `ipv6_num_to_string`).
pub(crate) fn padded_ipv6(bytes: &[u8]) -> Option<u128> {
    if bytes.is_empty() || bytes.len() > IPV6_BYTES {
        return None;
    }
    let mut full = [0u8; IPV6_BYTES];
    full[..bytes.len()].copy_from_slice(bytes);
    Some(u128::from_be_bytes(full))
}

/// True when row `row` of any argument is NULL.
pub(crate) fn any_null(arrays: &[ArrayRef], row: usize) -> bool {
    arrays
        .iter()
        .any(|a| a.data_type() == &DataType::Null || a.is_null(row))
}
