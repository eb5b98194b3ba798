//! IPv4 and IPv6 addresses as Doris reads and writes them: dotted quads and RFC 5952 text (an
//! IPv4-mapped address shows its dotted quad, `::ffff:1.2.3.4`), IPV4 values stored as Arrow
//! `UInt32` and IPV6 values as 16 big-endian bytes in Arrow `Binary` (both order like the
//! addresses), and the field mark telling an address column from a plain number or bytes.

use arrow::array::{Array, ArrayRef, BinaryArray, StringArray, UInt32Array};
use arrow::datatypes::{DataType, Field};
use std::collections::HashMap;
use std::sync::Arc;

use crate::types::EXTENSION_NAME_KEY;

/// The extension name marking an IPV4 field (Arrow `UInt32`).
pub const IPV4_EXTENSION_NAME: &str = "basalt.ipv4";
/// The extension name marking an IPV6 field (Arrow `Binary`, 16 big-endian bytes).
pub const IPV6_EXTENSION_NAME: &str = "basalt.ipv6";

/// Bytes of an IPv6 address.
pub const IPV6_BYTES: usize = 16;

/// Which address family a column holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IpFamily {
    V4,
    V6,
}

impl IpFamily {
    /// The Arrow type values of this family are stored and computed as.
    pub fn arrow_type(self) -> DataType {
        match self {
            IpFamily::V4 => DataType::UInt32,
            IpFamily::V6 => DataType::Binary,
        }
    }

    /// The field metadata marking a field of this family.
    pub fn metadata(self) -> HashMap<String, String> {
        let name = match self {
            IpFamily::V4 => IPV4_EXTENSION_NAME,
            IpFamily::V6 => IPV6_EXTENSION_NAME,
        };
        HashMap::from([(EXTENSION_NAME_KEY.to_string(), name.to_string())])
    }

    /// A nullable field of this family named `name`.
    pub fn field(self, name: &str, nullable: bool) -> Field {
        Field::new(name, self.arrow_type(), nullable).with_metadata(self.metadata())
    }

    /// The SQL type name (IPV4 / IPV6).
    pub fn sql_name(self) -> &'static str {
        match self {
            IpFamily::V4 => "IPV4",
            IpFamily::V6 => "IPV6",
        }
    }

    /// Address text to a stored value (`None` when the text is no address of this family).
    pub fn parse_text(self, text: &str) -> Option<IpValue> {
        match self {
            IpFamily::V4 => parse_ipv4(text.trim()).map(IpValue::V4),
            IpFamily::V6 => parse_ipv6(text.trim()).map(IpValue::V6),
        }
    }
}

/// One address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IpValue {
    V4(u32),
    V6(u128),
}

/// The address family of a field marked as IPV4 or IPV6 (with the matching Arrow type).
pub fn ip_family(field: &Field) -> Option<IpFamily> {
    let family = match field.metadata().get(EXTENSION_NAME_KEY)?.as_str() {
        IPV4_EXTENSION_NAME => IpFamily::V4,
        IPV6_EXTENSION_NAME => IpFamily::V6,
        _ => return None,
    };
    (field.data_type() == &family.arrow_type()).then_some(family)
}

/// Parses a whole dotted quad `a.b.c.d` (each part 0..=255, up to three digits); no spaces.
pub fn parse_ipv4(text: &str) -> Option<u32> {
    let mut value = 0u32;
    let mut parts = 0;
    for part in text.split('.') {
        parts += 1;
        if parts > 4
            || part.is_empty()
            || part.len() > 3
            || !part.bytes().all(|b| b.is_ascii_digit())
        {
            return None;
        }
        let octet: u32 = part.parse().ok()?;
        if octet > 255 {
            return None;
        }
        value = (value << 8) | octet;
    }
    (parts == 4).then_some(value)
}

/// Parses whole IPv6 text: up to eight groups of one to four hex digits, one `::` for a run of
/// zero groups, and a trailing dotted quad for the last 32 bits (`::ffff:1.2.3.4`); no spaces.
pub fn parse_ipv6(text: &str) -> Option<u128> {
    if text.is_empty() {
        return None;
    }
    let (head, tail) = match text.find("::") {
        Some(at) => (&text[..at], Some(&text[at + 2..])),
        None => (text, None),
    };
    if tail.is_some_and(|t| t.contains("::")) {
        return None;
    }
    let mut front = groups(head, tail.is_none())?;
    match tail {
        None => (front.len() == 8).then_some(())?,
        Some(tail) => {
            let back = groups(tail, true)?;
            if front.len() + back.len() > 7 {
                return None;
            }
            front.resize(8 - back.len(), 0);
            front.extend(back);
        }
    }
    Some(
        front
            .iter()
            .fold(0u128, |acc, g| (acc << 16) | u128::from(*g)),
    )
}

/// The 16-bit groups of colon-separated text (empty text: none); a dotted quad may end it
/// when it ends the address.
fn groups(text: &str, ends_address: bool) -> Option<Vec<u16>> {
    if text.is_empty() {
        return Some(Vec::new());
    }
    let parts: Vec<&str> = text.split(':').collect();
    let mut out = Vec::with_capacity(8);
    for (i, part) in parts.iter().enumerate() {
        if ends_address && i == parts.len() - 1 && part.contains('.') {
            let v4 = parse_ipv4(part)?;
            out.push((v4 >> 16) as u16);
            out.push(v4 as u16);
        } else {
            if part.is_empty() || part.len() > 4 || !part.bytes().all(|b| b.is_ascii_hexdigit()) {
                return None;
            }
            out.push(u16::from_str_radix(part, 16).ok()?);
        }
    }
    (out.len() <= 8).then_some(out)
}

/// `a.b.c.d`.
pub fn format_ipv4(v: u32) -> String {
    let [a, b, c, d] = v.to_be_bytes();
    format!("{a}.{b}.{c}.{d}")
}

/// RFC 5952 text of an address, as Doris writes it: lowercase groups without leading zeros,
/// the longest run of two or more zero groups (the first of equal ones) as `::`, and the
/// dotted quad for IPv4-mapped (`::ffff:a.b.c.d`) and IPv4-compatible (`::a.b.c.d`) ones.
pub fn format_ipv6(v: u128) -> String {
    format_ipv6_cut(v.to_be_bytes(), 0)
}

/// [`format_ipv6`] of the address with its last `zeroed_tail` bytes set to zero (Doris's
/// `cut_ipv6`; the zero run is looked for after cutting).
pub fn format_ipv6_cut(bytes: [u8; IPV6_BYTES], zeroed_tail: usize) -> String {
    let keep = IPV6_BYTES.saturating_sub(zeroed_tail);
    let mut cut = [0u8; IPV6_BYTES];
    cut[..keep].copy_from_slice(&bytes[..keep]);
    let words: Vec<u16> = cut
        .chunks(2)
        .map(|w| u16::from_be_bytes([w[0], w[1]]))
        .collect();
    // The longest run of zero words (the first of equal ones), if two or more long.
    let (mut best, mut run) = ((0usize, 0usize), (0usize, 0usize));
    for (i, w) in words.iter().enumerate() {
        if *w == 0 {
            if run.1 == 0 {
                run = (i, 0);
            }
            run.1 += 1;
            if run.1 > best.1 {
                best = run;
            }
        } else {
            run.1 = 0;
        }
    }
    let (base, len) = if best.1 >= 2 { best } else { (usize::MAX, 0) };
    let mut out = String::with_capacity(39);
    let mut i = 0;
    while i < 8 {
        if i == base {
            out.push(':');
            i += len;
            if i == 8 {
                out.push(':');
            }
            continue;
        }
        if i != 0 {
            out.push(':');
        }
        let embeds_ipv4 = i == 6 && base == 0 && (len == 6 || (len == 5 && words[5] == 0xffff));
        if embeds_ipv4 {
            let quad = [cut[12], cut[13], cut[14], cut[15]];
            out.push_str(&format_ipv4(u32::from_be_bytes(quad)));
            break;
        }
        out.push_str(&format!("{:x}", words[i]));
        i += 1;
    }
    out
}

/// The IPv6 form of an IPv4 address: `::ffff:a.b.c.d`.
pub fn ipv4_to_ipv6(v: u32) -> u128 {
    (0xffffu128 << 32) | u128::from(v)
}

/// An IPV6 value as stored (16 big-endian bytes); `None` for any other length.
pub fn ipv6_from_bytes(bytes: &[u8]) -> Option<u128> {
    <[u8; IPV6_BYTES]>::try_from(bytes)
        .ok()
        .map(u128::from_be_bytes)
}

/// Text values read as addresses of `family` (surrounding spaces allowed); rows that are no
/// address become NULL and are listed.
pub fn ip_column(strings: &StringArray, family: IpFamily) -> (ArrayRef, Vec<usize>) {
    let mut failed = Vec::new();
    let mut parse = |row: usize, text: Option<&str>| {
        let value = text.map(|t| family.parse_text(t));
        if let Some(None) = value {
            failed.push(row);
        }
        value.flatten()
    };
    let array: ArrayRef = match family {
        IpFamily::V4 => Arc::new(
            strings
                .iter()
                .enumerate()
                .map(|(row, t)| match parse(row, t) {
                    Some(IpValue::V4(v)) => Some(v),
                    _ => None,
                })
                .collect::<UInt32Array>(),
        ),
        IpFamily::V6 => Arc::new(
            strings
                .iter()
                .enumerate()
                .map(|(row, t)| match parse(row, t) {
                    Some(IpValue::V6(v)) => Some(v.to_be_bytes()),
                    _ => None,
                })
                .collect::<BinaryArray>(),
        ),
    };
    (array, failed)
}

/// The text of row `row` of an IPV4 (`UInt32`) or IPV6 (16-byte `Binary`) array; `None` for
/// NULL or a value of another shape.
pub fn ip_text(array: &dyn Array, family: IpFamily, row: usize) -> Option<String> {
    use arrow::array::AsArray;
    if array.is_null(row) {
        return None;
    }
    match family {
        IpFamily::V4 => array
            .as_primitive_opt::<arrow::datatypes::UInt32Type>()
            .map(|a| format_ipv4(a.value(row))),
        IpFamily::V6 => array
            .as_binary_opt::<i32>()
            .and_then(|a| ipv6_from_bytes(a.value(row)))
            .map(format_ipv6),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v6(text: &str) -> String {
        format_ipv6(parse_ipv6(text).unwrap())
    }

    #[test]
    fn ipv4_text() {
        assert_eq!(parse_ipv4("192.168.0.1"), Some(0xc0a8_0001));
        assert_eq!(parse_ipv4("255.255.255.255"), Some(u32::MAX));
        assert_eq!(parse_ipv4("0.0.0.0"), Some(0));
        for bad in [
            "",
            ".",
            "0.0.0.",
            "1.2.3",
            "1.2.3.4.5",
            "255.255.255.256",
            "1.2.3.a",
        ] {
            assert_eq!(parse_ipv4(bad), None, "{bad}");
        }
        assert_eq!(parse_ipv4(" 1.2.3.4"), None);
        assert_eq!(format_ipv4(0x7f00_0001), "127.0.0.1");
    }

    #[test]
    fn ipv6_text() {
        assert_eq!(parse_ipv6("::"), Some(0));
        assert_eq!(parse_ipv6("::1"), Some(1));
        assert_eq!(
            v6("2001:0DB8:AC10:FE01:FEED:BABE:CAFE:F00D"),
            "2001:db8:ac10:fe01:feed:babe:cafe:f00d"
        );
        assert_eq!(v6("2001:1b70:a1:610::b102:2"), "2001:1b70:a1:610::b102:2");
        assert_eq!(v6("2001:db8:0:0:1:0:0:1"), "2001:db8::1:0:0:1");
        assert_eq!(
            v6("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"),
            "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"
        );
        assert_eq!(v6("::ffff:1.2.3.4"), "::ffff:1.2.3.4");
        assert_eq!(v6("::1.2.3.4"), "::1.2.3.4");
        assert_eq!(v6("1::"), "1::");
        assert_eq!(v6("1:0:2:3:4:5:6:7"), "1:0:2:3:4:5:6:7");
        for bad in [
            "",
            ":",
            ":::",
            "1::2::3",
            "ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffg",
            "1:2:3:4:5:6:7",
            "1:2:3:4:5:6:7:8:9",
            "12345::",
            "1.2.3.4",
            "::1.2.3",
            ":1::",
            "1:",
            "1.2.3.4::",
            "::+1",
        ] {
            assert_eq!(parse_ipv6(bad), None, "{bad}");
        }
        assert_eq!(format_ipv6(ipv4_to_ipv6(0)), "::ffff:0.0.0.0");
    }

    #[test]
    fn cut_addresses() {
        let mapped = ipv4_to_ipv6(0xc0a8_0001).to_be_bytes();
        assert_eq!(format_ipv6_cut(mapped, 2), "::ffff:192.168.0.0");
        assert_eq!(format_ipv6_cut(mapped, 8), "::");
        let a = parse_ipv6("2001:1b70:a1:610::b102:2")
            .unwrap()
            .to_be_bytes();
        assert_eq!(format_ipv6_cut(a, 4), "2001:1b70:a1:610::");
        assert_eq!(
            format_ipv6_cut(u128::MAX.to_be_bytes(), 8),
            "ffff:ffff:ffff:ffff::"
        );
        assert_eq!(format_ipv6_cut(1u128.to_be_bytes(), 2), "::");
    }
}
