//! REPEAT, LPAD and RPAD as MySQL bounds them: a result longer than `max_allowed_packet`
//! (64 MiB) is NULL, computed from the arguments before any memory is spent, instead of an
//! allocation of gigabytes (`repeat('x', 2147483647)`). ARRAY_REPEAT is bounded the same way by
//! the bytes of its elements (`array_repeat(1, 2000000000)` would be 16 GB). DataFusion's
//! functions do the work for every other row.

use datafusion::arrow::array::{Array, ArrayRef, Int64Array};
use datafusion::arrow::compute::{cast, kernels::length::length};
use datafusion::arrow::datatypes::DataType;
use datafusion::arrow::datatypes::FieldRef;
use datafusion::common::{Result, ScalarValue};
use datafusion::logical_expr::{
    ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
};
use std::sync::Arc;

/// The longest string these functions return (MySQL's default `max_allowed_packet`).
pub const MAX_RESULT_BYTES: i64 = 64 << 20;

/// How a function's result length follows from its arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Size {
    /// `repeat(s, n)`: bytes of `s` times `n`.
    Repeat,
    /// `lpad(s, n[, pad])` / `rpad`: `n` characters.
    Pad,
    /// `array_repeat(x, n)`: `n` elements the size of `x`.
    Elements,
}

/// The bounded REPEAT, LPAD and RPAD.
pub fn functions() -> Vec<ScalarUDF> {
    use datafusion::functions::{string, unicode};
    use datafusion::functions_nested::repeat::array_repeat_udf;
    vec![
        bounded(string::repeat(), Size::Repeat),
        bounded(unicode::lpad(), Size::Pad),
        bounded(unicode::rpad(), Size::Pad),
        bounded(array_repeat_udf(), Size::Elements),
    ]
}

fn bounded(inner: Arc<ScalarUDF>, size: Size) -> ScalarUDF {
    ScalarUDF::new_from_impl(Bounded { inner, size })
}

#[derive(Debug)]
struct Bounded {
    inner: Arc<ScalarUDF>,
    size: Size,
}

impl PartialEq for Bounded {
    fn eq(&self, other: &Self) -> bool {
        self.inner.name() == other.inner.name() && self.size == other.size
    }
}

impl Eq for Bounded {}

impl std::hash::Hash for Bounded {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.inner.name().hash(state);
        self.size.hash(state);
    }
}

impl ScalarUDFImpl for Bounded {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn aliases(&self) -> &[String] {
        self.inner.aliases()
    }

    fn signature(&self) -> &Signature {
        self.inner.signature()
    }

    fn return_type(&self, args: &[DataType]) -> Result<DataType> {
        self.inner.return_type(args)
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        self.inner.return_field_from_args(args)
    }

    fn coerce_types(&self, args: &[DataType]) -> Result<Vec<DataType>> {
        self.inner.coerce_types(args)
    }

    fn invoke_with_args(&self, mut args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        if args.args.len() >= 2 {
            let rows = args.number_rows;
            let scalar = args
                .args
                .iter()
                .all(|a| matches!(a, ColumnarValue::Scalar(_)));
            let text = args.args[0].to_array(rows)?;
            let count = args.args[1].to_array(rows)?;
            let count_type = count.data_type().clone();
            let bounded = self.bound(&text, &count)?;
            let bounded = cast(&bounded, &count_type)?;
            args.args[1] = if scalar {
                ColumnarValue::Scalar(ScalarValue::try_from_array(&bounded, 0)?)
            } else {
                ColumnarValue::Array(bounded)
            };
        }
        self.inner.invoke_with_args(args)
    }
}

impl Bounded {
    /// The count argument with NULL wherever the result would pass [`MAX_RESULT_BYTES`].
    fn bound(&self, text: &ArrayRef, count: &ArrayRef) -> Result<ArrayRef> {
        let count = cast(count, &DataType::Int64)?;
        let count = count
            .as_any()
            .downcast_ref::<Int64Array>()
            .cloned()
            .unwrap_or_else(|| Int64Array::new_null(text.len()));
        let bytes: Option<Int64Array> = match self.size {
            Size::Repeat => {
                let lengths = cast(&length(text)?, &DataType::Int64)?;
                lengths.as_any().downcast_ref::<Int64Array>().cloned()
            }
            Size::Elements => Some(element_bytes(text)?),
            Size::Pad => None,
        };
        let out: Int64Array = (0..count.len())
            .map(|i| {
                if count.is_null(i) {
                    return None;
                }
                let n = count.value(i);
                if n < 0 {
                    // MySQL: LPAD/RPAD to a negative length is NULL, REPEAT a negative count ''.
                    return (self.size != Size::Pad).then_some(0);
                }
                let size = match &bytes {
                    Some(b) if b.is_valid(i) => b.value(i).saturating_mul(n),
                    Some(_) if self.size == Size::Elements => n,
                    Some(_) => 0,
                    None => n,
                };
                (size <= MAX_RESULT_BYTES).then_some(n)
            })
            .collect();
        Ok(Arc::new(out))
    }
}

/// The bytes one element of `values` takes in an array: its length for strings and binaries,
/// its width for fixed-width types, else the column's average per row (at least 1).
fn element_bytes(values: &ArrayRef) -> Result<Int64Array> {
    let t = values.data_type();
    if matches!(
        t,
        DataType::Utf8
            | DataType::LargeUtf8
            | DataType::Utf8View
            | DataType::Binary
            | DataType::LargeBinary
            | DataType::BinaryView
    ) {
        let lengths = cast(&length(values)?, &DataType::Int64)?;
        if let Some(lengths) = lengths.as_any().downcast_ref::<Int64Array>() {
            // An empty string still takes its offset.
            return Ok(lengths.iter().map(|l| l.map(|l| l.max(4))).collect());
        }
    }
    let width = t
        .primitive_width()
        .unwrap_or_else(|| (values.get_array_memory_size() / values.len().max(1)).max(1));
    Ok(Int64Array::from_value(width as i64, values.len()))
}
