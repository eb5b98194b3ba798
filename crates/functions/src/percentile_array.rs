//! `percentile_array(expr, [p1, p2, ..])`: Doris's exact percentiles of a group at several
//! levels at once, an ARRAY<DOUBLE> in the order of the levels (each as `percentile` computes
//! it). NULLs are skipped; no value gives an empty array (as Doris); the levels must be a constant array of numbers
//! in [0, 1].

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, Float64Array, ListArray};
use arrow::buffer::{OffsetBuffer, ScalarBuffer};
use arrow::datatypes::{DataType, Field, FieldRef, Float64Type};
use datafusion::common::{exec_err, plan_err, Result, ScalarValue};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::utils::format_state_name;
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, ColumnarValue, Signature, Volatility,
};

use crate::percentile::{exact, list_values};

const NAME: &str = "percentile_array";

#[derive(Debug, PartialEq, Eq, Hash)]
struct PercentileArray {
    signature: Signature,
}

/// The `percentile_array` aggregate.
pub fn function() -> AggregateUDF {
    AggregateUDF::new_from_impl(PercentileArray {
        signature: Signature::user_defined(Volatility::Immutable),
    })
}

fn doubles() -> DataType {
    DataType::List(Arc::new(Field::new_list_field(DataType::Float64, true)))
}

impl AggregateUDFImpl for PercentileArray {
    fn name(&self) -> &str {
        NAME
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        crate::util::expect_args(NAME, types, 2, 2)?;
        if !(types[0].is_numeric() || types[0].is_null()) {
            return plan_err!("{NAME}: expected a number, got {}", types[0]);
        }
        match &types[1] {
            DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _)
                if f.data_type().is_numeric() || f.data_type().is_null() =>
            {
                Ok(vec![DataType::Float64, doubles()])
            }
            other => plan_err!("{NAME}: the levels must be an array of numbers, got {other}"),
        }
    }

    fn return_type(&self, _types: &[DataType]) -> Result<DataType> {
        Ok(doubles())
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        Ok(vec![Arc::new(Field::new(
            format_state_name(args.name, "values"),
            doubles(),
            true,
        ))])
    }

    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        if args.is_distinct {
            return plan_err!("{NAME}(DISTINCT ...) is not supported");
        }
        Ok(Box::new(PercentileArrayAccumulator {
            levels: levels(&args)?,
            values: Vec::new(),
        }))
    }
}

/// The constant levels of the second argument.
fn levels(args: &AccumulatorArgs) -> Result<Vec<f64>> {
    let Some(expr) = args.exprs.get(1) else {
        return plan_err!("{NAME} takes 2 arguments");
    };
    let empty = arrow::array::RecordBatch::new_empty(Arc::new(args.schema.clone()));
    let list = match expr.evaluate(&empty) {
        Ok(ColumnarValue::Scalar(ScalarValue::List(list))) if list.len() == 1 => list,
        _ => return plan_err!("{NAME}: the levels must be a constant array"),
    };
    if list.is_null(0) {
        return plan_err!("{NAME}: the levels must not be NULL");
    }
    let values = list.value(0);
    let Some(levels) = values.as_primitive_opt::<Float64Type>() else {
        return plan_err!("{NAME}: the levels must be numbers");
    };
    let mut out = Vec::with_capacity(levels.len());
    for p in levels.iter() {
        match p {
            Some(p) if (0.0..=1.0).contains(&p) => out.push(p),
            Some(p) => return plan_err!("{NAME}: a level must be between 0 and 1, got {p}"),
            None => return plan_err!("{NAME}: a level must not be NULL"),
        }
    }
    Ok(out)
}

#[derive(Debug)]
struct PercentileArrayAccumulator {
    levels: Vec<f64>,
    values: Vec<f64>,
}

impl Accumulator for PercentileArrayAccumulator {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let Some(xs) = values[0].as_primitive_opt::<Float64Type>() else {
            return exec_err!("{NAME}: expected DOUBLE values");
        };
        self.values.extend(xs.iter().flatten());
        Ok(())
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let Some(list) = states[0].as_list_opt::<i32>() else {
            return exec_err!("{NAME}: unexpected partial state");
        };
        for row in 0..list.len() {
            self.values.extend(list_values(list, row)?);
        }
        Ok(())
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        Ok(vec![one_list(self.values.clone().into_iter().map(Some))])
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        if self.values.is_empty() {
            return Ok(one_list(std::iter::empty()));
        }
        let mut values = self.values.clone();
        let levels = self.levels.clone();
        Ok(one_list(levels.into_iter().map(|p| exact(&mut values, p))))
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self) + (self.values.capacity() + self.levels.capacity()) * 8
    }
}

/// A one-row list of doubles.
fn one_list(values: impl Iterator<Item = Option<f64>>) -> ScalarValue {
    let values: Float64Array = values.collect();
    let len = values.len() as i32;
    ScalarValue::List(Arc::new(ListArray::new(
        Arc::new(Field::new_list_field(DataType::Float64, true)),
        OffsetBuffer::new(ScalarBuffer::from(vec![0, len])),
        Arc::new(values),
        None,
    )))
}
