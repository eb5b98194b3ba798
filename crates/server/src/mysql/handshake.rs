//! Connection-phase messages: capability and status flags, the server's Handshake v10, parsing
//! of the client's HandshakeResponse41, and the AuthSwitchRequest.

use super::auth::{NATIVE_PASSWORD_PLUGIN, SALT_LEN};
use super::wire::{put_nul_str, put_u16, put_u32, Malformed, Reader};

pub const CLIENT_LONG_PASSWORD: u32 = 0x0000_0001;
pub const CLIENT_FOUND_ROWS: u32 = 0x0000_0002;
pub const CLIENT_LONG_FLAG: u32 = 0x0000_0004;
pub const CLIENT_CONNECT_WITH_DB: u32 = 0x0000_0008;
pub const CLIENT_LOCAL_FILES: u32 = 0x0000_0080;
pub const CLIENT_PROTOCOL_41: u32 = 0x0000_0200;
/// The client is interactive: its idle limit is `interactive_timeout`, not `wait_timeout`.
pub const CLIENT_INTERACTIVE: u32 = 0x0000_0400;
pub const CLIENT_SSL: u32 = 0x0000_0800;
pub const CLIENT_TRANSACTIONS: u32 = 0x0000_2000;
pub const CLIENT_SECURE_CONNECTION: u32 = 0x0000_8000;
pub const CLIENT_MULTI_STATEMENTS: u32 = 0x0001_0000;
pub const CLIENT_MULTI_RESULTS: u32 = 0x0002_0000;
pub const CLIENT_PS_MULTI_RESULTS: u32 = 0x0004_0000;
pub const CLIENT_PLUGIN_AUTH: u32 = 0x0008_0000;
pub const CLIENT_CONNECT_ATTRS: u32 = 0x0010_0000;
pub const CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA: u32 = 0x0020_0000;
pub const CLIENT_DEPRECATE_EOF: u32 = 0x0100_0000;

/// Everything the server advertises (no SSL, no compression).
pub const SERVER_CAPABILITIES: u32 = CLIENT_LONG_PASSWORD
    | CLIENT_FOUND_ROWS
    | CLIENT_LONG_FLAG
    | CLIENT_CONNECT_WITH_DB
    | CLIENT_LOCAL_FILES
    | CLIENT_PROTOCOL_41
    | CLIENT_TRANSACTIONS
    | CLIENT_SECURE_CONNECTION
    | CLIENT_MULTI_STATEMENTS
    | CLIENT_MULTI_RESULTS
    | CLIENT_PS_MULTI_RESULTS
    | CLIENT_PLUGIN_AUTH
    | CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA
    | CLIENT_CONNECT_ATTRS
    | CLIENT_DEPRECATE_EOF;

/// A transaction is open (BEGIN, or a write with autocommit off, not yet committed).
pub const SERVER_STATUS_IN_TRANS: u16 = 0x0001;
pub const SERVER_STATUS_AUTOCOMMIT: u16 = 0x0002;
/// Another result set of the same COM_QUERY follows.
pub const SERVER_MORE_RESULTS_EXISTS: u16 = 0x0008;
/// `sql_mode` has NO_BACKSLASH_ESCAPES: clients escape `'` as `''`, not `\'`.
pub const SERVER_STATUS_NO_BACKSLASH_ESCAPES: u16 = 0x0200;

/// utf8mb4_general_ci, the connection character set the server announces.
pub const CHARSET_UTF8MB4_GENERAL_CI: u8 = 45;

/// Builds the Handshake v10 payload.
pub fn initial_handshake(
    out: &mut Vec<u8>,
    server_version: &str,
    connection_id: u32,
    salt: &[u8; SALT_LEN],
    status: u16,
) {
    let caps = SERVER_CAPABILITIES;
    out.push(10);
    put_nul_str(out, server_version.as_bytes());
    put_u32(out, connection_id);
    out.extend_from_slice(&salt[..8]);
    out.push(0);
    put_u16(out, caps as u16);
    out.push(CHARSET_UTF8MB4_GENERAL_CI);
    put_u16(out, status);
    put_u16(out, (caps >> 16) as u16);
    out.push(SALT_LEN as u8 + 1);
    out.extend_from_slice(&[0u8; 10]);
    out.extend_from_slice(&salt[8..]);
    out.push(0);
    put_nul_str(out, NATIVE_PASSWORD_PLUGIN.as_bytes());
}

/// Builds an AuthSwitchRequest asking the client to redo authentication with
/// `mysql_native_password` and the same scramble.
pub fn auth_switch_request(out: &mut Vec<u8>, salt: &[u8; SALT_LEN]) {
    out.push(0xfe);
    put_nul_str(out, NATIVE_PASSWORD_PLUGIN.as_bytes());
    out.extend_from_slice(salt);
    out.push(0);
}

/// A parsed HandshakeResponse41.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandshakeResponse {
    /// The client's capability flags as sent.
    pub capabilities: u32,
    pub max_packet_size: u32,
    pub charset: u8,
    pub user: String,
    pub auth_response: Vec<u8>,
    pub database: Option<String>,
    pub auth_plugin: Option<String>,
    /// The `program_name` connection attribute (CLIENT_CONNECT_ATTRS), e.g. `mysqldump`.
    pub program_name: Option<String>,
}

/// Why a handshake response was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HandshakeError {
    /// A pre-4.1 client.
    OldProtocol,
    /// The client asked for TLS, which was not offered.
    SslRequested,
    Malformed(Malformed),
}

impl From<Malformed> for HandshakeError {
    fn from(m: Malformed) -> Self {
        HandshakeError::Malformed(m)
    }
}

/// Parses a HandshakeResponse41. Which optional fields are present is decided by the flags both
/// the client and the server set.
pub fn parse_handshake_response(payload: &[u8]) -> Result<HandshakeResponse, HandshakeError> {
    let mut r = Reader::new(payload);
    let client_caps = r.u32()?;
    if client_caps & CLIENT_PROTOCOL_41 == 0 {
        return Err(HandshakeError::OldProtocol);
    }
    if client_caps & CLIENT_SSL != 0 {
        return Err(HandshakeError::SslRequested);
    }
    let caps = client_caps & SERVER_CAPABILITIES;
    let max_packet_size = r.u32()?;
    let charset = r.u8()?;
    r.take(23)?;
    let user = String::from_utf8_lossy(r.nul_terminated()?).into_owned();
    let auth_response = if caps & CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA != 0 {
        r.lenenc_bytes()?.to_vec()
    } else if caps & CLIENT_SECURE_CONNECTION != 0 {
        let len = r.u8()?;
        r.take(usize::from(len))?.to_vec()
    } else {
        r.nul_terminated()?.to_vec()
    };
    // Some clients set CONNECT_WITH_DB / PLUGIN_AUTH but end the packet early; treat a missing
    // field as absent rather than as an error.
    let database = if caps & CLIENT_CONNECT_WITH_DB != 0 && !r.is_empty() {
        let db = r.nul_terminated_or_rest();
        (!db.is_empty()).then(|| String::from_utf8_lossy(db).into_owned())
    } else {
        None
    };
    let auth_plugin = if caps & CLIENT_PLUGIN_AUTH != 0 && !r.is_empty() {
        let name = r.nul_terminated_or_rest();
        (!name.is_empty()).then(|| String::from_utf8_lossy(name).into_owned())
    } else {
        None
    };
    let program_name = if caps & CLIENT_CONNECT_ATTRS != 0 && !r.is_empty() {
        program_name(&mut r)
    } else {
        None
    };
    Ok(HandshakeResponse {
        capabilities: client_caps,
        max_packet_size,
        charset,
        user,
        auth_response,
        database,
        auth_plugin,
        program_name,
    })
}

/// The `program_name` among the connection attributes (a length-encoded block of
/// length-encoded key/value pairs); a malformed block is read as having none.
fn program_name(r: &mut Reader<'_>) -> Option<String> {
    let len = usize::try_from(r.lenenc_int().ok()?).ok()?;
    let mut attrs = Reader::new(r.take(len).ok()?);
    while !attrs.is_empty() {
        let key = attrs.lenenc_bytes().ok()?;
        let value = attrs.lenenc_bytes().ok()?;
        if key == b"program_name" {
            return Some(String::from_utf8_lossy(value).into_owned());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::super::wire::{put_lenenc_bytes, put_lenenc_int};
    use super::*;

    const SALT: &[u8; 20] = b"abcdefghijklmnopqrst";

    fn response(caps: u32, auth: &[u8], db: Option<&str>, plugin: Option<&str>) -> Vec<u8> {
        let mut p = Vec::new();
        put_u32(&mut p, caps);
        put_u32(&mut p, 1 << 24);
        p.push(45);
        p.extend_from_slice(&[0u8; 23]);
        p.extend_from_slice(b"alice\0");
        if caps & CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA != 0 {
            put_lenenc_bytes(&mut p, auth);
        } else if caps & CLIENT_SECURE_CONNECTION != 0 {
            p.push(auth.len() as u8);
            p.extend_from_slice(auth);
        } else {
            p.extend_from_slice(auth);
            p.push(0);
        }
        if let Some(db) = db {
            p.extend_from_slice(db.as_bytes());
            p.push(0);
        }
        if let Some(plugin) = plugin {
            p.extend_from_slice(plugin.as_bytes());
            p.push(0);
        }
        if caps & CLIENT_CONNECT_ATTRS != 0 {
            let mut attrs = Vec::new();
            put_lenenc_bytes(&mut attrs, b"_client_name");
            put_lenenc_bytes(&mut attrs, b"test");
            put_lenenc_bytes(&mut attrs, b"program_name");
            put_lenenc_bytes(&mut attrs, b"mysqldump");
            put_lenenc_int(&mut p, attrs.len() as u64);
            p.extend_from_slice(&attrs);
        }
        p
    }

    #[test]
    fn handshake_v10_layout() {
        let mut out = Vec::new();
        initial_handshake(
            &mut out,
            "5.7.99-Basalt",
            0x0102_0304,
            SALT,
            SERVER_STATUS_AUTOCOMMIT,
        );
        let mut r = Reader::new(&out);
        assert_eq!(r.u8(), Ok(10));
        assert_eq!(r.nul_terminated(), Ok(&b"5.7.99-Basalt"[..]));
        assert_eq!(r.u32(), Ok(0x0102_0304));
        assert_eq!(r.take(8), Ok(&SALT[..8]));
        assert_eq!(r.u8(), Ok(0));
        let low = r.u16().unwrap();
        assert_eq!(r.u8(), Ok(45));
        assert_eq!(r.u16(), Ok(SERVER_STATUS_AUTOCOMMIT));
        let high = r.u16().unwrap();
        let caps = u32::from(low) | (u32::from(high) << 16);
        assert_eq!(caps, SERVER_CAPABILITIES);
        assert_eq!(caps & (CLIENT_SSL | 0x20), 0, "no SSL, no compression");
        assert_eq!(r.u8(), Ok(21));
        assert_eq!(r.take(10), Ok(&[0u8; 10][..]));
        assert_eq!(r.take(12), Ok(&SALT[8..]));
        assert_eq!(r.u8(), Ok(0));
        assert_eq!(r.nul_terminated(), Ok(&b"mysql_native_password"[..]));
        assert!(r.is_empty());
    }

    #[test]
    fn auth_switch_layout() {
        let mut out = Vec::new();
        auth_switch_request(&mut out, SALT);
        let mut expected = b"\xfemysql_native_password\0".to_vec();
        expected.extend_from_slice(SALT);
        expected.push(0);
        assert_eq!(out, expected);
    }

    #[test]
    fn parses_lenenc_auth_with_db_plugin_and_attrs() {
        let caps = SERVER_CAPABILITIES;
        let p = response(
            caps,
            &[7u8; 20],
            Some("sales"),
            Some("caching_sha2_password"),
        );
        let r = parse_handshake_response(&p).unwrap();
        assert_eq!(r.capabilities, caps);
        assert_eq!(r.max_packet_size, 1 << 24);
        assert_eq!(r.charset, 45);
        assert_eq!(r.user, "alice");
        assert_eq!(r.auth_response, vec![7u8; 20]);
        assert_eq!(r.database.as_deref(), Some("sales"));
        assert_eq!(r.auth_plugin.as_deref(), Some("caching_sha2_password"));
        assert_eq!(r.program_name.as_deref(), Some("mysqldump"));
    }

    #[test]
    fn parses_one_byte_auth_without_db() {
        let caps = CLIENT_PROTOCOL_41 | CLIENT_SECURE_CONNECTION | CLIENT_PLUGIN_AUTH;
        let p = response(caps, &[1u8; 20], None, Some("mysql_native_password"));
        let r = parse_handshake_response(&p).unwrap();
        assert_eq!(r.auth_response, vec![1u8; 20]);
        assert_eq!(r.database, None);
        assert_eq!(r.auth_plugin.as_deref(), Some("mysql_native_password"));
    }

    #[test]
    fn parses_nul_terminated_auth_and_missing_optional_fields() {
        let caps = CLIENT_PROTOCOL_41 | CLIENT_CONNECT_WITH_DB | CLIENT_PLUGIN_AUTH;
        let p = response(caps, b"", Some("db1"), None);
        let r = parse_handshake_response(&p).unwrap();
        assert!(r.auth_response.is_empty());
        assert_eq!(r.database.as_deref(), Some("db1"));
        assert_eq!(r.auth_plugin, None);
        // Empty database name means none.
        let p = response(caps | CLIENT_SECURE_CONNECTION, b"", Some(""), None);
        assert_eq!(parse_handshake_response(&p).unwrap().database, None);
    }

    #[test]
    fn rejects_old_ssl_and_truncated_responses() {
        let p = response(CLIENT_SECURE_CONNECTION, b"", None, None);
        assert_eq!(
            parse_handshake_response(&p),
            Err(HandshakeError::OldProtocol)
        );
        let p = response(CLIENT_PROTOCOL_41 | CLIENT_SSL, b"", None, None);
        assert_eq!(
            parse_handshake_response(&p),
            Err(HandshakeError::SslRequested)
        );
        let full = response(SERVER_CAPABILITIES, &[7u8; 20], Some("db"), Some("x"));
        // Every truncation up to the end of the auth data is malformed; none panics.
        for n in 0..full.len() {
            let res = parse_handshake_response(&full[..n]);
            if n < 4 + 4 + 1 + 23 + 6 + 21 {
                assert!(matches!(res, Err(HandshakeError::Malformed(_))), "n={n}");
            }
        }
        // Declared auth length longer than the packet.
        let mut bad = response(SERVER_CAPABILITIES, b"", None, None);
        let at = 4 + 4 + 1 + 23 + 6;
        bad.truncate(at);
        bad.extend_from_slice(&[0xfc, 0xff, 0xff, 1, 2]);
        assert!(matches!(
            parse_handshake_response(&bad),
            Err(HandshakeError::Malformed(_))
        ));
        assert!(parse_handshake_response(&[0xff; 3]).is_err());
    }
}
