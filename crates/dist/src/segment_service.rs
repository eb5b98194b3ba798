//! A backend's segment service (Arrow Flight): writes the segments a frontend's load sends for
//! the tablets this backend holds, durably, and removes those of aborted loads and dropped
//! tablets; reads rows for point queries; runs compactions; answers heartbeats with what it
//! holds and its workload groups' usage, and profiles with what each query used here.

use crate::segment_protocol::{
    frame_rows, BackendStatus, CompactTablet, CopySegments, FileChunk, GroupUsageReport,
    ReadSegment, RemoveOrphans, WriteSegment, COMPACT, COPY_SEGMENTS, QUERY_USAGE, READ_FILE_CHUNK,
    READ_ROWS, REMOVE_ORPHANS, REMOVE_SEGMENTS, SEGMENT_FILES, STATUS,
};
use crate::tablet_files::{list_tablets, remove_tablets, TabletDir, LIST_TABLETS, REMOVE_TABLETS};
use crate::workload_tag::BackendWorkloads;
use arrow_flight::decode::FlightRecordBatchStream;
use arrow_flight::error::FlightError;
use arrow_flight::flight_service_server::FlightService;
use arrow_flight::{
    Action, ActionType, Criteria, Empty, FlightData, FlightDescriptor, FlightInfo,
    HandshakeRequest, HandshakeResponse, PollInfo, PutResult, SchemaResult, Ticket,
};
use basalt_query::BackendStorage;
use basalt_storage::files::check_segment_path;
use basalt_storage::StorageEngine;
use futures::stream::BoxStream;
use futures::{StreamExt, TryStreamExt};
use std::path::Path;
use std::sync::Arc;
use tonic::{Request, Response, Status, Streaming};

pub struct SegmentService {
    storage: Arc<StorageEngine>,
    scans: Arc<BackendStorage>,
    workloads: Arc<BackendWorkloads>,
    /// To other backends (a stale replica's catch-up pulls files from a healthy one).
    channels: crate::channels::SecretChannelResolver,
}

impl SegmentService {
    pub fn new(
        storage: Arc<StorageEngine>,
        scans: Arc<BackendStorage>,
        workloads: Arc<BackendWorkloads>,
        channels: crate::channels::SecretChannelResolver,
    ) -> SegmentService {
        SegmentService {
            storage,
            scans,
            workloads,
            channels,
        }
    }

    fn status(&self) -> BackendStatus {
        let groups = self
            .workloads
            .manager()
            .groups()
            .iter()
            .map(|g| {
                let usage = g.usage();
                let rates = usage.rates();
                GroupUsageReport {
                    id: g.id,
                    name: g.name.clone(),
                    memory_bytes: g.memory_used() as u64,
                    cpu_percent: rates.cpu_percent,
                    local_read_bytes_per_second: rates.local_read_bytes_per_second as u64,
                    remote_read_bytes_per_second: rates.remote_read_bytes_per_second as u64,
                    cpu_limit_percent: g.cpu_limit_percent(),
                    cpu_time_ms: usage.cpu_time().as_millis() as u64,
                    local_read_bytes: usage.local_read_bytes(),
                }
            })
            .collect();
        let mut status = BackendStatus {
            scanned_tablets: self.scans.scanned(),
            groups,
            queries: self.workloads.current(),
            ..Default::default()
        };
        let data = self.storage.data_dir().join("data");
        for table in read_dir(&data) {
            for tablet in read_dir(&table) {
                let mut any = false;
                for file in read_dir(&tablet) {
                    if let Ok(meta) = std::fs::metadata(&file) {
                        status.data_bytes += meta.len();
                        any |= file.extension().is_some_and(|e| e == "parquet");
                    }
                }
                status.tablets += u64::from(any);
            }
        }
        status
    }
}

fn read_dir(dir: &Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(dir)
        .map(|entries| entries.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default()
}

fn bad_request(e: impl std::fmt::Display) -> Status {
    Status::invalid_argument(e.to_string())
}

type Stream<T> = BoxStream<'static, Result<T, Status>>;

#[tonic::async_trait]
impl FlightService for SegmentService {
    type HandshakeStream = Stream<HandshakeResponse>;
    type ListFlightsStream = Stream<FlightInfo>;
    type DoGetStream = Stream<FlightData>;
    type DoPutStream = Stream<PutResult>;
    type DoExchangeStream = Stream<FlightData>;
    type DoActionStream = Stream<arrow_flight::Result>;
    type ListActionsStream = Stream<ActionType>;

    async fn do_put(
        &self,
        request: Request<Streaming<FlightData>>,
    ) -> Result<Response<Self::DoPutStream>, Status> {
        let mut input = request.into_inner().peekable();
        let first = std::pin::Pin::new(&mut input)
            .peek()
            .await
            .ok_or_else(|| bad_request("empty segment write"))?
            .as_ref()
            .map_err(|e| e.clone())?;
        let command: WriteSegment = match &first.flight_descriptor {
            Some(d) => serde_json::from_slice(&d.cmd).map_err(bad_request)?,
            None => return Err(bad_request("a segment write needs a descriptor")),
        };
        let rel = check_segment_path(&command.path).map_err(bad_request)?;
        let batches = FlightRecordBatchStream::new_from_flight_data(
            input.map_err(|e| FlightError::Tonic(Box::new(e))),
        );
        let mut schema = None;
        let mut stream = batches;
        let mut rows = Vec::new();
        while let Some(batch) = stream.next().await {
            let batch = batch.map_err(|e| Status::internal(e.to_string()))?;
            schema.get_or_insert_with(|| batch.schema());
            rows.push(batch);
        }
        let schema = match (schema, stream.schema()) {
            (Some(s), _) => s,
            (None, Some(s)) => s.clone(),
            (None, None) => return Err(bad_request("a segment write without a schema")),
        };
        let data_dir = self.storage.data_dir().to_path_buf();
        let json = self.storage.json_form();
        let meta = tokio::task::spawn_blocking(move || {
            basalt_storage::segment::write_segment_as(
                &data_dir,
                &rel,
                &schema,
                &rows,
                &command.bloom_filter_columns,
                command.row_store,
                json,
            )
        })
        .await
        .map_err(|e| Status::internal(e.to_string()))?
        .map_err(|e| Status::internal(e.to_string()))?;
        let answer = PutResult {
            app_metadata: serde_json::to_vec(&meta)
                .map_err(|e| Status::internal(e.to_string()))?
                .into(),
        };
        Ok(Response::new(
            futures::stream::once(async { Ok(answer) }).boxed(),
        ))
    }

    async fn do_action(
        &self,
        request: Request<Action>,
    ) -> Result<Response<Self::DoActionStream>, Status> {
        let action = request.into_inner();
        let body = match action.r#type.as_str() {
            REMOVE_SEGMENTS => {
                let paths: Vec<String> =
                    serde_json::from_slice(&action.body).map_err(bad_request)?;
                for p in &paths {
                    check_segment_path(p).map_err(bad_request)?;
                }
                self.storage.remove_segments(&paths);
                Vec::new()
            }
            COMPACT => {
                let job: CompactTablet =
                    serde_json::from_slice(&action.body).map_err(bad_request)?;
                for s in &job.inputs {
                    check_segment_path(&s.path).map_err(bad_request)?;
                }
                let storage = self.storage.clone();
                let written = tokio::task::spawn_blocking(move || {
                    let tablet = job
                        .table
                        .tablets()
                        .map(|(_, t)| t.clone())
                        .find(|t| t.id == job.tablet_id)
                        .ok_or_else(|| {
                            basalt_common::BasaltError::Storage(format!(
                                "no tablet {} in the compaction's table",
                                job.tablet_id
                            ))
                        })?;
                    storage.compact_on_backend(
                        &job.table,
                        &tablet,
                        &job.inputs,
                        job.output_id,
                        job.segment_rows,
                    )
                })
                .await
                .map_err(|e| Status::internal(e.to_string()))?
                .map_err(|e| Status::internal(e.to_string()))?;
                serde_json::to_vec(&written).map_err(|e| Status::internal(e.to_string()))?
            }
            READ_ROWS => {
                let wanted: Vec<(String, u32)> =
                    serde_json::from_slice(&action.body).map_err(bad_request)?;
                for (p, _) in &wanted {
                    check_segment_path(p).map_err(bad_request)?;
                }
                let storage = self.storage.clone();
                let rows = tokio::task::spawn_blocking(move || storage.read_rows_here(&wanted))
                    .await
                    .map_err(|e| Status::internal(e.to_string()))?
                    .map_err(|e| Status::internal(e.to_string()))?;
                frame_rows(rows.iter().map(|r| r.as_ref()))
            }
            REMOVE_ORPHANS => {
                let job: RemoveOrphans =
                    serde_json::from_slice(&action.body).map_err(bad_request)?;
                let storage = self.storage.clone();
                let removed = tokio::task::spawn_blocking(move || {
                    storage.remove_orphans(&job.referenced, job.ids_below)
                })
                .await
                .map_err(|e| Status::internal(e.to_string()))?
                .map_err(|e| Status::internal(e.to_string()))?;
                if removed > 0 {
                    tracing::info!("removed {removed} orphaned segment files");
                }
                serde_json::to_vec(&removed).map_err(|e| Status::internal(e.to_string()))?
            }
            QUERY_USAGE => {
                let queries: Vec<String> =
                    serde_json::from_slice(&action.body).map_err(bad_request)?;
                serde_json::to_vec(&self.workloads.usage(&queries))
                    .map_err(|e| Status::internal(e.to_string()))?
            }
            STATUS => {
                serde_json::to_vec(&self.status()).map_err(|e| Status::internal(e.to_string()))?
            }
            SEGMENT_FILES => {
                let segments: Vec<String> =
                    serde_json::from_slice(&action.body).map_err(bad_request)?;
                let data_dir = self.storage.data_dir().to_path_buf();
                let digests = tokio::task::spawn_blocking(move || {
                    crate::segment_copy::segment_files(&data_dir, &segments)
                })
                .await
                .map_err(|e| Status::internal(e.to_string()))?
                .map_err(bad_request)?;
                serde_json::to_vec(&digests).map_err(|e| Status::internal(e.to_string()))?
            }
            READ_FILE_CHUNK => {
                let chunk: FileChunk = serde_json::from_slice(&action.body).map_err(bad_request)?;
                let data_dir = self.storage.data_dir().to_path_buf();
                tokio::task::spawn_blocking(move || {
                    crate::segment_copy::read_chunk(&data_dir, &chunk)
                })
                .await
                .map_err(|e| Status::internal(e.to_string()))?
                .map_err(|e| Status::internal(e.to_string()))?
            }
            COPY_SEGMENTS => {
                let job: CopySegments =
                    serde_json::from_slice(&action.body).map_err(bad_request)?;
                let report = crate::segment_copy::copy_segments(
                    self.storage.data_dir(),
                    &self.channels,
                    job,
                )
                .await
                .map_err(|e| Status::internal(e.to_string()))?;
                serde_json::to_vec(&report).map_err(|e| Status::internal(e.to_string()))?
            }
            LIST_TABLETS => {
                let data_dir = self.storage.data_dir().to_path_buf();
                let tablets = tokio::task::spawn_blocking(move || list_tablets(&data_dir))
                    .await
                    .map_err(|e| Status::internal(e.to_string()))?;
                serde_json::to_vec(&tablets).map_err(|e| Status::internal(e.to_string()))?
            }
            REMOVE_TABLETS => {
                let tablets: Vec<TabletDir> =
                    serde_json::from_slice(&action.body).map_err(bad_request)?;
                let storage = self.storage.clone();
                let removed =
                    tokio::task::spawn_blocking(move || remove_tablets(&storage, &tablets))
                        .await
                        .map_err(|e| Status::internal(e.to_string()))?;
                if removed > 0 {
                    tracing::info!("removed {removed} segments of tablets moved elsewhere");
                }
                serde_json::to_vec(&removed).map_err(|e| Status::internal(e.to_string()))?
            }
            other => return Err(Status::unimplemented(format!("no action '{other}'"))),
        };
        let result = arrow_flight::Result { body: body.into() };
        Ok(Response::new(
            futures::stream::once(async { Ok(result) }).boxed(),
        ))
    }

    async fn handshake(
        &self,
        _request: Request<Streaming<HandshakeRequest>>,
    ) -> Result<Response<Self::HandshakeStream>, Status> {
        Err(Status::unimplemented("handshake"))
    }

    async fn list_flights(
        &self,
        _request: Request<Criteria>,
    ) -> Result<Response<Self::ListFlightsStream>, Status> {
        Err(Status::unimplemented("list_flights"))
    }

    async fn get_flight_info(
        &self,
        _request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        Err(Status::unimplemented("get_flight_info"))
    }

    async fn poll_flight_info(
        &self,
        _request: Request<FlightDescriptor>,
    ) -> Result<Response<PollInfo>, Status> {
        Err(Status::unimplemented("poll_flight_info"))
    }

    async fn get_schema(
        &self,
        _request: Request<FlightDescriptor>,
    ) -> Result<Response<SchemaResult>, Status> {
        Err(Status::unimplemented("get_schema"))
    }

    async fn do_get(
        &self,
        request: Request<Ticket>,
    ) -> Result<Response<Self::DoGetStream>, Status> {
        let read: ReadSegment =
            serde_json::from_slice(&request.into_inner().ticket).map_err(bad_request)?;
        let rel = check_segment_path(&read.path).map_err(bad_request)?;
        let file = self.storage.data_dir().join(rel);
        let batches = tokio::task::spawn_blocking(move || {
            basalt_storage::segment::read_segment(&file, &read.columns)
        })
        .await
        .map_err(|e| Status::internal(e.to_string()))?
        .map_err(|e| Status::internal(e.to_string()))?;
        let stream = arrow_flight::encode::FlightDataEncoderBuilder::new()
            .build(futures::stream::iter(batches.into_iter().map(Ok)))
            .map_err(|e| Status::internal(e.to_string()));
        Ok(Response::new(stream.boxed()))
    }

    async fn do_exchange(
        &self,
        _request: Request<Streaming<FlightData>>,
    ) -> Result<Response<Self::DoExchangeStream>, Status> {
        Err(Status::unimplemented("do_exchange"))
    }

    async fn list_actions(
        &self,
        _request: Request<Empty>,
    ) -> Result<Response<Self::ListActionsStream>, Status> {
        Err(Status::unimplemented("list_actions"))
    }
}
