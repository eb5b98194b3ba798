//! The type MySQL gives a value chosen among values of different types, and the casts that
//! give every candidate that type:
//! - COALESCE / IFNULL / NVL, the results of CASE / IF and a UNION's columns
//!   ([`crate::union_types`]) ("for a result"): a DOUBLE beside a DECIMAL is a DOUBLE; DATE beside
//!   DATETIME, or TIME beside either, is a DATETIME (the TIME read from today's midnight); a
//!   date or a TIME beside a number or text is text; a number beside text is text; anything
//!   beside a binary string is a binary string (`IFNULL(s, CAST('x' AS BINARY))`), in COALESCE
//!   a NULL too (`COALESCE(NULL, to_bitmap(1))`: BITMAP and HLL values are binary strings);
//! - GREATEST / LEAST ("for min/max", compared values): a date or TIME beside numbers or text
//!   is that temporal type (DATE beside a number, or any two temporal types, a DATETIME), text
//!   beside a number is a DOUBLE (`LEAST(1, 'a')` is 0), text beside a binary string binary;
//! - NULLIF(a, b) is `a`'s type, `b` compared with `a` as `=` compares them: a NULLIF whose two
//!   arguments differ so is `CASE WHEN a = b THEN NULL ELSE a END` (as MySQL defines it), so the
//!   comparison rules that run after this one type the comparison.
//!
//! DataFusion found no common type for most of these (`Failed to coerce`, `user-defined
//! coercion failed`) or picked one MySQL does not (`LEAST(1, 'a')` cast 'a' to a number and
//! failed). [`coerced_arguments`] is the value functions' own coercion (their type while the
//! statement is planned); the analyzer rule [`MixedResultTypes`], before type coercion and the
//! other MySQL rules, adds the casts (the MySQL conversions of the casts are the later rules':
//! [`crate::SignedTimeCasts`], [`crate::ImplicitCasts`], [`crate::NumericDates`]...). IPV4 /
//! IPV6 addresses keep their own rules ([`crate::ip`]).

use crate::expr_rules::rewrite_node_expressions;
use basalt_common::ip_address::ip_family;
use datafusion::arrow::datatypes::{DataType, TimeUnit};
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::Transformed;
use datafusion::common::{DFSchema, Result, ScalarValue};
use datafusion::logical_expr::expr::{BinaryExpr, Case, ScalarFunction};
use datafusion::logical_expr::{Cast, Expr, ExprSchemable, LogicalPlan, Operator};
use datafusion::optimizer::AnalyzerRule;

/// What a candidate value is, for the common type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Null,
    Number,
    Text,
    Binary,
    Date,
    Datetime,
    Time,
    /// Anything else (booleans, lists, addresses, zoned timestamps): DataFusion's rules.
    Other,
}

fn class(t: &DataType) -> Class {
    match t {
        DataType::Null => Class::Null,
        DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8 => Class::Text,
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView => Class::Binary,
        DataType::Date32 | DataType::Date64 => Class::Date,
        DataType::Timestamp(_, None) => Class::Datetime,
        DataType::Time32(_) | DataType::Time64(_) => Class::Time,
        t if t.is_numeric() => Class::Number,
        _ => Class::Other,
    }
}

fn datetime() -> DataType {
    DataType::Timestamp(TimeUnit::Microsecond, None)
}

/// The function kinds this module types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Choice {
    /// COALESCE / IFNULL / NVL, CASE / IF results.
    Result,
    /// GREATEST / LEAST.
    MinMax,
}

fn choice_of(function: &str) -> Option<Choice> {
    match function {
        "coalesce" | "ifnull" | "nvl" => Some(Choice::Result),
        "greatest" | "least" => Some(Choice::MinMax),
        _ => None,
    }
}

/// The first type of `class` among `types` (the candidates keep their own kind of text or
/// binary string, and their own TIME or DATETIME precision).
fn first_of(types: &[DataType], class_wanted: Class) -> Option<DataType> {
    types.iter().find(|t| class(t) == class_wanted).cloned()
}

/// MySQL's type for values chosen among `types`, when it is not DataFusion's: None when the
/// values are of one class (or NULL), or include a class this module leaves to DataFusion.
fn common_type(choice: Choice, types: &[DataType]) -> Option<DataType> {
    let classes: Vec<Class> = types
        .iter()
        .map(class)
        .filter(|c| *c != Class::Null)
        .collect();
    if classes.contains(&Class::Other) {
        return None;
    }
    if choice == Choice::Result && classes.iter().all(|c| *c == Class::Number) {
        // A DOUBLE or FLOAT beside a DECIMAL is a DOUBLE (DataFusion would pick a DECIMAL).
        let float = types.iter().any(|t| t.is_floating());
        let decimal = types
            .iter()
            .any(|t| matches!(t, DataType::Decimal128(..) | DataType::Decimal256(..)));
        return (float && decimal).then_some(DataType::Float64);
    }
    let first = *classes.first()?;
    if classes.iter().all(|c| *c == first) {
        return None;
    }
    let has = |c: Class| classes.contains(&c);
    let temporal = has(Class::Date) || has(Class::Datetime) || has(Class::Time);
    let only_temporal = classes
        .iter()
        .all(|c| matches!(c, Class::Date | Class::Datetime | Class::Time));
    match choice {
        Choice::Result => {
            if only_temporal {
                // Two or more temporal classes: a DATETIME.
                Some(first_of(types, Class::Datetime).unwrap_or_else(datetime))
            } else if has(Class::Binary) {
                first_of(types, Class::Binary)
            } else {
                // Text beside numbers or temporal values, or temporal values beside numbers.
                Some(first_of(types, Class::Text).unwrap_or(DataType::Utf8))
            }
        }
        Choice::MinMax => {
            if temporal {
                let dates = has(Class::Date) || has(Class::Datetime);
                if !dates {
                    return first_of(types, Class::Time);
                }
                if !has(Class::Datetime) && !has(Class::Time) {
                    return Some(DataType::Date32);
                }
                Some(first_of(types, Class::Datetime).unwrap_or_else(datetime))
            } else if has(Class::Number) {
                // Text or binary strings beside numbers compare as DOUBLE.
                Some(DataType::Float64)
            } else {
                // Text beside binary strings.
                first_of(types, Class::Binary)
            }
        }
    }
}

/// MySQL's type for a value chosen among values of `types` (a UNION's column), when it is not
/// DataFusion's.
pub(crate) fn result_type_of(types: &[DataType]) -> Option<DataType> {
    common_type(Choice::Result, types)
}

/// Whether NULLIF's arguments of `a` and `b` are compared otherwise than DataFusion's NULLIF
/// compares them (it needs one type for both, and answers in it).
fn nullif_differs(a: &DataType, b: &DataType) -> bool {
    let (ca, cb) = (class(a), class(b));
    if ca == Class::Null || cb == Class::Null || ca == cb {
        return false;
    }
    // A boolean beside a number is MySQL's 0 / 1 ([`crate::MySqlComparisons`]).
    ca != Class::Other || cb != Class::Other
}

/// The argument types value function `name` takes for `types` while the statement is planned,
/// when MySQL types the call otherwise than DataFusion: the types as they are (DataFusion's
/// coercion could not cast a TIME to a DATETIME); [`MixedResultTypes`] casts them before type
/// coercion, and [`result_type`] is the call's type.
pub fn coerced_arguments(name: &str, types: &[DataType]) -> Option<Vec<DataType>> {
    result_type(name, types).map(|_| types.to_vec())
}

/// MySQL's type of value function `name` over arguments of `types`, when it is not
/// DataFusion's.
pub fn result_type(name: &str, types: &[DataType]) -> Option<DataType> {
    if name == "nullif" {
        return match types {
            [a, b] if nullif_differs(a, b) => Some(a.clone()),
            _ => None,
        };
    }
    let choice = choice_of(name)?;
    let only_binary_and_null = types
        .iter()
        .all(|t| matches!(class(t), Class::Binary | Class::Null));
    if choice == Choice::Result && only_binary_and_null && types.contains(&DataType::Null) {
        // COALESCE(NULL, to_bitmap(1)): the analyzer rule casts the NULLs ([`nulls_as_binary`]).
        return first_of(types, Class::Binary);
    }
    common_type(choice, types)
}

/// The analyzer rule; it must run before DataFusion's type coercion and before the other MySQL
/// rules that retype comparisons and casts.
#[derive(Debug, Default)]
pub struct MixedResultTypes;

impl AnalyzerRule for MixedResultTypes {
    fn name(&self) -> &str {
        "mysql_mixed_result_types"
    }

    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        // Once a UNION's columns are retyped, the nodes above it recompute their schemas.
        let mut unions_retyped = false;
        plan.transform_up_with_subqueries(|node| match node {
            LogicalPlan::Union(union) => {
                let retyped = crate::union_types::retype_union(union)?;
                unions_retyped |= retyped.transformed;
                Ok(retyped)
            }
            node => {
                let rewritten = rewrite_node_expressions(node, retyped)?;
                if unions_retyped && !rewritten.transformed {
                    rewritten.map_data(|p| p.recompute_schema())
                } else {
                    Ok(rewritten)
                }
            }
        })
        .map(|t| t.data)
    }
}

/// The expressions' half of [`MixedResultTypes`] again, once `/` is MySQL's exact division:
/// `COALESCE(-1/3, 4.7e0)` meets its DECIMAL only then (the first pass saw an integer
/// division), and failed at run time ("Float64 + Decimal128"). A UNION's columns keep the
/// first pass's types.
#[derive(Debug, Default)]
pub struct MixedQuotientTypes;

impl AnalyzerRule for MixedQuotientTypes {
    fn name(&self) -> &str {
        "mysql_mixed_quotient_types"
    }

    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        plan.transform_up_with_subqueries(|node| match node {
            LogicalPlan::Union(_) => Ok(Transformed::no(node)),
            node => rewrite_node_expressions(node, retyped),
        })
        .map(|t| t.data)
    }
}

/// A candidate's type, or None for an address (left to the address rules) or an expression
/// without a type.
fn candidate_type(e: &Expr, schema: &DFSchema) -> Option<DataType> {
    let (_, field) = e.to_field(schema).ok()?;
    if ip_family(&field).is_some() {
        return None;
    }
    Some(field.data_type().clone())
}

/// `e` of type `from` converted to `to`; numbers and dates reach a binary string through
/// their text.
pub(crate) fn convert(e: Expr, from: &DataType, to: &DataType) -> Expr {
    if from == to || from.is_null() {
        return e;
    }
    let cast = |e: Expr, t: DataType| Expr::Cast(Cast::new(Box::new(e), t));
    if matches!(class(from), Class::Text | Class::Binary) && class(to) == Class::Number {
        // Text read as MySQL reads a number (NULL for none, as Basalt reads text as a number).
        let text = if class(from) == Class::Binary {
            cast(e, DataType::Utf8)
        } else {
            e
        };
        return cast(
            crate::implicit_casts::string_to_double().call(vec![text]),
            to.clone(),
        );
    }
    if class(to) == Class::Binary && class(from) != Class::Text {
        return cast(cast(e, DataType::Utf8), to.clone());
    }
    cast(e, to.clone())
}

/// `values` converted to MySQL's common type for `choice`, and that type; the values unchanged
/// when MySQL's type is DataFusion's.
fn converted(
    choice: Choice,
    values: Vec<Expr>,
    schema: &DFSchema,
) -> Result<(Vec<Expr>, Vec<DataType>), Vec<Expr>> {
    let types: Option<Vec<DataType>> = values.iter().map(|e| candidate_type(e, schema)).collect();
    let Some(types) = types else {
        return Err(values);
    };
    let Some(to) = common_type(choice, &types) else {
        return Err(values);
    };
    let values = values
        .into_iter()
        .zip(&types)
        .map(|(e, from)| convert(e, from, &to))
        .collect();
    Ok((values, types))
}

/// GREATEST / LEAST over `args` (the text among them read as numbers, of `types` before): NULL
/// when a text is no number, as any NULL argument makes it NULL.
fn min_max_call(f: ScalarFunction, types: &[DataType]) -> Expr {
    let unreadable: Vec<Expr> = f
        .args
        .iter()
        .zip(types)
        .filter(|(e, t)| {
            matches!(class(t), Class::Text | Class::Binary)
                && matches!(e, Expr::Cast(_) | Expr::ScalarFunction(_))
        })
        .map(|(e, _)| e.clone().is_null())
        .collect();
    let call = Expr::ScalarFunction(f);
    let Some(any_null) = unreadable.into_iter().reduce(Expr::or) else {
        return call;
    };
    Expr::Case(Case {
        expr: None,
        when_then_expr: vec![(
            Box::new(any_null),
            Box::new(Expr::Literal(ScalarValue::Null, None)),
        )],
        else_expr: Some(Box::new(call)),
    })
}

fn retyped(e: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    Ok(match e {
        Expr::ScalarFunction(f) if f.name() == "nullif" && f.args.len() == 2 => {
            let a = candidate_type(&f.args[0], schema);
            let b = candidate_type(&f.args[1], schema);
            match (a, b) {
                (Some(a), Some(b)) if nullif_differs(&a, &b) => {
                    let mut args = f.args;
                    let (value, other) = (args.remove(0), args.remove(0));
                    // A binary string beside a number or a date compares as its text does.
                    let text = |e: Expr, t: &DataType, beside: &DataType| {
                        let binary = class(t) == Class::Binary;
                        if binary && !matches!(class(beside), Class::Text | Class::Binary) {
                            Expr::Cast(Cast::new(Box::new(e), DataType::Utf8))
                        } else {
                            e
                        }
                    };
                    let compared = text(value.clone(), &a, &b);
                    let other = text(other, &b, &a);
                    Transformed::yes(nullif_case(value, compared, other))
                }
                _ => Transformed::no(Expr::ScalarFunction(f)),
            }
        }
        Expr::ScalarFunction(f) => {
            let Some(choice) = choice_of(f.name()) else {
                return Ok(Transformed::no(Expr::ScalarFunction(f)));
            };
            if choice == Choice::Result {
                if let Some(args) = nulls_as_binary(&f.args, schema) {
                    let call = ScalarFunction { func: f.func, args };
                    return Ok(Transformed::yes(Expr::ScalarFunction(call)));
                }
            }
            match converted(choice, f.args, schema) {
                Ok((args, types)) => {
                    let call = ScalarFunction { func: f.func, args };
                    let numbers = call
                        .args
                        .first()
                        .and_then(|a| a.get_type(schema).ok())
                        .is_some_and(|t| t == DataType::Float64);
                    Transformed::yes(if choice == Choice::MinMax && numbers {
                        min_max_call(call, &types)
                    } else {
                        Expr::ScalarFunction(call)
                    })
                }
                Err(args) => {
                    Transformed::no(Expr::ScalarFunction(ScalarFunction { func: f.func, args }))
                }
            }
        }
        Expr::Case(case) => {
            let Case {
                expr,
                when_then_expr,
                else_expr,
            } = case;
            let (whens, mut results): (Vec<Box<Expr>>, Vec<Expr>) =
                when_then_expr.into_iter().map(|(w, t)| (w, *t)).unzip();
            let has_else = else_expr.is_some();
            results.extend(else_expr.map(|e| *e));
            let (changed, mut results) = match converted(Choice::Result, results, schema) {
                Ok((r, _)) => (true, r),
                Err(r) => (false, r),
            };
            let else_expr = if has_else {
                results.pop().map(Box::new)
            } else {
                None
            };
            let case = Expr::Case(Case {
                expr,
                when_then_expr: whens
                    .into_iter()
                    .zip(results.into_iter().map(Box::new))
                    .collect(),
                else_expr,
            });
            if changed {
                Transformed::yes(case)
            } else {
                Transformed::no(case)
            }
        }
        other => Transformed::no(other),
    })
}

/// COALESCE's values with each NULL literal cast to the binary string type of the others, when
/// they are binary strings (a BITMAP or HLL is one; an address is not) and NULLs:
/// DataFusion finds no common type for a NULL and a binary string
/// (`COALESCE(NULL, to_bitmap(1))`).
fn nulls_as_binary(args: &[Expr], schema: &DFSchema) -> Option<Vec<Expr>> {
    let types: Vec<DataType> = args
        .iter()
        .map(|e| candidate_type(e, schema))
        .collect::<Option<_>>()?;
    let binary = first_of(&types, Class::Binary)?;
    let only_binary_and_null = types
        .iter()
        .all(|t| matches!(class(t), Class::Binary | Class::Null));
    if !only_binary_and_null || !types.contains(&DataType::Null) {
        return None;
    }
    Some(
        args.iter()
            .zip(&types)
            .map(|(e, t)| match t {
                DataType::Null => Expr::Cast(Cast::new(Box::new(e.clone()), binary.clone())),
                _ => e.clone(),
            })
            .collect(),
    )
}

/// MySQL's NULLIF(value, other): NULL when they are equal (`compared` is `value` as it is
/// compared), else `value`.
fn nullif_case(value: Expr, compared: Expr, other: Expr) -> Expr {
    let equal = Expr::BinaryExpr(BinaryExpr {
        left: Box::new(compared),
        op: Operator::Eq,
        right: Box::new(other),
    });
    Expr::Case(Case {
        expr: None,
        when_then_expr: vec![(
            Box::new(equal),
            Box::new(Expr::Literal(ScalarValue::Null, None)),
        )],
        else_expr: Some(Box::new(value)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn time() -> DataType {
        DataType::Time64(TimeUnit::Microsecond)
    }

    #[test]
    fn results_of_mixed_classes() {
        let r = |t: &[DataType]| common_type(Choice::Result, t);
        assert_eq!(r(&[DataType::Date32, datetime()]), Some(datetime()));
        assert_eq!(r(&[time(), DataType::Date32]), Some(datetime()));
        assert_eq!(
            r(&[DataType::Int64, DataType::Date32]),
            Some(DataType::Utf8)
        );
        assert_eq!(
            r(&[DataType::Int64, DataType::Utf8View]),
            Some(DataType::Utf8View)
        );
        assert_eq!(
            r(&[DataType::Int64, DataType::Binary]),
            Some(DataType::Binary)
        );
        assert_eq!(r(&[DataType::Int64, DataType::Float64]), None);
        assert_eq!(
            r(&[DataType::Decimal128(2, 1), DataType::Float64]),
            Some(DataType::Float64)
        );
        assert_eq!(r(&[DataType::Decimal128(2, 1), DataType::Int64]), None);
        assert_eq!(r(&[DataType::Null, DataType::Date32]), None);
        assert_eq!(r(&[DataType::Boolean, DataType::Utf8]), None);
    }

    #[test]
    fn min_max_of_mixed_classes() {
        let m = |t: &[DataType]| common_type(Choice::MinMax, t);
        assert_eq!(
            m(&[DataType::Int64, DataType::Utf8]),
            Some(DataType::Float64)
        );
        assert_eq!(
            m(&[DataType::Utf8, DataType::Date32]),
            Some(DataType::Date32)
        );
        assert_eq!(
            m(&[DataType::Int64, DataType::Date32]),
            Some(DataType::Date32)
        );
        assert_eq!(m(&[DataType::Int64, datetime()]), Some(datetime()));
        assert_eq!(m(&[DataType::Utf8, time()]), Some(time()));
        assert_eq!(m(&[time(), DataType::Date32]), Some(datetime()));
        assert_eq!(
            m(&[DataType::Utf8, DataType::Binary]),
            Some(DataType::Binary)
        );
    }

    #[test]
    fn nullif_keeps_its_first_type() {
        // The arguments stay as they are (the rule makes NULLIF a CASE); the call is typed as
        // its first argument.
        let args = coerced_arguments("nullif", &[time(), DataType::Int64]);
        assert_eq!(args, Some(vec![time(), DataType::Int64]));
        assert_eq!(
            result_type("nullif", &[time(), DataType::Int64]),
            Some(time())
        );
        assert_eq!(
            coerced_arguments("nullif", &[DataType::Int64, DataType::Float64]),
            None
        );
        assert_eq!(
            coerced_arguments("least", &[DataType::Int64, DataType::Int32]),
            None
        );
    }
}
