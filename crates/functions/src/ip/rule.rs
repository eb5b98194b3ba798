//! Where text meets IPV4 / IPV6 values. Before type coercion: text compared with an address
//! (`=`, `<`, .., IN, BETWEEN) is read as one (`ip_cast_ipv4`, NULL when it is none) so the
//! comparison is between addresses, an IPV4 compared with an IPV6 takes its IPv6 form, and an
//! INSERT (or UPDATE) that stores text into an address column reads it strictly
//! (`ip_store_ipv4`, error 1366 for text that is no address). After type coercion: any cast of
//! an address to text, the query's own (`CAST(ip AS STRING)`) or one coercion added
//! gives the address text rather than the number or bytes, and string functions (CONCAT,
//! UPPER, ..) take addresses as their text. COALESCE, CASE and the like keep the address type
//! ([`super::keep_family`]).

use crate::expr_rules::is_comparison;
use crate::expr_rules::rewrite_node_expressions;
use basalt_common::ip_address::{ip_family, IpFamily, IPV4_EXTENSION_NAME, IPV6_EXTENSION_NAME};
use basalt_common::types::EXTENSION_NAME_KEY;
use datafusion::arrow::datatypes::{DataType, Field};
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::Transformed;
use datafusion::common::{internal_datafusion_err, DFSchema, Result};
use datafusion::logical_expr::expr::{Alias, InList, TryCast};
use datafusion::logical_expr::{
    Between, BinaryExpr, Cast, DmlStatement, Expr, ExprSchemable, LogicalPlan, Projection,
    ScalarUDF, Union, Values, WriteOp,
};
use datafusion::optimizer::AnalyzerRule;
use std::sync::{Arc, OnceLock};

/// The analyzer rule; one instance runs before DataFusion's type coercion, one after.
#[derive(Debug)]
pub struct IpCoercion {
    after_type_coercion: bool,
}

impl IpCoercion {
    /// Comparisons with text and stored text (before type coercion).
    pub fn before_type_coercion() -> IpCoercion {
        IpCoercion {
            after_type_coercion: false,
        }
    }

    /// Casts of addresses to text (after type coercion).
    pub fn after_type_coercion() -> IpCoercion {
        IpCoercion {
            after_type_coercion: true,
        }
    }
}

impl AnalyzerRule for IpCoercion {
    fn name(&self) -> &str {
        if self.after_type_coercion {
            "ip_text_casts"
        } else {
            "ip_coercion"
        }
    }

    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        if self.after_type_coercion {
            return plan
                .transform_up_with_subqueries(|node| {
                    rewrite_node_expressions(node, text_casts)?.transform_data(unmark_text_union)
                })
                .map(|t| t.data);
        }
        let plan = stored_text(plan)?;
        plan.transform_up_with_subqueries(|node| rewrite_node_expressions(node, comparisons))
            .map(|t| t.data)
    }
}

/// A call of the IP function `name`.
pub(super) fn call(name: &str, args: Vec<Expr>) -> Result<Expr> {
    static FUNCTIONS: OnceLock<Vec<ScalarUDF>> = OnceLock::new();
    FUNCTIONS
        .get_or_init(super::functions)
        .iter()
        .find(|f| f.name() == name)
        .map(|f| f.call(args))
        .ok_or_else(|| internal_datafusion_err!("no IP function {name}"))
}

/// Text read as an address of `family` (NULL when it is none).
fn cast_text(family: IpFamily, e: Expr) -> Result<Expr> {
    let name = match family {
        IpFamily::V4 => "ip_cast_ipv4",
        IpFamily::V6 => "ip_cast_ipv6",
    };
    call(name, vec![e])
}

/// Text stored into a column of `family` (an error when it is no address).
fn store_text(family: IpFamily, e: Expr) -> Result<Expr> {
    let name = match family {
        IpFamily::V4 => "ip_store_ipv4",
        IpFamily::V6 => "ip_store_ipv6",
    };
    call(name, vec![e])
}

pub(super) fn family_of(e: &Expr, schema: &DFSchema) -> Option<IpFamily> {
    e.to_field(schema).ok().and_then(|(_, f)| ip_family(&f))
}

fn is_text_type(t: &DataType) -> bool {
    matches!(t, DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8)
}

fn is_text(e: &Expr, schema: &DFSchema) -> bool {
    e.get_type(schema).is_ok_and(|t| is_text_type(&t))
}

/// `e` (an IPV4, IPV6 or text value) as a value comparable with an address of `family`.
pub(super) fn as_family(e: Expr, family: IpFamily, schema: &DFSchema) -> Result<(Expr, bool)> {
    Ok(match family_of(&e, schema) {
        Some(IpFamily::V4) if family == IpFamily::V6 => (call("ipv4_to_ipv6", vec![e])?, true),
        None if is_text(&e, schema) => (cast_text(family, e)?, true),
        _ => (e, false),
    })
}

fn comparisons(e: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    Ok(match e {
        Expr::BinaryExpr(BinaryExpr { left, op, right }) if is_comparison(&op) => {
            let (l, r) = (family_of(&left, schema), family_of(&right, schema));
            let family = match (l, r) {
                (Some(IpFamily::V6), _) | (_, Some(IpFamily::V6)) => IpFamily::V6,
                (Some(f), _) | (_, Some(f)) => f,
                (None, None) => {
                    return Ok(Transformed::no(Expr::BinaryExpr(BinaryExpr {
                        left,
                        op,
                        right,
                    })))
                }
            };
            let (left, left_changed) = as_family(*left, family, schema)?;
            let (right, right_changed) = as_family(*right, family, schema)?;
            let e = Expr::BinaryExpr(BinaryExpr::new(Box::new(left), op, Box::new(right)));
            if left_changed || right_changed {
                Transformed::yes(e)
            } else {
                Transformed::no(e)
            }
        }
        Expr::InList(InList {
            expr,
            list,
            negated,
        }) if family_of(&expr, schema).is_some() => {
            let family = family_of(&expr, schema).unwrap_or(IpFamily::V4);
            let mut changed = false;
            let list = list
                .into_iter()
                .map(|item| {
                    let (item, c) = as_family(item, family, schema)?;
                    changed |= c;
                    Ok(item)
                })
                .collect::<Result<Vec<_>>>()?;
            let e = Expr::InList(InList::new(expr, list, negated));
            if changed {
                Transformed::yes(e)
            } else {
                Transformed::no(e)
            }
        }
        Expr::Between(Between {
            expr,
            negated,
            low,
            high,
        }) if family_of(&expr, schema).is_some() => {
            let family = family_of(&expr, schema).unwrap_or(IpFamily::V4);
            let (low, low_changed) = as_family(*low, family, schema)?;
            let (high, high_changed) = as_family(*high, family, schema)?;
            let e = Expr::Between(Between::new(expr, negated, Box::new(low), Box::new(high)));
            if low_changed || high_changed {
                Transformed::yes(e)
            } else {
                Transformed::no(e)
            }
        }
        // String functions read addresses as their text (CONCAT converts its arguments itself,
        // with no cast to catch; IPV6 bytes would be refused).
        Expr::ScalarFunction(mut f)
            if takes_text(f.name()) && f.args.iter().any(|a| family_of(a, schema).is_some()) =>
        {
            for arg in &mut f.args {
                if family_of(arg, schema).is_some() {
                    *arg = call("ip_to_string", vec![std::mem::take(arg)])?;
                }
            }
            Transformed::yes(Expr::ScalarFunction(f))
        }
        // COALESCE, CASE and the like keep the family of the addresses they pass.
        other => super::keep_family::keep_family(other, schema)?,
    })
}

fn takes_text(function: &str) -> bool {
    ["concat", "concat_ws", "mysql_concat", "substr", "substring"].contains(&function)
        || crate::text_arguments::STRING_FUNCTIONS.contains(&function)
}

/// Casts of addresses to text: the address text.
fn text_casts(e: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    let (expr, target) = match &e {
        Expr::Cast(Cast { expr, field }) | Expr::TryCast(TryCast { expr, field })
            if is_text_type(field.data_type()) && family_of(expr, schema).is_some() =>
        {
            (expr.as_ref().clone(), field.data_type().clone())
        }
        _ => return Ok(Transformed::no(e)),
    };
    let text = call("ip_to_string", vec![expr])?;
    Ok(Transformed::yes(if target == DataType::Utf8 {
        text
    } else {
        Expr::Cast(Cast::new(Box::new(text), target))
    }))
}

/// An INSERT or UPDATE storing text into IPV4 / IPV6 columns reads it as addresses: the
/// statement's projection (one expression per table column) casts the text to the column's
/// type, or refers to a VALUES column whose rows do.
fn stored_text(plan: LogicalPlan) -> Result<LogicalPlan> {
    let LogicalPlan::Dml(dml) = plan else {
        return Ok(plan);
    };
    let table = dml.target.schema();
    let families: Vec<(usize, IpFamily)> = table
        .fields()
        .iter()
        .enumerate()
        .filter_map(|(i, f)| ip_family(f).map(|family| (i, family)))
        .collect();
    let writes_rows = matches!(dml.op, WriteOp::Insert(_) | WriteOp::Update);
    let LogicalPlan::Projection(projection) = dml.input.as_ref() else {
        return Ok(LogicalPlan::Dml(dml));
    };
    if families.is_empty() || !writes_rows || projection.expr.len() != table.fields().len() {
        return Ok(LogicalPlan::Dml(dml));
    }
    let mut exprs = projection.expr.clone();
    let mut input = projection.input.as_ref().clone();
    let mut changed = false;
    for (i, family) in families {
        let (inner, name) = match &exprs[i] {
            Expr::Alias(Alias { expr, name, .. }) => (expr.as_ref(), Some(name.clone())),
            other => (other, None),
        };
        let stored = match inner {
            Expr::Cast(Cast { expr, .. }) | Expr::TryCast(TryCast { expr, .. })
                if is_text(expr, input.schema()) =>
            {
                Some(store_text(family, expr.as_ref().clone())?)
            }
            Expr::Column(column) => {
                if let LogicalPlan::Values(values) = &mut input {
                    if let Ok(j) = values.schema.index_of_column(column) {
                        changed |= store_values_column(values, j, family)?;
                    }
                }
                None
            }
            _ => None,
        };
        if let Some(stored) = stored {
            exprs[i] = match name {
                Some(name) => stored.alias(name),
                None => stored,
            };
            changed = true;
        }
    }
    if !changed {
        return Ok(LogicalPlan::Dml(dml));
    }
    let projection = Projection::try_new(exprs, Arc::new(input))?;
    Ok(LogicalPlan::Dml(DmlStatement {
        input: Arc::new(LogicalPlan::Projection(projection)),
        ..dml
    }))
}

/// Rows of a VALUES list whose column `j` casts text to an address read it strictly.
fn store_values_column(values: &mut Values, j: usize, family: IpFamily) -> Result<bool> {
    let empty = DFSchema::empty();
    let mut changed = false;
    for row in &mut values.values {
        let Some(value) = row.get_mut(j) else {
            continue;
        };
        if let Expr::Cast(Cast { expr, .. }) = value {
            if is_text(expr, &empty) {
                *value = store_text(family, expr.as_ref().clone())?;
                changed = true;
            }
        }
    }
    Ok(changed)
}

/// A UNION of addresses and text is text, yet DataFusion's union coercion keeps the
/// addresses' mark on the column (its inputs, reading the addresses as text, have none, which
/// the physical planner refuses): the mark is dropped.
fn unmark_text_union(node: LogicalPlan) -> Result<Transformed<LogicalPlan>> {
    let LogicalPlan::Union(union) = node else {
        return Ok(Transformed::no(node));
    };
    let stale = |f: &Field| {
        ip_family(f).is_none()
            && f.metadata()
                .get(EXTENSION_NAME_KEY)
                .is_some_and(|n| n == IPV4_EXTENSION_NAME || n == IPV6_EXTENSION_NAME)
    };
    if !union.schema.fields().iter().any(|f| stale(f)) {
        return Ok(Transformed::no(LogicalPlan::Union(union)));
    }
    let fields: Vec<_> = union
        .schema
        .iter()
        .map(|(qualifier, f)| {
            let f = if stale(f) {
                let mut metadata = f.metadata().clone();
                metadata.remove(EXTENSION_NAME_KEY);
                Arc::new(f.as_ref().clone().with_metadata(metadata))
            } else {
                f.clone()
            };
            (qualifier.cloned(), f)
        })
        .collect();
    let schema = DFSchema::new_with_metadata(fields, union.schema.metadata().clone())?;
    Ok(Transformed::yes(LogicalPlan::Union(Union {
        inputs: union.inputs,
        schema: Arc::new(schema),
    })))
}
