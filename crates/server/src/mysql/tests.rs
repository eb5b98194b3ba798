//! End-to-end tests of the protocol layer over an in-memory duplex pipe: a hand-written client
//! talks to `serve_connection` backed by a fake [`Backend`], and the exact response bytes are
//! checked.

use std::sync::{Arc, Mutex};

use arrow::array::{Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use basalt_common::BasaltError;
use futures::stream;
use tokio::io::{duplex, AsyncReadExt, AsyncWriteExt, DuplexStream};
use tokio::task::JoinHandle;

use super::auth::{double_sha1, scramble_native_password};
use super::handshake::*;
use super::wire::{put_lenenc_bytes, put_u32, Reader};
use super::{serve_connection, Backend, ConnectionOptions, QueryOutput};

const PASSWORD: &[u8] = b"secret";

#[derive(Clone)]
struct FakeBackend {
    log: Arc<Mutex<Vec<String>>>,
    autocommit: bool,
}

impl FakeBackend {
    fn new() -> Self {
        FakeBackend {
            log: Arc::new(Mutex::new(Vec::new())),
            autocommit: true,
        }
    }

    fn record(&self, entry: String) {
        self.log.lock().unwrap().push(entry);
    }
}

fn two_column_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("a", DataType::Int64, false),
        Field::new("b", DataType::Utf8, true),
    ]))
}

fn batch(schema: &SchemaRef, a: Vec<i64>, b: Vec<Option<&str>>) -> RecordBatch {
    RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(Int64Array::from(a)),
            Arc::new(StringArray::from(b)),
        ],
    )
    .unwrap()
}

#[async_trait::async_trait]
impl Backend for FakeBackend {
    async fn authenticate(
        &mut self,
        user: &str,
        client_host: &str,
        salt: &[u8],
        auth_response: &[u8],
        database: Option<&str>,
    ) -> Result<(), BasaltError> {
        self.record(format!("auth {user}@{client_host} db={database:?}"));
        let stored = double_sha1(PASSWORD);
        if user != "root" || !super::verify_native_password(salt, auth_response, &stored) {
            return Err(BasaltError::AccessDenied {
                user: user.to_string(),
                host: client_host.to_string(),
                using_password: !auth_response.is_empty(),
            });
        }
        if database == Some("nope") {
            return Err(BasaltError::UnknownDatabase("nope".into()));
        }
        Ok(())
    }

    async fn query(&mut self, sql: &str) -> Result<QueryOutput, BasaltError> {
        self.record(format!("query {sql}"));
        let schema = two_column_schema();
        match sql.trim_end_matches(';') {
            "SELECT 1" => {
                let b = batch(&schema, vec![1, 2], vec![Some("x"), None]);
                Ok(QueryOutput::ResultSet {
                    schema,
                    stream: Box::pin(stream::iter(vec![Ok(b)])),
                })
            }
            "SELECT fail" => {
                let b = batch(&schema, vec![1], vec![Some("x")]);
                let items = vec![Ok(b), Err(BasaltError::Execution("disk on fire".into()))];
                Ok(QueryOutput::ResultSet {
                    schema,
                    stream: Box::pin(stream::iter(items)),
                })
            }
            "SELECT many" => {
                let text = "v".repeat(100);
                let batches = (0..5)
                    .map(|i| {
                        let a: Vec<i64> = (i * 2000..(i + 1) * 2000).collect();
                        let b = vec![Some(text.as_str()); 2000];
                        Ok(batch(&schema, a, b))
                    })
                    .collect::<Vec<_>>();
                Ok(QueryOutput::ResultSet {
                    schema,
                    stream: Box::pin(stream::iter(batches)),
                })
            }
            "INSERT" => Ok(QueryOutput::Ok {
                affected_rows: 3,
                last_insert_id: 7,
                info: "Records: 3".into(),
            }),
            _ => Err(BasaltError::syntax_at("bad", sql, 1, 1)),
        }
    }

    async fn prepare(&mut self, sql: &str) -> Result<super::PreparedStatement, BasaltError> {
        self.record(format!("prepare {sql}"));
        if sql == "SELECT ?" {
            Ok(super::PreparedStatement {
                id: 1,
                params: 1,
                columns: None,
            })
        } else {
            Err(BasaltError::syntax_at("bad", sql, 1, 1))
        }
    }

    async fn execute(
        &mut self,
        id: u32,
        params: Vec<basalt_common::ParamValue>,
    ) -> Result<QueryOutput, BasaltError> {
        self.record(format!("execute {id} {params:?}"));
        let schema = Arc::new(Schema::new(vec![Field::new("v", DataType::Int64, true)]));
        let value = match params.first() {
            Some(basalt_common::ParamValue::Int(v)) => Some(*v),
            _ => None,
        };
        let b = RecordBatch::try_new(
            schema.clone(),
            vec![Arc::new(arrow::array::Int64Array::from(vec![value]))],
        )
        .unwrap();
        Ok(QueryOutput::ResultSet {
            schema,
            stream: Box::pin(stream::iter(vec![Ok(b)])),
        })
    }

    fn close(&mut self, id: u32) {
        self.record(format!("close {id}"));
    }

    async fn init_db(&mut self, database: &str) -> Result<(), BasaltError> {
        self.record(format!("init_db {database}"));
        if database == "sales" {
            Ok(())
        } else {
            Err(BasaltError::UnknownDatabase(database.into()))
        }
    }

    async fn field_list(&mut self, table: &str) -> Result<SchemaRef, BasaltError> {
        if table == "t" {
            Ok(Arc::new(Schema::new(vec![
                Field::new("id", DataType::Int32, false),
                Field::new("name", DataType::Utf8, true),
            ])))
        } else {
            Err(BasaltError::UnknownTable(format!("sales.{table}")))
        }
    }

    async fn reset(&mut self) {
        self.record("reset".into());
    }

    fn autocommit(&self) -> bool {
        self.autocommit
    }
}

/// Raw client side of the pipe.
struct Client {
    stream: DuplexStream,
    salt: Vec<u8>,
    server: JoinHandle<std::io::Result<()>>,
    log: Arc<Mutex<Vec<String>>>,
}

async fn read_packet(s: &mut DuplexStream) -> (u8, Vec<u8>) {
    let mut header = [0u8; 4];
    s.read_exact(&mut header).await.unwrap();
    let len = u32::from_le_bytes([header[0], header[1], header[2], 0]) as usize;
    let mut payload = vec![0u8; len];
    s.read_exact(&mut payload).await.unwrap();
    (header[3], payload)
}

async fn write_packet(s: &mut DuplexStream, seq: u8, payload: &[u8]) {
    let mut bytes = (payload.len() as u32).to_le_bytes()[..3].to_vec();
    bytes.push(seq);
    bytes.extend_from_slice(payload);
    s.write_all(&bytes).await.unwrap();
}

fn start(
    backend: FakeBackend,
    max_packet_size: u32,
    pipe: usize,
) -> (DuplexStream, JoinHandle<std::io::Result<()>>) {
    let (client, server) = duplex(pipe);
    let opts = ConnectionOptions {
        server_version: "5.7.99-Basalt".into(),
        connection_id: 42,
        max_packet_size,
    };
    let handle = tokio::spawn(serve_connection(server, "10.0.0.1".into(), opts, backend));
    (client, handle)
}

/// Reads the server handshake and returns the 20-byte salt.
async fn read_handshake(s: &mut DuplexStream) -> Vec<u8> {
    read_handshake_with_status(s, SERVER_STATUS_AUTOCOMMIT).await
}

async fn read_handshake_with_status(s: &mut DuplexStream, status: u16) -> Vec<u8> {
    let (seq, hs) = read_packet(s).await;
    assert_eq!(seq, 0);
    let mut r = Reader::new(&hs);
    assert_eq!(r.u8(), Ok(10));
    assert_eq!(r.nul_terminated().unwrap(), b"5.7.99-Basalt");
    assert_eq!(r.u32(), Ok(42));
    let mut salt = r.take(8).unwrap().to_vec();
    r.take(1 + 2 + 1).unwrap();
    assert_eq!(r.u16(), Ok(status));
    r.take(2 + 1 + 10).unwrap();
    salt.extend_from_slice(r.take(12).unwrap());
    assert_eq!(r.u8(), Ok(0));
    assert_eq!(r.nul_terminated().unwrap(), b"mysql_native_password");
    assert_eq!(salt.len(), 20);
    salt
}

fn handshake_response(
    caps: u32,
    user: &str,
    auth: &[u8],
    db: Option<&str>,
    plugin: &str,
) -> Vec<u8> {
    // Like libmysql, announce CONNECT_WITH_DB only when sending a database.
    let caps = match db {
        Some(_) => caps | CLIENT_CONNECT_WITH_DB,
        None => caps & !CLIENT_CONNECT_WITH_DB,
    };
    let mut p = Vec::new();
    put_u32(&mut p, caps);
    put_u32(&mut p, 16 * 1024 * 1024);
    p.push(45);
    p.extend_from_slice(&[0u8; 23]);
    p.extend_from_slice(user.as_bytes());
    p.push(0);
    put_lenenc_bytes(&mut p, auth);
    if let Some(db) = db {
        p.extend_from_slice(db.as_bytes());
        p.push(0);
    }
    p.extend_from_slice(plugin.as_bytes());
    p.push(0);
    p
}

const BASE_CAPS: u32 = CLIENT_LONG_PASSWORD
    | CLIENT_PROTOCOL_41
    | CLIENT_SECURE_CONNECTION
    | CLIENT_PLUGIN_AUTH
    | CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA
    | CLIENT_TRANSACTIONS
    | CLIENT_CONNECT_WITH_DB;

/// Connects and logs in as root with the right password.
async fn login(caps: u32) -> Client {
    let backend = FakeBackend::new();
    let log = backend.log.clone();
    let (mut stream, server) = start(backend, 0, 1 << 16);
    let salt = read_handshake(&mut stream).await;
    let token = scramble_native_password(&salt, PASSWORD);
    let resp = handshake_response(caps, "root", &token, None, "mysql_native_password");
    write_packet(&mut stream, 1, &resp).await;
    let (seq, ok) = read_packet(&mut stream).await;
    assert_eq!(seq, 2);
    assert_eq!(ok, [0x00, 0, 0, 0x02, 0x00, 0, 0]);
    Client {
        stream,
        salt,
        server,
        log,
    }
}

impl Client {
    async fn command(&mut self, cmd: u8, body: &[u8]) {
        let mut p = vec![cmd];
        p.extend_from_slice(body);
        write_packet(&mut self.stream, 0, &p).await;
    }

    /// Reads exactly `n` raw bytes.
    async fn raw(&mut self, n: usize) -> Vec<u8> {
        let mut buf = vec![0u8; n];
        self.stream.read_exact(&mut buf).await.unwrap();
        buf
    }

    async fn packet(&mut self) -> (u8, Vec<u8>) {
        read_packet(&mut self.stream).await
    }

    /// Sends COM_QUIT and checks that the server finished cleanly and closed the pipe.
    async fn quit(mut self) {
        self.command(0x01, b"").await;
        self.server.await.unwrap().unwrap();
        let mut rest = Vec::new();
        self.stream.read_to_end(&mut rest).await.unwrap();
        assert!(rest.is_empty());
    }
}

fn framed(seq: u8, payload: &[u8]) -> Vec<u8> {
    let mut bytes = (payload.len() as u32).to_le_bytes()[..3].to_vec();
    bytes.push(seq);
    bytes.extend_from_slice(payload);
    bytes
}

const COLDEF_A: &[u8] = &[
    3, b'd', b'e', b'f', 0, 0, 0, 1, b'a', 1, b'a', 0x0c, 63, 0, 20, 0, 0, 0, 0x08, 0x81, 0x00, 0,
    0, 0,
];
const COLDEF_B: &[u8] = &[
    3, b'd', b'e', b'f', 0, 0, 0, 1, b'b', 1, b'b', 0x0c, 45, 0, 0xfc, 0x03, 0, 0, 0xfd, 0, 0, 0,
    0, 0,
];

#[tokio::test]
async fn query_round_trip_with_classic_eof() {
    let mut c = login(BASE_CAPS).await;
    c.command(0x03, b"SELECT 1;").await;
    let mut expected = Vec::new();
    expected.extend(framed(1, &[2]));
    expected.extend(framed(2, COLDEF_A));
    expected.extend(framed(3, COLDEF_B));
    expected.extend(framed(4, &[0xfe, 0, 0, 0x02, 0]));
    expected.extend(framed(5, &[1, b'1', 1, b'x']));
    expected.extend(framed(6, &[1, b'2', 0xfb]));
    expected.extend(framed(7, &[0xfe, 0, 0, 0x02, 0]));
    assert_eq!(c.raw(expected.len()).await, expected);
    assert_eq!(
        c.log.lock().unwrap().as_slice(),
        ["auth root@10.0.0.1 db=None", "query SELECT 1;"]
    );
    c.quit().await;
}

#[tokio::test]
async fn query_round_trip_with_deprecate_eof() {
    let mut c = login(BASE_CAPS | CLIENT_DEPRECATE_EOF).await;
    c.command(0x03, b"SELECT 1").await;
    let mut expected = Vec::new();
    expected.extend(framed(1, &[2]));
    expected.extend(framed(2, COLDEF_A));
    expected.extend(framed(3, COLDEF_B));
    expected.extend(framed(4, &[1, b'1', 1, b'x']));
    expected.extend(framed(5, &[1, b'2', 0xfb]));
    expected.extend(framed(6, &[0xfe, 0, 0, 0x02, 0, 0, 0]));
    assert_eq!(c.raw(expected.len()).await, expected);
    c.quit().await;
}

#[tokio::test]
async fn ok_and_error_results() {
    let mut c = login(BASE_CAPS).await;
    c.command(0x03, b"INSERT").await;
    let mut ok = vec![0x00, 3, 7, 0x02, 0, 0, 0];
    ok.push(10);
    ok.extend_from_slice(b"Records: 3");
    assert_eq!(c.packet().await, (1, ok));

    c.command(0x03, b"SELEC").await;
    let (seq, err) = c.packet().await;
    assert_eq!(seq, 1);
    assert_eq!(&err[..9], b"\xff\x28\x04#42000");
    assert!(err.ends_with(b"near 'SELEC' at line 1"));

    // The stream fails after one row: the row, then ERR instead of the terminator.
    c.command(0x03, b"SELECT fail").await;
    let mut expected = Vec::new();
    expected.extend(framed(1, &[2]));
    expected.extend(framed(2, COLDEF_A));
    expected.extend(framed(3, COLDEF_B));
    expected.extend(framed(4, &[0xfe, 0, 0, 0x02, 0]));
    expected.extend(framed(5, &[1, b'1', 1, b'x']));
    let mut err = b"\xff\x51\x04#HY000".to_vec();
    err.extend_from_slice(b"disk on fire");
    expected.extend(framed(6, &err));
    assert_eq!(c.raw(expected.len()).await, expected);
    c.quit().await;
}

#[tokio::test]
async fn large_result_is_streamed_through_a_small_pipe() {
    let backend = FakeBackend::new();
    let (mut stream, server) = start(backend, 0, 4096);
    let salt = read_handshake(&mut stream).await;
    let token = scramble_native_password(&salt, PASSWORD);
    let resp = handshake_response(BASE_CAPS | CLIENT_DEPRECATE_EOF, "root", &token, None, "");
    write_packet(&mut stream, 1, &resp).await;
    assert_eq!(read_packet(&mut stream).await.1[0], 0);
    write_packet(&mut stream, 0, b"\x03SELECT many").await;
    let (_, count) = read_packet(&mut stream).await;
    assert_eq!(count, [2]);
    read_packet(&mut stream).await;
    read_packet(&mut stream).await;
    let mut expected_seq = 4u8;
    for i in 0..10_000i64 {
        let (seq, row) = read_packet(&mut stream).await;
        assert_eq!(seq, expected_seq);
        expected_seq = expected_seq.wrapping_add(1);
        let mut r = Reader::new(&row);
        assert_eq!(r.lenenc_bytes().unwrap(), i.to_string().as_bytes());
        assert_eq!(r.lenenc_bytes().unwrap().len(), 100);
    }
    let (seq, end) = read_packet(&mut stream).await;
    assert_eq!(seq, expected_seq);
    assert_eq!(end, [0xfe, 0, 0, 2, 0, 0, 0]);
    write_packet(&mut stream, 0, &[0x01]).await;
    server.await.unwrap().unwrap();
}

#[tokio::test]
async fn utility_commands() {
    let mut c = login(BASE_CAPS).await;
    let ok = vec![0x00, 0, 0, 0x02, 0, 0, 0];

    c.command(0x0e, b"").await; // PING
    assert_eq!(c.packet().await, (1, ok.clone()));

    c.command(0x02, b"sales").await; // INIT_DB
    assert_eq!(c.packet().await, (1, ok.clone()));
    c.command(0x02, b"nope").await;
    let (_, err) = c.packet().await;
    assert_eq!(&err[..9], b"\xff\x19\x04#42000");
    assert!(err.ends_with(b"Unknown database 'nope'"));

    c.command(0x09, b"").await; // STATISTICS
    let (seq, stats) = c.packet().await;
    assert_eq!(seq, 1);
    let stats = String::from_utf8(stats).unwrap();
    assert!(stats.starts_with("Uptime: "), "{stats}");
    assert!(
        stats.contains("  Threads: 1  Questions: 0  Slow queries: 0"),
        "{stats}"
    );
    assert!(stats.ends_with("Queries per second avg: 0.000"), "{stats}");

    c.command(0x1f, b"").await; // RESET_CONNECTION
    assert_eq!(c.packet().await, (1, ok.clone()));
    assert!(c.log.lock().unwrap().iter().any(|e| e == "reset"));

    c.command(0x1b, &[0, 0]).await; // SET_OPTION: classic EOF
    assert_eq!(c.packet().await, (1, vec![0xfe, 0, 0, 0x02, 0]));

    c.command(0x16, b"SELECT ?").await; // STMT_PREPARE
                                        // OK: id 1, no columns, one parameter; then the parameter's definition and EOF.
    assert_eq!(
        c.packet().await,
        (1, vec![0, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0])
    );
    let (_, param) = c.packet().await;
    assert_eq!(&param[..4], b"\x03def");
    assert_eq!(c.packet().await.1[0], 0xfe);

    // STMT_EXECUTE id 1, no cursor, 1 iteration, NULL bitmap 0, types bound: LONGLONG 42.
    let mut exec = vec![1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0x08, 0];
    exec.extend_from_slice(&42i64.to_le_bytes());
    c.command(0x17, &exec).await;
    assert_eq!(c.packet().await.1, vec![1]); // one column
    c.packet().await; // its definition
    assert_eq!(c.packet().await.1[0], 0xfe);
    let mut row = vec![0x00, 0x00];
    row.extend_from_slice(&42i64.to_le_bytes());
    assert_eq!(c.packet().await.1, row); // binary row
    assert_eq!(c.packet().await.1[0], 0xfe);
    assert!(c
        .log
        .lock()
        .unwrap()
        .iter()
        .any(|e| e == "execute 1 [Int(42)]"));

    c.command(0x17, &[5, 0, 0, 0, 0, 1, 0, 0, 0]).await; // STMT_EXECUTE of an unknown id
    let (_, err) = c.packet().await;
    assert_eq!(&err[..9], b"\xff\xdb\x04#HY000");
    assert!(err.ends_with(b"(5) given to mysqld_stmt_execute"));

    // STMT_CLOSE and SEND_LONG_DATA have no response: the next packet is the PING's OK.
    c.command(0x19, &[1, 0, 0, 0]).await;
    c.command(0x18, &[1, 0, 0, 0, 0, 0, b'x']).await;
    c.command(0x0e, b"").await;
    assert_eq!(c.packet().await, (1, ok.clone()));

    // Unknown commands (and an empty packet) get 1047 and the connection stays usable.
    c.command(0x20, b"").await;
    assert_eq!(
        c.packet().await,
        (1, b"\xff\x17\x04#08S01Unknown command".to_vec())
    );
    write_packet(&mut c.stream, 0, b"").await;
    assert_eq!(c.packet().await.1[..3], [0xff, 0x17, 0x04]);
    c.command(0x0e, b"").await;
    assert_eq!(c.packet().await, (1, ok));
    c.quit().await;
}

#[tokio::test]
async fn field_list_responses() {
    let mut c = login(BASE_CAPS).await;
    c.command(0x04, b"t\0").await;
    let mut coldef_id = vec![
        3, b'd', b'e', b'f', 0, 1, b't', 1, b't', 2, b'i', b'd', 2, b'i', b'd',
    ];
    coldef_id.extend_from_slice(&[0x0c, 63, 0, 11, 0, 0, 0, 0x03, 0x81, 0, 0, 0, 0, 0xfb]);
    let mut coldef_name = vec![3, b'd', b'e', b'f', 0, 1, b't', 1, b't', 4];
    coldef_name.extend_from_slice(b"name\x04name");
    coldef_name.extend_from_slice(&[0x0c, 45, 0, 0xfc, 0x03, 0, 0, 0xfd, 0, 0, 0, 0, 0, 0xfb]);
    let mut expected = Vec::new();
    expected.extend(framed(1, &coldef_id));
    expected.extend(framed(2, &coldef_name));
    expected.extend(framed(3, &[0xfe, 0, 0, 0x02, 0]));
    assert_eq!(c.raw(expected.len()).await, expected);

    // With a wildcard only matching columns are listed.
    c.command(0x04, b"t\0NA%").await;
    let mut expected = Vec::new();
    expected.extend(framed(1, &coldef_name));
    expected.extend(framed(2, &[0xfe, 0, 0, 0x02, 0]));
    assert_eq!(c.raw(expected.len()).await, expected);

    c.command(0x04, b"missing\0").await;
    let (_, err) = c.packet().await;
    assert_eq!(&err[..9], b"\xff\x7a\x04#42S02");
    c.quit().await;
}

#[tokio::test]
async fn field_list_and_set_option_with_deprecate_eof() {
    let mut c = login(BASE_CAPS | CLIENT_DEPRECATE_EOF).await;
    c.command(0x04, b"t\0id").await;
    let (seq, def) = c.packet().await;
    assert_eq!(seq, 1);
    assert_eq!(def.last(), Some(&0xfb));
    assert_eq!(c.packet().await, (2, vec![0xfe, 0, 0, 0x02, 0, 0, 0]));
    c.command(0x1b, &[1, 0]).await;
    assert_eq!(c.packet().await, (1, vec![0xfe, 0, 0, 0x02, 0, 0, 0]));
    c.quit().await;
}

#[tokio::test]
async fn auth_switch_for_other_plugins() {
    let backend = FakeBackend::new();
    let log = backend.log.clone();
    let (mut stream, server) = start(backend, 0, 1 << 16);
    let salt = read_handshake(&mut stream).await;
    let resp = handshake_response(
        BASE_CAPS,
        "root",
        &[9u8; 32],
        Some("sales"),
        "caching_sha2_password",
    );
    write_packet(&mut stream, 1, &resp).await;
    let (seq, switch) = read_packet(&mut stream).await;
    assert_eq!(seq, 2);
    let mut expected = b"\xfemysql_native_password\0".to_vec();
    expected.extend_from_slice(&salt);
    expected.push(0);
    assert_eq!(switch, expected);
    write_packet(&mut stream, 3, &scramble_native_password(&salt, PASSWORD)).await;
    let (seq, ok) = read_packet(&mut stream).await;
    assert_eq!((seq, ok[0]), (4, 0x00));
    assert_eq!(
        log.lock().unwrap()[0],
        "auth root@10.0.0.1 db=Some(\"sales\")"
    );
    let mut c = Client {
        stream,
        salt,
        server,
        log,
    };
    c.command(0x0e, b"").await;
    assert_eq!(c.packet().await.1[0], 0x00);
    assert_eq!(c.salt.len(), 20);
    c.quit().await;
}

/// Logs in with `password`/`db` and returns the server's reply to the handshake response; the
/// server must have closed the connection after a refusal.
async fn failed_login(password: &[u8], db: Option<&str>) -> Vec<u8> {
    let (mut stream, server) = start(FakeBackend::new(), 0, 1 << 16);
    let salt = read_handshake(&mut stream).await;
    let token = scramble_native_password(&salt, password);
    let resp = handshake_response(BASE_CAPS, "root", &token, db, "mysql_native_password");
    write_packet(&mut stream, 1, &resp).await;
    let (seq, reply) = read_packet(&mut stream).await;
    assert_eq!(seq, 2);
    server.await.unwrap().unwrap();
    let mut rest = Vec::new();
    stream.read_to_end(&mut rest).await.unwrap();
    assert!(rest.is_empty());
    reply
}

#[tokio::test]
async fn bad_password_and_bad_database_are_refused() {
    let reply = failed_login(b"wrong", None).await;
    let mut expected = b"\xff\x15\x04#28000".to_vec();
    expected.extend_from_slice(b"Access denied for user 'root'@'10.0.0.1' (using password: YES)");
    assert_eq!(reply, expected);

    let reply = failed_login(b"", None).await;
    assert!(reply.ends_with(b"(using password: NO)"));

    let reply = failed_login(PASSWORD, Some("nope")).await;
    assert_eq!(&reply[..9], b"\xff\x19\x04#42000");
}

#[tokio::test]
async fn malformed_and_unsupported_handshakes_are_refused() {
    for (payload, code) in [
        (vec![0xff, 0xff], 1043u16),
        (
            handshake_response(BASE_CAPS, "root", b"", None, "x")[..35].to_vec(),
            1043,
        ),
        (
            handshake_response(BASE_CAPS | CLIENT_SSL, "root", b"", None, "x"),
            1043,
        ),
        (
            handshake_response(CLIENT_SECURE_CONNECTION, "root", b"", None, "x"),
            1251,
        ),
    ] {
        let (mut stream, server) = start(FakeBackend::new(), 0, 1 << 16);
        read_handshake(&mut stream).await;
        write_packet(&mut stream, 1, &payload).await;
        let (_, reply) = read_packet(&mut stream).await;
        assert_eq!(reply[0], 0xff);
        assert_eq!(u16::from_le_bytes([reply[1], reply[2]]), code);
        server.await.unwrap().unwrap();
    }
}

#[tokio::test]
async fn random_garbage_never_panics() {
    use rand::Rng;
    let mut rng = rand::rng();
    for _ in 0..200 {
        let len = rng.random_range(0..120);
        let mut payload: Vec<u8> = (0..len).map(|_| rng.random()).collect();
        if rng.random_bool(0.5) && payload.len() >= 4 {
            // Mostly-valid capability flags get the parser further.
            payload[..4].copy_from_slice(&BASE_CAPS.to_le_bytes());
        }
        let _ = parse_handshake_response(&payload);
        let mut r = Reader::new(&payload);
        while r.lenenc_bytes().is_ok() {}
    }
    // A logged-in connection fed garbage commands stays up and answers each.
    let mut c = login(BASE_CAPS).await;
    for cmd in [0x00u8, 0x05, 0x11, 0x1b, 0x1c, 0x1a, 0xff] {
        c.command(cmd, &[0xfe, 0x01]).await;
        let (_, reply) = c.packet().await;
        assert_eq!(reply[0], 0xff, "command {cmd:#x}");
    }
    c.quit().await;
}

#[tokio::test]
async fn oversized_packets_are_refused_and_closed() {
    let (mut stream, server) = start(FakeBackend::new(), 1024, 1 << 16);
    let salt = read_handshake(&mut stream).await;
    let token = scramble_native_password(&salt, PASSWORD);
    let resp = handshake_response(BASE_CAPS, "root", &token, None, "mysql_native_password");
    write_packet(&mut stream, 1, &resp).await;
    read_packet(&mut stream).await;
    let mut query = b"\x03SELECT '".to_vec();
    query.extend(std::iter::repeat_n(b'x', 2000));
    // Only the header is needed for the refusal; the body may not be read at all.
    let _ = stream.write_all(&framed(0, &query)).await;
    let (_, err) = read_packet(&mut stream).await;
    assert_eq!(&err[..9], b"\xff\x81\x04#08S01");
    assert!(err.ends_with(b"Got a packet bigger than 'max_allowed_packet' bytes"));
    server.await.unwrap().unwrap();
}

#[tokio::test]
async fn client_disconnect_ends_the_connection_quietly() {
    let (mut stream, server) = start(FakeBackend::new(), 0, 1 << 16);
    read_handshake(&mut stream).await;
    drop(stream);
    server.await.unwrap().unwrap();

    let c = login(BASE_CAPS).await;
    drop(c.stream);
    c.server.await.unwrap().unwrap();
}

#[tokio::test]
async fn client_vanishing_mid_result_set_is_a_clean_end() {
    let (mut stream, server) = start(FakeBackend::new(), 0, 4096);
    let salt = read_handshake(&mut stream).await;
    let token = scramble_native_password(&salt, PASSWORD);
    let resp = handshake_response(BASE_CAPS, "root", &token, None, "");
    write_packet(&mut stream, 1, &resp).await;
    read_packet(&mut stream).await;
    write_packet(&mut stream, 0, b"\x03SELECT many").await;
    for _ in 0..10 {
        read_packet(&mut stream).await;
    }
    drop(stream);
    server.await.unwrap().unwrap();
}

#[tokio::test]
async fn status_flags_follow_autocommit() {
    let mut backend = FakeBackend::new();
    backend.autocommit = false;
    let (mut stream, server) = start(backend, 0, 1 << 16);
    let salt = read_handshake_with_status(&mut stream, 0).await;
    let token = scramble_native_password(&salt, PASSWORD);
    let resp = handshake_response(BASE_CAPS, "root", &token, None, "mysql_native_password");
    write_packet(&mut stream, 1, &resp).await;
    assert_eq!(read_packet(&mut stream).await.1, [0, 0, 0, 0, 0, 0, 0]);
    write_packet(&mut stream, 0, &[0x01]).await;
    server.await.unwrap().unwrap();
}

#[test]
fn serve_connection_future_is_send() {
    fn assert_send<T: Send>(_: &T) {}
    let (_, server) = duplex(64);
    let fut = serve_connection(
        server,
        String::new(),
        ConnectionOptions::default(),
        FakeBackend::new(),
    );
    assert_send(&fut);
}

/// Fuzzing the protocol layer: mutated and random handshakes and commands, a bounded number
/// of cases in CI (`BASALT_FUZZ_CASES` raises it by hand, `BASALT_FUZZ_SEED` replays a run).
/// The connection task must never panic or hang: it answers, refuses, or closes.
mod fuzz {
    use super::*;
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};
    use std::time::Duration;

    fn cases() -> usize {
        std::env::var("BASALT_FUZZ_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(400)
    }

    fn rng() -> (StdRng, u64) {
        let seed = std::env::var("BASALT_FUZZ_SEED")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| rand::rng().random());
        (StdRng::seed_from_u64(seed), seed)
    }

    /// A mutation of `base`: bytes flipped, cut short, extended, or replaced by noise.
    fn mutate(rng: &mut StdRng, base: &[u8]) -> Vec<u8> {
        let mut v = base.to_vec();
        match rng.random_range(0..5) {
            0 => {
                for _ in 0..rng.random_range(1..8) {
                    if !v.is_empty() {
                        let i = rng.random_range(0..v.len());
                        v[i] = rng.random();
                    }
                }
            }
            1 => v.truncate(rng.random_range(0..=v.len())),
            2 => {
                let n = rng.random_range(0..64);
                v.extend((0..n).map(|_| rng.random::<u8>()));
            }
            3 => {
                // A length-encoded integer claiming a huge size somewhere.
                if !v.is_empty() {
                    let i = rng.random_range(0..v.len());
                    v.splice(i..i, [0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]);
                }
            }
            _ => {
                let n = rng.random_range(0..128);
                v = (0..n).map(|_| rng.random()).collect();
            }
        }
        v
    }

    /// The server task ends (the client has gone) without panicking, within a few seconds.
    async fn ends_cleanly(server: JoinHandle<std::io::Result<()>>, what: &str) {
        match tokio::time::timeout(Duration::from_secs(10), server).await {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => panic!("{what}: the connection task panicked: {e}"),
            Err(_) => panic!("{what}: the connection did not end after the client left"),
        }
    }

    #[tokio::test]
    async fn fuzzed_handshakes_are_refused_or_accepted_never_a_panic() {
        let (mut rng, seed) = rng();
        for case in 0..cases() {
            let (mut stream, server) = start(FakeBackend::new(), 1 << 20, 1 << 16);
            let salt = read_handshake(&mut stream).await;
            let token = scramble_native_password(&salt, PASSWORD);
            let caps = if rng.random_bool(0.8) {
                BASE_CAPS
            } else {
                rng.random()
            };
            let good =
                handshake_response(caps, "root", &token, Some("db"), "mysql_native_password");
            let payload = mutate(&mut rng, &good);
            let bytes = if rng.random_bool(0.9) {
                framed(1, &payload)
            } else {
                payload
            };
            let _ = stream.write_all(&bytes).await;
            let _ = stream.shutdown().await;
            let mut rest = Vec::new();
            let _ =
                tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut rest)).await;
            ends_cleanly(server, &format!("seed {seed}, case {case}")).await;
        }
    }

    #[tokio::test]
    async fn fuzzed_commands_after_login_never_panic() {
        let (mut rng, seed) = rng();
        // COM_QUERY, INIT_DB, FIELD_LIST, STMT_PREPARE/EXECUTE/SEND_LONG_DATA/CLOSE/RESET/FETCH,
        // SET_OPTION, RESET_CONNECTION, PING, STATISTICS, and any byte at all.
        const COMMANDS: &[u8] = &[
            0x03, 0x02, 0x04, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1c, 0x1b, 0x1f, 0x0e, 0x09,
        ];
        let mut execute = vec![1, 0, 0, 0, 0, 1, 0, 0, 0, 0x01, 0x08, 0x00];
        execute.extend_from_slice(&7i64.to_le_bytes());
        let bases: [&[u8]; 3] = [b"SELECT 1", &execute, b"db"];
        for case in 0..cases() / 4 {
            let mut c = login(BASE_CAPS).await;
            for _ in 0..rng.random_range(1..8) {
                let cmd = if rng.random_bool(0.9) {
                    COMMANDS[rng.random_range(0..COMMANDS.len())]
                } else {
                    rng.random()
                };
                let base = bases[rng.random_range(0..bases.len())];
                let mut p = vec![cmd];
                p.extend(mutate(&mut rng, base));
                if c.stream.write_all(&framed(0, &p)).await.is_err() {
                    break;
                }
            }
            let _ = c.stream.shutdown().await;
            let mut rest = Vec::new();
            let _ = tokio::time::timeout(Duration::from_secs(10), c.stream.read_to_end(&mut rest))
                .await;
            ends_cleanly(c.server, &format!("seed {seed}, case {case}")).await;
        }
    }
}
