//! Doris's `auto_partition_name`: the name automatic partitioning gives the partition of a
//! value. `auto_partition_name('range', unit, datetime)` is `p` and the datetime cut to the
//! start of its `unit` (year, month, day, hour, minute, second) as `yyyyMMddHHmmss`
//! (`p20221201000000` for a month); `auto_partition_name('list', v, ..)` is `p` and, for each
//! value, its letters and digits as they are, any other character as the hex of its code
//! point, and then its length in characters (`phello5world5`). NULL when an argument is NULL;
//! an unknown kind or unit, or text that is no datetime, is an error.

use crate::util::{arguments, output, plain_function};
use chrono::{Datelike, NaiveDate, NaiveDateTime, Timelike};
use datafusion::arrow::array::{Array, ArrayRef, AsArray, StringArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{exec_err, Result};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, Signature, Volatility,
};
use std::fmt::Write;
use std::sync::Arc;

pub fn function() -> ScalarUDF {
    plain_function(
        "auto_partition_name",
        Signature::variadic_any(Volatility::Immutable),
        DataType::Utf8,
        auto_partition_name,
    )
}

fn auto_partition_name(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    if arrays.len() < 2 {
        return exec_err!("auto_partition_name takes a kind and at least one value");
    }
    let texts: Vec<ArrayRef> = arrays
        .iter()
        .map(|a| cast(a, &DataType::Utf8))
        .collect::<std::result::Result<_, _>>()?;
    let texts: Vec<_> = texts.iter().map(|a| a.as_string::<i32>()).collect();
    let rows = texts[0].len();
    let mut out = Vec::with_capacity(rows);
    for row in 0..rows {
        if texts.iter().any(|t| t.is_null(row)) {
            out.push(None);
            continue;
        }
        let values: Vec<&str> = texts.iter().map(|t| t.value(row)).collect();
        out.push(Some(name(values[0], &values[1..])?));
    }
    output(Arc::new(StringArray::from(out)), scalar)
}

/// The partition name for `kind` ('range' or 'list') and its values.
fn name(kind: &str, values: &[&str]) -> Result<String> {
    match (kind.to_ascii_lowercase().as_str(), values) {
        ("range", [unit, value]) => range_name(unit, value),
        ("range", _) => exec_err!("auto_partition_name('range', unit, value) takes two values"),
        ("list", _) => Ok(list_name(values)),
        _ => exec_err!("auto_partition_name: the kind is 'range' or 'list', not '{kind}'"),
    }
}

fn range_name(unit: &str, value: &str) -> Result<String> {
    let text = value.trim();
    let Some(at) = NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M:%S%.f")
        .ok()
        .or_else(|| {
            NaiveDate::parse_from_str(text, "%Y-%m-%d")
                .ok()
                .and_then(|d| d.and_hms_opt(0, 0, 0))
        })
    else {
        return exec_err!("auto_partition_name: '{value}' is no datetime");
    };
    let (y, mo, d, h, mi, s) = (
        at.year(),
        at.month(),
        at.day(),
        at.hour(),
        at.minute(),
        at.second(),
    );
    let cut = match unit.to_ascii_lowercase().as_str() {
        "year" => (y, 1, 1, 0, 0, 0),
        "month" => (y, mo, 1, 0, 0, 0),
        "day" => (y, mo, d, 0, 0, 0),
        "hour" => (y, mo, d, h, 0, 0),
        "minute" => (y, mo, d, h, mi, 0),
        "second" => (y, mo, d, h, mi, s),
        _ => return exec_err!("auto_partition_name: unknown unit '{unit}'"),
    };
    let (y, mo, d, h, mi, s) = cut;
    Ok(format!("p{y:04}{mo:02}{d:02}{h:02}{mi:02}{s:02}"))
}

fn list_name(values: &[&str]) -> String {
    let mut out = String::from("p");
    for value in values {
        for c in value.chars() {
            if c.is_ascii_alphanumeric() {
                out.push(c);
            } else {
                let _ = write!(out, "{:x}", u32::from(c));
            }
        }
        let _ = write!(out, "{}", value.chars().count());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_as_doris_gives_them() {
        assert_eq!(
            name("range", &["day", "2022-12-12 19:20:30"]).unwrap(),
            "p20221212000000"
        );
        assert_eq!(
            name("RANGE", &["month", "2022-12-12"]).unwrap(),
            "p20221201000000"
        );
        assert_eq!(name("list", &["helloworld"]).unwrap(), "phelloworld10");
        assert_eq!(name("list", &["hello", "world"]).unwrap(), "phello5world5");
        assert_eq!(
            name("list", &["ṭṛì", "ḍḍumai"]).unwrap(),
            "p1e6d1e5bec31e0d1e0dumai6"
        );
        assert!(name("range", &["week", "2022-12-12"]).is_err());
        assert!(name("hash", &["x"]).is_err());
    }
}
