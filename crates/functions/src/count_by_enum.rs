//! Doris's `count_by_enum(expr1, expr2, ..)`: for each argument, how often each value (as text)
//! occurs, with the counts of non-NULL, NULL and all rows, as JSON text:
//! `[{"cbe":{"F":2,"M":1},"notnull":3,"null":1,"all":4}, ..]`, one object per argument.
//!
//! Doris lists the values of `cbe` in its hash table's order; here they come by count
//! (descending), then value. No rows gives `[]` (never NULL).

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, StringArray};
use arrow::datatypes::{DataType, Field, FieldRef, UInt64Type};
use datafusion::common::{exec_err, plan_err, Result, ScalarValue};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::utils::format_state_name;
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, Signature, Volatility,
};

use crate::value_counts::{
    counts_state, json_string, state_entries, value_texts, Counts, ValueKeys,
};

const NAME: &str = "count_by_enum";

#[derive(Debug, PartialEq, Eq, Hash)]
struct CountByEnum {
    signature: Signature,
}

/// The `count_by_enum` aggregate.
pub fn function() -> AggregateUDF {
    AggregateUDF::new_from_impl(CountByEnum {
        signature: Signature::user_defined(Volatility::Immutable),
    })
}

/// State columns per argument: values, counts, NULL rows.
const STATE_PARTS: usize = 3;

impl AggregateUDFImpl for CountByEnum {
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
        types
            .iter()
            .map(|t| match t.is_nested() {
                true => plan_err!("{NAME}: cannot count values of type {t}"),
                false => Ok(t.clone()),
            })
            .collect()
    }

    fn return_type(&self, _types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Utf8)
    }

    fn is_nullable(&self) -> bool {
        false
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        let list = |t: DataType| DataType::List(Arc::new(Field::new_list_field(t, true)));
        Ok((0..args.input_fields.len())
            .flat_map(|i| {
                [
                    ("values", list(DataType::Utf8)),
                    ("counts", list(DataType::UInt64)),
                    ("nulls", DataType::UInt64),
                ]
                .map(|(part, t)| {
                    Arc::new(Field::new(
                        format_state_name(args.name, &format!("{part}{i}")),
                        t,
                        true,
                    ))
                })
            })
            .collect())
    }

    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        if args.is_distinct {
            return plan_err!("{NAME}(DISTINCT ...) is not supported");
        }
        Ok(Box::new(CountByEnumAccumulator {
            keys: ValueKeys::new(&DataType::Utf8)?,
            columns: (0..args.exprs.len()).map(|_| Tally::default()).collect(),
            seen: false,
        }))
    }

    fn default_value(&self, _data_type: &DataType) -> Result<ScalarValue> {
        Ok(ScalarValue::Utf8(Some("[]".to_string())))
    }
}

/// The counts of one argument.
#[derive(Debug, Default)]
struct Tally {
    counts: Counts,
    nulls: u64,
}

#[derive(Debug)]
struct CountByEnumAccumulator {
    keys: ValueKeys,
    columns: Vec<Tally>,
    /// Whether any row arrived.
    seen: bool,
}

impl Accumulator for CountByEnumAccumulator {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        if values.len() != self.columns.len() {
            return exec_err!("{NAME}: expected {} arguments", self.columns.len());
        }
        for (value, tally) in values.iter().zip(&mut self.columns) {
            let texts: ArrayRef = Arc::new(value_texts(value)?);
            let keys = self.keys.encode(&texts)?;
            for row in 0..texts.len() {
                self.seen = true;
                if texts.is_null(row) {
                    tally.nulls += 1;
                } else {
                    tally.counts.add(keys.row(row).as_ref(), 1, 0);
                }
            }
        }
        Ok(())
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        if states.len() != self.columns.len() * STATE_PARTS {
            return exec_err!("{NAME}: malformed partial state");
        }
        for (parts, tally) in states.chunks(STATE_PARTS).zip(&mut self.columns) {
            let [values, counts, nulls] = parts else {
                return exec_err!("{NAME}: malformed partial state");
            };
            let Some(nulls) = nulls.as_primitive_opt::<UInt64Type>() else {
                return exec_err!("{NAME}: malformed partial state");
            };
            for row in 0..values.len() {
                if nulls.is_null(row) {
                    continue;
                }
                self.seen = true;
                tally.nulls += nulls.value(row);
                for (key, count) in state_entries(&self.keys, values, counts, row)? {
                    tally.counts.add(&key, count, 0);
                }
            }
        }
        Ok(())
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        let mut out = Vec::with_capacity(self.columns.len() * STATE_PARTS);
        for tally in &self.columns {
            let [values, counts] = counts_state(&self.keys, &tally.counts.by_value())?;
            out.push(values);
            out.push(counts);
            out.push(ScalarValue::UInt64(self.seen.then_some(tally.nulls)));
        }
        Ok(out)
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        if !self.seen {
            return Ok(ScalarValue::Utf8(Some("[]".to_string())));
        }
        let mut objects = Vec::with_capacity(self.columns.len());
        for tally in &self.columns {
            let mut entries = tally.counts.most_frequent();
            // Ties by value ascending.
            entries.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
            let values = self.keys.decode(entries.iter().map(|e| e.0))?;
            let Some(texts) = values.as_any().downcast_ref::<StringArray>() else {
                return exec_err!("{NAME}: values were not counted as text");
            };
            let members: Vec<String> = texts
                .iter()
                .zip(&entries)
                .map(|(t, e)| format!("{}:{}", json_string(t.unwrap_or("")), e.1))
                .collect();
            let not_null: u64 = entries.iter().map(|e| e.1).sum();
            objects.push(format!(
                r#"{{"cbe":{{{}}},"notnull":{not_null},"null":{},"all":{}}}"#,
                members.join(","),
                tally.nulls,
                not_null + tally.nulls
            ));
        }
        Ok(ScalarValue::Utf8(Some(format!("[{}]", objects.join(",")))))
    }

    fn size(&self) -> usize {
        size_of_val(self)
            + self.keys.size()
            + self
                .columns
                .iter()
                .map(|t| t.counts.size() + size_of::<Tally>())
                .sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::Int32Array;

    #[test]
    fn counts_values_and_nulls_per_argument() {
        let mut acc = CountByEnumAccumulator {
            keys: ValueKeys::new(&DataType::Utf8).unwrap(),
            columns: vec![Tally::default(), Tally::default()],
            seen: false,
        };
        assert_eq!(
            acc.evaluate().unwrap(),
            ScalarValue::Utf8(Some("[]".into()))
        );
        let a: ArrayRef = Arc::new(StringArray::from(vec![
            Some("F"),
            Some("M"),
            None,
            Some("F"),
        ]));
        let b: ArrayRef = Arc::new(Int32Array::from(vec![Some(1), Some(1), Some(2), None]));
        acc.update_batch(&[a, b]).unwrap();
        let state: Vec<ArrayRef> = acc
            .state()
            .unwrap()
            .iter()
            .map(|s| s.to_array().unwrap())
            .collect();
        acc.merge_batch(&state).unwrap();
        assert_eq!(
            acc.evaluate().unwrap(),
            ScalarValue::Utf8(Some(
                r#"[{"cbe":{"F":4,"M":2},"notnull":6,"null":2,"all":8},{"cbe":{"1":4,"2":2},"notnull":6,"null":2,"all":8}]"#
                    .into()
            ))
        );
    }
}
