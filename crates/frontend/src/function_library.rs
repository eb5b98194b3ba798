//! How MySQL's and Doris's calendar and string-introspection functions read their arguments,
//! as statement rewrites in front of the UDFs that compute them (`basalt_functions`):
//! - `last_day` / `to_days` / `dayname` / `monthname` read their argument as a DATE (text that
//!   is no date is NULL, as for `DATE(x)`), `to_seconds` as a DATETIME, `makedate` /
//!   `from_days` / `period_add` / `period_diff` their numbers as BIGINT;
//! - `TIMESTAMP(x)` is x as a DATETIME (a literal keeps its fractional digits) and
//!   `TIMESTAMP(x, t)` adds the TIME t to it;
//! - `GET_FORMAT(DATE, 'USA')` takes its first argument as a word;
//! - `INSTR(BINARY s, t)`: BINARY asks for a byte comparison, which is how Basalt compares
//!   strings anyway, so the search reads the string itself;
//! - `COERCIBILITY(x)` depends on where x comes from (a column 2, a literal 4, a NULL 6,
//!   `USER()` and the like 3, a string function of a column 2): that is read here from the
//!   expression and handed to `mysql_coercibility` with x, which answers 5 for non-strings.

use crate::mysql_compat::{as_temporal, call, cast, number, string, with_digits};
use basalt_sql::ast::{DataType, Expr, FunctionArguments, TimezoneInfo, Value};

/// The rewrite of `name(args)`, if it is one of these functions.
pub(crate) fn rewrite(name: &str, args: &[Expr]) -> Option<Expr> {
    let date = |e: &Expr| cast(as_temporal(e.clone()), DataType::Date);
    let datetime = |e: &Expr| {
        cast(
            as_temporal(e.clone()),
            DataType::Timestamp(Some(6), TimezoneInfo::None),
        )
    };
    let bigint = |e: &Expr| cast(e.clone(), DataType::BigInt(None));
    Some(match (name, args) {
        ("last_day" | "to_days", [d]) => call(name, vec![date(d)]),
        ("dayname", [d]) => call("date_format", vec![date(d), string("%W")]),
        ("monthname", [d]) => call("date_format", vec![date(d), string("%M")]),
        ("to_seconds", [d]) => call(name, vec![datetime(d)]),
        ("from_days", [n]) => call(name, vec![bigint(n)]),
        ("makedate" | "period_add" | "period_diff", [a, b]) => {
            call(name, vec![bigint(a), bigint(b)])
        }
        ("timestamp", [x]) => timestamp(x),
        ("timestamp", [x, t]) => call("addtime", vec![timestamp(x), t.clone()]),
        ("get_format", [kind, standard]) => {
            let kind = match kind {
                Expr::Identifier(word) => string(&word.value),
                other => other.clone(),
            };
            call(name, vec![kind, standard.clone()])
        }
        ("instr", [s, t]) if is_binary_cast(s) || is_binary_cast(t) => {
            call(name, vec![without_binary(s), without_binary(t)])
        }
        ("coercibility", [x]) => call(
            basalt_functions::MYSQL_COERCIBILITY,
            vec![x.clone(), number(derivation(x))],
        ),
        _ => return None,
    })
}

/// `BINARY x` / `CAST(x AS BINARY)`, as the statement has it by now.
fn is_binary_cast(e: &Expr) -> bool {
    matches!(
        e,
        Expr::Cast {
            data_type: DataType::Bytea
                | DataType::Binary(_)
                | DataType::Varbinary(_)
                | DataType::Blob(_),
            ..
        }
    )
}

fn without_binary(e: &Expr) -> Expr {
    match e {
        Expr::Cast { expr, .. } if is_binary_cast(e) => (**expr).clone(),
        other => other.clone(),
    }
}

/// TIMESTAMP(x): a string literal is read as the date or datetime it spells and shown with
/// its own fractional digits; anything else is cast to DATETIME.
fn timestamp(x: &Expr) -> Expr {
    let datetime = DataType::Timestamp(Some(6), TimezoneInfo::None);
    match x {
        Expr::Value(v) => match &v.value {
            Value::SingleQuotedString(s) | Value::DoubleQuotedString(s) => {
                let digits = s
                    .trim()
                    .rsplit_once('.')
                    .filter(|(head, _)| head.contains(':'))
                    .map_or(0, |(_, fraction)| {
                        fraction.chars().take_while(char::is_ascii_digit).count()
                    });
                with_digits(cast(x.clone(), datetime), digits.min(6) as u64)
            }
            // A number's decimals are its fraction digits (TIMESTAMP(20171231235959.9)).
            Value::Number(n, _) => {
                let digits = n.split_once('.').map_or(0, |(_, f)| f.len());
                with_digits(cast(x.clone(), datetime), digits.min(6) as u64)
            }
            _ => cast(x.clone(), datetime),
        },
        _ => cast(x.clone(), datetime),
    }
}

/// MySQL's coercibility of a string expression, by where its value comes from: 0 explicit
/// COLLATE, 2 a column (and string functions of one), 3 a system constant, 4 a literal,
/// 5 a number, 6 NULL.
fn derivation(e: &Expr) -> i64 {
    match e {
        Expr::Nested(inner) => derivation(inner),
        Expr::Collate { .. } => 0,
        Expr::Identifier(_) | Expr::CompoundIdentifier(_) => 2,
        Expr::Value(v) => match &v.value {
            Value::Null => 6,
            Value::Number(..) => 5,
            _ => 4,
        },
        Expr::Function(f) => {
            let name = f.name.to_string().to_ascii_lowercase();
            if matches!(
                name.as_str(),
                "user"
                    | "current_user"
                    | "session_user"
                    | "system_user"
                    | "database"
                    | "schema"
                    | "version"
            ) {
                return 3;
            }
            match &f.args {
                FunctionArguments::List(list) => list
                    .args
                    .iter()
                    .filter_map(|a| match a {
                        basalt_sql::ast::FunctionArg::Unnamed(
                            basalt_sql::ast::FunctionArgExpr::Expr(e),
                        ) => Some(derivation(e)),
                        _ => None,
                    })
                    .filter(|d| *d < 5)
                    .min()
                    .unwrap_or(4),
                _ => 4,
            }
        }
        _ => 4,
    }
}
