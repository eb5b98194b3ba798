//! The column types of a table made from a query's result (CREATE TABLE .. AS SELECT): each
//! result field's Arrow type and Basalt's marks on it (DATETIME(p) digits, LARGEINT, JSON,
//! BITMAP/HLL, IPV4/IPV6) mapped back to the [`SqlType`] a column declares; a column read straight
//! from a table keeps the type and NOT NULL that table declares (CHAR(n), VARCHAR(n), ..).

use crate::column_origins::StoredColumn;
use basalt_catalog::Catalog;
use basalt_common::ip_address::{ip_family, IpFamily};
use basalt_common::types::MAX_DECIMAL_PRECISION;
use basalt_common::{
    fraction_digits, is_json_field, is_largeint_field, sketch_kind, BasaltError, Result, SqlType,
    StructField,
};
use datafusion::arrow::datatypes::{DataType, Field, TimeUnit};
use datafusion::logical_expr::{Expr, LogicalPlan};

/// The longest VARCHAR: what text without a declared length becomes where a STRING may not be
/// (the first column, keys, partition and bucket columns), as in Doris.
pub(crate) const MAX_VARCHAR: u32 = 65533;

/// A result column's type and nullability in the new table.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ResultColumnType {
    pub ty: SqlType,
    pub nullable: bool,
}

/// The type of result column `field` in a new table. A column read straight from a table
/// (`stored`, with the same storage type) keeps that column's type, and is NOT NULL when the
/// table's column is and no outer join on the way adds NULLs; anything computed is nullable, as
/// Doris makes it; computed bytes are `sketch` when a sketch function computes them.
/// `needs_bounded_text` says the column must not be STRING (first column, key,
/// partition or bucket column): text of no declared length is then VARCHAR(65533).
pub(crate) fn result_column_type(
    catalog: &dyn Catalog,
    field: &Field,
    stored: Option<&StoredColumn>,
    sketch: Option<SqlType>,
    needs_bounded_text: bool,
) -> Result<ResultColumnType> {
    let (ty, nullable) = match stored.and_then(|s| stored_column_type(catalog, field, s)) {
        Some(typed) => typed,
        None => (sql_type_of(field)?, true),
    };
    let ty = match (ty, sketch) {
        (SqlType::String, _) if needs_bounded_text => SqlType::Varchar(MAX_VARCHAR),
        (SqlType::Blob, Some(sketch)) => sketch,
        (other, _) => other,
    };
    Ok(ResultColumnType { ty, nullable })
}

/// The declared type and nullability of the table column `field` is read from, when that
/// column still stores the field's type (else the field's own type is used).
fn stored_column_type(
    catalog: &dyn Catalog,
    field: &Field,
    stored: &StoredColumn,
) -> Option<(SqlType, bool)> {
    let table = catalog.table(&stored.database, &stored.table).ok()?;
    let column = &table.columns[table.column_index(&stored.column)?];
    let same = storage_type(&column.ty.arrow_type()) == storage_type(field.data_type());
    same.then(|| (column.ty.clone(), column.nullable || stored.null_extended))
}

/// BITMAP or HLL for result column `index` of `plan` when a bitmap or HLL function computes it
/// (`to_bitmap(k)`, `bitmap_union(b)`, `hll_hash(s)`, ..): their results are bytes without the
/// sketch mark a stored column's field has.
pub(crate) fn computed_sketch(plan: &LogicalPlan, index: usize) -> Option<SqlType> {
    let mut node = plan;
    let mut index = index;
    let expr = loop {
        let next = match node {
            LogicalPlan::Projection(p) => match strip_alias(p.expr.get(index)?) {
                Expr::Column(c) => {
                    index = p.input.schema().maybe_index_of_column(c)?;
                    &p.input
                }
                other => break other,
            },
            LogicalPlan::Aggregate(a) => {
                let groups = a.group_expr.len();
                match index.checked_sub(groups) {
                    Some(i) => break strip_alias(a.aggr_expr.get(i)?),
                    None => return None,
                }
            }
            LogicalPlan::SubqueryAlias(a) => &a.input,
            LogicalPlan::Filter(f) => &f.input,
            LogicalPlan::Sort(s) => &s.input,
            LogicalPlan::Limit(l) => &l.input,
            _ => return None,
        };
        node = next.as_ref();
    };
    let name = match expr {
        Expr::ScalarFunction(f) => f.name(),
        Expr::AggregateFunction(f) => f.func.name(),
        _ => return None,
    }
    .to_ascii_lowercase();
    if name.contains("bitmap") {
        Some(SqlType::Bitmap)
    } else if name.contains("hll") {
        Some(SqlType::Hll)
    } else {
        None
    }
}

fn strip_alias(expr: &Expr) -> &Expr {
    match expr {
        Expr::Alias(a) => strip_alias(&a.expr),
        other => other,
    }
}

/// Scans give text and bytes as the Arrow view types; they are stored as the plain ones.
fn storage_type(ty: &DataType) -> DataType {
    match ty {
        DataType::Utf8View | DataType::LargeUtf8 => DataType::Utf8,
        DataType::BinaryView | DataType::LargeBinary => DataType::Binary,
        other => other.clone(),
    }
}

/// The SQL type of a computed value: the Arrow type with Basalt's marks read back.
pub(crate) fn sql_type_of(field: &Field) -> Result<SqlType> {
    match sketch_kind(field) {
        Some("bitmap") => return Ok(SqlType::Bitmap),
        Some("hll") => return Ok(SqlType::Hll),
        _ => {}
    }
    match ip_family(field) {
        Some(IpFamily::V4) => return Ok(SqlType::Ipv4),
        Some(IpFamily::V6) => return Ok(SqlType::Ipv6),
        None => {}
    }
    if basalt_common::variant::is_variant_field(field) {
        return Ok(SqlType::Variant);
    }
    if is_json_field(field) {
        return Ok(SqlType::Json);
    }
    if is_largeint_field(field) {
        return Ok(SqlType::LargeInt);
    }
    if let Some(width) = basalt_common::types::bit_width(field) {
        return Ok(SqlType::Bit(width));
    }
    if basalt_common::year::is_year(field) {
        return Ok(SqlType::Year);
    }
    let ty = match field.data_type() {
        // Doris makes a column of NULLs TINYINT.
        DataType::Null => SqlType::TinyInt,
        DataType::Boolean => SqlType::Boolean,
        DataType::Int8 => SqlType::TinyInt,
        DataType::Int16 | DataType::UInt8 => SqlType::SmallInt,
        DataType::Int32 | DataType::UInt16 => SqlType::Int,
        DataType::Int64 | DataType::UInt32 => SqlType::BigInt,
        DataType::UInt64 => SqlType::LargeInt,
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
            _ => return Err(unsupported(field)),
        },
        DataType::Struct(fields) => SqlType::Struct(
            fields
                .iter()
                .map(|f| {
                    Ok(StructField {
                        name: f.name().clone(),
                        ty: sql_type_of(f)?,
                    })
                })
                .collect::<Result<_>>()?,
        ),
        DataType::Dictionary(_, value) => {
            sql_type_of(&Field::new(field.name(), value.as_ref().clone(), true))?
        }
        _ => return Err(unsupported(field)),
    };
    Ok(ty)
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

fn unsupported(field: &Field) -> BasaltError {
    BasaltError::NotSupported(format!(
        "a table column of the type of '{}' ({}) in CREATE TABLE .. AS SELECT; CAST it to a column type",
        field.name(),
        field.data_type()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(ty: SqlType) {
        let field = ty.arrow_field("c", true);
        assert_eq!(sql_type_of(&field).unwrap(), ty, "{field:?}");
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
        let of = |ty: DataType| sql_type_of(&Field::new("c", ty, true)).unwrap();
        assert_eq!(of(DataType::Null), SqlType::TinyInt);
        assert_eq!(of(DataType::UInt64), SqlType::LargeInt);
        assert_eq!(of(DataType::UInt32), SqlType::BigInt);
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
            DataType::Interval(datafusion::arrow::datatypes::IntervalUnit::DayTime),
            true
        ))
        .is_err());
    }
}
