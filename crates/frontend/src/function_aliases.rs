//! Doris and MySQL functions that are DataFusion functions under another name, or short
//! expressions over them: `collect_list`/`collect_set` are `array_agg` without NULLs ([] for no
//! values), the `array_push*`/`array_pop*` family, ELT, `[not_]null_or_empty`,
//! `digital_masking`, Doris's `multi_distinct_*` aggregates (the DISTINCT forms), `sum0`
//! (0 for no values) and `sem` (standard error of the mean);
//! `array_concat` is NULL when any array is; MySQL's FLOOR/CEIL(ING)/TRUNCATE/ROUND (typed as MySQL
//! types them), LOCATE with a position, SPACE, ISNULL, OCT and Doris's LENGTHB; Doris's
//! LTRIM/RTRIM(s, rem) remove a whole string; the counts of LEFT/RIGHT/REPEAT/LPAD/RPAD read as
//! MySQL reads them; GREATEST/LEAST are NULL with a NULL; Doris 2.0's `aes_*_v2`/`sm4_*_v2`
//! are the plain functions.

use crate::mysql_compat::{binary, call, cast, number, string};
use basalt_sql::ast::helpers::attached_token::AttachedToken;
use basalt_sql::ast::{
    BinaryOperator, CaseWhen, DataType, DuplicateTreatment, Expr, FunctionArguments, Value,
};

/// The rewrite of `name(args)`, if it is one of these functions.
pub(crate) fn rewrite(name: &str, args: &[Expr]) -> Option<Expr> {
    let arg = |i: usize| args[i].clone();
    Some(match name {
        // Doris: [] for a group without values.
        "collect_list" | "collect_set" if args.len() == 1 => call(
            basalt_functions::EMPTY_LIST_IF_NULL,
            vec![without_nulls(name == "collect_set", arg(0))],
        ),
        "bit_and" | "bit_or" | "bit_xor" if args.len() == 1 => mysql_bits(name, arg(0)),
        // Doris 2.0's names for the forms that follow block_encryption_mode, as Basalt's do.
        "aes_encrypt_v2" | "aes_decrypt_v2" | "sm4_encrypt_v2" | "sm4_decrypt_v2" => {
            call(name.trim_end_matches("_v2"), args.to_vec())
        }
        // Doris plans DISTINCT aggregates as these; they are the DISTINCT forms.
        "multi_distinct_sum" if args.len() == 1 => distinct_call("sum", args.to_vec()),
        "multi_distinct_count" if !args.is_empty() => distinct_call("count", args.to_vec()),
        "multi_distinct_group_concat" if (1..=2).contains(&args.len()) => {
            let separator = args.get(1).cloned().unwrap_or_else(|| string(","));
            let value = call("mysql_concat", vec![arg(0)]);
            distinct_call("string_agg", vec![value, separator])
        }
        // Doris's SUM0: SUM, but 0 for a group without values.
        "sum0" if args.len() == 1 => call("coalesce", vec![call("sum", args.to_vec()), number(0)]),
        // Doris's CORR_WELFORD: CORR computed with Welford's updates; the same correlation.
        "corr_welford" if args.len() == 2 => call("corr", args.to_vec()),
        // Doris's SEM: the standard error of the mean, sqrt(sample variance / count).
        "sem" if args.len() == 1 => call(
            "sqrt",
            vec![binary(
                call("var_samp", args.to_vec()),
                BinaryOperator::Divide,
                call("count", args.to_vec()),
            )],
        ),
        // Doris: NULL when any array is NULL (DataFusion skips NULL arrays).
        "array_concat" | "array_cat" if !args.is_empty() => null_if_any_null(args, name),
        // MySQL and Doris: NULL when any argument is NULL (DataFusion skips NULLs).
        "greatest" | "least" if !args.is_empty() => null_if_any_null(args, name),
        "array_pushback" if args.len() == 2 => call("array_append", args.to_vec()),
        "array_pushfront" if args.len() == 2 => call("array_prepend", vec![arg(1), arg(0)]),
        "array_popback" if args.len() == 1 => call("array_pop_back", args.to_vec()),
        "array_popfront" if args.len() == 1 => call("array_pop_front", args.to_vec()),
        // ELT(n, s1, s2, ..): the n-th string, NULL when there is none.
        "elt" if args.len() >= 2 => Expr::Case {
            case_token: AttachedToken::empty(),
            end_token: AttachedToken::empty(),
            operand: Some(Box::new(arg(0))),
            conditions: (1..args.len())
                .map(|i| CaseWhen {
                    condition: number(i as i64),
                    result: arg(i),
                })
                .collect(),
            else_result: None,
        },
        // DIGITAL_MASKING(n): the first 3 and last 4 digits around '****'.
        "digital_masking" if args.len() == 1 => {
            let text = cast(arg(0), basalt_sql::ast::DataType::String(None));
            // MySQL's CONCAT: NULL for NULL (DataFusion's skips it and gave '****').
            call(
                "mysql_concat",
                vec![
                    call("left", vec![text.clone(), number(3)]),
                    string("****"),
                    call("right", vec![text, number(4)]),
                ],
            )
        }
        // Doris's linear regression aggregates read text and booleans as numbers (DOUBLE).
        "regr_slope" | "regr_intercept" | "regr_count" | "regr_r2" | "regr_avgx" | "regr_avgy"
        | "regr_sxx" | "regr_syy" | "regr_sxy"
            if args.len() == 2 && !args.iter().all(is_double_cast) =>
        {
            let double = |e: Expr| match is_double_cast(&e) {
                true => e,
                false => cast(
                    e,
                    basalt_sql::ast::DataType::Double(basalt_sql::ast::ExactNumberInfo::None),
                ),
            };
            call(name, vec![double(arg(0)), double(arg(1))])
        }
        // MySQL's FLOOR, CEIL/CEILING, TRUNCATE and ROUND, typed as MySQL types them.
        // Doris's FLOOR(x, d) / CEIL(x, d) round down or up to `d` digits.
        "floor" | "ceil" | "ceiling" if args.len() == 1 || args.len() == 2 => call(
            basalt_functions::mysql_rounding_function(name)?,
            args.to_vec(),
        ),
        "truncate" | "round" if args.len() == 2 || (name == "round" && args.len() == 1) => call(
            basalt_functions::mysql_rounding_function(name)?,
            args.to_vec(),
        ),
        // MySQL's counts: any number (clamped to BIGINT); negative is '' or, padding, NULL.
        "left" | "right" | "repeat" if args.len() == 2 && !is_plain_count(&args[1]) => {
            call(name, vec![arg(0), count(arg(1), false)])
        }
        "lpad" | "rpad" if args.len() == 3 && !is_plain_count(&args[1]) => {
            call(name, vec![arg(0), count(arg(1), true), arg(2)])
        }
        // LOCATE(sub, s, pos); the two-argument form is strpos.
        "locate" | "position" if args.len() == 3 => call("mysql_locate", args.to_vec()),
        "space" if args.len() == 1 && is_plain_count(&args[0]) => {
            call("repeat", vec![string(" "), arg(0)])
        }
        "space" if args.len() == 1 => call("repeat", vec![string(" "), count(arg(0), false)]),
        // MariaDB's two-argument LPAD/RPAD pad with spaces.
        "lpad" | "rpad" if args.len() == 2 => rewrite(name, &[arg(0), arg(1), string(" ")])
            .unwrap_or_else(|| call(name, vec![arg(0), arg(1), string(" ")])),
        // Doris's LTRIM/RTRIM(s, rem) remove `rem` as a string, repeatedly, as
        // TRIM(LEADING/TRAILING rem FROM s) does (not its characters; that is LTRIM_IN/RTRIM_IN).
        "ltrim" if args.len() == 2 => call("mysql_trim", vec![arg(0), arg(1), number(1)]),
        "rtrim" if args.len() == 2 => call("mysql_trim", vec![arg(0), arg(1), number(2)]),
        "isnull" if args.len() == 1 => Expr::IsNull(Box::new(arg(0))),
        "oct" if args.len() == 1 => call("conv", vec![arg(0), number(10), number(8)]),
        // Doris: LENGTHB counts bytes, as LENGTH does.
        "lengthb" if args.len() == 1 => call("length", args.to_vec()),
        "null_or_empty" if args.len() == 1 => binary(
            Expr::IsNull(Box::new(arg(0))),
            BinaryOperator::Or,
            binary(arg(0), BinaryOperator::Eq, string("")),
        ),
        "not_null_or_empty" if args.len() == 1 => binary(
            Expr::IsNotNull(Box::new(arg(0))),
            BinaryOperator::And,
            binary(arg(0), BinaryOperator::NotEq, string("")),
        ),
        _ => {
            return crate::lambda_calls::rewrite(name, args)
                .or_else(|| crate::doris_spellings::rewrite(name, args))
                .or_else(|| crate::doris_more_spellings::rewrite(name, args))
                .or_else(|| crate::doris_aliases::rewrite(name, args))
                .or_else(|| crate::function_library::rewrite(name, args))
        }
    })
}

/// A count DataFusion's LEFT/RIGHT/REPEAT/LPAD/RPAD take as MySQL does: a non-negative
/// integer literal.
fn is_plain_count(e: &Expr) -> bool {
    matches!(e, Expr::Value(v) if matches!(&v.value, Value::Number(n, _) if n.parse::<i64>().is_ok()))
}

/// `n` as MySQL reads a count: a BIGINT, negative as 0 (or NULL when `negative_is_null`).
fn count(n: Expr, negative_is_null: bool) -> Expr {
    call(
        basalt_functions::MYSQL_COUNT,
        vec![n, number(i64::from(negative_is_null))],
    )
}

/// `name(args)`, NULL when any argument is NULL (at once for a NULL literal).
fn null_if_any_null(args: &[Expr], name: &str) -> Expr {
    let null = Expr::value(Value::Null);
    if args.contains(&null) {
        return null;
    }
    let any_null = args
        .iter()
        .map(|a| Expr::IsNull(Box::new(a.clone())))
        .reduce(|a, b| binary(a, BinaryOperator::Or, b))
        .unwrap_or_else(|| Expr::value(Value::Boolean(false)));
    Expr::Case {
        case_token: AttachedToken::empty(),
        end_token: AttachedToken::empty(),
        operand: None,
        conditions: vec![CaseWhen {
            condition: any_null,
            result: null,
        }],
        else_result: Some(Box::new(call(name, args.to_vec()))),
    }
}

/// `name(DISTINCT args)`.
pub(crate) fn distinct_call(name: &str, args: Vec<Expr>) -> Expr {
    let mut f = match call(name, args) {
        Expr::Function(f) => f,
        other => return other,
    };
    if let FunctionArguments::List(list) = &mut f.args {
        list.duplicate_treatment = Some(DuplicateTreatment::Distinct);
    }
    Expr::Function(f)
}

/// MySQL's BIT_AND / BIT_OR / BIT_XOR: the bits of the group's values read as 64-bit
/// integers, as BIGINT UNSIGNED (-4 is 18446744073709551612), and never NULL: a group without
/// values gives all bits set for AND and 0 for OR and XOR. Doris's `group_bit_*` keep the
/// argument's type and give NULL.
fn mysql_bits(name: &str, x: Expr) -> Expr {
    let bits = call(
        &format!("group_{name}"),
        vec![cast(x, DataType::BigInt(None))],
    );
    let empty = if name == "bit_and" { u64::MAX } else { 0 };
    call(
        "coalesce",
        vec![
            cast(bits, DataType::BigIntUnsigned(None)),
            cast(
                Expr::value(Value::Number(empty.to_string(), false)),
                DataType::BigIntUnsigned(None),
            ),
        ],
    )
}

/// `array_agg([DISTINCT] x) FILTER (WHERE x IS NOT NULL)`: Doris's collect_list / collect_set
/// skip NULLs.
fn without_nulls(distinct: bool, x: Expr) -> Expr {
    let mut f = match call("array_agg", vec![x.clone()]) {
        Expr::Function(f) => f,
        other => return other,
    };
    if let FunctionArguments::List(list) = &mut f.args {
        if distinct {
            list.duplicate_treatment = Some(DuplicateTreatment::Distinct);
        }
    }
    f.filter = Some(Box::new(Expr::IsNotNull(Box::new(x))));
    Expr::Function(f)
}

/// True for `CAST(x AS DOUBLE)`.
fn is_double_cast(e: &Expr) -> bool {
    matches!(
        e,
        Expr::Cast {
            data_type: basalt_sql::ast::DataType::Double(_),
            ..
        }
    )
}
