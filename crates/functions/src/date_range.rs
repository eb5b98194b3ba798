//! `mysql_date_range(d)`: MySQL's date range on the result of date arithmetic. DATE_ADD and
//! DATE_SUB give NULL when the result falls outside years 0000..9999 (MySQL: "the result is
//! NULL"), where Arrow's dates would go on to year 10000 and beyond.
//!
//! `mysql_date_range(d, interval_digits, start)` also gives the result MySQL's fractional
//! digits: the larger of the start's (see [`crate::temporal_digits`]) and the interval's
//! (`INTERVAL 1.25 SECOND` two, microseconds six, other units none; -1 when unknown). `start` is
//! the value moved, passed again only for its type and literal; its value is not read.

use datafusion::arrow::array::{Array, ArrayRef, Date32Array, PrimitiveArray};
use datafusion::arrow::datatypes::{
    DataType, Field, FieldRef, TimeUnit, TimestampMicrosecondType, TimestampMillisecondType,
    TimestampNanosecondType, TimestampSecondType,
};
use datafusion::common::{Result, ScalarValue};
use datafusion::logical_expr::{
    ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
    TypeSignature, Volatility,
};
use std::sync::Arc;

pub const NAME: &str = "mysql_date_range";

/// Days since 1970-01-01 of 0000-01-01 and of 9999-12-31 (proleptic Gregorian).
fn day_bounds() -> (i64, i64) {
    (-719_528, 2_932_896)
}

pub fn function() -> ScalarUDF {
    ScalarUDF::new_from_impl(DateRange {
        signature: Signature::one_of(
            vec![TypeSignature::Any(1), TypeSignature::Any(3)],
            Volatility::Immutable,
        ),
    })
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct DateRange {
    signature: Signature,
}

impl ScalarUDFImpl for DateRange {
    fn name(&self) -> &str {
        NAME
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, args: &[DataType]) -> Result<DataType> {
        Ok(args.first().cloned().unwrap_or(DataType::Null))
    }

    /// The input's field, metadata included: a TIME(1) moved by an interval shows one
    /// fraction digit.
    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let Some(input) = args.arg_fields.first() else {
            return Ok(Arc::new(Field::new(NAME, DataType::Null, true)));
        };
        let field = input.as_ref().clone().with_name(NAME).with_nullable(true);
        let temporal = matches!(
            field.data_type(),
            DataType::Timestamp(..) | DataType::Time64(_)
        );
        let digits = match (args.scalar_arguments.get(1).copied().flatten(), temporal) {
            (Some(ScalarValue::Int64(Some(interval))), true) => {
                let interval = u8::try_from(*interval).ok();
                let start =
                    crate::temporal_digits::precision_of(args.arg_fields, args.scalar_arguments, 2);
                crate::temporal_digits::largest([interval, start])
            }
            _ => None,
        };
        Ok(Arc::new(crate::temporal_digits::marked(field, digits)))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let scalar = matches!(args.args.first(), Some(ColumnarValue::Scalar(_)));
        let arrays = ColumnarValue::values_to_arrays(&args.args)?;
        let input = &arrays[0];
        let (low, high) = day_bounds();
        const DAY_SECONDS: i64 = 86_400;
        let out: ArrayRef = match input.data_type() {
            DataType::Date32 => {
                let a = input.as_any().downcast_ref::<Date32Array>();
                match a {
                    Some(a) => Arc::new(in_range(a, |d| (d as i64) >= low && (d as i64) <= high)),
                    None => input.clone(),
                }
            }
            DataType::Timestamp(unit, _) => {
                let per_day = DAY_SECONDS
                    * match unit {
                        TimeUnit::Second => 1,
                        TimeUnit::Millisecond => 1_000,
                        TimeUnit::Microsecond => 1_000_000,
                        TimeUnit::Nanosecond => 1_000_000_000,
                    };
                let ok = |v: i64| {
                    let day = v.div_euclid(per_day);
                    day >= low && day <= high
                };
                match unit {
                    TimeUnit::Second => timestamps::<TimestampSecondType>(input, ok),
                    TimeUnit::Millisecond => timestamps::<TimestampMillisecondType>(input, ok),
                    TimeUnit::Microsecond => timestamps::<TimestampMicrosecondType>(input, ok),
                    TimeUnit::Nanosecond => timestamps::<TimestampNanosecondType>(input, ok),
                }
            }
            _ => input.clone(),
        };
        if scalar {
            Ok(ColumnarValue::Scalar(ScalarValue::try_from_array(&out, 0)?))
        } else {
            Ok(ColumnarValue::Array(out))
        }
    }
}

fn timestamps<T>(input: &ArrayRef, ok: impl Fn(i64) -> bool) -> ArrayRef
where
    T: datafusion::arrow::datatypes::ArrowPrimitiveType<Native = i64>,
{
    match input.as_any().downcast_ref::<PrimitiveArray<T>>() {
        Some(a) => Arc::new(in_range(a, ok)),
        None => input.clone(),
    }
}

/// `a` with every value `ok` refuses made NULL (the data type, time zone included, is kept).
fn in_range<T: datafusion::arrow::datatypes::ArrowPrimitiveType>(
    a: &PrimitiveArray<T>,
    ok: impl Fn(T::Native) -> bool,
) -> PrimitiveArray<T>
where
    T::Native: Copy,
{
    let values: PrimitiveArray<T> = a.iter().map(|v| v.filter(|v| ok(*v))).collect();
    values.with_data_type(a.data_type().clone())
}
