//! Distances and angles on the sphere: ST_Distance_Sphere(x1, y1, x2, y2) in metres,
//! ST_Angle_Sphere(x1, y1, x2, y2) in degrees, ST_Angle(p1, p2, p3) and ST_Azimuth(p1, p2) in
//! radians. Coordinates off the globe, points that are not points, and the degenerate cases
//! Doris refuses (coinciding or antipodal points) give NULL.

use super::accessors::point_coord;
use super::sphere;
use super::udf::{function, Arg, Args};
use datafusion::arrow::array::{ArrayRef, Float64Builder};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::Result;
use datafusion::logical_expr::ScalarUDF;
use std::sync::Arc;

pub(crate) fn functions() -> Vec<ScalarUDF> {
    use Arg::{Geo, Num};
    vec![
        function(
            "st_distance_sphere",
            &[],
            &[Num, Num, Num, Num],
            DataType::Float64,
            |a| four_numbers(a, sphere::distance_m),
        ),
        function(
            "st_angle_sphere",
            &[],
            &[Num, Num, Num, Num],
            DataType::Float64,
            |a| four_numbers(a, sphere::angle_sphere),
        ),
        function(
            "st_angle",
            &[],
            &[Geo, Geo, Geo],
            DataType::Float64,
            st_angle,
        ),
        function(
            "st_azimuth",
            &[],
            &[Geo, Geo],
            DataType::Float64,
            st_azimuth,
        ),
    ]
}

type Measure = fn(f64, f64, f64, f64) -> Option<f64>;

fn four_numbers(a: &Args, f: Measure) -> Result<ArrayRef> {
    let cols = [a.num(0)?, a.num(1)?, a.num(2)?, a.num(3)?];
    let mut out = Float64Builder::with_capacity(a.rows);
    for i in 0..a.rows {
        let v = (|| {
            let [x1, y1, x2, y2] = [
                cols[0].get(i)?,
                cols[1].get(i)?,
                cols[2].get(i)?,
                cols[3].get(i)?,
            ];
            f(*x1, *y1, *x2, *y2)
        })();
        out.append_option(v);
    }
    Ok(Arc::new(out.finish()))
}

fn st_angle(a: &Args) -> Result<ArrayRef> {
    let (p1, p2, p3) = (a.geo(0)?, a.geo(1)?, a.geo(2)?);
    let mut out = Float64Builder::with_capacity(a.rows);
    for i in 0..a.rows {
        let v = (|| {
            sphere::angle(
                point_coord(p1.get(i)?)?,
                point_coord(p2.get(i)?)?,
                point_coord(p3.get(i)?)?,
            )
        })();
        out.append_option(v);
    }
    Ok(Arc::new(out.finish()))
}

fn st_azimuth(a: &Args) -> Result<ArrayRef> {
    let (p1, p2) = (a.geo(0)?, a.geo(1)?);
    let mut out = Float64Builder::with_capacity(a.rows);
    for i in 0..a.rows {
        let v = (|| sphere::azimuth(point_coord(p1.get(i)?)?, point_coord(p2.get(i)?)?))();
        out.append_option(v);
    }
    Ok(Arc::new(out.finish()))
}
