//! The bytes of a GEOMETRY value, and well-known binary in and out.
//!
//! A GEOMETRY is little-endian 2D WKB: type 1 (point), 2 (line string) or 3 (polygon, rings
//! closed). A circle, which WKB has no type for, uses the private type code [`CIRCLE_TYPE`]
//! followed by the centre's longitude, latitude and the radius in metres. Values are only
//! made by the ST_* constructors, which check them, so reading one back checks the layout
//! and the coordinate ranges only.
//!
//! ST_AsBinary gives standard WKB with each coordinate rounded to 13 decimals as Doris does
//! (a circle has none: NULL). ST_GeomFromWKB reads WKB in either byte order, as raw bytes or
//! as hex text with an optional `\x` prefix (what Doris's ST_AsBinary used to print), and
//! checks the shape like the WKT constructors.

use super::shape::{self, Coord, Shape};
use super::sphere;

/// The private WKB type code of a circle ("circ").
const CIRCLE_TYPE: u32 = 0x6369_7263;

const POINT: u32 = 1;
const LINE: u32 = 2;
const POLYGON: u32 = 3;

struct Writer(Vec<u8>);

impl Writer {
    fn header(kind: u32) -> Self {
        let mut w = Writer(Vec::with_capacity(64));
        w.0.push(1);
        w.u32(kind);
        w
    }

    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }

    fn f64(&mut self, v: f64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }

    fn coord(&mut self, (x, y): Coord) {
        self.f64(x);
        self.f64(y);
    }

    fn list(&mut self, v: &[Coord], close: bool, map: fn(Coord) -> Coord) {
        let n = v.len() + usize::from(close && !v.is_empty());
        self.u32(n as u32);
        for &c in v {
            self.coord(map(c));
        }
        if close {
            if let Some(&c) = v.first() {
                self.coord(map(c));
            }
        }
    }
}

fn as_is(c: Coord) -> Coord {
    c
}

/// Rounds a value to 13 decimals as Doris's `stod(StrFormat("%.13f", v))`.
pub(crate) fn round13(v: f64) -> f64 {
    format!("{v:.13}").parse().unwrap_or(v)
}

/// A coordinate as Doris reports it (ST_X/ST_Y/ST_AsBinary): read back from the sphere and
/// rounded to 13 decimals.
pub(crate) fn reported(c: Coord) -> Coord {
    let (x, y) = sphere::round_trip(c);
    (round13(x), round13(y))
}

fn write_wkb(shape: &Shape, map: fn(Coord) -> Coord) -> Vec<u8> {
    match shape {
        Shape::Point(c) => {
            let mut w = Writer::header(POINT);
            w.coord(map(*c));
            w.0
        }
        Shape::Line(v) => {
            let mut w = Writer::header(LINE);
            w.list(v, false, map);
            w.0
        }
        Shape::Polygon(loops) => {
            let mut w = Writer::header(POLYGON);
            w.u32(loops.len() as u32);
            for l in loops {
                w.list(l, true, map);
            }
            w.0
        }
        Shape::Circle(c, r) => {
            let mut w = Writer::header(CIRCLE_TYPE);
            w.coord(*c);
            w.f64(*r);
            w.0
        }
    }
}

/// The bytes of a GEOMETRY value.
pub(crate) fn encode(shape: &Shape) -> Vec<u8> {
    write_wkb(shape, as_is)
}

/// ST_AsBinary: standard WKB, or None for a circle.
pub(crate) fn to_wkb(shape: &Shape) -> Option<Vec<u8>> {
    (!matches!(shape, Shape::Circle(..))).then(|| write_wkb(shape, reported))
}

struct Reader<'a> {
    b: &'a [u8],
    i: usize,
    little: bool,
}

impl Reader<'_> {
    fn take<const N: usize>(&mut self) -> Option<[u8; N]> {
        let s = self.b.get(self.i..self.i.checked_add(N)?)?;
        self.i += N;
        s.try_into().ok()
    }

    fn u32(&mut self) -> Option<u32> {
        let b = self.take::<4>()?;
        Some(if self.little {
            u32::from_le_bytes(b)
        } else {
            u32::from_be_bytes(b)
        })
    }

    fn f64(&mut self) -> Option<f64> {
        let b = self.take::<8>()?;
        Some(if self.little {
            f64::from_le_bytes(b)
        } else {
            f64::from_be_bytes(b)
        })
    }

    fn coord(&mut self) -> Option<Coord> {
        Some((self.f64()?, self.f64()?))
    }

    fn count(&mut self) -> Option<usize> {
        let n = self.u32()? as usize;
        // Each coordinate takes 16 bytes: refuse counts the input cannot hold.
        (n <= (self.b.len() - self.i) / 16).then_some(n)
    }

    fn list(&mut self) -> Option<Vec<Coord>> {
        let n = self.count()?;
        (0..n).map(|_| self.coord()).collect()
    }
}

/// Coordinates as read, before any check.
enum Raw {
    Point(Coord),
    Line(Vec<Coord>),
    Polygon(Vec<Vec<Coord>>),
    Circle(Coord, f64),
}

fn read(b: &[u8]) -> Option<Raw> {
    let little = match b.first()? {
        0 => false,
        1 => true,
        _ => return None,
    };
    let mut r = Reader { b, i: 1, little };
    let raw = match r.u32()? {
        POINT => Raw::Point(r.coord()?),
        LINE => Raw::Line(r.list()?),
        POLYGON => {
            let n = r.u32()? as usize;
            if n > b.len() / 4 {
                return None;
            }
            Raw::Polygon((0..n).map(|_| r.list()).collect::<Option<_>>()?)
        }
        CIRCLE_TYPE => Raw::Circle(r.coord()?, r.f64()?),
        _ => return None,
    };
    (r.i == b.len()).then_some(raw)
}

/// Reads a GEOMETRY value; None when the bytes are not one.
pub(crate) fn decode(b: &[u8]) -> Option<Shape> {
    let ok = |v: &[Coord]| v.iter().all(|&c| shape::valid_coord(c));
    match read(b)? {
        Raw::Point(c) => shape::point(c),
        Raw::Line(v) => (v.len() >= 2 && ok(&v)).then_some(Shape::Line(v)),
        Raw::Polygon(rings) => {
            let mut loops = Vec::with_capacity(rings.len());
            for mut ring in rings {
                if ring.len() < 4 || !ok(&ring) || ring.first() != ring.last() {
                    return None;
                }
                ring.pop();
                loops.push(ring);
            }
            (!loops.is_empty()).then_some(Shape::Polygon(loops))
        }
        Raw::Circle(c, r) => shape::circle(c, r),
    }
}

/// ST_GeomFromWKB: standard WKB (raw or hex text), checked like WKT input.
pub(crate) fn from_wkb(input: &[u8]) -> Option<Shape> {
    let bytes;
    let wkb = match unhex(input) {
        Some(b) => {
            bytes = b;
            &bytes[..]
        }
        None => input,
    };
    match read(wkb)? {
        Raw::Point(c) => shape::point(c),
        Raw::Line(v) => shape::line(&v),
        Raw::Polygon(rings) => shape::polygon(&rings),
        Raw::Circle(..) => None,
    }
}

/// Hex text (after an optional `\x` or `x`) as bytes; None when it is not hex text.
fn unhex(input: &[u8]) -> Option<Vec<u8>> {
    let s = input
        .strip_prefix(b"\\x")
        .or_else(|| input.strip_prefix(b"x"))
        .unwrap_or(input);
    if s.is_empty() || !s.len().is_multiple_of(2) {
        return None;
    }
    let digit = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    s.chunks(2)
        .map(|p| Some(digit(p[0])? << 4 | digit(p[1])?))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn point_wkb_is_standard() {
        let p = Shape::Point((24.7, 56.7));
        let wkb = to_wkb(&p).unwrap_or_default();
        let hex: String = wkb.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex, "01010000003333333333b338409a99999999594c40");
        assert_eq!(from_wkb(hex.as_bytes()), Some(p.clone()));
        assert_eq!(from_wkb(format!("\\x{hex}").as_bytes()), Some(p.clone()));
        assert_eq!(decode(&encode(&p)), Some(p));
    }

    #[test]
    fn shapes_round_trip() {
        for s in [
            Shape::Line(vec![(1.0, 1.0), (2.0, 2.0)]),
            Shape::Polygon(vec![vec![(0.0, 0.0), (1.0, 0.0), (1.0, 1.0)]]),
            Shape::Circle((1.0, 2.0), 30.0),
        ] {
            assert_eq!(decode(&encode(&s)), Some(s));
        }
        assert_eq!(decode(b"junk"), None);
        assert_eq!(decode(&[1, 2, 0, 0, 0, 255, 255, 255, 255]), None);
    }
}
