//! The aggregates over a group's timed events — `window_funnel`, `sequence_match` and
//! `sequence_count`. Each keeps the group's events as (timestamp in microseconds, bits of the
//! conditions that hold), ordered by time only when the answer is computed; partial states are
//! two lists, so the aggregation splits over partitions and backends like any other.
//!
//! Leading constant arguments (the window and mode, or the pattern) are read once from the
//! plan. Rows with a NULL timestamp are skipped; a NULL condition does not hold; events that
//! match no condition are dropped unless the answer depends on them (`fixed` funnels).

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, BooleanArray, Int64Array, ListArray, UInt64Array};
use arrow::buffer::{OffsetBuffer, ScalarBuffer};
use arrow::datatypes::{
    DataType, Field, FieldRef, Int64Type, TimeUnit, TimestampMicrosecondType, UInt64Type,
};
use datafusion::common::{exec_err, plan_err, Result, ScalarValue};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::utils::format_state_name;
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, ColumnarValue, Signature, Volatility,
};

use super::sequence_pattern::Pattern;
use super::window_funnel::{self, Mode};

/// Conditions an event can carry (one bit each).
const MAX_CONDITIONS: usize = 64;

const TIMESTAMP: DataType = DataType::Timestamp(TimeUnit::Microsecond, None);

/// Which answer an event-log aggregate computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Analysis {
    WindowFunnel,
    SequenceMatch,
    SequenceCount,
}

impl Analysis {
    fn name(self) -> &'static str {
        match self {
            Analysis::WindowFunnel => "window_funnel",
            Analysis::SequenceMatch => "sequence_match",
            Analysis::SequenceCount => "sequence_count",
        }
    }

    /// Constant arguments before the timestamp.
    fn constants(self) -> usize {
        match self {
            Analysis::WindowFunnel => 2,
            Analysis::SequenceMatch | Analysis::SequenceCount => 1,
        }
    }
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct EventLog {
    analysis: Analysis,
    signature: Signature,
}

pub(super) fn function(analysis: Analysis) -> AggregateUDF {
    AggregateUDF::new_from_impl(EventLog {
        analysis,
        signature: Signature::user_defined(Volatility::Immutable),
    })
}

impl AggregateUDFImpl for EventLog {
    fn name(&self) -> &str {
        self.analysis.name()
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        let name = self.name();
        let constants = self.analysis.constants();
        crate::util::expect_args(name, types, constants + 2, constants + 1 + MAX_CONDITIONS)?;
        types
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let want = match (self.analysis, i) {
                    (Analysis::WindowFunnel, 0) if t.is_integer() || t.is_null() => DataType::Int64,
                    (Analysis::WindowFunnel, 0) => {
                        return plan_err!("{name}: the window must be an integer, not {t}")
                    }
                    (_, i) if i + 1 == constants => {
                        if !matches!(t, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View) {
                            return plan_err!("{name}: argument {} must be a string", i + 1);
                        }
                        DataType::Utf8
                    }
                    (_, i) if i == constants => match t {
                        DataType::Timestamp(_, _)
                        | DataType::Date32
                        | DataType::Date64
                        | DataType::Null => TIMESTAMP,
                        _ => return plan_err!("{name}: the timestamp must be a DATETIME, not {t}"),
                    },
                    _ => match t {
                        DataType::Boolean | DataType::Null => DataType::Boolean,
                        _ => return plan_err!("{name}: a condition must be BOOLEAN, not {t}"),
                    },
                };
                Ok(want)
            })
            .collect()
    }

    fn return_type(&self, _types: &[DataType]) -> Result<DataType> {
        Ok(match self.analysis {
            Analysis::WindowFunnel => DataType::Int32,
            Analysis::SequenceMatch => DataType::Boolean,
            Analysis::SequenceCount => DataType::Int64,
        })
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        let list = |what: &str, t: DataType| {
            Arc::new(Field::new(
                format_state_name(args.name, what),
                DataType::List(Arc::new(Field::new_list_field(t, false))),
                true,
            ))
        };
        Ok(vec![
            list("timestamps", DataType::Int64),
            list("conditions", DataType::UInt64),
            Arc::new(Field::new(
                format_state_name(args.name, "rows"),
                DataType::Int64,
                true,
            )),
        ])
    }

    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        let name = self.name();
        if args.is_distinct {
            return plan_err!("{name}(DISTINCT ...) is not supported");
        }
        let constants = self.analysis.constants();
        let conditions = args.exprs.len().saturating_sub(constants + 1);
        let answer = match self.analysis {
            Analysis::WindowFunnel => {
                let window = match constant(&args, 0, name)? {
                    ScalarValue::Int64(Some(w)) if w >= 0 => w,
                    _ => return plan_err!("{name}: the window must be a non-negative constant"),
                };
                let mode = match constant(&args, 1, name)? {
                    ScalarValue::Utf8(Some(m)) => Mode::parse(name, &m)?,
                    _ => return plan_err!("{name}: the mode must be a constant string"),
                };
                Answer::Funnel {
                    window: window.saturating_mul(1_000_000),
                    mode,
                    levels: conditions,
                }
            }
            Analysis::SequenceMatch | Analysis::SequenceCount => {
                let pattern = match constant(&args, 0, name)? {
                    ScalarValue::Utf8(Some(p)) => Pattern::parse(name, &p, conditions)?,
                    _ => return plan_err!("{name}: the pattern must be a constant string"),
                };
                if self.analysis == Analysis::SequenceMatch {
                    Answer::Match(pattern)
                } else {
                    Answer::Count(pattern)
                }
            }
        };
        Ok(Box::new(EventLogAccumulator {
            name: self.analysis.name(),
            constants,
            answer,
            events: Vec::new(),
            rows: 0,
        }))
    }
}

/// The value of constant argument `i`.
fn constant(args: &AccumulatorArgs, i: usize, name: &str) -> Result<ScalarValue> {
    let Some(expr) = args.exprs.get(i) else {
        return plan_err!("{name}: missing argument {}", i + 1);
    };
    let empty = arrow::array::RecordBatch::new_empty(Arc::new(args.schema.clone()));
    match expr.evaluate(&empty) {
        Ok(ColumnarValue::Scalar(v)) => Ok(v),
        _ => plan_err!("{name}: argument {} must be a constant", i + 1),
    }
}

#[derive(Debug)]
enum Answer {
    Funnel {
        window: i64,
        mode: Mode,
        levels: usize,
    },
    Match(Pattern),
    Count(Pattern),
}

impl Answer {
    fn keeps_unmatched(&self) -> bool {
        matches!(self, Answer::Funnel { mode, .. } if mode.keeps_unmatched())
    }
}

#[derive(Debug)]
struct EventLogAccumulator {
    name: &'static str,
    constants: usize,
    answer: Answer,
    /// (timestamp in microseconds, condition bits), in arrival order until evaluated.
    events: Vec<(i64, u64)>,
    /// Rows with a timestamp, matched or not.
    rows: i64,
}

impl Accumulator for EventLogAccumulator {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let Some(times) = values
            .get(self.constants)
            .and_then(|a| a.as_primitive_opt::<TimestampMicrosecondType>())
        else {
            return exec_err!("{}: the timestamp is not a DATETIME", self.name);
        };
        let conditions: Vec<&BooleanArray> = values[self.constants + 1..]
            .iter()
            .map(|a| a.as_boolean_opt())
            .collect::<Option<_>>()
            .map_or_else(
                || exec_err!("{}: a condition is not BOOLEAN", self.name),
                Ok,
            )?;
        let keep_unmatched = self.answer.keeps_unmatched();
        for row in 0..times.len() {
            if times.is_null(row) {
                continue;
            }
            self.rows += 1;
            let mut bits = 0u64;
            for (c, column) in conditions.iter().enumerate() {
                if column.is_valid(row) && column.value(row) {
                    bits |= 1 << c;
                }
            }
            if bits != 0 || keep_unmatched {
                self.events.push((times.value(row), bits));
            }
        }
        Ok(())
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let (Some(times), Some(bits), Some(rows)) = (
            states[0].as_list_opt::<i32>(),
            states[1].as_list_opt::<i32>(),
            states[2].as_primitive_opt::<Int64Type>(),
        ) else {
            return exec_err!("{}: unexpected partial state", self.name);
        };
        for row in 0..times.len() {
            if times.is_null(row) || bits.is_null(row) {
                continue;
            }
            let t = times.value(row);
            let b = bits.value(row);
            let (Some(t), Some(b)) = (
                t.as_primitive_opt::<Int64Type>(),
                b.as_primitive_opt::<UInt64Type>(),
            ) else {
                return exec_err!("{}: unexpected partial state", self.name);
            };
            if t.len() != b.len() {
                return exec_err!("{}: inconsistent partial state", self.name);
            }
            self.events
                .extend(t.values().iter().copied().zip(b.values().iter().copied()));
            self.rows += rows.value(row);
        }
        Ok(())
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        let one_list = |values: ArrayRef, t: DataType| {
            let len = values.len() as i32;
            ScalarValue::List(Arc::new(ListArray::new(
                Arc::new(Field::new_list_field(t, false)),
                OffsetBuffer::new(ScalarBuffer::from(vec![0, len])),
                values,
                None,
            )))
        };
        let times: Int64Array = self.events.iter().map(|e| e.0).collect::<Vec<_>>().into();
        let bits: UInt64Array = self.events.iter().map(|e| e.1).collect::<Vec<_>>().into();
        Ok(vec![
            one_list(Arc::new(times), DataType::Int64),
            one_list(Arc::new(bits), DataType::UInt64),
            ScalarValue::Int64(Some(self.rows)),
        ])
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        // By time; at equal times, lower conditions first (a deterministic order, whatever
        // order the partitions' events arrived in).
        self.events.sort_unstable();
        let events = &self.events;
        Ok(match &self.answer {
            Answer::Funnel {
                window,
                mode,
                levels,
            } => ScalarValue::Int32(Some(window_funnel::level(events, *levels, *window, *mode))),
            Answer::Match(_) | Answer::Count(_) if self.rows == 0 => match self.answer {
                Answer::Match(_) => ScalarValue::Boolean(None),
                _ => ScalarValue::Int64(Some(0)),
            },
            Answer::Match(p) => ScalarValue::Boolean(Some(p.matches(self.name, events)?)),
            Answer::Count(p) => ScalarValue::Int64(Some(p.count(self.name, events)?)),
        })
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self) + self.events.capacity() * std::mem::size_of::<(i64, u64)>()
    }
}
