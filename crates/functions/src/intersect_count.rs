//! `intersect_count(bitmap_col, filter_col, v1, v2, ...)`: the number of ids present, for every
//! listed filter value, in the union of the bitmaps of the rows whose `filter_col` equals that
//! value (Doris: `intersect_count(user_id, dt, 3, 4)` counts users seen on day 3 and day 4).
//!
//! Doris (`aggregate_function_orthogonal_bitmap`/`BitmapIntersect`) keeps one union per listed
//! value, starting empty; a value that matches no row therefore makes the result 0, and no rows at
//! all give 0. NULL bitmaps and NULL filter values never match. The filter values must be
//! constants; they and the filter column are coerced to a common comparable type.
//!
//! Doris's `orthogonal_bitmap_intersect(bitmap_col, filter_col, v1, ..)` is the same
//! intersection as a BITMAP (empty where the count is 0), and its
//! `orthogonal_bitmap_intersect_count` another name for the count.
//!
//! State: one Binary column per listed value (that value's serialized union so far).

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, RecordBatch};
use arrow::compute::kernels::cmp::eq;
use arrow::datatypes::{DataType, Field, FieldRef};
use basalt_common::bitmap_value::BitmapValue;
use datafusion::common::{plan_err, Result, ScalarValue};
use datafusion::logical_expr::binary::comparison_coercion;
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::utils::format_state_name;
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, ColumnarValue, Signature, Volatility,
};

use crate::sketch_fields::result_field;
use crate::util::{bad_value, coerce_sketch, expect_args, Bytes};

const NAME: &str = "intersect_count";
const BITMAP_NAME: &str = "orthogonal_bitmap_intersect";

#[derive(Debug, PartialEq, Eq, Hash)]
struct IntersectCount {
    signature: Signature,
    /// The intersection itself (`orthogonal_bitmap_intersect`) rather than its size.
    bitmap: bool,
    aliases: Vec<String>,
}

/// The `intersect_count` aggregate (also `orthogonal_bitmap_intersect_count`).
pub fn function() -> AggregateUDF {
    AggregateUDF::new_from_impl(IntersectCount {
        signature: Signature::user_defined(Volatility::Immutable),
        bitmap: false,
        aliases: vec!["orthogonal_bitmap_intersect_count".into()],
    })
}

/// The `orthogonal_bitmap_intersect` aggregate: the intersection as a BITMAP.
pub fn bitmap_function() -> AggregateUDF {
    AggregateUDF::new_from_impl(IntersectCount {
        signature: Signature::user_defined(Volatility::Immutable),
        bitmap: true,
        aliases: Vec::new(),
    })
}

impl AggregateUDFImpl for IntersectCount {
    fn name(&self) -> &str {
        if self.bitmap {
            BITMAP_NAME
        } else {
            NAME
        }
    }

    fn aliases(&self) -> &[String] {
        &self.aliases
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        expect_args(NAME, types, 3, usize::MAX)?;
        let mut common = types[1].clone();
        for t in &types[2..] {
            common = match comparison_coercion(&common, t) {
                Some(c) => c,
                None => {
                    return plan_err!(
                        "{NAME}: filter value of type {t} cannot be compared with {}",
                        types[1]
                    )
                }
            };
        }
        let mut out = vec![coerce_sketch(NAME, "BITMAP", &types[0])?];
        out.extend(std::iter::repeat_n(common, types.len() - 1));
        Ok(out)
    }

    fn return_type(&self, _types: &[DataType]) -> Result<DataType> {
        Ok(if self.bitmap {
            DataType::Binary
        } else {
            DataType::Int64
        })
    }

    fn return_field(&self, arg_fields: &[FieldRef]) -> Result<FieldRef> {
        let types: Vec<DataType> = arg_fields.iter().map(|f| f.data_type().clone()).collect();
        Ok(result_field(
            self.name(),
            self.return_type(&types)?,
            basalt_common::SqlType::Bitmap,
            false,
        ))
    }

    fn is_nullable(&self) -> bool {
        false
    }

    fn default_value(&self, _data_type: &DataType) -> Result<ScalarValue> {
        Ok(if self.bitmap {
            ScalarValue::Binary(Some(BitmapValue::new().serialize()))
        } else {
            ScalarValue::Int64(Some(0))
        })
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        let n = args.input_fields.len().saturating_sub(2);
        Ok((0..n)
            .map(|i| {
                Arc::new(Field::new(
                    format_state_name(args.name, &format!("bitmap_{i}")),
                    DataType::Binary,
                    true,
                ))
            })
            .collect())
    }

    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        let empty = RecordBatch::new_empty(Arc::new(args.schema.clone()));
        let mut filters = Vec::with_capacity(args.exprs.len().saturating_sub(2));
        for e in args.exprs.iter().skip(2) {
            match e.evaluate(&empty)? {
                ColumnarValue::Scalar(v) => filters.push(v),
                ColumnarValue::Array(_) => {
                    return plan_err!("{NAME}: filter values must be constants, got {e}")
                }
            }
        }
        let unions = vec![BitmapValue::new(); filters.len()];
        Ok(Box::new(IntersectCountAccumulator {
            filters,
            unions,
            bitmap: self.bitmap,
        }))
    }
}

#[derive(Debug)]
struct IntersectCountAccumulator {
    filters: Vec<ScalarValue>,
    unions: Vec<BitmapValue>,
    bitmap: bool,
}

impl Accumulator for IntersectCountAccumulator {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let bitmaps = Bytes::new(NAME, &values[0])?;
        let keys = &values[1];
        for (filter, union) in self.filters.iter().zip(self.unions.iter_mut()) {
            if filter.is_null() {
                continue;
            }
            let hits = eq(keys, &filter.to_scalar()?)?;
            for i in 0..hits.len() {
                if hits.is_valid(i) && hits.value(i) {
                    if let Some(b) = bitmaps.get(i) {
                        union
                            .union_with_serialized(b)
                            .map_err(|e| bad_value(NAME, "BITMAP", e))?;
                    }
                }
            }
        }
        Ok(())
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        for (state, union) in states.iter().zip(self.unions.iter_mut()) {
            let bytes = Bytes::new(NAME, state)?;
            for i in 0..state.len() {
                if let Some(b) = bytes.get(i) {
                    union
                        .union_with_serialized(b)
                        .map_err(|e| bad_value(NAME, "BITMAP", e))?;
                }
            }
        }
        Ok(())
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        Ok(self
            .unions
            .iter()
            .map(|u| ScalarValue::Binary(Some(u.serialize())))
            .collect())
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        let mut iter = self.unions.iter();
        let common = match iter.next() {
            None => BitmapValue::new(),
            Some(first) => {
                let mut acc = first.clone();
                for u in iter {
                    if acc.is_empty() {
                        break;
                    }
                    acc.intersect_with(u);
                }
                acc
            }
        };
        Ok(if self.bitmap {
            ScalarValue::Binary(Some(common.serialize()))
        } else {
            ScalarValue::Int64(Some(common.len() as i64))
        })
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self)
            + self.filters.iter().map(ScalarValue::size).sum::<usize>()
            + self
                .unions
                .iter()
                .map(BitmapValue::heap_size)
                .sum::<usize>()
    }
}
