//! MySQL's character set conversions in a statement, planned as
//! [`basalt_functions::charset_conversion`] calls: `CONVERT(x USING cs)` and `CAST(x AS CHAR[(n)]
//! CHARACTER SET cs)` (a sequence or character `cs` cannot hold becomes `?`), `CHAR(n, .. USING
//! cs)` (NULL then) and an introducer before a hex literal, `_utf8mb4 0xD0B1` (the bytes read as
//! that character set; an error for bytes that are no characters, as in MySQL). `binary` as the
//! character set is the value's bytes (`CAST(x AS BINARY)`).

use crate::mysql_compat::{call, cast, number, string};
use basalt_functions::charset_conversion as conversion;
use basalt_sql::ast::{
    CharacterLength, DataType, Expr, FunctionArg, FunctionArgExpr, FunctionArguments, ObjectName,
    Value,
};

/// The rewrite of `e`, if it is one of these forms.
pub(crate) fn rewrite(e: &Expr) -> Option<Expr> {
    match e {
        Expr::Convert {
            expr,
            data_type,
            charset: Some(charset),
            ..
        } => {
            let charset = charset_name(charset);
            let length = match data_type {
                Some(DataType::Char(Some(CharacterLength::IntegerLength { length, .. }))) => {
                    Some(*length)
                }
                _ => None,
            };
            let converted = converted(
                (**expr).clone(),
                &charset,
                conversion::INVALID_AS_QUESTION_MARK,
            );
            Some(match length {
                Some(n) if !is_binary(&charset) => call("left", vec![converted, number(n as i64)]),
                _ => converted,
            })
        }
        Expr::Prefixed { prefix, value }
            if prefix.value.starts_with('_')
                && matches!(&**value, Expr::Value(v) if matches!(v.value, Value::HexStringLiteral(_))) =>
        {
            let charset = prefix.value.trim_start_matches('_');
            Some(converted(
                (**value).clone(),
                charset,
                conversion::INVALID_IS_ERROR,
            ))
        }
        Expr::Function(f) => char_using(f),
        _ => None,
    }
}

/// `CHAR(n, .. USING cs)`, read by the parser as `char(n, .., using => 'cs')`.
fn char_using(f: &basalt_sql::ast::Function) -> Option<Expr> {
    if !f.name.to_string().eq_ignore_ascii_case("char") {
        return None;
    }
    let FunctionArguments::List(list) = &f.args else {
        return None;
    };
    let (last, codes) = list.args.split_last()?;
    let FunctionArg::Named {
        name,
        arg: FunctionArgExpr::Expr(Expr::Value(v)),
        ..
    } = last
    else {
        return None;
    };
    let Value::SingleQuotedString(charset) = &v.value else {
        return None;
    };
    if !name.value.eq_ignore_ascii_case("using") {
        return None;
    }
    let mut plain = f.clone();
    if let FunctionArguments::List(list) = &mut plain.args {
        list.args = codes.to_vec();
    }
    Some(converted(
        Expr::Function(plain),
        charset,
        conversion::INVALID_AS_NULL,
    ))
}

fn charset_name(name: &ObjectName) -> String {
    name.0
        .last()
        .and_then(|part| part.as_ident())
        .map(|i| i.value.clone())
        .unwrap_or_default()
}

fn is_binary(charset: &str) -> bool {
    charset.eq_ignore_ascii_case("binary")
}

/// `e` converted to `charset`, with `mode` for what it cannot hold.
fn converted(e: Expr, charset: &str, mode: i64) -> Expr {
    if is_binary(charset) {
        return cast(e, DataType::Bytea);
    }
    call(conversion::NAME, vec![e, string(charset), number(mode)])
}
