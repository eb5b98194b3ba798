//! The rows `ORDER BY .. LIMIT n` picks for an UPDATE or DELETE on a Duplicate- or
//! Aggregate-key table. Such rows have no identity a statement could name, so the pick is made
//! by their values: `SELECT <every column> FROM t WHERE .. ORDER BY .. LIMIT n` runs first (with
//! loads held back, so the tablets rewritten next hold the same rows), and its rows become a
//! multiset of whole-row values. While the tablets are rewritten, a matching row is picked
//! when an equal row is still left in that multiset. Rows equal in every column cannot be told
//! apart, so which of them is picked changes nothing: the table ends as MySQL's statement
//! leaves it (MySQL, too, picks any of the rows tied in the ORDER BY at the limit).

use crate::engine::QueryEngine;
use crate::session::Session;
use basalt_common::df_error::from_df;
use basalt_common::{BasaltError, Result};
use basalt_sql::ast;
use datafusion::arrow::array::{Array, ArrayRef, BooleanArray, RecordBatch};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::DataType;
use datafusion::arrow::row::{RowConverter, SortField};
use datafusion::dataframe::DataFrame;
use parking_lot::Mutex;
use std::collections::HashMap;

impl QueryEngine {
    /// Runs `query` (`SELECT <every column> FROM t WHERE .. ORDER BY .. LIMIT n`, see
    /// `dml::row_query`) and keeps its rows as the ones the statement picked.
    pub(super) async fn pick_rows(
        &self,
        session: &Session,
        query: ast::Query,
    ) -> Result<PickedRows> {
        let stmt = ast::Statement::Query(Box::new(query));
        let (state, logical) = self.plan_checked(session, stmt).await?;
        let batches = DataFrame::new(state, logical)
            .collect()
            .await
            .map_err(from_df)?;
        PickedRows::new(&batches)
    }
}

/// The whole-row values a statement's ORDER BY .. LIMIT picked, each with how many times.
pub(super) struct PickedRows {
    /// The column types the rows were picked in (as scans give them); rows are compared in them.
    types: Vec<DataType>,
    converter: RowConverter,
    counts: HashMap<Vec<u8>, usize>,
}

impl PickedRows {
    /// The rows of `batches` (every column of the table, in order).
    pub fn new(batches: &[RecordBatch]) -> Result<PickedRows> {
        let types: Vec<DataType> = match batches.first() {
            Some(b) => b
                .schema()
                .fields()
                .iter()
                .map(|f| f.data_type().clone())
                .collect(),
            None => Vec::new(),
        };
        let converter = RowConverter::new(types.iter().cloned().map(SortField::new).collect())
            .map_err(internal)?;
        let mut counts = HashMap::new();
        for batch in batches {
            let rows = converter
                .convert_columns(batch.columns())
                .map_err(internal)?;
            for row in rows.iter() {
                *counts.entry(row.as_ref().to_vec()).or_insert(0) += 1;
            }
        }
        Ok(PickedRows {
            types,
            converter,
            counts,
        })
    }

    /// A fresh pick over the rewrite's tablets (each attempt of a rewrite starts afresh).
    pub fn picking(&self) -> Picking<'_> {
        Picking {
            picked: self,
            left: Mutex::new(self.counts.clone()),
        }
    }
}

/// The picked rows not yet found in the tablets rewritten so far.
pub(super) struct Picking<'a> {
    picked: &'a PickedRows,
    left: Mutex<HashMap<Vec<u8>, usize>>,
}

impl Picking<'_> {
    /// Of `rows` (the table's columns), those `candidates` marks (the WHERE's matches) whose
    /// values are still left to pick; they are taken off what is left.
    pub fn take(&self, rows: &RecordBatch, candidates: &BooleanArray) -> Result<BooleanArray> {
        if self.picked.counts.is_empty() || candidates.true_count() == 0 {
            return Ok(BooleanArray::from(vec![false; rows.num_rows()]));
        }
        if rows.num_columns() != self.picked.types.len() {
            return Err(BasaltError::Internal(
                "ORDER BY .. LIMIT picked rows of another shape".into(),
            ));
        }
        let columns = rows
            .columns()
            .iter()
            .zip(&self.picked.types)
            .map(|(c, ty)| {
                if c.data_type() == ty {
                    Ok(c.clone())
                } else {
                    cast(c, ty)
                }
            })
            .collect::<std::result::Result<Vec<ArrayRef>, _>>()
            .map_err(internal)?;
        let converted = self
            .picked
            .converter
            .convert_columns(&columns)
            .map_err(internal)?;
        let mut left = self.left.lock();
        Ok((0..rows.num_rows())
            .map(|i| {
                if !(candidates.is_valid(i) && candidates.value(i)) {
                    return Some(false);
                }
                let take = match left.get_mut(converted.row(i).as_ref()) {
                    Some(n) if *n > 0 => {
                        *n -= 1;
                        true
                    }
                    _ => false,
                };
                Some(take)
            })
            .collect())
    }
}

fn internal(e: impl std::fmt::Display) -> BasaltError {
    BasaltError::Internal(e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{Int32Array, StringArray};
    use datafusion::arrow::datatypes::{Field, Schema};
    use std::sync::Arc;

    fn batch(a: Vec<i32>, b: Vec<&str>) -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![
            Field::new("a", DataType::Int32, true),
            Field::new("b", DataType::Utf8, true),
        ]));
        RecordBatch::try_new(
            schema,
            vec![
                Arc::new(Int32Array::from(a)),
                Arc::new(StringArray::from(b)),
            ],
        )
        .unwrap()
    }

    #[test]
    fn picks_each_row_as_often_as_it_was_picked() {
        let picked = PickedRows::new(&[batch(vec![1, 1, 2], vec!["x", "x", "y"])]).unwrap();
        let picking = picked.picking();
        let rows = batch(vec![1, 2, 1, 1, 3], vec!["x", "y", "x", "x", "x"]);
        let all = BooleanArray::from(vec![true; 5]);
        let taken = picking.take(&rows, &all).unwrap();
        assert_eq!(
            taken.iter().collect::<Vec<_>>(),
            [true, true, true, false, false].map(Some)
        );
        // Nothing is left for the next tablet; a fresh pick starts again.
        assert_eq!(picking.take(&rows, &all).unwrap().true_count(), 0);
        assert_eq!(picked.picking().take(&rows, &all).unwrap().true_count(), 3);
    }

    #[test]
    fn only_candidates_are_picked() {
        let picked = PickedRows::new(&[batch(vec![1], vec!["x"])]).unwrap();
        let rows = batch(vec![1, 1], vec!["x", "x"]);
        let candidates = BooleanArray::from(vec![false, true]);
        let taken = picked.picking().take(&rows, &candidates).unwrap();
        assert_eq!(taken.iter().collect::<Vec<_>>(), [false, true].map(Some));
    }
}
