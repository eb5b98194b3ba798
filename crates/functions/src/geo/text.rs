//! Well-known text in and out. Reading takes Doris's grammar: POINT, LINESTRING and POLYGON
//! (keywords in any case, free whitespace, numbers with optional sign and exponent); anything
//! else is no shape. Writing prints each coordinate as C's `%.12g` of the point read back
//! from the sphere, with Doris's spacing: `POINT (24.7 56.7)`, `POLYGON ((0 0, 1 0, ...))`,
//! and `CIRCLE ((lng lat), radius)` for a circle.

use super::shape::{self, Coord, Shape};
use super::sphere;

/// Parses WKT into a checked shape; None when it is not valid text or not a valid shape.
pub(crate) fn parse(text: &str) -> Option<Shape> {
    let mut p = Parser {
        s: text.as_bytes(),
        i: 0,
    };
    let keyword = p.word()?.to_ascii_uppercase();
    p.expect(b'(')?;
    let shape = match keyword.as_str() {
        "POINT" => shape::point(p.coord()?),
        "LINESTRING" => shape::line(&p.coords()?),
        "POLYGON" => {
            let mut rings = Vec::new();
            loop {
                p.expect(b'(')?;
                rings.push(p.coords()?);
                p.expect(b')')?;
                if !p.accept(b',') {
                    break;
                }
            }
            shape::polygon(&rings)
        }
        _ => None,
    }?;
    p.expect(b')')?;
    p.skip_ws();
    (p.i == p.s.len()).then_some(shape)
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn skip_ws(&mut self) {
        while self.i < self.s.len() && matches!(self.s[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    fn word(&mut self) -> Option<String> {
        self.skip_ws();
        let start = self.i;
        while self.i < self.s.len() && self.s[self.i].is_ascii_alphabetic() {
            self.i += 1;
        }
        (self.i > start).then(|| String::from_utf8_lossy(&self.s[start..self.i]).into_owned())
    }

    fn accept(&mut self, c: u8) -> bool {
        self.skip_ws();
        if self.s.get(self.i) == Some(&c) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: u8) -> Option<()> {
        self.accept(c).then_some(())
    }

    fn number(&mut self) -> Option<f64> {
        self.skip_ws();
        let start = self.i;
        let s = self.s;
        let digits = |i: &mut usize| {
            let from = *i;
            while *i < s.len() && s[*i].is_ascii_digit() {
                *i += 1;
            }
            *i > from
        };
        if s.get(self.i) == Some(&b'-') {
            self.i += 1;
        }
        let mut any = digits(&mut self.i);
        if s.get(self.i) == Some(&b'.') {
            self.i += 1;
            any |= digits(&mut self.i);
        }
        if !any {
            return None;
        }
        if matches!(s.get(self.i), Some(b'e' | b'E')) {
            let mut j = self.i + 1;
            if matches!(s.get(j), Some(b'+' | b'-')) {
                j += 1;
            }
            if digits(&mut j) {
                self.i = j;
            }
        }
        std::str::from_utf8(&s[start..self.i]).ok()?.parse().ok()
    }

    fn coord(&mut self) -> Option<Coord> {
        Some((self.number()?, self.number()?))
    }

    fn coords(&mut self) -> Option<Vec<Coord>> {
        let mut v = vec![self.coord()?];
        while self.accept(b',') {
            v.push(self.coord()?);
        }
        Some(v)
    }
}

/// C's `printf("%.{precision}g", v)`.
pub(crate) fn format_g(v: f64, precision: usize) -> String {
    if !v.is_finite() {
        return format!("{v}");
    }
    if v == 0.0 {
        return if v.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    let sci = format!("{:.*e}", precision - 1, v);
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if exp < -4 || exp >= precision as i32 {
        let m = strip_zeros(mantissa);
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{m}e{sign}{:02}", exp.abs())
    } else {
        let decimals = (precision as i32 - 1 - exp).max(0) as usize;
        strip_zeros(&format!("{v:.decimals$}")).to_string()
    }
}

fn strip_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

fn write_coord(out: &mut String, c: Coord) {
    let (lng, lat) = sphere::round_trip(c);
    out.push_str(&format_g(lng, 12));
    out.push(' ');
    out.push_str(&format_g(lat, 12));
}

fn write_list(out: &mut String, v: &[Coord], close: bool) {
    out.push('(');
    for (i, &c) in v.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write_coord(out, c);
    }
    if close {
        if let Some(&c) = v.first() {
            out.push_str(", ");
            write_coord(out, c);
        }
    }
    out.push(')');
}

/// The WKT Doris prints for a shape.
pub(crate) fn write(shape: &Shape) -> String {
    let mut out = String::new();
    match shape {
        Shape::Point(c) => {
            out.push_str("POINT ");
            write_list(&mut out, &[*c], false);
        }
        Shape::Line(v) => {
            out.push_str("LINESTRING ");
            write_list(&mut out, v, false);
        }
        Shape::Polygon(loops) => {
            out.push_str("POLYGON (");
            for (i, l) in loops.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_list(&mut out, l, true);
            }
            out.push(')');
        }
        Shape::Circle(c, r) => {
            out.push_str("CIRCLE (");
            write_list(&mut out, &[*c], false);
            out.push_str(", ");
            out.push_str(&format_g(sphere::circle_radius_m(*r), 12));
            out.push(')');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn g_format_matches_printf() {
        assert_eq!(format_g(123.12345678901234, 12), "123.123456789");
        assert_eq!(format_g(24.7, 12), "24.7");
        assert_eq!(format_g(10000.000000000002, 12), "10000");
        assert_eq!(format_g(1e-20, 12), "1e-20");
        assert_eq!(format_g(0.0001, 12), "0.0001");
        assert_eq!(format_g(1.5e15, 12), "1.5e+15");
        assert_eq!(format_g(999999999999.9, 12), "1e+12");
        assert_eq!(format_g(-180.0, 12), "-180");
    }

    #[test]
    fn parses_doris_grammar() {
        assert_eq!(parse("point(1 2)"), Some(Shape::Point((1.0, 2.0))));
        assert_eq!(
            parse(" POINT ( -1.5e1 .5 ) "),
            Some(Shape::Point((-15.0, 0.5)))
        );
        assert_eq!(parse("POINT (1 2) x"), None);
        assert_eq!(parse("POINT (1)"), None);
        assert_eq!(parse("POINT (200 2)"), None);
        assert_eq!(parse("LINESTRING (1 1)"), None);
        assert_eq!(
            parse("POLYGON ((0 0, 1 0, 1 1, 0 0))").map(|s| write(&s)),
            Some("POLYGON ((0 0, 1 0, 1 1, 0 0))".to_string())
        );
        // Not closed, too few vertices, crossing itself.
        assert_eq!(parse("POLYGON ((0 0, 1 0, 1 1, 0 1))"), None);
        assert_eq!(parse("POLYGON ((0 0, 1 0, 0 0))"), None);
        assert_eq!(parse("POLYGON ((0 0, 1 1, 1 0, 0 1, 0 0))"), None);
    }

    #[test]
    fn clockwise_rings_turn_round() {
        let s = parse("POLYGON ((0 0, 0 10, 10 10, 10 0, 0 0))");
        assert_eq!(
            s.map(|s| write(&s)),
            Some("POLYGON ((10 0, 10 10, 0 10, 0 0, 10 0))".to_string())
        );
    }
}
