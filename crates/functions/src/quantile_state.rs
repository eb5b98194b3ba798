//! Doris's QUANTILE_STATE functions (values in `basalt_common::quantile_value`'s form):
//! `to_quantile_state(x[, compression])` (a state of one number; NULL gives the empty state),
//! `quantile_state_empty()`, `quantile_percent(state, p)` (the value at fraction `p`, a
//! constant in 0..=1; NULL for a NULL or empty state) and the aggregate `quantile_union(state)`
//! (the states merged; the empty state for none).

use std::sync::Arc;

use crate::sketch_fields::result_field;
use crate::util::{bad_value, coerce_sketch, expect_args, Bytes};
use arrow::array::{Array, ArrayRef, AsArray, BinaryBuilder, Float64Builder};
use arrow::datatypes::{DataType, Field, FieldRef, Float64Type};
use basalt_common::quantile_value::{QuantileState, DEFAULT_COMPRESSION};
use basalt_common::SqlType;
use datafusion::common::{exec_err, Result, ScalarValue};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::utils::format_state_name;
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, ColumnarValue, ReturnFieldArgs,
    ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};

const WHAT: &str = "QUANTILE_STATE";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Op {
    ToState,
    Empty,
    Percent,
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct QuantileScalar {
    name: &'static str,
    op: Op,
    signature: Signature,
}

/// The scalar QUANTILE_STATE functions.
pub fn scalar_functions() -> Vec<ScalarUDF> {
    let f = |name, op| {
        let signature = match op {
            Op::Empty => Signature::nullary(Volatility::Immutable),
            _ => Signature::user_defined(Volatility::Immutable),
        };
        ScalarUDF::new_from_impl(QuantileScalar {
            name,
            op,
            signature,
        })
    };
    vec![
        f("to_quantile_state", Op::ToState),
        f("quantile_state_empty", Op::Empty),
        f("quantile_percent", Op::Percent),
    ]
}

impl ScalarUDFImpl for QuantileScalar {
    fn name(&self) -> &str {
        self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        match self.op {
            Op::Empty => {
                expect_args(self.name, types, 0, 0)?;
                Ok(vec![])
            }
            Op::ToState => {
                expect_args(self.name, types, 1, 2)?;
                Ok(vec![DataType::Float64; types.len()])
            }
            Op::Percent => {
                expect_args(self.name, types, 2, 2)?;
                Ok(vec![
                    coerce_sketch(self.name, WHAT, &types[0])?,
                    DataType::Float64,
                ])
            }
        }
    }

    fn return_type(&self, _types: &[DataType]) -> Result<DataType> {
        Ok(match self.op {
            Op::Percent => DataType::Float64,
            Op::ToState | Op::Empty => DataType::Binary,
        })
    }

    fn return_field_from_args(&self, _args: ReturnFieldArgs) -> Result<FieldRef> {
        let returns = self.return_type(&[])?;
        let nullable = self.op == Op::Percent;
        Ok(result_field(
            self.name,
            returns,
            SqlType::QuantileState,
            nullable,
        ))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        match self.op {
            Op::Empty => Ok(ColumnarValue::Scalar(ScalarValue::Binary(Some(
                QuantileState::empty(DEFAULT_COMPRESSION).serialize(),
            )))),
            Op::ToState => to_states(&args),
            Op::Percent => self.percentiles(&args),
        }
    }
}

/// `to_quantile_state(x[, compression])` row by row.
fn to_states(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let arrays = ColumnarValue::values_to_arrays(&args.args)?;
    let values = arrays[0].as_primitive::<Float64Type>();
    let compressions = arrays.get(1).map(|a| a.as_primitive::<Float64Type>());
    let mut out = BinaryBuilder::with_capacity(values.len(), values.len() * 13);
    for i in 0..values.len() {
        let compression = QuantileState::compression_of(
            compressions.and_then(|c| c.is_valid(i).then(|| c.value(i))),
        );
        let state = match values.is_valid(i) {
            true => QuantileState::of(values.value(i), compression),
            false => QuantileState::empty(compression),
        };
        out.append_value(state.serialize());
    }
    Ok(ColumnarValue::Array(Arc::new(out.finish())))
}

impl QuantileScalar {
    /// `quantile_percent(state, p)` row by row.
    fn percentiles(&self, args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
        let p = match &args.args[1] {
            ColumnarValue::Scalar(ScalarValue::Float64(Some(p))) => *p,
            ColumnarValue::Scalar(ScalarValue::Float64(None)) => {
                return Ok(ColumnarValue::Scalar(ScalarValue::Float64(None)))
            }
            _ => return exec_err!("{}: the percentage must be a constant", self.name),
        };
        if !(0.0..=1.0).contains(&p) {
            return exec_err!(
                "{}: the percentage {p} is not valid, it must be in the range [0, 1]",
                self.name
            );
        }
        let states = args.args[0].to_array(args.number_rows)?;
        let bytes = Bytes::new(self.name, &states)?;
        let mut out = Float64Builder::with_capacity(states.len());
        for i in 0..states.len() {
            match bytes.get(i) {
                Some(b) => {
                    let state =
                        QuantileState::deserialize(b).map_err(|e| bad_value(self.name, WHAT, e))?;
                    out.append_option(state.percentile(p));
                }
                None => out.append_null(),
            }
        }
        Ok(ColumnarValue::Array(Arc::new(out.finish())))
    }
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct QuantileUnion {
    signature: Signature,
}

/// The aggregate `quantile_union`.
pub fn aggregate_functions() -> Vec<AggregateUDF> {
    vec![AggregateUDF::new_from_impl(QuantileUnion {
        signature: Signature::user_defined(Volatility::Immutable),
    })]
}

impl AggregateUDFImpl for QuantileUnion {
    fn name(&self) -> &str {
        "quantile_union"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        expect_args(self.name(), types, 1, 1)?;
        Ok(vec![coerce_sketch(self.name(), WHAT, &types[0])?])
    }

    fn return_type(&self, _types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Binary)
    }

    fn return_field(&self, _arg_fields: &[FieldRef]) -> Result<FieldRef> {
        Ok(result_field(
            self.name(),
            DataType::Binary,
            SqlType::QuantileState,
            false,
        ))
    }

    fn is_nullable(&self) -> bool {
        false
    }

    fn default_value(&self, _data_type: &DataType) -> Result<ScalarValue> {
        Ok(ScalarValue::Binary(Some(
            QuantileState::empty(DEFAULT_COMPRESSION).serialize(),
        )))
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        Ok(vec![Arc::new(Field::new(
            format_state_name(args.name, "quantile_state"),
            DataType::Binary,
            true,
        ))])
    }

    fn accumulator(&self, _args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        Ok(Box::new(UnionAccumulator {
            state: QuantileState::empty(DEFAULT_COMPRESSION),
        }))
    }
}

#[derive(Debug)]
struct UnionAccumulator {
    state: QuantileState,
}

impl UnionAccumulator {
    fn merge_column(&mut self, column: &ArrayRef) -> Result<()> {
        let bytes = Bytes::new("quantile_union", column)?;
        for i in 0..column.len() {
            if let Some(b) = bytes.get(i) {
                let other = QuantileState::deserialize(b)
                    .map_err(|e| bad_value("quantile_union", WHAT, e))?;
                self.state.merge(&other);
            }
        }
        Ok(())
    }
}

impl Accumulator for UnionAccumulator {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        self.merge_column(&values[0])
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        self.merge_column(&states[0])
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        Ok(vec![self.evaluate()?])
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        Ok(ScalarValue::Binary(Some(self.state.serialize())))
    }

    fn size(&self) -> usize {
        self.state.memory_size()
    }
}
