//! Doris functions that are other Basalt expressions: second names Doris registers for a
//! function (`dceil`, `dfloor`, `dround`, `dpow`, `dlog1` (LN), `dlog10`, `add_months`,
//! `datev2`, `to_datev2`, `any`, `map_agg_v1` / `map_agg_v2`, `percentile_reservoir` (the exact
//! percentile, which a reservoir sample estimates), `orthogonal_bitmap_union_count`)
//! `is_nan` (ISNAN), `overlay(str, pos, len, new)` (INSERT), `format('{}..', ..)` (SFORMAT), `unhex_null` (UNHEX, NULL for
//! text that is no hex, empty or of an odd length), `split_part` (NULL for a field it does not have) and thin expressions: `nan()` (the DOUBLE NaN), `e()`, `pmod(a, b)` (the
//! non-negative remainder; NULL for b = 0), `like(s, p)`, `nullable(x)`, `non_nullable(x)` (an
//! error on NULL), `ignore(..)` (FALSE), `current_catalog()` ('internal', Basalt's only
//! catalog), `boolor_agg` / `booland_agg` (OR / AND of the non-NULL values read as booleans),
//! `boolxor_agg` / `bool_xor` (TRUE when exactly one value is true, as Snowflake, where Doris
//! took the name, defines it), `multi_distinct_sum0`, `group_array_union` (the distinct
//! elements of the group's arrays, in no set order), `json_extract_largeint` (an integer member as LARGEINT,
//! NULL for any other value) and `to_bitmap_with_check` (an error where `to_bitmap` gives the
//! empty bitmap: a value that is no non-negative 64-bit integer).

use crate::mysql_compat::{binary, call, cast, number, string, unless_zero};
use basalt_sql::ast::helpers::attached_token::AttachedToken;
use basalt_sql::ast::{BinaryOperator, CaseWhen, DataType, Expr, Value};

/// Doris's `split_part(s, d, n)`: NULL for field 0, for a field past the last (either way)
/// and where `s` holds no `d` at all (DataFusion's gives '' or all of `s`, or fails on 0).
fn split_part(text: &Expr, delimiter: &Expr, field: &Expr) -> Expr {
    let length = |e: Expr| call("char_length", vec![e]);
    let fields = binary(
        binary(
            binary(
                length(text.clone()),
                BinaryOperator::Minus,
                length(call(
                    "replace",
                    vec![text.clone(), delimiter.clone(), string("")],
                )),
            ),
            BinaryOperator::Divide,
            length(delimiter.clone()),
        ),
        BinaryOperator::Plus,
        number(1),
    );
    let missing = binary(
        binary(delimiter.clone(), BinaryOperator::NotEq, string("")),
        BinaryOperator::And,
        binary(
            binary(
                call("strpos", vec![text.clone(), delimiter.clone()]),
                BinaryOperator::Eq,
                number(0),
            ),
            BinaryOperator::Or,
            binary(call("abs", vec![field.clone()]), BinaryOperator::Gt, fields),
        ),
    );
    let null = Expr::value(Value::Null);
    Expr::Case {
        case_token: AttachedToken::empty(),
        end_token: AttachedToken::empty(),
        operand: None,
        conditions: vec![
            CaseWhen {
                condition: binary(field.clone(), BinaryOperator::Eq, number(0)),
                result: null.clone(),
            },
            CaseWhen {
                condition: missing,
                result: null,
            },
        ],
        else_result: Some(Box::new(call(
            "split_part",
            vec![text.clone(), delimiter.clone(), field.clone()],
        ))),
    }
}

/// The rewrite of `name(args)`, if it is one of these functions.
pub(crate) fn rewrite(name: &str, args: &[Expr]) -> Option<Expr> {
    let same = |to: &str| Some(call(to, args.to_vec()));
    let boolean = |e: &Expr| cast(e.clone(), DataType::Boolean);
    match (name, args) {
        ("dceil", [_]) => crate::function_aliases::rewrite("ceil", args),
        ("dfloor", [_]) => crate::function_aliases::rewrite("floor", args),
        ("dround", [_] | [_, _]) => crate::function_aliases::rewrite("round", args),
        ("dpow", [_, _]) => same("pow"),
        ("dlog1", [_]) => same("ln"),
        ("dlog10", [_]) => same("log10"),
        ("is_nan", [_]) => same("isnan"),
        // Doris's overlay(str, pos, len, newstr) is MySQL's INSERT (DataFusion's call form
        // takes newstr second; OVERLAY(.. PLACING ..) is unchanged).
        ("overlay", [_, _, _, _]) => same("insert"),
        // NULL also for the empty text and an odd count of digits (UNHEX reads a leading 0).
        // Doris's format('{}-{}', a, b) fills a {fmt} pattern (MySQL's FORMAT(x, d) takes a
        // number first).
        ("format", [Expr::Value(v), ..]) if matches!(&v.value, Value::SingleQuotedString(p) if p.contains('{')) => {
            same("sformat")
        }
        ("unhex_null", [x]) => {
            let length = call("length", vec![x.clone()]);
            let even = binary(
                binary(length.clone(), BinaryOperator::Modulo, number(2)),
                BinaryOperator::Eq,
                number(0),
            );
            let filled = binary(length, BinaryOperator::Gt, number(0));
            Some(Expr::Case {
                case_token: AttachedToken::empty(),
                end_token: AttachedToken::empty(),
                operand: None,
                conditions: vec![CaseWhen {
                    condition: binary(filled, BinaryOperator::And, even),
                    result: call("unhex", vec![x.clone()]),
                }],
                else_result: None,
            })
        }
        ("nan", []) => Some(call("arrow_cast", vec![string("NaN"), string("Float64")])),
        ("add_months", [_, _]) => same("months_add"),
        // DATE(x), as MySQL's DATE is planned.
        ("datev2" | "to_datev2", [x]) => Some(cast(x.clone(), DataType::Date)),
        ("any", [_]) => same("any_value"),
        ("map_agg_v1" | "map_agg_v2", [_, _]) => same("map_agg"),
        ("percentile_reservoir", [_, _]) => same("percentile"),
        ("orthogonal_bitmap_union_count", [_]) => same("bitmap_union_count"),
        ("e", []) => Some(call(
            "exp",
            vec![cast(
                number(1),
                DataType::Double(basalt_sql::ast::ExactNumberInfo::None),
            )],
        )),
        ("pmod", [a, b]) => {
            let divisor = unless_zero(b.clone());
            let remainder = binary(a.clone(), BinaryOperator::Modulo, divisor.clone());
            Some(binary(
                binary(remainder, BinaryOperator::Plus, b.clone()),
                BinaryOperator::Modulo,
                divisor,
            ))
        }
        ("like", [s, p]) => Some(Expr::Like {
            negated: false,
            any: false,
            expr: Box::new(s.clone()),
            pattern: Box::new(p.clone()),
            escape_char: None,
        }),
        ("nullable", [x]) => Some(Expr::Nested(Box::new(x.clone()))),
        ("split_part", [text, delimiter, field]) => Some(split_part(text, delimiter, field)),
        ("non_nullable", [x]) => Some(checked(
            Expr::IsNotNull(Box::new(x.clone())),
            "non_nullable: the value is NULL",
            x.clone(),
        )),
        ("ignore", _) => Some(Expr::value(Value::Boolean(false))),
        ("current_catalog", []) => Some(string("internal")),
        ("boolor_agg", [x]) => Some(call("bool_or", vec![boolean(x)])),
        ("booland_agg", [x]) => Some(call("bool_and", vec![boolean(x)])),
        ("boolxor_agg" | "bool_xor", [x]) => {
            // NULL for a group without values, like the other two.
            let trues = call(
                "count",
                vec![when(boolean(x), Expr::value(Value::Boolean(true)))],
            );
            let exactly_one = binary(trues, BinaryOperator::Eq, number(1));
            Some(when(
                binary(
                    call("count", vec![x.clone()]),
                    BinaryOperator::Gt,
                    number(0),
                ),
                exactly_one,
            ))
        }
        ("multi_distinct_sum0", [x]) => Some(call(
            "coalesce",
            vec![
                crate::function_aliases::distinct_call("sum", vec![x.clone()]),
                number(0),
            ],
        )),
        ("group_array_union", [a]) => Some(call(
            "array_distinct",
            vec![call("flatten", vec![call("array_agg", vec![a.clone()])])],
        )),
        ("json_extract_largeint" | "jsonb_extract_largeint", [doc, path]) => {
            let kind = call("json_type", vec![doc.clone(), path.clone()]);
            let integer = Expr::InList {
                expr: Box::new(kind),
                list: ["int", "bigint", "largeint"]
                    .into_iter()
                    .map(string)
                    .collect(),
                negated: false,
            };
            let text = call("json_extract_string", vec![doc.clone(), path.clone()]);
            Some(when(
                integer,
                cast(
                    text,
                    // LARGEINT is DECIMAL(39, 0), as a cast to LARGEINT is planned.
                    DataType::Decimal(basalt_sql::ast::ExactNumberInfo::PrecisionAndScale(
                        basalt_common::types::LARGEINT_PRECISION as u64,
                        0,
                    )),
                ),
            ))
        }
        ("to_bitmap_with_check", [x]) => {
            let bitmap = call("to_bitmap", vec![x.clone()]);
            let valid = binary(
                Expr::IsNull(Box::new(x.clone())),
                BinaryOperator::Or,
                binary(
                    call("bitmap_count", vec![bitmap.clone()]),
                    BinaryOperator::Gt,
                    number(0),
                ),
            );
            Some(checked(
                valid,
                "to_bitmap_with_check: the value is not a non-negative integer of at most 64 \
                 bits",
                bitmap,
            ))
        }
        _ => None,
    }
}

/// `CASE WHEN condition THEN result END`.
fn when(condition: Expr, result: Expr) -> Expr {
    Expr::Case {
        case_token: AttachedToken::empty(),
        end_token: AttachedToken::empty(),
        operand: None,
        conditions: vec![CaseWhen { condition, result }],
        else_result: None,
    }
}

/// `value`, failing the statement with `message` on a row where `condition` is not true.
fn checked(condition: Expr, message: &str, value: Expr) -> Expr {
    when(call("assert_true", vec![condition, string(message)]), value)
}
