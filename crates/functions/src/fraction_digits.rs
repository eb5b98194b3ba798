//! `CAST(x AS DATETIME(p))` and `CAST(x AS TIME(p))` keep p fractional-second digits: the value
//! is rounded half up to them (MySQL 8 and Doris; `DATETIME` without p is `DATETIME(0)`), and
//! the result column says p so clients are shown exactly p digits. The statement rewrite
//! wraps such casts in `round_fraction(value, p)`; an ARRAY<DATETIME(p)> or ARRAY<TIME(p)>
//! has its elements rounded and marked the same way. A clock read with p digits (`NOW(p)`,
//! `CURTIME(p)`) is cut to them instead, as MySQL's clock functions cut: a third argument,
//! `true`, says so.

use crate::util::{arguments, output};
use basalt_common::time_value::MAX_TIME_MICROS;
use basalt_common::types::{round_micros, FRACTION_DIGITS_KEY};
use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, ListArray, Time64MicrosecondArray, TimestampMicrosecondArray,
};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field, FieldRef, TimeUnit};
use datafusion::common::{exec_err, plan_err, Result, ScalarValue};
use datafusion::logical_expr::{
    ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
    TypeSignature, Volatility,
};
use std::collections::HashMap;
use std::sync::Arc;

#[derive(Debug, PartialEq, Eq, Hash)]
struct RoundFraction {
    signature: Signature,
}

pub fn function() -> ScalarUDF {
    ScalarUDF::new_from_impl(RoundFraction {
        signature: Signature::one_of(
            vec![TypeSignature::Any(2), TypeSignature::Any(3)],
            Volatility::Immutable,
        ),
    })
}

fn digits_of(scalars: &[Option<&ScalarValue>]) -> Result<u8> {
    match scalars.get(1) {
        Some(Some(v)) => match v.cast_to(&DataType::Int64)? {
            ScalarValue::Int64(Some(p)) if (0..=6).contains(&p) => Ok(p as u8),
            other => plan_err!("fractional digits must be 0 to 6, not {other}"),
        },
        _ => plan_err!("round_fraction needs its digits as a literal"),
    }
}

impl ScalarUDFImpl for RoundFraction {
    fn name(&self) -> &str {
        "round_fraction"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, types: &[DataType]) -> Result<DataType> {
        Ok(types[0].clone())
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let digits = digits_of(args.scalar_arguments)?;
        let ty = args.arg_fields[0].data_type().clone();
        let marked = |ty: DataType, name: &str| {
            Field::new(name, ty, true).with_metadata(HashMap::from([(
                FRACTION_DIGITS_KEY.to_string(),
                digits.to_string(),
            )]))
        };
        if let DataType::List(element) = &ty {
            let Some(element_type) = microsecond_type(element.data_type()) else {
                return plan_err!("round_fraction takes an ARRAY of DATETIME or TIME, not {ty}");
            };
            let element = marked(element_type, element.name());
            return Ok(Arc::new(Field::new(
                self.name(),
                DataType::List(Arc::new(element)),
                true,
            )));
        }
        if !matches!(
            ty,
            DataType::Timestamp(TimeUnit::Microsecond, None)
                | DataType::Time64(TimeUnit::Microsecond)
                | DataType::Null
        ) {
            return plan_err!("round_fraction takes a DATETIME or TIME, not {ty}");
        }
        Ok(Arc::new(marked(ty, self.name())))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let marked = match args.return_field.data_type() {
            DataType::List(element) => element.as_ref(),
            _ => args.return_field.as_ref(),
        };
        let digits = match basalt_common::fraction_digits(marked) {
            Some(d) => d,
            None => return exec_err!("round_fraction: no digits"),
        };
        let cut = matches!(
            args.args.get(2),
            Some(ColumnarValue::Scalar(ScalarValue::Boolean(Some(true))))
        );
        let (arrays, scalar) = arguments(&args)?;
        let values = &arrays[0];
        let out = match args.return_field.data_type() {
            DataType::List(element) => {
                let Some(lists) = values.as_list_opt::<i32>() else {
                    return exec_err!("round_fraction: {} is no ARRAY", values.data_type());
                };
                let elements = cast(lists.values(), element.data_type())?;
                let out = ListArray::try_new(
                    element.clone(),
                    lists.offsets().clone(),
                    rounded(&elements, digits, cut),
                    lists.nulls().cloned(),
                )?;
                // A scalar made from an array would lose the elements' digits.
                if scalar && out.len() == 1 {
                    return Ok(ColumnarValue::Scalar(ScalarValue::List(Arc::new(out))));
                }
                Arc::new(out)
            }
            _ => rounded(values, digits, cut),
        };
        output(out, scalar)
    }
}

/// The microsecond type an ARRAY's DATETIME or TIME elements are rounded in.
fn microsecond_type(element: &DataType) -> Option<DataType> {
    match element {
        DataType::Timestamp(_, None) => Some(DataType::Timestamp(TimeUnit::Microsecond, None)),
        DataType::Time64(_) | DataType::Time32(_) => Some(DataType::Time64(TimeUnit::Microsecond)),
        DataType::Null => Some(DataType::Timestamp(TimeUnit::Microsecond, None)),
        _ => None,
    }
}

/// DATETIME or TIME microseconds rounded half up to `digits`, or cut to them when `cut`
/// (other values as they are).
fn rounded(values: &ArrayRef, digits: u8, cut: bool) -> ArrayRef {
    if cut && digits < 6 {
        let unit = 10i64.pow(6 - u32::from(digits));
        let cut_micros = |v: i64| v - v % unit;
        if let Some(ts) = values.as_any().downcast_ref::<TimestampMicrosecondArray>() {
            return Arc::new(
                ts.unary::<_, datafusion::arrow::datatypes::TimestampMicrosecondType>(cut_micros),
            );
        }
        if let Some(times) = values.as_any().downcast_ref::<Time64MicrosecondArray>() {
            let cut: Time64MicrosecondArray = times.unary(cut_micros);
            return Arc::new(cut);
        }
    }
    if let Some(ts) = values.as_any().downcast_ref::<TimestampMicrosecondArray>() {
        Arc::new(
            ts.unary::<_, datafusion::arrow::datatypes::TimestampMicrosecondType>(|v| {
                round_micros(v, digits)
            }),
        )
    } else if let Some(times) = values.as_any().downcast_ref::<Time64MicrosecondArray>() {
        // A TIME that rounds past 838:59:59 stays at it, as MySQL clips.
        let rounded: Time64MicrosecondArray = times.unary(|v| {
            basalt_common::time_value::round(v, digits).unwrap_or(if v < 0 {
                -MAX_TIME_MICROS
            } else {
                MAX_TIME_MICROS
            })
        });
        Arc::new(rounded)
    } else {
        values.clone()
    }
}
