//! Arguments read as MySQL reads them in its string and number functions: any value as its
//! text (a DOUBLE as MySQL prints it, `5` rather than `5.0`; TRUE as 1; a DATETIME with a space), bytes as they are, and any
//! value as an integer (a fraction rounded half away from zero, text read as a number).

use datafusion::arrow::array::{Array, ArrayRef, AsArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Float32Type, Float64Type, Int64Type, UInt64Type};
use datafusion::common::Result;

/// `x` as MySQL prints a DOUBLE: the shortest digits that read back as `x`, with an exponent
/// from 1e15 up and below 1e-4.
pub(crate) fn double_text(x: f64) -> String {
    if x.is_nan() || x.is_infinite() {
        return x.to_string();
    }
    let magnitude = x.abs();
    if x != 0.0 && !(1e-4..1e15).contains(&magnitude) {
        format!("{x:e}")
    } else if x == 0.0 {
        "0".to_string()
    } else {
        x.to_string()
    }
}

/// Each value of `a` as text (None for NULL); bytes that are no UTF-8 are read lossily.
pub(crate) fn texts(a: &ArrayRef) -> Result<Vec<Option<String>>> {
    Ok(match a.data_type() {
        // A FLOAT as its own shortest digits (-456.789, not -456.78900146484375).
        DataType::Float32 | DataType::Float16 => {
            let f = cast(a, &DataType::Float32)?;
            f.as_primitive::<Float32Type>()
                .iter()
                .map(|v| v.map(|x| double_text(x.to_string().parse().unwrap_or(f64::from(x)))))
                .collect()
        }
        DataType::Float64 => a
            .as_primitive::<Float64Type>()
            .iter()
            .map(|v| v.map(double_text))
            .collect(),
        DataType::Boolean => a
            .as_boolean()
            .iter()
            .map(|v| v.map(|b| if b { "1" } else { "0" }.to_string()))
            .collect(),
        // A DATETIME as MySQL writes it, with a space before the time.
        DataType::Timestamp(..) => {
            let s = cast(a, &DataType::Utf8)?;
            s.as_string::<i32>()
                .iter()
                .map(|v| v.map(|t| t.replacen('T', " ", 1)))
                .collect()
        }
        _ => bytes(a)?
            .into_iter()
            .map(|v| v.map(|b| String::from_utf8_lossy(&b).into_owned()))
            .collect(),
    })
}

/// Each value of `a` as bytes: binary values as they are, others as their text.
pub(crate) fn bytes(a: &ArrayRef) -> Result<Vec<Option<Vec<u8>>>> {
    Ok(match a.data_type() {
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView => {
            let b = cast(a, &DataType::LargeBinary)?;
            b.as_binary::<i64>()
                .iter()
                .map(|v| v.map(<[u8]>::to_vec))
                .collect()
        }
        DataType::FixedSizeBinary(_) => {
            let b = a.as_fixed_size_binary();
            (0..b.len())
                .map(|i| b.is_valid(i).then(|| b.value(i).to_vec()))
                .collect()
        }
        DataType::Float64
        | DataType::Float32
        | DataType::Float16
        | DataType::Boolean
        | DataType::Timestamp(..) => texts(a)?
            .into_iter()
            .map(|v| v.map(String::into_bytes))
            .collect(),
        DataType::Null => vec![None; a.len()],
        _ => {
            let s = cast(a, &DataType::LargeUtf8)?;
            s.as_string::<i64>()
                .iter()
                .map(|v| v.map(|t| t.as_bytes().to_vec()))
                .collect()
        }
    })
}

/// Each value of `a` as an integer: fractions rounded half away from zero, text read as a
/// number (its leading number; NULL when it has none), values past BIGINT's range clamped.
pub(crate) fn integers(a: &ArrayRef) -> Result<Vec<Option<i64>>> {
    Ok(match a.data_type() {
        DataType::Int8
        | DataType::Int16
        | DataType::Int32
        | DataType::Int64
        | DataType::UInt8
        | DataType::UInt16
        | DataType::UInt32
        | DataType::Boolean => {
            let i = cast(a, &DataType::Int64)?;
            i.as_primitive::<Int64Type>().iter().collect()
        }
        DataType::UInt64 => a
            .as_primitive::<UInt64Type>()
            .iter()
            .map(|v| v.map(|u| i64::try_from(u).unwrap_or(i64::MAX)))
            .collect(),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => texts(a)?
            .into_iter()
            .map(|v| v.and_then(|t| leading_number(&t)).map(clamp))
            .collect(),
        DataType::Null => vec![None; a.len()],
        _ => {
            let f = cast(a, &DataType::Float64)?;
            f.as_primitive::<Float64Type>()
                .iter()
                .map(|v| v.map(clamp))
                .collect()
        }
    })
}

/// `x` rounded half away from zero, within BIGINT's range.
fn clamp(x: f64) -> i64 {
    let r = x.round();
    if r >= 9.223_372_036_854_776e18 {
        i64::MAX
    } else if r <= -9.223_372_036_854_776e18 {
        i64::MIN
    } else {
        r as i64
    }
}

/// The number `text` starts with (after spaces), as MySQL reads a string in a number context:
/// `'12abc'` is 12, `' 1.5e2x'` is 150; None without digits.
pub(crate) fn leading_number(text: &str) -> Option<f64> {
    let t = text.trim_start();
    let b = t.as_bytes();
    let mut end = 0;
    if end < b.len() && (b[end] == b'+' || b[end] == b'-') {
        end += 1;
    }
    let digits_start = end;
    while end < b.len() && b[end].is_ascii_digit() {
        end += 1;
    }
    if end < b.len() && b[end] == b'.' {
        end += 1;
        while end < b.len() && b[end].is_ascii_digit() {
            end += 1;
        }
    }
    if end == digits_start || (end == digits_start + 1 && b[digits_start] == b'.') {
        return None;
    }
    let mantissa_end = end;
    if end < b.len() && (b[end] == b'e' || b[end] == b'E') {
        let mut e = end + 1;
        if e < b.len() && (b[e] == b'+' || b[e] == b'-') {
            e += 1;
        }
        let exponent_digits = e;
        while e < b.len() && b[e].is_ascii_digit() {
            e += 1;
        }
        if e > exponent_digits {
            end = e;
        }
    }
    t[..end]
        .parse()
        .ok()
        .or_else(|| t[..mantissa_end].parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_print_as_mysql_prints_them() {
        assert_eq!(double_text(5.0), "5");
        assert_eq!(double_text(-0.0), "0");
        assert_eq!(double_text(0.1), "0.1");
        assert_eq!(double_text(1e20), "1e20");
        assert_eq!(double_text(1.5e-7), "1.5e-7");
    }

    #[test]
    fn text_reads_its_leading_number() {
        assert_eq!(leading_number(" 12abc"), Some(12.0));
        assert_eq!(leading_number("1.5e2x"), Some(150.0));
        assert_eq!(leading_number("-3"), Some(-3.0));
        assert_eq!(leading_number("1e"), Some(1.0));
        assert_eq!(leading_number("abc"), None);
        assert_eq!(leading_number("."), None);
    }
}
