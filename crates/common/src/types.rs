//! The column types a Basalt table can declare (Doris names) and how each maps to Arrow.

use arrow::datatypes::{DataType, Field, Fields, TimeUnit};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use crate::ip_address::IpFamily;

/// The field metadata key of Arrow's extension types, and the canonical JSON extension's name:
/// a JSON column is UTF-8 text marked with it, so the protocol layer can tell JSON from text.
pub const EXTENSION_NAME_KEY: &str = "ARROW:extension:name";
pub const JSON_EXTENSION_NAME: &str = "arrow.json";

/// The field metadata key holding the fractional-second digits a DATETIME(p) or TIME(p) value
/// is shown with (MySQL shows exactly p digits).
pub const FRACTION_DIGITS_KEY: &str = "basalt:fraction_digits";

/// The declared fractional-second digits of a DATETIME/TIME field, when it has them.
pub fn fraction_digits(field: &Field) -> Option<u8> {
    field
        .metadata()
        .get(FRACTION_DIGITS_KEY)
        .and_then(|d| d.parse().ok())
        .filter(|d| *d <= 6)
}

/// The field metadata key naming a sketch column's kind (`bitmap`, `hll` or `quantile_state`):
/// the sketches and VARBINARY are all Arrow `Binary`, and COUNT(DISTINCT ..) of a BITMAP counts its members.
pub const SKETCH_KEY: &str = "basalt:sketch";

/// The sketch kind (`"bitmap"`, `"hll"` or `"quantile_state"`) an Arrow field holds, if it holds one.
pub fn sketch_kind(field: &Field) -> Option<&str> {
    field.metadata().get(SKETCH_KEY).map(String::as_str)
}

/// A BIT(n) column's field is marked as Arrow extension type `basalt.bit`, the declared width
/// `n` (1..=64) its extension metadata: its values are Arrow `UInt64`, and MySQL clients get
/// them as `n`-bit strings (MYSQL_TYPE_BIT). A cast drops the mark, as MySQL's CAST gives a
/// number.
pub const BIT_EXTENSION_NAME: &str = "basalt.bit";
/// Arrow's field metadata key of an extension type's parameters (here a BIT's width).
pub const EXTENSION_METADATA_KEY: &str = "ARROW:extension:metadata";

/// Widest BIT column MySQL declares.
pub const MAX_BIT_WIDTH: u8 = 64;

/// The field metadata of a BIT(width) column.
pub fn bit_metadata(width: u8) -> HashMap<String, String> {
    HashMap::from([
        (
            EXTENSION_NAME_KEY.to_string(),
            BIT_EXTENSION_NAME.to_string(),
        ),
        (EXTENSION_METADATA_KEY.to_string(), width.to_string()),
    ])
}

/// The declared width of a BIT(n) field, when it is one.
pub fn bit_width(field: &Field) -> Option<u8> {
    let metadata = field.metadata();
    if field.data_type() != &DataType::UInt64
        || metadata.get(EXTENSION_NAME_KEY).map(String::as_str) != Some(BIT_EXTENSION_NAME)
    {
        return None;
    }
    metadata
        .get(EXTENSION_METADATA_KEY)
        .and_then(|n| n.parse().ok())
        .filter(|n| (1..=MAX_BIT_WIDTH).contains(n))
}

/// True when `value` fits in `width` bits.
pub fn fits_bits(value: u64, width: u8) -> bool {
    width >= 64 || value >> width == 0
}

/// The field metadata key marking a DECIMAL(39, 0) column: it is Decimal256(39, 0) in Arrow,
/// like LARGEINT, and where only the field is known (a view's columns) the mark tells them apart.
pub const DECIMAL_KEY: &str = "basalt:decimal";

/// True when an Arrow field is Decimal256(39, 0) holding a LARGEINT, not a DECIMAL(39, 0).
pub fn is_largeint_field(field: &Field) -> bool {
    field.data_type() == &DataType::Decimal256(LARGEINT_PRECISION, 0)
        && !field.metadata().contains_key(DECIMAL_KEY)
}

/// True when an Arrow field carries JSON documents (Arrow's `arrow.json` extension type).
pub fn is_json_field(field: &Field) -> bool {
    field
        .metadata()
        .get(EXTENSION_NAME_KEY)
        .is_some_and(|name| name == JSON_EXTENSION_NAME)
}

/// Largest DECIMAL precision Basalt stores: Doris's DECIMALV3(76, s), as Arrow Decimal256.
pub const MAX_DECIMAL_PRECISION: u8 = 76;
/// Largest DECIMAL precision stored as Decimal128; wider ones are Decimal256.
pub const MAX_DECIMAL128_PRECISION: u8 = 38;
/// Doris's old DECIMALV2 holds at most 27 digits, 9 of them after the point.
pub const MAX_DECIMALV2_PRECISION: u8 = 27;
pub const MAX_DECIMALV2_SCALE: u8 = 9;
/// Digits of LARGEINT: i128 values have up to 39.
pub const LARGEINT_PRECISION: u8 = 39;

/// The first microsecond past MySQL's last DATETIME (10000-01-01 00:00:00 UTC).
const PAST_LAST_DATETIME_MICROS: i64 = 253_402_300_800_000_000;

/// A microsecond timestamp rounded to `scale` fractional digits (0..=6), half up on the
/// fraction, as MySQL 8 and Doris round a DATETIME(scale); cut instead where rounding up
/// would pass 9999-12-31 23:59:59.999999 (as MariaDB does: no year 10000).
pub fn round_micros(micros: i64, scale: u8) -> i64 {
    if scale >= 6 {
        return micros;
    }
    let unit = 10i64.pow(6 - scale as u32);
    let fraction = micros.rem_euclid(unit);
    let down = micros - fraction;
    if fraction * 2 >= unit && down.saturating_add(unit) < PAST_LAST_DATETIME_MICROS {
        down + unit
    } else {
        down
    }
}

/// A column type as declared in DDL.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum SqlType {
    Boolean,
    TinyInt,
    SmallInt,
    Int,
    BigInt,
    /// 128-bit integer, stored as Decimal256(39, 0) limited to the i128 range.
    LargeInt,
    /// MySQL's TINYINT UNSIGNED .. BIGINT UNSIGNED (MEDIUMINT UNSIGNED is INT UNSIGNED):
    /// Arrow's UInt8 .. UInt64, 0 up to 255, 65535, 4294967295 and 18446744073709551615.
    TinyIntUnsigned,
    SmallIntUnsigned,
    IntUnsigned,
    BigIntUnsigned,
    Float,
    Double,
    Decimal {
        precision: u8,
        scale: i8,
    },
    Date,
    /// Microsecond precision timestamp without time zone; `scale` is the declared fraction digits.
    DateTime {
        scale: u8,
    },
    /// MySQL's TIME: a time of day, 00:00:00 to 23:59:59.999999 (MySQL's TIME also holds
    /// spans up to 838 hours; Basalt's holds one day), microseconds as stored.
    Time {
        scale: u8,
    },
    /// MySQL's BIT(n): an unsigned number of `n` bits (1..=64), stored as Arrow `UInt64`.
    Bit(u8),
    /// MySQL's YEAR: 1901 to 2155 or the zero year, stored as Arrow `Int16` (see
    /// [`crate::year`]).
    Year,
    /// CHAR(n) and VARCHAR(n) hold up to `n` characters (UTF-8 code points), as MySQL counts.
    Char(u32),
    Varchar(u32),
    String,
    /// Doris BITMAP: a roaring bitmap of 64-bit ids, stored as `Binary` in the
    /// serialized form of [`crate::bitmap_value::BitmapValue`].
    Bitmap,
    /// Doris HLL: a HyperLogLog sketch, stored as `Binary` in the serialized form of
    /// [`crate::hll_value::HllValue`].
    Hll,
    /// Doris QUANTILE_STATE: a group's values for percentiles, stored as `Binary` in the
    /// serialized form of [`crate::quantile_value::QuantileState`].
    QuantileState,
    /// MySQL BINARY(n): exactly `n` bytes, shorter values padded with 0x00.
    Binary(u32),
    /// VARBINARY(n): up to `n` bytes.
    Varbinary(u32),
    /// BLOB and its TINY/MEDIUM/LONG forms: bytes without a declared limit.
    Blob,
    /// JSON (Doris's JSONB too): documents stored as validated, compact JSON text.
    Json,
    /// ARRAY<T>: a list of T, elements nullable.
    Array(Box<SqlType>),
    /// MAP<K, V>: key/value entries in insertion order, values nullable.
    Map(Box<SqlType>, Box<SqlType>),
    /// STRUCT<name:T, ...>: named fields, each nullable.
    Struct(Vec<StructField>),
    /// Doris IPV4: an address stored as Arrow `UInt32` (orders like the addresses).
    Ipv4,
    /// Doris IPV6: an address stored as 16 big-endian bytes in Arrow `Binary`.
    Ipv6,
    /// Doris VARIANT: semi-structured JSON read by path (`v['a']['b']`), stored like JSON
    /// (see [`crate::variant`]).
    Variant,
}

/// One field of a STRUCT type.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StructField {
    pub name: String,
    pub ty: SqlType,
}

impl SqlType {
    /// The Arrow type this column is stored and computed as.
    pub fn arrow_type(&self) -> DataType {
        match self {
            SqlType::Boolean => DataType::Boolean,
            SqlType::TinyInt => DataType::Int8,
            SqlType::SmallInt | SqlType::Year => DataType::Int16,
            SqlType::Int => DataType::Int32,
            SqlType::BigInt => DataType::Int64,
            SqlType::TinyIntUnsigned => DataType::UInt8,
            SqlType::SmallIntUnsigned => DataType::UInt16,
            SqlType::IntUnsigned => DataType::UInt32,
            SqlType::BigIntUnsigned => DataType::UInt64,
            SqlType::Bit(_) => DataType::UInt64,
            SqlType::LargeInt => DataType::Decimal256(LARGEINT_PRECISION, 0),
            SqlType::Float => DataType::Float32,
            SqlType::Double => DataType::Float64,
            SqlType::Decimal { precision, scale } if *precision > MAX_DECIMAL128_PRECISION => {
                DataType::Decimal256(*precision, *scale)
            }
            SqlType::Decimal { precision, scale } => DataType::Decimal128(*precision, *scale),
            SqlType::Date => DataType::Date32,
            SqlType::DateTime { .. } => DataType::Timestamp(TimeUnit::Microsecond, None),
            SqlType::Time { .. } => DataType::Time64(TimeUnit::Microsecond),
            SqlType::Char(_)
            | SqlType::Varchar(_)
            | SqlType::String
            | SqlType::Json
            | SqlType::Variant => DataType::Utf8,
            SqlType::Bitmap
            | SqlType::Hll
            | SqlType::QuantileState
            | SqlType::Binary(_)
            | SqlType::Varbinary(_)
            | SqlType::Blob => DataType::Binary,
            SqlType::Array(element) => DataType::List(Arc::new(element.arrow_field("item", true))),
            SqlType::Map(key, value) => DataType::Map(
                Arc::new(Field::new(
                    "entries",
                    DataType::Struct(Fields::from(vec![
                        key.arrow_field("key", false),
                        value.arrow_field("value", true),
                    ])),
                    false,
                )),
                false,
            ),
            SqlType::Struct(fields) => DataType::Struct(
                fields
                    .iter()
                    .map(|f| f.ty.arrow_field(&f.name, true))
                    .collect(),
            ),
            SqlType::Ipv4 => IpFamily::V4.arrow_type(),
            SqlType::Ipv6 => IpFamily::V6.arrow_type(),
        }
    }

    /// The address family of an IPV4 / IPV6 column.
    pub fn ip_family(&self) -> Option<IpFamily> {
        match self {
            SqlType::Ipv4 => Some(IpFamily::V4),
            SqlType::Ipv6 => Some(IpFamily::V6),
            _ => None,
        }
    }

    /// The Arrow field a column (or nested element) of this type is: its Arrow type, for JSON
    /// the `arrow.json` extension marker, for DATETIME(p)/TIME(p) the digits it shows, for
    /// BITMAP/HLL the sketch kind, for IPV4/IPV6 the address family, for VARIANT the JSON
    /// marker and its own.
    pub fn arrow_field(&self, name: &str, nullable: bool) -> Field {
        let field = Field::new(name, self.arrow_type(), nullable);
        match self {
            SqlType::Variant => field.with_metadata(crate::variant::column_metadata()),
            SqlType::Json => field.with_metadata(HashMap::from([(
                EXTENSION_NAME_KEY.to_string(),
                JSON_EXTENSION_NAME.to_string(),
            )])),
            SqlType::DateTime { scale } | SqlType::Time { scale } => field.with_metadata(
                HashMap::from([(FRACTION_DIGITS_KEY.to_string(), scale.to_string())]),
            ),
            SqlType::Decimal {
                precision: LARGEINT_PRECISION,
                scale: 0,
            } => field.with_metadata(HashMap::from([(DECIMAL_KEY.to_string(), "true".into())])),
            SqlType::Bit(width) => field.with_metadata(bit_metadata(*width)),
            SqlType::Year => field.with_metadata(crate::year::year_metadata()),
            SqlType::Bitmap => {
                field.with_metadata(HashMap::from([(SKETCH_KEY.to_string(), "bitmap".into())]))
            }
            SqlType::Hll => {
                field.with_metadata(HashMap::from([(SKETCH_KEY.to_string(), "hll".into())]))
            }
            SqlType::QuantileState => field.with_metadata(HashMap::from([(
                SKETCH_KEY.to_string(),
                "quantile_state".into(),
            )])),
            SqlType::Ipv4 | SqlType::Ipv6 => match self.ip_family() {
                Some(family) => field.with_metadata(family.metadata()),
                None => field,
            },
            _ => field,
        }
    }

    /// True for the types whose values have parts (ARRAY, MAP, STRUCT): they cannot be keys,
    /// partition or bucket columns, and have no zone maps.
    pub fn is_nested(&self) -> bool {
        matches!(
            self,
            SqlType::Array(_) | SqlType::Map(..) | SqlType::Struct(_)
        )
    }

    /// True for types that cannot be key columns in Doris: sketches, JSON, VARIANT, nested
    /// types; BIT (which Doris has not) is no key either.
    pub fn can_be_key(&self) -> bool {
        !(self.is_sketch()
            || self.is_nested()
            || matches!(self, SqlType::Json | SqlType::Variant | SqlType::Bit(_)))
    }

    /// True for byte-string types (BINARY, VARBINARY, BLOB).
    pub fn is_binary(&self) -> bool {
        matches!(
            self,
            SqlType::Binary(_) | SqlType::Varbinary(_) | SqlType::Blob
        )
    }

    /// True for the sketch types (BITMAP, HLL, QUANTILE_STATE): opaque binary values that can only be
    /// aggregated by their own union and cannot be keys.
    pub fn is_sketch(&self) -> bool {
        matches!(
            self,
            SqlType::Bitmap | SqlType::Hll | SqlType::QuantileState
        )
    }

    /// The type a column declared `UNSIGNED` (or `ZEROFILL`, which implies it) has: the
    /// integers' unsigned forms; DECIMAL, FLOAT and DOUBLE keep their type (MySQL 8 deprecates
    /// UNSIGNED on them); other types take no sign.
    pub fn unsigned(self) -> Result<SqlType, String> {
        Ok(match self {
            SqlType::TinyInt | SqlType::TinyIntUnsigned => SqlType::TinyIntUnsigned,
            SqlType::SmallInt | SqlType::SmallIntUnsigned => SqlType::SmallIntUnsigned,
            SqlType::Int | SqlType::IntUnsigned => SqlType::IntUnsigned,
            SqlType::BigInt | SqlType::BigIntUnsigned => SqlType::BigIntUnsigned,
            SqlType::Float | SqlType::Double | SqlType::Decimal { .. } => self,
            other => return Err(format!("UNSIGNED does not apply to type {other}")),
        })
    }

    /// The values an integer column holds, as `(min, max)`; None for other types.
    pub fn integer_range(&self) -> Option<(i128, i128)> {
        Some(match self {
            SqlType::TinyInt => (i8::MIN.into(), i8::MAX.into()),
            SqlType::SmallInt => (i16::MIN.into(), i16::MAX.into()),
            SqlType::Int => (i32::MIN.into(), i32::MAX.into()),
            SqlType::BigInt => (i64::MIN.into(), i64::MAX.into()),
            SqlType::LargeInt => (i128::MIN, i128::MAX),
            SqlType::TinyIntUnsigned => (0, u8::MAX.into()),
            SqlType::SmallIntUnsigned => (0, u16::MAX.into()),
            SqlType::IntUnsigned => (0, u32::MAX.into()),
            SqlType::BigIntUnsigned => (0, u64::MAX.into()),
            _ => return None,
        })
    }

    /// True for the UNSIGNED integer types.
    pub fn is_unsigned(&self) -> bool {
        matches!(
            self,
            SqlType::TinyIntUnsigned
                | SqlType::SmallIntUnsigned
                | SqlType::IntUnsigned
                | SqlType::BigIntUnsigned
        )
    }

    /// Builds a type from its DDL name (case-insensitive) and optional numeric arguments.
    pub fn from_name(name: &str, args: &[u64]) -> Result<SqlType, String> {
        let arg = |i: usize| args.get(i).copied();
        let upper = name.to_ascii_uppercase();
        let ty = match upper.as_str() {
            "BOOLEAN" | "BOOL" => SqlType::Boolean,
            "TINYINT" => SqlType::TinyInt,
            "SMALLINT" => SqlType::SmallInt,
            // MySQL's YEAR(2) is gone (MariaDB still has it); both are the four-digit YEAR.
            "YEAR" => match arg(0).unwrap_or(4) {
                2 | 4 => SqlType::Year,
                n => return Err(format!("YEAR({n}): a YEAR has 4 digits")),
            },
            "INT" | "INTEGER" => SqlType::Int,
            "BIGINT" => SqlType::BigInt,
            "LARGEINT" => SqlType::LargeInt,
            "BIT" => match arg(0).unwrap_or(1) {
                n @ 1..=64 => SqlType::Bit(n as u8),
                n => return Err(format!("BIT length {n} out of range 1..={MAX_BIT_WIDTH}")),
            },
            "FLOAT" => SqlType::Float,
            "DOUBLE" => SqlType::Double,
            // Doris's DECIMALV2 (at most 27 digits, 9 after the point) is stored as the DECIMAL
            // of the same precision and scale.
            "DECIMALV2" => {
                let precision = arg(0).unwrap_or(9);
                let scale = arg(1).unwrap_or(0);
                if precision == 0 || precision > MAX_DECIMALV2_PRECISION as u64 {
                    return Err(format!(
                        "DECIMALV2 precision {precision} out of range 1..={MAX_DECIMALV2_PRECISION}"
                    ));
                }
                if scale > MAX_DECIMALV2_SCALE as u64 || scale > precision {
                    return Err(format!(
                        "DECIMALV2 scale {scale} out of range 0..={}",
                        precision.min(MAX_DECIMALV2_SCALE as u64)
                    ));
                }
                SqlType::Decimal {
                    precision: precision as u8,
                    scale: scale as i8,
                }
            }
            "DECIMAL" | "DECIMALV3" | "NUMERIC" => {
                // Doris's DECIMALV3 without a precision is DECIMALV3(38, 9).
                let (default_precision, default_scale) = match (upper.as_str(), args.len()) {
                    ("DECIMALV3", 0) => (38, 9),
                    _ => (9, 0),
                };
                let precision = arg(0).unwrap_or(default_precision);
                let scale = arg(1).unwrap_or(default_scale);
                if precision == 0 || precision > MAX_DECIMAL_PRECISION as u64 {
                    return Err(format!(
                        "DECIMAL precision {precision} out of range 1..={MAX_DECIMAL_PRECISION}"
                    ));
                }
                if scale > precision {
                    return Err(format!(
                        "DECIMAL scale {scale} is larger than precision {precision}"
                    ));
                }
                SqlType::Decimal {
                    precision: precision as u8,
                    scale: scale as i8,
                }
            }
            "DATE" | "DATEV2" | "DATEV1" => SqlType::Date,
            "DATETIME" | "DATETIMEV2" | "DATETIMEV1" => {
                let scale = arg(0).unwrap_or(0);
                if scale > 6 {
                    return Err(format!("DATETIME scale {scale} out of range 0..=6"));
                }
                SqlType::DateTime { scale: scale as u8 }
            }
            "CHAR" => SqlType::Char(arg(0).unwrap_or(1).clamp(1, 255) as u32),
            "VARCHAR" => SqlType::Varchar(arg(0).unwrap_or(65533).clamp(1, 1_048_576) as u32),
            "STRING" | "TEXT" | "TINYTEXT" | "MEDIUMTEXT" | "LONGTEXT" => SqlType::String,
            // MySQL's TIMESTAMP is Basalt's DATETIME: both hold a wall-clock time without a zone.
            "TIMESTAMP" => {
                let scale = arg(0).unwrap_or(0);
                if scale > 6 {
                    return Err(format!("TIMESTAMP scale {scale} out of range 0..=6"));
                }
                SqlType::DateTime { scale: scale as u8 }
            }
            "TIME" => {
                let scale = arg(0).unwrap_or(0);
                if scale > 6 {
                    return Err(format!("TIME scale {scale} out of range 0..=6"));
                }
                SqlType::Time { scale: scale as u8 }
            }
            "REAL" => SqlType::Double,
            "BITMAP" => SqlType::Bitmap,
            "HLL" => SqlType::Hll,
            "QUANTILE_STATE" => SqlType::QuantileState,
            "BINARY" => SqlType::Binary(arg(0).unwrap_or(1).clamp(1, 255) as u32),
            "VARBINARY" => match arg(0) {
                Some(n) if (1..=1_048_576).contains(&n) => SqlType::Varbinary(n as u32),
                Some(n) => return Err(format!("VARBINARY length {n} out of range 1..=1048576")),
                None => return Err("VARBINARY needs a length, as VARBINARY(n)".into()),
            },
            "BLOB" | "TINYBLOB" | "MEDIUMBLOB" | "LONGBLOB" => SqlType::Blob,
            "JSON" | "JSONB" => SqlType::Json,
            "IPV4" => SqlType::Ipv4,
            "IPV6" => SqlType::Ipv6,
            "VARIANT" => SqlType::Variant,
            other => return Err(format!("unknown column type '{other}'")),
        };
        Ok(ty)
    }

    /// The MySQL `DATA_TYPE` word used by information_schema.columns.
    pub fn data_type_name(&self) -> &'static str {
        match self {
            SqlType::Boolean => "tinyint",
            SqlType::TinyInt => "tinyint",
            SqlType::SmallInt => "smallint",
            SqlType::Int => "int",
            SqlType::BigInt => "bigint",
            SqlType::TinyIntUnsigned => "tinyint",
            SqlType::SmallIntUnsigned => "smallint",
            SqlType::IntUnsigned => "int",
            SqlType::BigIntUnsigned => "bigint",
            SqlType::Bit(_) => "bit",
            SqlType::Year => "year",
            SqlType::LargeInt => "bigint unsigned",
            SqlType::Float => "float",
            SqlType::Double => "double",
            SqlType::Decimal { .. } => "decimal",
            SqlType::Date => "date",
            SqlType::DateTime { .. } => "datetime",
            SqlType::Time { .. } => "time",
            SqlType::Char(_) => "char",
            SqlType::Varchar(_) => "varchar",
            SqlType::String => "text",
            SqlType::Bitmap => "bitmap",
            SqlType::Hll => "hll",
            SqlType::QuantileState => "quantile_state",
            SqlType::Binary(_) => "binary",
            SqlType::Varbinary(_) => "varbinary",
            SqlType::Blob => "blob",
            SqlType::Json => "json",
            SqlType::Array(_) => "array",
            SqlType::Map(..) => "map",
            SqlType::Struct(_) => "struct",
            SqlType::Ipv4 => "ipv4",
            SqlType::Ipv6 => "ipv6",
            SqlType::Variant => "variant",
        }
    }

    /// True for integer types (usable as bucket or partition keys without conversion).
    pub fn is_integer(&self) -> bool {
        matches!(
            self,
            SqlType::TinyInt
                | SqlType::SmallInt
                | SqlType::Int
                | SqlType::BigInt
                | SqlType::LargeInt
                | SqlType::TinyIntUnsigned
                | SqlType::SmallIntUnsigned
                | SqlType::IntUnsigned
                | SqlType::BigIntUnsigned
        )
    }

    /// True for types whose values are text.
    pub fn is_string(&self) -> bool {
        matches!(
            self,
            SqlType::Char(_) | SqlType::Varchar(_) | SqlType::String
        )
    }

    /// True for numeric types that SUM can aggregate.
    pub fn is_numeric(&self) -> bool {
        self.is_integer()
            || matches!(
                self,
                SqlType::Float | SqlType::Double | SqlType::Decimal { .. }
            )
    }
}

impl fmt::Display for SqlType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SqlType::Boolean => write!(f, "boolean"),
            SqlType::TinyInt => write!(f, "tinyint"),
            SqlType::SmallInt => write!(f, "smallint"),
            SqlType::Int => write!(f, "int"),
            SqlType::BigInt => write!(f, "bigint"),
            SqlType::LargeInt => write!(f, "largeint"),
            SqlType::TinyIntUnsigned => write!(f, "tinyint unsigned"),
            SqlType::SmallIntUnsigned => write!(f, "smallint unsigned"),
            SqlType::IntUnsigned => write!(f, "int unsigned"),
            SqlType::BigIntUnsigned => write!(f, "bigint unsigned"),
            SqlType::Bit(n) => write!(f, "bit({n})"),
            SqlType::Year => write!(f, "year(4)"),
            SqlType::Float => write!(f, "float"),
            SqlType::Double => write!(f, "double"),
            SqlType::Decimal { precision, scale } => write!(f, "decimal({precision},{scale})"),
            SqlType::Date => write!(f, "date"),
            SqlType::DateTime { scale: 0 } => write!(f, "datetime"),
            SqlType::DateTime { scale } => write!(f, "datetime({scale})"),
            SqlType::Time { scale: 0 } => write!(f, "time"),
            SqlType::Time { scale } => write!(f, "time({scale})"),
            SqlType::Char(n) => write!(f, "char({n})"),
            SqlType::Varchar(n) => write!(f, "varchar({n})"),
            SqlType::String => write!(f, "text"),
            SqlType::Bitmap => write!(f, "bitmap"),
            SqlType::Hll => write!(f, "hll"),
            SqlType::QuantileState => write!(f, "quantile_state"),
            SqlType::Binary(n) => write!(f, "binary({n})"),
            SqlType::Varbinary(n) => write!(f, "varbinary({n})"),
            SqlType::Blob => write!(f, "blob"),
            SqlType::Json => write!(f, "json"),
            SqlType::Ipv4 => write!(f, "ipv4"),
            SqlType::Ipv6 => write!(f, "ipv6"),
            SqlType::Variant => write!(f, "variant"),
            SqlType::Array(element) => write!(f, "array<{element}>"),
            SqlType::Map(key, value) => write!(f, "map<{key},{value}>"),
            SqlType::Struct(fields) => {
                write!(f, "struct<")?;
                for (i, field) in fields.iter().enumerate() {
                    if i > 0 {
                        write!(f, ",")?;
                    }
                    write!(f, "{}:{}", field.name, field.ty)?;
                }
                write!(f, ">")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn datetimes_round_half_up_to_their_scale() {
        assert_eq!(round_micros(514_514, 3), 515_000);
        assert_eq!(round_micros(123_400, 3), 123_000);
        assert_eq!(round_micros(500_000, 0), 1_000_000);
        // Before 1970 the fraction still rounds toward the later second when it is >= .5.
        assert_eq!(round_micros(-500_000, 0), 0);
        assert_eq!(round_micros(-600_000, 0), -1_000_000);
        assert_eq!(round_micros(123_456, 6), 123_456);
        // 9999-12-31 23:59:59.999999 is cut, not rounded into year 10000.
        let last = 253_402_300_799_999_999;
        assert_eq!(round_micros(last, 0), 253_402_300_799_000_000);
        assert_eq!(round_micros(last, 5), 253_402_300_799_999_990);
        assert_eq!(
            round_micros(253_402_300_798_600_000, 0),
            253_402_300_799_000_000
        );
    }

    use super::*;

    #[test]
    fn parses_doris_type_names() {
        assert_eq!(SqlType::from_name("int", &[]).unwrap(), SqlType::Int);
        assert_eq!(
            SqlType::from_name("DECIMAL", &[38, 10])
                .unwrap()
                .arrow_type(),
            DataType::Decimal128(38, 10)
        );
        assert_eq!(
            SqlType::from_name("decimalv3", &[76, 9])
                .unwrap()
                .arrow_type(),
            DataType::Decimal256(76, 9)
        );
        assert_eq!(
            SqlType::from_name("decimal", &[39, 0]).unwrap().to_string(),
            "decimal(39,0)"
        );
        assert!(SqlType::from_name("decimal", &[77, 2]).is_err());
        // DECIMAL(39, 0) and LARGEINT share an Arrow type; their fields tell them apart.
        let decimal39 = SqlType::from_name("decimal", &[39, 0]).unwrap();
        assert!(!is_largeint_field(&decimal39.arrow_field("d", true)));
        assert!(is_largeint_field(&SqlType::LargeInt.arrow_field("l", true)));
        assert_eq!(
            SqlType::from_name("DECIMALV2", &[27, 9]).unwrap(),
            SqlType::Decimal {
                precision: 27,
                scale: 9
            }
        );
        assert!(SqlType::from_name("decimalv2", &[28, 9]).is_err());
        assert!(SqlType::from_name("decimalv2", &[27, 10]).is_err());
        assert!(SqlType::from_name("decimal", &[5, 6]).is_err());
        assert!(SqlType::from_name("geometry", &[]).is_err());
        assert_eq!(
            SqlType::from_name("varchar", &[20]).unwrap().to_string(),
            "varchar(20)"
        );
        assert_eq!(SqlType::from_name("STRING", &[]).unwrap(), SqlType::String);
        assert_eq!(SqlType::LargeInt.arrow_type(), DataType::Decimal256(39, 0));
    }

    #[test]
    fn bit_columns_keep_their_width() {
        assert_eq!(SqlType::from_name("bit", &[]).unwrap(), SqlType::Bit(1));
        assert_eq!(
            SqlType::from_name("BIT", &[64]).unwrap().to_string(),
            "bit(64)"
        );
        assert!(SqlType::from_name("bit", &[0]).is_err());
        assert!(SqlType::from_name("bit", &[65]).is_err());
        let field = SqlType::Bit(3).arrow_field("b", true);
        assert_eq!(field.data_type(), &DataType::UInt64);
        assert_eq!(bit_width(&field), Some(3));
        assert!(fits_bits(7, 3) && !fits_bits(8, 3) && fits_bits(u64::MAX, 64));
    }
}
