//! Addresses as text: `ipv4_num_to_string` / `inet_ntoa` (a number; NULL outside
//! 0..=4294967295), `ipv6_num_to_string` / `inet6_ntoa` (an IPV6 or its bytes; a byte string longer than 16 or empty is NULL,
//! a shorter one is padded with zero bytes), `cut_ipv6` (the text with trailing bytes zeroed,
//! as many as its IPv6 or IPv4-mapped count says) and `ip_to_string`, the CAST of an address
//! to text the analyzer rule builds.

use super::arguments::{any_null, byte_values, integers, ipv6_values, padded_ipv6, strings};
use super::{function, Returns};
use crate::util::{arguments, output};
use basalt_common::ip_address::{format_ipv4, format_ipv6, format_ipv6_cut};
use datafusion::arrow::array::{Array, AsArray};
use datafusion::arrow::datatypes::{DataType, UInt32Type};
use datafusion::common::{exec_err, Result};
use datafusion::logical_expr::{ColumnarValue, ScalarFunctionArgs, ScalarUDF};

pub(super) fn functions() -> Vec<ScalarUDF> {
    let text = || Returns::Plain(DataType::Utf8);
    vec![
        function("ipv4_num_to_string", 1, text(), ipv4_num_to_string).with_aliases(["inet_ntoa"]),
        function("ipv6_num_to_string", 1, text(), ipv6_num_to_string).with_aliases(["inet6_ntoa"]),
        function("ip_to_string", 1, text(), ip_to_string),
        function("cut_ipv6", 3, text(), cut_ipv6),
    ]
}

fn ipv4_num_to_string(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let numbers = integers(&arrays[0])?;
    let out = strings(
        numbers
            .iter()
            .map(|v| v.and_then(|v| u32::try_from(v).ok()).map(format_ipv4)),
    );
    output(out, scalar)
}

fn ipv6_num_to_string(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let values = &arrays[0];
    let out = match values.data_type() {
        DataType::UInt32 | DataType::Null => strings(
            ipv6_values("ipv6_num_to_string", values)?
                .into_iter()
                .map(|v| v.map(format_ipv6)),
        ),
        _ => strings(
            byte_values(values)?
                .into_iter()
                .map(|b| b.and_then(|b| padded_ipv6(&b)).map(format_ipv6)),
        ),
    };
    output(out, scalar)
}

/// An IPV4 or IPV6 value as text (CAST(ip AS STRING)).
fn ip_to_string(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let values = &arrays[0];
    let out = match values.data_type() {
        DataType::UInt32 => strings(
            values
                .as_primitive::<UInt32Type>()
                .iter()
                .map(|v| v.map(format_ipv4)),
        ),
        _ => strings(
            ipv6_values("ip_to_string", values)?
                .into_iter()
                .map(|v| v.map(format_ipv6)),
        ),
    };
    output(out, scalar)
}

/// `cut_ipv6(address, bytes_for_ipv6, bytes_for_ipv4)`.
fn cut_ipv6(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let addresses = ipv6_values("cut_ipv6", &arrays[0])?;
    let for_ipv6 = integers(&arrays[1])?;
    let for_ipv4 = integers(&arrays[2])?;
    let count = |v: i64, position: usize| match usize::try_from(v) {
        Ok(n) if n <= 16 => Ok(n),
        _ => exec_err!("cut_ipv6: Illegal value {v} for argument {position}, expected 0 to 16"),
    };
    let mut out = Vec::with_capacity(addresses.len());
    for (row, address) in addresses.into_iter().enumerate() {
        let Some(address) = address.filter(|_| !any_null(&arrays, row)) else {
            out.push(None);
            continue;
        };
        let bytes = address.to_be_bytes();
        let mapped = bytes[..10].iter().all(|b| *b == 0) && bytes[10..12] == [0xff, 0xff];
        let (cut_ipv6, cut_ipv4) = (
            count(for_ipv6.value(row), 2)?,
            count(for_ipv4.value(row), 3)?,
        );
        let cut = if mapped { cut_ipv4 } else { cut_ipv6 };
        out.push(Some(format_ipv6_cut(bytes, cut)));
    }
    output(strings(out), scalar)
}
