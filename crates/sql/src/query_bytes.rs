//! A client's statement arrives as bytes. Text outside string literals is UTF-8; a string
//! literal may hold any bytes (mysqldump writes BITMAP and HLL values, and any binary value,
//! as escaped raw bytes). A literal whose bytes are not UTF-8 becomes a hex literal `X'..'` of
//! the bytes it denotes, so that the statement is text and no byte is lost.

use std::borrow::Cow;

/// The statement `bytes` as SQL text (see the module doc). Invalid UTF-8 outside a string
/// literal is replaced by U+FFFD, as before.
pub fn query_text(bytes: &[u8]) -> Cow<'_, str> {
    if let Ok(text) = std::str::from_utf8(bytes) {
        return Cow::Borrowed(text);
    }
    let mut out: Vec<u8> = Vec::with_capacity(bytes.len() + 16);
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            quote @ (b'\'' | b'"') => {
                let (value, end) = literal(bytes, i + 1, quote);
                let raw = &bytes[i..end];
                if std::str::from_utf8(raw).is_ok() {
                    out.extend_from_slice(raw);
                } else {
                    // After a character set introducer (`_binary'..'`) the hex literal needs
                    // a space, or it would read as part of the introducer's name.
                    if out
                        .last()
                        .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_')
                    {
                        out.push(b' ');
                    }
                    out.extend_from_slice(b"X'");
                    for b in value {
                        out.extend_from_slice(format!("{b:02X}").as_bytes());
                    }
                    out.push(b'\'');
                }
                i = end;
            }
            b'#' => i = copy_until(bytes, i, b"\n", &mut out),
            b'-' if bytes.get(i + 1) == Some(&b'-')
                && bytes.get(i + 2).is_none_or(|b| b.is_ascii_whitespace()) =>
            {
                i = copy_until(bytes, i, b"\n", &mut out)
            }
            // A comment, but not a version comment (`/*!40101 .. */`), which holds SQL.
            b'/' if bytes.get(i + 1) == Some(&b'*') && bytes.get(i + 2) != Some(&b'!') => {
                i = copy_until(bytes, i, b"*/", &mut out)
            }
            b'`' => {
                let end = bytes[i + 1..]
                    .iter()
                    .position(|&b| b == b'`')
                    .map_or(bytes.len(), |p| i + 2 + p);
                out.extend_from_slice(&bytes[i..end]);
                i = end;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    Cow::Owned(String::from_utf8_lossy(&out).into_owned())
}

/// Copies `bytes[start..]` up to and including `end` (or to the end), returns where it stopped.
fn copy_until(bytes: &[u8], start: usize, end: &[u8], out: &mut Vec<u8>) -> usize {
    let stop = bytes[start..]
        .windows(end.len())
        .position(|w| w == end)
        .map_or(bytes.len(), |p| start + p + end.len());
    out.extend_from_slice(&bytes[start..stop]);
    stop
}

/// The value of the literal whose body starts at `start` (after its opening `quote`), and the
/// index just past its closing quote (or the end of the input).
fn literal(bytes: &[u8], start: usize, quote: u8) -> (Vec<u8>, usize) {
    let mut value = Vec::new();
    let mut i = start;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'\\' && i + 1 < bytes.len() {
            let next = bytes[i + 1];
            match next {
                b'0' => value.push(0),
                b'b' => value.push(8),
                b'n' => value.push(b'\n'),
                b'r' => value.push(b'\r'),
                b't' => value.push(b'\t'),
                b'Z' => value.push(26),
                // LIKE's escapes keep their backslash.
                b'%' | b'_' => value.extend_from_slice(&[b'\\', next]),
                other => value.push(other),
            }
            i += 2;
        } else if b == quote {
            if bytes.get(i + 1) == Some(&quote) {
                value.push(quote);
                i += 2;
            } else {
                return (value, i + 1);
            }
        } else {
            value.push(b);
            i += 1;
        }
    }
    (value, bytes.len())
}

#[cfg(test)]
mod tests {
    use super::query_text;

    #[test]
    fn utf8_text_is_unchanged() {
        let sql = "INSERT INTO t VALUES ('héllo', \"it's\")";
        assert_eq!(query_text(sql.as_bytes()), sql);
    }

    #[test]
    fn binary_literals_become_hex() {
        let mut sql = b"INSERT INTO t VALUES (1, '".to_vec();
        sql.extend_from_slice(&[0x01, b'\\', b'0', 0xd8, b'\\', b'\'', b'\'', b'\'', 0xff]);
        sql.extend_from_slice(b"', 'ok', `c``d`)");
        assert_eq!(
            query_text(&sql),
            "INSERT INTO t VALUES (1, X'0100D82727FF', 'ok', `c``d`)"
        );
        assert_eq!(query_text(b"SELECT _binary'\xff'"), "SELECT _binary X'FF'");
    }

    #[test]
    fn invalid_bytes_outside_literals_are_replaced() {
        assert_eq!(query_text(b"SELECT 1 -- \xff"), "SELECT 1 -- \u{fffd}");
        assert_eq!(
            query_text(b"SELECT '\xff' /* it's */ # it's\n, 'a'"),
            "SELECT X'FF' /* it's */ # it's\n, 'a'"
        );
    }
}
