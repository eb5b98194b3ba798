//! Doris's `money_format(x)`: the number rounded half up to two decimals, with a comma between
//! thousands (`123456` is `123,456.00`). Decimals and integers are formatted from their exact
//! digits; a string is read as a number (NULL when it is none).

use crate::util::{arguments, output, plain_function};
use datafusion::arrow::array::{AsArray, StringArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::Result;
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, Signature, Volatility,
};
use std::sync::Arc;

/// `money_format`.
pub fn function() -> ScalarUDF {
    plain_function(
        "money_format",
        Signature::any(1, Volatility::Immutable),
        DataType::Utf8,
        money_format,
    )
}

fn money_format(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let text = cast(&arrays[0], &DataType::Utf8)?;
    let out: StringArray = text
        .as_string::<i32>()
        .iter()
        .map(|s| s.and_then(money))
        .collect();
    output(Arc::new(out), scalar)
}

/// `text` (a number) as money: two decimals rounded half up, thousands separated.
fn money(text: &str) -> Option<String> {
    let text = text.trim();
    let plain;
    let text = if text.contains(['e', 'E']) {
        plain = format!("{:.6}", text.parse::<f64>().ok()?);
        plain.as_str()
    } else {
        text
    };
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    let whole = if whole.is_empty() { "0" } else { whole };
    if !whole.chars().all(|c| c.is_ascii_digit()) || !fraction.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    // Cents, rounded half up on the third decimal.
    let mut cents: Vec<u8> = whole.bytes().map(|b| b - b'0').collect();
    let mut decimals = fraction.bytes().map(|b| b - b'0');
    cents.push(decimals.next().unwrap_or(0));
    cents.push(decimals.next().unwrap_or(0));
    if decimals.next().is_some_and(|d| d >= 5) {
        let mut i = cents.len();
        loop {
            if i == 0 {
                cents.insert(0, 1);
                break;
            }
            i -= 1;
            if cents[i] == 9 {
                cents[i] = 0;
            } else {
                cents[i] += 1;
                break;
            }
        }
    }
    let (units, hundredths) = cents.split_at(cents.len() - 2);
    let units: String = units.iter().map(|d| char::from(b'0' + d)).collect();
    let units = units.trim_start_matches('0');
    let units = if units.is_empty() { "0" } else { units };
    let mut grouped = String::new();
    for (i, c) in units.chars().enumerate() {
        if i > 0 && (units.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    let is_zero = units == "0" && hundredths.iter().all(|d| *d == 0);
    Some(format!(
        "{}{grouped}.{}{}",
        if negative && !is_zero { "-" } else { "" },
        hundredths[0],
        hundredths[1]
    ))
}

#[cfg(test)]
mod tests {
    use super::money;

    #[test]
    fn rounded_half_up_with_thousands() {
        assert_eq!(money("123456").as_deref(), Some("123,456.00"));
        assert_eq!(money("-123456.789").as_deref(), Some("-123,456.79"));
        assert_eq!(money("999.995").as_deref(), Some("1,000.00"));
        assert_eq!(money("0.004").as_deref(), Some("0.00"));
        assert_eq!(
            money("1234567890123456789012345.67").as_deref(),
            Some("1,234,567,890,123,456,789,012,345.67")
        );
        assert_eq!(money("abc"), None);
    }
}
