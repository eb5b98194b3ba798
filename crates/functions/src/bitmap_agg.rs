//! BITMAP aggregates: `bitmap_union`, `bitmap_union_count`, `bitmap_intersect`,
//! `group_bitmap_xor` and `bitmap_union_int`, each with a per-row [`Accumulator`] and a
//! [`GroupsAccumulator`] that keeps one `Option<BitmapValue>` per group (no boxed accumulator per
//! group).
//!
//! Semantics (Doris `aggregate_function_bitmap.h`): NULL inputs are skipped; the result is never
//! NULL (no input gives the empty bitmap, or 0 for the counts). `bitmap_intersect` and
//! `group_bitmap_xor` start from the first value seen. `bitmap_union_int(int)` counts distinct
//! integers (a negative value counts as its 64-bit pattern, as Doris adds it to a bitmap).
//!
//! The intermediate state is one nullable Binary column: the serialized bitmap, NULL while the
//! group has seen no value. Keeping "no value yet" apart from "empty" is what makes a multi-phase
//! `bitmap_intersect` correct when one partition had no rows for a group.

use std::sync::Arc;

use crate::sketch_fields::result_field;
use basalt_common::SqlType;

use arrow::array::{Array, ArrayRef, BinaryBuilder, BooleanArray, Int64Array};
use arrow::datatypes::{DataType, Field, FieldRef};
use basalt_common::bitmap_value::{BitmapValue, EMPTY_SERIALIZED};
use datafusion::common::{not_impl_err, Result, ScalarValue};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::utils::format_state_name;
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, EmitTo, GroupsAccumulator, Signature, Volatility,
};

use crate::util::{bad_value, coerce_id, coerce_sketch, decode_bitmap, expect_args, Bytes, Ids};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    Union,
    UnionCount,
    Intersect,
    Xor,
    UnionInt,
}

impl Kind {
    fn counts(self) -> bool {
        matches!(self, Kind::UnionCount | Kind::UnionInt)
    }

    fn takes_ints(self) -> bool {
        self == Kind::UnionInt
    }
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct BitmapAgg {
    name: &'static str,
    kind: Kind,
    signature: Signature,
}

fn udaf(name: &'static str, kind: Kind) -> AggregateUDF {
    AggregateUDF::new_from_impl(BitmapAgg {
        name,
        kind,
        signature: Signature::user_defined(Volatility::Immutable),
    })
}

/// Every BITMAP aggregate except `intersect_count`.
pub fn functions() -> Vec<AggregateUDF> {
    vec![
        udaf("bitmap_union", Kind::Union),
        udaf("bitmap_union_count", Kind::UnionCount),
        udaf("bitmap_intersect", Kind::Intersect),
        udaf("group_bitmap_xor", Kind::Xor),
        udaf("bitmap_union_int", Kind::UnionInt),
    ]
}

impl AggregateUDFImpl for BitmapAgg {
    fn name(&self) -> &str {
        self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        expect_args(self.name, types, 1, 1)?;
        Ok(vec![if self.kind.takes_ints() {
            coerce_id(self.name, &types[0])?
        } else {
            coerce_sketch(self.name, "BITMAP", &types[0])?
        }])
    }

    fn return_type(&self, _types: &[DataType]) -> Result<DataType> {
        Ok(if self.kind.counts() {
            DataType::Int64
        } else {
            DataType::Binary
        })
    }

    fn return_field(&self, arg_fields: &[FieldRef]) -> Result<FieldRef> {
        let types: Vec<DataType> = arg_fields.iter().map(|f| f.data_type().clone()).collect();
        let returns = self.return_type(&types)?;
        Ok(result_field(self.name, returns, SqlType::Bitmap, false))
    }

    fn is_nullable(&self) -> bool {
        false
    }

    fn default_value(&self, _data_type: &DataType) -> Result<ScalarValue> {
        Ok(empty_result(self.kind))
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        Ok(vec![Arc::new(Field::new(
            format_state_name(args.name, "bitmap"),
            DataType::Binary,
            true,
        ))])
    }

    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        reject_distinct_xor(self.name, self.kind, &args)?;
        Ok(Box::new(BitmapAccumulator {
            name: self.name,
            kind: self.kind,
            state: None,
        }))
    }

    fn groups_accumulator_supported(&self, _args: AccumulatorArgs) -> bool {
        true
    }

    fn create_groups_accumulator(
        &self,
        args: AccumulatorArgs,
    ) -> Result<Box<dyn GroupsAccumulator>> {
        reject_distinct_xor(self.name, self.kind, &args)?;
        Ok(Box::new(BitmapGroupsAccumulator {
            name: self.name,
            kind: self.kind,
            states: Vec::new(),
            sizes: Vec::new(),
            marks: Vec::new(),
            touched: Vec::new(),
            heap: 0,
        }))
    }
}

/// DISTINCT changes nothing for unions and intersections (they are idempotent) but would for
/// XOR, which does not implement it.
fn reject_distinct_xor(name: &str, kind: Kind, args: &AccumulatorArgs) -> Result<()> {
    if args.is_distinct && kind == Kind::Xor {
        return not_impl_err!("{name}(DISTINCT ...) is not supported");
    }
    Ok(())
}

fn empty_result(kind: Kind) -> ScalarValue {
    if kind.counts() {
        ScalarValue::Int64(Some(0))
    } else {
        ScalarValue::Binary(Some(EMPTY_SERIALIZED.to_vec()))
    }
}

/// Folds one serialized bitmap into a group's state with the aggregate's set operation.
fn combine(name: &str, kind: Kind, state: &mut Option<BitmapValue>, bytes: &[u8]) -> Result<()> {
    match (state.as_mut(), kind) {
        (None, Kind::Intersect | Kind::Xor) => *state = Some(decode_bitmap(name, bytes)?),
        (Some(s), Kind::Intersect) => s.intersect_with(&decode_bitmap(name, bytes)?),
        (Some(s), Kind::Xor) => s.xor_with(&decode_bitmap(name, bytes)?),
        (_, Kind::Union | Kind::UnionCount | Kind::UnionInt) => state
            .get_or_insert_with(BitmapValue::new)
            .union_with_serialized(bytes)
            .map_err(|e| bad_value(name, "BITMAP", e))?,
    }
    Ok(())
}

fn final_value(kind: Kind, state: Option<&BitmapValue>) -> ScalarValue {
    match (state, kind.counts()) {
        (None, _) => empty_result(kind),
        (Some(b), true) => ScalarValue::Int64(Some(b.len() as i64)),
        (Some(b), false) => ScalarValue::Binary(Some(b.serialize())),
    }
}

#[inline]
fn selected(filter: Option<&BooleanArray>, i: usize) -> bool {
    filter.is_none_or(|f| f.is_valid(i) && f.value(i))
}

/// One group's state, for aggregation without GROUP BY (and window frames).
#[derive(Debug)]
struct BitmapAccumulator {
    name: &'static str,
    kind: Kind,
    state: Option<BitmapValue>,
}

impl Accumulator for BitmapAccumulator {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let input = &values[0];
        if self.kind.takes_ints() {
            let ids = Ids::new(self.name, input)?;
            for i in 0..input.len() {
                if let Some(id) = ids.get(i) {
                    self.state
                        .get_or_insert_with(BitmapValue::new)
                        .insert(id.bits());
                }
            }
            return Ok(());
        }
        let bytes = Bytes::new(self.name, input)?;
        for i in 0..input.len() {
            if let Some(b) = bytes.get(i) {
                combine(self.name, self.kind, &mut self.state, b)?;
            }
        }
        Ok(())
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let bytes = Bytes::new(self.name, &states[0])?;
        for i in 0..states[0].len() {
            if let Some(b) = bytes.get(i) {
                combine(self.name, self.kind, &mut self.state, b)?;
            }
        }
        Ok(())
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        Ok(vec![ScalarValue::Binary(
            self.state.as_ref().map(BitmapValue::serialize),
        )])
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        Ok(final_value(self.kind, self.state.as_ref()))
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self) + self.state.as_ref().map_or(0, BitmapValue::heap_size)
    }
}

/// All groups' states in one vector.
struct BitmapGroupsAccumulator {
    name: &'static str,
    kind: Kind,
    states: Vec<Option<BitmapValue>>,
    /// Heap bytes of each group's bitmap as of the end of the last batch.
    sizes: Vec<usize>,
    /// Whether a group was touched by the batch being processed.
    marks: Vec<bool>,
    touched: Vec<usize>,
    /// Sum of `sizes`.
    heap: usize,
}

impl BitmapGroupsAccumulator {
    fn resize(&mut self, total_num_groups: usize) {
        self.states.resize(total_num_groups, None);
        self.sizes.resize(total_num_groups, 0);
        self.marks.resize(total_num_groups, false);
    }

    #[inline]
    fn touch(&mut self, g: usize) {
        if !self.marks[g] {
            self.marks[g] = true;
            self.touched.push(g);
        }
    }

    /// Re-measures the groups the last batch changed.
    fn settle_sizes(&mut self) {
        for &g in &self.touched {
            let now = self.states[g].as_ref().map_or(0, BitmapValue::heap_size);
            self.heap = self.heap + now - self.sizes[g];
            self.sizes[g] = now;
            self.marks[g] = false;
        }
        self.touched.clear();
    }

    /// Folds serialized bitmaps (input values or partial states) into their groups.
    fn fold_serialized(
        &mut self,
        input: &ArrayRef,
        group_indices: &[usize],
        filter: Option<&BooleanArray>,
    ) -> Result<()> {
        let bytes = Bytes::new(self.name, input)?;
        for (i, &g) in group_indices.iter().enumerate() {
            if !selected(filter, i) {
                continue;
            }
            if let Some(b) = bytes.get(i) {
                combine(self.name, self.kind, &mut self.states[g], b)?;
                self.touch(g);
            }
        }
        self.settle_sizes();
        Ok(())
    }

    fn take(&mut self, emit_to: EmitTo) -> Vec<Option<BitmapValue>> {
        let sizes = emit_to.take_needed(&mut self.sizes);
        self.heap -= sizes.iter().sum::<usize>();
        emit_to.take_needed(&mut self.marks);
        emit_to.take_needed(&mut self.states)
    }
}

impl GroupsAccumulator for BitmapGroupsAccumulator {
    fn update_batch(
        &mut self,
        values: &[ArrayRef],
        group_indices: &[usize],
        opt_filter: Option<&BooleanArray>,
        total_num_groups: usize,
    ) -> Result<()> {
        self.resize(total_num_groups);
        if !self.kind.takes_ints() {
            return self.fold_serialized(&values[0], group_indices, opt_filter);
        }
        let ids = Ids::new(self.name, &values[0])?;
        for (i, &g) in group_indices.iter().enumerate() {
            if !selected(opt_filter, i) {
                continue;
            }
            if let Some(id) = ids.get(i) {
                self.states[g]
                    .get_or_insert_with(BitmapValue::new)
                    .insert(id.bits());
                self.touch(g);
            }
        }
        self.settle_sizes();
        Ok(())
    }

    fn merge_batch(
        &mut self,
        values: &[ArrayRef],
        group_indices: &[usize],
        total_num_groups: usize,
    ) -> Result<()> {
        self.resize(total_num_groups);
        self.fold_serialized(&values[0], group_indices, None)
    }

    fn evaluate(&mut self, emit_to: EmitTo) -> Result<ArrayRef> {
        let states = self.take(emit_to);
        if self.kind.counts() {
            let counts: Int64Array = states
                .iter()
                .map(|s| Some(s.as_ref().map_or(0, |b| b.len() as i64)))
                .collect();
            return Ok(Arc::new(counts));
        }
        let mut out = BinaryBuilder::with_capacity(states.len(), states.len() * 8);
        let mut buf = Vec::new();
        for s in &states {
            match s {
                Some(b) => {
                    buf.clear();
                    b.serialize_into(&mut buf);
                    out.append_value(&buf);
                }
                None => out.append_value(EMPTY_SERIALIZED),
            }
        }
        Ok(Arc::new(out.finish()))
    }

    fn state(&mut self, emit_to: EmitTo) -> Result<Vec<ArrayRef>> {
        let states = self.take(emit_to);
        let mut out = BinaryBuilder::with_capacity(states.len(), states.len() * 8);
        let mut buf = Vec::new();
        for s in &states {
            match s {
                Some(b) => {
                    buf.clear();
                    b.serialize_into(&mut buf);
                    out.append_value(&buf);
                }
                None => out.append_null(),
            }
        }
        Ok(vec![Arc::new(out.finish())])
    }

    fn convert_to_state(
        &self,
        values: &[ArrayRef],
        opt_filter: Option<&BooleanArray>,
    ) -> Result<Vec<ArrayRef>> {
        let input = &values[0];
        let rows = input.len();
        let mut out = BinaryBuilder::with_capacity(rows, rows * 5);
        if self.kind.takes_ints() {
            let ids = Ids::new(self.name, input)?;
            let mut buf = Vec::with_capacity(9);
            for i in 0..rows {
                match ids.get(i).filter(|_| selected(opt_filter, i)) {
                    Some(id) => {
                        buf.clear();
                        BitmapValue::serialize_single(id.bits(), &mut buf);
                        out.append_value(&buf);
                    }
                    None => out.append_null(),
                }
            }
        } else {
            let bytes = Bytes::new(self.name, input)?;
            for i in 0..rows {
                match bytes.get(i).filter(|_| selected(opt_filter, i)) {
                    // passed through as is; a malformed value fails when merged
                    Some(b) => out.append_value(b),
                    None => out.append_null(),
                }
            }
        }
        Ok(vec![Arc::new(out.finish())])
    }

    fn size(&self) -> usize {
        self.heap
            + self.states.capacity() * std::mem::size_of::<Option<BitmapValue>>()
            + self.sizes.capacity() * std::mem::size_of::<usize>()
            + self.marks.capacity()
            + self.touched.capacity() * std::mem::size_of::<usize>()
    }
}
