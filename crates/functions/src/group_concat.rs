//! Doris's `group_concat(expr [, separator])` as an aggregate, for what the frontend cannot
//! spell as `string_agg`: a separator that is a column (`group_concat_foreach(s, s)`), windows.
//! Values join in arrival order with the separator of the first row taken (Doris keeps the
//! first one), ',' by default. Rows where the value or the separator is NULL are skipped; no
//! value gives NULL.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray};
use arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::{exec_err, plan_err, Result, ScalarValue};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::utils::format_state_name;
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, Signature, Volatility,
};

use crate::util::expect_args;
use crate::value_counts::value_texts;

const NAME: &str = "group_concat";

#[derive(Debug, PartialEq, Eq, Hash)]
struct GroupConcat {
    signature: Signature,
}

/// The `group_concat` aggregate.
pub fn function() -> AggregateUDF {
    AggregateUDF::new_from_impl(GroupConcat {
        signature: Signature::user_defined(Volatility::Immutable),
    })
}

impl AggregateUDFImpl for GroupConcat {
    fn name(&self) -> &str {
        NAME
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        expect_args(NAME, types, 1, 2)?;
        if types.iter().any(|t| t.is_nested()) {
            return plan_err!("{NAME}: expected text arguments");
        }
        Ok(types
            .iter()
            .map(|t| match t {
                DataType::Null => DataType::Utf8,
                t => t.clone(),
            })
            .collect())
    }

    fn return_type(&self, _types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Utf8)
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        Ok(["text", "separator"]
            .iter()
            .map(|part| {
                Arc::new(Field::new(
                    format_state_name(args.name, part),
                    DataType::Utf8,
                    true,
                ))
            })
            .collect())
    }

    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        if args.is_distinct {
            return plan_err!("{NAME}(DISTINCT ...) with a column separator is not supported");
        }
        Ok(Box::new(GroupConcatAccumulator::default()))
    }
}

#[derive(Debug, Default)]
struct GroupConcatAccumulator {
    /// The values so far and the separator (None until a value arrives).
    joined: Option<(String, String)>,
}

impl GroupConcatAccumulator {
    fn push(&mut self, value: &str, separator: &str) {
        match &mut self.joined {
            Some((text, sep)) => {
                text.push_str(sep);
                text.push_str(value);
            }
            None => self.joined = Some((value.to_string(), separator.to_string())),
        }
    }
}

impl Accumulator for GroupConcatAccumulator {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let Some(value) = values.first() else {
            return exec_err!("{NAME}: takes arguments");
        };
        let texts = value_texts(value)?;
        let separators = match values.get(1) {
            Some(s) => Some(value_texts(s)?),
            None => None,
        };
        for row in 0..texts.len() {
            let separator = match &separators {
                Some(s) if s.is_null(row) => continue,
                Some(s) => s.value(row),
                None => ",",
            };
            if !texts.is_null(row) {
                self.push(texts.value(row), separator);
            }
        }
        Ok(())
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let [texts, separators] = states else {
            return exec_err!("{NAME}: malformed partial state");
        };
        let (Some(texts), Some(separators)) = (
            texts.as_string_opt::<i32>(),
            separators.as_string_opt::<i32>(),
        ) else {
            return exec_err!("{NAME}: malformed partial state");
        };
        for row in 0..texts.len() {
            if !texts.is_null(row) && !separators.is_null(row) {
                self.push(texts.value(row), separators.value(row));
            }
        }
        Ok(())
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        Ok(match &self.joined {
            Some((text, sep)) => vec![
                ScalarValue::Utf8(Some(text.clone())),
                ScalarValue::Utf8(Some(sep.clone())),
            ],
            None => vec![ScalarValue::Utf8(None), ScalarValue::Utf8(None)],
        })
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        Ok(ScalarValue::Utf8(self.joined.as_ref().map(|j| j.0.clone())))
    }

    fn size(&self) -> usize {
        size_of_val(self)
            + self
                .joined
                .as_ref()
                .map_or(0, |(t, s)| t.capacity() + s.capacity())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::StringArray;

    #[test]
    fn first_separator_joins_all() {
        let mut acc = GroupConcatAccumulator::default();
        let v: ArrayRef = Arc::new(StringArray::from(vec![
            Some("ab"),
            Some("cd"),
            None,
            Some("efg"),
        ]));
        let s: ArrayRef = Arc::new(StringArray::from(vec![
            Some("ab"),
            Some("cd"),
            Some("x"),
            Some("efg"),
        ]));
        acc.update_batch(&[v, s]).unwrap();
        assert_eq!(
            acc.evaluate().unwrap(),
            ScalarValue::Utf8(Some("ababcdabefg".into()))
        );
        let state: Vec<ArrayRef> = acc
            .state()
            .unwrap()
            .iter()
            .map(|s| s.to_array().unwrap())
            .collect();
        let mut other = GroupConcatAccumulator::default();
        other
            .update_batch(&[Arc::new(StringArray::from(vec!["z"]))])
            .unwrap();
        other.merge_batch(&state).unwrap();
        assert_eq!(
            other.evaluate().unwrap(),
            ScalarValue::Utf8(Some("z,ababcdabefg".into()))
        );
        assert_eq!(
            GroupConcatAccumulator::default().evaluate().unwrap(),
            ScalarValue::Utf8(None)
        );
    }
}
