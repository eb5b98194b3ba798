//! MySQL's comparisons of booleans and JSON values with other types. MySQL's BOOLEAN is
//! TINYINT(1): `TRUE = 1`, `flag = 1`, `ON false = 1`, `flag IN (0, 1)` and
//! `flag BETWEEN 0 AND 1` and `(a < b) IN (SELECT ..)` compare numbers, where DataFusion
//! refuses `Boolean = Int64`; a boolean beside a number or text, or in arithmetic (`TRUE + 1`),
//! is read as 1 or 0.
//!
//! A JSON value (Basalt's JSON is text carrying the `arrow.json` marker) compared with a
//! boolean compares as MySQL's JSON comparator does: the boolean becomes JSON `true`/`false`
//! (`JSON_EXTRACT(doc, '$.a') = TRUE` holds for `{"a": true}` only). A JSON value cast to a
//! number, a DECIMAL, a date or a boolean, or used in arithmetic, is its scalar (MySQL casts
//! the JSON scalar): a JSON string is its unquoted text (`CAST('"2.5"' AS DECIMAL)` is 2.5),
//! `true`/`false` are 1 and 0, JSON `null`, arrays and objects no value (NULL).
//!
//! A DATETIME compared with text (`d = '0001-03-04 05:06:07'`, `d IN (..)`, `d BETWEEN ..`)
//! reads the text as a DATETIME of the column's own microsecond unit, and a text cast to
//! TIMESTAMP (`TIMESTAMP '1200-01-01 00:00:00'`) is one too: DataFusion would read it in
//! nanoseconds, which hold only the years 1677 to 2262 of MySQL's 1000 to 9999.
//!
//! `CASE x WHEN a THEN .. WHEN b ..` whose WHEN values mix booleans with other types
//! (`CASE JSON_EXTRACT(..) WHEN 'null' THEN NULL WHEN true THEN true ELSE false END`) compares
//! `x` with each WHEN value on its own, as MySQL does: it becomes `CASE WHEN x = a ..`.

use crate::expr_rules::is_comparison;
use crate::expr_rules::rewrite_node_expressions;
use crate::util::{arguments, output, plain_function};
use datafusion::arrow::array::{Array, AsArray, StringBuilder};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, TimeUnit};
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::Transformed;
use datafusion::common::{DFSchema, Result, ScalarValue};
use datafusion::logical_expr::expr::{Between, BinaryExpr, Case, InList, ScalarFunction};
use datafusion::logical_expr::planner::{ExprPlanner, PlannerResult, RawBinaryExpr};
use datafusion::logical_expr::{
    Cast, ColumnarValue, Expr, ExprSchemable, LogicalPlan, ScalarFunctionArgs, ScalarUDF,
    Signature, TryCast, Volatility,
};
use datafusion::optimizer::AnalyzerRule;
use serde_json::Value;
use std::sync::{Arc, LazyLock};

/// The analyzer rule; it runs before [`crate::ImplicitCasts`] and type coercion.
#[derive(Debug, Default)]
pub struct MySqlComparisons;

impl AnalyzerRule for MySqlComparisons {
    fn name(&self) -> &str {
        "mysql_comparisons"
    }

    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        plan.transform_up_with_subqueries(|node| rewrite_node_expressions(node, rewrite))
            .map(|t| t.data)
    }
}

/// Converts compared operands while the SQL is planned: DataFusion asks a comparison for its
/// type as it plans it, and refuses `Boolean = Int64` there.
#[derive(Debug, Default)]
pub struct ComparisonsPlanner;

impl ExprPlanner for ComparisonsPlanner {
    fn plan_binary_op(
        &self,
        expr: RawBinaryExpr,
        schema: &DFSchema,
    ) -> Result<PlannerResult<RawBinaryExpr>> {
        use datafusion::sql::sqlparser::ast::BinaryOperator as Sql;
        let (Ok(lt), Ok(rt)) = (expr.left.get_type(schema), expr.right.get_type(schema)) else {
            return Ok(PlannerResult::Original(expr));
        };
        // TRUE + 1 is 2: a boolean in arithmetic is its number.
        if matches!(
            expr.op,
            Sql::Plus | Sql::Minus | Sql::Multiply | Sql::Divide | Sql::Modulo
        ) && (is_boolean(&lt) != is_boolean(&rt))
            && (lt.is_numeric() || rt.is_numeric())
        {
            let number = |e: Expr, t: &DataType| if is_boolean(t) { as_number(e) } else { e };
            return Ok(PlannerResult::Original(RawBinaryExpr {
                op: expr.op,
                left: number(expr.left, &lt),
                right: number(expr.right, &rt),
            }));
        }
        if !matches!(
            expr.op,
            Sql::Eq | Sql::NotEq | Sql::Lt | Sql::LtEq | Sql::Gt | Sql::GtEq | Sql::Spaceship
        ) {
            return Ok(PlannerResult::Original(expr));
        }
        let (left, right, _) = compared(expr.left, &lt, expr.right, &rt, schema);
        Ok(PlannerResult::Original(RawBinaryExpr {
            op: expr.op,
            left,
            right,
        }))
    }
}

/// `mysql_json_scalar(json)`: a JSON value's scalar as text, for a conversion to a number.
pub fn function() -> ScalarUDF {
    plain_function(
        "mysql_json_scalar",
        Signature::exact(vec![DataType::Utf8], Volatility::Immutable),
        DataType::Utf8,
        scalars,
    )
}

static FUNCTION: LazyLock<Arc<ScalarUDF>> = LazyLock::new(|| Arc::new(function()));

/// A JSON expression as its scalar's text.
pub(crate) fn json_scalar(e: Expr) -> Expr {
    Expr::ScalarFunction(ScalarFunction::new_udf(FUNCTION.clone(), vec![e]))
}

fn scalars(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let Some(docs) = arrays.first() else {
        return datafusion::common::exec_err!("mysql_json_scalar takes one argument");
    };
    let docs = cast(docs, &DataType::Utf8)?;
    let docs = docs.as_string::<i32>();
    let mut out = StringBuilder::with_capacity(docs.len(), docs.value_data().len());
    for doc in docs.iter() {
        match doc.and_then(scalar_text) {
            Some(text) => out.append_value(text),
            None => out.append_null(),
        }
    }
    output(Arc::new(out.finish()), scalar)
}

/// The text a JSON document's scalar converts from: strings unquoted, booleans 1 and 0.
fn scalar_text(doc: &str) -> Option<String> {
    match serde_json::from_str::<Value>(doc).ok()? {
        Value::String(s) => Some(s),
        Value::Bool(b) => Some(if b { "1" } else { "0" }.to_string()),
        // As written: every digit of a long DECIMAL kept.
        Value::Number(_) => Some(doc.trim().to_string()),
        Value::Null | Value::Array(_) | Value::Object(_) => None,
    }
}

/// True when `e` gives JSON documents.
pub(crate) fn is_json(e: &Expr, schema: &DFSchema) -> bool {
    e.to_field(schema).is_ok_and(|(_, f)| {
        basalt_common::is_json_field(&f) && !basalt_common::variant::is_variant_field(&f)
    })
}

fn is_boolean(t: &DataType) -> bool {
    t == &DataType::Boolean
}

/// A boolean as MySQL's number.
fn as_number(e: Expr) -> Expr {
    Expr::Cast(Cast::new(Box::new(e), DataType::Int64))
}

/// A boolean as JSON text: `true` or `false`.
fn as_json_boolean(e: Expr) -> Expr {
    let text = |s: &str| Expr::Literal(ScalarValue::Utf8(Some(s.to_string())), None);
    Expr::Case(Case {
        expr: Some(Box::new(e)),
        when_then_expr: vec![
            (
                Box::new(Expr::Literal(ScalarValue::Boolean(Some(true)), None)),
                Box::new(text("true")),
            ),
            (
                Box::new(Expr::Literal(ScalarValue::Boolean(Some(false)), None)),
                Box::new(text("false")),
            ),
        ],
        else_expr: None,
    })
}

/// Targets a JSON value converts to as its scalar.
fn is_scalar_target(t: &DataType) -> bool {
    t.is_numeric() || t.is_temporal() || is_boolean(t)
}

fn rewrite(e: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    let type_of = |e: &Expr| e.get_type(schema).ok();
    match e {
        Expr::BinaryExpr(BinaryExpr { left, op, right }) if is_comparison(&op) => {
            let (lt, rt) = (type_of(&left), type_of(&right));
            let (Some(lt), Some(rt)) = (lt, rt) else {
                return Ok(Transformed::no(Expr::BinaryExpr(BinaryExpr {
                    left,
                    op,
                    right,
                })));
            };
            let (left, right, changed) = compared(*left, &lt, *right, &rt, schema);
            let e = Expr::BinaryExpr(BinaryExpr::new(Box::new(left), op, Box::new(right)));
            Ok(if changed {
                Transformed::yes(e)
            } else {
                Transformed::no(e)
            })
        }
        // `(NOT 2) IN (SELECT 0 UNION SELECT 2)`: the boolean is its number.
        Expr::InSubquery(mut in_subquery)
            if type_of(&in_subquery.expr).as_ref().is_some_and(is_boolean)
                && in_subquery
                    .subquery
                    .subquery
                    .schema()
                    .fields()
                    .first()
                    .is_some_and(|f| f.data_type().is_numeric() || is_text(f.data_type())) =>
        {
            in_subquery.expr = Box::new(as_number(*in_subquery.expr));
            Ok(Transformed::yes(Expr::InSubquery(in_subquery)))
        }
        Expr::InList(InList {
            expr,
            list,
            negated,
        }) => {
            let expr_type = type_of(&expr);
            let types: Vec<_> = list.iter().map(type_of).collect();
            if let Some(t @ DataType::Timestamp(..)) = &expr_type {
                if types.iter().flatten().any(is_text) {
                    let list = list
                        .into_iter()
                        .zip(&types)
                        .map(|(v, vt)| match vt {
                            Some(vt) if is_text(vt) => {
                                Expr::Cast(Cast::new(Box::new(v), t.clone()))
                            }
                            _ => v,
                        })
                        .collect();
                    return Ok(Transformed::yes(Expr::InList(InList::new(
                        expr, list, negated,
                    ))));
                }
            }
            let boolean = expr_type.as_ref().is_some_and(is_boolean);
            let any_number = types.iter().flatten().any(|t| t.is_numeric() || is_text(t));
            let any_boolean = types.iter().flatten().any(is_boolean);
            let number = expr_type.as_ref().is_some_and(|t| t.is_numeric());
            if !((boolean && any_number) || (number && any_boolean)) {
                return Ok(Transformed::no(Expr::InList(InList {
                    expr,
                    list,
                    negated,
                })));
            }
            let expr = if boolean { as_number(*expr) } else { *expr };
            let list = list
                .into_iter()
                .zip(types)
                .map(|(v, t)| {
                    if t.as_ref().is_some_and(is_boolean) {
                        as_number(v)
                    } else {
                        v
                    }
                })
                .collect();
            Ok(Transformed::yes(Expr::InList(InList::new(
                Box::new(expr),
                list,
                negated,
            ))))
        }
        Expr::Between(Between {
            expr,
            negated,
            low,
            high,
        }) => {
            let types = [type_of(&expr), type_of(&low), type_of(&high)];
            if let Some(t @ DataType::Timestamp(..)) = &types[0] {
                if types[1..].iter().flatten().any(is_text) {
                    let datetime = |e: Box<Expr>, et: &Option<DataType>| match et {
                        Some(et) if is_text(et) => Box::new(Expr::Cast(Cast::new(e, t.clone()))),
                        _ => e,
                    };
                    return Ok(Transformed::yes(Expr::Between(Between {
                        low: datetime(low, &types[1]),
                        high: datetime(high, &types[2]),
                        expr,
                        negated,
                    })));
                }
            }
            let any_boolean = types.iter().flatten().any(is_boolean);
            let any_number = types.iter().flatten().any(|t| t.is_numeric());
            if !(any_boolean && any_number) {
                return Ok(Transformed::no(Expr::Between(Between {
                    expr,
                    negated,
                    low,
                    high,
                })));
            }
            let number = |e: Box<Expr>, t: &Option<DataType>| {
                Box::new(if t.as_ref().is_some_and(is_boolean) {
                    as_number(*e)
                } else {
                    *e
                })
            };
            Ok(Transformed::yes(Expr::Between(Between {
                expr: number(expr, &types[0]),
                negated,
                low: number(low, &types[1]),
                high: number(high, &types[2]),
            })))
        }
        Expr::Case(case) if case.expr.is_some() => {
            let operand = case.expr.as_deref().and_then(type_of);
            let whens: Vec<_> = case
                .when_then_expr
                .iter()
                .map(|(w, _)| type_of(w))
                .collect();
            let booleans = whens.iter().flatten().filter(|t| is_boolean(t)).count()
                + usize::from(operand.as_ref().is_some_and(is_boolean));
            let mixed = booleans > 0 && booleans < whens.len() + 1;
            if !mixed {
                return Ok(Transformed::no(Expr::Case(case)));
            }
            let Case {
                expr,
                when_then_expr,
                else_expr,
            } = case;
            let Some(operand) = expr else {
                return Ok(Transformed::no(Expr::Case(Case {
                    expr,
                    when_then_expr,
                    else_expr,
                })));
            };
            let operand_type = type_of(&operand);
            let mut searched = Vec::with_capacity(when_then_expr.len());
            for ((when, then), when_type) in when_then_expr.into_iter().zip(whens) {
                let condition = match (&operand_type, &when_type) {
                    (Some(ot), Some(wt)) => {
                        let (l, r, _) = compared((*operand).clone(), ot, *when, wt, schema);
                        l.eq(r)
                    }
                    _ => (*operand).clone().eq(*when),
                };
                searched.push((Box::new(condition), then));
            }
            Ok(Transformed::yes(Expr::Case(Case {
                expr: None,
                when_then_expr: searched,
                else_expr,
            })))
        }
        Expr::Cast(Cast { expr, field })
            if type_of(&expr).as_ref().is_some_and(is_text)
                && microseconds(field.data_type()).is_some() =>
        {
            let unit = microseconds(field.data_type()).unwrap_or(DataType::Null);
            Ok(Transformed::yes(Expr::Cast(Cast::new(expr, unit))))
        }
        Expr::Cast(Cast { expr, field })
            if is_scalar_target(field.data_type()) && is_json(&expr, schema) =>
        {
            Ok(Transformed::yes(Expr::Cast(Cast::new_from_field(
                Box::new(json_scalar(*expr)),
                field,
            ))))
        }
        Expr::TryCast(TryCast { expr, field })
            if is_scalar_target(field.data_type()) && is_json(&expr, schema) =>
        {
            Ok(Transformed::yes(Expr::TryCast(TryCast {
                expr: Box::new(json_scalar(*expr)),
                field,
            })))
        }
        other => Ok(Transformed::no(other)),
    }
}

/// Two compared operands as MySQL compares them, and whether either changed.
fn compared(
    left: Expr,
    lt: &DataType,
    right: Expr,
    rt: &DataType,
    schema: &DFSchema,
) -> (Expr, Expr, bool) {
    if let Some((left, right)) = datetime_text(left.clone(), lt, right.clone(), rt) {
        return (left, right, true);
    }
    match (is_boolean(lt), is_boolean(rt)) {
        (true, false) if is_json(&right, schema) => (as_json_boolean(left), right, true),
        (false, true) if is_json(&left, schema) => (left, as_json_boolean(right), true),
        (true, false) if rt.is_numeric() || is_text(rt) => (as_number(left), right, true),
        (false, true) if lt.is_numeric() || is_text(lt) => (left, as_number(right), true),
        _ => (left, right, false),
    }
}

fn is_text(t: &DataType) -> bool {
    matches!(t, DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8)
}

/// Text beside a DATETIME as a DATETIME of the same unit.
fn datetime_text(left: Expr, lt: &DataType, right: Expr, rt: &DataType) -> Option<(Expr, Expr)> {
    let as_datetime = |e: Expr, t: &DataType| Expr::Cast(Cast::new(Box::new(e), t.clone()));
    match (lt, rt) {
        (DataType::Timestamp(..), t) if is_text(t) => Some((left, as_datetime(right, lt))),
        (t, DataType::Timestamp(..)) if is_text(t) => Some((as_datetime(left, rt), right)),
        _ => None,
    }
}

/// The unit Basalt's DATETIME values have.
fn microseconds(t: &DataType) -> Option<DataType> {
    match t {
        DataType::Timestamp(TimeUnit::Nanosecond, tz) => {
            Some(DataType::Timestamp(TimeUnit::Microsecond, tz.clone()))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::scalar_text;

    #[test]
    fn json_scalars_convert_as_mysql_casts_them() {
        assert_eq!(scalar_text("\"2.5\"").as_deref(), Some("2.5"));
        assert_eq!(scalar_text("true").as_deref(), Some("1"));
        assert_eq!(scalar_text("false").as_deref(), Some("0"));
        assert_eq!(scalar_text("15").as_deref(), Some("15"));
        assert_eq!(
            scalar_text(" 99998969694839.983485848").as_deref(),
            Some("99998969694839.983485848")
        );
        assert_eq!(scalar_text("null"), None);
        assert_eq!(scalar_text("[1]"), None);
        assert_eq!(scalar_text("{\"a\":1}"), None);
    }
}
