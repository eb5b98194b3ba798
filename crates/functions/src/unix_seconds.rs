//! `mysql_unix_seconds(utc, source)`: the seconds since 1970 of `utc` (a DATETIME already in
//! UTC), with as many fraction digits as `source`, the value UNIX_TIMESTAMP was given, has:
//! a BIGINT for whole seconds, else a DECIMAL with the source's digits (MySQL and Doris:
//! `UNIX_TIMESTAMP('2015-11-13 10:20:19.012')` is 1447431619.012, a DATETIME(3) column gives
//! three digits, a DECIMAL number its scale, a text column six). DataFusion's `to_unixtime`
//! dropped the fraction.

use crate::util::{arguments, output};
use basalt_common::types::{fraction_digits, FRACTION_DIGITS_KEY};
use datafusion::arrow::array::{ArrayRef, AsArray, Decimal128Array, Int64Array};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field, FieldRef, TimeUnit, TimestampMicrosecondType};
use datafusion::common::{exec_err, Result, ScalarValue};
use datafusion::logical_expr::{
    ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
    Volatility,
};
use std::sync::Arc;

/// The function's name.
pub const NAME: &str = "mysql_unix_seconds";

pub fn function() -> ScalarUDF {
    ScalarUDF::new_from_impl(UnixSeconds {
        signature: Signature::any(2, Volatility::Immutable),
    })
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct UnixSeconds {
    signature: Signature,
}

/// The fraction digits of UNIX_TIMESTAMP's argument: its column's declared digits, a DECIMAL's
/// scale, a text literal's digits after the seconds, six for text or a DOUBLE read row by row.
fn source_digits(field: &Field, literal: Option<&ScalarValue>) -> u8 {
    if let Some(d) = fraction_digits(field) {
        return d;
    }
    match field.data_type() {
        DataType::Decimal128(_, s) | DataType::Decimal256(_, s) => (*s).clamp(0, 6) as u8,
        DataType::Float32 | DataType::Float64 => 6,
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => match literal {
            Some(ScalarValue::Utf8(t) | ScalarValue::LargeUtf8(t) | ScalarValue::Utf8View(t)) => {
                t.as_deref().map_or(0, text_digits)
            }
            _ => 6,
        },
        _ => 0,
    }
}

/// Digits after the seconds of a date-time text: `2015-11-13 10:20:19.012` and
/// `20151113102019.012` have 3, `2015.11.13 10:20:19` none (its dots are the date's).
fn text_digits(text: &str) -> u8 {
    let text = text.trim();
    let seconds = match text.rfind(':') {
        Some(colon) => &text[colon..],
        // YYYYMMDDhhmmss.ffffff
        None if text.bytes().all(|b| b.is_ascii_digit() || b == b'.') => text,
        None => return 0,
    };
    seconds.split_once('.').map_or(0, |(_, fraction)| {
        fraction
            .bytes()
            .take_while(u8::is_ascii_digit)
            .count()
            .min(6) as u8
    })
}

fn result_type(digits: u8) -> DataType {
    if digits == 0 {
        DataType::Int64
    } else {
        DataType::Decimal128(18 + digits, digits as i8)
    }
}

impl ScalarUDFImpl for UnixSeconds {
    fn name(&self) -> &str {
        NAME
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(DataType::Int64)
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let [_, source] = args.arg_fields else {
            return exec_err!("{NAME} takes a DATETIME and its source");
        };
        let literal = args.scalar_arguments.get(1).copied().flatten();
        let digits = source_digits(source, literal);
        let field = Field::new(NAME, result_type(digits), true);
        Ok(Arc::new(if digits == 0 {
            field
        } else {
            field.with_metadata(std::collections::HashMap::from([(
                FRACTION_DIGITS_KEY.to_string(),
                digits.to_string(),
            )]))
        }))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let (arrays, scalar) = arguments(&args)?;
        let micros = cast(
            &arrays[0],
            &DataType::Timestamp(TimeUnit::Microsecond, None),
        )?;
        let micros = micros.as_primitive::<TimestampMicrosecondType>();
        let out: ArrayRef = match args.return_field.data_type() {
            DataType::Decimal128(p, s) => {
                let step = 10i64.pow(6 - *s as u32);
                Arc::new(
                    micros
                        .iter()
                        .map(|us| us.map(|us| i128::from(us.div_euclid(step))))
                        .collect::<Decimal128Array>()
                        .with_precision_and_scale(*p, *s)?,
                )
            }
            _ => Arc::new(
                micros
                    .iter()
                    .map(|us| us.map(|us| us.div_euclid(1_000_000)))
                    .collect::<Int64Array>(),
            ),
        };
        output(out, scalar)
    }
}

#[cfg(test)]
mod tests {
    use super::text_digits;

    #[test]
    fn digits_of_texts() {
        assert_eq!(text_digits("2015-11-13 10:20:19.012"), 3);
        assert_eq!(text_digits("2015-11-13 10:20:19"), 0);
        assert_eq!(text_digits("2015-11-13"), 0);
        assert_eq!(text_digits("2015-11-13 10:20:19.1234567"), 6);
        assert_eq!(text_digits("2015.11.13 10:20:19"), 0);
        assert_eq!(text_digits("20151113102019.012"), 3);
    }
}
