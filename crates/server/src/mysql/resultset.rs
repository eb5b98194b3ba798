//! Text-protocol result sets: ColumnDefinition41 packets (also in the COM_FIELD_LIST form, with
//! the table name and a default-value field), COM_FIELD_LIST wildcard matching, and streaming the
//! rows of Arrow record batches as row packets, flushing about every 64 KB.

use std::io;

use arrow::array::RecordBatch;
use arrow::datatypes::{Field, Schema};
use arrow::error::ArrowError;
use basalt_common::column_origin::ColumnOrigin;
use futures::StreamExt;
use tokio::io::{AsyncRead, AsyncWrite};

use super::binary::BinaryRowWriter;
use super::packet::PacketIo;
use super::response::{self, ErrorReply};
use super::types::{column_meta, ValueWriter};
use super::wire::{put_lenenc_bytes, put_lenenc_int, put_u16, put_u32, NULL_MARKER};
use super::BatchStream;

/// Queued output is written to the socket once it grows past this many bytes.
pub const FLUSH_THRESHOLD: usize = 64 * 1024;

/// Appends a ColumnDefinition41 payload for `field`. A column read from a table reports where
/// it comes from (schema, table alias, org_table, org_name), as the planner marked it; otherwise
/// `table` fills both table and org_table. `with_default` appends the (NULL) default-value
/// field COM_FIELD_LIST responses carry.
pub fn column_definition(out: &mut Vec<u8>, field: &Field, table: &str, with_default: bool) {
    let meta = column_meta(field);
    put_lenenc_bytes(out, b"def");
    match ColumnOrigin::of(field) {
        Some(origin) => {
            put_lenenc_bytes(out, origin.database.as_bytes());
            put_lenenc_bytes(out, origin.table.as_bytes());
            put_lenenc_bytes(out, origin.original_table.as_bytes());
            put_lenenc_bytes(out, field.name().as_bytes());
            put_lenenc_bytes(out, origin.column.as_bytes());
        }
        None => {
            put_lenenc_bytes(out, b"");
            put_lenenc_bytes(out, table.as_bytes());
            put_lenenc_bytes(out, table.as_bytes());
            put_lenenc_bytes(out, field.name().as_bytes());
            put_lenenc_bytes(out, field.name().as_bytes());
        }
    }
    out.push(0x0c);
    put_u16(out, meta.charset);
    put_u32(out, meta.length);
    out.push(meta.column_type);
    put_u16(out, meta.flags);
    out.push(meta.decimals);
    out.extend_from_slice(&[0, 0]);
    if with_default {
        out.push(NULL_MARKER);
    }
}

/// The next item of `stream`, or a disconnect error if the client closes the connection first.
async fn next_or_disconnect<S>(
    io: &mut PacketIo<S>,
    stream: &mut BatchStream,
) -> io::Result<Option<Result<arrow::array::RecordBatch, basalt_common::BasaltError>>>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    // Results first: a batch that is ready is sent without a read of the socket (a point
    // query's whole result is ready at once, so it costs no extra syscall).
    tokio::select! {
        biased;
        item = stream.next() => Ok(item),
        _ = io.peer_closed() => Err(io::Error::from(io::ErrorKind::ConnectionAborted)),
    }
}

/// How rows are encoded: text (COM_QUERY) or binary (COM_STMT_EXECUTE).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowFormat {
    Text,
    Binary,
}

/// The result columns whose values go as NULL: BITMAP and HLL ones (Doris shows such values
/// as NULL), unless `objects_as_binary` (the session's `return_object_data_as_binary`) asks
/// for their serialized bytes.
pub fn hidden_object_columns(schema: &Schema, objects_as_binary: bool) -> Vec<bool> {
    schema
        .fields()
        .iter()
        .map(|f| !objects_as_binary && basalt_common::sketch_kind(f).is_some())
        .collect()
}

/// Sends a complete result set: column count, column definitions, EOF (unless the client
/// deprecated it), one packet per row, and the terminator carrying `status` — or an ERR packet
/// in place of the terminator if the stream fails midway. True when
/// the result set completed, false when it ended with an ERR packet. BITMAP and HLL values go
/// as NULL unless `objects_as_binary`.
pub async fn send_result_set<S>(
    io: &mut PacketIo<S>,
    schema: &Schema,
    mut stream: BatchStream,
    deprecate_eof: bool,
    status: u16,
    format: RowFormat,
    objects_as_binary: bool,
) -> io::Result<bool>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let columns = schema.fields().len();
    if columns == 0 {
        // The protocol has no zero-column result set; report success (or the stream's error).
        let mut failure = None;
        while let Some(item) = next_or_disconnect(io, &mut stream).await? {
            if let Err(e) = item {
                failure = Some(ErrorReply::from(&e));
                break;
            }
        }
        let completed = failure.is_none();
        match failure {
            Some(reply) => io.packet(|b| response::err(b, &reply)),
            None => io.packet(|b| response::ok(b, response::OK_HEADER, 0, 0, status, 0, "")),
        }
        return io.flush().await.map(|()| completed);
    }

    io.packet(|b| put_lenenc_int(b, columns as u64));
    for field in schema.fields() {
        io.packet(|b| column_definition(b, field, "", false));
    }
    if !deprecate_eof {
        io.packet(|b| response::eof(b, 0, status));
    }
    let hidden = hidden_object_columns(schema, objects_as_binary);

    // Results are produced while the client waits; if it goes away, stop (dropping the stream
    // cancels the query).
    while let Some(item) = next_or_disconnect(io, &mut stream).await? {
        let batch = match item {
            Ok(batch) => batch,
            Err(e) => {
                let reply = ErrorReply::from(&e);
                io.packet(|b| response::err(b, &reply));
                return io.flush().await.map(|()| false);
            }
        };
        if batch.num_columns() != columns {
            let reply = ErrorReply::new(
                1105,
                "HY000",
                format!(
                    "internal error: result batch has {} columns, schema has {columns}",
                    batch.num_columns()
                ),
            );
            io.packet(|b| response::err(b, &reply));
            return io.flush().await.map(|()| false);
        }
        let mut row = 0;
        while row < batch.num_rows() {
            match write_rows(io, &batch, row, format, &hidden) {
                Ok(next) => row = next,
                Err(e) => {
                    let reply = ErrorReply::new(1105, "HY000", format!("internal error: {e}"));
                    io.packet(|b| response::err(b, &reply));
                    return io.flush().await.map(|()| false);
                }
            }
            if io.pending() >= FLUSH_THRESHOLD {
                io.flush().await?;
            }
        }
    }
    io.packet(|b| response::end_of_rows(b, deprecate_eof, status));
    io.flush().await.map(|()| true)
}

/// Queues row packets for `batch` from row `from`, in `format`, until the batch ends or the
/// output buffer reaches [`FLUSH_THRESHOLD`]; returns the next row to write. Synchronous, so
/// the per-column writers (which borrow the batch) never live across an await. The columns
/// `hidden` marks are written as NULL.
fn write_rows<S>(
    io: &mut PacketIo<S>,
    batch: &RecordBatch,
    from: usize,
    format: RowFormat,
    hidden: &[bool],
) -> Result<usize, ArrowError>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let rows = batch.num_rows();
    Ok(match format {
        RowFormat::Text => {
            let schema = batch.schema();
            let writers = batch
                .columns()
                .iter()
                .zip(schema.fields())
                .enumerate()
                .map(|(i, (c, f))| match hidden.get(i) {
                    Some(true) => Ok(ValueWriter::nulls(c.len())),
                    _ => ValueWriter::for_field(c.as_ref(), f),
                })
                .collect::<Result<Vec<_>, _>>()?;
            queue_rows(io, rows, from, |row, b| {
                for w in &writers {
                    w.write(row, b);
                }
            })
        }
        RowFormat::Binary => {
            let writer = BinaryRowWriter::new(batch, hidden)?;
            queue_rows(io, rows, from, |row, b| writer.write(row, b))
        }
    })
}

/// Queues one packet per row from `from` with `encode`, stopping early once the output buffer
/// reaches [`FLUSH_THRESHOLD`]; returns the next row.
fn queue_rows<S>(
    io: &mut PacketIo<S>,
    rows: usize,
    from: usize,
    encode: impl Fn(usize, &mut Vec<u8>),
) -> usize
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let mut row = from;
    while row < rows {
        io.packet(|b| encode(row, b));
        row += 1;
        if io.pending() >= FLUSH_THRESHOLD {
            break;
        }
    }
    row
}

/// Queues the COM_FIELD_LIST response: one column definition (with table name and default
/// value) per field whose name matches `wildcard`, then EOF or OK-with-0xFE.
pub fn field_list<S>(
    io: &mut PacketIo<S>,
    schema: &Schema,
    table: &str,
    wildcard: &str,
    deprecate_eof: bool,
    status: u16,
) where
    S: AsyncRead + AsyncWrite + Unpin,
{
    for field in schema.fields() {
        if wildcard.is_empty() || like_match(wildcard, field.name()) {
            io.packet(|b| column_definition(b, field, table, true));
        }
    }
    io.packet(|b| response::end_of_rows(b, deprecate_eof, status));
}

enum Token {
    AnyRun,
    AnyOne,
    Char(char),
}

/// Case-insensitive SQL LIKE: '%' matches any run, '_' one character, '\' escapes.
pub fn like_match(pattern: &str, text: &str) -> bool {
    let mut tokens = Vec::new();
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        tokens.push(match c {
            '%' => Token::AnyRun,
            '_' => Token::AnyOne,
            '\\' => Token::Char(chars.next().unwrap_or('\\')),
            c => Token::Char(c),
        });
    }
    let text: Vec<char> = text.chars().collect();
    let same = |a: char, b: char| a == b || a.to_lowercase().eq(b.to_lowercase());
    let (mut p, mut t) = (0, 0);
    // Position after the last '%' seen and the text position it is currently matched up to.
    let mut backtrack: Option<(usize, usize)> = None;
    while let Some(&c) = text.get(t) {
        match tokens.get(p) {
            Some(Token::AnyRun) => {
                p += 1;
                backtrack = Some((p, t));
                continue;
            }
            Some(Token::AnyOne) => {
                p += 1;
                t += 1;
                continue;
            }
            Some(Token::Char(pc)) if same(*pc, c) => {
                p += 1;
                t += 1;
                continue;
            }
            _ => {}
        }
        match backtrack {
            Some((bp, bt)) => {
                p = bp;
                t = bt + 1;
                backtrack = Some((bp, bt + 1));
            }
            None => return false,
        }
    }
    tokens
        .get(p..)
        .unwrap_or_default()
        .iter()
        .all(|t| matches!(t, Token::AnyRun))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::datatypes::DataType;
    use std::sync::Arc;

    /// The row packets `write_rows` queues for `batch` (headers stripped).
    fn row_payloads(batch: &RecordBatch, format: RowFormat, hidden: &[bool]) -> Vec<Vec<u8>> {
        let (stream, _peer) = tokio::io::duplex(1024);
        let mut io = PacketIo::new(stream, usize::MAX);
        let next = write_rows(&mut io, batch, 0, format, hidden).unwrap();
        assert_eq!(next, batch.num_rows());
        let mut bytes = &io.buffer()[..];
        let mut payloads = Vec::new();
        while bytes.len() >= 4 {
            let len =
                usize::from(bytes[0]) | usize::from(bytes[1]) << 8 | usize::from(bytes[2]) << 16;
            payloads.push(bytes[4..4 + len].to_vec());
            bytes = &bytes[4 + len..];
        }
        payloads
    }

    #[test]
    fn bitmap_and_hll_values_go_as_null_unless_asked_for_as_bytes() {
        use arrow::array::{BinaryArray, Int32Array};
        use basalt_common::SqlType;
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int32, false),
            SqlType::Bitmap.arrow_field("b", true),
            SqlType::Hll.arrow_field("h", true),
            Field::new("raw", DataType::Binary, true),
        ]));
        assert_eq!(
            hidden_object_columns(&schema, false),
            [false, true, true, false]
        );
        assert_eq!(hidden_object_columns(&schema, true), [false; 4]);
        let bytes = |v: &'static [u8]| Arc::new(BinaryArray::from(vec![Some(v)]));
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(Int32Array::from(vec![7])),
                bytes(b"\x01\x03\0\0\0"),
                bytes(b"\x00"),
                bytes(b"xy"),
            ],
        )
        .unwrap();
        let hidden = hidden_object_columns(&schema, false);
        assert_eq!(
            row_payloads(&batch, RowFormat::Text, &hidden),
            [vec![1, b'7', 0xfb, 0xfb, 2, b'x', b'y']]
        );
        let shown = hidden_object_columns(&schema, true);
        assert_eq!(
            row_payloads(&batch, RowFormat::Text, &shown),
            [vec![1, b'7', 5, 1, 3, 0, 0, 0, 1, 0, 2, b'x', b'y']]
        );
        // Binary rows: header, NULL bitmap (columns offset by 2 bits), then the values.
        assert_eq!(
            row_payloads(&batch, RowFormat::Binary, &hidden),
            [vec![0, 0b0001_1000, 7, 0, 0, 0, 2, b'x', b'y']]
        );
    }

    #[test]
    fn column_definition_bytes() {
        let mut out = Vec::new();
        column_definition(
            &mut out,
            &Field::new("id", DataType::Int32, false),
            "",
            false,
        );
        let expected: &[u8] = &[
            3, b'd', b'e', b'f', 0, 0, 0, 2, b'i', b'd', 2, b'i', b'd', 0x0c, 63, 0, 11, 0, 0, 0,
            0x03, 0x81, 0x00, 0, 0, 0,
        ];
        assert_eq!(out, expected);

        let mut out = Vec::new();
        column_definition(&mut out, &Field::new("n", DataType::Utf8, true), "t", true);
        let expected: &[u8] = &[
            3, b'd', b'e', b'f', 0, 1, b't', 1, b't', 1, b'n', 1, b'n', 0x0c, 45, 0, 0xfc, 0x03, 0,
            0, 0xfd, 0, 0, 0, 0, 0, 0xfb,
        ];
        assert_eq!(out, expected);
    }

    #[test]
    fn column_definition_reports_the_origin_of_a_table_column() {
        let origin = ColumnOrigin {
            database: "db".into(),
            table: "x".into(),
            original_table: "tb".into(),
            column: "c".into(),
        };
        let field = origin.attach(Field::new("v", DataType::Int32, true));
        let mut out = Vec::new();
        column_definition(&mut out, &field, "", false);
        let expected: &[u8] = &[
            3, b'd', b'e', b'f', 2, b'd', b'b', 1, b'x', 2, b't', b'b', 1, b'v', 1, b'c', 0x0c, 63,
            0, 11, 0, 0, 0, 0x03, 0x80, 0x00, 0, 0, 0,
        ];
        assert_eq!(out, expected);
    }

    #[test]
    fn like_patterns() {
        assert!(like_match("%", "anything"));
        assert!(like_match("%", ""));
        assert!(like_match("na%", "Name"));
        assert!(!like_match("na%", "id"));
        assert!(like_match("%_id", "user_id"));
        assert!(like_match("_d", "id"));
        assert!(!like_match("_d", "idd"));
        assert!(like_match("a%b%c", "aXXbYYc"));
        assert!(!like_match("a%b%c", "aXXbYY"));
        assert!(like_match("user\\_id", "user_id"));
        assert!(!like_match("user\\_id", "userXid"));
        assert!(like_match("%%x", "abx"));
        assert!(like_match("ÄB", "äb"));
        assert!(!like_match("", "a"));
    }
}
