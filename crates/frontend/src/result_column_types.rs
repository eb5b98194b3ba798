//! The column types of a table made from a query's result (CREATE TABLE .. AS SELECT): each
//! result field's Arrow type and Basalt's marks on it (DATETIME(p) digits, LARGEINT, JSON,
//! BITMAP/HLL, IPV4/IPV6) mapped back to the [`SqlType`] a column declares; a column read straight
//! from a table keeps the type and NOT NULL that table declares (CHAR(n), VARCHAR(n), ..).

use crate::column_origins::StoredColumn;
use basalt_catalog::Catalog;
use basalt_common::{BasaltError, Result, SqlType};
use datafusion::arrow::datatypes::{DataType, Field};
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

/// BITMAP, HLL or QUANTILE_STATE for result column `index` of `plan` when a function of theirs
/// computes it (`to_bitmap(k)`, `bitmap_union(b)`, `hll_hash(s)`, ..): their results are bytes
/// without the sketch mark a stored column's field has.
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
    } else if name.contains("quantile_state") || name == "quantile_union" {
        Some(SqlType::QuantileState)
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

/// The SQL type of a computed value (see [`basalt_common::value_types::sql_type_of`]); an error
/// for a value no column type holds.
pub(crate) fn sql_type_of(field: &Field) -> Result<SqlType> {
    basalt_common::value_types::sql_type_of(field).ok_or_else(|| unsupported(field))
}

fn unsupported(field: &Field) -> BasaltError {
    BasaltError::NotSupported(format!(
        "a table column of the type of '{}' ({}) in CREATE TABLE .. AS SELECT; CAST it to a column type",
        field.name(),
        field.data_type()
    ))
}
