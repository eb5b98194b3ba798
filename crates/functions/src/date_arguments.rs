//! `mysql_date_argument(x, 'date' | 'time')`: the argument of a MySQL date function (YEAR,
//! HOUR, DATE_ADD, ..) whose type the SQL does not show. DataFusion's date functions refuse a
//! number when the query is planned, before any rule could read it MySQL's way, so the rewrite
//! of those calls wraps a column or expression in this: a date, a time or text passes as it is;
//! a number becomes a DATETIME (`YYYYMMDD[hhmmss]`; a DATE for integers of 32 bits or fewer,
//! which hold no time of day) or, for `'time'`, a TIME (`[H..H]HMMSS`). The number-to-date
//! analyzer rule replaces every call by what it stands for (see
//! [`crate::numeric_dates::NumericDates`]); running it converts the same way.

use crate::util::{arguments, output};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, TimeUnit};
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
        Expr::Literal(value, _) => reading(Some(value)),
        _ => reading(None),
    }
}

/// The reading a literal names; `'date'` for anything else.
fn reading(value: Option<&ScalarValue>) -> String {
    match value {
        Some(ScalarValue::Utf8(Some(r))) => r.to_ascii_lowercase(),
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
        let reading = reading(args.scalar_arguments.get(1).copied().flatten());
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
        let datetimes = crate::numeric_dates::number_datetimes(&arrays[0])?;
        output(cast(&datetimes, &target)?, scalar)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{Array, Int64Array, TimestampMicrosecondArray};
    use datafusion::config::ConfigOptions;

    #[test]
    fn a_number_run_unresolved_is_read_as_a_datetime() {
        let target = DataType::Timestamp(TimeUnit::Microsecond, None);
        let args = ScalarFunctionArgs {
            args: vec![
                ColumnarValue::Array(Arc::new(Int64Array::from(vec![Some(20240105101112), None]))),
                ColumnarValue::Scalar(ScalarValue::Utf8(Some("date".into()))),
            ],
            arg_fields: vec![
                Arc::new(Field::new("x", DataType::Int64, true)),
                Arc::new(Field::new("r", DataType::Utf8, false)),
            ],
            number_rows: 2,
            return_field: Arc::new(Field::new(NAME, target, true)),
            config_options: Arc::new(ConfigOptions::default()),
        };
        let ColumnarValue::Array(out) = function().invoke_with_args(args).unwrap() else {
            panic!("an array");
        };
        let out = out
            .as_any()
            .downcast_ref::<TimestampMicrosecondArray>()
            .unwrap();
        let at = chrono::NaiveDate::from_ymd_opt(2024, 1, 5)
            .and_then(|d| d.and_hms_opt(10, 11, 12))
            .unwrap();
        assert_eq!(out.value(0), at.and_utc().timestamp_micros());
        assert!(out.is_null(1));
    }
}
