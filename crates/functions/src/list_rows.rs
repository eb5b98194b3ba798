//! Shared plumbing for the ARRAY functions that build their result row by row: reading an
//! argument as a `List` (any list flavor, a NULL literal as an array of BIGINT), and
//! [`Picks`], which collects for every result row the positions of the input elements it keeps
//! and then gathers them into one `ListArray` (so element types, nested ones included, are
//! carried over without per-type code).

use datafusion::arrow::array::{Array, ArrayRef, AsArray, ListArray, UInt64Array};
use datafusion::arrow::buffer::{NullBuffer, OffsetBuffer};
use datafusion::arrow::compute::take;
use datafusion::arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::{exec_err, plan_err, Result};
use std::sync::Arc;

/// The type an ARRAY argument of `func` is read as: `List` of its element field; a NULL
/// literal as an array of BIGINT; anything else is an error naming `func`.
pub(crate) fn list_type(func: &str, dt: &DataType) -> Result<DataType> {
    match dt {
        DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) => {
            Ok(DataType::List(Arc::clone(f)))
        }
        DataType::Null => Ok(DataType::List(Arc::new(Field::new_list_field(
            DataType::Int64,
            true,
        )))),
        other => plan_err!("{func} takes an ARRAY, not {other}"),
    }
}

/// The element field of a list type.
pub(crate) fn element_field(func: &str, dt: &DataType) -> Result<FieldRef> {
    match dt {
        DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) => {
            Ok(Arc::clone(f))
        }
        DataType::Null => Ok(Arc::new(Field::new_list_field(DataType::Int64, true))),
        other => plan_err!("{func} takes an ARRAY, not {other}"),
    }
}

/// An argument coerced by [`list_type`] as a `ListArray`.
pub(crate) fn lists<'a>(func: &str, a: &'a ArrayRef) -> Result<&'a ListArray> {
    match a.as_list_opt::<i32>() {
        Some(l) => Ok(l),
        None => exec_err!("{func}: expected an ARRAY, got {}", a.data_type()),
    }
}

/// The element range of row `i` of `l`.
pub(crate) fn row_range(l: &ListArray, i: usize) -> std::ops::Range<usize> {
    let offsets = l.value_offsets();
    offsets[i] as usize..offsets[i + 1] as usize
}

/// Result rows as positions into one array of elements.
#[derive(Default)]
pub(crate) struct Picks {
    indices: Vec<u64>,
    lengths: Vec<usize>,
    valid: Vec<bool>,
}

impl Picks {
    pub(crate) fn with_rows(rows: usize) -> Self {
        Picks {
            indices: Vec::new(),
            lengths: Vec::with_capacity(rows),
            valid: Vec::with_capacity(rows),
        }
    }

    /// A row holding the elements at `positions`.
    pub(crate) fn push_row(&mut self, positions: impl IntoIterator<Item = usize>) {
        let before = self.indices.len();
        self.indices.extend(positions.into_iter().map(|p| p as u64));
        self.lengths.push(self.indices.len() - before);
        self.valid.push(true);
    }

    /// A NULL row.
    pub(crate) fn push_null(&mut self) {
        self.lengths.push(0);
        self.valid.push(false);
    }

    /// The rows as a `ListArray` of `field`, its elements gathered from `elements`.
    pub(crate) fn gather(self, field: FieldRef, elements: &ArrayRef) -> Result<ListArray> {
        if self.indices.len() > i32::MAX as usize {
            return exec_err!("array result too large: {} elements", self.indices.len());
        }
        let values = take(elements.as_ref(), &UInt64Array::from(self.indices), None)?;
        let nulls = NullBuffer::from(self.valid);
        let nulls = (nulls.null_count() > 0).then_some(nulls);
        Ok(ListArray::try_new(
            field,
            OffsetBuffer::from_lengths(self.lengths),
            values,
            nulls,
        )?)
    }
}

/// The elements of `arrays` (lists of one length per row) aligned across them: for each
/// array, its elements of the rows where none is NULL, in row order; and each row's length,
/// `None` where an array is NULL. Arrays of different lengths in a row are an error naming
/// `func`.
pub(crate) fn aligned_elements(
    func: &str,
    arrays: &[&ListArray],
    rows: usize,
) -> Result<(Vec<ArrayRef>, Vec<Option<usize>>)> {
    let mut picks: Vec<Vec<u64>> = vec![Vec::new(); arrays.len()];
    let mut lengths = Vec::with_capacity(rows);
    for i in 0..rows {
        if arrays.iter().any(|l| l.is_null(i)) {
            lengths.push(None);
            continue;
        }
        let n = arrays.first().map_or(0, |l| row_range(l, i).len());
        for (l, p) in arrays.iter().zip(picks.iter_mut()) {
            let r = row_range(l, i);
            if r.len() != n {
                return exec_err!(
                    "{func}: the arrays have different lengths ({n} and {})",
                    r.len()
                );
            }
            p.extend(r.map(|x| x as u64));
        }
        lengths.push(Some(n));
    }
    let columns = arrays
        .iter()
        .zip(picks)
        .map(|(l, p)| take(l.values().as_ref(), &UInt64Array::from(p), None))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    Ok((columns, lengths))
}

/// A list field holding `dt` elements.
pub(crate) fn item_field(dt: DataType) -> FieldRef {
    Arc::new(Field::new_list_field(dt, true))
}

/// How an ARRAY function reads its argument types (the types to coerce them to).
pub(crate) type Coerce = fn(&[DataType]) -> Result<Vec<DataType>>;
/// An ARRAY function's result type from its coerced argument types.
pub(crate) type Returns = fn(&[DataType]) -> Result<DataType>;
/// An ARRAY function's work: its arguments as arrays of `rows` rows, to the result.
pub(crate) type Work = fn(&[ArrayRef], usize) -> Result<ArrayRef>;

/// A scalar function over arrays whose whole definition is its name, how it coerces its
/// arguments, its result type and its work; the result is a scalar when every argument is.
pub(crate) fn array_function(
    name: &'static str,
    coerce: Coerce,
    returns: Returns,
    work: Work,
) -> datafusion::logical_expr::ScalarUDF {
    datafusion::logical_expr::ScalarUDF::new_from_impl(ArrayFunction {
        name,
        signature: datafusion::logical_expr::Signature::user_defined(
            datafusion::logical_expr::Volatility::Immutable,
        ),
        coerce,
        returns,
        work,
    })
}

#[derive(Debug)]
struct ArrayFunction {
    name: &'static str,
    signature: datafusion::logical_expr::Signature,
    coerce: Coerce,
    returns: Returns,
    work: Work,
}

// Known by name (function pointers do not compare reliably).
impl PartialEq for ArrayFunction {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Eq for ArrayFunction {}

impl std::hash::Hash for ArrayFunction {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.name.hash(state);
    }
}

impl datafusion::logical_expr::ScalarUDFImpl for ArrayFunction {
    fn name(&self) -> &str {
        self.name
    }

    fn signature(&self) -> &datafusion::logical_expr::Signature {
        &self.signature
    }

    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        (self.coerce)(types)
    }

    fn return_type(&self, types: &[DataType]) -> Result<DataType> {
        (self.returns)(types)
    }

    fn invoke_with_args(
        &self,
        args: datafusion::logical_expr::ScalarFunctionArgs,
    ) -> Result<datafusion::logical_expr::ColumnarValue> {
        let (arrays, scalar) = crate::util::arguments(&args)?;
        // All-scalar arguments come as one-row arrays (and no arguments as one row).
        let rows = arrays.first().map_or(1, |a| a.len());
        let out = (self.work)(&arrays, rows)?;
        crate::util::output(out, scalar)
    }
}
