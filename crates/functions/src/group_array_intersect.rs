//! Doris's `group_array_intersect(array)`: the elements every non-NULL array of the group
//! holds, each once (an empty array for a group without arrays). A NULL element is an element
//! like any other. The order is the first array's that the aggregate happens to read, so no
//! set order, as in Doris.
//!
//! The partial state is whether an array was seen and the intersection so far (a list of the
//! element type), so parts merge by intersecting again.

use arrow::array::{Array, ArrayRef, AsArray, BooleanArray};
use arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::{exec_err, plan_err, Result, ScalarValue};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, Signature, Volatility,
};
use std::collections::HashSet;
use std::sync::Arc;

const NAME: &str = "group_array_intersect";

#[derive(Debug, PartialEq, Eq, Hash)]
struct GroupArrayIntersect {
    signature: Signature,
}

/// The `group_array_intersect` aggregate.
pub fn function() -> AggregateUDF {
    AggregateUDF::new_from_impl(GroupArrayIntersect {
        signature: Signature::user_defined(Volatility::Immutable),
    })
}

/// The element type of a list type.
fn element(t: &DataType) -> Result<DataType> {
    match t {
        DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) => {
            Ok(f.data_type().clone())
        }
        DataType::Null => Ok(DataType::Null),
        other => plan_err!("{NAME} takes an ARRAY, not {other}"),
    }
}

fn list_of(t: &DataType) -> DataType {
    DataType::List(Arc::new(Field::new_list_field(t.clone(), true)))
}

impl AggregateUDFImpl for GroupArrayIntersect {
    fn name(&self) -> &str {
        NAME
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        let [t] = types else {
            return plan_err!("{NAME} takes one ARRAY");
        };
        Ok(vec![list_of(&element(t)?)])
    }

    fn return_type(&self, types: &[DataType]) -> Result<DataType> {
        let [t] = types else {
            return plan_err!("{NAME} takes one ARRAY");
        };
        Ok(list_of(&element(t)?))
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        let t = args.return_field.data_type().clone();
        Ok(vec![
            Arc::new(Field::new(
                format!("{}[seen]", args.name),
                DataType::Boolean,
                true,
            )),
            Arc::new(Field::new(format!("{}[common]", args.name), t, true)),
        ])
    }

    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        Ok(Box::new(Intersection {
            element: element(args.return_field.data_type())?,
            common: None,
        }))
    }
}

#[derive(Debug)]
struct Intersection {
    element: DataType,
    /// None until a non-NULL array is seen.
    common: Option<Vec<ScalarValue>>,
}

impl Intersection {
    /// Narrows the intersection to the elements of `array`.
    fn meet(&mut self, array: &ArrayRef) -> Result<()> {
        let mut values = Vec::with_capacity(array.len());
        for i in 0..array.len() {
            values.push(ScalarValue::try_from_array(array, i)?);
        }
        self.common = Some(match self.common.take() {
            None => {
                let mut seen = HashSet::new();
                values
                    .into_iter()
                    .filter(|v| seen.insert(v.clone()))
                    .collect()
            }
            Some(common) => {
                let these: HashSet<ScalarValue> = values.into_iter().collect();
                common.into_iter().filter(|v| these.contains(v)).collect()
            }
        });
        Ok(())
    }

    /// Each non-NULL array of a list column, in turn.
    fn meet_all(&mut self, lists: &ArrayRef, seen: Option<&BooleanArray>) -> Result<()> {
        let Some(lists) = lists.as_list_opt::<i32>() else {
            return exec_err!("{NAME}: expected a list, got {}", lists.data_type());
        };
        for i in 0..lists.len() {
            let counts = seen.is_none_or(|s| s.is_valid(i) && s.value(i));
            if counts && lists.is_valid(i) {
                self.meet(&lists.value(i))?;
            }
        }
        Ok(())
    }

    fn list(&self) -> ScalarValue {
        let values = self.common.clone().unwrap_or_default();
        ScalarValue::List(ScalarValue::new_list_nullable(&values, &self.element))
    }
}

impl Accumulator for Intersection {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        self.meet_all(&values[0], None)
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let Some(seen) = states[0].as_boolean_opt() else {
            return exec_err!("{NAME}: unexpected partial state");
        };
        self.meet_all(&states[1], Some(seen))
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        Ok(vec![
            ScalarValue::Boolean(Some(self.common.is_some())),
            self.list(),
        ])
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        Ok(self.list())
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self)
            + self
                .common
                .as_ref()
                .map_or(0, |c| c.iter().map(ScalarValue::size).sum())
    }
}
