//! `retention(cond_1, .., cond_n)`: an ARRAY of n booleans — the first is whether `cond_1`
//! held for any row of the group, the i-th whether both `cond_1` and `cond_i` did (in any rows).
//! A NULL condition does not hold. The state is one integer of bits, OR-ed when merging.

use std::sync::Arc;

use arrow::array::{ArrayRef, AsArray, BooleanArray, ListArray};
use arrow::buffer::{OffsetBuffer, ScalarBuffer};
use arrow::datatypes::{DataType, Field, FieldRef, UInt64Type};
use datafusion::common::{exec_err, plan_err, Result, ScalarValue};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::utils::format_state_name;
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, Signature, Volatility,
};

const NAME: &str = "retention";
const MAX_CONDITIONS: usize = 64;

#[derive(Debug, PartialEq, Eq, Hash)]
struct Retention {
    signature: Signature,
}

pub(super) fn function() -> AggregateUDF {
    AggregateUDF::new_from_impl(Retention {
        signature: Signature::user_defined(Volatility::Immutable),
    })
}

fn result_type() -> DataType {
    DataType::List(Arc::new(Field::new_list_field(DataType::Boolean, true)))
}

impl AggregateUDFImpl for Retention {
    fn name(&self) -> &str {
        NAME
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        crate::util::expect_args(NAME, types, 1, MAX_CONDITIONS)?;
        types
            .iter()
            .map(|t| match t {
                DataType::Boolean | DataType::Null => Ok(DataType::Boolean),
                // Doris casts a number to BOOLEAN (non-zero is true).
                t if t.is_numeric() => Ok(DataType::Boolean),
                _ => plan_err!("{NAME}: a condition must be BOOLEAN, not {t}"),
            })
            .collect()
    }

    fn return_type(&self, _types: &[DataType]) -> Result<DataType> {
        Ok(result_type())
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        Ok(vec![Arc::new(Field::new(
            format_state_name(args.name, "held"),
            DataType::UInt64,
            true,
        ))])
    }

    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        if args.is_distinct {
            return plan_err!("{NAME}(DISTINCT ...) is not supported");
        }
        Ok(Box::new(RetentionAccumulator {
            conditions: args.exprs.len(),
            held: 0,
        }))
    }
}

#[derive(Debug)]
struct RetentionAccumulator {
    conditions: usize,
    /// Bit i: condition i held for some row.
    held: u64,
}

impl Accumulator for RetentionAccumulator {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        for (c, column) in values.iter().enumerate() {
            let Some(column) = column.as_boolean_opt() else {
                return exec_err!("{NAME}: a condition is not BOOLEAN");
            };
            if column.true_count() > 0 {
                self.held |= 1 << c;
            }
        }
        Ok(())
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let Some(held) = states[0].as_primitive_opt::<UInt64Type>() else {
            return exec_err!("{NAME}: unexpected partial state");
        };
        self.held |= held.iter().flatten().fold(0, |a, b| a | b);
        Ok(())
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        Ok(vec![ScalarValue::UInt64(Some(self.held))])
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        let first = self.held & 1 != 0;
        let flags: BooleanArray = (0..self.conditions)
            .map(|c| Some(first && self.held & (1 << c) != 0))
            .collect();
        let len = flags.len() as i32;
        Ok(ScalarValue::List(Arc::new(ListArray::new(
            Arc::new(Field::new_list_field(DataType::Boolean, true)),
            OffsetBuffer::new(ScalarBuffer::from(vec![0, len])),
            Arc::new(flags),
            None,
        ))))
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self)
    }
}
