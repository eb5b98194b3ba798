//! Doris's array, map, string and digest functions that are DataFusion functions (or short
//! expressions over them) under Doris's names and NULL rules, as Doris's documentation gives them:
//! - `size` / `array_size` / `map_size` count elements (`cardinality`); `sequence` is
//!   `array_range`; `array_slice(a, off, len)` and `map(k1, v1, ..)` are Doris's
//!   (`basalt_functions`), not DataFusion's functions of those names; an `INTERVAL n QUARTER`
//!   step of `array_range` is 3n months; `map_entries(NULL)` is NULL;
//! - `array_position` is 0 when the element is absent (DataFusion: NULL), NULL for a NULL array;
//! - `array_union` / `array_intersect` take any number of arrays; `array_union` is NULL when one
//!   is NULL;
//! - `map_contains_key` / `map_contains_value` look in the map's keys or values;
//! - `strleft` / `strright` are LEFT / RIGHT; `append_trailing_char_if_absent(s, c)` appends c
//!   unless s already ends with it;
//! - `regexp_replace(s, p, r)` replaces every match (as MySQL's too), `regexp_replace_one` the
//!   first;
//! - `sha2(s, n)` is the lower-case hex SHA-224/256/384/512 digest (n = 0 is 256, as MySQL),
//!   NULL for another length;
//! - `concat_ws(sep, [..], ..)` with array literals joins their non-NULL elements (NULL for a
//!   NULL separator, '' when an array is NULL).

use crate::mysql_compat::{binary, call, number, string};
use basalt_sql::ast::helpers::attached_token::AttachedToken;
use basalt_sql::ast::{BinaryOperator, CaseWhen, Expr, Value};

/// The rewrite of `name(args)`, if it is one of these functions.
pub(crate) fn rewrite(name: &str, args: &[Expr]) -> Option<Expr> {
    Some(match (name, args) {
        ("size" | "array_size", [a]) => call("cardinality", vec![a.clone()]),
        ("map_size", [m]) => call("cardinality", vec![call("map_keys", vec![m.clone()])]),
        ("sequence" | "array_range", [start, end, step]) if quarters(step).is_some() => {
            let months = quarters(step)?;
            call("array_range", vec![start.clone(), end.clone(), months])
        }
        ("sequence", _) => call("array_range", args.to_vec()),
        ("map_entries", [m]) if is_null(m) => null(),
        // DataFusion's array_slice(a, from, to) and map([keys], [values]) are other functions.
        ("array_slice", [_, _] | [_, _, _]) => {
            call(basalt_functions::array_slicing::SLICE, args.to_vec())
        }
        ("map", _) => call(basalt_functions::map_building::MAP, args.to_vec()),
        ("array_position", [a, x]) => {
            if is_null(a) {
                return Some(null());
            }
            let position = call("array_position", vec![a.clone(), x.clone()]);
            when(
                Expr::IsNull(Box::new(a.clone())),
                null(),
                call("coalesce", vec![position, number(0)]),
            )
        }
        ("array_union" | "array_intersect", [_, _, _, ..]) => {
            let nested = args[1..]
                .iter()
                .fold(args[0].clone(), |acc, a| call(name, vec![acc, a.clone()]));
            if name == "array_union" {
                return Some(null_if_any_null(args, nested));
            }
            nested
        }
        ("array_union", [_, _]) => null_if_any_null(args, call(name, args.to_vec())),
        ("map_contains_key", [m, k]) => call(
            "array_has",
            vec![call("map_keys", vec![m.clone()]), k.clone()],
        ),
        ("map_contains_value", [m, v]) => call(
            "array_has",
            vec![call("map_values", vec![m.clone()]), v.clone()],
        ),
        // Doris's STRRIGHT(s, -n): from the n-th character on (`STRRIGHT('Hello doris', -7)` is
        // 'doris'); MySQL's RIGHT with a negative count is ''.
        ("strright", [s, n]) if is_negative_literal(n) => {
            let Expr::UnaryOp { expr, .. } = n else {
                return None;
            };
            call("substring", vec![s.clone(), (**expr).clone()])
        }
        ("strleft" | "strright", [_, _]) => {
            let plain = if name == "strleft" { "left" } else { "right" };
            crate::function_aliases::rewrite(plain, args)
                .unwrap_or_else(|| call(plain, args.to_vec()))
        }
        ("append_trailing_char_if_absent", [s, c]) => null_if_any_null(
            args,
            when(
                call("ends_with", vec![s.clone(), c.clone()]),
                s.clone(),
                call("concat", vec![s.clone(), c.clone()]),
            ),
        ),
        ("regexp_replace", [s, p, r]) => call(
            "regexp_replace",
            vec![s.clone(), p.clone(), r.clone(), string("g")],
        ),
        ("regexp_replace_one", [s, p, r]) => {
            call("regexp_replace", vec![s.clone(), p.clone(), r.clone()])
        }
        ("sha2", [s, bits]) => sha2(s, bits),
        ("concat_ws", [sep, arrays @ ..]) if !arrays.is_empty() && arrays.iter().any(is_array) => {
            concat_arrays(sep, arrays)
        }
        _ => return None,
    })
}

/// `CASE bits WHEN 224 THEN lower(hex(sha224(s))) .. END`: NULL for another length.
fn sha2(s: &Expr, bits: &Expr) -> Expr {
    let digest = |f: &str| call("lower", vec![call("hex", vec![call(f, vec![s.clone()])])]);
    Expr::Case {
        case_token: AttachedToken::empty(),
        end_token: AttachedToken::empty(),
        operand: Some(Box::new(bits.clone())),
        conditions: [
            (0, "sha256"),
            (224, "sha224"),
            (256, "sha256"),
            (384, "sha384"),
            (512, "sha512"),
        ]
        .into_iter()
        .map(|(n, f)| CaseWhen {
            condition: number(n),
            result: digest(f),
        })
        .collect(),
        else_result: None,
    }
}

/// An array literal: `[..]` or `array(..)`.
fn is_array(e: &Expr) -> bool {
    match e {
        Expr::Array(_) => true,
        Expr::Function(f) => f.name.to_string().eq_ignore_ascii_case("array"),
        _ => false,
    }
}

/// Doris's `concat_ws(sep, arrays..)`: the arrays' non-NULL elements joined by `sep`.
fn concat_arrays(sep: &Expr, arrays: &[Expr]) -> Expr {
    if arrays.iter().any(is_null) {
        return when(Expr::IsNull(Box::new(sep.clone())), null(), string(""));
    }
    let all = match arrays {
        [one] => one.clone(),
        _ => call("array_concat", arrays.to_vec()),
    };
    let joined = call("array_to_string", vec![all, sep.clone()]);
    let any_array_null = arrays
        .iter()
        .map(|a| Expr::IsNull(Box::new(a.clone())))
        .reduce(|a, b| binary(a, BinaryOperator::Or, b))
        .unwrap_or_else(|| Expr::value(Value::Boolean(false)));
    when(
        Expr::IsNull(Box::new(sep.clone())),
        null(),
        when(any_array_null, string(""), joined),
    )
}

fn null() -> Expr {
    Expr::value(Value::Null)
}

fn is_null(e: &Expr) -> bool {
    matches!(e, Expr::Value(v) if v.value == Value::Null)
}

/// `CASE WHEN condition THEN then ELSE otherwise END`.
/// True for a literal written `-<number>`.
fn is_negative_literal(e: &Expr) -> bool {
    matches!(e, Expr::UnaryOp { op: basalt_sql::ast::UnaryOperator::Minus, expr }
        if matches!(&**expr, Expr::Value(v) if matches!(v.value, Value::Number(..))))
}

fn when(condition: Expr, then: Expr, otherwise: Expr) -> Expr {
    Expr::Case {
        case_token: AttachedToken::empty(),
        end_token: AttachedToken::empty(),
        operand: None,
        conditions: vec![CaseWhen {
            condition,
            result: then,
        }],
        else_result: Some(Box::new(otherwise)),
    }
}

/// `e`, NULL when any of `args` is NULL (at once for a NULL literal).
fn null_if_any_null(args: &[Expr], e: Expr) -> Expr {
    if args.iter().any(is_null) {
        return null();
    }
    let any_null = args
        .iter()
        .map(|a| Expr::IsNull(Box::new(a.clone())))
        .reduce(|a, b| binary(a, BinaryOperator::Or, b));
    match any_null {
        Some(condition) => when(condition, null(), e),
        None => e,
    }
}

/// `INTERVAL n QUARTER` (n a literal) as `INTERVAL 3n MONTH`, which DataFusion reads.
fn quarters(e: &Expr) -> Option<Expr> {
    let Expr::Interval(interval) = e else {
        return None;
    };
    if !matches!(
        interval.leading_field,
        Some(basalt_sql::ast::DateTimeField::Quarter)
    ) {
        return None;
    }
    let n: i64 = match interval.value.as_ref() {
        Expr::Value(v) => match &v.value {
            Value::Number(n, _) => n.parse().ok()?,
            Value::SingleQuotedString(n) => n.trim().parse().ok()?,
            _ => return None,
        },
        _ => return None,
    };
    let mut months = interval.clone();
    months.value = Box::new(number(n.checked_mul(3)?));
    months.leading_field = Some(basalt_sql::ast::DateTimeField::Month);
    Some(Expr::Interval(months))
}
