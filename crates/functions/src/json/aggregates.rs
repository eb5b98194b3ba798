//! MySQL's JSON aggregates: `JSON_ARRAYAGG(x)`, the group's values as a JSON array (NULL
//! values as JSON null, JSON values nested, `DISTINCT` keeping the first of equal values), and
//! `JSON_OBJECTAGG(key, value)`, the group's pairs as a JSON object (a key seen again keeps
//! the value read last; a NULL key is an error). A group without rows gives NULL. A partial
//! state is the JSON text of what its rows gave so far. `JSON_ARRAYAGG(x ORDER BY ..)`
//! (MariaDB's form) orders the array by the keys: each value is kept with its sort key in
//! arrow's row format (bytes that compare in the requested order), and a partial state is then
//! the JSON array of `[hex key, value]` pairs, so merged states still sort right.

use super::functions::{json_field, sql_value};
use basalt_common::is_json_field;
use datafusion::arrow::array::{Array, ArrayRef, AsArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::arrow::row::{RowConverter, SortField};
use datafusion::common::{exec_err, plan_err, Result, ScalarValue};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::utils::format_state_name;
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, Signature, Volatility,
};
use serde_json::{Map, Value};
use std::sync::Arc;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    Array,
    Object,
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct JsonAggregate {
    name: &'static str,
    kind: Kind,
    signature: Signature,
}

/// `json_arrayagg` and `json_objectagg`.
pub fn functions() -> Vec<AggregateUDF> {
    [
        ("json_arrayagg", Kind::Array, 1),
        ("json_objectagg", Kind::Object, 2),
    ]
    .into_iter()
    .map(|(name, kind, n)| {
        AggregateUDF::new_from_impl(JsonAggregate {
            name,
            kind,
            signature: Signature::any(n, Volatility::Immutable),
        })
    })
    .collect()
}

impl AggregateUDFImpl for JsonAggregate {
    fn name(&self) -> &str {
        self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Utf8)
    }

    fn return_field(&self, arg_fields: &[FieldRef]) -> Result<FieldRef> {
        for f in arg_fields {
            if f.data_type().is_nested() {
                return plan_err!("{} does not take {}", self.name, f.data_type());
            }
        }
        Ok(Arc::new(json_field(self.name)))
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        Ok(vec![Arc::new(Field::new(
            format_state_name(args.name, "json"),
            DataType::Utf8,
            true,
        ))])
    }

    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        if args.is_distinct && self.kind == Kind::Object {
            return plan_err!("{}(DISTINCT ...) is not supported", self.name);
        }
        let json_args = args.expr_fields.iter().map(|f| is_json_field(f)).collect();
        let order = match (self.kind, args.order_bys.is_empty()) {
            (Kind::Array, false) => {
                let fields = args
                    .order_bys
                    .iter()
                    .map(|o| {
                        Ok(SortField::new_with_options(
                            o.expr.data_type(args.schema)?,
                            o.options,
                        ))
                    })
                    .collect::<Result<Vec<_>>>()?;
                Some(RowConverter::new(fields)?)
            }
            _ => None,
        };
        Ok(Box::new(JsonAccumulator {
            kind: self.kind,
            distinct: args.is_distinct,
            json_args,
            items: Vec::new(),
            members: Map::new(),
            rows: 0,
            order,
            keyed: Vec::new(),
        }))
    }
}

#[derive(Debug)]
struct JsonAccumulator {
    kind: Kind,
    distinct: bool,
    /// Which arguments are JSON (nested as documents, not quoted as text).
    json_args: Vec<bool>,
    items: Vec<Value>,
    members: Map<String, Value>,
    /// Rows (or merged states) seen: none means the group's result is NULL.
    rows: usize,
    /// `ORDER BY` of an array: the converter of its keys to sortable bytes.
    order: Option<RowConverter>,
    /// With `order`: every value with its sort key, sorted when the array is made.
    keyed: Vec<(Vec<u8>, Value)>,
}

impl JsonAccumulator {
    fn push(&mut self, v: Value) {
        if !(self.distinct && self.items.contains(&v)) {
            self.items.push(v);
        }
    }

    fn document(&self) -> Value {
        match self.kind {
            Kind::Array if self.order.is_some() => {
                let mut keyed: Vec<&(Vec<u8>, Value)> = self.keyed.iter().collect();
                keyed.sort_by(|a, b| a.0.cmp(&b.0));
                let mut items: Vec<Value> = Vec::with_capacity(keyed.len());
                for (_, v) in keyed {
                    if !(self.distinct && items.contains(v)) {
                        items.push(v.clone());
                    }
                }
                Value::Array(items)
            }
            Kind::Array => Value::Array(self.items.clone()),
            Kind::Object => Value::Object(self.members.clone()),
        }
    }

    /// The partial state: the document, or with `order` the `[hex key, value]` pairs.
    fn state_text(&self) -> String {
        if self.order.is_none() {
            return self.document().to_string();
        }
        let pairs = self
            .keyed
            .iter()
            .map(|(k, v)| Value::Array(vec![Value::String(to_hex(k)), v.clone()]))
            .collect();
        Value::Array(pairs).to_string()
    }

    fn merge_pairs(&mut self, pairs: Vec<Value>) -> Result<()> {
        for pair in pairs {
            let Value::Array(mut parts) = pair else {
                return exec_err!("json aggregate: malformed partial state");
            };
            let (Some(v), Some(Value::String(k))) = (parts.pop(), parts.pop()) else {
                return exec_err!("json aggregate: malformed partial state");
            };
            let Some(key) = from_hex(&k) else {
                return exec_err!("json aggregate: malformed partial state");
            };
            self.keyed.push((key, v));
        }
        Ok(())
    }
}

fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn from_hex(text: &str) -> Option<Vec<u8>> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

impl Accumulator for JsonAccumulator {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let rows = values.first().map_or(0, |a| a.len());
        if let Some(order) = &self.order {
            let keys = order.convert_columns(values.get(1..).unwrap_or_default())?;
            for row in 0..rows {
                let scalar = ScalarValue::try_from_array(&values[0], row)?;
                let v = sql_value(&scalar, self.json_args.first().copied().unwrap_or(false))?;
                self.keyed.push((keys.row(row).as_ref().to_vec(), v));
                self.rows += 1;
            }
            return Ok(());
        }
        for row in 0..rows {
            let value = |i: usize| -> Result<Value> {
                let scalar = ScalarValue::try_from_array(&values[i], row)?;
                sql_value(&scalar, self.json_args.get(i).copied().unwrap_or(false))
            };
            match self.kind {
                Kind::Array => {
                    let v = value(0)?;
                    self.push(v);
                }
                Kind::Object => {
                    let key = match value(0)? {
                        Value::Null => {
                            return exec_err!("JSON documents may not contain NULL member names.")
                        }
                        Value::String(s) => s,
                        other => other.to_string(),
                    };
                    let v = value(1)?;
                    self.members.insert(key, v);
                }
            }
            self.rows += 1;
        }
        Ok(())
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let Some(state) = states.first() else {
            return exec_err!("json aggregate: malformed partial state");
        };
        let text = cast(state, &DataType::Utf8)?;
        for doc in text.as_string::<i32>().iter().flatten() {
            match serde_json::from_str::<Value>(doc) {
                Ok(Value::Array(pairs)) if self.order.is_some() => self.merge_pairs(pairs)?,
                Ok(Value::Array(items)) => items.into_iter().for_each(|v| self.push(v)),
                Ok(Value::Object(m)) => self.members.extend(m),
                _ => return exec_err!("json aggregate: malformed partial state"),
            }
            self.rows += 1;
        }
        Ok(())
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        Ok(vec![ScalarValue::Utf8(
            (self.rows > 0).then(|| self.state_text()),
        )])
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        Ok(ScalarValue::Utf8(
            (self.rows > 0).then(|| self.document().to_string()),
        ))
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self)
            + self
                .items
                .iter()
                .map(|v| v.to_string().len())
                .sum::<usize>()
            + self
                .members
                .iter()
                .map(|(k, v)| k.len() + v.to_string().len())
                .sum::<usize>()
            + self
                .keyed
                .iter()
                .map(|(k, v)| k.len() + v.to_string().len())
                .sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{Int64Array, StringArray};

    fn accumulator(kind: Kind, distinct: bool) -> JsonAccumulator {
        JsonAccumulator {
            kind,
            distinct,
            json_args: vec![false, false],
            items: Vec::new(),
            members: Map::new(),
            rows: 0,
            order: None,
            keyed: Vec::new(),
        }
    }

    #[test]
    fn arrays_keep_nulls_and_distinct_drops_repeats() {
        let mut acc = accumulator(Kind::Array, true);
        let values: ArrayRef = Arc::new(Int64Array::from(vec![Some(1), None, Some(1), Some(2)]));
        acc.update_batch(&[values]).unwrap();
        assert_eq!(
            acc.evaluate().unwrap(),
            ScalarValue::Utf8(Some("[1,null,2]".into()))
        );
        assert_eq!(
            accumulator(Kind::Array, false).evaluate().unwrap(),
            ScalarValue::Utf8(None)
        );
    }

    #[test]
    fn objects_take_the_later_value_and_refuse_null_keys() {
        let mut acc = accumulator(Kind::Object, false);
        let keys: ArrayRef = Arc::new(StringArray::from(vec!["a", "b", "a"]));
        let values: ArrayRef = Arc::new(Int64Array::from(vec![1, 2, 3]));
        acc.update_batch(&[keys, values.clone()]).unwrap();
        let state = acc.state().unwrap()[0].to_array().unwrap();
        let mut merged = accumulator(Kind::Object, false);
        merged.merge_batch(&[state]).unwrap();
        assert_eq!(
            merged.evaluate().unwrap(),
            ScalarValue::Utf8(Some(r#"{"a":3,"b":2}"#.into()))
        );
        let null_key: ArrayRef = Arc::new(StringArray::from(vec![None::<&str>]));
        let one: ArrayRef = Arc::new(Int64Array::from(vec![1]));
        assert!(acc.update_batch(&[null_key, one]).is_err());
    }
}
