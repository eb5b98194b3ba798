//! The SQL type of a computed value: its Arrow type with Basalt's marks on the field read back
//! (DATETIME(p) digits, LARGEINT, JSON, BITMAP/HLL/QUANTILE_STATE, IPV4/IPV6, BIT(n), YEAR, VARIANT), as a
//! table made from a query declares it and `typeof` names it.

use crate::ip_address::{ip_family, IpFamily};
use crate::types::{
    fraction_digits, is_json_field, is_largeint_field, sketch_kind, SqlType, StructField,
    MAX_DECIMAL_PRECISION,
};
use arrow::datatypes::{DataType, Field, TimeUnit};

/// The SQL type of a computed value; `None` for a value no column type holds.
pub fn sql_type_of(field: &Field) -> Option<SqlType> {
    match sketch_kind(field) {
        Some("bitmap") => return Some(SqlType::Bitmap),
        Some("hll") => return Some(SqlType::Hll),
        Some("quantile_state") => return Some(SqlType::QuantileState),
        _ => {}
    }
    match ip_family(field) {
        Some(IpFamily::V4) => return Some(SqlType::Ipv4),
        Some(IpFamily::V6) => return Some(SqlType::Ipv6),
        None => {}
    }
    if crate::variant::is_variant_field(field) {
        return Some(SqlType::Variant);
    }
    if is_json_field(field) {
        return Some(SqlType::Json);
    }
    if is_largeint_field(field) {
        return Some(SqlType::LargeInt);
    }
    if let Some(width) = crate::types::bit_width(field) {
        return Some(SqlType::Bit(width));
    }
    if crate::year::is_year(field) {
        return Some(SqlType::Year);
    }
    let ty = match field.data_type() {
        // Doris makes a column of NULLs TINYINT.
        DataType::Null => SqlType::TinyInt,
        DataType::Boolean => SqlType::Boolean,
        DataType::Int8 => SqlType::TinyInt,
        DataType::Int16 => SqlType::SmallInt,
        DataType::Int32 => SqlType::Int,
        DataType::Int64 => SqlType::BigInt,
        DataType::UInt8 => SqlType::TinyIntUnsigned,
        DataType::UInt16 => SqlType::SmallIntUnsigned,
        DataType::UInt32 => SqlType::IntUnsigned,
        DataType::UInt64 => SqlType::BigIntUnsigned,
        DataType::Float16 | DataType::Float32 => SqlType::Float,
        DataType::Float64 => SqlType::Double,
        DataType::Decimal32(p, s)
        | DataType::Decimal64(p, s)
        | DataType::Decimal128(p, s)
        | DataType::Decimal256(p, s) => decimal(*p, *s),
        DataType::Date32 | DataType::Date64 => SqlType::Date,
        DataType::Timestamp(unit, _) => SqlType::DateTime {
            scale: fraction_digits(field).unwrap_or(unit_digits(*unit)),
        },
        DataType::Time32(unit) | DataType::Time64(unit) => SqlType::Time {
            scale: fraction_digits(field).unwrap_or(unit_digits(*unit)),
        },
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => SqlType::String,
        DataType::Binary
        | DataType::LargeBinary
        | DataType::BinaryView
        | DataType::FixedSizeBinary(_) => SqlType::Blob,
        DataType::List(element)
        | DataType::LargeList(element)
        | DataType::ListView(element)
        | DataType::LargeListView(element)
        | DataType::FixedSizeList(element, _) => SqlType::Array(Box::new(sql_type_of(element)?)),
        DataType::Map(entries, _) => match entries.data_type() {
            DataType::Struct(kv) if kv.len() == 2 => SqlType::Map(
                Box::new(sql_type_of(&kv[0])?),
                Box::new(sql_type_of(&kv[1])?),
            ),
            _ => return None,
        },
        DataType::Struct(fields) => SqlType::Struct(
            fields
                .iter()
                .map(|f| {
                    Some(StructField {
                        name: f.name().clone(),
                        ty: sql_type_of(f)?,
                    })
                })
                .collect::<Option<_>>()?,
        ),
        DataType::Dictionary(_, value) => {
            sql_type_of(&Field::new(field.name(), value.as_ref().clone(), true))?
        }
        _ => return None,
    };
    Some(ty)
}

/// DECIMAL(p, s); a negative scale (whole hundreds, ..) widens the precision instead.
fn decimal(precision: u8, scale: i8) -> SqlType {
    if scale < 0 {
        let precision = precision.saturating_add(scale.unsigned_abs());
        return SqlType::Decimal {
            precision: precision.min(MAX_DECIMAL_PRECISION),
            scale: 0,
        };
    }
    SqlType::Decimal { precision, scale }
}

/// The fractional-second digits a time unit holds (at most 6, Basalt's finest).
fn unit_digits(unit: TimeUnit) -> u8 {
    match unit {
        TimeUnit::Second => 0,
        TimeUnit::Millisecond => 3,
        TimeUnit::Microsecond | TimeUnit::Nanosecond => 6,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(ty: SqlType) {
        let field = ty.arrow_field("c", true);
        assert_eq!(sql_type_of(&field).expect("a column type"), ty, "{field:?}");
    }

    #[test]
    fn declared_types_map_back_to_themselves() {
        for ty in [
            SqlType::Boolean,
            SqlType::TinyInt,
            SqlType::SmallInt,
            SqlType::Year,
            SqlType::Int,
            SqlType::BigInt,
            SqlType::LargeInt,
            SqlType::TinyIntUnsigned,
            SqlType::SmallIntUnsigned,
            SqlType::IntUnsigned,
            SqlType::BigIntUnsigned,
            SqlType::Float,
            SqlType::Double,
            SqlType::Decimal {
                precision: 12,
                scale: 3,
            },
            SqlType::Decimal {
                precision: 39,
                scale: 0,
            },
            SqlType::Decimal {
                precision: 60,
                scale: 10,
            },
            SqlType::Date,
            SqlType::DateTime { scale: 0 },
            SqlType::DateTime { scale: 3 },
            SqlType::Time { scale: 2 },
            SqlType::String,
            SqlType::Bitmap,
            SqlType::Hll,
            SqlType::QuantileState,
            SqlType::Blob,
            SqlType::Json,
            SqlType::Variant,
            SqlType::Ipv4,
            SqlType::Ipv6,
            SqlType::Array(Box::new(SqlType::Int)),
            SqlType::Map(Box::new(SqlType::String), Box::new(SqlType::Double)),
            SqlType::Struct(vec![
                StructField {
                    name: "a".into(),
                    ty: SqlType::Int,
                },
                StructField {
                    name: "b".into(),
                    ty: SqlType::DateTime { scale: 6 },
                },
            ]),
        ] {
            round_trip(ty);
        }
    }

    #[test]
    fn computed_values_take_the_nearest_column_type() {
        let of = |ty: DataType| sql_type_of(&Field::new("c", ty, true)).expect("a column type");
        assert_eq!(of(DataType::Null), SqlType::TinyInt);
        assert_eq!(of(DataType::UInt64), SqlType::BigIntUnsigned);
        assert_eq!(of(DataType::UInt32), SqlType::IntUnsigned);
        assert_eq!(
            of(DataType::Timestamp(TimeUnit::Nanosecond, None)),
            SqlType::DateTime { scale: 6 }
        );
        assert_eq!(
            of(DataType::Decimal128(5, -2)),
            SqlType::Decimal {
                precision: 7,
                scale: 0
            }
        );
        assert!(sql_type_of(&Field::new(
            "c",
            DataType::Interval(arrow::datatypes::IntervalUnit::DayTime),
            true
        ))
        .is_none());
    }
}
