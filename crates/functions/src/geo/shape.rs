//! The shapes a GEOMETRY value holds and the rules that make one valid, as Doris checks them
//! when it builds a shape: coordinates are longitude/latitude degrees within ±180/±90, repeated
//! neighbouring vertices collapse into one, a line keeps at least two vertices, a polygon ring
//! must be closed, keep at least three distinct vertices, not cross itself, and each hole must
//! lie inside the shell. Rings are turned counter-clockwise (Doris normalises every loop so
//! that it encloses the smaller side of the sphere), which is the order ST_AsText prints.

use super::sphere;

/// A longitude/latitude pair in degrees.
pub(crate) type Coord = (f64, f64);

/// One GEOMETRY value. Polygon rings are stored open (no repeated closing vertex).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Shape {
    Point(Coord),
    Line(Vec<Coord>),
    Polygon(Vec<Vec<Coord>>),
    /// A spherical cap: centre and radius in metres.
    Circle(Coord, f64),
}

/// Which kind of shape a constructor wants (`ST_LineFromText` only takes a LINESTRING).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Any,
    Line,
    Polygon,
}

impl Shape {
    pub(crate) fn is_kind(&self, kind: Kind) -> bool {
        matches!(
            (kind, self),
            (Kind::Any, _) | (Kind::Line, Shape::Line(_)) | (Kind::Polygon, Shape::Polygon(_))
        )
    }
}

/// A longitude and latitude Doris accepts for a vertex (NaN is refused too).
pub(crate) fn valid_coord((lng, lat): Coord) -> bool {
    lng.abs() <= 180.0 && lat.abs() <= 90.0
}

pub(crate) fn point(c: Coord) -> Option<Shape> {
    valid_coord(c).then_some(Shape::Point(c))
}

/// Drops each vertex equal (as a point on the sphere) to the one before it.
fn dedup(coords: &[Coord]) -> Vec<Coord> {
    let mut out: Vec<Coord> = Vec::with_capacity(coords.len());
    for &c in coords {
        if out
            .last()
            .is_none_or(|&p| sphere::to_xyz(p) != sphere::to_xyz(c))
        {
            out.push(c);
        }
    }
    out
}

pub(crate) fn line(coords: &[Coord]) -> Option<Shape> {
    if !coords.iter().all(|&c| valid_coord(c)) {
        return None;
    }
    let v = dedup(coords);
    (v.len() >= 2).then_some(Shape::Line(v))
}

/// A polygon from closed rings (first = shell, the rest holes).
pub(crate) fn polygon(rings: &[Vec<Coord>]) -> Option<Shape> {
    if rings.is_empty() {
        return None;
    }
    let mut loops: Vec<Vec<Coord>> = Vec::with_capacity(rings.len());
    for ring in rings {
        let l = ring_to_loop(ring)?;
        if let Some(shell) = loops.first() {
            if !loop_inside(&l, shell) {
                return None;
            }
        }
        loops.push(l);
    }
    Some(Shape::Polygon(loops))
}

/// Checks and normalises one closed ring into an open counter-clockwise loop.
fn ring_to_loop(ring: &[Coord]) -> Option<Vec<Coord>> {
    if ring.is_empty() || !ring.iter().all(|&c| valid_coord(c)) {
        return None;
    }
    let (first, last) = (ring[0], ring[ring.len() - 1]);
    if sphere::to_xyz(first) != sphere::to_xyz(last) {
        return None;
    }
    let mut v = dedup(ring);
    v.pop();
    if v.len() < 3 || !simple_loop(&v) {
        return None;
    }
    if sphere::loop_signed_area(&v) < 0.0 {
        v.reverse();
    }
    Some(v)
}

/// No vertex repeats and no two non-neighbouring edges meet (planar test on the degrees).
fn simple_loop(v: &[Coord]) -> bool {
    let n = v.len();
    for i in 0..n {
        for j in i + 1..n {
            if sphere::to_xyz(v[i]) == sphere::to_xyz(v[j]) {
                return false;
            }
        }
    }
    if n == 3 {
        return area2(v[0], v[1], v[2]) != 0.0;
    }
    for i in 0..n {
        let (a, b) = (v[i], v[(i + 1) % n]);
        for j in i + 1..n {
            // Neighbouring edges share a vertex and may only meet there.
            if j == i + 1 || (i == 0 && j == n - 1) {
                continue;
            }
            let (c, d) = (v[j], v[(j + 1) % n]);
            if segments_meet(a, b, c, d) {
                return false;
            }
        }
    }
    true
}

/// Twice the signed planar area of the triangle (a, b, c).
fn area2(a: Coord, b: Coord, c: Coord) -> f64 {
    (b.0 - a.0) * (c.1 - a.1) - (b.1 - a.1) * (c.0 - a.0)
}

fn segments_meet(a: Coord, b: Coord, c: Coord, d: Coord) -> bool {
    let within = |p: Coord, q: Coord, r: Coord| {
        r.0 >= p.0.min(q.0) && r.0 <= p.0.max(q.0) && r.1 >= p.1.min(q.1) && r.1 <= p.1.max(q.1)
    };
    let (d1, d2) = (area2(c, d, a), area2(c, d, b));
    let (d3, d4) = (area2(a, b, c), area2(a, b, d));
    if ((d1 > 0.0 && d2 < 0.0) || (d1 < 0.0 && d2 > 0.0))
        && ((d3 > 0.0 && d4 < 0.0) || (d3 < 0.0 && d4 > 0.0))
    {
        return true;
    }
    (d1 == 0.0 && within(c, d, a))
        || (d2 == 0.0 && within(c, d, b))
        || (d3 == 0.0 && within(a, b, c))
        || (d4 == 0.0 && within(a, b, d))
}

/// A hole lies inside the shell: every hole vertex is inside it (planar test).
fn loop_inside(hole: &[Coord], shell: &[Coord]) -> bool {
    use ::geo::{Contains, LineString, Polygon};
    let ring = |l: &[Coord]| {
        let mut pts: Vec<::geo::Coord<f64>> =
            l.iter().map(|&(x, y)| ::geo::coord! {x: x, y: y}).collect();
        pts.push(pts[0]);
        LineString::new(pts)
    };
    Polygon::new(ring(shell), vec![]).contains(&Polygon::new(ring(hole), vec![]))
}

/// Doris's ST_Circle: a valid centre; the radius (metres, finite) may be anything, a negative
/// one giving an empty cap.
pub(crate) fn circle(center: Coord, radius: f64) -> Option<Shape> {
    (valid_coord(center) && radius.is_finite()).then_some(Shape::Circle(center, radius))
}
