//! MySQL's fractional-second digits ("decimals") of a temporal function's result, worked out
//! from its arguments when the statement is planned, and the TIME range those digits allow.
//!
//! Two readings of an argument, as MySQL (and MariaDB) have them:
//! - [`declared`]: the digits its type carries: a DATETIME(p)/TIME(p) field its p, a DATE or an
//!   integer none, a DECIMAL(m, s) its scale, a DOUBLE or text six. `SEC_TO_TIME`, `MAKETIME`
//!   and `ADDTIME` of text take these.
//! - [`precision`]: the same, except that a text literal is read and its spelled fraction
//!   counted (`'10:00:00.10'` has two). `TIME(x)`, `TIMESTAMP(x)`, `TIMEDIFF`, `CONVERT_TZ` and
//!   `ADDTIME` of a TIME or DATETIME take these.
//!
//! The result field carries the digits ([`marked`]), so the client is shown exactly that many
//! and a table created from the query declares them; a TIME result past the range is clipped to
//! `838:59:59` followed by that many nines ([`clip_time`]), as MySQL clips it. An argument
//! whose digits are unknown (a DATETIME expression that carries none) leaves the result
//! unmarked, shown with the digits its value needs.

use basalt_common::time_value::MAX_TIME_MICROS;
use basalt_common::types::FRACTION_DIGITS_KEY;
use datafusion::arrow::datatypes::{DataType, Field, FieldRef, TimeUnit};
use datafusion::common::{Result, ScalarValue};
use datafusion::logical_expr::{
    ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
};
use std::collections::HashMap;
use std::sync::Arc;

/// The most fractional digits a DATETIME or TIME has.
pub const MAX_DIGITS: u8 = 6;

/// The digits an argument's type carries (see the module doc); None when unknown.
pub fn declared(field: &Field) -> Option<u8> {
    match field.data_type() {
        DataType::Timestamp(..) | DataType::Time32(_) | DataType::Time64(_) => {
            basalt_common::fraction_digits(field)
        }
        DataType::Decimal32(_, s)
        | DataType::Decimal64(_, s)
        | DataType::Decimal128(_, s)
        | DataType::Decimal256(_, s) => Some((*s).clamp(0, MAX_DIGITS as i8) as u8),
        DataType::Float16 | DataType::Float32 | DataType::Float64 => Some(MAX_DIGITS),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => Some(MAX_DIGITS),
        t if t.is_integer() => Some(0),
        DataType::Null | DataType::Boolean | DataType::Date32 | DataType::Date64 => Some(0),
        _ => None,
    }
}

/// The digits of an argument as a temporal value: a text literal's spelled fraction, a
/// DATETIME or TIME literal's significant digits, else [`declared`].
pub fn precision(field: &Field, literal: Option<&ScalarValue>) -> Option<u8> {
    if let Some(marked) = basalt_common::fraction_digits(field) {
        return Some(marked);
    }
    match literal {
        Some(ScalarValue::Utf8(Some(s)))
        | Some(ScalarValue::LargeUtf8(Some(s)))
        | Some(ScalarValue::Utf8View(Some(s))) => Some(spelled_digits(s)),
        Some(ScalarValue::TimestampMicrosecond(Some(us), _))
        | Some(ScalarValue::Time64Microsecond(Some(us))) => Some(significant_digits(*us)),
        _ => declared(field),
    }
}

/// The fraction digits a temporal text spells (`'2001-01-01 10:00:00.10'` two), at most six.
pub fn spelled_digits(text: &str) -> u8 {
    let Some((_, fraction)) = text.trim().rsplit_once('.') else {
        return 0;
    };
    let digits = fraction.bytes().take_while(u8::is_ascii_digit).count();
    digits.min(usize::from(MAX_DIGITS)) as u8
}

/// The fraction digits a microsecond value needs (`.5` one, `.000001` six).
pub fn significant_digits(micros: i64) -> u8 {
    let mut fraction = micros.rem_euclid(1_000_000);
    if fraction == 0 {
        return 0;
    }
    let mut digits = MAX_DIGITS;
    while fraction % 10 == 0 {
        fraction /= 10;
        digits -= 1;
    }
    digits
}

/// The largest of some arguments' digits; None when any is unknown.
pub fn largest(digits: impl IntoIterator<Item = Option<u8>>) -> Option<u8> {
    digits
        .into_iter()
        .try_fold(0u8, |most, d| d.map(|d| most.max(d)))
}

/// `field` marked as showing `digits` fractional digits (left as it is for None).
pub fn marked(field: Field, digits: Option<u8>) -> Field {
    match digits {
        Some(d) => {
            let mut metadata = field.metadata().clone();
            metadata.insert(
                FRACTION_DIGITS_KEY.to_string(),
                d.min(MAX_DIGITS).to_string(),
            );
            field.with_metadata(metadata)
        }
        None => field,
    }
}

/// A TIME result field named `name` with `digits`.
pub fn time_field(name: &str, digits: Option<u8>) -> Field {
    marked(
        Field::new(name, DataType::Time64(TimeUnit::Microsecond), true),
        digits,
    )
}

/// The digits a result field was marked with when planned.
pub fn of_result(field: &Field) -> Option<u8> {
    basalt_common::fraction_digits(field)
}

/// A span as a TIME of `digits` fractional digits: past the range it is `±838:59:59` with that
/// many nines (unknown digits: six), and digits beyond those are cut.
pub fn clip_time(micros: i128, digits: Option<u8>) -> i64 {
    let digits = digits.unwrap_or(MAX_DIGITS).min(MAX_DIGITS);
    let step = 10i128.pow(u32::from(MAX_DIGITS - digits));
    let max = i128::from(MAX_TIME_MICROS) + (1_000_000 - step);
    let clipped = micros.clamp(-max, max);
    (clipped - clipped % step) as i64
}

/// An empty metadata map with the digits (for fields built elsewhere).
pub fn metadata(digits: u8) -> HashMap<String, String> {
    HashMap::from([(
        FRACTION_DIGITS_KEY.to_string(),
        digits.min(MAX_DIGITS).to_string(),
    )])
}

/// How a function's result digits follow from its arguments' fields and literals.
pub type DigitsRule = fn(&[FieldRef], &[Option<&ScalarValue>]) -> Option<u8>;

/// The function body; `ScalarFunctionArgs::return_field` carries the digits.
pub type Body = fn(&ScalarFunctionArgs) -> Result<ColumnarValue>;

/// A scalar function of one result type whose result field is marked with the digits `rule`
/// works out (see the module doc), and whose work is `body`.
pub fn digits_function(
    name: &'static str,
    signature: Signature,
    returns: DataType,
    rule: DigitsRule,
    body: Body,
) -> ScalarUDF {
    ScalarUDF::new_from_impl(DigitsFunction {
        name,
        signature,
        returns,
        rule,
        body,
    })
}

#[derive(Debug)]
struct DigitsFunction {
    name: &'static str,
    signature: Signature,
    returns: DataType,
    rule: DigitsRule,
    body: Body,
}

// Known by name, signature and result type (function pointers do not compare reliably).
impl PartialEq for DigitsFunction {
    fn eq(&self, other: &Self) -> bool {
        (self.name, &self.signature, &self.returns)
            == (other.name, &other.signature, &other.returns)
    }
}

impl Eq for DigitsFunction {}

impl std::hash::Hash for DigitsFunction {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        (self.name, &self.signature, &self.returns).hash(state);
    }
}

impl ScalarUDFImpl for DigitsFunction {
    fn name(&self) -> &str {
        self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(self.returns.clone())
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let digits = (self.rule)(args.arg_fields, args.scalar_arguments);
        Ok(Arc::new(marked(
            Field::new(self.name, self.returns.clone(), true),
            digits,
        )))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        (self.body)(&args)
    }
}

/// The [`precision`] of argument `i` (unknown when there is no such argument).
pub fn precision_of(
    fields: &[FieldRef],
    literals: &[Option<&ScalarValue>],
    i: usize,
) -> Option<u8> {
    precision(fields.get(i)?, literals.get(i).copied().flatten())
}

/// The [`declared`] digits of argument `i`.
pub fn declared_of(fields: &[FieldRef], i: usize) -> Option<u8> {
    declared(fields.get(i)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits_of_arguments() {
        let field = |t: DataType| Field::new("a", t, true);
        assert_eq!(declared(&field(DataType::Decimal128(10, 2))), Some(2));
        assert_eq!(declared(&field(DataType::Decimal128(30, 10))), Some(6));
        assert_eq!(declared(&field(DataType::Int64)), Some(0));
        assert_eq!(declared(&field(DataType::Float64)), Some(6));
        assert_eq!(declared(&field(DataType::Utf8)), Some(6));
        let unmarked = field(DataType::Timestamp(TimeUnit::Microsecond, None));
        assert_eq!(declared(&unmarked), None);
        assert_eq!(declared(&marked(unmarked.clone(), Some(3))), Some(3));
        let text = ScalarValue::Utf8(Some("2001-01-01 10:00:00.10".into()));
        assert_eq!(precision(&field(DataType::Utf8), Some(&text)), Some(2));
        assert_eq!(precision(&field(DataType::Utf8), None), Some(6));
        let at = ScalarValue::TimestampMicrosecond(Some(1_500_000), None);
        assert_eq!(precision(&unmarked, Some(&at)), Some(1));
        assert_eq!(largest([Some(1), Some(3)]), Some(3));
        assert_eq!(largest([Some(1), None]), None);
    }

    #[test]
    fn spelled_and_significant_digits() {
        assert_eq!(spelled_digits("10:00:00"), 0);
        assert_eq!(spelled_digits("10:00:00.120"), 3);
        assert_eq!(spelled_digits("1.1234567"), 6);
        assert_eq!(significant_digits(1_120_000), 2);
        assert_eq!(significant_digits(-1), 6);
        assert_eq!(significant_digits(3_000_000), 0);
    }

    #[test]
    fn clipping_keeps_the_nines_the_digits_allow() {
        let max = i128::from(MAX_TIME_MICROS);
        assert_eq!(clip_time(max + 5_000_000, Some(0)), MAX_TIME_MICROS);
        assert_eq!(
            clip_time(max + 5_000_000, Some(1)),
            MAX_TIME_MICROS + 900_000
        );
        assert_eq!(
            clip_time(-max - 5_000_000, Some(6)),
            -MAX_TIME_MICROS - 999_999
        );
        assert_eq!(clip_time(1_234_567, Some(2)), 1_230_000);
        assert_eq!(clip_time(-1_234_567, Some(2)), -1_230_000);
    }
}
