//! The functions that make a GEOMETRY: ST_Point(x, y), ST_Circle(lng, lat, radius_m), the WKT
//! readers (ST_GeometryFromText for any shape, ST_LineFromText and ST_Polygon for one kind)
//! and ST_GeometryFromWKB. Input Doris refuses (bad text, coordinates off the globe, an open
//! or self-crossing ring, the wrong kind) gives NULL, as does any NULL argument.

use super::binary;
use super::shape::{self, Kind, Shape};
use super::text;
use super::udf::{function, Arg, Args};
use datafusion::arrow::array::{ArrayRef, BinaryBuilder};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::Result;
use datafusion::logical_expr::ScalarUDF;
use std::sync::Arc;

pub(crate) fn functions() -> Vec<ScalarUDF> {
    use Arg::*;
    vec![
        function("st_point", &[], &[Num, Num], DataType::Binary, st_point),
        function(
            "st_circle",
            &[],
            &[Num, Num, Num],
            DataType::Binary,
            st_circle,
        ),
        function(
            "st_geometryfromtext",
            &["st_geomfromtext"],
            &[Text],
            DataType::Binary,
            |a| from_text(a, Kind::Any),
        ),
        function(
            "st_linefromtext",
            &["st_linestringfromtext"],
            &[Text],
            DataType::Binary,
            |a| from_text(a, Kind::Line),
        ),
        function(
            "st_polygon",
            &["st_polyfromtext", "st_polygonfromtext"],
            &[Text],
            DataType::Binary,
            |a| from_text(a, Kind::Polygon),
        ),
        function(
            "st_geometryfromwkb",
            &["st_geomfromwkb"],
            &[Bytes],
            DataType::Binary,
            from_wkb,
        ),
    ]
}

/// One GEOMETRY per row from `make` (None = NULL).
fn build(rows: usize, mut make: impl FnMut(usize) -> Option<Shape>) -> ArrayRef {
    let mut out = BinaryBuilder::with_capacity(rows, rows * 21);
    for i in 0..rows {
        match make(i) {
            Some(s) => out.append_value(binary::encode(&s)),
            None => out.append_null(),
        }
    }
    Arc::new(out.finish())
}

fn st_point(a: &Args) -> Result<ArrayRef> {
    let (x, y) = (a.num(0)?, a.num(1)?);
    Ok(build(a.rows, |i| shape::point((*x.get(i)?, *y.get(i)?))))
}

fn st_circle(a: &Args) -> Result<ArrayRef> {
    let (lng, lat, r) = (a.num(0)?, a.num(1)?, a.num(2)?);
    Ok(build(a.rows, |i| {
        shape::circle((*lng.get(i)?, *lat.get(i)?), *r.get(i)?)
    }))
}

fn from_text(a: &Args, kind: Kind) -> Result<ArrayRef> {
    let wkt = a.text(0)?;
    Ok(build(a.rows, |i| {
        text::parse(wkt.get(i)?).filter(|s| s.is_kind(kind))
    }))
}

fn from_wkb(a: &Args) -> Result<ArrayRef> {
    let wkb = a.bytes(0)?;
    Ok(build(a.rows, |i| binary::from_wkb(wkb.get(i)?)))
}
