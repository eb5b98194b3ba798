//! Doris's variance and standard deviation, computed as Doris computes them (BE
//! `aggregate_function_stddev.h`) so the last digits agree (`42.89781139198388` where the
//! textbook Welford update gives `42.897811391983886`):
//! - `variance` / `var_pop` / `variance_pop` and `stddev` / `stddev_pop` / `std`: population forms;
//! - `var_samp` / `variance_samp` and `stddev_samp`: sample forms.
//!
//! Each value updates a running mean and sum of squared deviations (`delta = x - mean`,
//! `r = delta / (n + 1)`, `mean += r`, `m2 += n * delta * r`); partial states merge with Chan's
//! formula. A group with one value gives 0 (both forms, as Doris); a group without values gives
//! NULL. Window frames retract values by inverting the update.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, BooleanArray, Float64Array, UInt64Array};
use arrow::datatypes::{DataType, Field, FieldRef, Float64Type, UInt64Type};
use datafusion::common::{exec_err, not_impl_err, Result, ScalarValue};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::utils::format_state_name;
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, EmitTo, GroupsAccumulator, Signature, Volatility,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Kind {
    sample: bool,
    root: bool,
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct Variance {
    kind: Kind,
    name: &'static str,
    aliases: Vec<String>,
    signature: Signature,
}

/// The four aggregates under Doris's names.
pub fn functions() -> Vec<AggregateUDF> {
    let make = |name, aliases: &[&str], sample, root| {
        AggregateUDF::new_from_impl(Variance {
            kind: Kind { sample, root },
            name,
            aliases: aliases.iter().map(|a| a.to_string()).collect(),
            signature: Signature::user_defined(Volatility::Immutable),
        })
    };
    vec![
        make("var_pop", &["variance", "variance_pop"], false, false),
        make("var_samp", &["variance_samp"], true, false),
        make("stddev_pop", &["stddev", "std"], false, true),
        make("stddev_samp", &[], true, true),
    ]
}

impl AggregateUDFImpl for Variance {
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
        crate::util::one_number_as_double(self.name, types)
    }

    fn return_type(&self, _types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Float64)
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        Ok(vec![
            Arc::new(Field::new(
                format_state_name(args.name, "count"),
                DataType::UInt64,
                true,
            )),
            Arc::new(Field::new(
                format_state_name(args.name, "mean"),
                DataType::Float64,
                true,
            )),
            Arc::new(Field::new(
                format_state_name(args.name, "m2"),
                DataType::Float64,
                true,
            )),
        ])
    }

    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        if args.is_distinct {
            return not_impl_err!("{}(DISTINCT) is not supported", self.name);
        }
        Ok(Box::new(VarianceAccumulator {
            kind: self.kind,
            moments: Moments::default(),
        }))
    }

    fn groups_accumulator_supported(&self, args: AccumulatorArgs) -> bool {
        !args.is_distinct
    }

    fn create_groups_accumulator(
        &self,
        _args: AccumulatorArgs,
    ) -> Result<Box<dyn GroupsAccumulator>> {
        Ok(Box::new(VarianceGroups {
            kind: self.kind,
            groups: Vec::new(),
        }))
    }
}

/// Count, mean and sum of squared deviations.
#[derive(Debug, Default, Clone, Copy)]
struct Moments {
    count: u64,
    mean: f64,
    m2: f64,
}

impl Moments {
    fn add(&mut self, x: f64) {
        let delta = x - self.mean;
        let r = delta / (1 + self.count) as f64;
        self.mean += r;
        self.m2 += self.count as f64 * delta * r;
        self.count += 1;
    }

    fn remove(&mut self, x: f64) {
        if self.count <= 1 {
            *self = Moments::default();
            return;
        }
        self.count -= 1;
        let delta = x - self.mean;
        self.mean -= delta / self.count as f64;
        self.m2 -= delta * (x - self.mean);
    }

    fn merge(&mut self, rhs: Moments) {
        if rhs.count == 0 {
            return;
        }
        let delta = self.mean - rhs.mean;
        let total = (self.count + rhs.count) as f64;
        self.mean = rhs.mean + delta * self.count as f64 / total;
        self.m2 = rhs.m2 + self.m2 + (delta * delta) * rhs.count as f64 * self.count as f64 / total;
        self.count += rhs.count;
    }

    fn result(&self, kind: Kind) -> Option<f64> {
        let v = match self.count {
            0 => return None,
            1 => 0.0,
            n if kind.sample => self.m2 / (n - 1) as f64,
            n => self.m2 / n as f64,
        };
        Some(if kind.root { v.sqrt() } else { v })
    }
}

/// The states in `states` (count, mean, m2 columns), row by row.
fn state_rows(states: &[ArrayRef]) -> Result<Vec<Moments>> {
    let [counts, means, m2s] = states else {
        return exec_err!("variance: malformed partial state");
    };
    let (Some(counts), Some(means), Some(m2s)) = (
        counts.as_primitive_opt::<UInt64Type>(),
        means.as_primitive_opt::<Float64Type>(),
        m2s.as_primitive_opt::<Float64Type>(),
    ) else {
        return exec_err!("variance: malformed partial state");
    };
    Ok((0..counts.len())
        .map(|i| match counts.is_null(i) {
            true => Moments::default(),
            false => Moments {
                count: counts.value(i),
                mean: means.value(i),
                m2: m2s.value(i),
            },
        })
        .collect())
}

fn values(values: &[ArrayRef]) -> Result<&Float64Array> {
    match values
        .first()
        .and_then(|v| v.as_primitive_opt::<Float64Type>())
    {
        Some(v) => Ok(v),
        None => exec_err!("variance: expected DOUBLE values"),
    }
}

#[derive(Debug)]
struct VarianceAccumulator {
    kind: Kind,
    moments: Moments,
}

impl Accumulator for VarianceAccumulator {
    fn update_batch(&mut self, batch: &[ArrayRef]) -> Result<()> {
        for x in values(batch)?.iter().flatten() {
            self.moments.add(x);
        }
        Ok(())
    }

    fn retract_batch(&mut self, batch: &[ArrayRef]) -> Result<()> {
        for x in values(batch)?.iter().flatten() {
            self.moments.remove(x);
        }
        Ok(())
    }

    fn supports_retract_batch(&self) -> bool {
        true
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        for m in state_rows(states)? {
            self.moments.merge(m);
        }
        Ok(())
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        let m = self.moments;
        Ok(vec![
            ScalarValue::UInt64(Some(m.count)),
            ScalarValue::Float64(Some(m.mean)),
            ScalarValue::Float64(Some(m.m2)),
        ])
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        Ok(ScalarValue::Float64(self.moments.result(self.kind)))
    }

    fn size(&self) -> usize {
        size_of_val(self)
    }
}

/// The GROUP BY form: one [`Moments`] per group.
struct VarianceGroups {
    kind: Kind,
    groups: Vec<Moments>,
}

impl GroupsAccumulator for VarianceGroups {
    fn update_batch(
        &mut self,
        batch: &[ArrayRef],
        group_indices: &[usize],
        opt_filter: Option<&BooleanArray>,
        total_num_groups: usize,
    ) -> Result<()> {
        self.groups.resize(total_num_groups, Moments::default());
        let xs = values(batch)?;
        for (i, &g) in group_indices.iter().enumerate() {
            let passes = opt_filter.is_none_or(|f| f.is_valid(i) && f.value(i));
            if passes && xs.is_valid(i) {
                self.groups[g].add(xs.value(i));
            }
        }
        Ok(())
    }

    fn merge_batch(
        &mut self,
        states: &[ArrayRef],
        group_indices: &[usize],
        total_num_groups: usize,
    ) -> Result<()> {
        self.groups.resize(total_num_groups, Moments::default());
        for (m, &g) in state_rows(states)?.into_iter().zip(group_indices) {
            self.groups[g].merge(m);
        }
        Ok(())
    }

    fn evaluate(&mut self, emit_to: EmitTo) -> Result<ArrayRef> {
        let groups = emit_to.take_needed(&mut self.groups);
        let out: Float64Array = groups.iter().map(|m| m.result(self.kind)).collect();
        Ok(Arc::new(out))
    }

    fn state(&mut self, emit_to: EmitTo) -> Result<Vec<ArrayRef>> {
        let groups = emit_to.take_needed(&mut self.groups);
        let counts: UInt64Array = groups.iter().map(|m| Some(m.count)).collect();
        let means: Float64Array = groups.iter().map(|m| Some(m.mean)).collect();
        let m2s: Float64Array = groups.iter().map(|m| Some(m.m2)).collect();
        Ok(vec![Arc::new(counts), Arc::new(means), Arc::new(m2s)])
    }

    /// Each row as a state of its own (one value: count 1, mean the value, m2 0).
    fn convert_to_state(
        &self,
        batch: &[ArrayRef],
        opt_filter: Option<&BooleanArray>,
    ) -> Result<Vec<ArrayRef>> {
        let xs = values(batch)?;
        let kept =
            |i: usize| xs.is_valid(i) && opt_filter.is_none_or(|f| f.is_valid(i) && f.value(i));
        let counts: UInt64Array = (0..xs.len()).map(|i| Some(u64::from(kept(i)))).collect();
        let means: Float64Array = (0..xs.len())
            .map(|i| Some(if kept(i) { xs.value(i) } else { 0.0 }))
            .collect();
        let m2s = Float64Array::from(vec![0.0; xs.len()]);
        Ok(vec![Arc::new(counts), Arc::new(means), Arc::new(m2s)])
    }

    fn size(&self) -> usize {
        self.groups.capacity() * size_of::<Moments>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const POP: Kind = Kind {
        sample: false,
        root: false,
    };

    #[test]
    fn digits_as_doris() {
        let mut m = Moments::default();
        for x in [1.0, 20.0, 100.0] {
            m.add(x);
        }
        assert_eq!(m.result(POP), Some(1840.222222222222));
        let root = Kind {
            sample: false,
            root: true,
        };
        assert_eq!(m.result(root), Some(42.89781139198388));
        let samp = Kind {
            sample: true,
            root: false,
        };
        assert_eq!(m.result(samp), Some(2760.333333333333));
    }

    #[test]
    fn merges_retracts_and_degenerate_groups() {
        let (mut a, mut b) = (Moments::default(), Moments::default());
        [1.0, 2.0].iter().for_each(|&x| a.add(x));
        [3.0, 4.0].iter().for_each(|&x| b.add(x));
        a.merge(b);
        assert_eq!(a.result(POP), Some(1.25));
        a.remove(4.0);
        assert!((a.result(POP).unwrap() - 2.0 / 3.0).abs() < 1e-12);
        let mut one = Moments::default();
        assert_eq!(one.result(POP), None);
        one.add(7.0);
        assert_eq!(
            one.result(Kind {
                sample: true,
                root: true
            }),
            Some(0.0)
        );
    }
}
