//! Shared plumbing for the UDFs: argument type coercion rules (which SQL types a BITMAP/HLL,
//! id or hash-input argument accepts), uniform access to binary and integer columns, decoding
//! serialized sketches into DataFusion errors instead of panics, and [`plain_function`] for
//! the small functions whose whole definition is a name, a signature, a result type and a body.

use arrow::array::{
    Array, ArrayRef, AsArray, BinaryArray, BinaryViewArray, Int64Array, LargeBinaryArray,
    StringArray, UInt64Array,
};
use arrow::datatypes::DataType;
use basalt_common::bitmap_value::BitmapValue;
use basalt_common::hll_value::HllValue;
use datafusion::common::{exec_err, plan_err, DataFusionError, Result};

/// A BITMAP or HLL argument: any binary type (or NULL) is read as `Binary`.
pub(crate) fn coerce_sketch(func: &str, what: &str, dt: &DataType) -> Result<DataType> {
    match dt {
        DataType::Binary
        | DataType::LargeBinary
        | DataType::BinaryView
        | DataType::FixedSizeBinary(_)
        | DataType::Null => Ok(DataType::Binary),
        other => plan_err!("{func}: expected a {what} argument, got {other}"),
    }
}

/// An id argument (`to_bitmap`, `bitmap_contains`): integers widen to Int64, UInt64 stays.
pub(crate) fn coerce_id(func: &str, dt: &DataType) -> Result<DataType> {
    match dt {
        DataType::UInt64 => Ok(DataType::UInt64),
        DataType::Int8
        | DataType::Int16
        | DataType::Int32
        | DataType::Int64
        | DataType::UInt8
        | DataType::UInt16
        | DataType::UInt32
        | DataType::Boolean
        | DataType::Null => Ok(DataType::Int64),
        other => plan_err!("{func}: expected an integer argument, got {other}"),
    }
}

/// A value to hash (`bitmap_hash`, `hll_hash`): binary stays bytes, everything else is hashed
/// as its string form (Doris casts the argument to VARCHAR).
pub(crate) fn coerce_hash_input(dt: &DataType) -> DataType {
    match dt {
        DataType::Binary
        | DataType::LargeBinary
        | DataType::BinaryView
        | DataType::FixedSizeBinary(_) => DataType::Binary,
        _ => DataType::Utf8,
    }
}

/// State fields of an aggregate whose partial state is a few DOUBLEs, one per named part.
pub(crate) fn double_state_fields(
    aggregate: &str,
    parts: &[&str],
) -> Vec<datafusion::arrow::datatypes::FieldRef> {
    parts
        .iter()
        .map(|part| {
            std::sync::Arc::new(datafusion::arrow::datatypes::Field::new(
                datafusion::logical_expr::utils::format_state_name(aggregate, part),
                DataType::Float64,
                true,
            ))
        })
        .collect()
}

/// The coercion of an aggregate of one number read as a DOUBLE (NULL too, and a string, which
/// [`crate::ImplicitCasts`] reads as MySQL does before type coercion); else an error naming
/// `func`.
pub(crate) fn one_number_as_double(func: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    expect_args(func, types, 1, 1)?;
    let text = matches!(
        types[0],
        DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8
    );
    if !(types[0].is_numeric() || types[0].is_null() || text) {
        return plan_err!("{func}: expected a number, got {}", types[0]);
    }
    Ok(vec![DataType::Float64])
}

/// Checks the argument count of a user-defined signature.
pub(crate) fn expect_args(func: &str, types: &[DataType], min: usize, max: usize) -> Result<()> {
    let n = types.len();
    if n < min || n > max {
        let want = match (min, max) {
            (a, b) if a == b => format!("{a}"),
            (a, usize::MAX) => format!("at least {a}"),
            (a, b) => format!("{a} to {b}"),
        };
        return plan_err!("{func} takes {want} arguments, got {n}");
    }
    Ok(())
}

/// Read access to a column of bytes, whatever its binary (or string) flavor.
pub(crate) enum Bytes<'a> {
    Binary(&'a BinaryArray),
    Large(&'a LargeBinaryArray),
    View(&'a BinaryViewArray),
    Utf8(&'a StringArray),
    Null,
}

impl<'a> Bytes<'a> {
    pub(crate) fn new(func: &str, a: &'a ArrayRef) -> Result<Self> {
        Ok(match a.data_type() {
            DataType::Binary => Bytes::Binary(a.as_binary::<i32>()),
            DataType::LargeBinary => Bytes::Large(a.as_binary::<i64>()),
            DataType::BinaryView => Bytes::View(a.as_binary_view()),
            DataType::Utf8 => Bytes::Utf8(a.as_string::<i32>()),
            DataType::Null => Bytes::Null,
            other => return exec_err!("{func}: unexpected argument type {other}"),
        })
    }

    #[inline]
    pub(crate) fn get(&self, i: usize) -> Option<&'a [u8]> {
        match self {
            Bytes::Binary(a) => a.is_valid(i).then(|| a.value(i)),
            Bytes::Large(a) => a.is_valid(i).then(|| a.value(i)),
            Bytes::View(a) => a.is_valid(i).then(|| a.value(i)),
            Bytes::Utf8(a) => a.is_valid(i).then(|| a.value(i).as_bytes()),
            Bytes::Null => None,
        }
    }
}

/// Read access to an id column (Int64 or UInt64 after coercion); ids are u64 bit patterns.
pub(crate) enum Ids<'a> {
    Signed(&'a Int64Array),
    Unsigned(&'a UInt64Array),
    Null,
}

impl<'a> Ids<'a> {
    pub(crate) fn new(func: &str, a: &'a ArrayRef) -> Result<Self> {
        Ok(match a.data_type() {
            DataType::Int64 => Ids::Signed(a.as_primitive()),
            DataType::UInt64 => Ids::Unsigned(a.as_primitive()),
            DataType::Null => Ids::Null,
            other => return exec_err!("{func}: unexpected id type {other}"),
        })
    }

    /// The value as a signed number (None for NULL); UInt64 values above i64::MAX stay positive
    /// through `as_u64`.
    #[inline]
    pub(crate) fn get(&self, i: usize) -> Option<Id> {
        match self {
            Ids::Signed(a) => a.is_valid(i).then(|| Id::Signed(a.value(i))),
            Ids::Unsigned(a) => a.is_valid(i).then(|| Id::Unsigned(a.value(i))),
            Ids::Null => None,
        }
    }
}

#[derive(Clone, Copy)]
pub(crate) enum Id {
    Signed(i64),
    Unsigned(u64),
}

impl Id {
    /// The id as an unsigned value, or None when negative.
    pub(crate) fn non_negative(self) -> Option<u64> {
        match self {
            Id::Signed(v) => u64::try_from(v).ok(),
            Id::Unsigned(v) => Some(v),
        }
    }

    /// The 64-bit pattern (a negative BIGINT reinterpreted, as Doris's implicit conversion).
    pub(crate) fn bits(self) -> u64 {
        match self {
            Id::Signed(v) => v as u64,
            Id::Unsigned(v) => v,
        }
    }
}

pub(crate) fn decode_bitmap(func: &str, bytes: &[u8]) -> Result<BitmapValue> {
    BitmapValue::deserialize(bytes).map_err(|e| bad_value(func, "BITMAP", e))
}

pub(crate) fn decode_hll(func: &str, bytes: &[u8]) -> Result<HllValue> {
    HllValue::deserialize(bytes).map_err(|e| bad_value(func, "HLL", e))
}

pub(crate) fn bad_value(func: &str, what: &str, e: String) -> DataFusionError {
    DataFusionError::Execution(format!("{func}: malformed {what} value: {e}"))
}

/// A scalar function's arguments as arrays, and whether all of them were scalars (then the
/// result is one too, see [`output`]).
pub(crate) fn arguments(
    args: &datafusion::logical_expr::ScalarFunctionArgs,
) -> Result<(Vec<ArrayRef>, bool)> {
    use datafusion::logical_expr::ColumnarValue;
    let scalar = args
        .args
        .iter()
        .all(|a| matches!(a, ColumnarValue::Scalar(_)));
    Ok((ColumnarValue::values_to_arrays(&args.args)?, scalar))
}

/// A scalar function's result: one value when its arguments were all scalars.
pub(crate) fn output(
    out: ArrayRef,
    scalar: bool,
) -> Result<datafusion::logical_expr::ColumnarValue> {
    use datafusion::logical_expr::ColumnarValue;
    if scalar && out.len() == 1 {
        return datafusion::common::ScalarValue::try_from_array(&out, 0).map(ColumnarValue::Scalar);
    }
    Ok(ColumnarValue::Array(out))
}

/// The body of a [`plain_function`].
pub(crate) type Body = fn(
    &datafusion::logical_expr::ScalarFunctionArgs,
) -> Result<datafusion::logical_expr::ColumnarValue>;

/// A scalar function of one result type whose work is `body`.
pub(crate) fn plain_function(
    name: &'static str,
    signature: datafusion::logical_expr::Signature,
    returns: DataType,
    body: Body,
) -> datafusion::logical_expr::ScalarUDF {
    datafusion::logical_expr::ScalarUDF::new_from_impl(PlainFunction {
        name,
        signature,
        returns,
        sketch: None,
        body,
    })
}

/// A scalar function whose work is `body` and whose result is a `sketch` (BITMAP or HLL) value,
/// marked so on its result field.
pub(crate) fn sketch_function(
    name: &'static str,
    signature: datafusion::logical_expr::Signature,
    sketch: basalt_common::SqlType,
    body: Body,
) -> datafusion::logical_expr::ScalarUDF {
    datafusion::logical_expr::ScalarUDF::new_from_impl(PlainFunction {
        name,
        signature,
        returns: sketch.arrow_type(),
        sketch: Some(sketch),
        body,
    })
}

#[derive(Debug)]
struct PlainFunction {
    name: &'static str,
    signature: datafusion::logical_expr::Signature,
    returns: DataType,
    /// The sketch kind a function making a BITMAP/HLL marks its result field with.
    sketch: Option<basalt_common::SqlType>,
    body: Body,
}

// A function is known by its name, signature and result type (function pointers do not compare
// reliably).
impl PartialEq for PlainFunction {
    fn eq(&self, other: &Self) -> bool {
        (self.name, &self.signature, &self.returns, &self.sketch)
            == (other.name, &other.signature, &other.returns, &other.sketch)
    }
}

impl Eq for PlainFunction {}

impl std::hash::Hash for PlainFunction {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        (self.name, &self.signature, &self.returns).hash(state);
    }
}

impl datafusion::logical_expr::ScalarUDFImpl for PlainFunction {
    fn name(&self) -> &str {
        self.name
    }

    fn signature(&self) -> &datafusion::logical_expr::Signature {
        &self.signature
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(self.returns.clone())
    }

    fn return_field_from_args(
        &self,
        _args: datafusion::logical_expr::ReturnFieldArgs,
    ) -> Result<arrow::datatypes::FieldRef> {
        Ok(std::sync::Arc::new(match &self.sketch {
            Some(sketch) => sketch.arrow_field(self.name, true),
            None => arrow::datatypes::Field::new(self.name, self.returns.clone(), true),
        }))
    }

    fn invoke_with_args(
        &self,
        args: datafusion::logical_expr::ScalarFunctionArgs,
    ) -> Result<datafusion::logical_expr::ColumnarValue> {
        (self.body)(&args)
    }
}
