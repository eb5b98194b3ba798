//! Addresses that pass through COALESCE, IFNULL / NVL, NULLIF, GREATEST / LEAST, NVL2 and
//! CASE (so IF), arrays built of them (`[a, b]`) and elements taken from a list of them stay
//! addresses; LAG / LEAD read their default value as one, TOPN counts them as their text,
//! HISTOGRAM refuses them. `CASE ip WHEN text ..` reads the text as an address. DataFusion builds these expressions' fields without the
//! family mark (and simplifies COALESCE into CASE), so the analyzer rule, before type
//! coercion, reads their other values as addresses of the family (text, an IPV4 beside
//! IPV6s) and wraps the expression in `ip_keep_ipv4` / `ip_keep_ipv6`: the identity whose
//! field carries the mark when its argument has the family's storage type. An address beside
//! a value of another kind (a number) is an error: the result would be neither.

use super::aggregates::{remark, remark_scalar};
use super::rule::{as_family, call, family_of};
use basalt_common::ip_address::{ip_family, IpFamily};
use datafusion::arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::tree_node::Transformed;
use datafusion::common::{exec_err, plan_err, DFSchema, Result};
use datafusion::logical_expr::expr::{Case, ScalarFunction};
use datafusion::logical_expr::sort_properties::{ExprProperties, SortProperties};
use datafusion::logical_expr::{
    ColumnarValue, Expr, ExprSchemable, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF,
    ScalarUDFImpl, Signature, Volatility,
};
use std::sync::{Arc, OnceLock};

/// The identity marking its result as an address of `family`.
#[derive(Debug, PartialEq, Eq, Hash)]
struct KeepFamily {
    family: IpFamily,
    signature: Signature,
}

/// `ip_keep_ipv4` and `ip_keep_ipv6`, for the nodes that run plan fragments.
pub fn functions() -> Vec<ScalarUDF> {
    vec![keeper(IpFamily::V4).clone(), keeper(IpFamily::V6).clone()]
}

fn keeper(family: IpFamily) -> &'static ScalarUDF {
    static V4: OnceLock<ScalarUDF> = OnceLock::new();
    static V6: OnceLock<ScalarUDF> = OnceLock::new();
    let cell = match family {
        IpFamily::V4 => &V4,
        IpFamily::V6 => &V6,
    };
    cell.get_or_init(|| {
        ScalarUDF::new_from_impl(KeepFamily {
            family,
            signature: Signature::any(1, Volatility::Immutable),
        })
    })
}

fn keeper_family(f: &ScalarFunction) -> Option<IpFamily> {
    [IpFamily::V4, IpFamily::V6]
        .into_iter()
        .find(|family| f.func.name() == keeper(*family).name())
}

impl ScalarUDFImpl for KeepFamily {
    fn name(&self) -> &str {
        match self.family {
            IpFamily::V4 => "ip_keep_ipv4",
            IpFamily::V6 => "ip_keep_ipv6",
        }
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        match arg_types {
            [t] => Ok(t.clone()),
            _ => exec_err!("{} takes one argument", self.name()),
        }
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let [arg] = args.arg_fields else {
            return exec_err!("{} takes one argument", self.name());
        };
        // Marked only when coercion left the family's own storage type (or a list of it).
        let storage = self.family.arrow_type();
        let data_type = match arg.data_type() {
            t if *t == storage => {
                return Ok(Arc::new(self.family.field(self.name(), arg.is_nullable())))
            }
            DataType::List(element) if *element.data_type() == storage => DataType::List(Arc::new(
                self.family.field(element.name(), element.is_nullable()),
            )),
            other => other.clone(),
        };
        Ok(Arc::new(Field::new(
            self.name(),
            data_type,
            arg.is_nullable(),
        )))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let element = match args.return_field.data_type() {
            DataType::List(element) => Some(element.clone()),
            _ => None,
        };
        let value = match args.args.into_iter().next() {
            Some(value) => value,
            None => return exec_err!("{} takes one argument", self.name()),
        };
        // A list type names its element field: the arrays take the marked one.
        Ok(match (value, element) {
            (ColumnarValue::Array(a), Some(e)) => ColumnarValue::Array(remark(a, &e)?),
            (ColumnarValue::Scalar(s), Some(e)) => ColumnarValue::Scalar(remark_scalar(s, &e)?),
            (value, None) => value,
        })
    }

    fn output_ordering(&self, inputs: &[ExprProperties]) -> Result<SortProperties> {
        Ok(inputs
            .first()
            .map_or(SortProperties::Singleton, |p| p.sort_properties))
    }

    fn preserves_lex_ordering(&self, _inputs: &[ExprProperties]) -> Result<bool> {
        Ok(true)
    }
}

/// Functions whose result is one of their arguments: which arguments are results.
pub(super) fn result_arguments(name: &str, arity: usize) -> Option<std::ops::Range<usize>> {
    match name {
        "coalesce" | "nvl" | "ifnull" | "greatest" | "least" | "make_array" => Some(0..arity),
        "nullif" if arity == 2 => Some(0..1),
        "nvl2" if arity == 3 => Some(1..3),
        _ => None,
    }
}

/// The family the values take: IPV6 when any is one, else IPV4; `None` when none is an
/// address. An address beside a value that is neither an address, text nor NULL (a number)
/// is refused, as Doris refuses it: its result would be neither.
fn common_family<'a>(
    values: impl Iterator<Item = &'a Expr>,
    schema: &DFSchema,
    what: &str,
) -> Result<Option<IpFamily>> {
    let mut family = None;
    let mut other = None;
    for value in values {
        match family_of(value, schema) {
            Some(IpFamily::V6) => family = Some(IpFamily::V6),
            Some(IpFamily::V4) => family = family.or(Some(IpFamily::V4)),
            None => match value.get_type(schema) {
                Ok(t) if is_text(&t) || t.is_null() => {}
                Ok(t) => other = other.or(Some(t)),
                // Left to type coercion, which reports it.
                Err(_) => return Ok(None),
            },
        }
    }
    match (family, other) {
        (Some(family), Some(t)) => plan_err!(
            "{what} mixes {} values with {t} values; CAST one to the other's type",
            family.sql_name()
        ),
        (family, _) => Ok(family),
    }
}

fn is_text(t: &DataType) -> bool {
    matches!(t, DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8)
}

/// Rewrites one expression (bottom up): a pass-through of addresses gets its other values as
/// addresses and is marked; a mark right inside another is dropped (the rule may meet a plan
/// twice).
pub(super) fn keep_family(e: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    match e {
        Expr::ScalarFunction(mut f) if keeper_family(&f).is_some() => match f.args.first() {
            Some(Expr::ScalarFunction(inner)) if keeper_family(inner).is_some() => {
                Ok(Transformed::yes(f.args.remove(0)))
            }
            _ => Ok(Transformed::no(Expr::ScalarFunction(f))),
        },
        // An element of a list of addresses (ARRAY_AGG(ip)[n] and the like).
        Expr::ScalarFunction(f) if is_element_access(&f) => {
            let family = f
                .args
                .first()
                .and_then(|list| list.to_field(schema).ok())
                .and_then(|(_, field)| match field.data_type() {
                    DataType::List(element) | DataType::LargeList(element) => ip_family(element),
                    _ => None,
                });
            Ok(match family {
                Some(family) => Transformed::yes(marked(Expr::ScalarFunction(f), family)),
                None => Transformed::no(Expr::ScalarFunction(f)),
            })
        }
        Expr::ScalarFunction(mut f) => {
            let Some(results) = result_arguments(f.name(), f.args.len()) else {
                return Ok(Transformed::no(Expr::ScalarFunction(f)));
            };
            let what = f.name().to_uppercase();
            let Some(family) = common_family(f.args[results.clone()].iter(), schema, &what)? else {
                return Ok(Transformed::no(Expr::ScalarFunction(f)));
            };
            for arg in &mut f.args[results] {
                *arg = as_family(std::mem::take(arg), family, schema)?.0;
            }
            // NULLIF(ip, text) compares the text as an address.
            if f.name() == "nullif" {
                let compared = std::mem::take(&mut f.args[1]);
                f.args[1] = match family_of(&compared, schema) {
                    Some(IpFamily::V6) if family == IpFamily::V4 => compared,
                    _ => as_family(compared, family, schema)?.0,
                };
            }
            Ok(Transformed::yes(marked(Expr::ScalarFunction(f), family)))
        }
        Expr::Case(case) => {
            let values = case
                .when_then_expr
                .iter()
                .map(|(_, then)| then.as_ref())
                .chain(case.else_expr.as_deref());
            let family = common_family(values, schema, "CASE")?;
            let operand_family = case.expr.as_deref().and_then(|e| family_of(e, schema));
            if family.is_none() && operand_family.is_none() {
                return Ok(Transformed::no(Expr::Case(case)));
            }
            let case = Expr::Case(case_of(case, family, operand_family, schema)?);
            Ok(Transformed::yes(match family {
                Some(family) => marked(case, family),
                None => case,
            }))
        }
        // DataFusion plans ARRAY_AGG(x)[n] with its own NTH_VALUE, not the registered one.
        Expr::AggregateFunction(mut a)
            if super::aggregates::is_unwrapped(&a.func)
                && a.params
                    .args
                    .first()
                    .and_then(|x| family_of(x, schema))
                    .is_some() =>
        {
            a.func = Arc::new(super::aggregates::keeps_addresses(a.func.as_ref().clone()));
            Ok(Transformed::yes(Expr::AggregateFunction(a)))
        }
        // TOPN counts values as their text, as Doris does.
        Expr::AggregateFunction(mut a)
            if a.func.name() == "topn"
                && a.params
                    .args
                    .first()
                    .and_then(|x| family_of(x, schema))
                    .is_some() =>
        {
            let value = std::mem::take(&mut a.params.args[0]);
            a.params.args[0] = call("ip_to_string", vec![value])?;
            Ok(Transformed::yes(Expr::AggregateFunction(a)))
        }
        // HISTOGRAM's buckets would bound numbers or bytes, not addresses.
        Expr::AggregateFunction(a)
            if matches!(a.func.name(), "histogram" | "hist")
                && a.params
                    .args
                    .first()
                    .and_then(|x| family_of(x, schema))
                    .is_some() =>
        {
            plan_err!("HISTOGRAM does not take IPV4 / IPV6 values; CAST them to STRING")
        }
        // LAG / LEAD's default value is read as an address of the value's family.
        Expr::WindowFunction(mut w)
            if matches!(w.fun.name(), "lag" | "lead") && w.params.args.len() == 3 =>
        {
            let Some(family) = family_of(&w.params.args[0], schema) else {
                return Ok(Transformed::no(Expr::WindowFunction(w)));
            };
            let default = std::mem::take(&mut w.params.args[2]);
            let (default, changed) = as_family(default, family, schema)?;
            w.params.args[2] = default;
            Ok(Transformed::new_transformed(
                Expr::WindowFunction(w),
                changed,
            ))
        }
        other => Ok(Transformed::no(other)),
    }
}

fn is_element_access(f: &ScalarFunction) -> bool {
    matches!(f.name(), "element_at" | "array_element") && f.args.len() == 2
}

/// `case` with its results (when `family` says they are addresses) and, for `CASE ip WHEN ..`,
/// the compared values as addresses.
fn case_of(
    case: Case,
    family: Option<IpFamily>,
    operand_family: Option<IpFamily>,
    schema: &DFSchema,
) -> Result<Case> {
    let as_result = |e: Expr| -> Result<Expr> {
        match family {
            Some(f) => Ok(as_family(e, f, schema)?.0),
            None => Ok(e),
        }
    };
    let when_then_expr = case
        .when_then_expr
        .into_iter()
        .map(|(when, then)| {
            let when = match operand_family {
                Some(f) => as_family(*when, f, schema)?.0,
                None => *when,
            };
            Ok((Box::new(when), Box::new(as_result(*then)?)))
        })
        .collect::<Result<Vec<_>>>()?;
    let else_expr = match case.else_expr {
        Some(e) => Some(Box::new(as_result(*e)?)),
        None => None,
    };
    Ok(Case {
        expr: case.expr,
        when_then_expr,
        else_expr,
    })
}

fn marked(e: Expr, family: IpFamily) -> Expr {
    keeper(family).call(vec![e])
}
