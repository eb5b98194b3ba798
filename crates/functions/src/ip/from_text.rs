//! Addresses from text: `to_ipv4` / `to_ipv6` (IPV4 / IPV6 values) and `ipv4_string_to_num` /
//! `ipv6_string_to_num` (a BIGINT / the 16 bytes), each with `_or_null` (alias `inet_aton` /
//! `inet6_aton`) and `_or_default` forms. As in Doris, the plain forms fail on text that is no address and on NULL, `_or_null`
//! gives NULL and `_or_default` the zero address for both; `to_ipv*` allow spaces around the
//! address, `ipv6_string_to_num` reads IPv4 text as its IPv6 form (`::ffff:a.b.c.d`).
//!
//! Also the conversions the analyzer rule builds: `ip_cast_ipv4` / `ip_cast_ipv6` for CAST and
//! text compared with addresses (NULL for no address, as Doris's CAST), and `ip_store_ipv4` /
//! `ip_store_ipv6` for values an INSERT stores (no address: error 1366).

use super::arguments::{ipv4_array, ipv6_array, ipv6_values, texts};
use super::{function, Returns};
use crate::util::{arguments, output};
use basalt_common::ip_address::{ipv4_to_ipv6, ipv6_from_bytes, parse_ipv4, parse_ipv6, IpFamily};
use basalt_common::BasaltError;
use datafusion::arrow::array::{Array, ArrayRef, AsArray, BinaryArray, Int64Array};
use datafusion::arrow::datatypes::{DataType, UInt32Type};
use datafusion::common::{exec_err, DataFusionError, Result};
use datafusion::logical_expr::{ColumnarValue, ScalarFunctionArgs, ScalarUDF};
use std::sync::Arc;

/// What a conversion does with text that is no address (and with NULL).
const THROW: u8 = 0;
const NULL: u8 = 1;
const DEFAULT: u8 = 2;

pub(super) fn functions() -> Vec<ScalarUDF> {
    let v4 = Returns::Address(IpFamily::V4);
    let v6 = Returns::Address(IpFamily::V6);
    let bigint = Returns::Plain(DataType::Int64);
    let bytes = Returns::Plain(DataType::Binary);
    vec![
        function("to_ipv4", 1, v4.clone(), to_ipv4::<THROW>),
        function("to_ipv4_or_null", 1, v4.clone(), to_ipv4::<NULL>),
        function("to_ipv4_or_default", 1, v4.clone(), to_ipv4::<DEFAULT>),
        function("to_ipv6", 1, v6.clone(), to_ipv6::<THROW>),
        function("to_ipv6_or_null", 1, v6.clone(), to_ipv6::<NULL>),
        function("to_ipv6_or_default", 1, v6.clone(), to_ipv6::<DEFAULT>),
        function(
            "ipv4_string_to_num",
            1,
            bigint.clone(),
            ipv4_number::<THROW>,
        ),
        function(
            "ipv4_string_to_num_or_null",
            1,
            bigint.clone(),
            ipv4_number::<NULL>,
        )
        .with_aliases(["inet_aton"]),
        function(
            "ipv4_string_to_num_or_default",
            1,
            bigint,
            ipv4_number::<DEFAULT>,
        ),
        function("ipv6_string_to_num", 1, bytes.clone(), ipv6_bytes::<THROW>),
        function(
            "ipv6_string_to_num_or_null",
            1,
            bytes.clone(),
            ipv6_bytes::<NULL>,
        )
        .with_aliases(["inet6_aton"]),
        function(
            "ipv6_string_to_num_or_default",
            1,
            bytes,
            ipv6_bytes::<DEFAULT>,
        ),
        function("ip_cast_ipv4", 1, v4.clone(), cast_ipv4),
        function("ip_cast_ipv6", 1, v6.clone(), cast_ipv6),
        function("ip_store_ipv4", 1, v4, store_ipv4),
        function("ip_store_ipv6", 1, v6, store_ipv6),
    ]
}

/// Converts each text value with `parse`, handling failures and NULL as `MODE` says.
fn convert<const MODE: u8, T: Default>(
    func: &str,
    family: &str,
    text: &ArrayRef,
    parse: impl Fn(&str) -> Option<T>,
) -> Result<Vec<Option<T>>> {
    texts(text)?
        .iter()
        .map(|t| match (t.map(|t| (t, parse(t))), MODE) {
            (Some((_, Some(v))), _) => Ok(Some(v)),
            (_, NULL) => Ok(None),
            (_, DEFAULT) => Ok(Some(T::default())),
            (None, _) => exec_err!(
                "{func}: NULL input, you may convert it to a valid default {family} value first"
            ),
            (Some((t, None)), _) => exec_err!("{func}: Invalid {family} value '{t}'"),
        })
        .collect()
}

fn name(args: &ScalarFunctionArgs) -> String {
    args.return_field.name().to_string()
}

fn to_ipv4<const MODE: u8>(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    if arrays[0].data_type() == &DataType::UInt32 {
        return output(arrays[0].clone(), scalar);
    }
    let values = convert::<MODE, u32>(&name(args), "IPv4", &arrays[0], |t| parse_ipv4(t.trim()))?;
    output(ipv4_array(values), scalar)
}

fn to_ipv6<const MODE: u8>(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    if arrays[0].data_type() == &DataType::Binary {
        return output(arrays[0].clone(), scalar);
    }
    let values = convert::<MODE, u128>(&name(args), "IPv6", &arrays[0], |t| parse_ipv6(t.trim()))?;
    output(ipv6_array(values), scalar)
}

fn ipv4_number<const MODE: u8>(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let values = convert::<MODE, i64>(&name(args), "IPv4", &arrays[0], |t| {
        parse_ipv4(t).map(i64::from)
    })?;
    output(Arc::new(values.into_iter().collect::<Int64Array>()), scalar)
}

fn ipv6_bytes<const MODE: u8>(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let values = convert::<MODE, u128>(&name(args), "IPv6", &arrays[0], |t| {
        parse_ipv4(t).map(ipv4_to_ipv6).or_else(|| parse_ipv6(t))
    })?;
    let out: BinaryArray = values
        .into_iter()
        .map(|v| v.map(u128::to_be_bytes))
        .collect();
    output(Arc::new(out), scalar)
}

/// CAST to IPV4: text parsed (NULL when no address), integers within the range as they are.
fn cast_ipv4(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let values = &arrays[0];
    let out = match values.data_type() {
        DataType::UInt32 => values.clone(),
        t if t.is_integer() => ipv4_array(
            super::arguments::integers(values)?
                .iter()
                .map(|v| v.and_then(|v| u32::try_from(v).ok())),
        ),
        _ => ipv4_array(
            texts(values)?
                .iter()
                .map(|t| t.and_then(|t| parse_ipv4(t.trim()))),
        ),
    };
    output(out, scalar)
}

/// CAST to IPV6: text parsed (NULL when no address), IPV4 as its IPv6 form, 16 bytes as they
/// are.
fn cast_ipv6(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let values = &arrays[0];
    let out = match values.data_type() {
        DataType::UInt32 => ipv6_array(
            values
                .as_primitive::<UInt32Type>()
                .iter()
                .map(|v| v.map(ipv4_to_ipv6)),
        ),
        DataType::Binary => ipv6_array(
            values
                .as_binary::<i32>()
                .iter()
                .map(|b| b.and_then(ipv6_from_bytes)),
        ),
        _ => ipv6_array(
            texts(values)?
                .iter()
                .map(|t| t.and_then(|t| parse_ipv6(t.trim()))),
        ),
    };
    output(out, scalar)
}

/// The error 1366 for a stored value that is no address.
fn incorrect(family: IpFamily, text: &str) -> DataFusionError {
    DataFusionError::External(Box::new(BasaltError::InvalidData(format!(
        "Incorrect {} value: '{text}'",
        family.sql_name()
    ))))
}

/// Values stored into an IPV4 column: addresses, or error 1366.
fn store_ipv4(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    if arrays[0].data_type() == &DataType::UInt32 {
        return output(arrays[0].clone(), scalar);
    }
    let values = texts(&arrays[0])?
        .iter()
        .map(|t| {
            t.map(|t| parse_ipv4(t.trim()).ok_or_else(|| incorrect(IpFamily::V4, t)))
                .transpose()
        })
        .collect::<Result<Vec<_>>>()?;
    output(ipv4_array(values), scalar)
}

/// Values stored into an IPV6 column: addresses (IPV4 ones in their IPv6 form), or error 1366.
fn store_ipv6(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let values = match arrays[0].data_type() {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => texts(&arrays[0])?
            .iter()
            .map(|t| {
                t.map(|t| parse_ipv6(t.trim()).ok_or_else(|| incorrect(IpFamily::V6, t)))
                    .transpose()
            })
            .collect::<Result<Vec<_>>>()?,
        _ => ipv6_values("ip_store_ipv6", &arrays[0])?,
    };
    output(ipv6_array(values), scalar)
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::StringArray;

    fn strings(values: &[Option<&str>]) -> ArrayRef {
        Arc::new(StringArray::from(values.to_vec()))
    }

    #[test]
    fn modes_treat_bad_text_and_null() {
        let text = strings(&[Some("1.2.3.4"), Some("x"), None]);
        let parse = |t: &str| parse_ipv4(t);
        assert_eq!(
            convert::<NULL, u32>("f", "IPv4", &text, parse).unwrap(),
            vec![Some(0x0102_0304), None, None]
        );
        assert_eq!(
            convert::<DEFAULT, u32>("f", "IPv4", &text, parse).unwrap(),
            vec![Some(0x0102_0304), Some(0), Some(0)]
        );
        let err = convert::<THROW, u32>("f", "IPv4", &text, parse).unwrap_err();
        assert!(err.to_string().contains("Invalid IPv4 value 'x'"), "{err}");
        let null = strings(&[None]);
        assert!(convert::<THROW, u32>("f", "IPv4", &null, parse).is_err());
    }
}
