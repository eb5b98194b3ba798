//! Subnets and address forms: `ipv4_cidr_to_range(ip, prefix)` / `ipv6_cidr_to_range(ip,
//! prefix)` give the first and last address of the subnet as STRUCT<min, max> (a prefix outside
//! 0..=32 / 0..=128 is an error, NULL in gives NULL), `ipv4_to_ipv6(ip)` the IPv6 form
//! `::ffff:a.b.c.d`.

use super::arguments::{any_null, integers, ipv4_array, ipv4_values, ipv6_array, ipv6_values};
use super::{function, Returns};
use crate::util::{arguments, output};
use basalt_common::ip_address::{ipv4_to_ipv6, IpFamily};
use datafusion::arrow::array::{ArrayRef, StructArray};
use datafusion::arrow::datatypes::Fields;
use datafusion::common::{exec_err, Result};
use datafusion::logical_expr::{ColumnarValue, ScalarFunctionArgs, ScalarUDF};
use std::sync::Arc;

pub(super) fn functions() -> Vec<ScalarUDF> {
    vec![
        function(
            "ipv4_cidr_to_range",
            2,
            Returns::Range(IpFamily::V4),
            ipv4_cidr_to_range,
        ),
        function(
            "ipv6_cidr_to_range",
            2,
            Returns::Range(IpFamily::V6),
            ipv6_cidr_to_range,
        ),
        function(
            "ipv4_to_ipv6",
            1,
            Returns::Address(IpFamily::V6),
            ipv4_to_ipv6_function,
        ),
    ]
}

/// The prefix lengths of the rows, checked to be at most `max` (None where any argument is
/// NULL).
fn prefixes(func: &str, arrays: &[ArrayRef], max: u32) -> Result<Vec<Option<u32>>> {
    let lengths = integers(&arrays[1])?;
    (0..lengths.len())
        .map(|row| {
            if any_null(arrays, row) {
                return Ok(None);
            }
            match u32::try_from(lengths.value(row)) {
                Ok(p) if p <= max => Ok(Some(p)),
                _ => exec_err!("{func}: Illegal cidr value '{}'", lengths.value(row)),
            }
        })
        .collect()
}

/// A STRUCT<min, max> of two address arrays; NULL where `present` is false.
fn range(family: IpFamily, min: ArrayRef, max: ArrayRef, present: Vec<bool>) -> ArrayRef {
    let fields = Fields::from(vec![family.field("min", true), family.field("max", true)]);
    Arc::new(StructArray::new(
        fields,
        vec![min, max],
        Some(present.into()),
    ))
}

fn ipv4_cidr_to_range(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let addresses = ipv4_values("ipv4_cidr_to_range", &arrays[0])?;
    let prefixes = prefixes("ipv4_cidr_to_range", &arrays, 32)?;
    let bounds: Vec<Option<(u32, u32)>> = addresses
        .into_iter()
        .zip(prefixes)
        .map(|(a, p)| {
            let (a, p) = (a?, p?);
            let mask = u32::MAX.checked_shl(32 - p).unwrap_or(0);
            Some((a & mask, (a & mask) | !mask))
        })
        .collect();
    let present = bounds.iter().map(Option::is_some).collect();
    let out = range(
        IpFamily::V4,
        ipv4_array(bounds.iter().map(|b| Some(b.map_or(0, |b| b.0)))),
        ipv4_array(bounds.iter().map(|b| Some(b.map_or(0, |b| b.1)))),
        present,
    );
    output(out, scalar)
}

fn ipv6_cidr_to_range(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let addresses = ipv6_values("ipv6_cidr_to_range", &arrays[0])?;
    let prefixes = prefixes("ipv6_cidr_to_range", &arrays, 128)?;
    let bounds: Vec<Option<(u128, u128)>> = addresses
        .into_iter()
        .zip(prefixes)
        .map(|(a, p)| {
            let (a, p) = (a?, p?);
            let mask = u128::MAX.checked_shl(128 - p).unwrap_or(0);
            Some((a & mask, (a & mask) | !mask))
        })
        .collect();
    let present = bounds.iter().map(Option::is_some).collect();
    let out = range(
        IpFamily::V6,
        ipv6_array(bounds.iter().map(|b| Some(b.map_or(0, |b| b.0)))),
        ipv6_array(bounds.iter().map(|b| Some(b.map_or(0, |b| b.1)))),
        present,
    );
    output(out, scalar)
}

fn ipv4_to_ipv6_function(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let addresses = ipv4_values("ipv4_to_ipv6", &arrays[0])?;
    output(
        ipv6_array(addresses.into_iter().map(|a| a.map(ipv4_to_ipv6))),
        scalar,
    )
}
