//! Doris's `map_agg(key, value)`: a group's pairs as a MAP, in the order keys first arrive. Rows
//! whose key is NULL are skipped; a NULL value is kept; of pairs with equal keys the first one
//! seen stays. A group without pairs gives `{}` (never NULL).

use std::collections::HashSet;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, MapArray, StructArray};
use arrow::buffer::OffsetBuffer;
use arrow::datatypes::{DataType, Field, FieldRef, Fields};
use datafusion::common::{exec_err, plan_err, Result, ScalarValue};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::utils::format_state_name;
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, Signature, Volatility,
};

use crate::util::expect_args;
use crate::value_counts::{list_scalar, ValueKeys};

const NAME: &str = "map_agg";

#[derive(Debug, PartialEq, Eq, Hash)]
struct MapAgg {
    signature: Signature,
}

/// The `map_agg` aggregate.
pub fn function() -> AggregateUDF {
    AggregateUDF::new_from_impl(MapAgg {
        signature: Signature::user_defined(Volatility::Immutable),
    })
}

fn concrete(t: &DataType) -> DataType {
    match t {
        DataType::Null => DataType::Utf8,
        t => t.clone(),
    }
}

/// `MAP<key, value>` as DataFusion's `map` builds it.
fn map_type(key: &DataType, value: &DataType) -> DataType {
    DataType::Map(Arc::new(entries_field(key, value)), false)
}

fn entries_field(key: &DataType, value: &DataType) -> Field {
    Field::new("entries", DataType::Struct(entry_fields(key, value)), false)
}

fn entry_fields(key: &DataType, value: &DataType) -> Fields {
    Fields::from(vec![
        Field::new("key", key.clone(), false),
        Field::new("value", value.clone(), true),
    ])
}

impl AggregateUDFImpl for MapAgg {
    fn name(&self) -> &str {
        NAME
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        expect_args(NAME, types, 2, 2)?;
        Ok(types.iter().map(concrete).collect())
    }

    fn return_type(&self, types: &[DataType]) -> Result<DataType> {
        let [key, value] = types else {
            return plan_err!("{NAME} takes 2 arguments");
        };
        Ok(map_type(&concrete(key), &concrete(value)))
    }

    fn is_nullable(&self) -> bool {
        false
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        let [key, value] = args.input_fields else {
            return plan_err!("{NAME} takes 2 arguments");
        };
        let list =
            |t: &DataType| DataType::List(Arc::new(Field::new_list_field(concrete(t), true)));
        Ok(vec![
            Arc::new(Field::new(
                format_state_name(args.name, "keys"),
                list(key.data_type()),
                true,
            )),
            Arc::new(Field::new(
                format_state_name(args.name, "values"),
                list(value.data_type()),
                true,
            )),
        ])
    }

    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        if args.is_distinct {
            return plan_err!("{NAME}(DISTINCT ...) is not supported");
        }
        let [key, value] = args.expr_fields else {
            return plan_err!("{NAME} takes 2 arguments");
        };
        Ok(Box::new(MapAggAccumulator {
            keys: ValueKeys::new(&concrete(key.data_type()))?,
            values: ValueKeys::new(&concrete(value.data_type()))?,
            seen: HashSet::new(),
            pairs: Vec::new(),
        }))
    }
}

/// An encoded value (its row-format key).
type Encoded = Box<[u8]>;

#[derive(Debug)]
struct MapAggAccumulator {
    keys: ValueKeys,
    values: ValueKeys,
    /// The keys taken so far.
    seen: HashSet<Encoded>,
    /// The pairs in arrival order, encoded.
    pairs: Vec<(Encoded, Encoded)>,
}

impl MapAggAccumulator {
    /// Takes the pairs of `keys` and `values` whose key is new.
    fn take(&mut self, keys: &ArrayRef, values: &ArrayRef) -> Result<()> {
        if keys.len() != values.len() {
            return exec_err!("{NAME}: keys and values of different lengths");
        }
        let key_rows = self.keys.encode(keys)?;
        let value_rows = self.values.encode(values)?;
        for row in 0..keys.len() {
            if keys.is_null(row) {
                continue;
            }
            let key = key_rows.row(row);
            if self.seen.contains(key.as_ref()) {
                continue;
            }
            self.seen.insert(key.as_ref().into());
            self.pairs
                .push((key.as_ref().into(), value_rows.row(row).as_ref().into()));
        }
        Ok(())
    }

    fn decoded(&self) -> Result<(ArrayRef, ArrayRef)> {
        let keys = self.keys.decode(self.pairs.iter().map(|p| &*p.0))?;
        let values = self.values.decode(self.pairs.iter().map(|p| &*p.1))?;
        Ok((keys, values))
    }
}

impl Accumulator for MapAggAccumulator {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let [keys, values] = values else {
            return exec_err!("{NAME} takes 2 arguments");
        };
        self.take(keys, values)
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let [keys, values] = states else {
            return exec_err!("{NAME}: malformed partial state");
        };
        let (Some(keys), Some(values)) = (keys.as_list_opt::<i32>(), values.as_list_opt::<i32>())
        else {
            return exec_err!("{NAME}: malformed partial state");
        };
        for row in 0..keys.len() {
            if keys.is_null(row) || values.is_null(row) {
                continue;
            }
            self.take(&keys.value(row), &values.value(row))?;
        }
        Ok(())
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        let (keys, values) = self.decoded()?;
        Ok(vec![list_scalar(keys)?, list_scalar(values)?])
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        let (keys, values) = self.decoded()?;
        let fields = entry_fields(self.keys.data_type(), self.values.data_type());
        let entries = StructArray::try_new(fields, vec![keys, values], None)?;
        let field = Arc::new(entries_field(
            self.keys.data_type(),
            self.values.data_type(),
        ));
        let offsets = OffsetBuffer::from_lengths([entries.len()]);
        let map = MapArray::try_new(field, offsets, entries, None, false)?;
        Ok(ScalarValue::Map(Arc::new(map)))
    }

    fn size(&self) -> usize {
        size_of_val(self)
            + self.keys.size()
            + self.values.size()
            + self
                .pairs
                .iter()
                .map(|(k, v)| 2 * k.len() + v.len() + 48)
                .sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Int32Array, StringArray};

    #[test]
    fn first_pair_of_a_key_stays_and_states_merge() {
        let mut acc = MapAggAccumulator {
            keys: ValueKeys::new(&DataType::Int32).unwrap(),
            values: ValueKeys::new(&DataType::Utf8).unwrap(),
            seen: HashSet::new(),
            pairs: Vec::new(),
        };
        let k: ArrayRef = Arc::new(Int32Array::from(vec![Some(2), None, Some(1), Some(2)]));
        let v: ArrayRef = Arc::new(StringArray::from(vec![
            Some("b"),
            Some("x"),
            None,
            Some("c"),
        ]));
        acc.update_batch(&[k, v]).unwrap();
        let state: Vec<ArrayRef> = acc
            .state()
            .unwrap()
            .iter()
            .map(|s| s.to_array().unwrap())
            .collect();
        acc.merge_batch(&state).unwrap();
        let out = acc.evaluate().unwrap().to_array().unwrap();
        let map = out.as_map();
        assert_eq!(map.value_length(0), 2);
        let keys = map.keys().as_primitive::<arrow::datatypes::Int32Type>();
        assert_eq!(keys.values().to_vec(), [2, 1]);
        let values = map.values().as_string::<i32>();
        assert_eq!((values.value(0), values.is_null(1)), ("b", true));
    }
}
