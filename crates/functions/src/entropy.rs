//! Doris's `entropy(x1, .., xn)`: the Shannon entropy in bits, -Σ p·log2(p), of how often each
//! distinct value (several arguments: each distinct combination) occurs in the group. A row
//! with a NULL argument is skipped; a group without rows is NULL; one distinct value is 0.
//!
//! Values are keyed by Arrow's row encoding of the arguments. The partial state is one
//! BINARY: (key length u32, key, count i64) repeated, little-endian; the arguments' types
//! are the same wherever the aggregate runs, so equal values have equal keys in every part.

use arrow::array::{Array, ArrayRef, AsArray};
use arrow::datatypes::{DataType, Field, FieldRef};
use arrow::row::{RowConverter, SortField};
use datafusion::common::{exec_err, plan_err, Result, ScalarValue};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, Signature, Volatility,
};
use std::collections::HashMap;
use std::sync::Arc;

const NAME: &str = "entropy";

#[derive(Debug, PartialEq, Eq, Hash)]
struct Entropy {
    signature: Signature,
}

/// The `entropy` aggregate.
pub fn function() -> AggregateUDF {
    AggregateUDF::new_from_impl(Entropy {
        signature: Signature::user_defined(Volatility::Immutable),
    })
}

impl AggregateUDFImpl for Entropy {
    fn name(&self) -> &str {
        NAME
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        if types.is_empty() {
            return plan_err!("{NAME} takes at least one argument");
        }
        for t in types {
            if !RowConverter::supports_fields(&[SortField::new(t.clone())]) {
                return plan_err!("{NAME} does not take {t}");
            }
        }
        Ok(types.to_vec())
    }

    fn return_type(&self, _types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Float64)
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        Ok(vec![Arc::new(Field::new(
            format!("{}[counts]", args.name),
            DataType::Binary,
            true,
        ))])
    }

    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        let fields = args
            .exprs
            .iter()
            .map(|e| Ok(SortField::new(e.data_type(args.schema)?)))
            .collect::<Result<Vec<_>>>()?;
        Ok(Box::new(EntropyAccumulator {
            keys: RowConverter::new(fields)?,
            counts: HashMap::new(),
        }))
    }
}

#[derive(Debug)]
struct EntropyAccumulator {
    keys: RowConverter,
    counts: HashMap<Vec<u8>, i64>,
}

impl EntropyAccumulator {
    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for (key, count) in &self.counts {
            out.extend_from_slice(&(key.len() as u32).to_le_bytes());
            out.extend_from_slice(key);
            out.extend_from_slice(&count.to_le_bytes());
        }
        out
    }

    fn decode_into(&mut self, mut bytes: &[u8]) -> Result<()> {
        while !bytes.is_empty() {
            let Some((len, rest)) = bytes.split_first_chunk::<4>() else {
                return exec_err!("{NAME}: malformed partial state");
            };
            let len = u32::from_le_bytes(*len) as usize;
            if rest.len() < len + 8 {
                return exec_err!("{NAME}: malformed partial state");
            }
            let (key, rest) = rest.split_at(len);
            let (count, rest) = rest.split_at(8);
            let mut n = [0u8; 8];
            n.copy_from_slice(count);
            *self.counts.entry(key.to_vec()).or_insert(0) += i64::from_le_bytes(n);
            bytes = rest;
        }
        Ok(())
    }
}

/// -Σ p·log2(p) over the counts; None when there are none.
fn shannon_bits<'a>(counts: impl Iterator<Item = &'a i64> + Clone) -> Option<f64> {
    let total: i64 = counts.clone().sum();
    if total <= 0 {
        return None;
    }
    let total = total as f64;
    Some(
        counts
            .map(|&c| {
                let p = c as f64 / total;
                p * (1.0 / p).log2()
            })
            .sum(),
    )
}

impl Accumulator for EntropyAccumulator {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let rows = self.keys.convert_columns(values)?;
        for (i, row) in rows.iter().enumerate() {
            if values.iter().any(|v| v.is_null(i)) {
                continue;
            }
            *self.counts.entry(row.as_ref().to_vec()).or_insert(0) += 1;
        }
        Ok(())
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let Some(parts) = states[0].as_binary_opt::<i32>() else {
            return exec_err!("{NAME}: unexpected partial state");
        };
        for part in parts.iter().flatten() {
            self.decode_into(part)?;
        }
        Ok(())
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        Ok(vec![ScalarValue::Binary(Some(self.encode()))])
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        Ok(ScalarValue::Float64(shannon_bits(self.counts.values())))
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self)
            + self.keys.size()
            + self.counts.keys().map(|k| k.len() + 32).sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_of_counts() {
        let b = shannon_bits([3i64, 1].iter()).unwrap();
        assert!((b - 0.8112781244591328).abs() < 1e-15, "{b}");
        assert_eq!(shannon_bits([2i64, 1, 1].iter()), Some(1.5));
        assert_eq!(shannon_bits([5i64].iter()), Some(0.0));
        assert_eq!(shannon_bits(std::iter::empty()), None);
    }
}
