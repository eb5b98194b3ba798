//! A string compared with a number (`=`, `<>`, `<`, .., IN lists, IN subqueries, BETWEEN)
//! compares numbers, as MySQL and Doris compare them: `varchar_col = 1` matches '1', '1.0' and ' 1'; `int_col =
//! '1.5'` matches nothing; `'1.0' IN (1, 2)` is true; `s IN ('a', 1)` compares `s` with 'a' as
//! text and with 1 as a number; so does `CASE s WHEN 'a' THEN .. WHEN 1 THEN ..`. DataFusion cast the string to the
//! number's type instead, so the query failed on the first string that was no integer
//! (`Cannot cast string '1.0' to value of Int64 type`), whatever the rows.
//!
//! A string constant becomes a number constant when the SQL is planned (an integer one stays
//! an integer, exactly, so `id = '42'` keeps its key lookup and pruning; a decimal one beside a DECIMAL
//! or LARGEINT column is left to the column type's exact cast); any other string is read as a
//! DOUBLE row by row. Text that is no number is NULL (Doris's rule, as everywhere in Basalt's
//! casts; MySQL reads it as 0 with a warning), so it compares neither equal nor unequal.

use crate::expr_rules::is_comparison;
use crate::implicit_casts::{parse_double, string_to_double};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::tree_node::Transformed;
use datafusion::common::{DFSchema, Result, ScalarValue};
use datafusion::logical_expr::expr::{Case, InList};
use datafusion::logical_expr::{
    Between, BinaryExpr, Expr, ExprSchemable, LogicalPlanBuilder, Subquery,
};
use std::sync::Arc;

fn is_string(t: &DataType) -> bool {
    matches!(t, DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8)
}

/// `e` with its string/number comparisons made numeric (see the module documentation).
pub(crate) fn rewrite(e: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    let kind = |e: &Expr| -> Kind {
        if crate::mysql_comparisons::is_json(e, schema) {
            return Kind::Other;
        }
        match e.get_type(schema) {
            Ok(t) if is_string(&t) => Kind::Text,
            Ok(t) if t.is_numeric() => Kind::Number,
            _ => Kind::Other,
        }
    };
    Ok(match e {
        Expr::BinaryExpr(BinaryExpr { left, op, right }) if is_comparison(&op) => {
            match (kind(&left), kind(&right)) {
                (Kind::Text, Kind::Number) if !exact_elsewhere(&left, &right, schema) => {
                    Transformed::yes(Expr::BinaryExpr(BinaryExpr {
                        left: Box::new(as_number(*left)),
                        op,
                        right,
                    }))
                }
                (Kind::Number, Kind::Text) if !exact_elsewhere(&right, &left, schema) => {
                    Transformed::yes(Expr::BinaryExpr(BinaryExpr {
                        left,
                        op,
                        right: Box::new(as_number(*right)),
                    }))
                }
                _ => Transformed::no(Expr::BinaryExpr(BinaryExpr { left, op, right })),
            }
        }
        // `s IN (SELECT n ..)` and `n IN (SELECT s ..)`: numbers too.
        Expr::InSubquery(mut in_subquery) => {
            let fields = in_subquery.subquery.subquery.schema().fields().clone();
            let column = match fields.as_ref() {
                [f] if is_string(f.data_type()) => Some(Kind::Text),
                [f] if f.data_type().is_numeric() => Some(Kind::Number),
                _ => None,
            };
            match (kind(&in_subquery.expr), column) {
                (Kind::Text, Some(Kind::Number)) => {
                    in_subquery.expr = Box::new(as_number(*in_subquery.expr));
                    Transformed::yes(Expr::InSubquery(in_subquery))
                }
                (Kind::Number, Some(Kind::Text)) => {
                    in_subquery.subquery = numeric_subquery(in_subquery.subquery)?;
                    Transformed::yes(Expr::InSubquery(in_subquery))
                }
                _ => Transformed::no(Expr::InSubquery(in_subquery)),
            }
        }
        Expr::InList(mut in_list) => {
            let value = kind(&in_list.expr);
            let kinds: Vec<Kind> = in_list.list.iter().map(kind).collect();
            let any = |k: Kind| kinds.contains(&k);
            match value {
                Kind::Number if any(Kind::Text) => {
                    in_list.list = in_list
                        .list
                        .into_iter()
                        .zip(kinds)
                        .map(|(e, k)| if k == Kind::Text { as_number(e) } else { e })
                        .collect();
                    Transformed::yes(Expr::InList(in_list))
                }
                Kind::Text if any(Kind::Number) && !any(Kind::Text) => {
                    in_list.expr = Box::new(as_number(*in_list.expr));
                    Transformed::yes(Expr::InList(in_list))
                }
                Kind::Text if any(Kind::Number) => Transformed::yes(split_list(in_list, &kinds)),
                // A NULL beside strings and numbers: NULL either way, without casting 'a'.
                Kind::Other
                    if any(Kind::Number)
                        && any(Kind::Text)
                        && matches!(in_list.expr.get_type(schema), Ok(DataType::Null)) =>
                {
                    Transformed::yes(split_list(in_list, &kinds))
                }
                _ => Transformed::no(Expr::InList(in_list)),
            }
        }
        Expr::Between(mut between) => {
            let bounds = [kind(&between.low), kind(&between.high)];
            match kind(&between.expr) {
                Kind::Number if bounds.contains(&Kind::Text) => {
                    let number = |e: Box<Expr>, k: Kind| match k {
                        Kind::Text => Box::new(as_number(*e)),
                        _ => e,
                    };
                    between.low = number(between.low, bounds[0]);
                    between.high = number(between.high, bounds[1]);
                    Transformed::yes(Expr::Between(between))
                }
                // A string beside a number bound: all three compare as numbers (MySQL picks
                // one comparison type for BETWEEN; `'10' BETWEEN '9' AND 20` is 1).
                Kind::Text if bounds.contains(&Kind::Number) => {
                    let number = |e: Box<Expr>, k: Kind| match k {
                        Kind::Text => Box::new(as_number(*e)),
                        _ => e,
                    };
                    let Between {
                        expr,
                        negated,
                        low,
                        high,
                    } = between;
                    Transformed::yes(Expr::Between(Between {
                        expr: Box::new(as_number(*expr)),
                        negated,
                        low: number(low, bounds[0]),
                        high: number(high, bounds[1]),
                    }))
                }
                _ => Transformed::no(Expr::Between(between)),
            }
        }
        Expr::Case(case) if case.expr.is_some() => {
            let operand = case.expr.as_deref().map_or(Kind::Other, kind);
            let whens: Vec<Kind> = case.when_then_expr.iter().map(|(w, _)| kind(w)).collect();
            let mixed = match operand {
                Kind::Text => whens.contains(&Kind::Number),
                Kind::Number => whens.contains(&Kind::Text),
                Kind::Other => {
                    whens.contains(&Kind::Text)
                        && whens.contains(&Kind::Number)
                        && matches!(
                            case.expr.as_deref().map(|e| e.get_type(schema)),
                            Some(Ok(DataType::Null))
                        )
                }
            };
            if !mixed {
                return Ok(Transformed::no(Expr::Case(case)));
            }
            Transformed::yes(searched_case(case, schema)?)
        }
        other => Transformed::no(other),
    })
}

/// `CASE x WHEN 'a' THEN .. WHEN 1 THEN ..` with strings and numbers beside each other: each
/// WHEN compared with `x = w`, made numeric where one side is a number, as `=` is.
fn searched_case(case: Case, schema: &DFSchema) -> Result<Expr> {
    let Case {
        expr,
        when_then_expr,
        else_expr,
    } = case;
    let Some(operand) = expr else {
        return Ok(Expr::Case(Case {
            expr: None,
            when_then_expr,
            else_expr,
        }));
    };
    let when_then_expr = when_then_expr
        .into_iter()
        .map(|(when, then)| {
            let test = rewrite(operand.as_ref().clone().eq(*when), schema)?.data;
            Ok((Box::new(test), then))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Expr::Case(Case {
        expr: None,
        when_then_expr,
        else_expr,
    }))
}

/// `s IN ('a', 1)`, a string beside strings and numbers: MySQL compares each pair by its own
/// types, so the list splits in two, `s IN ('a') OR number(s) IN (1)` (`NOT IN`: both
/// negated, joined by AND), which keeps IN's answer for NULLs too.
fn split_list(in_list: InList, kinds: &[Kind]) -> Expr {
    let InList {
        expr,
        list,
        negated,
    } = in_list;
    let (numbers, others): (Vec<_>, Vec<_>) = list
        .into_iter()
        .zip(kinds)
        .partition(|(_, k)| **k == Kind::Number);
    let texts = Expr::InList(InList {
        expr: expr.clone(),
        list: others.into_iter().map(|(e, _)| e).collect(),
        negated,
    });
    let numbers = Expr::InList(InList {
        expr: Box::new(as_number(*expr)),
        list: numbers.into_iter().map(|(e, _)| e).collect(),
        negated,
    });
    if negated {
        texts.and(numbers)
    } else {
        texts.or(numbers)
    }
}

/// True when `text`, a constant, is a number that DataFusion's own cast reads exactly as
/// `number`'s DECIMAL or LARGEINT type, a cast a DOUBLE would make inexact (an integer past
/// BIGINT beside a LARGEINT column, a decimal beside a DECIMAL one).
fn exact_elsewhere(text: &Expr, number: &Expr, schema: &DFSchema) -> bool {
    let Expr::Literal(ScalarValue::Utf8(Some(t)) | ScalarValue::Utf8View(Some(t)), _) = text else {
        return false;
    };
    let decimal = matches!(
        number.get_type(schema),
        Ok(DataType::Decimal128(..) | DataType::Decimal256(..))
    );
    let t = t.trim();
    let digits = t.strip_prefix(['-', '+']).unwrap_or(t);
    let plain = !digits.is_empty()
        && digits.chars().all(|c| c.is_ascii_digit() || c == '.')
        && digits.matches('.').count() <= 1;
    decimal && plain && t.parse::<i64>().is_err()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    Number,
    Other,
}

/// `subquery` with its one column of text read as numbers.
fn numeric_subquery(subquery: Subquery) -> Result<Subquery> {
    let plan = Arc::unwrap_or_clone(subquery.subquery);
    let column = plan.schema().columns().into_iter().next();
    let Some(column) = column else {
        return Ok(Subquery {
            subquery: Arc::new(plan),
            ..subquery
        });
    };
    let name = column.name.clone();
    let plan = LogicalPlanBuilder::from(plan)
        .project(vec![as_number(Expr::Column(column)).alias(name)])?
        .build()?;
    Ok(Subquery {
        subquery: Arc::new(plan),
        ..subquery
    })
}

/// A string as the number it spells: a constant now (an integer stays one), anything else as a
/// DOUBLE row by row; NULL for text that is no number.
fn as_number(e: Expr) -> Expr {
    let text = match &e {
        Expr::Literal(
            ScalarValue::Utf8(t) | ScalarValue::Utf8View(t) | ScalarValue::LargeUtf8(t),
            _,
        ) => t.clone(),
        _ => return string_to_double().call(vec![e]),
    };
    let value = match text.as_deref().map(str::trim) {
        None => ScalarValue::Float64(None),
        Some(t) => {
            if let Ok(n) = t.parse::<i64>() {
                ScalarValue::Int64(Some(n))
            } else if let Ok(n) = t.parse::<u64>() {
                ScalarValue::UInt64(Some(n))
            } else if let Some(n) = wide_integer(t) {
                ScalarValue::Decimal128(Some(n), 38, 0)
            } else {
                ScalarValue::Float64(parse_double(t))
            }
        }
    };
    Expr::Literal(value, None)
}

/// An integer of up to 38 digits past BIGINT UNSIGNED, exact as a DECIMAL(38, 0).
fn wide_integer(t: &str) -> Option<i128> {
    let digits = t.strip_prefix(['-', '+']).unwrap_or(t);
    let integer =
        !digits.is_empty() && digits.len() <= 38 && digits.bytes().all(|b| b.is_ascii_digit());
    integer.then(|| t.parse::<i128>().ok()).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_become_numbers_integers_staying_integers() {
        let lit = |s: &str| Expr::Literal(ScalarValue::Utf8(Some(s.into())), None);
        assert_eq!(
            as_number(lit(" 42 ")),
            Expr::Literal(ScalarValue::Int64(Some(42)), None)
        );
        assert_eq!(
            as_number(lit("1.5")),
            Expr::Literal(ScalarValue::Float64(Some(1.5)), None)
        );
        assert_eq!(
            as_number(lit("test")),
            Expr::Literal(ScalarValue::Float64(None), None)
        );
    }
}
