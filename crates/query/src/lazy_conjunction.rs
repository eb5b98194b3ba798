//! A filter's conjunction evaluated in steps: the cheap conjuncts on the whole batch first,
//! then each costly one (a string search) only on the rows still selected, so
//! `dt BETWEEN .. AND url LIKE '%x%'` searches the text of the rows within the dates only.
//! DataFusion's AND does this only when its left side keeps at most a fifth of the rows.
//!
//! Only for filter predicates: a NULL conjunct counts as false (a filter keeps true rows
//! only), so the result has no NULLs.

use datafusion::arrow::array::{Array, AsArray, BooleanArray, BooleanBufferBuilder};
use datafusion::arrow::buffer::BooleanBuffer;
use datafusion::arrow::compute::FilterBuilder;
use datafusion::arrow::datatypes::{DataType, Schema};
use datafusion::arrow::record_batch::{RecordBatch, RecordBatchOptions};
use datafusion::common::tree_node::{Transformed, TransformedResult, TreeNode};
use datafusion::common::{exec_err, Result, ScalarValue};
use datafusion::logical_expr::ColumnarValue;
use datafusion::physical_expr::expressions::Column;
use datafusion::physical_expr::utils::collect_columns;
use datafusion::physical_expr::PhysicalExpr;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// Above this share of selected rows a step runs on the whole batch (filtering the columns
/// first would cost more than it saves).
const WHOLE_BATCH_SHARE: f64 = 0.9;

/// One conjunct, with the columns it reads and itself rewritten to read them alone.
#[derive(Debug)]
struct Step {
    expr: Arc<dyn PhysicalExpr>,
    columns: Vec<usize>,
    narrow_expr: Arc<dyn PhysicalExpr>,
}

impl Step {
    fn new(expr: Arc<dyn PhysicalExpr>) -> Result<Step> {
        let mut columns: Vec<usize> = collect_columns(&expr).iter().map(|c| c.index()).collect();
        columns.sort_unstable();
        columns.dedup();
        let narrow_expr = expr
            .clone()
            .transform_up(|e| match e.downcast_ref::<Column>() {
                Some(c) => {
                    let at = columns.iter().position(|&i| i == c.index()).unwrap_or(0);
                    Ok(Transformed::yes(
                        Arc::new(Column::new(c.name(), at)) as Arc<dyn PhysicalExpr>
                    ))
                }
                None => Ok(Transformed::no(e)),
            })
            .data()?;
        Ok(Step {
            expr,
            columns,
            narrow_expr,
        })
    }

    /// The step's truth on the rows of `selected` (none outside it).
    fn evaluate(&self, batch: &RecordBatch, selected: &BooleanBuffer) -> Result<BooleanBuffer> {
        let rows = batch.num_rows();
        let count = selected.count_set_bits();
        if count == 0 {
            return Ok(selected.clone());
        }
        if count as f64 >= rows as f64 * WHOLE_BATCH_SHARE {
            return Ok(&truth(self.expr.evaluate(batch)?, rows)? & selected);
        }
        let mask = BooleanArray::new(selected.clone(), None);
        let filter = FilterBuilder::new(&mask).optimize().build();
        let columns = self
            .columns
            .iter()
            .map(|&c| filter.filter(batch.column(c)))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        let options = RecordBatchOptions::new().with_row_count(Some(count));
        let narrow_schema = Arc::new(batch.schema_ref().project(&self.columns)?);
        let narrow = RecordBatch::try_new_with_options(narrow_schema, columns, &options)?;
        let found = truth(self.narrow_expr.evaluate(&narrow)?, count)?;
        // Back to the batch's rows.
        let mut out = BooleanBufferBuilder::new(rows);
        out.append_n(rows, false);
        for (j, row) in selected.set_indices().enumerate() {
            if found.value(j) {
                out.set_bit(row, true);
            }
        }
        Ok(out.finish())
    }
}

/// A boolean result as true/false per row (NULL is false).
fn truth(value: ColumnarValue, rows: usize) -> Result<BooleanBuffer> {
    match value {
        ColumnarValue::Array(a) => {
            let Some(b) = a.as_boolean_opt() else {
                return exec_err!("a filter conjunct gave {}, not BOOLEAN", a.data_type());
            };
            Ok(match b.nulls() {
                Some(nulls) => b.values() & nulls.inner(),
                None => b.values().clone(),
            })
        }
        ColumnarValue::Scalar(ScalarValue::Boolean(Some(true))) => Ok(BooleanBuffer::new_set(rows)),
        ColumnarValue::Scalar(ScalarValue::Boolean(_)) => Ok(BooleanBuffer::new_unset(rows)),
        ColumnarValue::Scalar(other) => {
            exec_err!("a filter conjunct gave {}, not BOOLEAN", other.data_type())
        }
    }
}

/// `first AND later[0] AND later[1] ..`, each later step on the rows still selected.
#[derive(Debug)]
pub(crate) struct LazyConjunction {
    first: Arc<dyn PhysicalExpr>,
    later: Vec<Step>,
}

impl LazyConjunction {
    /// `first` runs on whole batches; `later` (in order) on what is left.
    pub(crate) fn new(
        first: Arc<dyn PhysicalExpr>,
        later: Vec<Arc<dyn PhysicalExpr>>,
    ) -> Result<LazyConjunction> {
        let later = later.into_iter().map(Step::new).collect::<Result<_>>()?;
        Ok(LazyConjunction { first, later })
    }
}

impl PartialEq for LazyConjunction {
    fn eq(&self, other: &Self) -> bool {
        self.first.eq(&other.first)
            && self.later.len() == other.later.len()
            && self
                .later
                .iter()
                .zip(&other.later)
                .all(|(a, b)| a.expr.eq(&b.expr))
    }
}

impl Eq for LazyConjunction {}

impl Hash for LazyConjunction {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.first.hash(state);
        for s in &self.later {
            s.expr.hash(state);
        }
    }
}

impl fmt::Display for LazyConjunction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.first)?;
        for s in &self.later {
            write!(f, " AND {}", s.expr)?;
        }
        Ok(())
    }
}

impl PhysicalExpr for LazyConjunction {
    fn data_type(&self, _input_schema: &Schema) -> Result<DataType> {
        Ok(DataType::Boolean)
    }

    fn nullable(&self, _input_schema: &Schema) -> Result<bool> {
        Ok(false)
    }

    fn evaluate(&self, batch: &RecordBatch) -> Result<ColumnarValue> {
        let rows = batch.num_rows();
        let mut selected = truth(self.first.evaluate(batch)?, rows)?;
        for step in &self.later {
            selected = step.evaluate(batch, &selected)?;
        }
        Ok(ColumnarValue::Array(Arc::new(BooleanArray::new(
            selected, None,
        ))))
    }

    fn children(&self) -> Vec<&Arc<dyn PhysicalExpr>> {
        std::iter::once(&self.first)
            .chain(self.later.iter().map(|s| &s.expr))
            .collect()
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn PhysicalExpr>>,
    ) -> Result<Arc<dyn PhysicalExpr>> {
        if children.len() != self.later.len() + 1 {
            return exec_err!("a lazy conjunction got {} children", children.len());
        }
        let mut children = children.into_iter();
        let first = children.next().unwrap_or_else(|| self.first.clone());
        LazyConjunction::new(first, children.collect()).map(|c| Arc::new(c) as _)
    }

    fn fmt_sql(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.first.fmt_sql(f)?;
        for s in &self.later {
            write!(f, " AND ")?;
            s.expr.fmt_sql(f)?;
        }
        Ok(())
    }
}
