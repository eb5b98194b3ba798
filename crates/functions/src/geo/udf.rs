//! The plumbing every ST_* function shares: what each argument may be (a GEOMETRY, a number,
//! WKT text or WKB bytes) and how it is coerced, reading arguments row by row (a constant
//! shape is decoded once), and the DataFusion [`ScalarUDFImpl`] that ties a name, its aliases,
//! its argument kinds, its result type and its body together.

use super::binary;
use super::shape::Shape;
use datafusion::arrow::array::{Array, ArrayRef, AsArray};
use datafusion::arrow::datatypes::{DataType, Float64Type};
use datafusion::common::{plan_err, Result, ScalarValue};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};

/// What an argument of an ST_* function is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Arg {
    /// A GEOMETRY value (binary; text is taken as its bytes).
    Geo,
    /// A number, read as DOUBLE.
    Num,
    /// Well-known text.
    Text,
    /// Well-known binary, as bytes or hex text.
    Bytes,
}

/// The body of a function: its arguments and the number of rows to produce.
pub(crate) type Body = fn(&Args) -> Result<ArrayRef>;

pub(crate) fn function(
    name: &'static str,
    aliases: &[&str],
    args: &'static [Arg],
    returns: DataType,
    body: Body,
) -> ScalarUDF {
    ScalarUDF::new_from_impl(GeoFunction {
        name,
        aliases: aliases.iter().map(|a| a.to_string()).collect(),
        args,
        returns,
        body,
        signature: Signature::user_defined(Volatility::Immutable),
    })
}

#[derive(Debug)]
struct GeoFunction {
    name: &'static str,
    aliases: Vec<String>,
    args: &'static [Arg],
    returns: DataType,
    body: Body,
    signature: Signature,
}

// Known by name, aliases, arguments and result (function pointers do not compare reliably).
impl PartialEq for GeoFunction {
    fn eq(&self, o: &Self) -> bool {
        (self.name, &self.aliases, self.args, &self.returns)
            == (o.name, &o.aliases, o.args, &o.returns)
    }
}

impl Eq for GeoFunction {}

impl std::hash::Hash for GeoFunction {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        (self.name, &self.aliases, self.args, &self.returns).hash(state);
    }
}

fn coerce(func: &str, pos: usize, kind: Arg, t: &DataType) -> Result<DataType> {
    let text = matches!(t, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View);
    let bytes = matches!(
        t,
        DataType::Binary
            | DataType::LargeBinary
            | DataType::BinaryView
            | DataType::FixedSizeBinary(_)
    );
    let ok = match kind {
        Arg::Geo | Arg::Bytes => bytes || text || t.is_null(),
        Arg::Num => t.is_numeric() || text || t.is_null(),
        Arg::Text => text || t.is_null(),
    };
    if !ok {
        let what = match kind {
            Arg::Geo => "a GEOMETRY value",
            Arg::Num => "a number",
            Arg::Text => "well-known text",
            Arg::Bytes => "well-known binary",
        };
        return plan_err!("{func}: argument {} must be {what}, got {t}", pos + 1);
    }
    Ok(match kind {
        Arg::Geo | Arg::Bytes => DataType::Binary,
        Arg::Num => DataType::Float64,
        Arg::Text => DataType::Utf8,
    })
}

impl ScalarUDFImpl for GeoFunction {
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
        if types.len() != self.args.len() {
            return plan_err!(
                "{} takes {} arguments, got {}",
                self.name,
                self.args.len(),
                types.len()
            );
        }
        types
            .iter()
            .zip(self.args)
            .enumerate()
            .map(|(i, (t, k))| coerce(self.name, i, *k, t))
            .collect()
    }

    fn return_type(&self, _types: &[DataType]) -> Result<DataType> {
        Ok(self.returns.clone())
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let scalar = args
            .args
            .iter()
            .all(|a| matches!(a, ColumnarValue::Scalar(_)));
        let rows = if scalar { 1 } else { args.number_rows };
        let a = Args {
            values: args.args,
            rows,
        };
        let out = (self.body)(&a)?;
        if scalar && out.len() == 1 {
            return ScalarValue::try_from_array(&out, 0).map(ColumnarValue::Scalar);
        }
        Ok(ColumnarValue::Array(out))
    }
}

/// A function's arguments (already coerced) and how many rows to produce.
pub(crate) struct Args {
    values: Vec<ColumnarValue>,
    pub(crate) rows: usize,
}

/// A column read row by row, a constant read once.
pub(crate) enum Column<T> {
    Const(Option<T>),
    Rows(Vec<Option<T>>),
}

impl<T: Clone> Column<T> {
    pub(crate) fn get(&self, i: usize) -> Option<&T> {
        match self {
            Column::Const(v) => v.as_ref(),
            Column::Rows(v) => v.get(i).and_then(Option::as_ref),
        }
    }
}

impl Args {
    fn column<T>(
        &self,
        i: usize,
        from_scalar: impl Fn(&ScalarValue) -> Option<T>,
        from_array: impl Fn(&ArrayRef) -> Vec<Option<T>>,
    ) -> Result<Column<T>> {
        match self.values.get(i) {
            Some(ColumnarValue::Scalar(s)) => Ok(Column::Const(from_scalar(s))),
            Some(ColumnarValue::Array(a)) => Ok(Column::Rows(from_array(a))),
            None => datafusion::common::exec_err!("missing argument {}", i + 1),
        }
    }

    fn binary_values(a: &ArrayRef) -> Vec<Option<&[u8]>> {
        match a.data_type() {
            DataType::Binary => a.as_binary::<i32>().iter().collect(),
            _ => vec![None; a.len()],
        }
    }

    /// A GEOMETRY argument; values that are not a valid shape read as NULL.
    pub(crate) fn geo(&self, i: usize) -> Result<Column<Shape>> {
        self.column(
            i,
            |s| match s {
                ScalarValue::Binary(Some(b)) => binary::decode(b),
                _ => None,
            },
            |a| {
                Self::binary_values(a)
                    .into_iter()
                    .map(|b| b.and_then(binary::decode))
                    .collect()
            },
        )
    }

    /// A bytes argument.
    pub(crate) fn bytes(&self, i: usize) -> Result<Column<Vec<u8>>> {
        self.column(
            i,
            |s| match s {
                ScalarValue::Binary(Some(b)) => Some(b.clone()),
                _ => None,
            },
            |a| {
                Self::binary_values(a)
                    .into_iter()
                    .map(|b| b.map(<[u8]>::to_vec))
                    .collect()
            },
        )
    }

    /// A text argument.
    pub(crate) fn text(&self, i: usize) -> Result<Column<String>> {
        self.column(
            i,
            |s| match s {
                ScalarValue::Utf8(Some(t)) => Some(t.clone()),
                _ => None,
            },
            |a| match a.data_type() {
                DataType::Utf8 => a
                    .as_string::<i32>()
                    .iter()
                    .map(|t| t.map(str::to_string))
                    .collect(),
                _ => vec![None; a.len()],
            },
        )
    }

    /// A number argument.
    pub(crate) fn num(&self, i: usize) -> Result<Column<f64>> {
        self.column(
            i,
            |s| match s {
                ScalarValue::Float64(v) => *v,
                _ => None,
            },
            |a| match a.data_type() {
                DataType::Float64 => a.as_primitive::<Float64Type>().iter().collect(),
                _ => vec![None; a.len()],
            },
        )
    }
}
