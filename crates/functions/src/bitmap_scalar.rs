//! Scalar BITMAP functions with Doris semantics (`to_bitmap`, `bitmap_and`, `bitmap_count`, ...).
//!
//! NULL handling follows Doris's BE (`function_bitmap.cpp`, `function_bitmap_variadic.cpp`,
//! `function_bitmap_min_or_max.h`):
//! - `to_bitmap`, `bitmap_hash`, `bitmap_hash64` never return NULL: a NULL input, a negative id
//!   or a string that is not an unsigned 64-bit number gives the EMPTY bitmap (Doris docs:
//!   `bitmap_to_string(to_bitmap(-1))` is `''`).
//! - `bitmap_from_string` returns NULL for NULL or invalid input ("-1, 0" is invalid); empty
//!   pieces are skipped, so `''` is the empty bitmap.
//! - `bitmap_count(NULL)` is 0. `bitmap_and_count`, `bitmap_xor_count`, `bitmap_and_not_count`
//!   are 0 when any argument is NULL; `bitmap_or_count` skips NULL arguments (0 if all are NULL).
//! - `bitmap_or` skips NULL arguments and is NULL only when every argument is NULL;
//!   `bitmap_and`, `bitmap_xor`, `bitmap_not`/`bitmap_and_not`, `bitmap_contains`,
//!   `bitmap_has_any`, `bitmap_has_all`, `bitmap_remove` and `bitmap_to_string` are NULL when any
//!   argument is NULL.
//! - `bitmap_min`/`bitmap_max` return BIGINT, NULL for NULL or empty; ids above 2^63-1 wrap to
//!   negative as Doris's Int64 result does.
//! - `bitmap_contains(b, id)`/`bitmap_remove(b, id)` take a BIGINT; a negative id is looked up as
//!   its 64-bit pattern (Doris converts the BIGINT to uint64 implicitly).
//! - `bitmap_hash(x)` = MurmurHash3_x86_32(x as string, seed 104729); `bitmap_hash64(x)` = Doris's
//!   murmur_hash3_x64_64(x as string, seed 0). Both match Doris's documented examples.

use std::sync::Arc;

use arrow::array::{ArrayRef, BinaryBuilder, BooleanBuilder, Int64Builder, StringBuilder};
use arrow::datatypes::{DataType, FieldRef};
use basalt_common::bitmap_value::{parse_u64, BitmapValue, EMPTY_SERIALIZED};
use datafusion::common::{plan_err, Result, ScalarValue};
use datafusion::logical_expr::{
    ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
    Volatility,
};

use crate::murmur3::{murmur3_32, murmur3_x64_64};
use crate::sketch_fields::result_field;
use crate::util::{
    coerce_hash_input, coerce_id, coerce_sketch, decode_bitmap, expect_args, Bytes, Ids,
};
use basalt_common::SqlType;

/// Doris's seed for `bitmap_hash` (HashUtil::MURMUR3_32_SEED).
const MURMUR3_32_SEED: u32 = 104_729;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Op {
    ToBitmap,
    FromString,
    ToString,
    Hash32,
    Hash64,
    Empty,
    Count,
    And,
    Or,
    Xor,
    AndCount,
    OrCount,
    XorCount,
    AndNot,
    AndNotCount,
    Contains,
    Remove,
    HasAny,
    HasAll,
    Min,
    Max,
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct BitmapScalar {
    name: &'static str,
    aliases: Vec<String>,
    op: Op,
    signature: Signature,
}

fn udf(name: &'static str, aliases: &[&str], op: Op) -> ScalarUDF {
    let signature = if op == Op::Empty {
        Signature::nullary(Volatility::Immutable)
    } else {
        Signature::user_defined(Volatility::Immutable)
    };
    ScalarUDF::new_from_impl(BitmapScalar {
        name,
        aliases: aliases.iter().map(|s| s.to_string()).collect(),
        op,
        signature,
    })
}

/// Every scalar BITMAP function.
pub fn functions() -> Vec<ScalarUDF> {
    vec![
        udf("to_bitmap", &[], Op::ToBitmap),
        udf("bitmap_from_string", &[], Op::FromString),
        udf("bitmap_to_string", &[], Op::ToString),
        udf("bitmap_hash", &[], Op::Hash32),
        udf("bitmap_hash64", &[], Op::Hash64),
        udf("bitmap_empty", &[], Op::Empty),
        udf("bitmap_count", &[], Op::Count),
        udf("bitmap_and", &[], Op::And),
        udf("bitmap_or", &[], Op::Or),
        udf("bitmap_xor", &[], Op::Xor),
        udf("bitmap_and_count", &[], Op::AndCount),
        udf("bitmap_or_count", &[], Op::OrCount),
        udf("bitmap_xor_count", &[], Op::XorCount),
        udf("bitmap_not", &[], Op::AndNot),
        udf("bitmap_and_not", &["bitmap_andnot"], Op::AndNot),
        udf(
            "bitmap_and_not_count",
            &["bitmap_andnot_count"],
            Op::AndNotCount,
        ),
        udf("bitmap_contains", &[], Op::Contains),
        udf("bitmap_remove", &[], Op::Remove),
        udf("bitmap_has_any", &[], Op::HasAny),
        udf("bitmap_has_all", &[], Op::HasAll),
        udf("bitmap_min", &[], Op::Min),
        udf("bitmap_max", &[], Op::Max),
    ]
}

impl ScalarUDFImpl for BitmapScalar {
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
        let f = self.name;
        let bitmap = |dt: &DataType| coerce_sketch(f, "BITMAP", dt);
        match self.op {
            Op::Empty => {
                expect_args(f, types, 0, 0)?;
                Ok(vec![])
            }
            Op::ToBitmap => {
                expect_args(f, types, 1, 1)?;
                Ok(vec![match &types[0] {
                    DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => DataType::Utf8,
                    other => coerce_id(f, other)?,
                }])
            }
            Op::FromString => {
                expect_args(f, types, 1, 1)?;
                match &types[0] {
                    DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View | DataType::Null => {
                        Ok(vec![DataType::Utf8])
                    }
                    other => plan_err!("{f}: expected a string argument, got {other}"),
                }
            }
            Op::Hash32 | Op::Hash64 => {
                expect_args(f, types, 1, 1)?;
                Ok(vec![coerce_hash_input(&types[0])])
            }
            Op::ToString | Op::Count | Op::Min | Op::Max => {
                expect_args(f, types, 1, 1)?;
                Ok(vec![bitmap(&types[0])?])
            }
            Op::And | Op::Or | Op::Xor | Op::AndCount | Op::OrCount | Op::XorCount => {
                expect_args(f, types, 2, usize::MAX)?;
                types.iter().map(bitmap).collect()
            }
            Op::AndNot | Op::AndNotCount | Op::HasAny | Op::HasAll => {
                expect_args(f, types, 2, 2)?;
                types.iter().map(bitmap).collect()
            }
            Op::Contains | Op::Remove => {
                expect_args(f, types, 2, 2)?;
                Ok(vec![bitmap(&types[0])?, coerce_id(f, &types[1])?])
            }
        }
    }

    fn return_type(&self, _types: &[DataType]) -> Result<DataType> {
        Ok(match self.op {
            Op::ToString => DataType::Utf8,
            Op::Count | Op::AndCount | Op::OrCount | Op::XorCount | Op::AndNotCount => {
                DataType::Int64
            }
            Op::Min | Op::Max => DataType::Int64,
            Op::Contains | Op::HasAny | Op::HasAll => DataType::Boolean,
            Op::ToBitmap
            | Op::FromString
            | Op::Hash32
            | Op::Hash64
            | Op::Empty
            | Op::And
            | Op::Or
            | Op::Xor
            | Op::AndNot
            | Op::Remove => DataType::Binary,
        })
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let types: Vec<DataType> = args
            .arg_fields
            .iter()
            .map(|f| f.data_type().clone())
            .collect();
        let returns = self.return_type(&types)?;
        Ok(result_field(self.name, returns, SqlType::Bitmap, true))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        if self.op == Op::Empty {
            return Ok(ColumnarValue::Scalar(ScalarValue::Binary(Some(
                EMPTY_SERIALIZED.to_vec(),
            ))));
        }
        let arrays = ColumnarValue::values_to_arrays(&args.args)?;
        let rows = arrays.first().map_or(args.number_rows, |a| a.len());
        let out = self.eval(&arrays, rows)?;
        Ok(ColumnarValue::Array(out))
    }
}

impl BitmapScalar {
    fn eval(&self, arrays: &[ArrayRef], rows: usize) -> Result<ArrayRef> {
        let f = self.name;
        match self.op {
            Op::Empty => unreachable!("handled in invoke_with_args"),
            Op::ToBitmap => to_bitmap(f, &arrays[0], rows),
            Op::FromString => {
                let input = Bytes::new(f, &arrays[0])?;
                let mut out = BinaryBuilder::with_capacity(rows, rows * 5);
                for i in 0..rows {
                    let parsed = input
                        .get(i)
                        .and_then(|b| std::str::from_utf8(b).ok())
                        .and_then(BitmapValue::from_id_string);
                    match parsed {
                        Some(b) => out.append_value(b.serialize()),
                        None => out.append_null(),
                    }
                }
                Ok(Arc::new(out.finish()))
            }
            Op::Hash32 | Op::Hash64 => {
                let input = Bytes::new(f, &arrays[0])?;
                let mut out = BinaryBuilder::with_capacity(rows, rows * 9);
                let mut buf = Vec::with_capacity(9);
                for i in 0..rows {
                    match input.get(i) {
                        None => out.append_value(EMPTY_SERIALIZED),
                        Some(b) => {
                            let id = if self.op == Op::Hash32 {
                                murmur3_32(b, MURMUR3_32_SEED) as u64
                            } else {
                                murmur3_x64_64(b, 0)
                            };
                            buf.clear();
                            BitmapValue::serialize_single(id, &mut buf);
                            out.append_value(&buf);
                        }
                    }
                }
                Ok(Arc::new(out.finish()))
            }
            Op::ToString => {
                let input = Bytes::new(f, &arrays[0])?;
                let mut out = StringBuilder::with_capacity(rows, rows * 8);
                for i in 0..rows {
                    match input.get(i) {
                        Some(b) => out.append_value(decode_bitmap(f, b)?.to_id_string()),
                        None => out.append_null(),
                    }
                }
                Ok(Arc::new(out.finish()))
            }
            Op::Count | Op::Min | Op::Max => {
                let input = Bytes::new(f, &arrays[0])?;
                let mut out = Int64Builder::with_capacity(rows);
                for i in 0..rows {
                    let Some(b) = input.get(i) else {
                        out.append_option((self.op == Op::Count).then_some(0));
                        continue;
                    };
                    let bm = decode_bitmap(f, b)?;
                    out.append_option(match self.op {
                        Op::Count => Some(bm.len() as i64),
                        Op::Min => bm.min().map(|v| v as i64),
                        _ => bm.max().map(|v| v as i64),
                    });
                }
                Ok(Arc::new(out.finish()))
            }
            Op::And | Op::Or | Op::Xor | Op::AndCount | Op::OrCount | Op::XorCount => {
                self.variadic(arrays, rows)
            }
            Op::AndNot | Op::AndNotCount | Op::HasAny | Op::HasAll => {
                let (l, r) = (Bytes::new(f, &arrays[0])?, Bytes::new(f, &arrays[1])?);
                let mut bitmaps = BinaryBuilder::new();
                let mut counts = Int64Builder::with_capacity(rows);
                let mut bools = BooleanBuilder::with_capacity(rows);
                for i in 0..rows {
                    let (Some(a), Some(b)) = (l.get(i), r.get(i)) else {
                        match self.op {
                            Op::AndNot => bitmaps.append_null(),
                            Op::AndNotCount => counts.append_value(0),
                            _ => bools.append_null(),
                        }
                        continue;
                    };
                    let (mut a, b) = (decode_bitmap(f, a)?, decode_bitmap(f, b)?);
                    match self.op {
                        Op::AndNot => {
                            a.difference_with(&b);
                            bitmaps.append_value(a.serialize());
                        }
                        Op::AndNotCount => {
                            counts.append_value((a.len() - a.intersection_len(&b)) as i64)
                        }
                        Op::HasAny => bools.append_value(!a.is_disjoint(&b)),
                        _ => bools.append_value(a.is_superset(&b)),
                    }
                }
                Ok(match self.op {
                    Op::AndNot => Arc::new(bitmaps.finish()),
                    Op::AndNotCount => Arc::new(counts.finish()),
                    _ => Arc::new(bools.finish()),
                })
            }
            Op::Contains | Op::Remove => {
                let bitmaps_in = Bytes::new(f, &arrays[0])?;
                let ids = Ids::new(f, &arrays[1])?;
                let mut bools = BooleanBuilder::with_capacity(rows);
                let mut bitmaps = BinaryBuilder::new();
                for i in 0..rows {
                    let (Some(b), Some(id)) = (bitmaps_in.get(i), ids.get(i)) else {
                        if self.op == Op::Contains {
                            bools.append_null();
                        } else {
                            bitmaps.append_null();
                        }
                        continue;
                    };
                    let mut bm = decode_bitmap(f, b)?;
                    if self.op == Op::Contains {
                        bools.append_value(bm.contains(id.bits()));
                    } else {
                        bm.remove(id.bits());
                        bitmaps.append_value(bm.serialize());
                    }
                }
                Ok(if self.op == Op::Contains {
                    Arc::new(bools.finish())
                } else {
                    Arc::new(bitmaps.finish())
                })
            }
        }
    }

    /// bitmap_and/or/xor and their _count forms over two or more arguments.
    fn variadic(&self, arrays: &[ArrayRef], rows: usize) -> Result<ArrayRef> {
        let f = self.name;
        let cols = arrays
            .iter()
            .map(|a| Bytes::new(f, a))
            .collect::<Result<Vec<_>>>()?;
        let skips_nulls = matches!(self.op, Op::Or | Op::OrCount);
        let counts = matches!(self.op, Op::AndCount | Op::OrCount | Op::XorCount);
        let mut bitmaps = BinaryBuilder::new();
        let mut numbers = Int64Builder::with_capacity(rows);
        for i in 0..rows {
            let mut acc: Option<BitmapValue> = None;
            let mut null = false;
            for c in &cols {
                let Some(bytes) = c.get(i) else {
                    if skips_nulls {
                        continue;
                    }
                    null = true;
                    break;
                };
                match (&mut acc, self.op) {
                    (None, _) => acc = Some(decode_bitmap(f, bytes)?),
                    (Some(a), Op::Or | Op::OrCount) => a
                        .union_with_serialized(bytes)
                        .map_err(|e| crate::util::bad_value(f, "BITMAP", e))?,
                    (Some(a), Op::And | Op::AndCount) => {
                        a.intersect_with(&decode_bitmap(f, bytes)?)
                    }
                    (Some(a), _) => a.xor_with(&decode_bitmap(f, bytes)?),
                }
            }
            let result = if null { None } else { acc };
            if counts {
                numbers.append_value(result.map_or(0, |b| b.len() as i64));
            } else {
                match result {
                    Some(b) => bitmaps.append_value(b.serialize()),
                    None => bitmaps.append_null(),
                }
            }
        }
        Ok(if counts {
            Arc::new(numbers.finish())
        } else {
            Arc::new(bitmaps.finish())
        })
    }
}

fn to_bitmap(f: &str, input: &ArrayRef, rows: usize) -> Result<ArrayRef> {
    let mut out = BinaryBuilder::with_capacity(rows, rows * 5);
    let mut buf = Vec::with_capacity(9);
    let mut push = |id: Option<u64>| match id {
        Some(id) => {
            buf.clear();
            BitmapValue::serialize_single(id, &mut buf);
            out.append_value(&buf);
        }
        None => out.append_value(EMPTY_SERIALIZED),
    };
    if input.data_type() == &DataType::Utf8 {
        let strings = Bytes::new(f, input)?;
        for i in 0..rows {
            push(
                strings
                    .get(i)
                    .and_then(|b| std::str::from_utf8(b).ok())
                    .and_then(parse_u64),
            );
        }
    } else {
        let ids = Ids::new(f, input)?;
        for i in 0..rows {
            push(ids.get(i).and_then(|id| id.non_negative()));
        }
    }
    Ok(Arc::new(out.finish()))
}
