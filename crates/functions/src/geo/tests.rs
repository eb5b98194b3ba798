//! Checks that the spherical measures reproduce Doris's numbers digit for digit.

use super::shape::Shape;
use super::{accessors, binary, sphere, text};

#[test]
fn distances_and_angles() {
    let d = sphere::distance_m(116.35620117, 39.939093, 116.4274406433, 39.9020987219);
    assert_eq!(d, Some(7336.913554999592));
    assert_eq!(sphere::angle_sphere(0.0, 0.0, 45.0, 0.0), Some(45.0));
    assert_eq!(sphere::distance_m(0.0, 91.0, 0.0, 0.0), None);
    let a = sphere::angle((0.0, 0.0), (1.0, 0.0), (0.0, 1.0));
    assert_eq!(a, Some(0.7854743216187385));
    assert_eq!(sphere::angle((1.0, 0.0), (0.0, 0.0), (1.0, 0.0)), Some(0.0));
    assert_eq!(sphere::angle((1.0, 0.0), (-30.0, 0.0), (150.0, 0.0)), None);
    assert_eq!(
        sphere::azimuth((0.0, 0.0), (1.0, 0.0)),
        Some(std::f64::consts::FRAC_PI_2)
    );
    assert_eq!(
        sphere::azimuth((1.0, 0.0), (0.0, 0.0)),
        Some(4.71238898038469)
    );
}

#[test]
fn areas() {
    let sq = text::parse("POLYGON ((0 0, 1 0, 1 1, 0 1, 0 0))");
    let Some(Shape::Polygon(loops)) = sq else {
        panic!("not a polygon: {sq:?}");
    };
    let sr = sphere::polygon_area(&loops);
    assert_eq!(sphere::steradians_to(sr, false), 12364036567.076408);
    assert_eq!(sphere::steradians_to(sr, true), 12364.03656707641);
    let c = sphere::circle_area(1.0);
    assert_eq!(sphere::steradians_to(c, false), 3.141592653589787);
    assert_eq!(sphere::steradians_to(c, true), 3.141592653589787e-6);
}

#[test]
fn printing() {
    let c = Shape::Circle((111.0, 64.0), 10000.0);
    assert_eq!(text::write(&c), "CIRCLE ((111 64), 10000)");
    let p = Shape::Point((123.12345678901234, 89.123456789));
    assert_eq!(text::write(&p), "POINT (123.123456789 89.123456789)");
    assert_eq!(
        accessors::point_coord(&p).map(|c| c.0),
        Some(123.1234567890123)
    );
    assert_eq!(binary::round13(24.7), 24.7);
}
