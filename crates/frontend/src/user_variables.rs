//! User variables' values (`@name`) as MySQL keeps them: an INTEGER, DECIMAL, DOUBLE or string
//! (NULL is the absence of a value). SET stores them from a literal or from an evaluated
//! expression; queries read them back as typed scalars.

use crate::variables::VarValue;
use basalt_sql::ast::{self, CastKind, Expr, UnaryOperator, Value};
use datafusion::arrow::datatypes::DataType;
use datafusion::arrow::util::display::array_value_to_string;
use datafusion::common::ScalarValue;

/// The value of a literal as written (`10`, `1.5`, `1e3`, `'abc'`, `TRUE`); `None` for NULL.
pub(crate) fn from_literal(value: &Value, negative: bool) -> Option<VarValue> {
    let sign = if negative { "-" } else { "" };
    Some(match value {
        Value::Null => return None,
        Value::Boolean(b) => VarValue::Int(i64::from(*b)),
        Value::Number(n, _) => number(&format!("{sign}{n}")),
        Value::SingleQuotedString(s) | Value::DoubleQuotedString(s) => VarValue::Str(s.clone()),
        other => VarValue::Str(other.to_string()),
    })
}

/// A numeric literal's type as MySQL reads it: an exponent makes a DOUBLE, a point a DECIMAL.
fn number(text: &str) -> VarValue {
    if text.contains(['e', 'E']) {
        return text
            .parse()
            .map(VarValue::Double)
            .unwrap_or_else(|_| VarValue::Str(text.to_string()));
    }
    if !text.contains('.') {
        if let Ok(i) = text.parse() {
            return VarValue::Int(i);
        }
    }
    VarValue::Decimal(text.to_string())
}

/// The value of an evaluated expression; `None` for NULL. A DATETIME is kept as MySQL's text
/// of it, with `digits` fractional digits when its type declares them.
pub(crate) fn from_scalar(
    value: &ScalarValue,
    digits: Option<u8>,
) -> datafusion::common::Result<Option<VarValue>> {
    if value.is_null() {
        return Ok(None);
    }
    Ok(Some(match value {
        ScalarValue::TimestampSecond(_, None)
        | ScalarValue::TimestampMillisecond(_, None)
        | ScalarValue::TimestampMicrosecond(_, None)
        | ScalarValue::TimestampNanosecond(_, None) => {
            VarValue::Str(basalt_functions::datetime_text(value, digits)?)
        }
        ScalarValue::Boolean(Some(b)) => VarValue::Int(i64::from(*b)),
        ScalarValue::Int8(Some(v)) => VarValue::Int(i64::from(*v)),
        ScalarValue::Int16(Some(v)) => VarValue::Int(i64::from(*v)),
        ScalarValue::Int32(Some(v)) => VarValue::Int(i64::from(*v)),
        ScalarValue::Int64(Some(v)) => VarValue::Int(*v),
        ScalarValue::UInt8(Some(v)) => VarValue::Int(i64::from(*v)),
        ScalarValue::UInt16(Some(v)) => VarValue::Int(i64::from(*v)),
        ScalarValue::UInt32(Some(v)) => VarValue::Int(i64::from(*v)),
        ScalarValue::UInt64(Some(v)) => match i64::try_from(*v) {
            Ok(i) => VarValue::Int(i),
            Err(_) => VarValue::Decimal(v.to_string()),
        },
        ScalarValue::Float32(Some(v)) => VarValue::Double(f64::from(*v)),
        ScalarValue::Float64(Some(v)) => VarValue::Double(*v),
        ScalarValue::Decimal128(..) | ScalarValue::Decimal256(..) => {
            VarValue::Decimal(display(value)?)
        }
        ScalarValue::Binary(Some(b))
        | ScalarValue::LargeBinary(Some(b))
        | ScalarValue::BinaryView(Some(b))
        | ScalarValue::FixedSizeBinary(_, Some(b)) => {
            VarValue::Str(String::from_utf8_lossy(b).into_owned())
        }
        // Strings, dates, times and everything else are kept as their text, as MySQL does.
        _ => VarValue::Str(display(value)?),
    }))
}

fn display(value: &ScalarValue) -> datafusion::common::Result<String> {
    Ok(array_value_to_string(&value.to_array()?, 0)?)
}

/// The scalar a query reads for a user variable.
pub(crate) fn to_scalar(value: VarValue) -> ScalarValue {
    match value {
        VarValue::Int(i) => ScalarValue::Int64(Some(i)),
        VarValue::Double(d) => ScalarValue::Float64(Some(d)),
        VarValue::Decimal(text) => decimal(&text).unwrap_or(ScalarValue::Utf8(Some(text))),
        VarValue::Str(s) => ScalarValue::Utf8(Some(s)),
    }
}

/// A literal of a user variable's value, of its type (NULL for none): what a query reads in
/// place of a value computed before it (a DOUBLE is a cast, as no literal is one).
pub(crate) fn literal(value: Option<&VarValue>) -> Expr {
    match value {
        None => Expr::value(Value::Null),
        Some(VarValue::Int(i)) if *i < 0 => Expr::UnaryOp {
            op: UnaryOperator::Minus,
            expr: Box::new(Expr::value(Value::Number(
                i.unsigned_abs().to_string(),
                false,
            ))),
        },
        Some(VarValue::Int(i)) => Expr::value(Value::Number(i.to_string(), false)),
        Some(VarValue::Decimal(text)) if decimal(text).is_some() => match text.strip_prefix('-') {
            Some(digits) => Expr::UnaryOp {
                op: UnaryOperator::Minus,
                expr: Box::new(Expr::value(Value::Number(digits.to_string(), false))),
            },
            None => Expr::value(Value::Number(text.clone(), false)),
        },
        Some(VarValue::Double(d)) => Expr::Cast {
            kind: CastKind::Cast,
            expr: Box::new(Expr::value(Value::SingleQuotedString(d.to_string()))),
            data_type: ast::DataType::Double(ast::ExactNumberInfo::None),
            array: false,
            format: None,
        },
        Some(VarValue::Decimal(text) | VarValue::Str(text)) => {
            Expr::value(Value::SingleQuotedString(text.clone()))
        }
    }
}

/// The type a query plans with for a user variable.
pub(crate) fn data_type(value: Option<&VarValue>) -> DataType {
    match value {
        Some(VarValue::Int(_)) => DataType::Int64,
        Some(VarValue::Double(_)) => DataType::Float64,
        Some(VarValue::Decimal(text)) => decimal(text)
            .map(|s| s.data_type())
            .unwrap_or(DataType::Utf8),
        _ => DataType::Utf8,
    }
}

/// `-12.50` as Decimal128(4, 2); `None` when the text is no decimal of at most 38 digits.
fn decimal(text: &str) -> Option<ScalarValue> {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let (int_part, frac_part) = digits.split_once('.').unwrap_or((digits, ""));
    let all = format!("{int_part}{frac_part}");
    if all.is_empty() || all.len() > 38 || !all.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let magnitude: i128 = all.parse().ok()?;
    let scale = i8::try_from(frac_part.len()).ok()?;
    let precision = u8::try_from(
        all.trim_start_matches('0')
            .len()
            .max(frac_part.len())
            .max(1),
    )
    .ok()?;
    let value = if negative { -magnitude } else { magnitude };
    Some(ScalarValue::Decimal128(Some(value), precision, scale))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_keep_mysql_types() {
        let n = |s: &str| Value::Number(s.to_string(), false);
        assert_eq!(from_literal(&n("10"), false), Some(VarValue::Int(10)));
        assert_eq!(from_literal(&n("10"), true), Some(VarValue::Int(-10)));
        assert_eq!(
            from_literal(&n("1.50"), false),
            Some(VarValue::Decimal("1.50".into()))
        );
        assert_eq!(
            from_literal(&n("1e3"), false),
            Some(VarValue::Double(1000.0))
        );
        assert_eq!(from_literal(&Value::Null, false), None);
        // Too large for BIGINT: an exact DECIMAL, not a wrapped integer.
        assert_eq!(
            from_literal(&n("99999999999999999999"), false),
            Some(VarValue::Decimal("99999999999999999999".into()))
        );
    }

    #[test]
    fn decimals_read_back_exactly() {
        assert_eq!(
            to_scalar(VarValue::Decimal("-12.50".into())),
            ScalarValue::Decimal128(Some(-1250), 4, 2)
        );
        assert_eq!(
            to_scalar(VarValue::Decimal("0.05".into())),
            ScalarValue::Decimal128(Some(5), 2, 2)
        );
        let scalar = ScalarValue::Decimal128(Some(315), 5, 2);
        assert_eq!(
            from_scalar(&scalar, None).unwrap(),
            Some(VarValue::Decimal("3.15".into()))
        );
        assert_eq!(
            from_scalar(&ScalarValue::Utf8(Some("ab".into())), None).unwrap(),
            Some(VarValue::Str("ab".into()))
        );
    }
}
