//! The functions that read a GEOMETRY: ST_AsText/ST_AsWKT (Doris's WKT), ST_AsBinary (WKB),
//! ST_X and ST_Y of a point, and ST_Area_Square_Meters/ST_Area_Square_Km of a polygon or
//! circle on the sphere (0 for a point or line). A value that is not a valid GEOMETRY, or the
//! wrong kind of shape, gives NULL.

use super::binary;
use super::shape::Shape;
use super::sphere;
use super::text;
use super::udf::{function, Arg, Args};
use datafusion::arrow::array::{ArrayRef, BinaryBuilder, Float64Builder, StringBuilder};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::Result;
use datafusion::logical_expr::ScalarUDF;
use std::sync::Arc;

pub(crate) fn functions() -> Vec<ScalarUDF> {
    use Arg::Geo;
    vec![
        function("st_astext", &["st_aswkt"], &[Geo], DataType::Utf8, as_text),
        function("st_asbinary", &[], &[Geo], DataType::Binary, as_binary),
        function("st_x", &[], &[Geo], DataType::Float64, |a| {
            per_shape(a, |s| point_coord(s).map(|c| c.0))
        }),
        function("st_y", &[], &[Geo], DataType::Float64, |a| {
            per_shape(a, |s| point_coord(s).map(|c| c.1))
        }),
        function(
            "st_area_square_meters",
            &[],
            &[Geo],
            DataType::Float64,
            |a| per_shape(a, |s| Some(sphere::steradians_to(area(s), false))),
        ),
        function("st_area_square_km", &[], &[Geo], DataType::Float64, |a| {
            per_shape(a, |s| Some(sphere::steradians_to(area(s), true)))
        }),
    ]
}

/// A point's coordinates as Doris reports them.
pub(crate) fn point_coord(s: &Shape) -> Option<(f64, f64)> {
    match s {
        Shape::Point(c) => Some(binary::reported(*c)),
        _ => None,
    }
}

/// The area in steradians.
fn area(s: &Shape) -> f64 {
    match s {
        Shape::Polygon(loops) => sphere::polygon_area(loops),
        Shape::Circle(_, r) => sphere::circle_area(*r),
        Shape::Point(_) | Shape::Line(_) => 0.0,
    }
}

fn per_shape(a: &Args, f: fn(&Shape) -> Option<f64>) -> Result<ArrayRef> {
    let g = a.geo(0)?;
    let mut out = Float64Builder::with_capacity(a.rows);
    for i in 0..a.rows {
        out.append_option(g.get(i).and_then(f));
    }
    Ok(Arc::new(out.finish()))
}

fn as_text(a: &Args) -> Result<ArrayRef> {
    let g = a.geo(0)?;
    let mut out = StringBuilder::with_capacity(a.rows, a.rows * 24);
    for i in 0..a.rows {
        out.append_option(g.get(i).map(text::write));
    }
    Ok(Arc::new(out.finish()))
}

fn as_binary(a: &Args) -> Result<ArrayRef> {
    let g = a.geo(0)?;
    let mut out = BinaryBuilder::with_capacity(a.rows, a.rows * 21);
    for i in 0..a.rows {
        out.append_option(g.get(i).and_then(binary::to_wkb));
    }
    Ok(Arc::new(out.finish()))
}
