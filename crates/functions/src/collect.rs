//! Doris's `collect_list(expr [, max_size])` (alias `group_array`) and
//! `collect_set(expr [, max_size])` (alias `group_uniq_array`): a group's non-NULL values as an
//! ARRAY in arrival order (distinct for the set), at most `max_size` of them — the first ones to
//! arrive. A group without values gives `[]` (never NULL).
//!
//! The frontend spells the one-argument forms as `array_agg` (faster, and it takes ORDER BY);
//! these aggregates serve the two-argument forms, the `_foreach` combinator and windows.
//! Doris reads `max_size` from the first row; here the smallest one given wins, so rows that
//! disagree (as in `collect_list_foreach(a, a)`) give the same result in any order. It must
//! not be negative.

use std::collections::HashSet;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray};
use arrow::datatypes::{DataType, Field, FieldRef, Int64Type};
use datafusion::common::{exec_err, plan_err, Result, ScalarValue};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::utils::format_state_name;
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, Signature, Volatility,
};

use crate::util::expect_args;
use crate::value_counts::{list_scalar, ValueKeys};

#[derive(Debug, PartialEq, Eq, Hash)]
struct Collect {
    /// collect_set: distinct values only.
    distinct: bool,
    signature: Signature,
    aliases: Vec<String>,
}

/// `collect_list` and `collect_set`.
pub fn functions() -> Vec<AggregateUDF> {
    [(false, "group_array"), (true, "group_uniq_array")]
        .into_iter()
        .map(|(distinct, alias)| {
            AggregateUDF::new_from_impl(Collect {
                distinct,
                signature: Signature::user_defined(Volatility::Immutable),
                aliases: vec![alias.to_string()],
            })
        })
        .collect()
}

fn concrete(t: &DataType) -> DataType {
    match t {
        DataType::Null => DataType::Int32,
        t => t.clone(),
    }
}

fn list_of(t: &DataType) -> DataType {
    DataType::List(Arc::new(Field::new_list_field(concrete(t), true)))
}

impl AggregateUDFImpl for Collect {
    fn name(&self) -> &str {
        match self.distinct {
            true => "collect_set",
            false => "collect_list",
        }
    }

    fn aliases(&self) -> &[String] {
        &self.aliases
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        expect_args(self.name(), types, 1, 2)?;
        let mut out = vec![concrete(&types[0])];
        if let Some(t) = types.get(1) {
            if !(t.is_integer() || t.is_null()) {
                return plan_err!("{}: max_size must be an integer, got {t}", self.name());
            }
            out.push(DataType::Int64);
        }
        Ok(out)
    }

    fn return_type(&self, types: &[DataType]) -> Result<DataType> {
        Ok(list_of(&types[0]))
    }

    fn is_nullable(&self) -> bool {
        false
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        let Some(value) = args.input_fields.first() else {
            return plan_err!("{}: takes arguments", self.name());
        };
        Ok(vec![
            Arc::new(Field::new(
                format_state_name(args.name, "values"),
                list_of(value.data_type()),
                true,
            )),
            Arc::new(Field::new(
                format_state_name(args.name, "max_size"),
                DataType::Int64,
                true,
            )),
        ])
    }

    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        let Some(value) = args.expr_fields.first() else {
            return plan_err!("{}: takes arguments", self.name());
        };
        Ok(Box::new(CollectAccumulator {
            name: match self.distinct {
                true => "collect_set",
                false => "collect_list",
            },
            distinct: self.distinct || args.is_distinct,
            keys: ValueKeys::new(&concrete(value.data_type()))?,
            seen: HashSet::new(),
            values: Vec::new(),
            max_size: None,
        }))
    }
}

#[derive(Debug)]
struct CollectAccumulator {
    name: &'static str,
    distinct: bool,
    keys: ValueKeys,
    /// The values taken (collect_set).
    seen: HashSet<Box<[u8]>>,
    /// The values taken, encoded, in arrival order.
    values: Vec<Box<[u8]>>,
    /// The smallest max_size given.
    max_size: Option<i64>,
}

impl CollectAccumulator {
    fn limit(&mut self, max_size: i64) -> Result<()> {
        if max_size < 0 {
            return exec_err!(
                "{}: max_size must not be negative, got {max_size}",
                self.name
            );
        }
        self.max_size = Some(self.max_size.map_or(max_size, |m| m.min(max_size)));
        let keep = usize::try_from(max_size).unwrap_or(usize::MAX);
        self.values.truncate(keep);
        Ok(())
    }

    fn full(&self) -> bool {
        self.max_size
            .is_some_and(|m| self.values.len() >= usize::try_from(m).unwrap_or(usize::MAX))
    }

    fn take(&mut self, values: &ArrayRef, max_sizes: Option<&ArrayRef>) -> Result<()> {
        let max_sizes = match max_sizes {
            None => None,
            Some(a) => match a.as_primitive_opt::<Int64Type>() {
                Some(a) => Some(a),
                None => return exec_err!("{}: max_size must be a BIGINT", self.name),
            },
        };
        let rows = self.keys.encode(values)?;
        for row in 0..values.len() {
            if let Some(m) = max_sizes {
                if !m.is_null(row) {
                    self.limit(m.value(row))?;
                }
            }
            if values.is_null(row) || self.full() {
                continue;
            }
            let key = rows.row(row);
            if self.distinct {
                if self.seen.contains(key.as_ref()) {
                    continue;
                }
                self.seen.insert(key.as_ref().into());
            }
            self.values.push(key.as_ref().into());
        }
        Ok(())
    }
}

impl Accumulator for CollectAccumulator {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let Some(value) = values.first() else {
            return exec_err!("{}: takes arguments", self.name);
        };
        self.take(value, values.get(1))
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let [values, max_sizes] = states else {
            return exec_err!("{}: malformed partial state", self.name);
        };
        let (Some(values), Some(max_sizes)) = (
            values.as_list_opt::<i32>(),
            max_sizes.as_primitive_opt::<Int64Type>(),
        ) else {
            return exec_err!("{}: malformed partial state", self.name);
        };
        for row in 0..values.len() {
            if !max_sizes.is_null(row) {
                self.limit(max_sizes.value(row))?;
            }
            if !values.is_null(row) {
                self.take(&values.value(row), None)?;
            }
        }
        Ok(())
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        let values = self.keys.decode(self.values.iter().map(|v| &**v))?;
        Ok(vec![
            list_scalar(values)?,
            ScalarValue::Int64(self.max_size),
        ])
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        let values = self.keys.decode(self.values.iter().map(|v| &**v))?;
        list_scalar(values)
    }

    fn size(&self) -> usize {
        size_of_val(self)
            + self.keys.size()
            + self.values.iter().map(|v| v.len() + 16).sum::<usize>()
            + self.seen.iter().map(|v| v.len() + 24).sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Int32Array, Int64Array};
    use arrow::datatypes::Int32Type;

    fn accumulator(distinct: bool) -> CollectAccumulator {
        CollectAccumulator {
            name: "collect",
            distinct,
            keys: ValueKeys::new(&DataType::Int32).unwrap(),
            seen: HashSet::new(),
            values: Vec::new(),
            max_size: None,
        }
    }

    fn ints(v: &ScalarValue) -> Vec<i32> {
        let a = v.to_array().unwrap();
        a.as_list::<i32>()
            .value(0)
            .as_primitive::<Int32Type>()
            .values()
            .to_vec()
    }

    #[test]
    fn smallest_max_size_wins_and_sets_are_distinct() {
        let values: ArrayRef = Arc::new(Int32Array::from(vec![
            Some(5),
            None,
            Some(5),
            Some(7),
            Some(8),
        ]));
        let sizes: ArrayRef = Arc::new(Int64Array::from(vec![3, 3, 3, 2, 9]));
        let mut list = accumulator(false);
        list.update_batch(&[values.clone(), sizes.clone()]).unwrap();
        assert_eq!(ints(&list.evaluate().unwrap()), [5, 5]);
        let mut set = accumulator(true);
        set.update_batch(&[values.clone(), sizes]).unwrap();
        assert_eq!(ints(&set.evaluate().unwrap()), [5, 7]);
        let state: Vec<ArrayRef> = set
            .state()
            .unwrap()
            .iter()
            .map(|s| s.to_array().unwrap())
            .collect();
        let mut merged = accumulator(true);
        merged.update_batch(&[values]).unwrap();
        assert_eq!(ints(&merged.evaluate().unwrap()), [5, 7, 8]);
        merged.merge_batch(&state).unwrap();
        assert_eq!(ints(&merged.evaluate().unwrap()), [5, 7]);
        let err = accumulator(false)
            .update_batch(&[
                Arc::new(Int32Array::from(vec![1])),
                Arc::new(Int64Array::from(vec![-1])),
            ])
            .unwrap_err();
        assert!(err.to_string().contains("must not be negative"), "{err}");
    }
}
