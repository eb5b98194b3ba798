//! Gives folded nested literals back the exact type their VALUES column declares.
//!
//! DataFusion's constant folding turns `CAST(['10:00:01'] AS ARRAY<TIME>)` into a literal, and
//! a literal ARRAY/MAP/STRUCT rebuilt from an array loses the metadata of its element fields
//! (Basalt keeps a DATETIME(p)/TIME(p)'s digits, a JSON marker, a sketch kind there). A VALUES
//! row's literal then differs from its column's declared type in metadata only, and building the
//! row batch fails (`column types must match schema types`), so
//! `INSERT INTO t (times) VALUES (['10:00:01'])` into an `ARRAY<TIME>` column failed. This rule
//! runs right after constant folding and retypes such literals to the column's type: the values
//! are the same, only the field metadata is restored.

use datafusion::arrow::array::{
    Array, ArrayData, FixedSizeListArray, LargeListArray, ListArray, MapArray, StructArray,
};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::tree_node::Transformed;
use datafusion::common::{Result, ScalarValue};
use datafusion::logical_expr::{Expr, LogicalPlan, Values};
use datafusion::optimizer::{ApplyOrder, OptimizerConfig, OptimizerRule};
use std::sync::Arc;

/// The optimizer rule; see the module documentation.
#[derive(Debug, Default)]
pub struct RetypeNestedLiterals;

impl OptimizerRule for RetypeNestedLiterals {
    fn name(&self) -> &str {
        "basalt_retype_nested_literals"
    }

    fn supports_rewrite(&self) -> bool {
        true
    }

    fn apply_order(&self) -> Option<ApplyOrder> {
        Some(ApplyOrder::BottomUp)
    }

    fn rewrite(
        &self,
        plan: LogicalPlan,
        _config: &dyn OptimizerConfig,
    ) -> Result<Transformed<LogicalPlan>> {
        let LogicalPlan::Values(Values { schema, values }) = plan else {
            return Ok(Transformed::no(plan));
        };
        let mut changed = false;
        let values = values
            .into_iter()
            .map(|row| {
                row.into_iter()
                    .zip(schema.fields().iter())
                    .map(|(expr, field)| {
                        let (expr, fixed) = retype_literal(expr, field.data_type());
                        changed |= fixed;
                        expr
                    })
                    .collect()
            })
            .collect();
        let plan = LogicalPlan::Values(Values { schema, values });
        Ok(if changed {
            Transformed::yes(plan)
        } else {
            Transformed::no(plan)
        })
    }
}

/// A VALUES entry (a literal, perhaps under its constant folding's alias) retyped to `target`,
/// and whether it changed.
fn retype_literal(expr: Expr, target: &DataType) -> (Expr, bool) {
    match expr {
        Expr::Literal(value, metadata) => match retyped(&value, target) {
            Some(value) => (Expr::Literal(value, metadata), true),
            None => (Expr::Literal(value, metadata), false),
        },
        Expr::Alias(mut alias) => {
            let (inner, fixed) = retype_literal(*alias.expr, target);
            alias.expr = Box::new(inner);
            (Expr::Alias(alias), fixed)
        }
        other => (other, false),
    }
}

/// `value` as `target` when they differ only in nested field names or metadata.
fn retyped(value: &ScalarValue, target: &DataType) -> Option<ScalarValue> {
    let current = value.data_type();
    if &current == target || !current.equals_datatype(target) {
        return None;
    }
    let data = |array: &dyn Array| -> Option<ArrayData> {
        array
            .to_data()
            .into_builder()
            .data_type(target.clone())
            .build()
            .ok()
    };
    Some(match value {
        ScalarValue::List(a) => ScalarValue::List(Arc::new(ListArray::from(data(a.as_ref())?))),
        ScalarValue::LargeList(a) => {
            ScalarValue::LargeList(Arc::new(LargeListArray::from(data(a.as_ref())?)))
        }
        ScalarValue::FixedSizeList(a) => {
            ScalarValue::FixedSizeList(Arc::new(FixedSizeListArray::from(data(a.as_ref())?)))
        }
        ScalarValue::Map(a) => ScalarValue::Map(Arc::new(MapArray::from(data(a.as_ref())?))),
        ScalarValue::Struct(a) => {
            ScalarValue::Struct(Arc::new(StructArray::from(data(a.as_ref())?)))
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::datatypes::Field;
    use std::collections::HashMap;

    #[test]
    fn restores_element_metadata_and_keeps_values() {
        let plain = ScalarValue::List(ScalarValue::new_list_nullable(
            &[ScalarValue::Int64(Some(7))],
            &DataType::Int64,
        ));
        let element = Field::new("item", DataType::Int64, true)
            .with_metadata(HashMap::from([("k".to_string(), "v".to_string())]));
        let target = DataType::List(Arc::new(element));
        let out = retyped(&plain, &target).expect("retyped");
        assert_eq!(out.data_type(), target);
        let ScalarValue::List(list) = out else {
            panic!("a list")
        };
        assert_eq!(list.value_length(0), 1);
        assert!(retyped(
            &plain,
            &DataType::List(Arc::new(Field::new_list_field(DataType::Utf8, true)))
        )
        .is_none());
    }
}
