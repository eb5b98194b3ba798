//! Doris's numeric, time, text and array functions that are other Basalt expressions under
//! Doris's names, as Doris's documentation gives them: `regexp(s, p)` is `s REGEXP p`;
//! `split_by_char` is `split_by_string`; `array_reverse_sort(a)` sorts descending with NULLs
//! last; `shuffle` is `array_shuffle` and `cross_product` `array_cross_product`; `fpow` is POW and `dexp` EXP (DOUBLEs); `sec(x)` is
//! 1 / COS(x) and `csc` / `cosec(x)` 1 / SIN(x) (NULL where the divisor is 0, as any division
//! by zero); `negative(x)` is -x and `positive(x)` x; `xor(a, b)` is `a XOR b`; `fmod(a, b)` is
//! the DOUBLE remainder `a % b` (NULL for b = 0); `add_time` / `sub_time` are ADDTIME /
//! SUBTIME; `format_round(x, d)` is MySQL's FORMAT(x, d); `months_between`, `next_day`,
//! `previous_day`, `to_monday`, `year_of_week` / `yow` and `century` read their dates as DATE
//! (text that is no date is NULL, as for `DATE(x)`).

use crate::mysql_compat::{as_temporal, binary, call, cast, number, string, unless_zero};
use basalt_sql::ast::{BinaryOperator, DataType, ExactNumberInfo, Expr};

/// The rewrite of `name(args)`, if it is one of these functions.
pub(crate) fn rewrite(name: &str, args: &[Expr]) -> Option<Expr> {
    let double = |e: &Expr| cast(e.clone(), DataType::Double(ExactNumberInfo::None));
    let date = |e: &Expr| cast(as_temporal(e.clone()), DataType::Date);
    Some(match (name, args) {
        ("fpow", [a, b]) => call("pow", vec![double(a), double(b)]),
        ("dexp", [x]) => call("exp", vec![double(x)]),
        ("sec", [x]) => reciprocal(call("cos", vec![x.clone()])),
        ("csc" | "cosec", [x]) => reciprocal(call("sin", vec![x.clone()])),
        // MySQL's unary minus, which takes any operand (see mysql_compat).
        ("negative", [x]) => call(basalt_functions::MYSQL_NEGATE, vec![x.clone()]),
        ("positive", [x]) => Expr::Nested(Box::new(x.clone())),
        ("xor", [a, b]) => binary(a.clone(), BinaryOperator::Xor, b.clone()),
        ("fmod", [a, b]) => binary(double(a), BinaryOperator::Modulo, unless_zero(double(b))),
        ("add_time", [t, d]) => call("addtime", vec![t.clone(), d.clone()]),
        ("sub_time", [t, d]) => call("subtime", vec![t.clone(), d.clone()]),
        ("months_between", [end, start, rest @ ..]) if rest.len() <= 1 => {
            let mut dated = vec![date(end), date(start)];
            dated.extend(rest.iter().cloned());
            call(name, dated)
        }
        ("next_day" | "previous_day", [d, dow]) => call(name, vec![date(d), dow.clone()]),
        ("to_monday" | "year_of_week" | "yow" | "century", [d]) => call(name, vec![date(d)]),
        ("format_round", [x, d]) => call("format", vec![x.clone(), d.clone()]),
        ("regexp", [text, pattern]) => call("regexp_like", vec![text.clone(), pattern.clone()]),
        ("split_by_char", [s, c]) => call("split_by_string", vec![s.clone(), c.clone()]),
        ("array_reverse_sort", [a]) => call(
            "array_sort",
            vec![a.clone(), string("DESC"), string("NULLS LAST")],
        ),
        ("shuffle", _) => call("array_shuffle", args.to_vec()),
        ("cross_product", [a, b]) => call("array_cross_product", vec![a.clone(), b.clone()]),
        _ => return None,
    })
}

/// `1 / x`, NULL where x is 0 (the rewrites run after MySQL's division rule).
fn reciprocal(x: Expr) -> Expr {
    binary(number(1), BinaryOperator::Divide, unless_zero(x))
}
