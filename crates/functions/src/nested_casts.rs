//! Casts into ARRAY, MAP and STRUCT that DataFusion cannot plan, as Doris performs them: text
//! becomes a nested value (`CAST('[1, 2]' AS ARRAY<INT>)`, a string inserted into an ARRAY
//! column), and a STRUCT takes another STRUCT's fields by position when their names differ
//! (`INSERT .. VALUES (struct(1, 'a'))` into `STRUCT<x:INT, y:STRING>`; DataFusion matches
//! struct fields by name only), and an ARRAY of text becomes an ARRAY<TIME> as MySQL reads TIME
//! text (past 24 hours, negative). An analyzer rule before type coercion swaps those casts for
//! [`NestedCast`] functions; it also rewrites INSERT's own casts to the column types. Text
//! that is no value of the type is NULL in a query's CAST (Doris's rule) and an error where a
//! value is stored; an ARRAY of scalars is read item by item ([`crate::array_text`]).

use crate::array_text;
use crate::expr_rules::rewrite_node_expressions;
use crate::util::{arguments, output};
use basalt_common::typed_text;
use datafusion::arrow::array::{Array, ArrayRef, AsArray, ListArray, StructArray};
use datafusion::arrow::compute::{cast_with_options, CastOptions};
use datafusion::arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::Transformed;
use datafusion::common::{exec_err, plan_err, DFSchema, Result, ScalarValue};
use datafusion::logical_expr::expr::{ScalarFunction, TryCast};
use datafusion::logical_expr::{
    Cast, ColumnarValue, DmlStatement, Expr, ExprSchemable, LogicalPlan, Projection,
    ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility, WriteOp,
};
use datafusion::optimizer::AnalyzerRule;
use std::str::FromStr;
use std::sync::{Arc, OnceLock};

/// Replaces casts to nested types that DataFusion cannot perform with [`NestedCast`].
#[derive(Debug, Default)]
pub struct NestedCasts;

impl AnalyzerRule for NestedCasts {
    fn name(&self) -> &str {
        "doris_nested_casts"
    }

    /// A CAST in a query is NULL for text that is no value of its type, as in Doris; INSERT's
    /// own casts (the projection right under the INSERT) fail on it instead.
    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        match plan {
            LogicalPlan::Dml(dml) if matches!(dml.op, WriteOp::Insert(_)) => {
                let input = match Arc::unwrap_or_clone(dml.input.clone()) {
                    LogicalPlan::Projection(p) => {
                        let below = rewrite_casts(Arc::unwrap_or_clone(p.input), false)?;
                        let projection = Projection::try_new(p.expr, Arc::new(below))?;
                        rewrite_node_expressions(LogicalPlan::Projection(projection), |e, s| {
                            nested_casts(e, s, true)
                        })?
                        .data
                    }
                    other => rewrite_casts(other, false)?,
                };
                Ok(LogicalPlan::Dml(DmlStatement {
                    input: Arc::new(input),
                    ..dml
                }))
            }
            other => rewrite_casts(other, false),
        }
    }
}

/// `plan` with its casts to nested types swapped for [`NestedCast`]s; `strict` CASTs fail on
/// text that is no value of their type (TRY_CAST never does).
fn rewrite_casts(plan: LogicalPlan, strict: bool) -> Result<LogicalPlan> {
    plan.transform_up_with_subqueries(|node| {
        rewrite_node_expressions(node, |e, s| nested_casts(e, s, strict))
    })
    .map(|t| t.data)
}

fn nested_casts(e: Expr, schema: &DFSchema, strict_casts: bool) -> Result<Transformed<Expr>> {
    let (inner, target, strict) = match &e {
        Expr::Cast(Cast { expr, field }) => (expr, field.data_type(), strict_casts),
        Expr::TryCast(TryCast { expr, field }) => (expr, field.data_type(), false),
        _ => return Ok(Transformed::no(e)),
    };
    let Ok(source) = inner.get_type(schema) else {
        return Ok(Transformed::no(e));
    };
    let Some(kind) = CastKind::between(&source, target) else {
        return Ok(Transformed::no(e));
    };
    let target = target.clone();
    let arg = match e {
        Expr::Cast(Cast { expr, .. }) | Expr::TryCast(TryCast { expr, .. }) => *expr,
        other => return Ok(Transformed::no(other)),
    };
    Ok(Transformed::yes(call(kind, arg, &target, strict)))
}

/// `value` cast to `target` by one of this module's functions.
fn call(kind: CastKind, value: Expr, target: &DataType, strict: bool) -> Expr {
    let udf = match kind {
        CastKind::FromText => text_to_nested(),
        CastKind::StructByPosition => struct_by_position_function(),
        CastKind::TimeElements => time_elements_function(),
    };
    // The target travels as text, which cannot say a nested field's metadata (a DATETIME(p)'s
    // digits): the function gives the plain type and a cast relabels it.
    let plain = without_metadata(target);
    let converted = Expr::ScalarFunction(ScalarFunction::new_udf(
        udf,
        vec![
            value,
            Expr::Literal(ScalarValue::Utf8(Some(plain.to_string())), None),
            Expr::Literal(ScalarValue::Boolean(Some(strict)), None),
        ],
    ));
    if &plain == target {
        converted
    } else {
        Expr::Cast(Cast::new(Box::new(converted), target.clone()))
    }
}

/// `t` with the metadata of its nested fields dropped: a type `cast_text_to_nested` can be
/// given as text.
pub fn without_metadata(t: &DataType) -> DataType {
    let field = |f: &FieldRef| -> FieldRef {
        Arc::new(Field::new(
            f.name(),
            without_metadata(f.data_type()),
            f.is_nullable(),
        ))
    };
    match t {
        DataType::List(f) => DataType::List(field(f)),
        DataType::LargeList(f) => DataType::LargeList(field(f)),
        DataType::FixedSizeList(f, n) => DataType::FixedSizeList(field(f), *n),
        DataType::Map(f, sorted) => DataType::Map(field(f), *sorted),
        DataType::Struct(fields) => DataType::Struct(fields.iter().map(field).collect()),
        other => other.clone(),
    }
}

/// The name of the function reading text as a nested value: `cast_text_to_nested(text,
/// '<Arrow type>', strict)`.
pub const TEXT_TO_NESTED: &str = "cast_text_to_nested";

fn text_to_nested() -> Arc<ScalarUDF> {
    static F: OnceLock<Arc<ScalarUDF>> = OnceLock::new();
    F.get_or_init(|| {
        Arc::new(ScalarUDF::new_from_impl(NestedCast::new(
            CastKind::FromText,
        )))
    })
    .clone()
}

fn struct_by_position_function() -> Arc<ScalarUDF> {
    static F: OnceLock<Arc<ScalarUDF>> = OnceLock::new();
    F.get_or_init(|| {
        Arc::new(ScalarUDF::new_from_impl(NestedCast::new(
            CastKind::StructByPosition,
        )))
    })
    .clone()
}

fn time_elements_function() -> Arc<ScalarUDF> {
    static F: OnceLock<Arc<ScalarUDF>> = OnceLock::new();
    F.get_or_init(|| {
        Arc::new(ScalarUDF::new_from_impl(NestedCast::new(
            CastKind::TimeElements,
        )))
    })
    .clone()
}

/// The functions this module plans, registered so plans naming them can be rebuilt.
pub fn functions() -> Vec<ScalarUDF> {
    vec![
        text_to_nested().as_ref().clone(),
        struct_by_position_function().as_ref().clone(),
        time_elements_function().as_ref().clone(),
    ]
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum CastKind {
    /// Text read as a Doris ARRAY/MAP/STRUCT literal.
    FromText,
    /// A STRUCT whose fields are taken by position.
    StructByPosition,
    /// An ARRAY of text or numbers read as MySQL TIMEs (past 24 hours, negative), as a TIME
    /// column reads them (DataFusion's cast reads only times of day).
    TimeElements,
}

impl CastKind {
    fn between(source: &DataType, target: &DataType) -> Option<CastKind> {
        let nested_target = matches!(
            target,
            DataType::List(_) | DataType::LargeList(_) | DataType::Map(..) | DataType::Struct(_)
        );
        if nested_target
            && matches!(
                source,
                DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8
            )
        {
            return Some(CastKind::FromText);
        }
        if let (DataType::List(from), DataType::List(to)) = (source, target) {
            let times = matches!(to.data_type(), DataType::Time64(_) | DataType::Time32(_));
            let from_time = matches!(from.data_type(), DataType::Time64(_) | DataType::Time32(_));
            if times && !from_time {
                return Some(CastKind::TimeElements);
            }
        }
        if let (DataType::Struct(from), DataType::Struct(to)) = (source, target) {
            let names_differ = from
                .iter()
                .zip(to.iter())
                .any(|(a, b)| !a.name().eq_ignore_ascii_case(b.name()));
            if from.len() == to.len() && names_differ {
                return Some(CastKind::StructByPosition);
            }
        }
        None
    }
}

/// `f(value, 'target type', strict)`: a cast into a nested type. The target is Arrow's text
/// for the type; a strict cast (CAST) fails on a bad value, a lenient one (TRY_CAST) is NULL.
#[derive(Debug, PartialEq, Eq, Hash)]
struct NestedCast {
    kind: CastKind,
    signature: Signature,
}

impl NestedCast {
    fn new(kind: CastKind) -> NestedCast {
        NestedCast {
            kind,
            signature: Signature::any(3, Volatility::Immutable),
        }
    }
}

/// The target type and strictness from a call's literal arguments.
fn target_of(scalars: &[Option<&ScalarValue>]) -> Result<(DataType, bool)> {
    let target = match scalars.get(1) {
        Some(Some(ScalarValue::Utf8(Some(t)))) => DataType::from_str(t)?,
        _ => return plan_err!("a nested cast needs its target type as a literal"),
    };
    let strict = !matches!(
        scalars.get(2),
        Some(Some(ScalarValue::Boolean(Some(false))))
    );
    Ok((target, strict))
}

impl ScalarUDFImpl for NestedCast {
    fn name(&self) -> &str {
        match self.kind {
            CastKind::FromText => TEXT_TO_NESTED,
            CastKind::StructByPosition => "cast_struct_by_position",
            CastKind::TimeElements => "cast_time_elements",
        }
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        plan_err!("{} takes its type from its arguments", self.name())
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let (target, _) = target_of(args.scalar_arguments)?;
        Ok(Arc::new(Field::new(self.name(), target, true)))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let target = args.return_field.data_type().clone();
        let strict = !matches!(
            args.args.get(2),
            Some(ColumnarValue::Scalar(ScalarValue::Boolean(Some(false))))
        );
        let (arrays, scalar) = arguments(&args)?;
        let out = match self.kind {
            CastKind::FromText => from_text(&arrays[0], &target, strict)?,
            CastKind::StructByPosition => struct_by_position(&arrays[0], &target, strict)?,
            CastKind::TimeElements => time_elements(&arrays[0], &target, strict)?,
        };
        output(out, scalar)
    }
}

fn from_text(input: &ArrayRef, target: &DataType, strict: bool) -> Result<ArrayRef> {
    let text = cast_with_options(input, &DataType::Utf8, &CastOptions::default())?;
    let strings = text.as_string::<i32>();
    let (array, failed) = match target {
        DataType::List(element) if array_text::reads_elements_of(target) => {
            let (array, rows) = array_text::read_arrays(strings, element)?;
            let failed = rows
                .into_iter()
                .map(|row| {
                    (
                        row,
                        format!("'{}' is not an ARRAY value", strings.value(row)),
                    )
                })
                .collect();
            (array, failed)
        }
        _ => typed_text::nested_column(strings, target)
            .map_err(datafusion::common::DataFusionError::Execution)?,
    };
    if strict {
        if let Some((_, reason)) = failed.into_iter().next() {
            return Err(datafusion::common::DataFusionError::External(Box::new(
                basalt_common::BasaltError::InvalidData(format!(
                    "Incorrect value for a {} : {reason}",
                    friendly(target)
                )),
            )));
        }
    }
    Ok(array)
}

/// The SQL word for a nested Arrow type, for messages.
fn friendly(t: &DataType) -> &'static str {
    match t {
        DataType::Map(..) => "MAP",
        DataType::Struct(_) => "STRUCT",
        _ => "ARRAY",
    }
}

/// Each ARRAY's elements read as MySQL TIMEs; `strict` fails on an element that is no TIME
/// (else it is NULL).
fn time_elements(input: &ArrayRef, target: &DataType, strict: bool) -> Result<ArrayRef> {
    let (DataType::List(element), Some(lists)) = (target, input.as_list_opt::<i32>()) else {
        return exec_err!("cannot cast {} to {target}", input.data_type());
    };
    let times = crate::time_cast::times(lists.values(), strict)?;
    let times = cast_with_options(&times, element.data_type(), &CastOptions::default())?;
    Ok(Arc::new(ListArray::try_new(
        element.clone(),
        lists.offsets().clone(),
        times,
        lists.nulls().cloned(),
    )?))
}

/// `input`'s fields, renamed and cast by position to `target`'s; the rows' NULLs are kept.
fn struct_by_position(input: &ArrayRef, target: &DataType, strict: bool) -> Result<ArrayRef> {
    let (DataType::Struct(fields), Some(structs)) = (target, input.as_struct_opt()) else {
        return exec_err!("cannot cast {} to {target}", input.data_type());
    };
    let options = CastOptions {
        safe: !strict,
        ..Default::default()
    };
    let columns = structs
        .columns()
        .iter()
        .zip(fields.iter())
        .map(|(c, f)| cast_with_options(c, f.data_type(), &options))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let out = StructArray::try_new(fields.clone(), columns, structs.nulls().cloned())?;
    Ok(Arc::new(out))
}
