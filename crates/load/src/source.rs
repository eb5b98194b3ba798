//! The request body as a blocking reader: chunks arrive from the HTTP task over a bounded
//! channel (so a slow load slows the client, never buffers the body), optionally through a
//! gzip or zstd decoder.

use super::options::Compression;
use bytes::Bytes;
use std::io::Read;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use tokio::sync::mpsc::Receiver;

/// What the HTTP side sends: chunks of the body, then exactly one `End` or `Failed`.
#[derive(Debug)]
pub enum BodyFrame {
    Data(Bytes),
    /// The whole body arrived.
    End,
    /// The body could not be read to its end (client gone, truncated, over the size limit).
    Failed(String),
}

/// Reads body chunks sent by the HTTP side. Only an explicit `End` is the end of the body: a
/// channel that closes without one (the request was dropped, the server is shutting down)
/// is an error, so a partial body can never be loaded as if it were whole.
pub struct BodyReader {
    rx: Receiver<BodyFrame>,
    current: Bytes,
    ended: bool,
    /// Bytes received so far (compressed size).
    pub received: Arc<AtomicU64>,
}

impl BodyReader {
    pub fn new(rx: Receiver<BodyFrame>) -> BodyReader {
        BodyReader {
            rx,
            current: Bytes::new(),
            ended: false,
            received: Arc::new(AtomicU64::new(0)),
        }
    }
}

fn body_error(message: String) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::UnexpectedEof, message)
}

impl Read for BodyReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.current.is_empty() {
            if self.ended {
                return Ok(0);
            }
            match self.rx.blocking_recv() {
                Some(BodyFrame::Data(b)) => {
                    self.received.fetch_add(b.len() as u64, Ordering::Relaxed);
                    self.current = b;
                }
                Some(BodyFrame::End) => self.ended = true,
                Some(BodyFrame::Failed(e)) => {
                    return Err(body_error(format!("reading the request body failed: {e}")))
                }
                None => {
                    return Err(body_error(
                        "the request body ended before it was complete (the request was \
                         abandoned or the server is shutting down)"
                            .into(),
                    ))
                }
            }
        }
        let n = buf.len().min(self.current.len());
        buf[..n].copy_from_slice(&self.current[..n]);
        let _ = self.current.split_to(n);
        Ok(n)
    }
}

/// The body, decompressed as `compression` says.
pub fn decompressed(
    body: BodyReader,
    compression: Compression,
) -> std::io::Result<Box<dyn Read + Send>> {
    Ok(match compression {
        Compression::None => Box::new(body),
        Compression::Gzip => Box::new(flate2::read::MultiGzDecoder::new(body)),
        Compression::Zstd => Box::new(zstd::stream::read::Decoder::new(body)?),
    })
}

/// Reads until `buf` holds `want` bytes or the input ends; returns false at end of input.
/// The buffer grows with what arrives (doubling), not to `want` up front, so a large `want`
/// (a cap) costs nothing for a small body.
pub fn fill(reader: &mut dyn Read, buf: &mut Vec<u8>, want: usize) -> std::io::Result<bool> {
    const FIRST_STEP: usize = 64 * 1024;
    let mut filled = buf.len();
    while filled < want {
        let target = want.min(filled.saturating_mul(2).max(filled + FIRST_STEP));
        buf.resize(target, 0);
        while filled < target {
            match reader.read(&mut buf[filled..target]) {
                Ok(0) => {
                    buf.truncate(filled);
                    return Ok(false);
                }
                Ok(n) => filled += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    buf.truncate(filled);
                    return Err(e);
                }
            }
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_grows_with_the_input() {
        let data = vec![7u8; 300_000];
        let mut buf = Vec::new();
        assert!(!fill(&mut &data[..], &mut buf, 100 << 20).unwrap());
        assert_eq!(buf, data);
        assert!(buf.capacity() < 1 << 20, "{}", buf.capacity());
        let mut buf = b"ab".to_vec();
        assert!(fill(&mut &data[..], &mut buf, 10).unwrap());
        assert_eq!(buf.len(), 10);
    }
}
