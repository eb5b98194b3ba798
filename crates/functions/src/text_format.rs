//! `sformat(pattern, args..)` (MariaDB's SFORMAT; Doris's `format(pattern, args..)` with a
//! `{}` pattern): the pattern's replacement fields filled with the arguments, in the {fmt}
//! library's format-spec language. A field is `{[index][:spec]}` (automatic or explicit
//! indexes, not both; `{{` and `}}` are braces); a spec is
//! `[[fill]align][sign][#][0][width][.precision][L][type]`, where width and precision may be
//! `{}`/`{n}` arguments (at most 16 MiB). Integers (and booleans, as 0 and 1) take
//! `d x X b B o c`; numbers with digits after the point are doubles and take `e E f F g G`
//! (shortest round-trip digits without a type); anything else is text (`s`; precision cuts
//! it). NULL when the pattern or an argument is NULL, and for a pattern that does not fit its
//! arguments (as MariaDB).

use crate::util::{arguments, output, plain_function};
use datafusion::arrow::array::{Array, ArrayRef, AsArray, StringArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Float32Type, Float64Type, Int64Type};
use datafusion::common::Result;
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, Signature, Volatility,
};
use std::sync::Arc;

pub fn function() -> ScalarUDF {
    plain_function(
        "sformat",
        Signature::variadic_any(Volatility::Immutable),
        DataType::Utf8,
        sformat,
    )
}

/// The largest width or precision a pattern may ask for (16 MiB of characters, MariaDB's
/// max_allowed_packet).
const MAX_COUNT: usize = 16 << 20;

/// One argument's value.
#[derive(Debug, Clone)]
enum Arg {
    Int(i64),
    Double(f64),
    Text(String),
}

fn sformat(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let columns: Vec<Vec<Option<Arg>>> = arrays.iter().map(values).collect::<Result<_>>()?;
    let rows = arrays.first().map_or(1, |a| a.len());
    let out: StringArray = (0..rows)
        .map(|row| {
            let row_args: Option<Vec<Arg>> = columns.iter().map(|c| c[row].clone()).collect();
            let row_args = row_args?;
            let (pattern, rest) = row_args.split_first()?;
            let pattern = match pattern {
                Arg::Text(t) => t.clone(),
                other => text(other),
            };
            render(&pattern, rest)
        })
        .collect();
    output(Arc::new(out), scalar)
}

/// A column's values as arguments: integers, doubles (decimals too) or text.
fn values(a: &ArrayRef) -> Result<Vec<Option<Arg>>> {
    Ok(match a.data_type() {
        t if t.is_integer() || *t == DataType::Boolean => {
            let ints = cast(a, &DataType::Int64)?;
            ints.as_primitive::<Int64Type>()
                .iter()
                .map(|v| v.map(Arg::Int))
                .collect()
        }
        // A FLOAT as its own shortest digits (1.1, not 1.100000023841858).
        DataType::Float16 | DataType::Float32 => {
            let floats = cast(a, &DataType::Float32)?;
            floats
                .as_primitive::<Float32Type>()
                .iter()
                .map(|v| v.map(|x| Arg::Double(x.to_string().parse().unwrap_or(f64::from(x)))))
                .collect()
        }
        t if t.is_floating()
            || matches!(t, DataType::Decimal128(..) | DataType::Decimal256(..)) =>
        {
            let doubles = cast(a, &DataType::Float64)?;
            doubles
                .as_primitive::<Float64Type>()
                .iter()
                .map(|v| v.map(Arg::Double))
                .collect()
        }
        _ => {
            let texts = cast(a, &DataType::Utf8)?;
            texts
                .as_string::<i32>()
                .iter()
                .map(|v| v.map(|s| Arg::Text(s.to_string())))
                .collect()
        }
    })
}

/// `pattern` filled with `args`; None when it does not fit them.
fn render(pattern: &str, args: &[Arg]) -> Option<String> {
    let mut out = String::new();
    let mut chars = pattern.chars().peekable();
    let mut next_auto = 0usize;
    let mut manual = false;
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                out.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                out.push('}');
            }
            '}' => return None,
            '{' => {
                let field = read_field(&mut chars)?;
                let mut index = |id: &str| -> Option<usize> {
                    match id {
                        "" if !manual => {
                            next_auto += 1;
                            Some(next_auto - 1)
                        }
                        "" => None,
                        digits if next_auto == 0 => {
                            manual = true;
                            digits.parse().ok()
                        }
                        _ => None,
                    }
                };
                let arg = args.get(index(&field.id)?)?;
                let spec = Spec::parse(&field.spec, &mut |id| match args.get(index(id)?)? {
                    Arg::Int(n) => usize::try_from(*n).ok(),
                    _ => None,
                })?;
                out.push_str(&spec.apply(arg)?);
            }
            other => out.push(other),
        }
    }
    Some(out)
}

/// A replacement field's argument id and format spec, as written.
struct Field {
    id: String,
    spec: String,
}

/// Reads a field after its `{` up to its `}` (nested `{..}` in the spec included).
fn read_field(chars: &mut std::iter::Peekable<std::str::Chars>) -> Option<Field> {
    let mut id = String::new();
    let mut spec = String::new();
    let mut in_spec = false;
    let mut depth = 0;
    loop {
        let c = chars.next()?;
        match c {
            '}' if depth == 0 => break,
            ':' if !in_spec => in_spec = true,
            '{' if in_spec => {
                depth += 1;
                spec.push(c);
            }
            '}' => {
                depth -= 1;
                spec.push(c);
            }
            _ if in_spec => spec.push(c),
            d if d.is_ascii_digit() => id.push(d),
            _ => return None,
        }
    }
    Some(Field { id, spec })
}

#[derive(Debug, Default)]
struct Spec {
    fill: Option<char>,
    align: Option<char>,
    sign: Option<char>,
    alternate: bool,
    zero: bool,
    width: usize,
    precision: Option<usize>,
    grouped: bool,
    kind: Option<char>,
}

impl Spec {
    /// Parses a spec; `dynamic` reads a `{}` / `{n}` width or precision from the arguments.
    fn parse(text: &str, dynamic: &mut dyn FnMut(&str) -> Option<usize>) -> Option<Spec> {
        let chars: Vec<char> = text.chars().collect();
        let mut spec = Spec::default();
        let mut at = 0;
        let is_align = |c: char| matches!(c, '<' | '>' | '^');
        if chars.len() >= 2 && is_align(chars[1]) && chars[0] != '{' {
            spec.fill = Some(chars[0]);
            spec.align = Some(chars[1]);
            at = 2;
        } else if chars.first().copied().is_some_and(is_align) {
            spec.align = Some(chars[0]);
            at = 1;
        }
        if let Some(&c @ ('+' | '-' | ' ')) = chars.get(at) {
            spec.sign = Some(c);
            at += 1;
        }
        if chars.get(at) == Some(&'#') {
            spec.alternate = true;
            at += 1;
        }
        if chars.get(at) == Some(&'0') {
            spec.zero = true;
            at += 1;
        }
        let mut count = |at: &mut usize| -> Option<Option<usize>> {
            if chars.get(*at) == Some(&'{') {
                let close = chars[*at..].iter().position(|&c| c == '}')? + *at;
                let id: String = chars[*at + 1..close].iter().collect();
                *at = close + 1;
                return Some(Some(dynamic(&id)?));
            }
            let digits: String = chars[*at..]
                .iter()
                .take_while(|c| c.is_ascii_digit())
                .collect();
            *at += digits.len();
            match digits.is_empty() {
                true => Some(None),
                false => Some(Some(digits.parse().ok()?)),
            }
        };
        // A width or precision past MAX_COUNT fails the pattern (a value that large would
        // not fit a packet).
        let mut count = |at: &mut usize| count(at).filter(|n| n.is_none_or(|n| n <= MAX_COUNT));
        spec.width = count(&mut at)?.unwrap_or(0);
        if chars.get(at) == Some(&'.') {
            at += 1;
            spec.precision = Some(count(&mut at)??);
        }
        if chars.get(at) == Some(&'L') {
            spec.grouped = true;
            at += 1;
        }
        if let Some(&kind) = chars.get(at) {
            spec.kind = Some(kind);
            at += 1;
        }
        (at == chars.len()).then_some(spec)
    }

    /// The argument as this spec shows it; None for a spec that does not fit its type.
    fn apply(&self, arg: &Arg) -> Option<String> {
        let (sign, body, numeric) = match arg {
            Arg::Int(n) => {
                let (sign, body) = self.integer(*n)?;
                (sign, body, true)
            }
            Arg::Double(x) => {
                let (sign, body) = self.double(*x)?;
                (sign, body, true)
            }
            Arg::Text(s) => {
                if !matches!(self.kind, None | Some('s')) || self.sign.is_some() || self.zero {
                    return None;
                }
                let body = match self.precision {
                    Some(p) => s.chars().take(p).collect(),
                    None => s.clone(),
                };
                (String::new(), body, false)
            }
        };
        let length = sign.chars().count() + body.chars().count();
        let pad = self.width.saturating_sub(length);
        if self.zero && self.align.is_none() && numeric {
            return Some(format!("{sign}{}{body}", "0".repeat(pad)));
        }
        let fill = self.fill.unwrap_or(' ').to_string();
        let align = self.align.unwrap_or(if numeric { '>' } else { '<' });
        let (left, right) = match align {
            '<' => (0, pad),
            '^' => (pad / 2, pad - pad / 2),
            _ => (pad, 0),
        };
        Some(format!(
            "{}{sign}{body}{}",
            fill.repeat(left),
            fill.repeat(right)
        ))
    }

    fn sign_of(&self, negative: bool) -> String {
        match (negative, self.sign) {
            (true, _) => "-".into(),
            (false, Some('+')) => "+".into(),
            (false, Some(' ')) => " ".into(),
            _ => String::new(),
        }
    }

    fn integer(&self, n: i64) -> Option<(String, String)> {
        if self.precision.is_some() {
            return None;
        }
        let magnitude = n.unsigned_abs();
        let prefix = |p: &str| {
            if self.alternate {
                p.to_string()
            } else {
                String::new()
            }
        };
        let body = match self.kind {
            None | Some('d') => grouped_if(magnitude.to_string(), self.grouped),
            Some('x') => format!("{}{magnitude:x}", prefix("0x")),
            Some('X') => format!("{}{magnitude:X}", prefix("0X")),
            Some('b') => format!("{}{magnitude:b}", prefix("0b")),
            Some('B') => format!("{}{magnitude:b}", prefix("0B")),
            Some('o') => format!("{}{magnitude:o}", prefix("0")),
            Some('c') => {
                return Some((
                    String::new(),
                    char::from_u32(u32::try_from(n).ok()?)?.to_string(),
                ))
            }
            _ => return None,
        };
        Some((self.sign_of(n < 0), body))
    }

    fn double(&self, x: f64) -> Option<(String, String)> {
        let negative = x.is_sign_negative() && !x.is_nan();
        let v = x.abs();
        let upper = matches!(self.kind, Some('E' | 'F' | 'G'));
        let body = if v.is_nan() {
            "nan".to_string()
        } else if v.is_infinite() {
            "inf".to_string()
        } else {
            match (self.kind, self.precision) {
                (Some('f' | 'F'), p) => format!("{v:.*}", p.unwrap_or(6)),
                (Some('e' | 'E'), p) => scientific(v, p.unwrap_or(6)),
                (Some('g' | 'G'), p) => general(v, p.unwrap_or(6), self.alternate),
                (None, Some(p)) => general(v, p, self.alternate),
                (None, None) => shortest(v),
                _ => return None,
            }
        };
        let body = match self.grouped {
            true => {
                let (whole, rest) = body.split_at(body.find(['.', 'e']).unwrap_or(body.len()));
                format!("{}{rest}", grouped_if(whole.to_string(), true))
            }
            false => body,
        };
        let body = if upper { body.to_uppercase() } else { body };
        Some((self.sign_of(negative), body))
    }
}

/// Digits grouped by thousands with `,` when `grouped`.
fn grouped_if(digits: String, grouped: bool) -> String {
    if !grouped || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return digits;
    }
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `v` (not negative) as `d.ddde±XX` with `precision` digits after the point.
fn scientific(v: f64, precision: usize) -> String {
    let text = format!("{v:.precision$e}");
    exponent_form(&text)
}

/// Rust's `1.5e-7` / `1.5e7` as {fmt} writes exponents: a sign and at least two digits.
fn exponent_form(text: &str) -> String {
    let Some((mantissa, exponent)) = text.split_once('e') else {
        return text.to_string();
    };
    let (sign, digits) = match exponent.strip_prefix('-') {
        Some(d) => ('-', d),
        None => ('+', exponent),
    };
    format!("{mantissa}e{sign}{digits:0>2}")
}

/// `%g`: `precision` significant digits, fixed for exponents from -4 to below the precision,
/// trailing zeros dropped unless `alternate`.
fn general(v: f64, precision: usize, alternate: bool) -> String {
    let p = precision.max(1);
    if v == 0.0 {
        return "0".into();
    }
    let rounded = format!("{v:.*e}", p - 1);
    let exponent: i32 = rounded
        .split_once('e')
        .and_then(|(_, e)| e.parse().ok())
        .unwrap_or(0);
    if exponent < -4 || exponent >= p as i32 {
        let (mantissa, _) = rounded.split_once('e').unwrap_or((&rounded, ""));
        let mantissa = trimmed(mantissa, alternate);
        exponent_form(&format!("{mantissa}e{exponent}"))
    } else {
        let decimals = (p as i32 - 1 - exponent).max(0) as usize;
        trimmed(&format!("{v:.decimals$}"), alternate)
    }
}

/// Trailing zeros after the point (and the point) dropped, unless `keep`.
fn trimmed(text: &str, keep: bool) -> String {
    if keep || !text.contains('.') {
        return text.to_string();
    }
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The shortest digits that read back as `v`, fixed for exponents from -5 to 15.
fn shortest(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let sci = format!("{v:e}");
    let exponent: i32 = sci
        .split_once('e')
        .and_then(|(_, e)| e.parse().ok())
        .unwrap_or(0);
    if (-5..16).contains(&exponent) {
        format!("{v}")
    } else {
        exponent_form(&sci)
    }
}

/// An argument as text where the pattern itself is not text.
fn text(arg: &Arg) -> String {
    match arg {
        Arg::Int(n) => n.to_string(),
        Arg::Double(x) if *x < 0.0 => format!("-{}", shortest(-x)),
        Arg::Double(x) => shortest(*x),
        Arg::Text(s) => s.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fill(pattern: &str, args: &[Arg]) -> Option<String> {
        render(pattern, args)
    }

    #[test]
    fn fields_take_arguments_in_order_or_by_index() {
        let (a, b) = (Arg::Text("hello".into()), Arg::Text("world".into()));
        assert_eq!(
            fill("{}-{}", &[a.clone(), b.clone()]).unwrap(),
            "hello-world"
        );
        assert_eq!(
            fill("{1}-{0}", &[a.clone(), b.clone()]).unwrap(),
            "world-hello"
        );
        assert_eq!(fill("{{{}}}", &[Arg::Int(0)]).unwrap(), "{0}");
        assert!(fill("{}{}", std::slice::from_ref(&a)).is_none());
        assert!(fill("{0}{}", &[a.clone(), b]).is_none());
        assert!(fill("My { Test", &[]).is_none());
    }

    #[test]
    fn specs_pad_round_and_convert() {
        let pi = Arg::Double(std::f64::consts::PI);
        assert_eq!(fill("{:.2}", std::slice::from_ref(&pi)).unwrap(), "3.1");
        assert_eq!(fill("{:.4f}", std::slice::from_ref(&pi)).unwrap(), "3.1416");
        assert_eq!(fill("{:>10}", &[Arg::Int(123)]).unwrap(), "       123");
        assert_eq!(
            fill("{:*^{}}", &[Arg::Int(4), Arg::Int(5)]).unwrap(),
            "**4**"
        );
        assert_eq!(
            fill("{:L}", &[Arg::Int(13_800_000_000)]).unwrap(),
            "13,800,000,000"
        );
        assert_eq!(fill("{:#x}", &[Arg::Int(255)]).unwrap(), "0xff");
        assert_eq!(fill("{:+08.2f}", &[Arg::Double(-1.5)]).unwrap(), "-0001.50");
        assert_eq!(
            fill("{:e}", &[Arg::Double(1234.5)]).unwrap(),
            "1.234500e+03"
        );
        assert_eq!(fill("{}", &[Arg::Double(1e20)]).unwrap(), "1e+20");
        assert_eq!(fill("{}", &[Arg::Double(0.25)]).unwrap(), "0.25");
        assert!(fill("{:d}", &[Arg::Text("x".into())]).is_none());
        assert!(fill("{:f}", &[Arg::Int(45)]).is_none());
        assert!(fill("{:10000000000}", &[Arg::Int(5)]).is_none());
        assert!(fill("{:.100000000f}", &[Arg::Double(1.0)]).is_none());
    }
}
