//! The Arrow → MySQL type mapping: column type, character set, display length, flags and
//! decimals of a result-set column, and the text-protocol encoding of each value, written
//! straight from Arrow arrays into the output buffer.

use std::io::Write;

use arrow::array::{
    Array, AsArray, BinaryArray, BinaryViewArray, BooleanArray, FixedSizeBinaryArray, Float16Array,
    LargeBinaryArray, LargeStringArray, StringArray, StringViewArray,
};
use arrow::buffer::NullBuffer;
use arrow::datatypes::{
    ArrowPrimitiveType, DataType, Date32Type, Date64Type, Decimal128Type, Decimal32Type,
    Decimal64Type, Field, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type,
    Time32MillisecondType, Time32SecondType, Time64MicrosecondType, Time64NanosecondType, TimeUnit,
    TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
    TimestampSecondType, UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};
use arrow::error::ArrowError;
use arrow::util::display::{ArrayFormatter, FormatOptions};

use super::wire::{put_lenenc_bytes, put_lenenc_with, NULL_MARKER};

/// MySQL column type codes (`enum_field_types`).
pub mod column_type {
    pub const TINY: u8 = 0x01;
    pub const SHORT: u8 = 0x02;
    pub const LONG: u8 = 0x03;
    pub const FLOAT: u8 = 0x04;
    pub const DOUBLE: u8 = 0x05;
    pub const NULL: u8 = 0x06;
    pub const BIT: u8 = 0x10;
    pub const TIMESTAMP: u8 = 0x07;
    pub const LONGLONG: u8 = 0x08;
    pub const DATE: u8 = 0x0a;
    pub const TIME: u8 = 0x0b;
    pub const DATETIME: u8 = 0x0c;
    pub const YEAR: u8 = 0x0d;
    pub const JSON: u8 = 0xf5;
    pub const NEWDECIMAL: u8 = 0xf6;
    pub const BLOB: u8 = 0xfc;
    pub const VAR_STRING: u8 = 0xfd;
    pub const STRING: u8 = 0xfe;
}

/// MySQL column definition flags.
pub mod column_flags {
    pub const NOT_NULL: u16 = 0x0001;
    pub const BLOB: u16 = 0x0010;
    pub const UNSIGNED: u16 = 0x0020;
    pub const ZEROFILL: u16 = 0x0040;
    pub const BINARY: u16 = 0x0080;
}

/// Collation id of the `binary` character set.
pub const CHARSET_BINARY: u16 = 63;
/// Collation id of utf8mb4_general_ci.
pub const CHARSET_UTF8MB4: u16 = 45;

/// `decimals` value MySQL uses for floating-point columns ("not fixed").
pub const NOT_FIXED_DEC: u8 = 31;

/// Display length announced for text columns (255 characters of up to 4 bytes).
pub const TEXT_COLUMN_LENGTH: u32 = 255 * 4;

/// What a ColumnDefinition41 says about a column's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ColumnMeta {
    pub column_type: u8,
    pub charset: u16,
    pub length: u32,
    pub flags: u16,
    pub decimals: u8,
}

impl ColumnMeta {
    fn binary(column_type: u8, length: u32, decimals: u8) -> Self {
        ColumnMeta {
            column_type,
            charset: CHARSET_BINARY,
            length,
            flags: column_flags::BINARY,
            decimals,
        }
    }

    fn unsigned(mut self) -> Self {
        self.flags |= column_flags::UNSIGNED;
        self
    }

    fn text() -> Self {
        ColumnMeta {
            column_type: column_type::VAR_STRING,
            charset: CHARSET_UTF8MB4,
            length: TEXT_COLUMN_LENGTH,
            flags: 0,
            decimals: 0,
        }
    }
}

/// Fractional-second digits shown for a time unit (MySQL's maximum is 6).
fn fsp(unit: TimeUnit) -> u8 {
    match unit {
        TimeUnit::Second => 0,
        TimeUnit::Millisecond => 3,
        TimeUnit::Microsecond | TimeUnit::Nanosecond => 6,
    }
}

fn decimal_meta(precision: u8, scale: i8) -> ColumnMeta {
    let decimals = scale.max(0) as u8;
    let extra_digits = u32::from(scale.min(0).unsigned_abs());
    ColumnMeta::binary(
        column_type::NEWDECIMAL,
        u32::from(precision) + extra_digits + 2,
        decimals,
    )
}

/// Column metadata for a result-set field.
pub fn column_meta(field: &Field) -> ColumnMeta {
    use column_type as t;
    let mut meta = match field.data_type() {
        // IPV4 / IPV6 values go as their text.
        _ if basalt_common::ip_address::ip_family(field).is_some() => ColumnMeta::text(),
        // BIT(n) values go as MySQL's BIT: ceil(n / 8) big-endian bytes, display length n.
        DataType::UInt64 if basalt_common::types::bit_width(field).is_some() => {
            let width = basalt_common::types::bit_width(field).unwrap_or(64);
            ColumnMeta::binary(t::BIT, u32::from(width), 0).unsigned()
        }
        // YEAR values go as MySQL's YEAR: four digits, zero-filled.
        DataType::Int16 if basalt_common::year::is_year(field) => {
            let mut meta = ColumnMeta::binary(t::YEAR, 4, 0).unsigned();
            meta.flags |= column_flags::ZEROFILL;
            meta
        }
        DataType::Null => ColumnMeta::binary(t::NULL, 0, 0),
        DataType::Boolean => ColumnMeta::binary(t::TINY, 1, 0),
        DataType::Int8 => ColumnMeta::binary(t::TINY, 4, 0),
        DataType::Int16 => ColumnMeta::binary(t::SHORT, 6, 0),
        DataType::Int32 => ColumnMeta::binary(t::LONG, 11, 0),
        DataType::Int64 => ColumnMeta::binary(t::LONGLONG, 20, 0),
        DataType::UInt8 => ColumnMeta::binary(t::TINY, 3, 0).unsigned(),
        DataType::UInt16 => ColumnMeta::binary(t::SHORT, 5, 0).unsigned(),
        DataType::UInt32 => ColumnMeta::binary(t::LONG, 10, 0).unsigned(),
        DataType::UInt64 => ColumnMeta::binary(t::LONGLONG, 20, 0).unsigned(),
        DataType::Float16 | DataType::Float32 => ColumnMeta::binary(t::FLOAT, 12, NOT_FIXED_DEC),
        DataType::Float64 => ColumnMeta::binary(t::DOUBLE, 22, NOT_FIXED_DEC),
        DataType::Decimal32(p, s)
        | DataType::Decimal64(p, s)
        | DataType::Decimal128(p, s)
        | DataType::Decimal256(p, s) => decimal_meta(*p, *s),
        DataType::Date32 | DataType::Date64 => ColumnMeta::binary(t::DATE, 10, 0),
        DataType::Timestamp(unit, None) => {
            let fsp = basalt_common::fraction_digits(field).unwrap_or(fsp(*unit));
            let length = if fsp == 0 { 19 } else { 20 + u32::from(fsp) };
            ColumnMeta::binary(t::DATETIME, length, fsp)
        }
        DataType::Time32(unit) | DataType::Time64(unit) => {
            let fsp = basalt_common::fraction_digits(field).unwrap_or(fsp(*unit));
            let length = if fsp == 0 { 10 } else { 11 + u32::from(fsp) };
            ColumnMeta::binary(t::TIME, length, fsp)
        }
        // JSON documents go as MySQL's JSON type (binary charset, as MySQL 8 sends them); so
        // do VARIANT values, a document or a value read at a path (as Doris sends them).
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
            if basalt_common::is_json_field(field)
                || basalt_common::variant::is_variant_field(field) =>
        {
            ColumnMeta {
                flags: column_flags::BINARY | column_flags::BLOB,
                ..ColumnMeta::binary(t::JSON, u32::MAX, 0)
            }
        }
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => ColumnMeta::text(),
        DataType::Binary | DataType::BinaryView => ColumnMeta {
            flags: column_flags::BINARY | column_flags::BLOB,
            ..ColumnMeta::binary(t::BLOB, 65_535, 0)
        },
        DataType::LargeBinary => ColumnMeta {
            flags: column_flags::BINARY | column_flags::BLOB,
            ..ColumnMeta::binary(t::BLOB, u32::MAX, 0)
        },
        DataType::FixedSizeBinary(n) => {
            ColumnMeta::binary(t::STRING, u32::try_from(*n).unwrap_or(0), 0)
        }
        // Timestamps with a time zone, intervals, nested types, dictionaries, ...
        _ => ColumnMeta::text(),
    };
    if !field.is_nullable() {
        meta.flags |= column_flags::NOT_NULL;
    }
    meta
}

/// How the values of one array are read (shared by the text and binary encoders).
pub(super) enum Kind<'a> {
    Bool(&'a BooleanArray),
    I8(&'a [i8]),
    I16(&'a [i16]),
    I32(&'a [i32]),
    I64(&'a [i64]),
    U8(&'a [u8]),
    U16(&'a [u16]),
    U32(&'a [u32]),
    U64(&'a [u64]),
    F16(&'a Float16Array),
    F32(&'a [f32]),
    F64(&'a [f64]),
    Dec32(&'a [i32], i8),
    Dec64(&'a [i64], i8),
    Dec128(&'a [i128], i8),
    Date32(&'a [i32]),
    Date64(&'a [i64]),
    Timestamp(&'a [i64], TimeUnit),
    Time32(&'a [i32], TimeUnit),
    Time64(&'a [i64], TimeUnit),
    Utf8(&'a StringArray),
    LargeUtf8(&'a LargeStringArray),
    Utf8View(&'a StringViewArray),
    Binary(&'a BinaryArray),
    LargeBinary(&'a LargeBinaryArray),
    BinaryView(&'a BinaryViewArray),
    FixedBinary(&'a FixedSizeBinaryArray),
    /// IPV4 addresses, written as their text.
    Ipv4(&'a [u32]),
    /// IPV6 addresses (16 big-endian bytes), written as their text.
    Ipv6(&'a BinaryArray),
    /// BIT(n) values, written as their last ceil(n / 8) big-endian bytes (the `usize`).
    Bits(&'a [u64], usize),
    /// YEAR values: four digits as text (`0000` for the zero year), two bytes in binary rows.
    Year(&'a [i16]),
    /// Every value is NULL (the Null type).
    Null,
    /// Arrays, maps and structs, in Doris's text.
    Nested(super::nested_text::NestedText<'a>),
    /// Any other type, through Arrow's display formatter.
    Formatted(ArrayFormatter<'a>),
}

/// Writes the values of one Arrow array as text-protocol row fields.
pub struct ValueWriter<'a> {
    len: usize,
    nulls: Option<NullBuffer>,
    kind: Kind<'a>,
    /// Fractional-second digits of a DATETIME(p)/TIME(p) column: exactly these are written.
    /// None: a fraction is written only when it is not zero, with the unit's digits.
    fraction_digits: Option<u8>,
}

fn prim<T: ArrowPrimitiveType>(array: &dyn Array) -> Option<&[T::Native]> {
    array.as_primitive_opt::<T>().map(|a| &**a.values())
}

impl<'a> ValueWriter<'a> {
    /// Prepares to write the values of `array`; fails only for types Arrow cannot display.
    pub fn new(array: &'a dyn Array) -> Result<Self, ArrowError> {
        let kind = Self::kind(array);
        let kind = match kind {
            Some(kind) => kind,
            None => Self::formatted(array)?,
        };
        Ok(ValueWriter {
            len: array.len(),
            nulls: array.logical_nulls(),
            kind,
            fraction_digits: None,
        })
    }

    /// A writer of `len` NULLs, whatever the column holds (BITMAP and HLL values Doris does not
    /// show).
    pub fn nulls(len: usize) -> Self {
        ValueWriter {
            len,
            nulls: None,
            kind: Kind::Null,
            fraction_digits: None,
        }
    }

    /// The writer of `array`, a column described by `field` (whose metadata may fix the
    /// fractional digits of times).
    pub fn for_field(array: &'a dyn Array, field: &Field) -> Result<Self, ArrowError> {
        let mut writer = Self::new(array)?;
        writer.fraction_digits = basalt_common::fraction_digits(field);
        if let Some(kind) = Self::address_kind(array, field) {
            writer.kind = kind;
        }
        Ok(writer)
    }

    /// How the values of an IPV4 / IPV6, BIT or YEAR column are read (None for other columns).
    pub(super) fn address_kind(array: &'a dyn Array, field: &Field) -> Option<Kind<'a>> {
        use basalt_common::ip_address::{ip_family, IpFamily};
        if let Some(width) = basalt_common::types::bit_width(field) {
            let bytes = usize::from(width).div_ceil(8);
            return prim::<UInt64Type>(array).map(|v| Kind::Bits(v, bytes));
        }
        if basalt_common::year::is_year(field) {
            return prim::<Int16Type>(array).map(Kind::Year);
        }
        match ip_family(field)? {
            IpFamily::V4 => prim::<UInt32Type>(array).map(Kind::Ipv4),
            IpFamily::V6 => array.as_binary_opt::<i32>().map(Kind::Ipv6),
        }
    }

    /// The writer of a type without a dedicated one: nested values in Doris's text, others
    /// through Arrow's display.
    pub(super) fn formatted(array: &'a dyn Array) -> Result<Kind<'a>, ArrowError> {
        Ok(match super::nested_text::NestedText::for_array(array) {
            Some(nested) => Kind::Nested(nested),
            None => Kind::Formatted(ArrayFormatter::try_new(array, &FormatOptions::new())?),
        })
    }

    pub(super) fn kind(array: &'a dyn Array) -> Option<Kind<'a>> {
        Some(match array.data_type() {
            DataType::Null => Kind::Null,
            DataType::Boolean => Kind::Bool(array.as_boolean_opt()?),
            DataType::Int8 => Kind::I8(prim::<Int8Type>(array)?),
            DataType::Int16 => Kind::I16(prim::<Int16Type>(array)?),
            DataType::Int32 => Kind::I32(prim::<Int32Type>(array)?),
            DataType::Int64 => Kind::I64(prim::<Int64Type>(array)?),
            DataType::UInt8 => Kind::U8(prim::<UInt8Type>(array)?),
            DataType::UInt16 => Kind::U16(prim::<UInt16Type>(array)?),
            DataType::UInt32 => Kind::U32(prim::<UInt32Type>(array)?),
            DataType::UInt64 => Kind::U64(prim::<UInt64Type>(array)?),
            DataType::Float16 => Kind::F16(array.as_any().downcast_ref()?),
            DataType::Float32 => Kind::F32(prim::<Float32Type>(array)?),
            DataType::Float64 => Kind::F64(prim::<Float64Type>(array)?),
            DataType::Decimal32(_, s) => Kind::Dec32(prim::<Decimal32Type>(array)?, *s),
            DataType::Decimal64(_, s) => Kind::Dec64(prim::<Decimal64Type>(array)?, *s),
            DataType::Decimal128(_, s) => Kind::Dec128(prim::<Decimal128Type>(array)?, *s),
            DataType::Date32 => Kind::Date32(prim::<Date32Type>(array)?),
            DataType::Date64 => Kind::Date64(prim::<Date64Type>(array)?),
            DataType::Timestamp(unit, None) => {
                let values = match unit {
                    TimeUnit::Second => prim::<TimestampSecondType>(array)?,
                    TimeUnit::Millisecond => prim::<TimestampMillisecondType>(array)?,
                    TimeUnit::Microsecond => prim::<TimestampMicrosecondType>(array)?,
                    TimeUnit::Nanosecond => prim::<TimestampNanosecondType>(array)?,
                };
                Kind::Timestamp(values, *unit)
            }
            DataType::Time32(unit @ TimeUnit::Second) => {
                Kind::Time32(prim::<Time32SecondType>(array)?, *unit)
            }
            DataType::Time32(unit @ TimeUnit::Millisecond) => {
                Kind::Time32(prim::<Time32MillisecondType>(array)?, *unit)
            }
            DataType::Time64(unit @ TimeUnit::Microsecond) => {
                Kind::Time64(prim::<Time64MicrosecondType>(array)?, *unit)
            }
            DataType::Time64(unit @ TimeUnit::Nanosecond) => {
                Kind::Time64(prim::<Time64NanosecondType>(array)?, *unit)
            }
            DataType::Utf8 => Kind::Utf8(array.as_string_opt::<i32>()?),
            DataType::LargeUtf8 => Kind::LargeUtf8(array.as_string_opt::<i64>()?),
            DataType::Utf8View => Kind::Utf8View(array.as_string_view_opt()?),
            DataType::Binary => Kind::Binary(array.as_binary_opt::<i32>()?),
            DataType::LargeBinary => Kind::LargeBinary(array.as_binary_opt::<i64>()?),
            DataType::BinaryView => Kind::BinaryView(array.as_binary_view_opt()?),
            DataType::FixedSizeBinary(_) => Kind::FixedBinary(array.as_fixed_size_binary_opt()?),
            _ => return None,
        })
    }

    /// Appends the field for `row`: a length-encoded string, or 0xFB for NULL (also for a row
    /// index outside the array).
    pub fn write(&self, row: usize, out: &mut Vec<u8>) {
        if row >= self.len || self.nulls.as_ref().is_some_and(|n| n.is_null(row)) {
            out.push(NULL_MARKER);
            return;
        }
        match &self.kind {
            Kind::Null => out.push(NULL_MARKER),
            Kind::Bool(a) => put_lenenc_bytes(out, if a.value(row) { b"1" } else { b"0" }),
            Kind::I8(v) => with_value(out, v, row, |o, x| push_i64(o, x.into())),
            Kind::I16(v) => with_value(out, v, row, |o, x| push_i64(o, x.into())),
            Kind::I32(v) => with_value(out, v, row, |o, x| push_i64(o, x.into())),
            Kind::I64(v) => with_value(out, v, row, push_i64),
            Kind::U8(v) => with_value(out, v, row, |o, x| push_u64(o, x.into())),
            Kind::U16(v) => with_value(out, v, row, |o, x| push_u64(o, x.into())),
            Kind::U32(v) => with_value(out, v, row, |o, x| push_u64(o, x.into())),
            Kind::U64(v) => with_value(out, v, row, push_u64),
            Kind::F16(a) => put_lenenc_with(out, |o| push_f32(o, a.value(row).to_f32())),
            Kind::F32(v) => with_value(out, v, row, push_f32),
            Kind::F64(v) => with_value(out, v, row, push_f64),
            Kind::Dec32(v, s) => with_value(out, v, row, |o, x| push_decimal(o, x.into(), *s)),
            Kind::Dec64(v, s) => with_value(out, v, row, |o, x| push_decimal(o, x.into(), *s)),
            Kind::Dec128(v, s) => with_value(out, v, row, |o, x| push_decimal(o, x, *s)),
            Kind::Date32(v) => with_value(out, v, row, |o, x| push_date(o, x.into())),
            Kind::Date64(v) => {
                with_value(out, v, row, |o, x| push_date(o, x.div_euclid(86_400_000)))
            }
            Kind::Timestamp(v, unit) => with_value(out, v, row, |o, x| {
                push_datetime(o, x, *unit);
                self.fix_fraction(o, *unit);
            }),
            Kind::Time32(v, unit) => with_value(out, v, row, |o, x| {
                push_time(o, x.into(), *unit);
                self.fix_fraction(o, *unit);
            }),
            Kind::Time64(v, unit) => with_value(out, v, row, |o, x| {
                push_time(o, x, *unit);
                self.fix_fraction(o, *unit);
            }),
            Kind::Utf8(a) => put_lenenc_bytes(out, a.value(row).as_bytes()),
            Kind::LargeUtf8(a) => put_lenenc_bytes(out, a.value(row).as_bytes()),
            Kind::Utf8View(a) => put_lenenc_bytes(out, a.value(row).as_bytes()),
            Kind::Binary(a) => put_lenenc_bytes(out, a.value(row)),
            Kind::LargeBinary(a) => put_lenenc_bytes(out, a.value(row)),
            Kind::BinaryView(a) => put_lenenc_bytes(out, a.value(row)),
            Kind::FixedBinary(a) => put_lenenc_bytes(out, a.value(row)),
            Kind::Ipv4(_) | Kind::Ipv6(_) => put_address(&self.kind, row, out),
            Kind::Bits(v, bytes) => put_bits(v[row], *bytes, out),
            Kind::Year(v) => put_lenenc_with(out, |o| {
                let _ = write!(o, "{:04}", v[row]);
            }),
            Kind::Nested(n) => put_lenenc_bytes(out, n.text(row).as_bytes()),
            Kind::Formatted(f) => put_lenenc_with(out, |o| {
                // Writing to a Vec cannot fail; a display error leaves partial text.
                let _ = write!(o, "{}", f.value(row));
            }),
        }
    }
}

/// Writes the address at `row` of an IPV4 / IPV6 kind as a length-encoded string (an IPV6
/// value that is not 16 bytes goes as its bytes).
pub(super) fn put_address(kind: &Kind<'_>, row: usize, out: &mut Vec<u8>) {
    use basalt_common::ip_address::{format_ipv4, format_ipv6, ipv6_from_bytes};
    match kind {
        Kind::Ipv4(v) => with_value(out, v, row, |o, x| {
            o.extend_from_slice(format_ipv4(x).as_bytes())
        }),
        Kind::Ipv6(a) => match ipv6_from_bytes(a.value(row)) {
            Some(v) => put_lenenc_bytes(out, format_ipv6(v).as_bytes()),
            None => put_lenenc_bytes(out, a.value(row)),
        },
        _ => out.push(NULL_MARKER),
    }
}

/// Writes a BIT value as a length-encoded string of its last `bytes` big-endian bytes.
pub(super) fn put_bits(value: u64, bytes: usize, out: &mut Vec<u8>) {
    let be = value.to_be_bytes();
    put_lenenc_bytes(out, &be[be.len() - bytes.min(be.len())..]);
}

/// Writes `values[row]` as a length-encoded field using `push` for the text (NULL if absent).
fn with_value<T: Copy>(
    out: &mut Vec<u8>,
    values: &[T],
    row: usize,
    push: impl FnOnce(&mut Vec<u8>, T),
) {
    match values.get(row) {
        Some(&x) => put_lenenc_with(out, |o| push(o, x)),
        None => out.push(NULL_MARKER),
    }
}

/// Appends the decimal digits of `v`.
pub fn push_u64(out: &mut Vec<u8>, v: u64) {
    push_u128(out, u128::from(v));
}

/// Appends `v` in decimal with a leading '-' when negative.
pub fn push_i64(out: &mut Vec<u8>, v: i64) {
    if v < 0 {
        out.push(b'-');
    }
    push_u64(out, v.unsigned_abs());
}

fn push_u128(out: &mut Vec<u8>, mut v: u128) {
    // Use 64-bit arithmetic whenever the value fits: it is much cheaper than 128-bit division.
    let mut buf = [0u8; 40];
    let mut i = buf.len();
    if let Ok(mut small) = u64::try_from(v) {
        loop {
            i -= 1;
            buf[i] = b'0' + (small % 10) as u8;
            small /= 10;
            if small == 0 {
                break;
            }
        }
    } else {
        loop {
            i -= 1;
            buf[i] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
    }
    out.extend_from_slice(&buf[i..]);
}

/// Doubles: shortest round-trip text, integral values without ".0", exponent form for very
/// large or very small magnitudes (as MySQL prints them), and "inf", "-inf", "NaN". A
/// negative zero prints as "0", as MySQL prints it (`SELECT -0e1` is 0).
pub fn push_f64(out: &mut Vec<u8>, v: f64) {
    let a = v.abs();
    let _ = if v.is_nan() {
        write!(out, "NaN")
    } else if a == 0.0 {
        write!(out, "0")
    } else if a.is_infinite() || (1e-4..1e15).contains(&a) {
        write!(out, "{v}")
    } else {
        write!(out, "{v:e}")
    };
}

/// Like [`push_f64`], with single-precision shortest round-trip digits.
pub fn push_f32(out: &mut Vec<u8>, v: f32) {
    let a = v.abs();
    let _ = if v.is_nan() {
        write!(out, "NaN")
    } else if a == 0.0 {
        write!(out, "0")
    } else if a.is_infinite() || (1e-4..1e15).contains(&a) {
        write!(out, "{v}")
    } else {
        write!(out, "{v:e}")
    };
}

/// A scaled integer with exactly `scale` fractional digits ("1.50" for 150 at scale 2); a
/// negative scale multiplies by a power of ten.
pub fn push_decimal(out: &mut Vec<u8>, v: i128, scale: i8) {
    if v < 0 {
        out.push(b'-');
    }
    let abs = v.unsigned_abs();
    if scale <= 0 {
        push_u128(out, abs);
        if abs != 0 {
            out.extend(std::iter::repeat_n(b'0', usize::from(scale.unsigned_abs())));
        }
        return;
    }
    let scale = usize::from(scale.unsigned_abs());
    let start = out.len();
    push_u128(out, abs);
    let digits = out.len() - start;
    if digits <= scale {
        // 0.00ddd: insert "0." and the missing leading zeros before the digits.
        let zeros = std::iter::once(b'0')
            .chain(std::iter::once(b'.'))
            .chain(std::iter::repeat_n(b'0', scale - digits));
        out.splice(start..start, zeros);
    } else {
        out.insert(out.len() - scale, b'.');
    }
}

/// (year, month, day) of a day count since 1970-01-01, proleptic Gregorian calendar.
pub(super) fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days.saturating_add(719_468);
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era.saturating_mul(400) + i64::from(month <= 2);
    (year, month, day)
}

fn push_2(out: &mut Vec<u8>, v: u64) {
    out.push(b'0' + ((v / 10) % 10) as u8);
    out.push(b'0' + (v % 10) as u8);
}

fn push_year(out: &mut Vec<u8>, year: i64) {
    if (0..=9999).contains(&year) {
        let y = year as u64;
        push_2(out, y / 100);
        push_2(out, y % 100);
    } else {
        push_i64(out, year);
    }
}

/// "YYYY-MM-DD" for a day count since the Unix epoch.
pub fn push_date(out: &mut Vec<u8>, days: i64) {
    let (y, m, d) = civil_from_days(days);
    push_year(out, y);
    out.push(b'-');
    push_2(out, m.into());
    out.push(b'-');
    push_2(out, d.into());
}

/// Splits a count of `unit` into whole seconds (floored) and the non-negative remainder, expressed
/// in microseconds (nanoseconds are truncated) or milliseconds (for `Millisecond`).
pub(super) fn split_seconds(v: i64, unit: TimeUnit) -> (i64, u64) {
    let per_second = match unit {
        TimeUnit::Second => 1,
        TimeUnit::Millisecond => 1_000,
        TimeUnit::Microsecond => 1_000_000,
        TimeUnit::Nanosecond => 1_000_000_000,
    };
    let frac = v.rem_euclid(per_second) as u64;
    let frac = if unit == TimeUnit::Nanosecond {
        frac / 1000
    } else {
        frac
    };
    (v.div_euclid(per_second), frac)
}

/// ".fff" / ".ffffff" when `frac` is non-zero.
impl ValueWriter<'_> {
    /// Makes the time just written show the column's fractional digits: pads a missing or
    /// short fraction with zeros and cuts trailing zeros beyond them. Digits that are not zero
    /// are never cut: a value with more precision than its column says (a UNION of DATETIME(3)
    /// and DATETIME(0) columns, say) keeps it.
    fn fix_fraction(&self, out: &mut Vec<u8>, unit: TimeUnit) {
        let Some(digits) = self.fraction_digits.map(usize::from) else {
            return;
        };
        let written_digits = fsp(unit) as usize;
        // The time text ends "..SS" or "..SS.ffffff" (the unit's digits).
        let dot = out.len().saturating_sub(written_digits + 1);
        let has_fraction = written_digits > 0 && out.get(dot) == Some(&b'.');
        if has_fraction {
            let fraction = &out[dot + 1..];
            let significant = fraction
                .iter()
                .rposition(|d| *d != b'0')
                .map_or(0, |last| last + 1);
            let shown = significant.max(digits);
            if shown == 0 {
                out.truncate(dot);
            } else if shown < fraction.len() {
                out.truncate(dot + 1 + shown);
            }
        } else if digits > 0 {
            out.push(b'.');
            out.extend(std::iter::repeat_n(b'0', digits));
        }
    }
}

fn push_fraction(out: &mut Vec<u8>, frac: u64, unit: TimeUnit) {
    let digits = usize::from(fsp(unit));
    if frac == 0 || digits == 0 {
        return;
    }
    out.push(b'.');
    let start = out.len();
    push_u64(out, frac);
    let written = out.len() - start;
    if written < digits {
        out.splice(start..start, std::iter::repeat_n(b'0', digits - written));
    }
}

fn push_hms(out: &mut Vec<u8>, seconds: u64) {
    push_2(out, (seconds / 3600) % 100);
    out.push(b':');
    push_2(out, (seconds / 60) % 60);
    out.push(b':');
    push_2(out, seconds % 60);
}

/// "YYYY-MM-DD HH:MM:SS[.fraction]" for a timestamp without time zone.
pub fn push_datetime(out: &mut Vec<u8>, v: i64, unit: TimeUnit) {
    let (secs, frac) = split_seconds(v, unit);
    push_date(out, secs.div_euclid(86_400));
    out.push(b' ');
    push_hms(out, secs.rem_euclid(86_400) as u64);
    push_fraction(out, frac, unit);
}

/// "[-]HH:MM:SS[.fraction]" for a time of day or duration (hours may exceed 23).
pub fn push_time(out: &mut Vec<u8>, v: i64, unit: TimeUnit) {
    if v < 0 {
        out.push(b'-');
    }
    let magnitude = i64::try_from(v.unsigned_abs()).unwrap_or(i64::MAX);
    let (secs, frac) = split_seconds(magnitude, unit);
    let secs = secs as u64;
    let hours = secs / 3600;
    if hours < 100 {
        push_2(out, hours);
    } else {
        push_u64(out, hours);
    }
    out.push(b':');
    push_2(out, (secs / 60) % 60);
    out.push(b':');
    push_2(out, secs % 60);
    push_fraction(out, frac, unit);
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::ArrayRef;
    use arrow::array::{
        Date32Array, Date64Array, Decimal128Array, Decimal256Array, DictionaryArray, Float32Array,
        Float64Array, Int16Array, Int32Array, Int64Array, Int8Array, NullArray,
        Time32MillisecondArray, Time32SecondArray, Time64MicrosecondArray, Time64NanosecondArray,
        TimestampMicrosecondArray, TimestampMillisecondArray, TimestampNanosecondArray,
        TimestampSecondArray, UInt16Array, UInt32Array, UInt64Array, UInt8Array,
    };
    use arrow::datatypes::{i256, Int32Type as DictKey};

    use super::super::wire::Reader;
    use super::*;

    /// The text each row of `array` encodes to (None for NULL).
    fn texts(array: &dyn Array) -> Vec<Option<String>> {
        let writer = ValueWriter::new(array).unwrap();
        let mut out = Vec::new();
        for row in 0..array.len() {
            writer.write(row, &mut out);
        }
        let mut r = Reader::new(&out);
        let mut result = Vec::new();
        while !r.is_empty() {
            if r.clone().u8() == Ok(NULL_MARKER) {
                r.u8().unwrap();
                result.push(None);
            } else {
                let bytes = r.lenenc_bytes().unwrap();
                result.push(Some(String::from_utf8_lossy(bytes).into_owned()));
            }
        }
        assert_eq!(result.len(), array.len());
        result
    }

    fn strs(array: &dyn Array) -> Vec<String> {
        texts(array)
            .into_iter()
            .map(|t| t.unwrap_or_else(|| "NULL".into()))
            .collect()
    }

    fn meta(dt: DataType, nullable: bool) -> ColumnMeta {
        column_meta(&Field::new("c", dt, nullable))
    }

    #[test]
    fn integer_mapping_and_values() {
        use column_flags::*;
        use column_type::*;
        assert_eq!(
            meta(DataType::Int8, true),
            ColumnMeta {
                column_type: TINY,
                charset: 63,
                length: 4,
                flags: BINARY,
                decimals: 0
            }
        );
        assert_eq!(meta(DataType::Int16, true).column_type, SHORT);
        assert_eq!(meta(DataType::Int32, true).column_type, LONG);
        assert_eq!(meta(DataType::Int64, false).column_type, LONGLONG);
        assert_eq!(meta(DataType::Int64, false).flags, BINARY | NOT_NULL);
        for (dt, ty) in [
            (DataType::UInt8, TINY),
            (DataType::UInt16, SHORT),
            (DataType::UInt32, LONG),
            (DataType::UInt64, LONGLONG),
        ] {
            let m = meta(dt, true);
            assert_eq!(m.column_type, ty);
            assert_eq!(m.flags, BINARY | UNSIGNED);
            assert_eq!(m.charset, CHARSET_BINARY);
        }

        assert_eq!(
            strs(&Int8Array::from(vec![Some(-128), None, Some(127)])),
            ["-128", "NULL", "127"]
        );
        assert_eq!(strs(&Int16Array::from(vec![i16::MIN, 0])), ["-32768", "0"]);
        assert_eq!(
            strs(&Int32Array::from(vec![i32::MIN, 42])),
            ["-2147483648", "42"]
        );
        assert_eq!(
            strs(&Int64Array::from(vec![i64::MIN, i64::MAX])),
            ["-9223372036854775808", "9223372036854775807"]
        );
        assert_eq!(strs(&UInt8Array::from(vec![255u8])), ["255"]);
        assert_eq!(strs(&UInt16Array::from(vec![65535u16])), ["65535"]);
        assert_eq!(strs(&UInt32Array::from(vec![u32::MAX])), ["4294967295"]);
        assert_eq!(
            strs(&UInt64Array::from(vec![u64::MAX, 0])),
            ["18446744073709551615", "0"]
        );
        // Sliced arrays use the slice's own offsets.
        let sliced = Int32Array::from(vec![Some(1), None, Some(3), Some(4)]).slice(1, 2);
        assert_eq!(strs(&sliced), ["NULL", "3"]);
    }

    #[test]
    fn boolean_mapping_and_values() {
        let m = meta(DataType::Boolean, true);
        assert_eq!(
            (m.column_type, m.length, m.charset),
            (column_type::TINY, 1, 63)
        );
        assert_eq!(
            strs(&BooleanArray::from(vec![Some(true), Some(false), None])),
            ["1", "0", "NULL"]
        );
    }

    #[test]
    fn float_mapping_and_values() {
        let m = meta(DataType::Float64, true);
        assert_eq!(
            (m.column_type, m.decimals, m.flags),
            (column_type::DOUBLE, 31, column_flags::BINARY)
        );
        let m = meta(DataType::Float32, true);
        assert_eq!((m.column_type, m.decimals), (column_type::FLOAT, 31));
        assert_eq!(
            strs(&Float64Array::from(vec![
                1.0,
                -2.5,
                0.1,
                1.0 / 3.0,
                0.0,
                f64::INFINITY,
                f64::NEG_INFINITY,
                f64::NAN,
                1e300,
                1.5e-7,
                123456789.0,
            ])),
            [
                "1",
                "-2.5",
                "0.1",
                "0.3333333333333333",
                "0",
                "inf",
                "-inf",
                "NaN",
                "1e300",
                "1.5e-7",
                "123456789"
            ]
        );
        assert_eq!(
            strs(&Float32Array::from(vec![0.1f32, 3.0, f32::NAN])),
            ["0.1", "3", "NaN"]
        );
        let half =
            arrow::compute::cast(&Float32Array::from(vec![1.5f32]), &DataType::Float16).unwrap();
        assert_eq!(strs(half.as_ref()), ["1.5"]);
    }

    #[test]
    fn decimal_mapping_and_values() {
        let m = meta(DataType::Decimal128(10, 2), true);
        assert_eq!(
            m,
            ColumnMeta {
                column_type: column_type::NEWDECIMAL,
                charset: 63,
                length: 12,
                flags: column_flags::BINARY,
                decimals: 2
            }
        );
        let a = Decimal128Array::from(vec![
            Some(150),
            Some(-5),
            Some(0),
            None,
            Some(123_456),
            Some(-100),
        ])
        .with_precision_and_scale(10, 2)
        .unwrap();
        assert_eq!(
            strs(&a),
            ["1.50", "-0.05", "0.00", "NULL", "1234.56", "-1.00"]
        );
        let a = Decimal128Array::from(vec![7, -7])
            .with_precision_and_scale(5, 0)
            .unwrap();
        assert_eq!(strs(&a), ["7", "-7"]);
        let a = Decimal128Array::from(vec![7, 0])
            .with_precision_and_scale(5, -2)
            .unwrap();
        assert_eq!(strs(&a), ["700", "0"]);
        let a = Decimal128Array::from(vec![i128::MIN + 1])
            .with_precision_and_scale(38, 38)
            .unwrap();
        assert_eq!(strs(&a), ["-1.70141183460469231731687303715884105727"]);
        let a = Decimal128Array::from(vec![1])
            .with_precision_and_scale(38, 10)
            .unwrap();
        assert_eq!(strs(&a), ["0.0000000001"]);
    }

    #[test]
    fn decimal256_and_other_types_use_display() {
        let m = meta(DataType::Decimal256(40, 2), true);
        assert_eq!((m.column_type, m.decimals), (column_type::NEWDECIMAL, 2));
        let a = Decimal256Array::from(vec![Some(i256::from_i128(150)), None])
            .with_precision_and_scale(40, 2)
            .unwrap();
        assert_eq!(strs(&a), ["1.50", "NULL"]);
        let dict: DictionaryArray<DictKey> = vec![Some("a"), None, Some("b")].into_iter().collect();
        assert_eq!(
            meta(dict.data_type().clone(), true).column_type,
            column_type::VAR_STRING
        );
        assert_eq!(strs(&dict), ["a", "NULL", "b"]);
    }

    #[test]
    fn date_mapping_and_values() {
        let m = meta(DataType::Date32, true);
        assert_eq!(
            (m.column_type, m.length, m.flags),
            (column_type::DATE, 10, column_flags::BINARY)
        );
        let a = Date32Array::from(vec![
            Some(0),
            Some(19_782),
            Some(-1),
            Some(-719_528),
            Some(11_016),
            None,
        ]);
        assert_eq!(
            strs(&a),
            [
                "1970-01-01",
                "2024-02-29",
                "1969-12-31",
                "0000-01-01",
                "2000-02-29",
                "NULL"
            ]
        );
        let a = Date64Array::from(vec![86_400_000 * 31]);
        assert_eq!(strs(&a), ["1970-02-01"]);
        // Far outside MySQL's range, still no panic.
        let a = Date32Array::from(vec![i32::MAX, i32::MIN]);
        assert_eq!(texts(&a).len(), 2);
    }

    #[test]
    fn timestamp_mapping_and_values() {
        let m = meta(DataType::Timestamp(TimeUnit::Microsecond, None), false);
        assert_eq!(
            m,
            ColumnMeta {
                column_type: column_type::DATETIME,
                charset: 63,
                length: 26,
                flags: column_flags::BINARY | column_flags::NOT_NULL,
                decimals: 6
            }
        );
        assert_eq!(
            meta(DataType::Timestamp(TimeUnit::Second, None), true).length,
            19
        );
        let a = TimestampMicrosecondArray::from(vec![
            0,
            1_700_000_000_123_456,
            1_700_000_000_000_000,
            1_700_000_000_000_001,
            -1,
        ]);
        assert_eq!(
            strs(&a),
            [
                "1970-01-01 00:00:00",
                "2023-11-14 22:13:20.123456",
                "2023-11-14 22:13:20",
                "2023-11-14 22:13:20.000001",
                "1969-12-31 23:59:59.999999"
            ]
        );
        assert_eq!(
            strs(&TimestampSecondArray::from(vec![86_399])),
            ["1970-01-01 23:59:59"]
        );
        assert_eq!(
            strs(&TimestampMillisecondArray::from(vec![1_500, 2_000])),
            ["1970-01-01 00:00:01.500", "1970-01-01 00:00:02"]
        );
        assert_eq!(
            strs(&TimestampNanosecondArray::from(vec![1_000_001_500, 5])),
            ["1970-01-01 00:00:01.000001", "1970-01-01 00:00:00"]
        );
        // With a time zone: Arrow's display text.
        let tz = TimestampSecondArray::from(vec![0]).with_timezone("+00:00");
        assert_eq!(
            meta(tz.data_type().clone(), true).column_type,
            column_type::VAR_STRING
        );
        assert_eq!(strs(&tz), ["1970-01-01T00:00:00Z"]);
    }

    #[test]
    fn time_mapping_and_values() {
        let m = meta(DataType::Time64(TimeUnit::Microsecond), true);
        assert_eq!(
            (m.column_type, m.decimals, m.length),
            (column_type::TIME, 6, 17)
        );
        assert_eq!(meta(DataType::Time32(TimeUnit::Second), true).length, 10);
        let a = Time64MicrosecondArray::from(vec![0, 3_723_000_000, 86_399_999_999, 3_723_000_500]);
        assert_eq!(
            strs(&a),
            ["00:00:00", "01:02:03", "23:59:59.999999", "01:02:03.000500"]
        );
        assert_eq!(
            strs(&Time64NanosecondArray::from(vec![1_000_001_999])),
            ["00:00:01.000001"]
        );
        assert_eq!(
            strs(&Time32SecondArray::from(vec![45_296, -3_600])),
            ["12:34:56", "-01:00:00"]
        );
        assert_eq!(
            strs(&Time32MillisecondArray::from(vec![1_001])),
            ["00:00:01.001"]
        );
        assert_eq!(
            strs(&Time32SecondArray::from(vec![400 * 3600])),
            ["400:00:00"]
        );
        assert_eq!(
            texts(&Time64MicrosecondArray::from(vec![i64::MIN])).len(),
            1
        );
    }

    #[test]
    fn string_and_binary_mapping_and_values() {
        let m = meta(DataType::Utf8, true);
        assert_eq!(
            m,
            ColumnMeta {
                column_type: column_type::VAR_STRING,
                charset: 45,
                length: 1020,
                flags: 0,
                decimals: 0
            }
        );
        assert_eq!(meta(DataType::LargeUtf8, true), m);
        assert_eq!(meta(DataType::Utf8View, true), m);
        assert_eq!(
            strs(&StringArray::from(vec![Some("héllo"), None, Some("")])),
            ["héllo", "NULL", ""]
        );
        assert_eq!(strs(&LargeStringArray::from(vec!["x"])), ["x"]);
        assert_eq!(
            strs(&StringViewArray::from(vec![
                "a much longer string than twelve bytes"
            ])),
            ["a much longer string than twelve bytes"]
        );
        let long = "y".repeat(70_000);
        let got = strs(&StringArray::from(vec![long.as_str()]));
        assert_eq!(got, [long]);

        let m = meta(DataType::Binary, true);
        assert_eq!(
            (m.column_type, m.charset),
            (column_type::BLOB, CHARSET_BINARY)
        );
        assert_ne!(m.flags & column_flags::BINARY, 0);
        let a = BinaryArray::from(vec![Some(&b"\x00\xff"[..]), None]);
        let writer = ValueWriter::new(&a).unwrap();
        let mut out = Vec::new();
        writer.write(0, &mut out);
        writer.write(1, &mut out);
        writer.write(2, &mut out); // out of range: NULL, no panic
        assert_eq!(out, [2, 0x00, 0xff, 0xfb, 0xfb]);
    }

    #[test]
    fn declared_fraction_digits_are_shown_without_hiding_precision() {
        let values = TimestampMicrosecondArray::from(vec![1_500_000, 2_000_000, 3_123_456]);
        let shown = |digits: &str| {
            let field = Field::new("t", values.data_type().clone(), true).with_metadata(
                std::collections::HashMap::from([(
                    basalt_common::types::FRACTION_DIGITS_KEY.to_string(),
                    digits.to_string(),
                )]),
            );
            let writer = ValueWriter::for_field(&values, &field).unwrap();
            (0..values.len())
                .map(|row| {
                    let mut out = Vec::new();
                    writer.write(row, &mut out);
                    String::from_utf8_lossy(&out[1..]).into_owned()
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(
            shown("3"),
            [
                "1970-01-01 00:00:01.500",
                "1970-01-01 00:00:02.000",
                "1970-01-01 00:00:03.123456"
            ]
        );
        // DATETIME(0) metadata on a value with a fraction (a UNION with a DATETIME(3)
        // column): the fraction stays.
        assert_eq!(
            shown("0"),
            [
                "1970-01-01 00:00:01.5",
                "1970-01-01 00:00:02",
                "1970-01-01 00:00:03.123456"
            ]
        );
    }

    #[test]
    fn null_type() {
        let m = meta(DataType::Null, true);
        assert_eq!((m.column_type, m.length), (column_type::NULL, 0));
        assert_eq!(texts(&NullArray::new(2)), [None, None]);
    }

    #[test]
    fn decimal_helper_edge_cases() {
        let mut out = Vec::new();
        push_decimal(&mut out, 0, 3);
        assert_eq!(out, b"0.000");
        let arr: ArrayRef = Arc::new(Int32Array::from(vec![5]));
        assert_eq!(strs(arr.as_ref()), ["5"]);
    }
}
