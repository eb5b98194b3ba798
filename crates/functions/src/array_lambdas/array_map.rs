//! Doris's `array_map(lambda, a1, .., an)`: the lambda applied to the elements of the arrays at
//! each position. One lambda parameter per array; all arrays of a row have one length (an error
//! otherwise); a row where any array is NULL is NULL. The body is evaluated once per batch,
//! vectorized, over the elements of all non-NULL rows laid end to end; outer columns it names
//! (captures) are repeated once per element of their row; results are cut back per row.

use datafusion::arrow::array::{Array, ArrayRef, AsArray, ListArray, UInt32Array};
use datafusion::arrow::buffer::{NullBuffer, OffsetBuffer};
use datafusion::arrow::compute::take;
use datafusion::arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::{exec_err, plan_err, Result};
use datafusion::logical_expr::{
    ColumnarValue, HigherOrderFunctionArgs, HigherOrderReturnFieldArgs, HigherOrderSignature,
    HigherOrderUDF, HigherOrderUDFImpl, LambdaArgument, LambdaParametersProgress, ValueOrLambda,
    Volatility,
};
use std::sync::Arc;

pub const NAME: &str = "array_map";

#[derive(Debug, PartialEq, Eq, Hash)]
struct ArrayMap {
    signature: HigherOrderSignature,
}

pub fn function() -> Arc<HigherOrderUDF> {
    Arc::new(HigherOrderUDF::new_from_impl(ArrayMap {
        signature: HigherOrderSignature::user_defined(Volatility::Immutable),
    }))
}

fn as_list_type(data_type: &DataType) -> Result<DataType> {
    match data_type {
        DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) => {
            Ok(DataType::new_list(f.data_type().clone(), true))
        }
        DataType::Null => Ok(DataType::new_list(DataType::Null, true)),
        other => plan_err!("{NAME}: the arguments after the lambda must be ARRAYs, not {other}"),
    }
}

fn element_field(field: &FieldRef) -> Result<FieldRef> {
    match field.data_type() {
        DataType::List(f) => Ok(Arc::clone(f)),
        other => plan_err!("{NAME}: expected an ARRAY, not {other}"),
    }
}

/// One lambda first, then at least one array.
fn check_shape<V, L>(args: &[ValueOrLambda<V, L>]) -> Result<()> {
    let lambdas = args
        .iter()
        .filter(|a| matches!(a, ValueOrLambda::Lambda(_)))
        .count();
    if !matches!(args.first(), Some(ValueOrLambda::Lambda(_))) || lambdas != 1 {
        return plan_err!("{NAME} takes a lambda as its first argument, then arrays");
    }
    if args.len() < 2 {
        return plan_err!("{NAME} takes a lambda and at least one array");
    }
    Ok(())
}

impl HigherOrderUDFImpl for ArrayMap {
    fn name(&self) -> &str {
        NAME
    }
    fn signature(&self) -> &HigherOrderSignature {
        &self.signature
    }
    fn coerce_value_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        arg_types.iter().map(as_list_type).collect()
    }
    fn lambda_parameters(
        &self,
        _step: usize,
        fields: &[ValueOrLambda<FieldRef, Option<FieldRef>>],
    ) -> Result<LambdaParametersProgress> {
        check_shape(fields)?;
        let params = fields[1..]
            .iter()
            .map(|f| match f {
                ValueOrLambda::Value(list) => element_field(list),
                ValueOrLambda::Lambda(_) => plan_err!("{NAME} takes one lambda"),
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(LambdaParametersProgress::Complete(vec![params]))
    }
    fn return_field_from_args(&self, args: HigherOrderReturnFieldArgs) -> Result<FieldRef> {
        check_shape(args.arg_fields)?;
        let ValueOrLambda::Lambda(body) = &args.arg_fields[0] else {
            return plan_err!("{NAME} takes a lambda as its first argument");
        };
        Ok(Arc::new(Field::new(
            NAME,
            DataType::new_list(body.data_type().clone(), true),
            true,
        )))
    }
    fn invoke_with_args(&self, args: HigherOrderFunctionArgs) -> Result<ColumnarValue> {
        let rows = args.number_rows;
        let mut lambda = None;
        let mut lists = Vec::new();
        for arg in &args.args {
            match arg {
                ValueOrLambda::Lambda(l) if lambda.is_none() => lambda = Some(l),
                ValueOrLambda::Lambda(_) => return exec_err!("{NAME} takes one lambda"),
                ValueOrLambda::Value(v) => lists.push(v.to_array(rows)?),
            }
        }
        let Some(lambda) = lambda else {
            return exec_err!("{NAME} takes a lambda as its first argument");
        };
        let element_type = match args.return_field.data_type() {
            DataType::List(f) => f.data_type().clone(),
            other => return exec_err!("{NAME}: unexpected result type {other}"),
        };
        Ok(ColumnarValue::Array(Arc::new(map_lists(
            lambda,
            &lists,
            rows,
            &element_type,
        )?)))
    }
}

/// Per row its length (0 when NULL) and validity; per array the positions of the elements of
/// the non-NULL rows end to end; per such element its row.
struct Layout {
    lengths: Vec<usize>,
    valid: Vec<bool>,
    positions: Vec<UInt32Array>,
    row_of_element: UInt32Array,
}

fn layout(lists: &[&ListArray], rows: usize) -> Result<Layout> {
    let mut lengths = Vec::with_capacity(rows);
    let mut valid = Vec::with_capacity(rows);
    let mut positions: Vec<Vec<u32>> = vec![Vec::new(); lists.len()];
    let mut row_of_element = Vec::new();
    for row in 0..rows {
        if lists.iter().any(|l| l.is_null(row)) {
            lengths.push(0);
            valid.push(false);
            continue;
        }
        let length = lists[0].value_length(row) as usize;
        if let Some(other) = lists
            .iter()
            .find(|l| l.value_length(row) as usize != length)
        {
            return exec_err!(
                "{NAME}: the arrays of a row must have one length, got {length} and {}",
                other.value_length(row)
            );
        }
        for (list, out) in lists.iter().zip(positions.iter_mut()) {
            let start = list.value_offsets()[row] as usize;
            for i in start..start + length {
                out.push(index_u32(i)?);
            }
        }
        row_of_element.extend(std::iter::repeat_n(index_u32(row)?, length));
        lengths.push(length);
        valid.push(true);
    }
    Ok(Layout {
        lengths,
        valid,
        positions: positions.into_iter().map(UInt32Array::from).collect(),
        row_of_element: UInt32Array::from(row_of_element),
    })
}

fn index_u32(i: usize) -> Result<u32> {
    match u32::try_from(i) {
        Ok(i) => Ok(i),
        Err(_) => exec_err!("{NAME}: too many elements in one batch"),
    }
}

fn map_lists(
    lambda: &LambdaArgument,
    lists: &[ArrayRef],
    rows: usize,
    element_type: &DataType,
) -> Result<ListArray> {
    let lists = lists
        .iter()
        .map(|l| match l.as_list_opt::<i32>() {
            Some(l) => Ok(l),
            None => exec_err!("{NAME}: expected arrays, got {}", l.data_type()),
        })
        .collect::<Result<Vec<_>>>()?;
    let layout = layout(&lists, rows)?;
    let elements = lists
        .iter()
        .zip(&layout.positions)
        .map(|(list, at)| take(list.values().as_ref(), at, None))
        .collect::<Result<Vec<_>, _>>()?;
    let total = layout.row_of_element.len();
    let parameters: Vec<Box<dyn Fn() -> Result<ArrayRef>>> = elements
        .iter()
        .map(|e| {
            let e = Arc::clone(e);
            Box::new(move || Ok(Arc::clone(&e))) as Box<dyn Fn() -> Result<ArrayRef>>
        })
        .collect();
    let parameters: Vec<&dyn Fn() -> Result<ArrayRef>> =
        parameters.iter().map(|p| p.as_ref()).collect();
    let spread = |captured: &[ArrayRef]| -> Result<Vec<ArrayRef>> {
        captured
            .iter()
            .map(|c| Ok(take(c.as_ref(), &layout.row_of_element, None)?))
            .collect()
    };
    let results = lambda.evaluate(&parameters, spread)?.to_array(total)?;
    let results = if results.data_type() == element_type {
        results
    } else {
        datafusion::arrow::compute::cast(&results, element_type)?
    };
    Ok(ListArray::try_new(
        Arc::new(Field::new_list_field(element_type.clone(), true)),
        OffsetBuffer::from_lengths(layout.lengths),
        results,
        Some(NullBuffer::from(layout.valid)),
    )?)
}
