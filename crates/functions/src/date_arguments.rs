//! `mysql_date_argument(x, 'date' | 'time')`: the argument of a MySQL date function (YEAR,
//! HOUR, DATE_ADD, ..) whose type the SQL does not show. DataFusion's date functions refuse a
//! number when the query is planned, before any rule could read it MySQL's way, so the rewrite
//! of those calls wraps a column or expression in this: a date, a time or text passes as it is;
//! a number becomes a DATETIME (`YYYYMMDD[hhmmss]`; a DATE for integers of 32 bits or fewer,
//! which hold no time of day) or, for `'time'`, a TIME (`[H..H]HMMSS`). The number-to-date
//! analyzer rule replaces every call by what it stands for (see
//! [`crate::numeric_dates::NumericDates`]); running it converts the same way.

use crate::util::{arguments, output};
use chrono::NaiveDate;
use datafusion::arrow::array::{Array, AsArray, Date32Array, TimestampMicrosecondArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Int64Type, TimeUnit};
use datafusion::arrow::datatypes::{Field, FieldRef};
use datafusion::common::{exec_err, Result, ScalarValue};
use datafusion::logical_expr::{
    ColumnarValue, Expr, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
    Volatility,
};
use std::sync::{Arc, OnceLock};

/// The function's name.
pub const NAME: &str = "mysql_date_argument";

/// The one instance.
pub fn function() -> &'static ScalarUDF {
    static F: OnceLock<ScalarUDF> = OnceLock::new();
    F.get_or_init(|| {
        ScalarUDF::new_from_impl(DateArgument {
            signature: Signature::any(2, Volatility::Immutable),
        })
    })
}

/// What a number given as `x` becomes: a TIME for `'time'`, else a DATE (small integers) or a
/// DATETIME; `None` for any other type (it passes as it is).
pub(crate) fn number_target(x: &DataType, reading: &str) -> Option<DataType> {
    if !x.is_numeric() {
        return None;
    }
    Some(match reading {
        "time" => DataType::Time64(TimeUnit::Microsecond),
        _ if holds_no_time_of_day(x) => DataType::Date32,
        _ => DataType::Timestamp(TimeUnit::Microsecond, None),
    })
}

/// An integer type too narrow for YYMMDDhhmmss.
fn holds_no_time_of_day(x: &DataType) -> bool {
    matches!(
        x,
        DataType::Int8
            | DataType::Int16
            | DataType::Int32
            | DataType::UInt8
            | DataType::UInt16
            | DataType::UInt32
    )
}

/// The reading (`'date'` or `'time'`) a call's second argument names.
pub(crate) fn reading_of(arg: &Expr) -> String {
    match arg {
        Expr::Literal(ScalarValue::Utf8(Some(r)), _) => r.to_ascii_lowercase(),
        _ => "date".into(),
    }
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct DateArgument {
    signature: Signature,
}

impl ScalarUDFImpl for DateArgument {
    fn name(&self) -> &str {
        NAME
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, types: &[DataType]) -> Result<DataType> {
        match types.first() {
            Some(x) => Ok(number_target(x, "date").unwrap_or_else(|| x.clone())),
            None => exec_err!("{NAME} takes a value and a reading"),
        }
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let Some(x) = args.arg_fields.first() else {
            return exec_err!("{NAME} takes a value and a reading");
        };
        let reading = match args.scalar_arguments.get(1) {
            Some(Some(ScalarValue::Utf8(Some(r)))) => r.to_ascii_lowercase(),
            _ => "date".into(),
        };
        Ok(match number_target(x.data_type(), &reading) {
            Some(t) => Arc::new(Field::new(NAME, t, true)),
            None => x.clone(),
        })
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let (arrays, scalar) = arguments(&args)?;
        let target = args.return_field.data_type().clone();
        if arrays[0].data_type() == &target || !arrays[0].data_type().is_numeric() {
            return output(arrays[0].clone(), scalar);
        }
        if matches!(target, DataType::Time64(_)) {
            return output(crate::time_cast::times(&arrays[0], false)?, scalar);
        }
        let numbers = cast(&arrays[0], &DataType::Int64)?;
        let readings = numbers
            .as_primitive::<Int64Type>()
            .iter()
            .map(|n| n.and_then(basalt_common::datetime_text::number_to_datetime));
        let epoch = NaiveDate::from_ymd_opt(1970, 1, 1).unwrap_or_default();
        let out: Arc<dyn Array> = match target {
            DataType::Date32 => Arc::new(
                readings
                    .map(|d| d.map(|d| (d.date() - epoch).num_days() as i32))
                    .collect::<Date32Array>(),
            ),
            _ => Arc::new(
                readings
                    .map(|d| d.map(|d| d.and_utc().timestamp_micros()))
                    .collect::<TimestampMicrosecondArray>(),
            ),
        };
        output(out, scalar)
    }
}
