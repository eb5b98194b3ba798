//! Spatial relations between two shapes for ST_Contains, ST_Intersects, ST_Disjoint and
//! ST_Touches. Points, lines and polygons are compared in the plane of their longitude and
//! latitude degrees with the OGC (DE-9IM) meanings from the `geo` crate; Doris compares along
//! great circles instead, which only differs for shapes spanning many degrees. A circle is a
//! true spherical cap: its relations are judged by distances on the sphere.

use super::shape::{Coord, Shape};
use super::sphere;
use ::geo::{Contains, Intersects, Relate};

fn ring(v: &[Coord]) -> ::geo::LineString<f64> {
    let mut pts: Vec<::geo::Coord<f64>> =
        v.iter().map(|&(x, y)| ::geo::coord! {x: x, y: y}).collect();
    if let Some(&first) = pts.first() {
        pts.push(first);
    }
    ::geo::LineString::new(pts)
}

/// The planar form of a point, line or polygon (None for a circle).
fn planar(s: &Shape) -> Option<::geo::Geometry<f64>> {
    Some(match s {
        Shape::Point((x, y)) => ::geo::Geometry::Point(::geo::Point::new(*x, *y)),
        Shape::Line(v) => ::geo::Geometry::LineString(::geo::LineString::from(v.clone())),
        Shape::Polygon(loops) => {
            let holes = loops[1..].iter().map(|l| ring(l)).collect();
            ::geo::Geometry::Polygon(::geo::Polygon::new(ring(&loops[0]), holes))
        }
        Shape::Circle(..) => return None,
    })
}

/// Every vertex of a shape (a circle gives its centre).
fn vertices(s: &Shape) -> Vec<Coord> {
    match s {
        Shape::Point(c) | Shape::Circle(c, _) => vec![*c],
        Shape::Line(v) => v.clone(),
        Shape::Polygon(loops) => loops.concat(),
    }
}

fn centre_distance_m(a: Coord, b: Coord) -> f64 {
    sphere::distance_m(a.0, a.1, b.0, b.1).unwrap_or(f64::INFINITY)
}

/// The shortest distance in metres from a point to a line's or polygon's edges.
fn edge_distance_m(p: Coord, s: &Shape) -> f64 {
    match s {
        Shape::Line(v) => sphere::distance_to_edges_m(p, v, false),
        Shape::Polygon(loops) => loops
            .iter()
            .map(|l| sphere::distance_to_edges_m(p, l, true))
            .fold(f64::INFINITY, f64::min),
        Shape::Point(c) | Shape::Circle(c, _) => centre_distance_m(p, *c),
    }
}

/// ST_Contains(a, b): every point of b lies in a (None when undecidable here).
pub(crate) fn contains(a: &Shape, b: &Shape) -> Option<bool> {
    match (a, b) {
        (Shape::Circle(c, r), Shape::Circle(c2, r2)) => {
            Some(*r2 >= 0.0 && centre_distance_m(*c, *c2) + r2 <= *r)
        }
        (Shape::Circle(c, r), other) => {
            // A cap no wider than a hemisphere holds a shape when it holds its vertices.
            let small = *r <= std::f64::consts::FRAC_PI_2 * sphere::EARTH_RADIUS_M;
            let all = vertices(other)
                .iter()
                .all(|&p| sphere::cap_contains(*c, *r, p));
            Some(all && (small || matches!(other, Shape::Point(_))))
        }
        (_, Shape::Circle(..)) => Some(false),
        _ => Some(planar(a)?.contains(&planar(b)?)),
    }
}

/// ST_Intersects(a, b): the shapes share at least one point.
pub(crate) fn intersects(a: &Shape, b: &Shape) -> Option<bool> {
    match (a, b) {
        (Shape::Circle(c, r), Shape::Circle(c2, r2)) => {
            Some(*r >= 0.0 && *r2 >= 0.0 && centre_distance_m(*c, *c2) <= r + r2)
        }
        (Shape::Circle(c, r), other) | (other, Shape::Circle(c, r)) => {
            if *r < 0.0 {
                return Some(false);
            }
            let near = match other {
                Shape::Point(p) => sphere::cap_contains(*c, *r, *p),
                _ => edge_distance_m(*c, other) <= *r,
            };
            let around = matches!(other, Shape::Polygon(_))
                && planar(other)?.intersects(&::geo::Point::new(c.0, c.1));
            Some(near || around)
        }
        _ => Some(planar(a)?.intersects(&planar(b)?)),
    }
}

/// ST_Touches(a, b): the shapes meet only on their boundaries. With a circle, only a point
/// on its rim or two circles touching from outside are decided (otherwise None).
pub(crate) fn touches(a: &Shape, b: &Shape) -> Option<bool> {
    match (a, b) {
        (Shape::Circle(c, r), Shape::Circle(c2, r2)) => {
            Some(*r >= 0.0 && *r2 >= 0.0 && centre_distance_m(*c, *c2) == r + r2)
        }
        (Shape::Circle(c, r), Shape::Point(p)) | (Shape::Point(p), Shape::Circle(c, r)) => {
            Some(centre_distance_m(*c, *p) == *r)
        }
        (Shape::Circle(..), _) | (_, Shape::Circle(..)) => None,
        _ => Some(planar(a)?.relate(&planar(b)?).is_touches()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn square() -> Shape {
        Shape::Polygon(vec![vec![
            (0.0, 0.0),
            (10.0, 0.0),
            (10.0, 10.0),
            (0.0, 10.0),
        ]])
    }

    #[test]
    fn polygon_relations() {
        let sq = square();
        assert_eq!(contains(&sq, &Shape::Point((5.0, 5.0))), Some(true));
        assert_eq!(contains(&sq, &Shape::Point((50.0, 50.0))), Some(false));
        assert_eq!(intersects(&sq, &Shape::Point((10.0, 5.0))), Some(true));
        assert_eq!(touches(&sq, &Shape::Point((10.0, 5.0))), Some(true));
        assert_eq!(touches(&sq, &Shape::Point((5.0, 5.0))), Some(false));
        let line = Shape::Line(vec![(-5.0, 5.0), (5.0, 5.0)]);
        assert_eq!(intersects(&sq, &line), Some(true));
        assert_eq!(contains(&sq, &line), Some(false));
    }

    #[test]
    fn circle_relations() {
        let c = Shape::Circle((0.0, 0.0), 200_000.0);
        assert_eq!(contains(&c, &Shape::Point((1.0, 0.0))), Some(true));
        assert_eq!(contains(&c, &Shape::Point((2.0, 0.0))), Some(false));
        assert_eq!(intersects(&c, &square()), Some(true));
        let far = Shape::Line(vec![(5.0, -5.0), (5.0, 5.0)]);
        assert_eq!(intersects(&c, &far), Some(false));
        let near = Shape::Line(vec![(1.5, -5.0), (1.5, 5.0)]);
        assert_eq!(intersects(&c, &near), Some(true));
    }
}
