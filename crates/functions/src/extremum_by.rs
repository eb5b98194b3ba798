//! Doris's `max_by(x, y)` / `min_by(x, y)`: the value of `x` in the row with the largest
//! (smallest) `y`. Rows whose `y` is NULL are skipped; `x` may be NULL; no row gives NULL;
//! among equal `y`s the row seen first wins. Any comparable `y`, any `x`.

use std::cmp::Ordering;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef};
use arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::{exec_err, Result, ScalarValue};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::utils::format_state_name;
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, Signature, Volatility,
};

#[derive(Debug, PartialEq, Eq, Hash)]
struct ExtremumBy {
    /// The ordering `y` must have over the current best to replace it.
    wins: Ordering,
    signature: Signature,
}

/// `max_by` and `min_by`.
pub fn functions() -> Vec<AggregateUDF> {
    [Ordering::Greater, Ordering::Less]
        .into_iter()
        .map(|wins| {
            AggregateUDF::new_from_impl(ExtremumBy {
                wins,
                signature: Signature::any(2, Volatility::Immutable),
            })
        })
        .collect()
}

impl AggregateUDFImpl for ExtremumBy {
    fn name(&self) -> &str {
        if self.wins == Ordering::Greater {
            "max_by"
        } else {
            "min_by"
        }
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, types: &[DataType]) -> Result<DataType> {
        Ok(types[0].clone())
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        let field = |i: usize, part: &str| -> Result<FieldRef> {
            let Some(input) = args.input_fields.get(i) else {
                return exec_err!("{}: takes 2 arguments", self.name());
            };
            Ok(Arc::new(Field::new(
                format_state_name(args.name, part),
                input.data_type().clone(),
                true,
            )))
        };
        Ok(vec![field(0, "value")?, field(1, "by")?])
    }

    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        let types: Vec<DataType> = args
            .exprs
            .iter()
            .map(|e| e.data_type(args.schema))
            .collect::<Result<_>>()?;
        if types.len() != 2 {
            return exec_err!("{}: takes 2 arguments", self.name());
        }
        Ok(Box::new(ExtremumAccumulator {
            name: self.name().to_string(),
            wins: self.wins,
            best: None,
            null_value: ScalarValue::try_from(&types[0])?,
            null_by: ScalarValue::try_from(&types[1])?,
        }))
    }
}

#[derive(Debug)]
struct ExtremumAccumulator {
    name: String,
    wins: Ordering,
    /// The best row so far: (x, y).
    best: Option<(ScalarValue, ScalarValue)>,
    null_value: ScalarValue,
    null_by: ScalarValue,
}

impl ExtremumAccumulator {
    fn offer(&mut self, values: &ArrayRef, by: &ArrayRef) -> Result<()> {
        for row in 0..by.len() {
            if by.is_null(row) {
                continue;
            }
            let y = ScalarValue::try_from_array(by, row)?;
            let better = match &self.best {
                None => true,
                Some((_, best)) => match y.partial_cmp(best) {
                    Some(order) => order == self.wins,
                    None => return exec_err!("{}: values of {} do not compare", self.name, y),
                },
            };
            if better {
                self.best = Some((ScalarValue::try_from_array(values, row)?, y));
            }
        }
        Ok(())
    }
}

impl Accumulator for ExtremumAccumulator {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        self.offer(&values[0], &values[1])
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        self.offer(&states[0], &states[1])
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        Ok(match &self.best {
            Some((x, y)) => vec![x.clone(), y.clone()],
            None => vec![self.null_value.clone(), self.null_by.clone()],
        })
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        Ok(match &self.best {
            Some((x, _)) => x.clone(),
            None => self.null_value.clone(),
        })
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self) + self.best.as_ref().map_or(0, |(x, y)| x.size() + y.size())
    }
}
