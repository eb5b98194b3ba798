//! MySQL's types for the columns of a UNION: a column is a value chosen among its branches', so
//! it takes the type [`crate::mixed_result_types`] gives such values (a DOUBLE beside a
//! DECIMAL is a DOUBLE, a date beside a number or text is text, a DATE beside a DATETIME is a
//! DATETIME), where DataFusion's coercion would pick another (a DECIMAL(30,15), or cast the
//! text 'a' to a DATE). Each branch whose column needs converting gets a projection that
//! converts it.
//!
//! A BOOLEAN column beside numbers or text is its number (MySQL's TINYINT(1)).
//!
//! Every branch's columns are also named as the UNION names them (its first branch's names):
//! DataFusion flattens nested unions by pushing a projection of the outer one onto the inner
//! one's branches by column name, which fails where a later branch names a column otherwise
//! (`SELECT CAST(0.1 AS DOUBLE) a UNION ALL SELECT 0.2 UNION ALL SELECT 0.3 ...`).

use crate::mixed_result_types::{convert, result_type_of};
use datafusion::arrow::datatypes::{DataType, Field};
use datafusion::common::tree_node::Transformed;
use datafusion::common::{Column, Result, ScalarValue};
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::{Expr, LogicalPlan, Projection, Union};
use std::sync::Arc;

/// True when a DATETIME column `field` becomes text (or a binary string) of `to`: converted by
/// MySQL's DATETIME text here, as the rule that rewrites such casts would do after coercion
/// (which would leave the union's schema with the column's digits mark its input lost). Other
/// columns with Basalt's type marks (a YEAR) are left to DataFusion's coercion.
fn datetime_text(field: &Field, to: &DataType) -> bool {
    matches!(field.data_type(), DataType::Timestamp(_, None))
        && matches!(
            to,
            DataType::Utf8
                | DataType::Utf8View
                | DataType::LargeUtf8
                | DataType::Binary
                | DataType::LargeBinary
                | DataType::BinaryView
        )
}

/// MySQL's type of a UNION column whose branches have `types`, when it is not DataFusion's. A
/// BOOLEAN is MySQL's TINYINT(1): beside other types it is the number 1 or 0 (`SELECT 2 IN (..)
/// UNION SELECT 5`), where DataFusion finds no common type.
fn column_type(types: &[DataType]) -> Option<DataType> {
    let boolean = types.contains(&DataType::Boolean);
    let others = types
        .iter()
        .any(|t| !matches!(t, DataType::Boolean | DataType::Null));
    if !(boolean && others) {
        return result_type_of(types);
    }
    let numbers: Vec<DataType> = types
        .iter()
        .map(|t| match t {
            DataType::Boolean => DataType::Int64,
            t => t.clone(),
        })
        .collect();
    result_type_of(&numbers).or_else(|| {
        let mut all = numbers.iter();
        let first = all.next()?.clone();
        all.try_fold(first, |acc, t| {
            datafusion::logical_expr::type_coercion::binary::type_union_coercion(&acc, t)
        })
    })
}

/// `union` with its branches converted to MySQL's column types and named as the union names
/// its columns; unchanged when every branch already is.
pub(crate) fn retype_union(union: Union) -> Result<Transformed<LogicalPlan>> {
    let width = union.schema.fields().len();
    if union
        .inputs
        .iter()
        .any(|input| input.schema().fields().len() != width)
    {
        return Ok(Transformed::no(LogicalPlan::Union(union)));
    }
    let names: Vec<String> = union
        .schema
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    let targets: Vec<Option<DataType>> = (0..width)
        .map(|i| {
            let types: Vec<DataType> = union
                .inputs
                .iter()
                .map(|input| input.schema().field(i).data_type().clone())
                .collect();
            column_type(&types)
        })
        .collect();
    let mut changed = false;
    let mut inputs = Vec::with_capacity(union.inputs.len());
    for input in &union.inputs {
        let schema = input.schema();
        let converted = |i: usize| {
            let field = schema.field(i);
            targets[i]
                .as_ref()
                .filter(|t| *t != field.data_type() && !field.data_type().is_null())
                .filter(|t| field.metadata().is_empty() || datetime_text(field, t))
        };
        let needs =
            (0..width).any(|i| schema.field(i).name() != &names[i] || converted(i).is_some());
        if !needs {
            inputs.push(Arc::clone(input));
            continue;
        }
        changed = true;
        let exprs = (0..width)
            .map(|i| {
                let (qualifier, field) = schema.qualified_field(i);
                let column = Expr::Column(Column::from((qualifier, field)));
                let value = match converted(i) {
                    Some(to) if datetime_text(field, to) => {
                        let digits = basalt_common::fraction_digits(field).map_or(-1, i64::from);
                        let text = Expr::ScalarFunction(ScalarFunction::new_udf(
                            Arc::new(crate::datetime_to_text::function().clone()),
                            vec![
                                column,
                                Expr::Literal(ScalarValue::Int64(Some(digits)), None),
                            ],
                        ));
                        convert(text, &DataType::Utf8, to)
                    }
                    Some(to) => convert(column, field.data_type(), to),
                    None => column,
                };
                value.alias(&names[i])
            })
            .collect::<Vec<_>>();
        let projection = Projection::try_new(exprs, Arc::clone(input))?;
        inputs.push(Arc::new(LogicalPlan::Projection(projection)));
    }
    if !changed {
        return Ok(Transformed::no(LogicalPlan::Union(union)));
    }
    let union = Union::try_new_with_loose_types(inputs)?;
    Ok(Transformed::yes(LogicalPlan::Union(union)))
}
