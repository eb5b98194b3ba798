//! `CAST(string AS DATE / DATETIME)` as MySQL reads the string
//! ([`basalt_common::datetime_text`]): [`string_to_date`] and [`string_to_datetime`] are the
//! functions those casts become in queries (see `implicit_casts`), NULL for a string that is no
//! date, as in MySQL and Doris; their `_strict` forms, where a value is stored (INSERT), fail on
//! it instead.

use basalt_common::datetime_text::parse_column;
use basalt_common::BasaltError;
use datafusion::arrow::array::AsArray;
use datafusion::arrow::datatypes::{DataType, Field, FieldRef, TimeUnit};
use datafusion::common::{exec_err, DataFusionError, Result};
use datafusion::logical_expr::{
    ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
    Volatility,
};
use std::sync::{Arc, OnceLock};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Target {
    Date,
    DateTime,
}

/// `CAST(string AS DATE)` in a query: NULL for no valid date.
pub fn string_to_date() -> &'static ScalarUDF {
    static F: OnceLock<ScalarUDF> = OnceLock::new();
    F.get_or_init(|| ScalarUDF::new_from_impl(StringToTemporal::new(Target::Date, false)))
}

/// `CAST(string AS DATETIME)` in a query (microseconds, no zone): NULL for no valid date.
pub fn string_to_datetime() -> &'static ScalarUDF {
    static F: OnceLock<ScalarUDF> = OnceLock::new();
    F.get_or_init(|| ScalarUDF::new_from_impl(StringToTemporal::new(Target::DateTime, false)))
}

/// A string stored into a DATE column (INSERT, loads): an error for no valid date.
pub fn string_to_date_strict() -> &'static ScalarUDF {
    static F: OnceLock<ScalarUDF> = OnceLock::new();
    F.get_or_init(|| ScalarUDF::new_from_impl(StringToTemporal::new(Target::Date, true)))
}

/// A string stored into a DATETIME column (INSERT, loads): an error for no valid date.
pub fn string_to_datetime_strict() -> &'static ScalarUDF {
    static F: OnceLock<ScalarUDF> = OnceLock::new();
    F.get_or_init(|| ScalarUDF::new_from_impl(StringToTemporal::new(Target::DateTime, true)))
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct StringToTemporal {
    target: Target,
    /// An unreadable string is an error (true) or NULL (false).
    strict: bool,
    signature: Signature,
}

impl StringToTemporal {
    fn new(target: Target, strict: bool) -> Self {
        StringToTemporal {
            target,
            strict,
            signature: Signature::string(1, Volatility::Immutable),
        }
    }
}

impl ScalarUDFImpl for StringToTemporal {
    fn name(&self) -> &str {
        match (self.target, self.strict) {
            (Target::Date, false) => "mysql_string_to_date",
            (Target::DateTime, false) => "mysql_string_to_datetime",
            (Target::Date, true) => "mysql_string_to_date_strict",
            (Target::DateTime, true) => "mysql_string_to_datetime_strict",
        }
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(match self.target {
            Target::Date => DataType::Date32,
            Target::DateTime => DataType::Timestamp(TimeUnit::Microsecond, None),
        })
    }

    /// A DATETIME read from a text literal shows the fraction digits the text spells
    /// (`TIMESTAMP'2001-01-01 00:00:00.10'` two, as MySQL's); from other text, the digits each
    /// value needs.
    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let field = Field::new(self.name(), self.return_type(&[])?, true);
        let digits = match (
            self.target,
            args.scalar_arguments.first().copied().flatten(),
        ) {
            (Target::DateTime, Some(literal)) => args
                .arg_fields
                .first()
                .and_then(|f| crate::temporal_digits::precision(f, Some(literal))),
            _ => None,
        };
        Ok(Arc::new(crate::temporal_digits::marked(field, digits)))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let (arrays, scalar) = crate::util::arguments(&args)?;
        let strings = datafusion::arrow::compute::cast(&arrays[0], &DataType::Utf8)?;
        let strings = strings.as_string::<i32>();
        let target = self.return_type(&[])?;
        let Some((out, failed)) = parse_column(strings, &target) else {
            return exec_err!("{}: cannot produce {target}", self.name());
        };
        if let (true, Some(&row)) = (self.strict, failed.first()) {
            // MySQL's 1292: "Incorrect date value: '2024-13-45'".
            let what = match self.target {
                Target::Date => "date",
                Target::DateTime => "datetime",
            };
            return Err(DataFusionError::External(Box::new(
                BasaltError::IncorrectDateValue(format!(
                    "Incorrect {what} value: '{}'",
                    strings.value(row)
                )),
            )));
        }
        crate::util::output(out, scalar)
    }
}
