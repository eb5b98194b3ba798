//! Doris's `struct_element(s, field)`: the field of a STRUCT named by a constant string, or by
//! its 1-based position as a constant integer. The field must exist; the result is NULL where
//! the struct is.

use datafusion::arrow::array::{Array, ArrayRef, AsArray};
use datafusion::arrow::buffer::NullBuffer;
use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Fields};
use datafusion::common::{exec_err, plan_err, Result, ScalarValue};
use datafusion::logical_expr::{
    ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
    Volatility,
};
use std::sync::Arc;

pub fn function() -> ScalarUDF {
    ScalarUDF::new_from_impl(StructElement {
        signature: Signature::any(2, Volatility::Immutable),
    })
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct StructElement {
    signature: Signature,
}

/// The position of the field `key` names among `fields`.
fn position(fields: &Fields, key: &ScalarValue) -> Result<usize> {
    let found = match key {
        ScalarValue::Utf8(Some(name))
        | ScalarValue::LargeUtf8(Some(name))
        | ScalarValue::Utf8View(Some(name)) => fields.iter().position(|f| f.name() == name),
        ScalarValue::Int8(_)
        | ScalarValue::Int16(_)
        | ScalarValue::Int32(_)
        | ScalarValue::Int64(_)
        | ScalarValue::UInt8(_)
        | ScalarValue::UInt16(_)
        | ScalarValue::UInt32(_)
        | ScalarValue::UInt64(_) => {
            let n = key.cast_to(&DataType::Int64)?;
            match n {
                ScalarValue::Int64(Some(n)) if n >= 1 && (n as usize) <= fields.len() => {
                    Some(n as usize - 1)
                }
                _ => None,
            }
        }
        other => {
            return plan_err!(
                "struct_element: the field must be a constant name or position, not {other}"
            )
        }
    };
    match found {
        Some(i) => Ok(i),
        None => plan_err!("struct_element: the struct has no field {key}"),
    }
}

impl ScalarUDFImpl for StructElement {
    fn name(&self) -> &str {
        "struct_element"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        plan_err!("struct_element: the result type comes from the field")
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let DataType::Struct(fields) = args.arg_fields[0].data_type() else {
            return plan_err!(
                "struct_element takes a STRUCT, not {}",
                args.arg_fields[0].data_type()
            );
        };
        let Some(Some(key)) = args.scalar_arguments.get(1) else {
            return plan_err!("struct_element: the field must be a constant name or position");
        };
        let field = &fields[position(fields, key)?];
        Ok(Arc::new(Field::new(
            self.name(),
            field.data_type().clone(),
            true,
        )))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let ColumnarValue::Scalar(key) = &args.args[1] else {
            return exec_err!("struct_element: the field must be a constant name or position");
        };
        let (arrays, scalar) = crate::util::arguments(&args)?;
        let structs = arrays[0].as_struct();
        let i = position(structs.fields(), key)?;
        let column = structs.column(i);
        // A NULL struct's fields are NULL too.
        let nulls = NullBuffer::union(structs.nulls(), column.nulls());
        let data = column.to_data().into_builder().nulls(nulls).build()?;
        let out: ArrayRef = datafusion::arrow::array::make_array(data);
        crate::util::output(out, scalar)
    }
}
