//! MySQL packet framing: the 4-byte header (3-byte little-endian length, 1-byte sequence id),
//! splitting payloads of 0xFFFFFF bytes or more into several packets and reassembling them on
//! read, sequence-id bookkeeping, and buffered I/O (responses are built in one output buffer and
//! written by an explicit `flush`).

use std::io;

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};

/// Largest payload one packet can carry; a payload of this length is continued by another packet.
pub const MAX_CHUNK: usize = 0xff_ffff;

/// Why reading a packet failed.
#[derive(Debug)]
pub enum ReadError {
    /// The peer closed the connection (cleanly or mid-packet).
    Closed,
    /// The reassembled payload would exceed the configured maximum packet size.
    TooLarge,
    Io(io::Error),
}

impl From<io::Error> for ReadError {
    fn from(e: io::Error) -> Self {
        if is_disconnect(&e) {
            ReadError::Closed
        } else {
            ReadError::Io(e)
        }
    }
}

/// Whether an I/O error just means the peer went away.
pub fn is_disconnect(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::UnexpectedEof
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::BrokenPipe
    )
}

/// Appends `payload` to `out` as one or more framed packets, advancing `seq` once per packet.
pub fn encode_packets(out: &mut Vec<u8>, seq: &mut u8, payload: &[u8]) {
    let mut rest = payload;
    loop {
        let n = rest.len().min(MAX_CHUNK);
        let (chunk, tail) = rest.split_at(n);
        out.extend_from_slice(&(n as u32).to_le_bytes()[..3]);
        out.push(*seq);
        *seq = seq.wrapping_add(1);
        out.extend_from_slice(chunk);
        rest = tail;
        // A chunk of exactly MAX_CHUNK bytes must be followed by another (possibly empty) one.
        if n < MAX_CHUNK {
            break;
        }
    }
}

/// Offset of a packet being built in the output buffer (see [`PacketIo::begin`]).
#[derive(Debug, Clone, Copy)]
pub struct PacketStart(usize);

/// A client connection seen as a sequence of packets.
pub struct PacketIo<S> {
    stream: BufReader<S>,
    out: Vec<u8>,
    seq: u8,
    max_packet_size: usize,
    /// Bytes read and written since [`Self::take_traffic`] last asked.
    received: u64,
    sent: u64,
}

impl<S: AsyncRead + AsyncWrite + Unpin> PacketIo<S> {
    pub fn new(stream: S, max_packet_size: usize) -> Self {
        PacketIo {
            stream: BufReader::with_capacity(16 * 1024, stream),
            out: Vec::with_capacity(16 * 1024),
            seq: 0,
            max_packet_size,
            received: 0,
            sent: 0,
        }
    }

    /// Completes when the client closes its side of the connection (or it fails); never completes
    /// if the client sends more data instead. Cancel-safe: nothing is consumed.
    pub async fn peer_closed(&mut self) {
        match self.stream.fill_buf().await {
            Ok(buf) if !buf.is_empty() => std::future::pending::<()>().await,
            _ => {}
        }
    }

    /// Changes the largest packet accepted (small until the client has authenticated).
    pub fn set_max_packet_size(&mut self, max_packet_size: usize) {
        self.max_packet_size = max_packet_size;
    }

    /// Starts a new command exchange: the next packet read or written has sequence id 0.
    pub fn reset_seq(&mut self) {
        self.seq = 0;
    }

    /// Reads one logical packet (reassembling continuation packets). The sequence id of the next
    /// packet written follows the last one read.
    pub async fn read_packet(&mut self) -> Result<Vec<u8>, ReadError> {
        let mut payload = Vec::new();
        loop {
            let mut header = [0u8; 4];
            self.stream.read_exact(&mut header).await?;
            let len = usize::from(header[0])
                | (usize::from(header[1]) << 8)
                | (usize::from(header[2]) << 16);
            self.seq = header[3].wrapping_add(1);
            self.received += 4 + len as u64;
            if payload.len() + len > self.max_packet_size {
                return Err(ReadError::TooLarge);
            }
            // Grow the buffer as bytes arrive, not from the length a client claims.
            let start = payload.len();
            let read = (&mut self.stream)
                .take(len as u64)
                .read_to_end(&mut payload)
                .await?;
            if read < len {
                return Err(io::Error::from(io::ErrorKind::UnexpectedEof).into());
            }
            debug_assert_eq!(payload.len(), start + len);
            if len < MAX_CHUNK {
                return Ok(payload);
            }
        }
    }

    /// Queues `payload` as the next packet(s).
    pub fn write_packet(&mut self, payload: &[u8]) {
        encode_packets(&mut self.out, &mut self.seq, payload);
    }

    /// Queues a packet whose payload `build` appends to the buffer it is given.
    pub fn packet(&mut self, build: impl FnOnce(&mut Vec<u8>)) {
        let start = self.begin();
        build(self.buffer());
        self.finish(start);
    }

    /// Starts building a packet in place; append the payload to [`Self::buffer`], then call
    /// [`Self::finish`].
    pub fn begin(&mut self) -> PacketStart {
        let start = self.out.len();
        self.out.extend_from_slice(&[0, 0, 0, 0]);
        PacketStart(start)
    }

    /// The output buffer, for appending the payload of the packet being built.
    pub fn buffer(&mut self) -> &mut Vec<u8> {
        &mut self.out
    }

    /// Completes the packet started at `start`: writes its header, splitting it if it is too long.
    pub fn finish(&mut self, start: PacketStart) {
        let header_at = start.0;
        let len = self.out.len().saturating_sub(header_at + 4);
        if len < MAX_CHUNK {
            let len_bytes = (len as u32).to_le_bytes();
            if let Some(header) = self.out.get_mut(header_at..header_at + 4) {
                header[..3].copy_from_slice(&len_bytes[..3]);
                header[3] = self.seq;
            }
            self.seq = self.seq.wrapping_add(1);
        } else {
            let payload = self.out.split_off(header_at + 4);
            self.out.truncate(header_at);
            encode_packets(&mut self.out, &mut self.seq, &payload);
        }
    }

    /// (bytes read, bytes written) since the last call.
    pub fn take_traffic(&mut self) -> (u64, u64) {
        let traffic = (self.received, self.sent);
        self.received = 0;
        self.sent = 0;
        traffic
    }

    /// Bytes queued and not yet written.
    pub fn pending(&self) -> usize {
        self.out.len()
    }

    /// Writes everything queued to the socket and flushes it.
    pub async fn flush(&mut self) -> io::Result<()> {
        if !self.out.is_empty() {
            self.stream.get_mut().write_all(&self.out).await?;
            self.sent += self.out.len() as u64;
            self.out.clear();
        }
        self.stream.get_mut().flush().await
    }

    /// Shuts down the write side after flushing (best effort).
    pub async fn shutdown(&mut self) {
        if self.flush().await.is_ok() {
            let _ = self.stream.get_mut().shutdown().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::duplex;

    #[test]
    fn small_packet_framing() {
        let mut out = Vec::new();
        let mut seq = 3;
        encode_packets(&mut out, &mut seq, b"abc");
        assert_eq!(out, [3, 0, 0, 3, b'a', b'b', b'c']);
        assert_eq!(seq, 4);
        let mut out = Vec::new();
        let mut seq = 255;
        encode_packets(&mut out, &mut seq, b"");
        assert_eq!(out, [0, 0, 0, 255]);
        assert_eq!(seq, 0);
    }

    #[test]
    fn large_payload_is_split() {
        let payload: Vec<u8> = (0..MAX_CHUNK + 10).map(|i| i as u8).collect();
        let mut out = Vec::new();
        let mut seq = 0;
        encode_packets(&mut out, &mut seq, &payload);
        assert_eq!(seq, 2);
        assert_eq!(&out[..4], &[0xff, 0xff, 0xff, 0]);
        assert_eq!(&out[4 + MAX_CHUNK..8 + MAX_CHUNK], &[10, 0, 0, 1]);
        assert_eq!(out.len(), payload.len() + 8);

        // Exactly MAX_CHUNK bytes: followed by an empty packet.
        let payload = vec![7u8; MAX_CHUNK];
        let mut out = Vec::new();
        let mut seq = 0;
        encode_packets(&mut out, &mut seq, &payload);
        assert_eq!(seq, 2);
        assert_eq!(&out[4 + MAX_CHUNK..], &[0, 0, 0, 1]);
    }

    #[tokio::test]
    async fn split_and_reassemble_round_trip() {
        let (a, b) = duplex(1 << 16);
        let payload: Vec<u8> = (0..2 * MAX_CHUNK + 5).map(|i| (i % 251) as u8).collect();
        let expected = payload.clone();
        let writer = tokio::spawn(async move {
            let mut io = PacketIo::new(a, usize::MAX);
            // Built in place, so `finish` has to split it.
            let start = io.begin();
            io.buffer().extend_from_slice(&payload);
            io.finish(start);
            io.write_packet(b"next");
            io.flush().await.unwrap();
            io
        });
        let mut reader = PacketIo::new(b, usize::MAX);
        let got = reader.read_packet().await.unwrap();
        assert_eq!(got.len(), expected.len());
        assert!(got == expected);
        assert_eq!(reader.seq, 3);
        assert_eq!(reader.read_packet().await.unwrap(), b"next");
        assert_eq!(reader.seq, 4);
        drop(writer.await.unwrap());
        assert!(matches!(reader.read_packet().await, Err(ReadError::Closed)));
    }

    #[tokio::test]
    async fn in_place_packets_get_headers_and_sequence() {
        let (a, mut b) = duplex(1024);
        let mut io = PacketIo::new(a, 1024);
        io.reset_seq();
        io.packet(|buf| buf.extend_from_slice(b"xy"));
        io.write_packet(b"z");
        assert_eq!(io.pending(), 6 + 5);
        io.flush().await.unwrap();
        drop(io);
        let mut got = Vec::new();
        b.read_to_end(&mut got).await.unwrap();
        assert_eq!(got, [2, 0, 0, 0, b'x', b'y', 1, 0, 0, 1, b'z']);
    }

    #[tokio::test]
    async fn oversized_and_truncated_packets() {
        let (mut a, b) = duplex(1024);
        a.write_all(&[200, 0, 0, 0]).await.unwrap();
        let mut io = PacketIo::new(b, 100);
        assert!(matches!(io.read_packet().await, Err(ReadError::TooLarge)));

        let (mut a, b) = duplex(1024);
        a.write_all(&[5, 0, 0, 0, b'a']).await.unwrap();
        drop(a);
        let mut io = PacketIo::new(b, 100);
        assert!(matches!(io.read_packet().await, Err(ReadError::Closed)));
    }
}
