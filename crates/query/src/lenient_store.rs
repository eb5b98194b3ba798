//! INSERT outside MySQL's strict mode (`sql_mode` without STRICT_TRANS_TABLES and
//! STRICT_ALL_TABLES, or Doris's `enable_insert_strict = false`): a value that does not fit
//! its column is stored the way MySQL stores it then, with a warning, where strict mode fails
//! the statement. A number beyond an integer, floating or DECIMAL column's range is clipped to
//! it (1264); text read as a number takes its numeric prefix (1265 when something follows it,
//! a note when only spaces do) or 0 when it has none (1366); text longer than a CHAR/VARCHAR
//! column is cut to its declared number of characters, as MySQL counts them (1265); a value
//! wider than a BIT(n) column stores n one-bits (1264); text that is no date stores NULL in a DATE or
//! DATETIME column (MySQL stores its zero date, which Basalt has not; 1265); a TIME beyond
//! ±838:59:59 is clipped to it (1264) and text that is no time stores 00:00:00 (1265); a YEAR
//! outside 1901-2155 (a one- or two-digit number being 1970-2069) stores 0000 (1264). Doris's
//! non-strict INSERT turns such values into NULL and filters rows; MySQL's behaviour is the
//! one followed here.
//!
//! The statement's plan hands such values to the sink unconverted; the sink, finding a
//! [`StoreWarnings`] in the task's session config, fits each batch with [`fit_batch`] and
//! collects the warnings there for the session to show. In strict mode ([`StoreWarnings::strict`])
//! the same reading decides numbers: the first warning (not note) a value raises is the
//! statement's error instead, with MySQL's code and message (1264 out of range, 1265
//! truncated, 1366 no number), naming the column and row.

use basalt_catalog::TableMeta;
use basalt_common::{BasaltError, SqlType};
use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, Decimal128Array, Float64Array, Int16Array, Int64Array, RecordBatch,
    StringArray, UInt64Array,
};
use datafusion::arrow::compute::{cast, cast_with_options, CastOptions};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::common::ScalarValue;
use parking_lot::Mutex;
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// At most this many warnings are kept for SHOW WARNINGS (MySQL keeps `max_error_count`,
/// 64 by default); the count goes on.
const KEPT_WARNINGS: usize = 1000;

/// One note or warning of a non-strict INSERT.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreWarning {
    /// `Note` or `Warning`.
    pub level: &'static str,
    pub code: u16,
    pub message: String,
}

/// A non-strict INSERT's rows seen so far and the warnings their values raised. Its presence
/// in the session config makes the sink store leniently.
#[derive(Debug, Default)]
pub struct StoreWarnings {
    /// Strict mode: a warning fails the statement (notes are still kept).
    strict: bool,
    /// Outside strict mode, a multiple-row INSERT (or INSERT .. SELECT, or UPDATE) stores NULL
    /// in a NOT NULL column as the type's implicit default (0, '', 00:00:00) with warning 1048.
    implicit_defaults: bool,
    rows: AtomicU64,
    count: AtomicU64,
    kept: Mutex<Vec<StoreWarning>>,
}

impl StoreWarnings {
    /// A strict INSERT's or UPDATE's: a value that would raise a warning is an error.
    pub fn strict() -> Self {
        StoreWarnings {
            strict: true,
            ..Default::default()
        }
    }

    /// `self` storing NULL in a NOT NULL column as its type's implicit default (outside
    /// strict mode only: a multiple-row write's rule).
    pub fn with_implicit_defaults(self) -> Self {
        StoreWarnings {
            implicit_defaults: !self.strict,
            ..self
        }
    }

    /// Whether a warning fails the statement.
    pub fn is_strict(&self) -> bool {
        self.strict
    }

    /// The warnings kept, and how many were raised in all.
    pub fn take(&self) -> (Vec<StoreWarning>, u64) {
        let kept = std::mem::take(&mut *self.kept.lock());
        (kept, self.count.swap(0, Ordering::Relaxed))
    }

    fn push(&self, level: &'static str, code: u16, message: String) {
        self.count.fetch_add(1, Ordering::Relaxed);
        let mut kept = self.kept.lock();
        if kept.len() < KEPT_WARNINGS {
            kept.push(StoreWarning {
                level,
                code,
                message,
            });
        }
    }
}

/// A batch's warnings, by row and column, as MySQL lists them.
type BatchWarnings = RefCell<Vec<(usize, usize, StoreWarning)>>;

/// Where a value goes, for the warnings' messages.
struct Target<'a> {
    table: &'a TableMeta,
    column: &'a str,
    position: usize,
    first_row: u64,
    /// Strict mode: a value that is no date is MySQL's error 1292 rather than warning 1265.
    strict: bool,
    warnings: &'a BatchWarnings,
}

impl Target<'_> {
    fn row(&self, row: usize) -> u64 {
        self.first_row + row as u64 + 1
    }

    fn push(&self, row: usize, level: &'static str, code: u16, message: String) {
        let warning = StoreWarning {
            level,
            code,
            message,
        };
        self.warnings
            .borrow_mut()
            .push((row, self.position, warning));
    }

    fn out_of_range(&self, row: usize) {
        let message = format!(
            "Out of range value for column '{}' at row {}",
            self.column,
            self.row(row)
        );
        self.push(row, "Warning", 1264, message);
    }

    fn truncated(&self, row: usize, note: bool) {
        let message = format!(
            "Data truncated for column '{}' at row {}",
            self.column,
            self.row(row)
        );
        let level = if note { "Note" } else { "Warning" };
        self.push(row, level, 1265, message);
    }

    /// A number that names no date: stored as NULL with warning 1265 (MySQL stores its zero
    /// date), MySQL's error 1292 in strict mode.
    fn no_date(&self, row: usize, kind: &str, text: &str) {
        if !self.strict {
            return self.truncated(row, false);
        }
        self.push(
            row,
            "Warning",
            1292,
            self.incorrect_message(row, kind, text),
        );
    }

    fn incorrect(&self, row: usize, kind: &str, text: &str) {
        self.push(
            row,
            "Warning",
            1366,
            self.incorrect_message(row, kind, text),
        );
    }

    /// MySQL's "Incorrect <kind> value" text for row `row` of this column.
    fn incorrect_message(&self, row: usize, kind: &str, text: &str) -> String {
        format!(
            "Incorrect {kind} value: '{text}' for column `{}`.`{}`.`{}` at row {}",
            self.table.database,
            self.table.name,
            self.column,
            self.row(row)
        )
    }
}

/// Fits each column of `batch` (the table's columns in storage order, of any type) to the
/// column's type as non-strict MySQL stores it, recording the warnings in `report`. Columns
/// of other types are left for the strict conversion.
pub fn fit_batch(
    table: &TableMeta,
    batch: RecordBatch,
    report: &StoreWarnings,
) -> Result<RecordBatch, BasaltError> {
    let first_row = report
        .rows
        .fetch_add(batch.num_rows() as u64, Ordering::Relaxed);
    let mut columns = batch.columns().to_vec();
    let warnings = BatchWarnings::default();
    for (i, c) in table.columns.iter().enumerate() {
        let Some(values) = columns.get(i) else {
            break;
        };
        let target = Target {
            table,
            column: &c.name,
            position: table.declared_position(i),
            first_row,
            strict: report.strict,
            warnings: &warnings,
        };
        if let Some(fitted) = fit_column(values, &c.ty, &target)? {
            columns[i] = fitted;
        }
        if report.implicit_defaults && !c.nullable && columns[i].logical_null_count() > 0 {
            if let Some(filled) = implicit_defaults(&columns[i], &c.ty, &target) {
                columns[i] = filled;
            }
        }
    }
    let mut warnings = warnings.into_inner();
    warnings.sort_by_key(|(row, column, _)| (*row, *column));
    if report.strict {
        if let Some((_, _, w)) = warnings.iter().find(|(_, _, w)| w.level == "Warning") {
            return Err(BasaltError::StoredValue {
                code: w.code,
                message: w.message.clone(),
            });
        }
    }
    for (_, _, w) in warnings {
        report.push(w.level, w.code, w.message);
    }
    let fields: Vec<Field> = batch
        .schema()
        .fields()
        .iter()
        .zip(&columns)
        .map(|(f, values)| Field::new(f.name(), values.data_type().clone(), true))
        .collect();
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)
        .map_err(|e| BasaltError::Internal(e.to_string()))
}

fn fit_column(
    values: &ArrayRef,
    ty: &SqlType,
    target: &Target,
) -> Result<Option<ArrayRef>, BasaltError> {
    let arrow = ty.arrow_type();
    // Strict mode reads numbers (into number, DATE and DATETIME columns) here; the other
    // columns keep their own checks (1406 for text too long, 1292 for text that is no date).
    let strictly_read = match ty {
        SqlType::Date | SqlType::DateTime { .. } => values.data_type().is_numeric(),
        SqlType::TinyInt
        | SqlType::SmallInt
        | SqlType::Year
        | SqlType::Int
        | SqlType::BigInt
        | SqlType::TinyIntUnsigned
        | SqlType::SmallIntUnsigned
        | SqlType::IntUnsigned
        | SqlType::BigIntUnsigned
        | SqlType::Float
        | SqlType::Double
        | SqlType::Decimal { .. } => true,
        _ => false,
    };
    if target.strict && !strictly_read {
        return Ok(None);
    }
    let fitted = match ty {
        SqlType::Year => years(values, target),
        SqlType::TinyInt
        | SqlType::SmallInt
        | SqlType::Int
        | SqlType::BigInt
        | SqlType::TinyIntUnsigned
        | SqlType::SmallIntUnsigned
        | SqlType::IntUnsigned
        | SqlType::BigIntUnsigned => match ty.integer_range() {
            Some((min, max)) => integers(values, min, max, &arrow, target),
            None => return Ok(None),
        },
        SqlType::Float => floats(values, f32::MAX.into(), &arrow, target),
        SqlType::Double => floats(values, f64::MAX, &arrow, target),
        SqlType::Decimal { precision, scale } if matches!(arrow, DataType::Decimal128(..)) => {
            decimals(values, *precision, *scale, target)
        }
        SqlType::Char(max) | SqlType::Varchar(max) => texts(values, *max as usize, target),
        SqlType::Bit(width) => return bits(values, *width, target).map(Some),
        SqlType::Date | SqlType::DateTime { .. } => dates(values, &arrow, target),
        SqlType::Time { .. } => times(values, target),
        _ => return Ok(None),
    };
    fitted.map_err(|e| BasaltError::InvalidData(e.to_string()))
}

/// `values` with NULL replaced by the implicit default of a NOT NULL column of type `ty`
/// (warning 1048 for each); None for types without one Basalt can store (MySQL's zero date,
/// JSON, nested and other types keep NULL, which the column then refuses with error 1048).
fn implicit_defaults(values: &ArrayRef, ty: &SqlType, target: &Target) -> Option<ArrayRef> {
    let default = match ty {
        SqlType::Boolean => ScalarValue::Boolean(Some(false)),
        SqlType::TinyInt
        | SqlType::SmallInt
        | SqlType::Int
        | SqlType::BigInt
        | SqlType::LargeInt
        | SqlType::TinyIntUnsigned
        | SqlType::SmallIntUnsigned
        | SqlType::IntUnsigned
        | SqlType::BigIntUnsigned
        | SqlType::Float
        | SqlType::Double
        | SqlType::Decimal { .. }
        | SqlType::Bit(_)
        | SqlType::Year => ScalarValue::Int64(Some(0)),
        SqlType::Char(_) | SqlType::Varchar(_) | SqlType::String => {
            ScalarValue::Utf8(Some(String::new()))
        }
        SqlType::Binary(_) | SqlType::Varbinary(_) | SqlType::Blob => {
            ScalarValue::Binary(Some(Vec::new()))
        }
        SqlType::Time { .. } => ScalarValue::Time64Microsecond(Some(0)),
        _ => return None,
    };
    let values = match values.data_type() {
        DataType::Null => &cast(values, &ty.arrow_type()).ok()?,
        _ => values,
    };
    let default = default.cast_to(values.data_type()).ok()?;
    let defaults = default.to_array_of_size(values.len()).ok()?;
    let present = datafusion::arrow::compute::is_not_null(values).ok()?;
    let filled = datafusion::arrow::compute::kernels::zip::zip(&present, values, &defaults).ok()?;
    for row in (0..values.len()).filter(|row| values.is_null(*row)) {
        let message = format!("Column '{}' cannot be null", target.column);
        target.push(row, "Warning", 1048, message);
    }
    Some(filled)
}

type Fitted = Result<Option<ArrayRef>, datafusion::arrow::error::ArrowError>;

/// The values as they are when the strict conversion takes them all.
fn strictly(values: &ArrayRef, arrow: &DataType) -> Option<ArrayRef> {
    if values.data_type() == arrow {
        return Some(values.clone());
    }
    let options = CastOptions {
        safe: false,
        ..Default::default()
    };
    cast_with_options(values, arrow, &options).ok()
}

fn integers(values: &ArrayRef, min: i128, max: i128, arrow: &DataType, target: &Target) -> Fitted {
    if !is_fittable_number(values.data_type()) {
        return Ok(None);
    }
    // A cast truncates fractions; MySQL rounds them (DECIMAL and text half away from zero,
    // DOUBLE half to even), so such values are read one by one.
    let has_fraction = match values.data_type() {
        DataType::Decimal128(_, scale) | DataType::Decimal256(_, scale) => *scale > 0,
        t => t.is_floating(),
    };
    if let Some(values) = strictly(values, arrow).filter(|_| !has_fraction) {
        return Ok(Some(values));
    }
    let mut out = Vec::with_capacity(values.len());
    for row in 0..values.len() {
        let Some(number) = read(values, row, "integer", target) else {
            out.push(None);
            continue;
        };
        let whole = match values.data_type().is_floating() {
            true => number.double_to_integer(),
            false => number.to_integer(),
        };
        let clipped = whole.clamp(min, max);
        if clipped != whole {
            target.out_of_range(row);
        }
        out.push(Some(clipped));
    }
    // BIGINT UNSIGNED's upper half is past Int64: such columns are built unsigned.
    let built: ArrayRef = if max > i128::from(i64::MAX) {
        Arc::new(UInt64Array::from_iter(
            out.into_iter().map(|v| v.map(|v| v as u64)),
        ))
    } else {
        Arc::new(Int64Array::from_iter(
            out.into_iter().map(|v| v.map(|v| v as i64)),
        ))
    };
    cast(&built, arrow).map(Some)
}

/// A YEAR column's values: every number (rounded) or text read as one becomes the year MySQL
/// stores for it ([`basalt_common::year::year_of`]: 1-99 are 1970-2069, text `0` is 2000); a
/// number out of YEAR's range is 0000 and warning 1264.
fn years(values: &ArrayRef, target: &Target) -> Fitted {
    if !is_fittable_number(values.data_type()) {
        return Ok(None);
    }
    let text = matches!(
        values.data_type(),
        DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8
    );
    let mut out = Vec::with_capacity(values.len());
    for row in 0..values.len() {
        let Some(number) = read(values, row, "integer", target) else {
            out.push(None);
            continue;
        };
        // Text reads as a two-digit year, but for the four digits `0000` of the zero year.
        let from_text = text && !is_zero_year_text(values, row);
        let year = basalt_common::year::year_of(number.to_integer(), from_text);
        if year.is_none() {
            target.out_of_range(row);
        }
        out.push(Some(year.unwrap_or(0)));
    }
    Ok(Some(Arc::new(Int16Array::from(out))))
}

/// True when the text at `row` is `0000`, the zero year as YEAR shows it.
fn is_zero_year_text(values: &ArrayRef, row: usize) -> bool {
    match ScalarValue::try_from_array(values, row) {
        Ok(
            ScalarValue::Utf8(Some(s))
            | ScalarValue::Utf8View(Some(s))
            | ScalarValue::LargeUtf8(Some(s)),
        ) => s.trim() == "0000",
        _ => false,
    }
}

fn floats(values: &ArrayRef, max: f64, arrow: &DataType, target: &Target) -> Fitted {
    if !is_fittable_number(values.data_type()) {
        return Ok(None);
    }
    if let Some(values) = strictly(values, arrow).filter(no_overflow) {
        return Ok(Some(values));
    }
    let mut out = Vec::with_capacity(values.len());
    for row in 0..values.len() {
        let Some(number) = read(values, row, "double", target) else {
            out.push(None);
            continue;
        };
        let value = number.to_float();
        let clipped = if value.is_nan() {
            0.0
        } else {
            value.clamp(-max, max)
        };
        if clipped != value {
            target.out_of_range(row);
        }
        out.push(Some(clipped));
    }
    cast(&(Arc::new(Float64Array::from(out)) as ArrayRef), arrow).map(Some)
}

/// A FLOAT column's values that a cast made infinite overflowed it.
fn no_overflow(values: &ArrayRef) -> bool {
    match values.data_type() {
        DataType::Float32 => values
            .as_primitive::<datafusion::arrow::datatypes::Float32Type>()
            .iter()
            .flatten()
            .all(f32::is_finite),
        DataType::Float64 => values
            .as_primitive::<datafusion::arrow::datatypes::Float64Type>()
            .iter()
            .flatten()
            .all(f64::is_finite),
        _ => true,
    }
}

fn decimals(values: &ArrayRef, precision: u8, scale: i8, target: &Target) -> Fitted {
    let arrow = DataType::Decimal128(precision, scale);
    if !is_fittable_number(values.data_type()) {
        return Ok(None);
    }
    if let Some(values) = strictly(values, &arrow) {
        return Ok(Some(values));
    }
    let scale = scale.max(0) as u32;
    let max = 10_i128.pow(u32::from(precision.min(38))) - 1;
    let mut out = Vec::with_capacity(values.len());
    for row in 0..values.len() {
        let Some(number) = read(values, row, "decimal", target) else {
            out.push(None);
            continue;
        };
        let (scaled, rounded) = number.to_scaled(scale);
        let clipped = scaled.clamp(-max, max);
        if clipped != scaled {
            target.out_of_range(row);
        } else if rounded {
            target.truncated(row, true);
        }
        out.push(Some(clipped));
    }
    Decimal128Array::from(out)
        .with_precision_and_scale(precision, scale as i8)
        .map(|a| Some(Arc::new(a) as ArrayRef))
}

/// Text cut to `max` characters.
fn texts(values: &ArrayRef, max: usize, target: &Target) -> Fitted {
    if !matches!(
        values.data_type(),
        DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8
    ) {
        return Ok(None);
    }
    let text = cast(values, &DataType::Utf8)?;
    let strings = text.as_string::<i32>();
    if strings.iter().flatten().all(|s| cut_at(s, max).is_none()) {
        return Ok(Some(text));
    }
    let cut: StringArray = strings
        .iter()
        .enumerate()
        .map(|(row, s)| {
            let s = s?;
            match cut_at(s, max) {
                None => Some(s.to_string()),
                Some(end) => {
                    target.truncated(row, false);
                    Some(s[..end].to_string())
                }
            }
        })
        .collect();
    Ok(Some(Arc::new(cut)))
}

/// Where text longer than `max` characters is cut (the byte offset of its character number
/// `max`), or None when it has at most `max` characters.
fn cut_at(s: &str, max: usize) -> Option<usize> {
    s.char_indices().nth(max).map(|(end, _)| end)
}

/// BIT(width) values; one wider than the column (or negative) stores `width` one-bits.
fn bits(values: &ArrayRef, width: u8, target: &Target) -> Result<ArrayRef, BasaltError> {
    let (bits, failed) = basalt_storage::bit_values::bit_column(values)?;
    let mut clipped = basalt_storage::bit_values::wider_rows(&bits, width);
    if failed.is_empty() && clipped.is_empty() {
        return Ok(bits);
    }
    clipped.extend(failed);
    clipped.sort_unstable();
    let all_ones = u64::MAX >> (64 - u32::from(width));
    let mut values: Vec<Option<u64>> = bits
        .as_primitive::<datafusion::arrow::datatypes::UInt64Type>()
        .iter()
        .collect();
    for row in clipped {
        target.out_of_range(row);
        values[row] = Some(all_ones);
    }
    Ok(Arc::new(datafusion::arrow::array::UInt64Array::from(
        values,
    )))
}

/// Text and numbers read as MySQL reads dates; those that are none are NULL.
fn dates(values: &ArrayRef, arrow: &DataType, target: &Target) -> Fitted {
    if values.data_type().is_numeric() {
        return number_dates(values, arrow, target);
    }
    if !matches!(
        values.data_type(),
        DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8
    ) {
        return Ok(None);
    }
    let text = cast(values, &DataType::Utf8)?;
    let Some((parsed, failed)) =
        basalt_common::datetime_text::parse_column(text.as_string::<i32>(), arrow)
    else {
        return Ok(None);
    };
    for row in failed {
        target.truncated(row, false);
    }
    Ok(Some(parsed))
}

/// Numbers read as MySQL reads them as dates (YYYYMMDD, YYMMDD, YYYYMMDDhhmmss[.ffffff],
/// YYMMDDhhmmss): a DATE keeps the date (a note when a time of day is dropped), a DATETIME the
/// date and time with a fraction after the seconds (a fraction of a number without a time of
/// day is dropped, with a note). A number that names no date is NULL (see
/// [`Target::no_date`]).
fn number_dates(values: &ArrayRef, arrow: &DataType, target: &Target) -> Fitted {
    const MICROS: i128 = 1_000_000;
    let exact = cast(values, &DataType::Decimal128(38, 6))?;
    let exact = exact.as_primitive::<datafusion::arrow::datatypes::Decimal128Type>();
    let is_date = matches!(arrow, DataType::Date32);
    let kind = if is_date { "date" } else { "datetime" };
    let mut out: Vec<Option<i64>> = Vec::with_capacity(values.len());
    for row in 0..values.len() {
        if values.is_null(row) {
            out.push(None);
            continue;
        }
        let read = exact.is_valid(row).then(|| exact.value(row));
        let parsed = read.and_then(|v| {
            let whole = i64::try_from(v / MICROS).ok()?;
            let when = basalt_common::datetime_text::number_to_datetime(whole)?;
            Some((whole, v % MICROS, when))
        });
        let Some((whole, fraction, when)) = parsed else {
            let text = ScalarValue::try_from_array(values, row)
                .map(|v| v.to_string())
                .unwrap_or_default();
            target.no_date(row, kind, &text);
            out.push(None);
            continue;
        };
        let has_time = whole >= 100_000_000;
        if is_date {
            if has_time || fraction != 0 {
                target.truncated(row, true);
            }
            out.push(Some(when.and_utc().timestamp().div_euclid(86_400)));
        } else {
            let fraction = if has_time {
                fraction as i64
            } else {
                if fraction != 0 {
                    target.truncated(row, true);
                }
                0
            };
            out.push(Some(when.and_utc().timestamp_micros() + fraction));
        }
    }
    let array: ArrayRef = if is_date {
        Arc::new(datafusion::arrow::array::Date32Array::from(
            out.into_iter()
                .map(|d| d.map(|d| d as i32))
                .collect::<Vec<_>>(),
        ))
    } else {
        Arc::new(datafusion::arrow::array::TimestampMicrosecondArray::from(
            out,
        ))
    };
    cast(&array, arrow).map(Some)
}

/// Text and numbers read as TIME values, MySQL's way: beyond ±838:59:59 clipped to the range's
/// end (1264), no time at all stored as 00:00:00 (1265), as MySQL's non-strict INSERT does.
fn times(values: &ArrayRef, target: &Target) -> Fitted {
    use basalt_common::time_value;
    let numbers = values.data_type().is_numeric();
    let text = matches!(
        values.data_type(),
        DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8
    );
    if !(numbers || text) {
        return Ok(None);
    }
    let text = cast(values, &DataType::Utf8)?;
    let text = text.as_string::<i32>();
    let fitted: datafusion::arrow::array::Time64MicrosecondArray = text
        .iter()
        .enumerate()
        .map(|(row, v)| {
            let v = v?;
            let reading = if numbers {
                v.parse::<f64>().ok().and_then(time_value::from_number)
            } else {
                time_value::parse_text(v)
            };
            match reading {
                Some(r) => {
                    if r.clipped {
                        target.out_of_range(row);
                    } else if r.trailing {
                        target.truncated(row, false);
                    }
                    Some(r.micros)
                }
                None => {
                    target.truncated(row, false);
                    Some(0)
                }
            }
        })
        .collect();
    Ok(Some(Arc::new(fitted)))
}

/// Types whose values [`read`] takes.
fn is_fittable_number(t: &DataType) -> bool {
    t.is_numeric()
        || t.is_null()
        || matches!(
            t,
            DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8 | DataType::Boolean
        )
}

/// A number as read from a value.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Number {
    Integer(i128),
    /// An exact decimal: the digits and the scale.
    Decimal(i128, u32),
    Float(f64),
}

impl Number {
    /// A FLOAT or DOUBLE value (not text) rounded half to even, as MySQL stores one in an
    /// integer column (2.5E0 is 2, '2.5E0' is 3); other numbers as [`Self::to_integer`].
    fn double_to_integer(self) -> i128 {
        match self {
            Number::Float(f) if !f.is_nan() => f.round_ties_even() as i128,
            other => other.to_integer(),
        }
    }

    /// Rounded half away from zero (saturating).
    fn to_integer(self) -> i128 {
        match self {
            Number::Integer(v) => v,
            Number::Decimal(v, scale) => round_scaled(v, scale),
            Number::Float(f) if f.is_nan() => 0,
            Number::Float(f) => f.round() as i128,
        }
    }

    fn to_float(self) -> f64 {
        match self {
            Number::Integer(v) => v as f64,
            Number::Decimal(v, scale) => v as f64 / 10f64.powi(scale as i32),
            Number::Float(f) => f,
        }
    }

    /// The number in units of 10^-scale, rounded half away from zero (saturating), and
    /// whether digits were rounded away.
    fn to_scaled(self, scale: u32) -> (i128, bool) {
        match self {
            Number::Integer(v) => (v.saturating_mul(10_i128.pow(scale)), false),
            Number::Decimal(v, from) if from <= scale => {
                (v.saturating_mul(10_i128.pow(scale - from)), false)
            }
            Number::Decimal(v, from) => {
                let dropped = from - scale;
                let rounded = round_scaled(v, dropped);
                (rounded, v % 10_i128.pow(dropped) != 0)
            }
            Number::Float(f) => {
                let scaled = f * 10f64.powi(scale as i32);
                let rounded = scaled.round();
                (
                    if rounded.is_nan() { 0 } else { rounded as i128 },
                    rounded != scaled,
                )
            }
        }
    }
}

/// `v / 10^scale` rounded half away from zero.
fn round_scaled(v: i128, scale: u32) -> i128 {
    let Some(unit) = 10_i128.checked_pow(scale) else {
        return 0;
    };
    let (whole, rest) = (v / unit, v % unit);
    if rest.abs() * 2 >= unit {
        whole + v.signum()
    } else {
        whole
    }
}

/// Row `row` of `values` as a number (None for NULL); text that is no number (or only partly
/// one) is read as MySQL reads it, with its warning.
fn read(values: &ArrayRef, row: usize, kind: &str, target: &Target) -> Option<Number> {
    let value = ScalarValue::try_from_array(values, row).ok()?;
    if value.is_null() {
        return None;
    }
    let text = match &value {
        ScalarValue::Utf8(Some(s))
        | ScalarValue::Utf8View(Some(s))
        | ScalarValue::LargeUtf8(Some(s)) => s.clone(),
        ScalarValue::Boolean(Some(b)) => return Some(Number::Integer(i128::from(*b))),
        ScalarValue::Float32(Some(f)) => return Some(Number::Float(f64::from(*f))),
        ScalarValue::Float64(Some(f)) => return Some(Number::Float(*f)),
        ScalarValue::Decimal128(Some(v), _, s) if *s >= 0 => {
            return Some(Number::Decimal(*v, *s as u32))
        }
        other => {
            return match other.cast_to(&DataType::Decimal128(38, 0)) {
                Ok(ScalarValue::Decimal128(Some(v), _, _)) => Some(Number::Integer(v)),
                _ => other.to_string().parse::<f64>().ok().map(Number::Float),
            }
        }
    };
    let (number, rest) = number_prefix(&text);
    match (number, rest) {
        (None, _) => {
            target.incorrect(row, kind, &text);
            Some(Number::Integer(0))
        }
        (Some(n), Rest::Nothing) => Some(n),
        (Some(n), Rest::Spaces) => {
            target.truncated(row, true);
            Some(n)
        }
        (Some(n), Rest::Other) => {
            target.truncated(row, false);
            Some(n)
        }
    }
}

/// What follows a text's numeric prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rest {
    Nothing,
    Spaces,
    Other,
}

/// MySQL's reading of text as a number: leading spaces, a sign, digits with an optional
/// fraction and exponent; None when there are no digits.
fn number_prefix(text: &str) -> (Option<Number>, Rest) {
    let s = text.trim_start();
    let bytes = s.as_bytes();
    let mut end = 0;
    if matches!(bytes.first(), Some(b'+' | b'-')) {
        end += 1;
    }
    let int_start = end;
    while bytes.get(end).is_some_and(u8::is_ascii_digit) {
        end += 1;
    }
    let int_digits = end - int_start;
    let mut frac_digits = 0;
    if bytes.get(end) == Some(&b'.') {
        let mut e = end + 1;
        while bytes.get(e).is_some_and(u8::is_ascii_digit) {
            e += 1;
        }
        frac_digits = e - end - 1;
        if int_digits + frac_digits > 0 {
            end = e;
        }
    }
    if int_digits + frac_digits == 0 {
        return (None, Rest::Other);
    }
    let mut exponent = false;
    if matches!(bytes.get(end), Some(b'e' | b'E')) {
        let mut e = end + 1;
        if matches!(bytes.get(e), Some(b'+' | b'-')) {
            e += 1;
        }
        if bytes.get(e).is_some_and(u8::is_ascii_digit) {
            while bytes.get(e).is_some_and(u8::is_ascii_digit) {
                e += 1;
            }
            end = e;
            exponent = true;
        }
    }
    let prefix = &s[..end];
    let rest = match &s[end..] {
        "" => Rest::Nothing,
        r if r.trim().is_empty() => Rest::Spaces,
        _ => Rest::Other,
    };
    let float = || prefix.parse::<f64>().ok().map(Number::Float);
    let number = if exponent {
        float()
    } else if frac_digits == 0 {
        prefix
            .parse::<i128>()
            .ok()
            .map(Number::Integer)
            .or_else(float)
    } else {
        let digits: String = prefix.chars().filter(|c| *c != '.').collect();
        digits
            .parse::<i128>()
            .ok()
            .map(|v| Number::Decimal(v, frac_digits as u32))
            .or_else(float)
    };
    (number, rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numeric_prefixes() {
        assert_eq!(
            number_prefix("12abc"),
            (Some(Number::Integer(12)), Rest::Other)
        );
        assert_eq!(
            number_prefix(" 7 "),
            (Some(Number::Integer(7)), Rest::Spaces)
        );
        assert_eq!(
            number_prefix("-2.5"),
            (Some(Number::Decimal(-25, 1)), Rest::Nothing)
        );
        assert_eq!(
            number_prefix("1e3"),
            (Some(Number::Float(1000.0)), Rest::Nothing)
        );
        assert_eq!(number_prefix("1e"), (Some(Number::Integer(1)), Rest::Other));
        assert_eq!(
            number_prefix(".5"),
            (Some(Number::Decimal(5, 1)), Rest::Nothing)
        );
        assert_eq!(number_prefix("abc").0, None);
        assert_eq!(number_prefix("").0, None);
        assert_eq!(number_prefix("-").0, None);
    }

    #[test]
    fn rounding_half_away_from_zero() {
        assert_eq!(Number::Decimal(25, 1).to_integer(), 3);
        assert_eq!(Number::Decimal(-25, 1).to_integer(), -3);
        assert_eq!(Number::Decimal(24, 1).to_integer(), 2);
        assert_eq!(Number::Float(-2.5).to_integer(), -3);
        assert_eq!(Number::Float(-2.5).double_to_integer(), -2);
        assert_eq!(Number::Float(3.5).double_to_integer(), 4);
        assert_eq!(Number::Decimal(12345678, 3).to_scaled(2), (1234568, true));
        assert_eq!(Number::Integer(5).to_scaled(2), (500, false));
    }
}
