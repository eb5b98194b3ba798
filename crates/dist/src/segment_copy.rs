//! A backend's part of catching up a stale replica: it pulls the segment files it lacks from a
//! backend holding a readable replica (backend to backend, so the data crosses the network
//! once and the frontend only coordinates), in chunks at a bounded rate, verifies each file's
//! length and CRC-32 against the source's, and makes it durable (temporary name, fsync,
//! rename, fsync of the directory) — the row store first, as a load writes it. Files it
//! already holds identical to the source's (a backend restarted with its data directory) are
//! not copied again. The files keep their catalog paths, so the frontend's delete bitmaps
//! (merge-on-write Unique tables, kept per segment path) apply to the copies unchanged.

use crate::channels::SecretChannelResolver;
use crate::segment_protocol::{
    CopyReport, CopySegments, FileChunk, FileDigest, READ_FILE_CHUNK, SEGMENT_FILES,
};
use arrow_flight::{Action, FlightClient};
use basalt_common::{BasaltError, Result};
use basalt_storage::files::{check_segment_path, create_file_with_dirs, publish_file};
use futures::TryStreamExt;
use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Bytes asked for in one chunk.
const CHUNK_BYTES: u64 = 1 << 20;

/// The file of `segment` (a checked catalog path) under `data_dir`: the segment itself or its
/// row store.
fn file_of(data_dir: &Path, segment: &str, row_store: bool) -> Result<PathBuf> {
    let rel = check_segment_path(segment).map_err(BasaltError::InvalidData)?;
    let file = data_dir.join(rel);
    Ok(if row_store {
        basalt_storage::row_store::row_store_path(&file)
    } else {
        file
    })
}

/// Length and CRC-32 of a file, `None` when it does not exist.
fn digest_file(path: &Path) -> Result<Option<(u64, u32)>> {
    let mut file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let mut hasher = crc32fast::Hasher::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut len = 0u64;
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        len += n as u64;
    }
    Ok(Some((len, hasher.finalize())))
}

/// The files of `segments` held under `data_dir` ([`SEGMENT_FILES`]).
pub(crate) fn segment_files(data_dir: &Path, segments: &[String]) -> Result<Vec<FileDigest>> {
    let mut out = Vec::new();
    for segment in segments {
        for row_store in [false, true] {
            if let Some((len, crc32)) = digest_file(&file_of(data_dir, segment, row_store)?)? {
                out.push(FileDigest {
                    segment: segment.clone(),
                    row_store,
                    len,
                    crc32,
                });
            }
        }
    }
    Ok(out)
}

/// The bytes a [`READ_FILE_CHUNK`] asks for.
pub(crate) fn read_chunk(data_dir: &Path, chunk: &FileChunk) -> Result<Vec<u8>> {
    let mut file = std::fs::File::open(file_of(data_dir, &chunk.segment, chunk.row_store)?)?;
    file.seek(SeekFrom::Start(chunk.offset))?;
    let mut out = Vec::new();
    file.take(chunk.len.min(CHUNK_BYTES))
        .read_to_end(&mut out)?;
    Ok(out)
}

/// Runs `kind` on the source backend and returns its one answer.
async fn ask(
    client: &mut FlightClient<datafusion_distributed::grpc::BoxCloneSyncChannel>,
    source: &str,
    kind: &str,
    body: Vec<u8>,
) -> Result<bytes::Bytes> {
    let failed = |e: &dyn std::fmt::Display| {
        BasaltError::Execution(format!("{kind} on backend {source}: {e}"))
    };
    let answers = client
        .do_action(Action::new(kind.to_string(), body))
        .await
        .map_err(|e| failed(&e))?;
    let all: Vec<bytes::Bytes> = answers.try_collect().await.map_err(|e| failed(&e))?;
    all.into_iter().next().ok_or_else(|| failed(&"no answer"))
}

/// Keeps a copy at `bytes_per_second`: waits until `done` bytes are due since `start`.
async fn pace(start: Instant, done: u64, bytes_per_second: u64) {
    if bytes_per_second == 0 {
        return;
    }
    let due = Duration::from_secs_f64(done as f64 / bytes_per_second as f64);
    let elapsed = start.elapsed();
    if due > elapsed {
        tokio::time::sleep(due - elapsed).await;
    }
}

/// [`COPY_SEGMENTS`]: copies what this backend lacks of `job.segments` from `job.source`.
pub(crate) async fn copy_segments(
    data_dir: &Path,
    channels: &SecretChannelResolver,
    job: CopySegments,
) -> Result<CopyReport> {
    for segment in &job.segments {
        check_segment_path(segment).map_err(BasaltError::InvalidData)?;
    }
    let url = url::Url::parse(&format!("http://{}", job.source))
        .map_err(|e| BasaltError::InvalidData(format!("source {}: {e}", job.source)))?;
    let channel = channels
        .channel(&url)
        .await
        .map_err(|e| BasaltError::Execution(format!("backend {} unreachable: {e}", job.source)))?;
    let mut client = FlightClient::new(channel);
    let body =
        serde_json::to_vec(&job.segments).map_err(|e| BasaltError::Internal(e.to_string()))?;
    let answer = ask(&mut client, &job.source, SEGMENT_FILES, body).await?;
    let wanted: Vec<FileDigest> = serde_json::from_slice(&answer)
        .map_err(|e| BasaltError::Execution(format!("{SEGMENT_FILES}: {e}")))?;
    let dir = data_dir.to_path_buf();
    let segments = job.segments.clone();
    let held = tokio::task::spawn_blocking(move || segment_files(&dir, &segments))
        .await
        .map_err(|e| BasaltError::Internal(e.to_string()))??;
    let held: HashMap<(String, bool), FileDigest> = held
        .into_iter()
        .map(|d| ((d.segment.clone(), d.row_store), d))
        .collect();
    let mut report = CopyReport::default();
    let start = Instant::now();
    // Row stores first: a segment file is never durable before its row store.
    let mut order: Vec<&FileDigest> = wanted.iter().collect();
    order.sort_by_key(|d| (!d.row_store, d.segment.clone()));
    for want in order {
        if held.get(&(want.segment.clone(), want.row_store)) == Some(want) {
            report.files_present += 1;
            continue;
        }
        let dest = file_of(data_dir, &want.segment, want.row_store)?;
        let tmp = dest.with_extension(if want.row_store {
            "rows.copy"
        } else {
            "parquet.copy"
        });
        let mut out = create_file_with_dirs(&tmp)?;
        let mut hasher = crc32fast::Hasher::new();
        let mut offset = 0u64;
        while offset < want.len {
            let chunk = FileChunk {
                segment: want.segment.clone(),
                row_store: want.row_store,
                offset,
                len: CHUNK_BYTES.min(want.len - offset),
            };
            let body =
                serde_json::to_vec(&chunk).map_err(|e| BasaltError::Internal(e.to_string()))?;
            let bytes = ask(&mut client, &job.source, READ_FILE_CHUNK, body).await?;
            if bytes.is_empty() {
                break;
            }
            hasher.update(&bytes);
            out.write_all(&bytes)?;
            offset += bytes.len() as u64;
            report.bytes_copied += bytes.len() as u64;
            pace(start, report.bytes_copied, job.bytes_per_second).await;
        }
        drop(out);
        let crc32 = hasher.finalize();
        if offset != want.len || crc32 != want.crc32 {
            let _ = std::fs::remove_file(&tmp);
            return Err(BasaltError::Storage(format!(
                "copy of {}{} from backend {} does not verify: {offset} bytes with CRC-32 \
                 {crc32:08x}, the source has {} bytes with {:08x}",
                want.segment,
                if want.row_store { " (row store)" } else { "" },
                job.source,
                want.len,
                want.crc32
            )));
        }
        let (tmp_path, dest_path) = (tmp.clone(), dest.clone());
        tokio::task::spawn_blocking(move || publish_file(&tmp_path, &dest_path))
            .await
            .map_err(|e| BasaltError::Internal(e.to_string()))??;
        report.files_copied += 1;
    }
    // A segment is held when its file is, with its row store if the source has one.
    report.held = job
        .segments
        .iter()
        .filter(|s| wanted.iter().any(|d| &d.segment == *s && !d.row_store))
        .cloned()
        .collect();
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_and_chunks_read_the_files_of_a_segment() {
        let dir = tempfile::tempdir().unwrap();
        let seg = "data/1/2/3_0.parquet";
        let file = dir.path().join(seg);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, b"hello segment").unwrap();
        let digests = segment_files(dir.path(), &[seg.to_string()]).unwrap();
        assert_eq!(digests.len(), 1, "no row store");
        assert_eq!(digests[0].len, 13);
        assert_eq!(digests[0].crc32, crc32fast::hash(b"hello segment"));
        let chunk = FileChunk {
            segment: seg.into(),
            row_store: false,
            offset: 6,
            len: 100,
        };
        assert_eq!(read_chunk(dir.path(), &chunk).unwrap(), b"segment");
        // Paths outside the segment layout are refused.
        assert!(segment_files(dir.path(), &["../etc/passwd".to_string()]).is_err());
    }

    #[tokio::test]
    async fn a_copy_is_paced_to_its_rate() {
        let start = Instant::now();
        // 2 MiB at 16 MiB/s: due after 125 ms.
        pace(start, 2 << 20, 16 << 20).await;
        assert!(start.elapsed() >= Duration::from_millis(120));
        // Unbounded (0) never waits.
        let start = Instant::now();
        pace(start, 1 << 30, 0).await;
        assert!(start.elapsed() < Duration::from_millis(50));
    }
}
