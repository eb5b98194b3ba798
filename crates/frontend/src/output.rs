//! What executing a statement produces: a streamed result set or an OK with counts.

use basalt_common::BasaltError;
use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::SchemaRef;

/// Record batches of a result, produced lazily.
pub type BatchStream = futures::stream::BoxStream<'static, Result<RecordBatch, BasaltError>>;

pub enum Output {
    Rows {
        schema: SchemaRef,
        stream: BatchStream,
    },
    Ok {
        affected_rows: u64,
        last_insert_id: u64,
        info: String,
    },
    /// Several results in order (a CALL: its result sets, then its OK); an error ends them.
    /// Parts are never `Multiple` themselves.
    Multiple(Vec<Result<Output, BasaltError>>),
}

impl Output {
    pub fn ok() -> Output {
        Output::Ok {
            affected_rows: 0,
            last_insert_id: 0,
            info: String::new(),
        }
    }

    pub fn affected(rows: u64) -> Output {
        Output::Ok {
            affected_rows: rows,
            last_insert_id: 0,
            info: String::new(),
        }
    }

    /// A result set from batches already in memory (SHOW and friends).
    pub fn batches(schema: SchemaRef, batches: Vec<RecordBatch>) -> Output {
        let stream = futures::stream::iter(batches.into_iter().map(Ok));
        Output::Rows {
            schema,
            stream: Box::pin(stream),
        }
    }
}
