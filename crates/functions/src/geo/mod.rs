//! Doris's geo functions (ST_*): points, lines, polygons and circles on the Earth's sphere.
//!
//! A GEOMETRY value is an opaque `Binary`: little-endian well-known binary of a point, line
//! string or polygon, or a private WKB-like record for a circle (see [`binary`]). The
//! constructors check shapes the way Doris does and give NULL for anything it refuses;
//! ST_AsText prints Doris's WKT (`POINT (24.7 56.7)`), and the measures (distances, angles,
//! areas) follow Doris's S2-based spherical arithmetic so their digits match.
//!
//! Functions: ST_Point, ST_Circle, ST_GeometryFromText/ST_GeomFromText,
//! ST_LineFromText/ST_LineStringFromText, ST_Polygon/ST_PolyFromText/ST_PolygonFromText,
//! ST_GeometryFromWKB/ST_GeomFromWKB, ST_AsText/ST_AsWKT, ST_AsBinary, ST_X, ST_Y,
//! ST_Area_Square_Meters, ST_Area_Square_Km, ST_Distance_Sphere, ST_Angle_Sphere, ST_Angle,
//! ST_Azimuth, ST_Contains, ST_Intersects, ST_Disjoint, ST_Touches.

mod accessors;
mod binary;
mod constructors;
mod measures;
mod predicates;
mod relate;
mod shape;
mod sphere;
mod text;
mod udf;

use datafusion::logical_expr::ScalarUDF;

/// Every ST_* scalar function.
pub fn functions() -> Vec<ScalarUDF> {
    let mut v = constructors::functions();
    v.extend(accessors::functions());
    v.extend(measures::functions());
    v.extend(predicates::functions());
    v
}

#[cfg(test)]
mod tests;
