//! Doris's approximate most-frequent-values aggregates:
//! - `topn(expr, n [, space_expand_rate])`: the n most frequent values of `expr` (as text) with
//!   their counts, a JSON object such as `{"a":3,"b":2}`;
//! - `topn_array(expr, n [, space_expand_rate])`: the n most frequent values, an ARRAY of
//!   `expr`'s type;
//! - `topn_weighted(expr, weight, n [, space_expand_rate])`: as `topn_array`, each row counting
//!   `weight` (a BIGINT, not negative) times.
//!
//! Values are ranked by count, then by value, both descending (Doris: `topn` compares the
//! text, the others the values). Rows where the value, weight or n is NULL are skipped; no
//! counted row gives NULL.
//!
//! Memory is bounded as in Doris (BE `aggregate_function_topn.h`): a state keeps at most
//! `capacity = n * space_expand_rate` values (the rate defaults to 50) when it travels, and
//! merging two full states offsets counts by the other side's smallest count. Within one
//! state the table is cut back to `capacity` values whenever it reaches twice that; values
//! arriving after a cut start from the largest count cut (the Space-Saving bound), so counts
//! may be overestimated once there are more distinct values than `capacity` — the result is
//! approximate then, as Doris's is.
//!
//! Doris reads n per row (the last row's wins); here the largest n (and rate) seen wins, so
//! the result does not depend on the order rows arrive in. n and the rate must be positive.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, Int64Array, ListArray, StringArray};
use arrow::datatypes::{DataType, Field, FieldRef, Int64Type};
use datafusion::common::{exec_err, plan_err, Result, ScalarValue};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::utils::format_state_name;
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, Signature, Volatility,
};

use crate::util::expect_args;
use crate::value_counts::{
    counts_state, json_string, list_scalar, state_entries, value_texts, Counts, ValueKeys,
};

/// Doris's default `space_expand_rate`.
const DEFAULT_EXPAND_RATE: i64 = 50;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    /// `topn`: JSON text of values and counts.
    Text,
    /// `topn_array`: the values.
    Array,
    /// `topn_weighted`: the values, each row counted `weight` times.
    Weighted,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Text => "topn",
            Kind::Array => "topn_array",
            Kind::Weighted => "topn_weighted",
        }
    }

    /// Where n is among the arguments.
    fn n_at(self) -> usize {
        match self {
            Kind::Weighted => 2,
            _ => 1,
        }
    }
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct TopN {
    kind: Kind,
    signature: Signature,
}

/// `topn`, `topn_array` and `topn_weighted`.
pub fn functions() -> Vec<AggregateUDF> {
    [Kind::Text, Kind::Array, Kind::Weighted]
        .into_iter()
        .map(|kind| {
            AggregateUDF::new_from_impl(TopN {
                kind,
                signature: Signature::user_defined(Volatility::Immutable),
            })
        })
        .collect()
}

fn is_integer(t: &DataType) -> bool {
    t.is_integer() || t.is_null()
}

impl TopN {
    /// The type values are counted as: text for `topn`.
    fn key_type(&self, value: &DataType) -> DataType {
        match (self.kind, value) {
            (Kind::Text, _) | (_, DataType::Null) => DataType::Utf8,
            (_, t) => t.clone(),
        }
    }
}

impl AggregateUDFImpl for TopN {
    fn name(&self) -> &str {
        self.kind.name()
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        let name = self.name();
        let n_at = self.kind.n_at();
        expect_args(name, types, n_at + 1, n_at + 2)?;
        if types[0].is_nested() {
            return plan_err!("{name}: cannot count values of type {}", types[0]);
        }
        // topn turns values into text itself (Doris's text of a DOUBLE has no `.0`).
        let mut out = vec![match &types[0] {
            DataType::Null => DataType::Utf8,
            t => t.clone(),
        }];
        if self.kind == Kind::Weighted {
            if !is_integer(&types[1]) {
                return plan_err!("{name}: the weight must be an integer, got {}", types[1]);
            }
            out.push(DataType::Int64);
        }
        for t in &types[n_at..] {
            if !is_integer(t) {
                return plan_err!("{name}: n and the expand rate must be integers, got {t}");
            }
            out.push(DataType::Int64);
        }
        Ok(out)
    }

    fn return_type(&self, types: &[DataType]) -> Result<DataType> {
        Ok(match self.kind {
            Kind::Text => DataType::Utf8,
            _ => DataType::List(Arc::new(Field::new_list_field(
                self.key_type(&types[0]),
                true,
            ))),
        })
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        let Some(value) = args.input_fields.first() else {
            return plan_err!("{}: takes arguments", self.name());
        };
        let list = |t: DataType| DataType::List(Arc::new(Field::new_list_field(t, true)));
        let field = |part: &str, t: DataType| {
            Arc::new(Field::new(format_state_name(args.name, part), t, true))
        };
        Ok(vec![
            field("values", list(self.key_type(value.data_type()))),
            field("counts", list(DataType::UInt64)),
            field("n", DataType::Int64),
            field("capacity", DataType::Int64),
        ])
    }

    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        if args.is_distinct {
            return plan_err!("{}(DISTINCT ...) is not supported", self.name());
        }
        let Some(value) = args.expr_fields.first() else {
            return plan_err!("{}: takes arguments", self.name());
        };
        Ok(Box::new(TopNAccumulator {
            kind: self.kind,
            keys: ValueKeys::new(&self.key_type(value.data_type()))?,
            counts: Counts::default(),
            n: 0,
            capacity: 0,
            floor: 0,
        }))
    }
}

#[derive(Debug)]
struct TopNAccumulator {
    kind: Kind,
    keys: ValueKeys,
    counts: Counts,
    /// The number of values to give; 0 while no row was counted.
    n: i64,
    /// How many values a travelling state keeps.
    capacity: i64,
    /// The count a new value starts from after the table was cut back.
    floor: u64,
}

/// An Int64 argument column.
fn int64s<'a>(name: &str, values: &'a [ArrayRef], at: usize) -> Result<Option<&'a Int64Array>> {
    match values.get(at) {
        None => Ok(None),
        Some(a) => match a.as_primitive_opt::<Int64Type>() {
            Some(a) => Ok(Some(a)),
            None => exec_err!("{name}: expected BIGINT arguments, got {}", a.data_type()),
        },
    }
}

impl TopNAccumulator {
    fn name(&self) -> &'static str {
        self.kind.name()
    }

    /// Keeps the larger of the current and the given parameters.
    fn parameters(&mut self, n: i64, rate: i64) -> Result<()> {
        if n <= 0 {
            return exec_err!(
                "{}: the number of values must be positive, got {n}",
                self.name()
            );
        }
        if rate <= 0 {
            return exec_err!(
                "{}: the expand rate must be positive, got {rate}",
                self.name()
            );
        }
        self.n = self.n.max(n);
        self.capacity = self.capacity.max(n.saturating_mul(rate));
        Ok(())
    }

    fn capacity(&self) -> usize {
        usize::try_from(self.capacity).unwrap_or(usize::MAX)
    }
}

impl Accumulator for TopNAccumulator {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let name = self.name();
        let Some(value) = values.first() else {
            return exec_err!("{name}: takes arguments");
        };
        let value: ArrayRef = match self.kind {
            Kind::Text => Arc::new(value_texts(value)?),
            _ => value.clone(),
        };
        let n_at = self.kind.n_at();
        let weights = match self.kind {
            Kind::Weighted => int64s(name, values, 1)?,
            _ => None,
        };
        let Some(ns) = int64s(name, values, n_at)? else {
            return exec_err!("{name}: takes the number of values to give");
        };
        let rates = int64s(name, values, n_at + 1)?;
        let keys = self.keys.encode(&value)?;
        for row in 0..value.len() {
            let weight = match weights {
                Some(w) if w.is_null(row) => continue,
                Some(w) => w.value(row),
                None => 1,
            };
            let rate = match rates {
                Some(r) if r.is_null(row) => continue,
                Some(r) => r.value(row),
                None => DEFAULT_EXPAND_RATE,
            };
            if value.is_null(row) || ns.is_null(row) {
                continue;
            }
            self.parameters(ns.value(row), rate)?;
            let Ok(weight) = u64::try_from(weight) else {
                return exec_err!("{name}: a weight must not be negative, got {weight}");
            };
            self.counts.add(keys.row(row).as_ref(), weight, self.floor);
            let capacity = self.capacity();
            if self.counts.len() >= capacity.saturating_mul(2) {
                let dropped = self.counts.prune(capacity);
                self.floor = self.floor.max(dropped);
            }
        }
        Ok(())
    }

    /// Doris's merge: when a side is full (holds `capacity` values), the values missing from
    /// it may have occurred up to its smallest count times, which the other side's values get.
    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let name = self.name();
        let [values, counts, ns, capacities] = states else {
            return exec_err!("{name}: expected 4 state columns, got {}", states.len());
        };
        let (Some(ns), Some(capacities)) = (
            ns.as_primitive_opt::<Int64Type>(),
            capacities.as_primitive_opt::<Int64Type>(),
        ) else {
            return exec_err!("{name}: malformed partial state");
        };
        for row in 0..values.len() {
            if ns.is_null(row) || ns.value(row) <= 0 {
                continue;
            }
            self.n = self.n.max(ns.value(row));
            self.capacity = self.capacity.max(capacities.value(row));
            let rhs = state_entries(&self.keys, values, counts, row)?;
            let capacity = self.capacity();
            let lhs_min = match self.counts.len() >= capacity {
                true => self.counts.min_count().unwrap_or(0),
                false => 0,
            };
            let rhs_min = match rhs.len() >= capacity {
                true => rhs.iter().map(|e| e.1).min().unwrap_or(0),
                false => 0,
            };
            if rhs_min > 0 {
                for c in self.counts.values_mut() {
                    *c = c.saturating_add(rhs_min);
                }
            }
            for (key, count) in rhs {
                match self.counts.get_mut(&key) {
                    Some(c) => *c = c.saturating_add(count.saturating_sub(rhs_min)),
                    None => self.counts.insert(&key, count.saturating_add(lhs_min)),
                }
            }
        }
        Ok(())
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        let ranked = self.counts.most_frequent();
        let kept = &ranked[..ranked.len().min(self.capacity())];
        let [values, counts] = counts_state(&self.keys, kept)?;
        Ok(vec![
            values,
            counts,
            ScalarValue::Int64(Some(self.n)),
            ScalarValue::Int64(Some(self.capacity)),
        ])
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        let n = usize::try_from(self.n).unwrap_or(usize::MAX);
        if n == 0 {
            return match self.kind {
                Kind::Text => Ok(ScalarValue::Utf8(None)),
                _ => Ok(ScalarValue::List(Arc::new(ListArray::new_null(
                    Arc::new(Field::new_list_field(self.keys.data_type().clone(), true)),
                    1,
                )))),
            };
        }
        let ranked = self.counts.most_frequent();
        let top = &ranked[..ranked.len().min(n)];
        let values = self.keys.decode(top.iter().map(|e| e.0))?;
        if self.kind != Kind::Text {
            return list_scalar(values);
        }
        let Some(texts) = values.as_any().downcast_ref::<StringArray>() else {
            return exec_err!("topn: values were not counted as text");
        };
        let members: Vec<String> = texts
            .iter()
            .zip(top)
            .map(|(t, (_, count))| format!("{}:{count}", json_string(t.unwrap_or(""))))
            .collect();
        Ok(ScalarValue::Utf8(Some(format!(
            "{{{}}}",
            members.join(",")
        ))))
    }

    fn size(&self) -> usize {
        size_of_val(self) + self.counts.size() + self.keys.size()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Int32Array, Int64Array};
    use arrow::datatypes::UInt64Type;

    /// The counts of a state's `counts` column at `row`.
    fn counts_at(counts: &ArrayRef, row: usize) -> Vec<u64> {
        counts
            .as_list::<i32>()
            .value(row)
            .as_primitive::<UInt64Type>()
            .values()
            .to_vec()
    }

    fn accumulator(kind: Kind) -> TopNAccumulator {
        TopNAccumulator {
            kind,
            keys: ValueKeys::new(&match kind {
                Kind::Text => DataType::Utf8,
                _ => DataType::Int32,
            })
            .unwrap(),
            counts: Counts::default(),
            n: 0,
            capacity: 0,
            floor: 0,
        }
    }

    fn batch(values: Vec<Option<i32>>, n: i64, rate: Option<i64>) -> Vec<ArrayRef> {
        let len = values.len();
        let mut v: Vec<ArrayRef> = vec![
            Arc::new(Int32Array::from(values)),
            Arc::new(Int64Array::from(vec![n; len])),
        ];
        if let Some(rate) = rate {
            v.push(Arc::new(Int64Array::from(vec![rate; len])));
        }
        v
    }

    #[test]
    fn ranks_by_count_then_value() {
        let mut acc = accumulator(Kind::Text);
        let values = vec![Some(1), Some(20), Some(100), None, Some(20), Some(3)];
        acc.update_batch(&batch(values, 3, None)).unwrap();
        assert_eq!(
            acc.evaluate().unwrap(),
            ScalarValue::Utf8(Some(r#"{"20":2,"3":1,"100":1}"#.into()))
        );
    }

    #[test]
    fn merged_states_add_up() {
        let mut a = accumulator(Kind::Array);
        a.update_batch(&batch(vec![Some(1), Some(2), Some(2)], 2, None))
            .unwrap();
        let state: Vec<ArrayRef> = a
            .state()
            .unwrap()
            .iter()
            .map(|s| s.to_array().unwrap())
            .collect();
        assert_eq!(counts_at(&state[1], 0), [2, 1]);
        let mut b = accumulator(Kind::Array);
        b.update_batch(&batch(vec![Some(1), Some(1), Some(5)], 2, None))
            .unwrap();
        b.merge_batch(&state).unwrap();
        let out = b.evaluate().unwrap().to_array().unwrap();
        let out = out.as_list::<i32>().value(0);
        assert_eq!(
            out.as_primitive::<arrow::datatypes::Int32Type>()
                .values()
                .to_vec(),
            [1, 2]
        );
    }

    #[test]
    fn memory_is_bounded() {
        let mut acc = accumulator(Kind::Array);
        let mut values: Vec<Option<i32>> = (0..1000).map(Some).collect();
        values.extend([Some(7); 50]);
        acc.update_batch(&batch(values, 1, Some(2))).unwrap();
        assert!(acc.counts.len() <= 4, "{}", acc.counts.len());
        let out = acc.evaluate().unwrap().to_array().unwrap();
        let out = out.as_list::<i32>().value(0);
        assert_eq!(
            out.as_primitive::<arrow::datatypes::Int32Type>()
                .values()
                .to_vec(),
            [7]
        );
    }

    #[test]
    fn bad_parameters_fail() {
        let mut acc = accumulator(Kind::Array);
        let err = acc
            .update_batch(&batch(vec![Some(1)], 0, None))
            .unwrap_err();
        assert!(err.to_string().contains("must be positive"), "{err}");
        assert_eq!(
            accumulator(Kind::Text).evaluate().unwrap(),
            ScalarValue::Utf8(None)
        );
    }
}
