//! Tests on text and addresses: `is_ipv4_string` / `is_ipv6_string` (the text, spaces around
//! it allowed, is an address), `is_ipv4_compat` / `is_ipv4_mapped` (16 bytes of the form
//! `::a.b.c.d` / `::ffff:a.b.c.d`) and `is_ip_address_in_range(address, 'net/prefix')`, which
//! fails on text that is no address or subnet, as Doris does. NULL in, NULL out.

use super::arguments::{any_null, booleans, byte_values, texts};
use super::{function, Returns};
use crate::util::{arguments, output};
use basalt_common::ip_address::{ipv6_from_bytes, parse_ipv4, parse_ipv6, IpValue};
use datafusion::arrow::array::{Array, AsArray};
use datafusion::arrow::datatypes::{DataType, UInt32Type};
use datafusion::common::{exec_err, Result};
use datafusion::logical_expr::{ColumnarValue, ScalarFunctionArgs, ScalarUDF};

pub(super) fn functions() -> Vec<ScalarUDF> {
    let boolean = || Returns::Plain(DataType::Boolean);
    vec![
        function("is_ipv4_string", 1, boolean(), is_ipv4_string),
        function("is_ipv6_string", 1, boolean(), is_ipv6_string),
        function("is_ipv4_compat", 1, boolean(), is_ipv4_compat),
        function("is_ipv4_mapped", 1, boolean(), is_ipv4_mapped),
        function(
            "is_ip_address_in_range",
            2,
            boolean(),
            is_ip_address_in_range,
        ),
    ]
}

fn text_test(args: &ScalarFunctionArgs, test: fn(&str) -> bool) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let out = booleans(texts(&arrays[0])?.iter().map(|t| t.map(test)));
    output(out, scalar)
}

fn is_ipv4_string(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    text_test(args, |t| parse_ipv4(t.trim()).is_some())
}

fn is_ipv6_string(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    text_test(args, |t| t.len() <= 39 && parse_ipv6(t.trim()).is_some())
}

fn bytes_test(args: &ScalarFunctionArgs, test: fn(&[u8; 16]) -> bool) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let out = booleans(
        byte_values(&arrays[0])?
            .into_iter()
            .map(|b| b.map(|b| ipv6_from_bytes(&b).is_some_and(|v| test(&v.to_be_bytes())))),
    );
    output(out, scalar)
}

fn is_ipv4_compat(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    bytes_test(args, |b| {
        b[..12].iter().all(|x| *x == 0) && b[12..] != [0; 4]
    })
}

fn is_ipv4_mapped(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    bytes_test(args, |b| {
        b[..10].iter().all(|x| *x == 0) && b[10..12] == [0xff, 0xff]
    })
}

/// A subnet: its address and prefix length.
struct Subnet {
    address: IpValue,
    prefix: u32,
}

/// `address/prefix` (the prefix at most 32 for IPv4, 128 for IPv6).
fn parse_subnet(text: &str) -> Result<Subnet> {
    let Some((address, prefix)) = text.split_once('/') else {
        return exec_err!("is_ip_address_in_range: The text does not contain '/': {text}");
    };
    let address = parse_address(address)?;
    let max = match address {
        IpValue::V4(_) => 32,
        IpValue::V6(_) => 128,
    };
    match prefix.parse::<u32>() {
        Ok(p) if p <= max && prefix.bytes().all(|b| b.is_ascii_digit()) => {
            Ok(Subnet { address, prefix: p })
        }
        _ => exec_err!("is_ip_address_in_range: The CIDR has a malformed prefix bits: {text}"),
    }
}

fn parse_address(text: &str) -> Result<IpValue> {
    if let Some(v4) = parse_ipv4(text) {
        return Ok(IpValue::V4(v4));
    }
    match parse_ipv6(text) {
        Some(v6) => Ok(IpValue::V6(v6)),
        None => exec_err!("is_ip_address_in_range: Neither IPv4 nor IPv6 address: '{text}'"),
    }
}

/// The address is in the subnet (an IPv4 address is in no IPv6 subnet and the other way).
fn contains(subnet: &Subnet, address: IpValue) -> bool {
    match (subnet.address, address) {
        (IpValue::V4(net), IpValue::V4(a)) => {
            let mask = u32::MAX.checked_shl(32 - subnet.prefix).unwrap_or(0);
            net & mask == a & mask
        }
        (IpValue::V6(net), IpValue::V6(a)) => {
            let mask = u128::MAX.checked_shl(128 - subnet.prefix).unwrap_or(0);
            net & mask == a & mask
        }
        _ => false,
    }
}

fn is_ip_address_in_range(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let (addresses, subnets) = (&arrays[0], texts(&arrays[1])?);
    let mut out = Vec::with_capacity(addresses.len());
    let text_addresses = match addresses.data_type() {
        DataType::UInt32 | DataType::Binary | DataType::Null => None,
        _ => Some(texts(addresses)?),
    };
    for row in 0..addresses.len() {
        if any_null(&arrays, row) {
            out.push(None);
            continue;
        }
        let subnet = parse_subnet(subnets.value(row))?;
        let address = match (&text_addresses, addresses.data_type()) {
            (Some(t), _) => parse_address(t.value(row))?,
            (None, DataType::UInt32) => {
                IpValue::V4(addresses.as_primitive::<UInt32Type>().value(row))
            }
            (None, _) => match ipv6_from_bytes(addresses.as_binary::<i32>().value(row)) {
                Some(v) => IpValue::V6(v),
                None => return exec_err!("is_ip_address_in_range: expected an IPv6 address"),
            },
        };
        out.push(Some(contains(&subnet, address)));
    }
    output(booleans(out), scalar)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subnets_contain_addresses() {
        let net = parse_subnet("192.168.0.0/16").unwrap();
        assert!(contains(&net, IpValue::V4(0xc0a8_0501)));
        assert!(!contains(&net, IpValue::V4(0xc0a9_0001)));
        let all = parse_subnet("0.0.0.0/0").unwrap();
        assert!(contains(&all, IpValue::V4(u32::MAX)));
        let v6 = parse_subnet("::ffff:192.168.0.4/128").unwrap();
        assert!(contains(&v6, parse_address("::ffff:192.168.0.4").unwrap()));
        assert!(!contains(&v6, IpValue::V4(0xc0a8_0004)));
        assert!(parse_subnet("192.168.0.0").is_err());
        assert!(parse_subnet("192.168.0.0/33").is_err());
        assert!(parse_subnet("x/8").is_err());
    }
}
