//! A frontend's loads write their segments on the backends holding each tablet's replicas
//! (storage's [`RemoteSegments`] seam), through the backends' segment services.

use crate::cluster::Cluster;
use crate::replica_choice::read_from_replicas;
use crate::replica_writes::{write_to_majority, Targets};
use crate::segment_protocol::{
    unframe_rows, CompactTablet, ReadSegment, WriteSegment, COMPACT, READ_ROWS, REMOVE_SEGMENTS,
};
use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use arrow_flight::encode::FlightDataEncoderBuilder;
use arrow_flight::FlightDescriptor;
use basalt_catalog::{BackendId, BackendMeta, SegmentMeta, TableMeta, TabletMeta};
use basalt_common::{BasaltError, Result};
use basalt_storage::remote::{CompactedSegments, RemoteSegments, WrittenSegment};
use futures::TryStreamExt;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

pub struct BackendSegments(pub Arc<Cluster>);

impl BackendSegments {
    async fn put(
        &self,
        backend: &BackendMeta,
        command: &WriteSegment,
        schema: &SchemaRef,
        batches: Vec<RecordBatch>,
    ) -> Result<SegmentMeta> {
        let failed = |e: &dyn std::fmt::Display| {
            BasaltError::Storage(format!(
                "writing segment {} on backend {}: {e}",
                command.path,
                backend.address()
            ))
        };
        let mut client = self.0.flight(backend).await?;
        let cmd = serde_json::to_vec(command).map_err(|e| failed(&e))?;
        let data = FlightDataEncoderBuilder::new()
            .with_schema(schema.clone())
            .with_flight_descriptor(Some(FlightDescriptor::new_cmd(cmd)))
            .build(futures::stream::iter(batches.into_iter().map(Ok)));
        let answers = client.do_put(data).await.map_err(|e| failed(&e))?;
        // Read to the end: a stream dropped early is reset (see `Cluster::action`).
        let answers: Vec<_> = answers.try_collect().await.map_err(|e| failed(&e))?;
        let answer = answers
            .into_iter()
            .next()
            .ok_or_else(|| failed(&"no answer"))?;
        serde_json::from_slice(&answer.app_metadata).map_err(|e| failed(&e))
    }
}

impl BackendSegments {
    async fn compact_on(&self, backend: &BackendMeta, body: Vec<u8>) -> Result<Vec<SegmentMeta>> {
        let answer = self.0.action(backend, COMPACT, body).await?;
        serde_json::from_slice(&answer).map_err(|e| {
            BasaltError::Storage(format!("compaction on backend {}: {e}", backend.address()))
        })
    }
}

impl RemoteSegments for BackendSegments {
    fn read(&self, tablet: &TabletMeta, rel: &str, columns: &[usize]) -> Result<Vec<RecordBatch>> {
        let ticket = serde_json::to_vec(&ReadSegment {
            path: rel.to_string(),
            columns: columns.to_vec(),
        })
        .map_err(|e| BasaltError::Internal(e.to_string()))?;
        let read = |backend: BackendMeta| {
            let ticket = ticket.clone();
            async move {
                let failed = |e: &dyn std::fmt::Display| {
                    BasaltError::Storage(format!(
                        "reading segment {rel} on backend {}: {e}",
                        backend.address()
                    ))
                };
                let mut client = self.0.flight(&backend).await?;
                let stream = client
                    .do_get(arrow_flight::Ticket::new(ticket))
                    .await
                    .map_err(|e| failed(&e))?;
                stream.try_collect::<Vec<_>>().await.map_err(|e| failed(&e))
            }
        };
        self.0.wait_for(read_from_replicas(&self.0, tablet, read))
    }

    fn read_rows(&self, tablet: &TabletMeta, rows: &[(String, u32)]) -> Result<Vec<Vec<u8>>> {
        let body = serde_json::to_vec(rows).map_err(|e| BasaltError::Internal(e.to_string()))?;
        let read = |backend: BackendMeta| {
            let body = body.clone();
            async move {
                let failed = |e: &dyn std::fmt::Display| {
                    BasaltError::Storage(format!(
                        "reading rows of tablet {} on backend {}: {e}",
                        tablet.id,
                        backend.address()
                    ))
                };
                let answer = self
                    .0
                    .action(&backend, READ_ROWS, body)
                    .await
                    .map_err(|e| failed(&e))?;
                unframe_rows(&answer).ok_or_else(|| failed(&"a malformed answer"))
            }
        };
        self.0.wait_for(read_from_replicas(&self.0, tablet, read))
    }

    fn compact(
        &self,
        table: &TableMeta,
        tablet: &TabletMeta,
        inputs: &[SegmentMeta],
        output_id: u64,
        segment_rows: usize,
    ) -> Result<CompactedSegments> {
        // Only the compacted tablet travels with the table's definition.
        let mut definition = table.clone();
        definition.retain_tablets(|t| t.id == tablet.id);
        let body = serde_json::to_vec(&CompactTablet {
            table: definition,
            tablet_id: tablet.id,
            inputs: inputs.to_vec(),
            output_id,
            segment_rows,
        })
        .map_err(|e| BasaltError::Internal(e.to_string()))?;
        // Stale replicas lack inputs: they are skipped, and copy the output afterwards.
        let mut outputs = self.0.wait_for(write_to_majority(
            &self.0,
            table,
            tablet,
            Targets::Readable,
            |b| {
                let body = body.clone();
                async move { self.compact_on(&b, body).await }
            },
        ))?;
        let replicas: Vec<BackendId> = outputs.iter().map(|(id, _)| *id).collect();
        let (_, first) = outputs.pop().ok_or_else(|| {
            BasaltError::Internal(format!("tablet {} has no replicas", tablet.id))
        })?;
        // The merge is deterministic: every replica wrote the same rows under the same names.
        let rows = |s: &[SegmentMeta]| -> Vec<(String, u64)> {
            s.iter().map(|m| (m.path.clone(), m.num_rows)).collect()
        };
        if outputs.iter().any(|(_, o)| rows(o) != rows(&first)) {
            return Err(BasaltError::Storage(format!(
                "the replicas of tablet {} compacted to different outputs",
                tablet.id
            )));
        }
        Ok(CompactedSegments {
            segments: first,
            replicas,
        })
    }

    fn write(
        &self,
        table: &TableMeta,
        tablet: &TabletMeta,
        rel: &Path,
        schema: &SchemaRef,
        batches: &[RecordBatch],
    ) -> Result<WrittenSegment> {
        let command = WriteSegment {
            path: rel.to_string_lossy().into_owned(),
            bloom_filter_columns: basalt_storage::segment::bloom_filter_columns(table),
            row_store: table.stores_rows(),
        };
        // The replicas are written together, stale ones too (the segment is whole in the
        // batches); a majority must hold it before the load may publish (the others turn
        // stale with the publish, and a stale one stays stale until it has caught up).
        let mut written = self.0.wait_for(write_to_majority(
            &self.0,
            table,
            tablet,
            Targets::StaleToo,
            |b| {
                let command = &command;
                async move { self.put(&b, command, schema, batches.to_vec()).await }
            },
        ))?;
        let replicas = written.iter().map(|(id, _)| *id).collect();
        let (_, meta) = written.swap_remove(0);
        Ok(WrittenSegment { meta, replicas })
    }

    fn remove(&self, files: Vec<(Vec<BackendId>, String)>) {
        let mut by_backend: BTreeMap<BackendId, Vec<String>> = BTreeMap::new();
        for (replicas, path) in files {
            for id in replicas {
                by_backend.entry(id).or_default().push(path.clone());
            }
        }
        for (id, paths) in by_backend {
            let cluster = self.0.clone();
            self.0.runtime().spawn(async move {
                let result = async {
                    let backend = cluster.backend(id)?;
                    let body = serde_json::to_vec(&paths)
                        .map_err(|e| BasaltError::Internal(e.to_string()))?;
                    cluster.action(&backend, REMOVE_SEGMENTS, body).await
                }
                .await;
                if let Err(e) = result {
                    tracing::warn!("could not remove segments on backend {id}: {e}");
                }
            });
        }
    }
}
