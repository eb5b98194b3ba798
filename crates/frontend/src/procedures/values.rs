//! Values inside a running procedure: the literals local variables and parameters hold, read
//! from result cells and back to text, and MySQL's truth of a condition.

use super::binding::{cell_text, leading_number, literal};
use basalt_sql::ast::{Expr, UnaryOperator, Value};
use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::DataType;

/// The literal of a result cell with the cell's own type (a number for numeric columns, a
/// string otherwise): what a user variable takes from `SELECT .. INTO @v`.
pub(super) fn cell_literal(batch: &RecordBatch, row: usize, column: usize) -> Expr {
    let text = cell_text(batch, row, column);
    let numeric = batch.column(column).data_type().is_numeric()
        || batch.column(column).data_type() == &DataType::Boolean;
    literal(if numeric { "DOUBLE" } else { "TEXT" }, text)
}

/// The text a literal stands for (`None` for NULL).
pub(super) fn literal_text(expr: &Expr) -> Option<String> {
    match expr {
        Expr::Value(v) => match &v.value {
            Value::Null => None,
            Value::Number(n, _) => Some(n.clone()),
            Value::SingleQuotedString(s) | Value::DoubleQuotedString(s) => Some(s.clone()),
            Value::Boolean(b) => Some(if *b { "1" } else { "0" }.into()),
            other => Some(other.to_string()),
        },
        Expr::UnaryOp {
            op: UnaryOperator::Minus,
            expr,
        } => literal_text(expr).map(|t| format!("-{t}")),
        Expr::Nested(inner) => literal_text(inner),
        other => Some(other.to_string()),
    }
}

/// MySQL's truth of a condition's value: NULL is false, a number is true unless 0, text is its
/// leading number's.
pub(super) fn is_true(text: Option<&str>) -> bool {
    text.is_some_and(|t| {
        leading_number(t.trim())
            .parse::<f64>()
            .is_ok_and(|n| n != 0.0)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_read_back_and_truth() {
        assert_eq!(
            literal_text(&literal("INT", Some("-3".into()))),
            Some("-3".into())
        );
        assert_eq!(
            literal_text(&literal("TEXT", Some("a'b".into()))),
            Some("a'b".into())
        );
        assert_eq!(literal_text(&literal("INT", None)), None);
        assert!(is_true(Some("1")));
        assert!(is_true(Some("0.5")));
        assert!(is_true(Some("2abc")));
        assert!(!is_true(Some("abc")));
        assert!(!is_true(Some("0")));
        assert!(!is_true(None));
    }
}
