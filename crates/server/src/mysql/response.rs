//! Generic server replies: OK, ERR and EOF payloads (and the OK-with-0xFE-header that replaces
//! EOF when the client set CLIENT_DEPRECATE_EOF).

use basalt_common::BasaltError;

use super::wire::{put_lenenc_bytes, put_lenenc_int, put_u16};

/// Header byte of an OK packet.
pub const OK_HEADER: u8 = 0x00;
/// Header byte of an EOF packet, and of an OK packet that ends a result set under DEPRECATE_EOF.
pub const EOF_HEADER: u8 = 0xfe;
/// Header byte of an ERR packet.
pub const ERR_HEADER: u8 = 0xff;

/// Longest error message sent, in bytes.
pub const MAX_ERROR_MESSAGE: usize = 512;

/// An error as it goes on the wire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorReply {
    pub code: u16,
    pub sqlstate: &'static str,
    pub message: String,
}

impl ErrorReply {
    pub fn new(code: u16, sqlstate: &'static str, message: impl Into<String>) -> Self {
        ErrorReply {
            code,
            sqlstate,
            message: message.into(),
        }
    }
}

impl From<&BasaltError> for ErrorReply {
    fn from(e: &BasaltError) -> Self {
        ErrorReply::new(e.mysql_code(), e.sqlstate(), e.to_string())
    }
}

/// OK packet body (`header` is [`OK_HEADER`], or [`EOF_HEADER`] when it terminates a result set).
pub fn ok(
    out: &mut Vec<u8>,
    header: u8,
    affected_rows: u64,
    last_insert_id: u64,
    status: u16,
    warnings: u16,
    info: &str,
) {
    out.push(header);
    put_lenenc_int(out, affected_rows);
    put_lenenc_int(out, last_insert_id);
    put_u16(out, status);
    put_u16(out, warnings);
    // The protocol documents the info as string<EOF> without CLIENT_SESSION_TRACK, but MySQL and
    // MariaDB servers send it length-encoded and MariaDB's client library reads it that way.
    if !info.is_empty() {
        put_lenenc_bytes(out, info.as_bytes());
    }
}

/// Classic EOF packet body.
pub fn eof(out: &mut Vec<u8>, warnings: u16, status: u16) {
    out.push(EOF_HEADER);
    put_u16(out, warnings);
    put_u16(out, status);
}

/// The packet that ends a result set or a column list: EOF, or OK with a 0xFE header when the
/// client deprecated EOF.
pub fn end_of_rows(out: &mut Vec<u8>, deprecate_eof: bool, status: u16) {
    if deprecate_eof {
        ok(out, EOF_HEADER, 0, 0, status, 0, "");
    } else {
        eof(out, 0, status);
    }
}

/// ERR packet body (protocol 4.1 form, with SQLSTATE). The message is cut to
/// [`MAX_ERROR_MESSAGE`] bytes on a character boundary.
pub fn err(out: &mut Vec<u8>, reply: &ErrorReply) {
    out.push(ERR_HEADER);
    put_u16(out, reply.code);
    out.push(b'#');
    let state = reply.sqlstate.as_bytes();
    if state.len() == 5 {
        out.extend_from_slice(state);
    } else {
        out.extend_from_slice(b"HY000");
    }
    out.extend_from_slice(truncate_on_char_boundary(&reply.message, MAX_ERROR_MESSAGE).as_bytes());
}

fn truncate_on_char_boundary(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s.get(..end).unwrap_or_default()
}

/// The affected-row count of an OK packet: for a client with CLIENT_FOUND_ROWS, an UPDATE's
/// rows matched (its info reads "Rows matched: M  Changed: C  Warnings: W", as MySQL's does)
/// in place of the rows it changed.
pub fn affected_rows(affected: u64, info: &str, found_rows: bool) -> u64 {
    if !found_rows {
        return affected;
    }
    info.strip_prefix("Rows matched: ")
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|matched| matched.parse().ok())
        .unwrap_or(affected)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn found_rows_clients_get_an_updates_rows_matched() {
        let info = "Rows matched: 3  Changed: 1  Warnings: 0";
        assert_eq!(affected_rows(1, info, false), 1);
        assert_eq!(affected_rows(1, info, true), 3);
        assert_eq!(affected_rows(4, "", true), 4);
        assert_eq!(
            affected_rows(4, "Records: 4  Duplicates: 0  Warnings: 0", true),
            4
        );
    }

    #[test]
    fn ok_layout() {
        let mut out = Vec::new();
        ok(&mut out, OK_HEADER, 3, 300, 0x0002, 1, "");
        assert_eq!(out, [0, 3, 0xfc, 0x2c, 0x01, 2, 0, 1, 0]);
        let mut out = Vec::new();
        ok(&mut out, OK_HEADER, 0, 0, 0, 0, "Rows matched: 1");
        assert_eq!(&out[..5], &[0, 0, 0, 0, 0]);
        assert_eq!(out[7], 15, "the info is length-encoded");
        assert_eq!(&out[8..], b"Rows matched: 1");
    }

    #[test]
    fn eof_and_end_of_rows() {
        let mut out = Vec::new();
        end_of_rows(&mut out, false, 2);
        assert_eq!(out, [0xfe, 0, 0, 2, 0]);
        let mut out = Vec::new();
        end_of_rows(&mut out, true, 2);
        assert_eq!(out, [0xfe, 0, 0, 2, 0, 0, 0]);
    }

    #[test]
    fn err_layout_and_truncation() {
        let e = BasaltError::UnknownTable("db.t".into());
        let mut out = Vec::new();
        err(&mut out, &ErrorReply::from(&e));
        let mut expected = vec![0xff, 0x7a, 0x04, b'#'];
        expected.extend_from_slice(b"42S02Table 'db.t' doesn't exist");
        assert_eq!(out, expected);

        // 'é' is two bytes; 300 of them are 600 bytes, cut to 512 at a boundary.
        let long = "é".repeat(300);
        let mut out = Vec::new();
        err(&mut out, &ErrorReply::new(1105, "HY000", long));
        assert_eq!(out.len(), 9 + 512);
        let long = format!("x{}", "é".repeat(300));
        let mut out = Vec::new();
        err(&mut out, &ErrorReply::new(1105, "bad", long));
        assert_eq!(&out[4..9], b"HY000");
        assert_eq!(out.len(), 9 + 511);
        assert!(std::str::from_utf8(&out[9..]).is_ok());
    }
}
