//! HLL functions with Doris semantics: scalars `hll_hash`, `hll_empty`, `hll_cardinality` and
//! aggregates `hll_union_agg` (BIGINT estimate) and `hll_union` / `hll_raw_agg` (the merged HLL).
//!
//! Doris (`function_hll.cpp`, `aggregate_function_hll_union_agg.h`): `hll_hash` never returns
//! NULL (a NULL input gives the empty HLL) and hashes its argument's string form;
//! `hll_cardinality(NULL)` is 0; the aggregates skip NULLs and give 0 / the empty HLL when they
//! saw nothing. Basalt hashes with xxh3-64 (see `basalt_common::hll_value`), so HLL bytes are
//! Basalt's own, not Doris's.
//!
//! The aggregates keep one `HllValue` per group in a [`GroupsAccumulator`]; the intermediate
//! state is the serialized HLL (Binary).

use std::sync::Arc;

use crate::sketch_fields::result_field;
use basalt_common::SqlType;

use arrow::array::{Array, ArrayRef, BinaryBuilder, BooleanArray, Int64Builder};
use arrow::datatypes::{DataType, Field, FieldRef};
use basalt_common::hll_value::HllValue;
use datafusion::common::{Result, ScalarValue};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::utils::format_state_name;
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, ColumnarValue, EmitTo, GroupsAccumulator,
    ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};

use crate::util::{bad_value, coerce_hash_input, coerce_sketch, decode_hll, expect_args, Bytes};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum ScalarOp {
    Hash,
    Empty,
    Cardinality,
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct HllScalar {
    name: &'static str,
    op: ScalarOp,
    signature: Signature,
}

/// The scalar HLL functions.
pub fn scalar_functions() -> Vec<ScalarUDF> {
    let f = |name, op| {
        let signature = if op == ScalarOp::Empty {
            Signature::nullary(Volatility::Immutable)
        } else {
            Signature::user_defined(Volatility::Immutable)
        };
        ScalarUDF::new_from_impl(HllScalar {
            name,
            op,
            signature,
        })
    };
    vec![
        f("hll_hash", ScalarOp::Hash),
        f("hll_empty", ScalarOp::Empty),
        f("hll_cardinality", ScalarOp::Cardinality),
    ]
}

impl ScalarUDFImpl for HllScalar {
    fn name(&self) -> &str {
        self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        match self.op {
            ScalarOp::Empty => {
                expect_args(self.name, types, 0, 0)?;
                Ok(vec![])
            }
            ScalarOp::Hash => {
                expect_args(self.name, types, 1, 1)?;
                Ok(vec![coerce_hash_input(&types[0])])
            }
            ScalarOp::Cardinality => {
                expect_args(self.name, types, 1, 1)?;
                Ok(vec![coerce_sketch(self.name, "HLL", &types[0])?])
            }
        }
    }

    fn return_type(&self, _types: &[DataType]) -> Result<DataType> {
        Ok(match self.op {
            ScalarOp::Cardinality => DataType::Int64,
            ScalarOp::Hash | ScalarOp::Empty => DataType::Binary,
        })
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let types: Vec<DataType> = args
            .arg_fields
            .iter()
            .map(|f| f.data_type().clone())
            .collect();
        let returns = self.return_type(&types)?;
        Ok(result_field(self.name, returns, SqlType::Hll, true))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        if self.op == ScalarOp::Empty {
            return Ok(ColumnarValue::Scalar(ScalarValue::Binary(Some(
                HllValue::new().serialize(),
            ))));
        }
        let arrays = ColumnarValue::values_to_arrays(&args.args)?;
        let input = Bytes::new(self.name, &arrays[0])?;
        let rows = arrays[0].len();
        if self.op == ScalarOp::Cardinality {
            let mut out = Int64Builder::with_capacity(rows);
            for i in 0..rows {
                let n = match input.get(i) {
                    Some(b) => decode_hll(self.name, b)?.cardinality() as i64,
                    None => 0,
                };
                out.append_value(n);
            }
            return Ok(ColumnarValue::Array(Arc::new(out.finish())));
        }
        let mut out = BinaryBuilder::with_capacity(rows, rows * 10);
        for i in 0..rows {
            let mut h = HllValue::new();
            if let Some(b) = input.get(i) {
                h.insert_hash(HllValue::hash_bytes(b));
            }
            out.append_value(h.serialize());
        }
        Ok(ColumnarValue::Array(Arc::new(out.finish())))
    }
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct HllAgg {
    name: &'static str,
    aliases: Vec<String>,
    /// `hll_union_agg` returns the estimate; `hll_union` the HLL.
    counts: bool,
    signature: Signature,
}

/// The HLL aggregates.
pub fn aggregate_functions() -> Vec<AggregateUDF> {
    let f = |name, aliases: &[&str], counts| {
        AggregateUDF::new_from_impl(HllAgg {
            name,
            aliases: aliases.iter().map(|s| s.to_string()).collect(),
            counts,
            signature: Signature::user_defined(Volatility::Immutable),
        })
    };
    vec![
        f("hll_union_agg", &[], true),
        f("hll_union", &["hll_raw_agg"], false),
    ]
}

impl AggregateUDFImpl for HllAgg {
    fn name(&self) -> &str {
        self.name
    }

    fn aliases(&self) -> &[String] {
        &self.aliases
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        expect_args(self.name, types, 1, 1)?;
        Ok(vec![coerce_sketch(self.name, "HLL", &types[0])?])
    }

    fn return_type(&self, _types: &[DataType]) -> Result<DataType> {
        Ok(if self.counts {
            DataType::Int64
        } else {
            DataType::Binary
        })
    }

    fn return_field(&self, arg_fields: &[FieldRef]) -> Result<FieldRef> {
        let types: Vec<DataType> = arg_fields.iter().map(|f| f.data_type().clone()).collect();
        let returns = self.return_type(&types)?;
        Ok(result_field(self.name, returns, SqlType::Hll, false))
    }

    fn is_nullable(&self) -> bool {
        false
    }

    fn default_value(&self, _data_type: &DataType) -> Result<ScalarValue> {
        Ok(final_value(self.counts, &HllValue::new()))
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        Ok(vec![Arc::new(Field::new(
            format_state_name(args.name, "hll"),
            DataType::Binary,
            true,
        ))])
    }

    fn accumulator(&self, _args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        Ok(Box::new(HllAccumulator {
            name: self.name,
            counts: self.counts,
            hll: HllValue::new(),
        }))
    }

    fn groups_accumulator_supported(&self, _args: AccumulatorArgs) -> bool {
        true
    }

    fn create_groups_accumulator(
        &self,
        _args: AccumulatorArgs,
    ) -> Result<Box<dyn GroupsAccumulator>> {
        Ok(Box::new(HllGroupsAccumulator {
            name: self.name,
            counts: self.counts,
            states: Vec::new(),
            heap: 0,
        }))
    }
}

fn final_value(counts: bool, h: &HllValue) -> ScalarValue {
    if counts {
        ScalarValue::Int64(Some(h.cardinality() as i64))
    } else {
        ScalarValue::Binary(Some(h.serialize()))
    }
}

fn merge_column(name: &str, h: &mut HllValue, col: &ArrayRef) -> Result<()> {
    let bytes = Bytes::new(name, col)?;
    for i in 0..col.len() {
        if let Some(b) = bytes.get(i) {
            h.merge_serialized(b)
                .map_err(|e| bad_value(name, "HLL", e))?;
        }
    }
    Ok(())
}

#[derive(Debug)]
struct HllAccumulator {
    name: &'static str,
    counts: bool,
    hll: HllValue,
}

impl Accumulator for HllAccumulator {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        merge_column(self.name, &mut self.hll, &values[0])
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        merge_column(self.name, &mut self.hll, &states[0])
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        Ok(vec![ScalarValue::Binary(Some(self.hll.serialize()))])
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        Ok(final_value(self.counts, &self.hll))
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self) + self.hll.heap_size()
    }
}

struct HllGroupsAccumulator {
    name: &'static str,
    counts: bool,
    states: Vec<HllValue>,
    /// Sum of the groups' heap sizes.
    heap: usize,
}

impl HllGroupsAccumulator {
    fn fold(
        &mut self,
        col: &ArrayRef,
        group_indices: &[usize],
        filter: Option<&BooleanArray>,
        total_num_groups: usize,
    ) -> Result<()> {
        self.states.resize_with(total_num_groups, HllValue::new);
        let bytes = Bytes::new(self.name, col)?;
        for (i, &g) in group_indices.iter().enumerate() {
            if filter.is_some_and(|f| !(f.is_valid(i) && f.value(i))) {
                continue;
            }
            if let Some(b) = bytes.get(i) {
                let h = &mut self.states[g];
                let before = h.heap_size();
                h.merge_serialized(b)
                    .map_err(|e| bad_value(self.name, "HLL", e))?;
                self.heap = self.heap + h.heap_size() - before;
            }
        }
        Ok(())
    }

    fn take(&mut self, emit_to: EmitTo) -> Vec<HllValue> {
        let taken = emit_to.take_needed(&mut self.states);
        self.heap -= taken.iter().map(HllValue::heap_size).sum::<usize>();
        taken
    }
}

impl GroupsAccumulator for HllGroupsAccumulator {
    fn update_batch(
        &mut self,
        values: &[ArrayRef],
        group_indices: &[usize],
        opt_filter: Option<&BooleanArray>,
        total_num_groups: usize,
    ) -> Result<()> {
        self.fold(&values[0], group_indices, opt_filter, total_num_groups)
    }

    fn merge_batch(
        &mut self,
        values: &[ArrayRef],
        group_indices: &[usize],
        total_num_groups: usize,
    ) -> Result<()> {
        self.fold(&values[0], group_indices, None, total_num_groups)
    }

    fn evaluate(&mut self, emit_to: EmitTo) -> Result<ArrayRef> {
        let states = self.take(emit_to);
        if self.counts {
            let mut out = Int64Builder::with_capacity(states.len());
            for h in &states {
                out.append_value(h.cardinality() as i64);
            }
            return Ok(Arc::new(out.finish()));
        }
        let mut out = BinaryBuilder::with_capacity(states.len(), states.len() * 16);
        for h in &states {
            out.append_value(h.serialize());
        }
        Ok(Arc::new(out.finish()))
    }

    fn state(&mut self, emit_to: EmitTo) -> Result<Vec<ArrayRef>> {
        let states = self.take(emit_to);
        let mut out = BinaryBuilder::with_capacity(states.len(), states.len() * 16);
        for h in &states {
            out.append_value(h.serialize());
        }
        Ok(vec![Arc::new(out.finish())])
    }

    fn convert_to_state(
        &self,
        values: &[ArrayRef],
        opt_filter: Option<&BooleanArray>,
    ) -> Result<Vec<ArrayRef>> {
        let input = &values[0];
        let bytes = Bytes::new(self.name, input)?;
        let rows = input.len();
        let mut out = BinaryBuilder::with_capacity(rows, rows * 16);
        for i in 0..rows {
            let keep = opt_filter.is_none_or(|f| f.is_valid(i) && f.value(i));
            match bytes.get(i).filter(|_| keep) {
                Some(b) => out.append_value(b),
                None => out.append_null(),
            }
        }
        Ok(vec![Arc::new(out.finish())])
    }

    fn size(&self) -> usize {
        self.heap + self.states.capacity() * std::mem::size_of::<HllValue>()
    }
}
