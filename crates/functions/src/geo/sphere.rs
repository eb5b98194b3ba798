//! Spherical geometry the way Doris computes it (through the S2 library): a sphere of radius
//! 6,371,010 m, distances by the haversine formula, bearings from the initial course, and
//! areas as sums of l'Huilier triangles fanned from a loop's first vertex. The arithmetic is
//! done in the same order as S2 so that results agree to the last digit.

use super::shape::Coord;
use std::f64::consts::PI;

/// S2's mean Earth radius in metres.
pub(crate) const EARTH_RADIUS_M: f64 = 6_371_010.0;

type Xyz = [f64; 3];

pub(crate) fn radians(degrees: f64) -> f64 {
    (PI / 180.0) * degrees
}

pub(crate) fn degrees(radians: f64) -> f64 {
    (180.0 / PI) * radians
}

/// The unit vector of a longitude/latitude in degrees.
pub(crate) fn to_xyz((lng, lat): Coord) -> Xyz {
    let (phi, theta) = (radians(lat), radians(lng));
    let c = phi.cos();
    [theta.cos() * c, theta.sin() * c, phi.sin()]
}

/// A point as Doris reads it back from its unit vector (longitude, latitude in degrees).
pub(crate) fn round_trip(c: Coord) -> Coord {
    let [x, y, z] = to_xyz(c);
    let lat = z.atan2((x * x + y * y).sqrt());
    let lng = y.atan2(x);
    (degrees(lng), degrees(lat))
}

/// A longitude/latitude pair (radians) S2 accepts: |lat| <= pi/2, |lng| <= pi.
fn valid_radians(lat: f64, lng: f64) -> bool {
    lat.abs() <= PI / 2.0 && lng.abs() <= PI
}

/// The central angle (radians) between two points, haversine form; arguments in radians.
fn central_angle(lat1: f64, lng1: f64, lat2: f64, lng2: f64) -> f64 {
    let dlat = (0.5 * (lat2 - lat1)).sin();
    let dlng = (0.5 * (lng2 - lng1)).sin();
    let x = dlat * dlat + dlng * dlng * lat1.cos() * lat2.cos();
    2.0 * x.min(1.0).sqrt().asin()
}

/// The central angle in radians between two longitude/latitude points in degrees, or None
/// when either is off the globe.
fn angle_between(lng1: f64, lat1: f64, lng2: f64, lat2: f64) -> Option<f64> {
    let (la1, ln1, la2, ln2) = (radians(lat1), radians(lng1), radians(lat2), radians(lng2));
    (valid_radians(la1, ln1) && valid_radians(la2, ln2)).then(|| central_angle(la1, ln1, la2, ln2))
}

/// ST_Distance_Sphere: metres along the sphere.
pub(crate) fn distance_m(lng1: f64, lat1: f64, lng2: f64, lat2: f64) -> Option<f64> {
    angle_between(lng1, lat1, lng2, lat2).map(|a| a * EARTH_RADIUS_M)
}

/// ST_Angle_Sphere: the central angle in degrees.
pub(crate) fn angle_sphere(lng1: f64, lat1: f64, lng2: f64, lat2: f64) -> Option<f64> {
    angle_between(lng1, lat1, lng2, lat2).map(degrees)
}

/// The initial bearing (radians) from a to b, both (lat, lng) in radians.
fn initial_bearing(a: (f64, f64), b: (f64, f64)) -> f64 {
    let lat1 = a.0;
    let cos_lat2 = b.0.cos();
    let lat_diff = b.0 - a.0;
    let lng_diff = b.1 - a.1;
    let half = (lng_diff / 2.0).sin();
    let x = lat_diff.sin() + lat1.sin() * cos_lat2 * 2.0 * (half * half);
    let y = lng_diff.sin() * cos_lat2;
    y.atan2(x)
}

/// ST_Angle(p1, p2, p3): the clockwise angle in radians [0, 2pi) at p2 from p3 to p1, or None
/// when p2 equals p1 or p3 or is antipodal to either. Points are (x, y) as ST_X/ST_Y give
/// them. Doris reads each point's x as the latitude and y as the longitude here, and this
/// does the same so the numbers match.
pub(crate) fn angle(p1: Coord, p2: Coord, p3: Coord) -> Option<f64> {
    let ll = |p: Coord| (radians(p.0), radians(p.1));
    let (l1, l2, l3) = (ll(p1), ll(p2), ll(p3));
    if l2 == l1 || l2 == l3 {
        return None;
    }
    let x = angle_sphere(p1.0, p1.1, p2.0, p2.1)?;
    let y = angle_sphere(p3.0, p3.1, p2.0, p2.1)?;
    if x == 180.0 || y == 180.0 {
        return None;
    }
    let a = initial_bearing(l2, l3);
    let b = initial_bearing(l2, l1);
    Some(if b - a < 0.0 { b - a + 2.0 * PI } else { b - a })
}

/// ST_Azimuth(p1, p2): the angle at p1 from p2 round to Doris's "north" point (0, 90).
pub(crate) fn azimuth(p1: Coord, p2: Coord) -> Option<f64> {
    angle((0.0, 90.0), p1, p2)
}

fn cross(a: Xyz, b: Xyz) -> Xyz {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

fn dot(a: Xyz, b: Xyz) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn norm(a: Xyz) -> f64 {
    dot(a, a).sqrt()
}

/// The angle between two unit vectors.
fn vec_angle(a: Xyz, b: Xyz) -> f64 {
    norm(cross(a, b)).atan2(dot(a, b))
}

/// The area (steradians) of the spherical triangle abc by l'Huilier's theorem.
fn triangle_area(a: Xyz, b: Xyz, c: Xyz) -> f64 {
    let sa = vec_angle(b, c);
    let sb = vec_angle(c, a);
    let sc = vec_angle(a, b);
    let s = 0.5 * (sa + sb + sc);
    let t =
        (0.5 * s).tan() * (0.5 * (s - sa)).tan() * (0.5 * (s - sb)).tan() * (0.5 * (s - sc)).tan();
    4.0 * t.max(0.0).sqrt().atan()
}

fn signed_triangle_area(a: Xyz, b: Xyz, c: Xyz) -> f64 {
    let d = dot(cross(a, b), c);
    if d > 0.0 {
        triangle_area(a, b, c)
    } else if d < 0.0 {
        -triangle_area(a, b, c)
    } else {
        0.0
    }
}

/// The signed area (steradians) enclosed by an open loop: positive when counter-clockwise.
pub(crate) fn loop_signed_area(v: &[Coord]) -> f64 {
    let pts: Vec<Xyz> = v.iter().map(|&c| to_xyz(c)).collect();
    let mut sum = 0.0;
    for i in 1..pts.len().saturating_sub(1) {
        sum += signed_triangle_area(pts[0], pts[i], pts[i + 1]);
    }
    sum
}

/// The area (steradians) of a normalised (counter-clockwise) loop.
fn loop_area(v: &[Coord]) -> f64 {
    let a = loop_signed_area(v) % (4.0 * PI);
    if a < 0.0 {
        a + 4.0 * PI
    } else {
        a
    }
}

/// A polygon's area in steradians: the shell less its holes.
pub(crate) fn polygon_area(loops: &[Vec<Coord>]) -> f64 {
    let mut sum = 0.0;
    for (i, l) in loops.iter().enumerate() {
        let a = loop_area(l);
        sum += if i == 0 { a } else { -a };
    }
    sum
}

/// The squared chord length of a cap of `radius_m` metres (S2's S1ChordAngle), -1 if
/// negative (an empty cap).
fn cap_length2(radius_m: f64) -> f64 {
    let r = radius_m / EARTH_RADIUS_M;
    if r < 0.0 {
        return -1.0;
    }
    let len = 2.0 * (0.5 * r.min(PI)).sin();
    (len * len).min(4.0)
}

/// The radius in metres Doris reports for a circle (the chord angle read back).
pub(crate) fn circle_radius_m(radius_m: f64) -> f64 {
    let l2 = cap_length2(radius_m);
    let angle = if l2 < 0.0 {
        -1.0
    } else {
        2.0 * (0.5 * l2.sqrt()).asin()
    };
    angle * EARTH_RADIUS_M
}

/// A circle's area in steradians.
pub(crate) fn circle_area(radius_m: f64) -> f64 {
    let height = 0.5 * cap_length2(radius_m);
    2.0 * PI * height.max(0.0)
}

/// Whether the cap around `center` holds point p.
pub(crate) fn cap_contains(center: Coord, radius_m: f64, p: Coord) -> bool {
    let (c, q) = (to_xyz(center), to_xyz(p));
    let d = [c[0] - q[0], c[1] - q[1], c[2] - q[2]];
    dot(d, d).min(4.0) <= cap_length2(radius_m)
}

/// The shortest angle (radians) from point p to the great-circle arc a-b.
fn arc_distance(p: Xyz, a: Xyz, b: Xyz) -> f64 {
    let n = cross(a, b);
    let nn = norm(n);
    if nn > 0.0 {
        let n = [n[0] / nn, n[1] / nn, n[2] / nn];
        // The foot of p on the great circle lies on the arc when it is on the inner side of
        // both end points.
        if dot(cross(a, p), n) > 0.0 && dot(cross(p, b), n) > 0.0 {
            return dot(p, n).abs().min(1.0).asin();
        }
    }
    vec_angle(p, a).min(vec_angle(p, b))
}

/// The shortest distance in metres from point p to the edges of a line or loop.
pub(crate) fn distance_to_edges_m(p: Coord, v: &[Coord], closed: bool) -> f64 {
    let q = to_xyz(p);
    let pts: Vec<Xyz> = v.iter().map(|&c| to_xyz(c)).collect();
    let mut best = f64::INFINITY;
    let edges = if closed {
        pts.len()
    } else {
        pts.len().saturating_sub(1)
    };
    for i in 0..edges {
        let d = arc_distance(q, pts[i], pts[(i + 1) % pts.len()]);
        best = best.min(d);
    }
    best * EARTH_RADIUS_M
}

/// Square metres (`km` false) or square kilometres of an area in steradians.
pub(crate) fn steradians_to(steradians: f64, km: bool) -> f64 {
    if km {
        let r = 0.001 * EARTH_RADIUS_M;
        steradians * r * r
    } else {
        steradians * EARTH_RADIUS_M * EARTH_RADIUS_M
    }
}
