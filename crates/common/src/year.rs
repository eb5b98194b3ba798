//! MySQL's YEAR column: a year from 1901 to 2155, or the zero year 0000, stored as Arrow
//! `Int16`. Its field carries [`YEAR_KEY`], by which MySQL clients get the column as
//! MYSQL_TYPE_YEAR and its values as four digits (`0000` for the zero year). A stored
//! number of one or two digits is a year of 1970-2069 ([`year_of`]).

use arrow::datatypes::{DataType, Field};
use std::collections::HashMap;

/// The field metadata key marking a YEAR column (value `"4"`, the digits it shows).
pub const YEAR_KEY: &str = "basalt:year";

/// The field metadata of a YEAR column.
pub fn year_metadata() -> HashMap<String, String> {
    HashMap::from([(YEAR_KEY.to_string(), "4".to_string())])
}

/// True when `field` is a YEAR column's.
pub fn is_year(field: &Field) -> bool {
    field.data_type() == &DataType::Int16 && field.metadata().contains_key(YEAR_KEY)
}

/// The year MySQL stores for the whole number `n` (rounded already): 1-69 are 2001-2069,
/// 70-99 are 1970-1999, 1901-2155 are themselves, 0 is the zero year, except that a zero
/// written as text (`0`, `00`; not `0000`) is 2000. `None` when `n` is out of YEAR's range.
pub fn year_of(n: i128, from_text: bool) -> Option<i16> {
    Some(match n {
        0 if from_text => 2000,
        0 => 0,
        1..=69 => 2000 + n as i16,
        70..=99 => 1900 + n as i16,
        1901..=2155 => n as i16,
        _ => return None,
    })
}

/// A YEAR column's DEFAULT as the text that stores that year again when an INSERT fills it
/// in: the year in four digits (`0000` for the zero year). The default is read as a number
/// (`DEFAULT 0` is the zero year; a quoted `'0'`, 2000 in MySQL, reads the same here). `None`
/// when it is no year.
pub fn default_text(written: &str) -> Option<String> {
    let n = written
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|n| n.is_finite())?;
    let year = year_of(n.round() as i128, false)?;
    Some(format!("{year:04}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_digit_years_and_range() {
        let years: Vec<Option<i16>> = [0, 1, 69, 70, 99, 100, 1900, 1901, 2155, 2156, -1]
            .into_iter()
            .map(|n| year_of(n, false))
            .collect();
        assert_eq!(
            years,
            vec![
                Some(0),
                Some(2001),
                Some(2069),
                Some(1970),
                Some(1999),
                None,
                None,
                Some(1901),
                Some(2155),
                None,
                None
            ]
        );
        assert_eq!(year_of(0, true), Some(2000));
        assert_eq!(year_of(5, true), Some(2005));
        let field = Field::new("y", DataType::Int16, true).with_metadata(year_metadata());
        assert!(is_year(&field));
        assert!(!is_year(&Field::new("y", DataType::Int16, true)));
        assert_eq!(default_text("2008").as_deref(), Some("2008"));
        assert_eq!(default_text("0").as_deref(), Some("0000"));
        assert_eq!(default_text("69").as_deref(), Some("2069"));
        assert_eq!(default_text("0000").as_deref(), Some("0000"));
        assert_eq!(default_text("1900"), None);
        assert_eq!(default_text("x"), None);
    }
}
