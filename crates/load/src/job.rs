//! One Stream Load from request to response: check the options, table and label; stream the
//! body through parallel parse-and-convert workers into one storage load; decide by
//! `max_filter_ratio`; publish atomically with the label; write the error log; report Doris's
//! JSON fields.

use crate::context::{LoadContext, LoadExpressions};
use crate::csv::{CsvSplitter, SplitChunk};
use crate::json::JsonReader;
use crate::options::{LoadFormat, LoadOptions, MergeType};
use crate::registry::LoadRegistry;
use crate::rejects::Rejects;
use crate::source::{decompressed, fill, BodyFrame, BodyReader};
use crate::transform::{LoadPlan, Transformed};
use basalt_catalog::{KeysModel, LoadJobRecord, TableMeta};
use basalt_common::clock::now_ms;
use basalt_common::{BasaltError, Result};
use basalt_storage::LoadWriter;
use bytes::Bytes;
use datafusion::arrow::array::{ArrayRef, RecordBatch};
use datafusion::arrow::datatypes::DataType;
use futures::stream::BoxStream;
use futures::StreamExt;
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::Read;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Bytes of text handed to one worker at a time.
const CHUNK_BYTES: usize = 4 << 20;
/// Rows per batch when the source is already columnar (Parquet).
const PARQUET_BATCH_ROWS: usize = 65536;
/// The longest line (CSV record or JSON line) a load accepts.
const MAX_LINE_BYTES: usize = 256 << 20;
/// The longest header line (names, types, skipped lines) a load accepts.
const MAX_HEADER_LINE_BYTES: usize = 16 << 20;
/// A JSON document that is not line-delimited is parsed whole; like Doris, cap its size.
const MAX_JSON_DOCUMENT_BYTES: usize = 100 << 20;

/// Who asked for what.
#[derive(Debug, Clone)]
pub struct StreamLoadRequest {
    pub database: String,
    pub table: String,
    pub user: String,
    pub host: String,
    /// Request headers (name, value).
    pub headers: Vec<(String, String)>,
    /// `http://host:port` the client reached, for `ErrorURL`.
    pub base_url: String,
    /// Largest body accepted (bytes as sent, before decompression).
    pub max_body_bytes: u64,
}

/// Doris's Stream Load response.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct StreamLoadResult {
    pub txn_id: u64,
    pub label: String,
    pub two_phase_commit: String,
    pub status: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub existing_job_status: Option<String>,
    pub message: String,
    pub number_total_rows: u64,
    pub number_loaded_rows: u64,
    pub number_filtered_rows: u64,
    pub number_unselected_rows: u64,
    pub load_bytes: u64,
    pub load_time_ms: u64,
    pub begin_txn_time_ms: u64,
    pub stream_load_put_time_ms: u64,
    pub read_data_time_ms: u64,
    pub write_data_time_ms: u64,
    pub commit_and_publish_time_ms: u64,
    #[serde(rename = "ErrorURL", skip_serializing_if = "Option::is_none")]
    pub error_url: Option<String>,
}

impl StreamLoadResult {
    fn failed(label: &str, message: String) -> StreamLoadResult {
        StreamLoadResult {
            label: label.to_string(),
            two_phase_commit: "false".into(),
            status: "Fail".into(),
            message,
            ..Default::default()
        }
    }

    pub fn succeeded(&self) -> bool {
        self.status == "Success"
    }
}

/// Counts and timings gathered while the data flows.
#[derive(Debug, Default)]
struct Progress {
    total_rows: u64,
    unselected_rows: u64,
    rejects: Rejects,
    read_ms: u64,
    write_ms: u64,
    plan_ms: u64,
}

/// Phases of a load, so a timeout and a commit never both win.
const RUNNING: u8 = 0;
const COMMITTING: u8 = 1;
const CANCELLED: u8 = 2;

/// Runs one Stream Load. Never panics on client input; every failure is a `Fail` result.
pub async fn stream_load(
    context: &dyn LoadContext,
    req: StreamLoadRequest,
    mut body: BoxStream<'static, std::result::Result<Bytes, String>>,
) -> StreamLoadResult {
    let started = Instant::now();
    let options = match LoadOptions::from_headers(
        req.headers.iter().map(|(k, v)| (k.as_str(), v.as_str())),
    ) {
        Ok(o) => o,
        Err(e) => return StreamLoadResult::failed("", e.to_string()),
    };
    let catalog = context.catalog();
    let storage = context.storage();
    // The privilege first: a table the user may not load into is not even looked up.
    if let Err(e) = context.authorize(&req.user, &req.host, &req.database, &req.table) {
        return StreamLoadResult::failed(options.label.as_deref().unwrap_or(""), e.to_string());
    }
    let mut table = match context.table(&req.database, &req.table) {
        Ok(t) => t,
        Err(e) => {
            return StreamLoadResult::failed(options.label.as_deref().unwrap_or(""), e.to_string())
        }
    };
    let registry = context.load_registry();
    // The definition is read again when an ALTER TABLE changed it while the load waited.
    let mut began = storage.begin_load(table.clone()).await;
    if let Err(BasaltError::ConcurrentDdl(_)) = began {
        began = match context.table(&req.database, &req.table) {
            Ok(t) => {
                table = t;
                storage.begin_load(table.clone()).await
            }
            Err(e) => Err(e),
        };
    }
    let mut writer = match began {
        Ok(w) => w,
        Err(e) => {
            return StreamLoadResult::failed(options.label.as_deref().unwrap_or(""), e.to_string())
        }
    };
    let txn_id = writer.load_id();
    let label = options
        .label
        .clone()
        .unwrap_or_else(|| format!("basalt_{txn_id}"));
    let database = table.database.clone();
    if let Some(existing) = catalog.load_job(&database, &label) {
        let mut r =
            StreamLoadResult::failed(&label, format!("Label [{label}] has already been used."));
        r.status = "Label Already Exists".into();
        r.existing_job_status = Some(existing.state.clone());
        r.txn_id = existing.txn_id;
        return r;
    }
    let Some(running_label) = registry.begin(&database, &label) else {
        let mut r = StreamLoadResult::failed(
            &label,
            format!("Label [{label}] is being used by a running load."),
        );
        r.status = "Label Already Exists".into();
        r.existing_job_status = Some("RUNNING".into());
        return r;
    };
    if options.merge_type != MergeType::Append && table.keys_model != KeysModel::Unique {
        return finish_failed(
            registry,
            &req,
            &table,
            &label,
            txn_id,
            started,
            "merge_type DELETE and MERGE need a UNIQUE KEY table".into(),
        );
    }
    let restricted = match (&options.partitions, &options.temporary_partitions) {
        (Some(parts), _) => writer.restrict_partitions(parts),
        (None, Some(parts)) => writer.restrict_temporary_partitions(parts),
        (None, None) => Ok(()),
    };
    {
        if let Err(e) = restricted {
            return finish_failed(
                registry,
                &req,
                &table,
                &label,
                txn_id,
                started,
                e.to_string(),
            );
        }
    }
    let expressions = context.expressions(&req.user, &req.host);
    let (tx, rx) = tokio::sync::mpsc::channel::<BodyFrame>(16);
    let body_reader = BodyReader::new(rx);
    let received = body_reader.received.clone();
    let phase = Arc::new(AtomicU8::new(RUNNING));
    let cancel = Arc::new(AtomicBool::new(false));
    // If this request is dropped before the job decides (client gone, server shutting down),
    // the job is cancelled unless it is already committing a body it fully received.
    let _cancel_on_drop = CancelOnDrop {
        phase: phase.clone(),
        cancel: cancel.clone(),
    };
    let job = LoadJob {
        table: table.clone(),
        max_body_bytes: req.max_body_bytes,
        options: options.clone(),
        expressions,
        cancel: cancel.clone(),
        phase: phase.clone(),
    };
    let record_base = LoadJobRecord::started(
        label.clone(),
        database.clone(),
        table.name.clone(),
        txn_id,
        req.user.clone(),
        "STREAM LOAD",
    );
    let error_dir = registry.error_dir().to_path_buf();
    let base_url = req.base_url.clone();
    let received_for_job = received.clone();
    let mut work = tokio::task::spawn_blocking(move || {
        let _label = running_label;
        job.run(
            body_reader,
            writer,
            record_base,
            &error_dir,
            &base_url,
            received_for_job,
        )
    });
    let max_body = req.max_body_bytes;
    let forward = async move {
        let mut sent = 0u64;
        loop {
            let frame = match body.next().await {
                None => BodyFrame::End,
                Some(Err(e)) => BodyFrame::Failed(e),
                Some(Ok(b)) => {
                    sent += b.len() as u64;
                    if sent > max_body {
                        BodyFrame::Failed(format!(
                            "the body is larger than stream_load_max_mb ({} MB)",
                            max_body >> 20
                        ))
                    } else {
                        BodyFrame::Data(b)
                    }
                }
            };
            let last = !matches!(frame, BodyFrame::Data(_));
            if tx.send(frame).await.is_err() || last {
                break;
            }
        }
    };
    tokio::pin!(forward);
    let deadline = tokio::time::sleep(options.timeout);
    tokio::pin!(deadline);
    let mut forward_done = false;
    let outcome = loop {
        tokio::select! {
            _ = &mut forward, if !forward_done => forward_done = true,
            r = &mut work => break r.map_err(|e| BasaltError::Internal(format!("load task failed: {e}"))).and_then(|r| r),
            _ = &mut deadline => {
                if phase.compare_exchange(RUNNING, CANCELLED, Ordering::SeqCst, Ordering::SeqCst).is_ok() {
                    cancel.store(true, Ordering::SeqCst);
                    break Err(BasaltError::InvalidData(format!(
                        "load timed out after {} s (timeout header); nothing was loaded",
                        options.timeout.as_secs()
                    )));
                }
                // Already committing: the commit decides.
                deadline.as_mut().reset(tokio::time::Instant::now() + std::time::Duration::from_secs(3600));
            }
        }
    };
    let load_bytes = received.load(Ordering::Relaxed);
    match outcome {
        Ok((outcome, record)) => {
            let mut r = outcome;
            r.txn_id = txn_id;
            r.label = label.clone();
            r.load_bytes = load_bytes;
            r.load_time_ms = started.elapsed().as_millis() as u64;
            if !r.succeeded() {
                registry.remember_failure(LoadJobRecord {
                    state: "CANCELLED".into(),
                    message: r.message.clone(),
                    load_bytes,
                    finished_ms: now_ms(),
                    ..record
                });
            }
            r
        }
        Err(e) => finish_failed(
            registry,
            &req,
            &table,
            &label,
            txn_id,
            started,
            e.to_string(),
        ),
    }
}

/// Cancels a running load when the request that started it goes away.
struct CancelOnDrop {
    phase: Arc<AtomicU8>,
    cancel: Arc<AtomicBool>,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if self
            .phase
            .compare_exchange(RUNNING, CANCELLED, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            self.cancel.store(true, Ordering::SeqCst);
        }
    }
}

fn finish_failed(
    registry: &LoadRegistry,
    req: &StreamLoadRequest,
    table: &TableMeta,
    label: &str,
    txn_id: u64,
    started: Instant,
    message: String,
) -> StreamLoadResult {
    registry.remember_failure(LoadJobRecord {
        label: label.to_string(),
        database: table.database.clone(),
        table: table.name.clone(),
        txn_id,
        state: "CANCELLED".into(),
        message: message.clone(),
        total_rows: 0,
        loaded_rows: 0,
        filtered_rows: 0,
        unselected_rows: 0,
        load_bytes: 0,
        user: req.user.clone(),
        created_ms: now_ms(),
        finished_ms: now_ms(),
        error_url: None,
        kind: "STREAM LOAD".into(),
    });
    let mut r = StreamLoadResult::failed(label, message);
    r.txn_id = txn_id;
    r.load_time_ms = started.elapsed().as_millis() as u64;
    r
}

/// Work for a parse-and-convert worker.
enum Work {
    /// Whole lines of text (CSV, or JSON lines).
    Text(Bytes),
    /// A whole JSON document.
    JsonDocument(Bytes),
    /// Columns already read (Parquet), one per source column.
    Columns(RecordBatch),
}

/// A worker's result, ready for the writer.
struct Done {
    transformed: Transformed,
    total_rows: u64,
    split_rejects: Rejects,
    /// Renders a source row for the error log (rows that fall in no partition).
    text: RowText,
}

enum RowText {
    Lines(Bytes, Vec<std::ops::Range<usize>>),
    Columns(Vec<ArrayRef>),
}

impl RowText {
    fn render(&self, row: usize) -> String {
        match self {
            RowText::Lines(data, lines) => lines
                .get(row)
                .map(|r| String::from_utf8_lossy(&data[r.clone()]).into_owned())
                .unwrap_or_default(),
            RowText::Columns(cols) => cols
                .iter()
                .map(|c| {
                    if c.is_null(row) {
                        "\\N".to_string()
                    } else {
                        datafusion::arrow::util::display::array_value_to_string(c, row)
                            .unwrap_or_default()
                    }
                })
                .collect::<Vec<_>>()
                .join("|"),
        }
    }
}

/// How text becomes columns for this load.
enum Parser {
    Csv(CsvSplitter),
    Json(JsonReader),
    Columnar,
}

struct LoadJob {
    table: Arc<TableMeta>,
    /// Largest body accepted; a Parquet body is spooled to disk and held to it after
    /// decompression too.
    max_body_bytes: u64,
    options: LoadOptions,
    expressions: LoadExpressions,
    cancel: Arc<AtomicBool>,
    phase: Arc<AtomicU8>,
}

/// Where the data comes from after the prologue.
enum Input {
    /// Text still to be read: what was already read, then the rest of the body.
    Text(Vec<u8>, Box<dyn Read + Send>),
    /// A spooled Parquet file read batch by batch.
    Parquet(
        datafusion::parquet::arrow::arrow_reader::ParquetRecordBatchReader,
        crate::spool::TempFile,
    ),
}

impl LoadJob {
    fn cancelled(&self) -> Result<()> {
        if self.cancel.load(Ordering::Relaxed) {
            return Err(BasaltError::InvalidData("load cancelled".into()));
        }
        Ok(())
    }

    /// Runs on a blocking thread: read, parse, convert, write, decide, commit.
    fn run(
        &self,
        body: BodyReader,
        mut writer: LoadWriter,
        record: LoadJobRecord,
        error_dir: &std::path::Path,
        base_url: &str,
        received: Arc<std::sync::atomic::AtomicU64>,
    ) -> Result<(StreamLoadResult, LoadJobRecord)> {
        let plan_started = Instant::now();
        let reader = decompressed(body, self.options.compression)?;
        let (parser, names, types, input) = self.prologue(reader, error_dir)?;
        let plan = Arc::new(LoadPlan::new(
            self.table.clone(),
            &self.options,
            names.clone(),
            types,
            &self.expressions,
        )?);
        let parser = match parser {
            Parser::Json(_) => Parser::Json(JsonReader::new(
                plan.source_names().to_vec(),
                self.options.jsonpaths.as_deref(),
                self.options.json_root.as_deref(),
                self.options.strip_outer_array,
            )?),
            other => other,
        };
        let mut progress = Progress {
            plan_ms: plan_started.elapsed().as_millis() as u64,
            ..Default::default()
        };
        self.pump(&mut writer, &plan, &parser, &names, input, &mut progress)?;
        self.cancelled()?;
        self.finish(writer, progress, record, error_dir, base_url, received)
    }

    /// Reads header lines and finds the data's columns.
    fn prologue(
        &self,
        mut reader: Box<dyn Read + Send>,
        spool_dir: &std::path::Path,
    ) -> Result<(Parser, Vec<String>, Vec<DataType>, Input)> {
        let o = &self.options;
        // Data without a column list has the table's columns in declared order.
        let table_names: Vec<String> = self
            .table
            .declared_columns()
            .map(|(_, c)| c.name.clone())
            .collect();
        match o.format {
            LoadFormat::Csv | LoadFormat::CsvWithNames | LoadFormat::CsvWithNamesAndTypes => {
                let splitter = CsvSplitter::new(
                    o.column_separator.clone(),
                    o.line_delimiter.clone(),
                    o.enclose,
                    o.escape,
                    o.trim_double_quotes,
                )
                .with_lenient_field_count(o.lenient_field_count)
                .with_mysql_escapes(o.mysql_escapes);
                let header_lines: usize = match o.format {
                    LoadFormat::CsvWithNames => 1,
                    LoadFormat::CsvWithNamesAndTypes => 2,
                    _ => 0,
                };
                let mut pending = Vec::new();
                let mut names = None;
                for i in 0..header_lines.saturating_add(o.skip_lines) {
                    let Some(line) = next_line(&mut *reader, &splitter, &mut pending)? else {
                        break;
                    };
                    if i == 0 && header_lines > 0 {
                        names = Some(
                            splitter
                                .split_line_owned(&line)
                                .into_iter()
                                .map(|n| n.unwrap_or_default().trim().to_lowercase())
                                .collect::<Vec<_>>(),
                        );
                    }
                }
                let names = names.unwrap_or(table_names);
                let types = vec![DataType::Utf8; names.len()];
                Ok((
                    Parser::Csv(splitter),
                    names,
                    types,
                    Input::Text(pending, reader),
                ))
            }
            LoadFormat::Json => {
                let types = vec![DataType::Utf8; table_names.len()];
                // The reader is rebuilt once the plan knows the source columns.
                let placeholder = JsonReader::new(Vec::new(), None, None, false)?;
                Ok((
                    Parser::Json(placeholder),
                    table_names,
                    types,
                    Input::Text(Vec::new(), reader),
                ))
            }
            LoadFormat::Parquet => {
                let file = crate::spool::TempFile::copy_from(
                    &mut *reader,
                    spool_dir,
                    self.max_body_bytes,
                )?;
                let bad = |e: &dyn std::fmt::Display| {
                    BasaltError::InvalidData(format!("cannot read the Parquet body: {e}"))
                };
                let body = file.reopen()?;
                let body_len = body.metadata()?.len();
                let builder =
                    datafusion::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(
                        body,
                    )
                    .map_err(|e| bad(&e))?;
                check_parquet_chunks(builder.metadata(), body_len).map_err(|e| bad(&e))?;
                let schema = builder.schema().clone();
                let names = schema
                    .fields()
                    .iter()
                    .map(|f| f.name().to_lowercase())
                    .collect();
                let types = schema
                    .fields()
                    .iter()
                    .map(|f| f.data_type().clone())
                    .collect();
                let batches = builder
                    .with_batch_size(PARQUET_BATCH_ROWS)
                    .build()
                    .map_err(|e| bad(&e))?;
                Ok((
                    Parser::Columnar,
                    names,
                    types,
                    Input::Parquet(batches, file),
                ))
            }
        }
    }

    /// Moves the data through the workers into the writer, in input order.
    fn pump(
        &self,
        writer: &mut LoadWriter,
        plan: &Arc<LoadPlan>,
        parser: &Parser,
        data_names: &[String],
        input: Input,
        progress: &mut Progress,
    ) -> Result<()> {
        let o = &self.options;
        // Columnar input: the plan's source columns by name in the file.
        let column_map: Vec<Option<usize>> = plan
            .source_names()
            .iter()
            .map(|n| data_names.iter().position(|d| d == n))
            .collect();
        let workers = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(2)
            .clamp(1, 8);
        let expected = plan.source_names().len();
        let by_line = o.read_json_by_line || !matches!(parser, Parser::Json(_));
        let cancel = &self.cancel;
        let window = WriteWindow::new(workers as u64 * 4);
        std::thread::scope(|scope| {
            let (work_tx, work_rx) = std::sync::mpsc::sync_channel::<(u64, Work)>(workers * 2);
            let work_rx = Arc::new(Mutex::new(work_rx));
            let (done_tx, done_rx) =
                std::sync::mpsc::sync_channel::<(u64, Result<Done>)>(workers * 2);
            for _ in 0..workers {
                let work_rx = work_rx.clone();
                let done_tx = done_tx.clone();
                let column_map = &column_map;
                scope.spawn(move || loop {
                    let next = match work_rx.lock() {
                        Ok(rx) => rx.recv(),
                        Err(_) => return,
                    };
                    let Ok((seq, work)) = next else { return };
                    let done = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        process(plan, parser, work, expected, column_map)
                    }))
                    .unwrap_or_else(|_| {
                        Err(BasaltError::Internal("a load worker panicked".into()))
                    });
                    if done_tx.send((seq, done)).is_err() {
                        return;
                    }
                });
            }
            // Only the workers hold the queue's receiving end: when they stop, the reader's
            // sends fail and it stops too (instead of blocking on a full queue).
            drop(work_rx);
            drop(done_tx);
            let window = &window;
            let reader_thread =
                scope.spawn(move || read_input(input, parser, by_line, work_tx, window, cancel));
            // The writer: results in input order (for Unique keys the later row wins).
            let mut next = 0u64;
            let mut waiting: BTreeMap<u64, Result<Done>> = BTreeMap::new();
            let mut failure = None;
            'receive: for (seq, done) in done_rx.iter() {
                waiting.insert(seq, done);
                while let Some(done) = waiting.remove(&next) {
                    next += 1;
                    let step = done.and_then(|d| {
                        self.cancelled()?;
                        let t = Instant::now();
                        let r = self.write(writer, d, progress);
                        progress.write_ms += t.elapsed().as_millis() as u64;
                        r
                    });
                    if let Err(e) = step {
                        failure = Some(e);
                        cancel.store(true, Ordering::SeqCst);
                        break 'receive;
                    }
                    window.advance(next);
                }
            }
            drop(done_rx);
            let read = reader_thread
                .join()
                .map_err(|_| BasaltError::Internal("the load reader panicked".into()))?;
            if let Some(e) = failure {
                return Err(e);
            }
            progress.read_ms = read?;
            Ok(())
        })
    }

    /// Hands one converted batch to storage; rows in no partition become rejects.
    fn write(
        &self,
        writer: &mut LoadWriter,
        mut done: Done,
        progress: &mut Progress,
    ) -> Result<()> {
        progress.total_rows += done.total_rows;
        progress.unselected_rows += done.transformed.unselected;
        progress.rejects.merge(done.split_rejects);
        progress
            .rejects
            .merge(std::mem::take(&mut done.transformed.rejects));
        let t = &done.transformed;
        // AUTO_INCREMENT values still NULL get ids (the transform let them through as NULL).
        let filled;
        let generated;
        let batch = if self.table.columns.iter().any(|c| c.auto_increment) {
            let catalog = writer.catalog().clone();
            let (batch, _) = basalt_storage::conform::fill_auto_increment(
                catalog.as_ref(),
                &self.table,
                t.batch.clone(),
            )?;
            filled = RecordBatch::try_new(self.table.arrow_schema(), batch.columns().to_vec())
                .map_err(|e| BasaltError::Internal(e.to_string()))?;
            &filled
        } else {
            &t.batch
        };
        // Generated columns are computed from the loaded ones (a value the file gave is replaced).
        let batch = match self.table.generated_columns() {
            columns if columns.is_empty() => batch,
            columns => {
                let fields: Vec<datafusion::arrow::datatypes::Field> = self
                    .table
                    .columns
                    .iter()
                    .zip(batch.columns())
                    .map(|(c, a)| {
                        datafusion::arrow::datatypes::Field::new(
                            &c.name,
                            a.data_type().clone(),
                            true,
                        )
                    })
                    .collect();
                let named = RecordBatch::try_new(
                    Arc::new(datafusion::arrow::datatypes::Schema::new(fields)),
                    batch.columns().to_vec(),
                )
                .map_err(|e| BasaltError::Internal(e.to_string()))?;
                let computed = basalt_functions::generated_columns::compute(named, &columns)
                    .map_err(|e| BasaltError::InvalidData(format!("generated column: {e}")))?;
                generated = RecordBatch::try_new(batch.schema(), computed.columns().to_vec())
                    .map_err(|e| BasaltError::InvalidData(e.to_string()))?;
                &generated
            }
        };
        let unrouted = writer.write_with_deletes(batch, t.deletes.as_ref())?;
        if !unrouted.is_empty() {
            let column = self
                .table
                .partition_column_meta()
                .map(|c| c.name.clone())
                .unwrap_or_default();
            for (row, value) in unrouted {
                let src = t.source_rows.get(row).copied().unwrap_or(0) as usize;
                progress.rejects.add(
                    || done.text.render(src),
                    || format!("no partition for value {value} of column '{column}' (or not in the load's partitions)"),
                );
            }
        }
        Ok(())
    }

    /// Decides by the filter ratio, writes the error log, commits with the label.
    fn finish(
        &self,
        writer: LoadWriter,
        progress: Progress,
        mut record: LoadJobRecord,
        error_dir: &std::path::Path,
        base_url: &str,
        received: Arc<std::sync::atomic::AtomicU64>,
    ) -> Result<(StreamLoadResult, LoadJobRecord)> {
        let filtered = progress.rejects.count;
        let loaded = writer.rows_loaded();
        let considered = progress.total_rows.saturating_sub(progress.unselected_rows);
        // The error log helps the user; failing to write it (disk full, permissions) must not
        // decide the load.
        let error_url = if filtered > 0 {
            crate::registry::write_error_log(error_dir, record.txn_id, &progress.rejects, base_url)
                .inspect_err(|e| {
                    tracing::warn!("load {}: cannot write its error log: {e}", record.txn_id)
                })
                .ok()
        } else {
            None
        };
        let mut result = StreamLoadResult {
            txn_id: record.txn_id,
            label: record.label.clone(),
            two_phase_commit: "false".into(),
            status: "Success".into(),
            existing_job_status: None,
            message: "OK".into(),
            number_total_rows: progress.total_rows,
            number_loaded_rows: loaded,
            number_filtered_rows: filtered,
            number_unselected_rows: progress.unselected_rows,
            load_bytes: received.load(Ordering::Relaxed),
            read_data_time_ms: progress.read_ms,
            write_data_time_ms: progress.write_ms,
            stream_load_put_time_ms: progress.plan_ms,
            error_url: error_url.clone(),
            ..Default::default()
        };
        record.total_rows = progress.total_rows;
        record.loaded_rows = loaded;
        record.filtered_rows = filtered;
        record.unselected_rows = progress.unselected_rows;
        record.load_bytes = result.load_bytes;
        record.error_url = error_url;
        let ratio = if considered == 0 {
            0.0
        } else {
            filtered as f64 / considered as f64
        };
        if filtered > 0 && ratio > self.options.max_filter_ratio {
            result.status = "Fail".into();
            result.number_loaded_rows = 0;
            result.message = format!(
                "[DATA_QUALITY_ERROR]too many filtered rows: {filtered} of {considered} ({:.2}%) > max_filter_ratio {}; nothing was loaded, see ErrorURL",
                ratio * 100.0,
                self.options.max_filter_ratio
            );
            record.loaded_rows = 0;
            return Ok((result, record));
        }
        if self
            .phase
            .compare_exchange(RUNNING, COMMITTING, Ordering::SeqCst, Ordering::SeqCst)
            .is_err()
        {
            return Err(BasaltError::InvalidData("load cancelled".into()));
        }
        let commit_started = Instant::now();
        record.finished_ms = now_ms();
        match writer.commit_with_label(Some(record.clone())) {
            Ok(_) => {}
            Err(BasaltError::LabelAlreadyExists(l)) => {
                result.status = "Label Already Exists".into();
                result.existing_job_status = Some("FINISHED".into());
                result.number_loaded_rows = 0;
                result.message = format!("Label [{l}] has already been used.");
                return Ok((result, record));
            }
            Err(e) => return Err(e),
        }
        result.commit_and_publish_time_ms = commit_started.elapsed().as_millis() as u64;
        Ok((result, record))
    }
}

/// Keeps the reader at most `size` units of work ahead of the writer, so results waiting to be
/// written in order (behind one slow unit) stay bounded.
struct WriteWindow {
    written: Mutex<u64>,
    advanced: std::sync::Condvar,
    size: u64,
}

impl WriteWindow {
    fn new(size: u64) -> WriteWindow {
        WriteWindow {
            written: Mutex::new(0),
            advanced: std::sync::Condvar::new(),
            size,
        }
    }

    /// Waits until unit `seq` may be sent; false if the load was cancelled meanwhile.
    fn admit(&self, seq: u64, cancel: &AtomicBool) -> bool {
        let Ok(mut written) = self.written.lock() else {
            return false;
        };
        while seq >= *written + self.size {
            if cancel.load(Ordering::Relaxed) {
                return false;
            }
            written = match self
                .advanced
                .wait_timeout(written, std::time::Duration::from_millis(50))
            {
                Ok((w, _)) => w,
                Err(_) => return false,
            };
        }
        !cancel.load(Ordering::Relaxed)
    }

    /// The writer has written every unit before `next`.
    fn advance(&self, next: u64) {
        if let Ok(mut written) = self.written.lock() {
            *written = next;
        }
        self.advanced.notify_all();
    }
}

/// The reader thread: cuts the input into work at line boundaries (or batches), in order.
/// Returns the milliseconds spent.
fn read_input(
    input: Input,
    parser: &Parser,
    by_line: bool,
    work_tx: std::sync::mpsc::SyncSender<(u64, Work)>,
    window: &WriteWindow,
    cancel: &AtomicBool,
) -> Result<u64> {
    let started = Instant::now();
    let mut seq = 0u64;
    let mut send = |w: Work| -> bool {
        let ok = window.admit(seq, cancel) && work_tx.send((seq, w)).is_ok();
        seq += 1;
        ok
    };
    let (mut buf, mut reader) = match input {
        Input::Parquet(batches, _file) => {
            for b in batches {
                let b = b.map_err(|e| {
                    BasaltError::InvalidData(format!("cannot read the Parquet body: {e}"))
                })?;
                if cancel.load(Ordering::Relaxed) || !send(Work::Columns(b)) {
                    break;
                }
            }
            return Ok(started.elapsed().as_millis() as u64);
        }
        Input::Text(pending, reader) => (pending, reader),
    };
    if !by_line {
        fill(&mut *reader, &mut buf, MAX_JSON_DOCUMENT_BYTES + 1)?;
        if buf.len() > MAX_JSON_DOCUMENT_BYTES {
            return Err(BasaltError::InvalidData(format!(
                "a JSON document must be at most {} MB; use read_json_by_line for larger loads",
                MAX_JSON_DOCUMENT_BYTES >> 20
            )));
        }
        send(Work::JsonDocument(Bytes::from(buf)));
        return Ok(started.elapsed().as_millis() as u64);
    }
    // When the buffer holds no complete line yet, read twice as much before looking again,
    // so a very long record (or an enclose that never closes) is scanned O(n), not O(n^2).
    let mut want = CHUNK_BYTES;
    loop {
        if cancel.load(Ordering::Relaxed) {
            break;
        }
        want = want.max(buf.len().max(CHUNK_BYTES / 2) + CHUNK_BYTES / 2);
        let more = fill(&mut *reader, &mut buf, want)?;
        let cut = if more {
            let cut = match parser {
                Parser::Csv(s) => s.complete_prefix(&buf),
                _ => memchr::memrchr(b'\n', &buf).map(|p| p + 1).unwrap_or(0),
            };
            if cut == 0 {
                if buf.len() > MAX_LINE_BYTES {
                    return Err(BasaltError::InvalidData(format!(
                        "a line is longer than {} MB: are line_delimiter and enclose right?",
                        MAX_LINE_BYTES >> 20
                    )));
                }
                want = buf.len() * 2;
                continue;
            }
            want = 0;
            cut
        } else {
            buf.len()
        };
        let rest = buf.split_off(cut);
        let chunk = std::mem::replace(&mut buf, rest);
        if !chunk.is_empty() && !send(Work::Text(Bytes::from(chunk))) {
            break;
        }
        if !more {
            break;
        }
    }
    Ok(started.elapsed().as_millis() as u64)
}

/// Reads one complete line (without its delimiter) from the front of the input.
fn next_line(
    reader: &mut dyn Read,
    splitter: &CsvSplitter,
    pending: &mut Vec<u8>,
) -> Result<Option<Vec<u8>>> {
    loop {
        if let Some(line) = take_line(splitter, pending) {
            return Ok(Some(line));
        }
        if pending.len() > MAX_HEADER_LINE_BYTES {
            return Err(BasaltError::InvalidData(format!(
                "a header line is longer than {} MB: is line_delimiter right?",
                MAX_HEADER_LINE_BYTES >> 20
            )));
        }
        let want = pending.len().saturating_mul(2).max(64 * 1024);
        if !fill(reader, pending, want)? {
            // End of input: a last line may still be complete, or end without a delimiter.
            if let Some(line) = take_line(splitter, pending) {
                return Ok(Some(line));
            }
            if pending.is_empty() {
                return Ok(None);
            }
            return Ok(Some(std::mem::take(pending)));
        }
    }
}

/// Removes the first complete line from `pending` and returns it without its delimiter (or a
/// trailing CR).
fn take_line(splitter: &CsvSplitter, pending: &mut Vec<u8>) -> Option<Vec<u8>> {
    let end = splitter.first_line_end(pending)?;
    let rest = pending.split_off(end);
    let mut line = std::mem::replace(pending, rest);
    line.truncate(end - splitter.line_delimiter().len());
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    Some(line)
}

/// Parses and converts one unit of work.
fn process(
    plan: &LoadPlan,
    parser: &Parser,
    work: Work,
    expected: usize,
    column_map: &[Option<usize>],
) -> Result<Done> {
    let (split, text): (SplitChunk, RowText) = match (parser, work) {
        (Parser::Csv(s), Work::Text(data)) => {
            let split = s.split(&data, expected);
            let lines = split.row_lines.clone();
            (split, RowText::Lines(data, lines))
        }
        (Parser::Json(j), Work::Text(data)) => {
            let split = j.split(&data, true);
            let cols = split.columns.clone();
            (split, RowText::Columns(cols))
        }
        (Parser::Json(j), Work::JsonDocument(data)) => {
            let split = j.split(&data, false);
            let cols = split.columns.clone();
            (split, RowText::Columns(cols))
        }
        (_, Work::Columns(batch)) => {
            let n = batch.num_rows();
            let columns: Vec<ArrayRef> = column_map
                .iter()
                .map(|m| match m {
                    Some(i) => batch.column(*i).clone(),
                    None => datafusion::arrow::array::new_null_array(&DataType::Utf8, n),
                })
                .collect();
            let split = SplitChunk {
                columns: columns.clone(),
                row_lines: Vec::new(),
                rejects: Rejects::default(),
            };
            (split, RowText::Columns(columns))
        }
        _ => {
            return Err(BasaltError::Internal(
                "load work does not match its format".into(),
            ))
        }
    };
    let rows = split.columns.first().map(|c| c.len()).unwrap_or(0);
    let transformed = plan.apply(&split.columns, rows, &|r| text.render(r))?;
    Ok(Done {
        total_rows: rows as u64 + split.rejects.count,
        transformed,
        split_rejects: split.rejects,
        text,
    })
}

/// Every column chunk of a Parquet body lies inside the body: the reader asserts (panics) on
/// a negative offset or length, and a chunk past the end is a truncated or forged file.
fn check_parquet_chunks(
    metadata: &datafusion::parquet::file::metadata::ParquetMetaData,
    file_len: u64,
) -> std::result::Result<(), String> {
    for row_group in metadata.row_groups() {
        for column in row_group.columns() {
            let start = column
                .dictionary_page_offset()
                .unwrap_or(column.data_page_offset());
            let len = column.compressed_size();
            let fits = start >= 0
                && len >= 0
                && (start as u64)
                    .checked_add(len as u64)
                    .is_some_and(|end| end <= file_len);
            if !fits {
                return Err(format!(
                    "column chunk {} at {start} of {len} bytes lies outside the {file_len}-byte body",
                    column.column_path()
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::check_parquet_chunks;
    use datafusion::arrow::array::{Int32Array, RecordBatch};
    use datafusion::parquet::arrow::ArrowWriter;
    use datafusion::parquet::file::metadata::{ParquetMetaData, ParquetMetaDataReader};
    use std::sync::Arc;

    fn written() -> (ParquetMetaData, u64) {
        let batch =
            RecordBatch::try_from_iter([("k", Arc::new(Int32Array::from(vec![1, 2, 3])) as _)])
                .unwrap();
        let mut body = Vec::new();
        let mut writer = ArrowWriter::try_new(&mut body, batch.schema(), None).unwrap();
        writer.write(&batch).unwrap();
        writer.close().unwrap();
        let len = body.len() as u64;
        let metadata = ParquetMetaDataReader::new()
            .parse_and_finish(&bytes::Bytes::from(body))
            .unwrap();
        (metadata, len)
    }

    /// `metadata` with its first column chunk starting at `offset`.
    fn moved(metadata: ParquetMetaData, offset: i64) -> ParquetMetaData {
        let mut builder = metadata.into_builder();
        let row_groups = builder
            .take_row_groups()
            .into_iter()
            .map(|rg| {
                let columns = rg
                    .columns()
                    .iter()
                    .map(|c| {
                        c.clone()
                            .into_builder()
                            .set_dictionary_page_offset(None)
                            .set_data_page_offset(offset)
                            .build()
                            .unwrap()
                    })
                    .collect();
                rg.into_builder()
                    .set_column_metadata(columns)
                    .build()
                    .unwrap()
            })
            .collect();
        builder.set_row_groups(row_groups).build()
    }

    #[test]
    fn column_chunks_outside_the_body_are_refused() {
        let (metadata, len) = written();
        assert!(check_parquet_chunks(&metadata, len).is_ok());
        let negative = moved(metadata.clone(), -7);
        assert!(check_parquet_chunks(&negative, len).is_err());
        let past_the_end = moved(metadata, len as i64);
        assert!(check_parquet_chunks(&past_the_end, len).is_err());
    }
}
