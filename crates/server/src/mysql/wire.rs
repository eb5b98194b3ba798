//! Byte-level MySQL encodings: fixed-width little-endian integers, length-encoded integers and
//! strings, and a bounds-checked reader for parsing client payloads without panicking.

use std::fmt;

/// Marker value a length-encoded field uses for SQL NULL in row data.
pub const NULL_MARKER: u8 = 0xfb;

/// A client payload that does not follow the protocol.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Malformed(pub &'static str);

impl fmt::Display for Malformed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "malformed packet: {}", self.0)
    }
}

impl std::error::Error for Malformed {}

/// Appends a 2-byte little-endian integer.
pub fn put_u16(out: &mut Vec<u8>, v: u16) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// Appends the low 3 bytes of `v`, little-endian.
pub fn put_u24(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes()[..3]);
}

/// Appends a 4-byte little-endian integer.
pub fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// Number of bytes `put_lenenc_int` writes for `v`.
pub fn lenenc_int_len(v: u64) -> usize {
    match v {
        0..=250 => 1,
        251..=0xffff => 3,
        0x1_0000..=0xff_ffff => 4,
        _ => 9,
    }
}

/// Appends a length-encoded integer.
pub fn put_lenenc_int(out: &mut Vec<u8>, v: u64) {
    match v {
        0..=250 => out.push(v as u8),
        251..=0xffff => {
            out.push(0xfc);
            put_u16(out, v as u16);
        }
        0x1_0000..=0xff_ffff => {
            out.push(0xfd);
            put_u24(out, v as u32);
        }
        _ => {
            out.push(0xfe);
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
}

/// Appends a length-encoded string.
pub fn put_lenenc_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put_lenenc_int(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// Appends `bytes` followed by a NUL terminator (any NUL inside `bytes` is dropped).
pub fn put_nul_str(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend(bytes.iter().copied().filter(|b| *b != 0));
    out.push(0);
}

/// Appends a length-encoded string whose text is produced by `write`, which appends it to `out`.
///
/// Avoids a scratch buffer: a one-byte length is reserved and patched, and only texts of 251 bytes
/// or more need their bytes shifted to make room for a longer length prefix.
pub fn put_lenenc_with(out: &mut Vec<u8>, write: impl FnOnce(&mut Vec<u8>)) {
    let at = out.len();
    out.push(0);
    write(out);
    let len = out.len() - at - 1;
    if len <= 250 {
        out[at] = len as u8;
    } else {
        let mut prefix = Vec::with_capacity(9);
        put_lenenc_int(&mut prefix, len as u64);
        out.splice(at..at + 1, prefix);
    }
}

/// Bounds-checked cursor over a client payload.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    buf: &'a [u8],
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf }
    }

    /// Bytes not yet consumed.
    pub fn remaining(&self) -> usize {
        self.buf.len()
    }

    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// Consumes exactly `n` bytes.
    pub fn take(&mut self, n: usize) -> Result<&'a [u8], Malformed> {
        let (head, tail) = self
            .buf
            .split_at_checked(n)
            .ok_or(Malformed("unexpected end of packet"))?;
        self.buf = tail;
        Ok(head)
    }

    pub fn u8(&mut self) -> Result<u8, Malformed> {
        let (&b, tail) = self
            .buf
            .split_first()
            .ok_or(Malformed("unexpected end of packet"))?;
        self.buf = tail;
        Ok(b)
    }

    pub fn u16(&mut self) -> Result<u16, Malformed> {
        let b = self.take(2)?;
        Ok(u16::from(b[0]) | (u16::from(b[1]) << 8))
    }

    pub fn u24(&mut self) -> Result<u32, Malformed> {
        let b = self.take(3)?;
        Ok(u32::from(b[0]) | (u32::from(b[1]) << 8) | (u32::from(b[2]) << 16))
    }

    pub fn u32(&mut self) -> Result<u32, Malformed> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    pub fn u64(&mut self) -> Result<u64, Malformed> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }

    /// Consumes bytes up to a NUL and the NUL itself; fails if there is no NUL.
    pub fn nul_terminated(&mut self) -> Result<&'a [u8], Malformed> {
        let end = self
            .buf
            .iter()
            .position(|b| *b == 0)
            .ok_or(Malformed("missing NUL terminator"))?;
        let s = self.take(end)?;
        self.take(1)?;
        Ok(s)
    }

    /// Like `nul_terminated`, but a missing terminator takes the rest of the payload.
    pub fn nul_terminated_or_rest(&mut self) -> &'a [u8] {
        match self.buf.iter().position(|b| *b == 0) {
            Some(end) => {
                let (s, tail) = self.buf.split_at(end);
                self.buf = tail.get(1..).unwrap_or_default();
                s
            }
            None => self.rest(),
        }
    }

    /// Consumes a length-encoded integer; the NULL marker and 0xff are rejected.
    pub fn lenenc_int(&mut self) -> Result<u64, Malformed> {
        match self.u8()? {
            b @ 0..=250 => Ok(u64::from(b)),
            0xfc => self.u16().map(u64::from),
            0xfd => self.u24().map(u64::from),
            0xfe => self.u64(),
            _ => Err(Malformed("invalid length-encoded integer")),
        }
    }

    /// Consumes a length-encoded string.
    pub fn lenenc_bytes(&mut self) -> Result<&'a [u8], Malformed> {
        let len = self.lenenc_int()?;
        let len = usize::try_from(len).map_err(|_| Malformed("length out of range"))?;
        self.take(len)
    }

    /// Consumes everything left.
    pub fn rest(&mut self) -> &'a [u8] {
        std::mem::take(&mut self.buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(v: u64) -> Vec<u8> {
        let mut out = Vec::new();
        put_lenenc_int(&mut out, v);
        assert_eq!(out.len(), lenenc_int_len(v));
        out
    }

    #[test]
    fn lenenc_int_boundaries() {
        assert_eq!(enc(0), [0]);
        assert_eq!(enc(250), [250]);
        assert_eq!(enc(251), [0xfc, 251, 0]);
        assert_eq!(enc(0xffff), [0xfc, 0xff, 0xff]);
        assert_eq!(enc(0x1_0000), [0xfd, 0, 0, 1]);
        assert_eq!(enc(0xff_ffff), [0xfd, 0xff, 0xff, 0xff]);
        assert_eq!(enc(0x100_0000), [0xfe, 0, 0, 0, 1, 0, 0, 0, 0]);
        assert_eq!(
            enc(u64::MAX),
            [0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]
        );
        for v in [
            0,
            1,
            250,
            251,
            300,
            0xffff,
            0x1_0000,
            0xff_ffff,
            0x100_0000,
            u64::MAX,
        ] {
            let bytes = enc(v);
            let mut r = Reader::new(&bytes);
            assert_eq!(r.lenenc_int(), Ok(v));
            assert!(r.is_empty());
        }
    }

    #[test]
    fn lenenc_int_rejects_bad_prefixes_and_truncation() {
        assert!(Reader::new(&[0xfb]).lenenc_int().is_err());
        assert!(Reader::new(&[0xff]).lenenc_int().is_err());
        assert!(Reader::new(&[0xfc, 1]).lenenc_int().is_err());
        assert!(Reader::new(&[0xfd, 1, 2]).lenenc_int().is_err());
        assert!(Reader::new(&[0xfe, 1, 2, 3]).lenenc_int().is_err());
        assert!(Reader::new(&[]).lenenc_int().is_err());
    }

    #[test]
    fn lenenc_strings() {
        let mut out = Vec::new();
        put_lenenc_bytes(&mut out, b"abc");
        assert_eq!(out, b"\x03abc");
        let long = vec![b'x'; 300];
        let mut out = Vec::new();
        put_lenenc_bytes(&mut out, &long);
        assert_eq!(&out[..3], &[0xfc, 0x2c, 0x01]);
        let mut r = Reader::new(&out);
        assert_eq!(r.lenenc_bytes().unwrap(), &long[..]);
        assert!(r.is_empty());
        // Declared length longer than the payload.
        assert!(Reader::new(&[5, b'a']).lenenc_bytes().is_err());
        assert!(
            Reader::new(&[0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff])
                .lenenc_bytes()
                .is_err()
        );
    }

    #[test]
    fn lenenc_with_patches_short_and_long_lengths() {
        let mut out = vec![9];
        put_lenenc_with(&mut out, |o| o.extend_from_slice(b"hello"));
        assert_eq!(out, b"\x09\x05hello");
        let mut out = vec![9];
        put_lenenc_with(&mut out, |o| o.extend(std::iter::repeat_n(b'z', 251)));
        assert_eq!(&out[..4], &[9, 0xfc, 251, 0]);
        assert_eq!(out.len(), 4 + 251);
        let mut out = Vec::new();
        put_lenenc_with(&mut out, |_| {});
        assert_eq!(out, [0]);
    }

    #[test]
    fn reader_fixed_ints_and_strings() {
        let data = [1, 2, 0, 3, 0, 0, 4, 0, 0, 0, b'h', b'i', 0, b'x', b'y'];
        let mut r = Reader::new(&data);
        assert_eq!(r.u8(), Ok(1));
        assert_eq!(r.u16(), Ok(2));
        assert_eq!(r.u24(), Ok(3));
        assert_eq!(r.u32(), Ok(4));
        assert_eq!(r.nul_terminated(), Ok(&b"hi"[..]));
        assert!(r.clone().nul_terminated().is_err());
        assert_eq!(r.nul_terminated_or_rest(), b"xy");
        assert!(r.is_empty());
        assert!(r.u8().is_err());
        assert!(r.take(1).is_err());
        assert_eq!(r.take(0), Ok(&b""[..]));
    }

    #[test]
    fn nul_str_strips_interior_nuls() {
        let mut out = Vec::new();
        put_nul_str(&mut out, b"a\0b");
        assert_eq!(out, b"ab\0");
    }
}
