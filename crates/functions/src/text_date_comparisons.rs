//! A string compared with a DATE or DATETIME (`=`, `<>`, `<`, .., IN lists, BETWEEN) reads the
//! string as MySQL reads a date (`'2020/01/01'`, `'20200101'`, `'2020-01-01 10:00:00'`); a
//! string that names no date (`'19772-07-29'`, `'abc'`) is NULL, so it matches nothing (Doris's
//! rule for a cast that fails; MySQL warns and matches nothing either). A DATE compared with a
//! string that carries a time of day compares as a DATETIME (`DATE'2020-01-01' <
//! '2020-01-01 10:00:00'`), as MySQL compares them. DataFusion cast the string with Arrow's
//! strict parser and failed the whole query on the first string that was no `YYYY-MM-DD`.
//!
//! A string constant becomes a date constant when the SQL is planned (so `d = '2020-01-01'`
//! keeps its pruning); any other string goes through MySQL's lenient reading row by row.

use crate::expr_rules::is_comparison;
use basalt_common::datetime_text::parse_datetime;
use chrono::{NaiveDate, NaiveDateTime, NaiveTime};
use datafusion::arrow::datatypes::{DataType, TimeUnit};
use datafusion::common::tree_node::Transformed;
use datafusion::common::{DFSchema, Result, ScalarValue};
use datafusion::logical_expr::{Between, BinaryExpr, Cast, Expr, ExprSchemable};

fn is_string(t: &DataType) -> bool {
    matches!(t, DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8)
}

/// What an operand is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    Date,
    DateTime,
    Other,
}

fn kind(e: &Expr, schema: &DFSchema) -> Kind {
    match e.get_type(schema) {
        Ok(t) if is_string(&t) => Kind::Text,
        Ok(DataType::Date32) => Kind::Date,
        Ok(DataType::Timestamp(_, None)) => Kind::DateTime,
        _ => Kind::Other,
    }
}

/// The text of a string constant.
fn constant(e: &Expr) -> Option<Option<&str>> {
    match e {
        Expr::Literal(
            ScalarValue::Utf8(s) | ScalarValue::Utf8View(s) | ScalarValue::LargeUtf8(s),
            _,
        ) => Some(s.as_deref()),
        _ => None,
    }
}

/// Whether a string constant names a date with a time of day (a DATE beside it compares as a
/// DATETIME).
fn has_time(e: &Expr) -> bool {
    constant(e)
        .flatten()
        .and_then(parse_datetime)
        .is_some_and(|t| t.time() != NaiveTime::MIN)
}

fn days(d: NaiveDate) -> i32 {
    (d - NaiveDate::default()).num_days() as i32
}

fn micros(t: NaiveDateTime) -> i64 {
    t.and_utc().timestamp_micros()
}

/// The string `e` as a value of the date side's `kind` (Date or DateTime).
fn as_date(e: Expr, kind: Kind) -> Expr {
    if let Some(text) = constant(&e) {
        let t = text.and_then(parse_datetime);
        let value = match kind {
            Kind::Date => ScalarValue::Date32(t.map(|t| days(t.date()))),
            _ => ScalarValue::TimestampMicrosecond(t.map(micros), None),
        };
        return Expr::Literal(value, None);
    }
    let target = match kind {
        Kind::Date => DataType::Date32,
        _ => DataType::Timestamp(TimeUnit::Microsecond, None),
    };
    crate::implicit_casts::temporal(e, &target, false).unwrap_or_else(|e| e)
}

fn as_datetime(e: Expr) -> Expr {
    Expr::Cast(Cast::new(
        Box::new(e),
        DataType::Timestamp(TimeUnit::Microsecond, None),
    ))
}

/// `e` with its string/date comparisons reading the strings as dates (see the module doc).
pub(crate) fn rewrite(e: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    let k = |e: &Expr| kind(e, schema);
    let dated = |k: Kind| matches!(k, Kind::Date | Kind::DateTime);
    Ok(match e {
        Expr::BinaryExpr(BinaryExpr { left, op, right }) if is_comparison(&op) => {
            let (lk, rk) = (k(&left), k(&right));
            let (date, text, date_left) = match (lk, rk) {
                (d, Kind::Text) if dated(d) => (left, right, true),
                (Kind::Text, d) if dated(d) => (right, left, false),
                _ => {
                    return Ok(Transformed::no(Expr::BinaryExpr(BinaryExpr {
                        left,
                        op,
                        right,
                    })))
                }
            };
            let mut date_kind = if date_left { lk } else { rk };
            let mut date = *date;
            if date_kind == Kind::Date && has_time(&text) {
                date = as_datetime(date);
                date_kind = Kind::DateTime;
            }
            let text = as_date(*text, date_kind);
            let (left, right) = if date_left {
                (date, text)
            } else {
                (text, date)
            };
            Transformed::yes(Expr::BinaryExpr(BinaryExpr {
                left: Box::new(left),
                op,
                right: Box::new(right),
            }))
        }
        Expr::InList(mut in_list) => {
            let mut date_kind = k(&in_list.expr);
            if !dated(date_kind) || !in_list.list.iter().any(|e| k(e) == Kind::Text) {
                return Ok(Transformed::no(Expr::InList(in_list)));
            }
            if date_kind == Kind::Date && in_list.list.iter().any(has_time) {
                in_list.expr = Box::new(as_datetime(*in_list.expr));
                date_kind = Kind::DateTime;
                in_list.list = in_list
                    .list
                    .into_iter()
                    .map(|e| match k(&e) {
                        Kind::Date => as_datetime(e),
                        _ => e,
                    })
                    .collect();
            }
            in_list.list = in_list
                .list
                .into_iter()
                .map(|e| {
                    if k(&e) == Kind::Text {
                        as_date(e, date_kind)
                    } else {
                        e
                    }
                })
                .collect();
            Transformed::yes(Expr::InList(in_list))
        }
        Expr::Between(between) => {
            let mut date_kind = k(&between.expr);
            let texts = [
                k(&between.low) == Kind::Text,
                k(&between.high) == Kind::Text,
            ];
            if !dated(date_kind) || !texts.iter().any(|t| *t) {
                return Ok(Transformed::no(Expr::Between(between)));
            }
            let Between {
                mut expr,
                negated,
                mut low,
                mut high,
            } = between;
            if date_kind == Kind::Date && (has_time(&low) || has_time(&high)) {
                expr = Box::new(as_datetime(*expr));
                date_kind = Kind::DateTime;
                if k(&low) == Kind::Date {
                    low = Box::new(as_datetime(*low));
                }
                if k(&high) == Kind::Date {
                    high = Box::new(as_datetime(*high));
                }
            }
            let bound = |e: Box<Expr>, text: bool| {
                if text {
                    Box::new(as_date(*e, date_kind))
                } else {
                    e
                }
            };
            Transformed::yes(Expr::Between(Between {
                expr,
                negated,
                low: bound(low, texts[0]),
                high: bound(high, texts[1]),
            }))
        }
        other => Transformed::no(other),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_become_dates_or_null() {
        let text = |s: &str| Expr::Literal(ScalarValue::Utf8(Some(s.to_string())), None);
        assert_eq!(
            as_date(text("19772-07-29"), Kind::Date),
            Expr::Literal(ScalarValue::Date32(None), None)
        );
        assert_eq!(
            as_date(text("1970/01/02"), Kind::Date),
            Expr::Literal(ScalarValue::Date32(Some(1)), None)
        );
        assert!(has_time(&text("2020-01-01 10:00:00")));
        assert!(!has_time(&text("2020-01-01")));
    }
}
