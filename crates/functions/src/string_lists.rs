//! MySQL's functions over lists of strings: `FIELD(s, s1, s2, ..)` (the 1-based index of the
//! first `si` equal to `s`, 0 when none is or `s` is NULL; compared as text when all arguments
//! are text, otherwise as numbers), `MAKE_SET(bits, s1, s2, ..)` (the `si` whose bit is set,
//! comma-separated, NULLs skipped) and `EXPORT_SET(bits, on, off[, sep[, n]])` (`on` or `off`
//! for each of the `n` lowest bits, 64 at most, lowest first, joined by `sep`, ',' by default).

use crate::mysql_values::{integers, leading_number, texts};
use crate::util::{arguments, output};
use datafusion::arrow::array::{ArrayRef, Int64Array, StringArray};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{plan_err, Result};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use std::sync::Arc;

#[derive(Debug, PartialEq, Eq, Hash, Clone, Copy)]
enum Kind {
    Field,
    MakeSet,
    ExportSet,
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct StringList {
    kind: Kind,
    signature: Signature,
}

/// `field`, `make_set` and `export_set`.
pub fn functions() -> Vec<ScalarUDF> {
    [Kind::Field, Kind::MakeSet, Kind::ExportSet]
        .into_iter()
        .map(|kind| {
            ScalarUDF::new_from_impl(StringList {
                kind,
                signature: Signature::variadic_any(Volatility::Immutable),
            })
        })
        .collect()
}

impl ScalarUDFImpl for StringList {
    fn name(&self) -> &str {
        match self.kind {
            Kind::Field => "field",
            Kind::MakeSet => "make_set",
            Kind::ExportSet => "export_set",
        }
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn return_type(&self, types: &[DataType]) -> Result<DataType> {
        let n = types.len();
        let (fits, want) = match self.kind {
            Kind::Field => (n >= 2, "at least 2"),
            Kind::MakeSet => (n >= 2, "at least 2"),
            Kind::ExportSet => ((3..=5).contains(&n), "3 to 5"),
        };
        if !fits {
            return plan_err!("{} takes {want} arguments, got {n}", self.name());
        }
        Ok(match self.kind {
            Kind::Field => DataType::Int64,
            _ => DataType::Utf8,
        })
    }
    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let (arrays, scalar) = arguments(&args)?;
        let out: ArrayRef = match self.kind {
            Kind::Field => Arc::new(field(&arrays)?),
            Kind::MakeSet => Arc::new(make_set(&arrays)?),
            Kind::ExportSet => Arc::new(export_set(&arrays)?),
        };
        output(out, scalar)
    }
}

fn is_text(t: &DataType) -> bool {
    matches!(
        t,
        DataType::Utf8
            | DataType::LargeUtf8
            | DataType::Utf8View
            | DataType::Binary
            | DataType::LargeBinary
            | DataType::BinaryView
    )
}

fn field(arrays: &[ArrayRef]) -> Result<Int64Array> {
    let values: Vec<Vec<Option<String>>> = arrays.iter().map(texts).collect::<Result<_>>()?;
    let rows = values[0].len();
    let as_text = arrays
        .iter()
        .all(|a| is_text(a.data_type()) || a.data_type() == &DataType::Null);
    let number = |t: &str| leading_number(t).unwrap_or(0.0);
    Ok((0..rows)
        .map(|r| {
            let Some(s) = values[0][r].as_deref() else {
                return Some(0);
            };
            let found = values[1..].iter().position(|v| match v[r].as_deref() {
                None => false,
                Some(x) if as_text => x == s,
                Some(x) => number(x) == number(s),
            });
            Some(found.map_or(0, |i| i as i64 + 1))
        })
        .collect())
}

fn make_set(arrays: &[ArrayRef]) -> Result<StringArray> {
    let bits = integers(&arrays[0])?;
    let values: Vec<Vec<Option<String>>> = arrays[1..].iter().map(texts).collect::<Result<_>>()?;
    Ok((0..bits.len())
        .map(|r| {
            let b = bits[r]? as u64;
            let chosen: Vec<&str> = values
                .iter()
                .enumerate()
                .filter(|(i, _)| *i < 64 && b & (1 << i) != 0)
                .filter_map(|(_, v)| v[r].as_deref())
                .collect();
            Some(chosen.join(","))
        })
        .collect())
}

fn export_set(arrays: &[ArrayRef]) -> Result<StringArray> {
    let bits = integers(&arrays[0])?;
    let on = texts(&arrays[1])?;
    let off = texts(&arrays[2])?;
    let sep = match arrays.get(3) {
        Some(a) => texts(a)?,
        None => vec![Some(",".to_string()); bits.len()],
    };
    let count = match arrays.get(4) {
        Some(a) => integers(a)?,
        None => vec![Some(64); bits.len()],
    };
    Ok((0..bits.len())
        .map(|r| {
            let b = bits[r]? as u64;
            let (on, off, sep) = (on[r].as_deref()?, off[r].as_deref()?, sep[r].as_deref()?);
            let n = count[r]?;
            let n = if (0..=64).contains(&n) { n } else { 64 };
            let parts: Vec<&str> = (0..n)
                .map(|i| if b & (1 << i) != 0 { on } else { off })
                .collect();
            Some(parts.join(sep))
        })
        .collect())
}
