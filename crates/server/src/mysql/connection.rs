//! One client connection from start to end: sends the handshake, authenticates (switching the
//! client to `mysql_native_password` when needed), then runs the command loop, dispatching each
//! command to the [`Backend`] and writing its response.

use std::io;
use std::time::Instant;

use tokio::io::{AsyncRead, AsyncWrite};

use super::auth::{generate_salt, NATIVE_PASSWORD_PLUGIN, SALT_LEN};
use super::handshake::{
    auth_switch_request, initial_handshake, parse_handshake_response, HandshakeError,
    CLIENT_DEPRECATE_EOF, CLIENT_FOUND_ROWS, CLIENT_INTERACTIVE, CLIENT_LOCAL_FILES,
    CLIENT_MULTI_STATEMENTS, CLIENT_PLUGIN_AUTH, SERVER_CAPABILITIES, SERVER_MORE_RESULTS_EXISTS,
    SERVER_STATUS_AUTOCOMMIT, SERVER_STATUS_IN_TRANS, SERVER_STATUS_NO_BACKSLASH_ESCAPES,
};
use super::packet::{is_disconnect, PacketIo, ReadError};
use super::prepared::{prepare_ok, StatementState};
use super::response::{self, ErrorReply};
use super::resultset::{field_list, send_result_set, RowFormat};
use super::wire::Reader;
use super::{Backend, ConnectionOptions, QueryOutput};

/// Client packets larger than this are refused when the options say 0.
pub const DEFAULT_MAX_PACKET_SIZE: u32 = 64 * 1024 * 1024;

/// Command bytes.
pub mod command {
    pub const QUIT: u8 = 0x01;
    pub const INIT_DB: u8 = 0x02;
    pub const QUERY: u8 = 0x03;
    pub const FIELD_LIST: u8 = 0x04;
    pub const STATISTICS: u8 = 0x09;
    pub const PROCESS_KILL: u8 = 0x0c;
    pub const PING: u8 = 0x0e;
    pub const STMT_PREPARE: u8 = 0x16;
    pub const STMT_EXECUTE: u8 = 0x17;
    pub const STMT_SEND_LONG_DATA: u8 = 0x18;
    pub const STMT_CLOSE: u8 = 0x19;
    pub const STMT_RESET: u8 = 0x1a;
    pub const SET_OPTION: u8 = 0x1b;
    pub const STMT_FETCH: u8 = 0x1c;
    pub const RESET_CONNECTION: u8 = 0x1f;
}

/// Largest packet accepted before the client has authenticated.
const MAX_HANDSHAKE_PACKET: usize = 64 * 1024;
/// Time a client has to complete the handshake and authentication.
const HANDSHAKE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Runs one client connection to completion: handshake, auth, command loop. Returns `Ok` when
/// the client quits or disconnects (even mid-response) or has been refused; other I/O errors are
/// returned.
pub async fn serve_connection<S, B>(
    stream: S,
    client_host: String,
    opts: ConnectionOptions,
    backend: B,
) -> io::Result<()>
where
    S: AsyncRead + AsyncWrite + Unpin + Send,
    B: Backend,
{
    let max_packet_size = match opts.max_packet_size {
        0 => DEFAULT_MAX_PACKET_SIZE,
        n => n,
    };
    let mut conn = Connection {
        io: PacketIo::new(stream, MAX_HANDSHAKE_PACKET),
        backend,
        salt: generate_salt(),
        capabilities: 0,
        started: Instant::now(),
        questions: 0,
        statements: foldhash::HashMap::default(),
        more_results: false,
        interactive: false,
        dump_client: false,
    };
    let result = conn
        .run(&client_host, &opts, max_packet_size as usize)
        .await;
    conn.io.shutdown().await;
    match result {
        Err(e) if is_disconnect(&e) => {
            tracing::debug!(client = %client_host, "client disconnected mid-response");
            Ok(())
        }
        other => other,
    }
}

/// What a read produced, once disconnects and oversized packets have been dealt with.
enum Next {
    Packet(Vec<u8>),
    /// The connection is over (client gone, or refused with an error already queued).
    Done,
}

struct Connection<S, B> {
    io: PacketIo<S>,
    backend: B,
    salt: [u8; SALT_LEN],
    /// Capabilities both sides support.
    capabilities: u32,
    started: Instant,
    questions: u64,
    /// Parameter state of this connection's prepared statements, by id.
    statements: foldhash::HashMap<u32, StatementState>,
    /// A multi-statement COM_QUERY has results after the one being sent.
    more_results: bool,
    /// The client said it is interactive (its idle limit is `interactive_timeout`).
    interactive: bool,
    /// The client is mysqldump: BITMAP and HLL values go as their bytes, as with
    /// `return_object_data_as_binary`, so a dump restores them instead of writing NULLs.
    dump_client: bool,
}

impl<S, B> Connection<S, B>
where
    S: AsyncRead + AsyncWrite + Unpin + Send,
    B: Backend,
{
    async fn run(
        &mut self,
        client_host: &str,
        opts: &ConnectionOptions,
        max_packet_size: usize,
    ) -> io::Result<()> {
        // An unauthenticated client gets small packets and a deadline.
        match tokio::time::timeout(HANDSHAKE_TIMEOUT, self.authenticate(client_host, opts)).await {
            Ok(Ok(true)) => {}
            Ok(Ok(false)) => return Ok(()),
            Ok(Err(e)) => return Err(e),
            Err(_) => {
                tracing::debug!(client = %client_host, "handshake timed out");
                return Ok(());
            }
        }
        self.io.set_max_packet_size(max_packet_size);
        self.command_loop().await
    }

    fn status(&self) -> u16 {
        let autocommit = if self.backend.autocommit() {
            SERVER_STATUS_AUTOCOMMIT
        } else {
            0
        };
        let more = if self.more_results {
            SERVER_MORE_RESULTS_EXISTS
        } else {
            0
        };
        let no_backslash_escapes = if self.backend.no_backslash_escapes() {
            SERVER_STATUS_NO_BACKSLASH_ESCAPES
        } else {
            0
        };
        let in_trans = if self.backend.in_transaction() {
            SERVER_STATUS_IN_TRANS
        } else {
            0
        };
        autocommit | in_trans | more | no_backslash_escapes
    }

    fn deprecate_eof(&self) -> bool {
        self.capabilities & CLIENT_DEPRECATE_EOF != 0
    }

    fn queue_err(&mut self, reply: &ErrorReply) {
        self.io.packet(|b| response::err(b, reply));
    }

    fn queue_ok(&mut self, affected_rows: u64, last_insert_id: u64, info: &str) {
        let status = self.status();
        let warnings = self.backend.warning_count();
        self.io.packet(|b| {
            response::ok(
                b,
                response::OK_HEADER,
                affected_rows,
                last_insert_id,
                status,
                warnings,
                info,
            )
        });
    }

    async fn read(&mut self) -> io::Result<Next> {
        match self.io.read_packet().await {
            Ok(p) => Ok(Next::Packet(p)),
            Err(ReadError::Closed) => Ok(Next::Done),
            Err(ReadError::TooLarge) => {
                self.queue_err(&ErrorReply::new(
                    1153,
                    "08S01",
                    "Got a packet bigger than 'max_allowed_packet' bytes",
                ));
                self.io.flush().await?;
                Ok(Next::Done)
            }
            Err(ReadError::Io(e)) => Err(e),
        }
    }

    /// Connection phase; returns whether the client is logged in.
    async fn authenticate(
        &mut self,
        client_host: &str,
        opts: &ConnectionOptions,
    ) -> io::Result<bool> {
        let status = self.status();
        let salt = self.salt;
        self.io.packet(|b| {
            initial_handshake(b, &opts.server_version, opts.connection_id, &salt, status)
        });
        self.io.flush().await?;

        let Next::Packet(payload) = self.read().await? else {
            return Ok(false);
        };
        let hello = match parse_handshake_response(&payload) {
            Ok(hello) => hello,
            Err(e) => {
                tracing::debug!(client = client_host, error = ?e, "refusing handshake");
                let reply = match e {
                    HandshakeError::OldProtocol => ErrorReply::new(
                        1251,
                        "08004",
                        "Client does not support authentication protocol requested by server; \
                         consider upgrading MySQL client",
                    ),
                    HandshakeError::SslRequested => {
                        ErrorReply::new(1043, "08S01", "Bad handshake: SSL is not supported")
                    }
                    HandshakeError::Malformed(_) => ErrorReply::new(1043, "08S01", "Bad handshake"),
                };
                self.queue_err(&reply);
                self.io.flush().await?;
                return Ok(false);
            }
        };
        self.capabilities = hello.capabilities & SERVER_CAPABILITIES;
        self.interactive = hello.capabilities & CLIENT_INTERACTIVE != 0;
        self.dump_client = hello.program_name.as_deref() == Some("mysqldump");

        let mut token = hello.auth_response;
        let other_plugin = hello
            .auth_plugin
            .as_deref()
            .is_some_and(|p| p != NATIVE_PASSWORD_PLUGIN);
        if other_plugin && self.capabilities & CLIENT_PLUGIN_AUTH != 0 {
            self.io.packet(|b| auth_switch_request(b, &salt));
            self.io.flush().await?;
            let Next::Packet(reply) = self.read().await? else {
                return Ok(false);
            };
            token = reply;
        }
        // Some clients NUL-terminate the 20-byte token.
        if token.len() == SALT_LEN + 1 && token.last() == Some(&0) {
            token.pop();
        }

        let result = self
            .backend
            .authenticate(
                &hello.user,
                client_host,
                &salt,
                &token,
                hello.database.as_deref(),
            )
            .await;
        match result {
            Ok(()) => {
                self.queue_ok(0, 0, "");
                self.io.flush().await?;
                Ok(true)
            }
            Err(e) => {
                tracing::debug!(client = client_host, user = %hello.user, error = %e, "login failed");
                self.queue_err(&ErrorReply::from(&e));
                self.io.flush().await?;
                Ok(false)
            }
        }
    }

    async fn command_loop(&mut self) -> io::Result<()> {
        let mut killed = self.backend.kill_signal();
        loop {
            self.io.reset_seq();
            // A connection idle past its session's wait_timeout (interactive_timeout for an
            // interactive client) is closed, with MySQL 8's error 4031 first.
            let idle_limit = self.backend.idle_timeout(self.interactive);
            let next = tokio::select! {
                biased;
                _ = &mut killed => return Ok(()),
                next = tokio::time::timeout(idle_limit, self.read()) => match next {
                    Ok(next) => next?,
                    Err(_) => {
                        self.queue_err(&ErrorReply::new(
                            4031,
                            "HY000",
                            "The client was disconnected by the server because of inactivity. \
                             See wait_timeout and interactive_timeout for configuring this behavior.",
                        ));
                        self.io.flush().await?;
                        return Ok(());
                    }
                },
            };
            let Next::Packet(packet) = next else {
                return Ok(());
            };
            let Some((&cmd, body)) = packet.split_first() else {
                self.queue_err(&unknown_command());
                self.io.flush().await?;
                continue;
            };
            if cmd == command::QUIT {
                return Ok(());
            }
            self.dispatch(cmd, body).await?;
            self.io.flush().await?;
            let (received, sent) = self.io.take_traffic();
            self.backend.count_traffic(received, sent);
            if futures::FutureExt::now_or_never(&mut killed).is_some() {
                return Ok(());
            }
        }
    }

    /// Handles one command (other than COM_QUIT), queueing its response.
    async fn dispatch(&mut self, cmd: u8, body: &[u8]) -> io::Result<()> {
        match cmd {
            command::QUERY => {
                let sql = basalt_sql::query_text(body);
                let multi = self.capabilities & CLIENT_MULTI_STATEMENTS != 0 && sql.contains(';');
                let statements = if !multi {
                    vec![sql.into_owned()]
                } else {
                    match self.backend.split_statements(&sql) {
                        none if none.is_empty() => vec![sql.into_owned()],
                        statements => statements,
                    }
                };
                // One result per statement, each but the last flagged "more results", up to
                // the first error (an ERR packet ends the response).
                let count = statements.len();
                for (i, statement) in statements.iter().enumerate() {
                    self.questions += 1;
                    let result = match self.backend.local_infile(statement) {
                        Some(file) if self.capabilities & CLIENT_LOCAL_FILES != 0 => {
                            self.load_local_infile(statement, &file).await?
                        }
                        _ => self.backend.query(statement).await,
                    };
                    self.more_results = i + 1 < count;
                    let completed = self.queue_output(result, RowFormat::Text).await;
                    self.more_results = false;
                    if !completed? {
                        break;
                    }
                }
            }
            command::INIT_DB => {
                let db = String::from_utf8_lossy(trim_nul(body));
                match self.backend.init_db(&db).await {
                    Ok(()) => self.queue_ok(0, 0, ""),
                    Err(e) => self.queue_err(&ErrorReply::from(&e)),
                }
            }
            command::FIELD_LIST => {
                let mut r = Reader::new(body);
                let table = String::from_utf8_lossy(r.nul_terminated_or_rest()).into_owned();
                let wildcard = String::from_utf8_lossy(trim_nul(r.rest())).into_owned();
                match self.backend.field_list(&table).await {
                    Ok(schema) => {
                        let (deprecate_eof, status) = (self.deprecate_eof(), self.status());
                        field_list(
                            &mut self.io,
                            &schema,
                            &table,
                            &wildcard,
                            deprecate_eof,
                            status,
                        );
                    }
                    Err(e) => self.queue_err(&ErrorReply::from(&e)),
                }
            }
            command::PING => self.queue_ok(0, 0, ""),
            // The old form of KILL CONNECTION: the connection id in four bytes.
            command::PROCESS_KILL => match <[u8; 4]>::try_from(body) {
                Ok(id) => {
                    let sql = format!("KILL {}", u32::from_le_bytes(id));
                    let result = self.backend.query(&sql).await;
                    self.queue_output(result, RowFormat::Text).await?;
                }
                Err(_) => self.queue_err(&unknown_command()),
            },
            command::STATISTICS => {
                let text = self.statistics();
                self.io.write_packet(text.as_bytes());
            }
            command::RESET_CONNECTION => {
                self.statements.clear();
                self.backend.reset().await;
                self.queue_ok(0, 0, "");
            }
            command::SET_OPTION => match Reader::new(body).u16() {
                // MYSQL_OPTION_MULTI_STATEMENTS_ON / _OFF
                Ok(option @ (0 | 1)) => {
                    if option == 0 {
                        self.capabilities |= CLIENT_MULTI_STATEMENTS;
                    } else {
                        self.capabilities &= !CLIENT_MULTI_STATEMENTS;
                    }
                    let (deprecate_eof, status) = (self.deprecate_eof(), self.status());
                    self.io
                        .packet(|b| response::end_of_rows(b, deprecate_eof, status));
                }
                _ => self.queue_err(&unknown_command()),
            },
            command::STMT_PREPARE => {
                self.questions += 1;
                let sql = basalt_sql::query_text(body);
                match self.backend.prepare(&sql).await {
                    Ok(stmt) => {
                        self.statements
                            .insert(stmt.id, StatementState::new(stmt.params));
                        let (deprecate_eof, status) = (self.deprecate_eof(), self.status());
                        prepare_ok(
                            &mut self.io,
                            stmt.id,
                            stmt.params,
                            stmt.columns.as_deref(),
                            deprecate_eof,
                            status,
                        );
                    }
                    Err(e) => self.queue_err(&ErrorReply::from(&e)),
                }
            }
            command::STMT_EXECUTE => {
                self.questions += 1;
                let mut r = Reader::new(body);
                let id = r.u32().unwrap_or(0);
                let Some(state) = self.statements.get_mut(&id) else {
                    self.queue_err(&unknown_statement(id, "mysqld_stmt_execute"));
                    return Ok(());
                };
                // Flags (cursor type) and iteration count: results are always sent at once.
                let params = r
                    .u8()
                    .and_then(|_| r.u32())
                    .and_then(|_| state.decode_params(&mut r));
                match params {
                    Ok(params) => {
                        let result = self.backend.execute(id, params).await;
                        self.queue_output(result, RowFormat::Binary).await?;
                    }
                    Err(e) => self.queue_err(&ErrorReply::new(
                        1210,
                        "HY000",
                        format!("Incorrect arguments to mysqld_stmt_execute: {e}"),
                    )),
                }
            }
            command::STMT_SEND_LONG_DATA => {
                // No reply, even for an unknown statement (the error surfaces at execute).
                let mut r = Reader::new(body);
                if let (Ok(id), Ok(param)) = (r.u32(), r.u16()) {
                    if let Some(state) = self.statements.get_mut(&id) {
                        state.append_long_data(param, r.rest());
                    }
                }
            }
            command::STMT_CLOSE => {
                if let Ok(id) = Reader::new(body).u32() {
                    self.statements.remove(&id);
                    self.backend.close(id);
                }
            }
            command::STMT_RESET => {
                let id = Reader::new(body).u32().unwrap_or(0);
                match self.statements.get_mut(&id) {
                    Some(state) => {
                        state.reset();
                        self.queue_ok(0, 0, "");
                    }
                    None => self.queue_err(&unknown_statement(id, "mysqld_stmt_reset")),
                }
            }
            command::STMT_FETCH => {
                // Results are never kept in a cursor: there is nothing to fetch.
                let id = Reader::new(body).u32().unwrap_or(0);
                self.queue_err(&unknown_statement(id, "mysqld_stmt_fetch"));
            }
            _ => self.queue_err(&unknown_command()),
        }
        Ok(())
    }

    /// Queues the response to a statement: OK, a result set in `format`, ERR, or several of
    /// them (a CALL), each but the last flagged "more results" (as is the last when the
    /// statement is not its text's last); true unless it was (or ended with) an error.
    async fn queue_output(
        &mut self,
        result: Result<QueryOutput, basalt_common::BasaltError>,
        format: RowFormat,
    ) -> io::Result<bool> {
        let parts = match result {
            Ok(QueryOutput::Multiple(parts)) => parts,
            single => return self.queue_single(single, format).await,
        };
        let more_after = self.more_results;
        let count = parts.len();
        let mut completed = true;
        for (i, part) in parts.into_iter().enumerate() {
            self.more_results = more_after || i + 1 < count;
            completed = self.queue_single(part, format).await?;
            if !completed {
                break;
            }
        }
        self.more_results = more_after;
        Ok(completed)
    }

    /// [`Connection::queue_output`] of one result.
    async fn queue_single(
        &mut self,
        result: Result<QueryOutput, basalt_common::BasaltError>,
        format: RowFormat,
    ) -> io::Result<bool> {
        match result {
            Ok(QueryOutput::Ok {
                affected_rows,
                last_insert_id,
                info,
            }) => {
                let found_rows = self.capabilities & CLIENT_FOUND_ROWS != 0;
                let affected_rows = response::affected_rows(affected_rows, &info, found_rows);
                self.queue_ok(affected_rows, last_insert_id, &info);
                Ok(true)
            }
            Ok(QueryOutput::ResultSet { schema, stream }) => {
                let status = self.status();
                let deprecate_eof = self.deprecate_eof();
                let objects_as_binary = self.dump_client || self.backend.object_data_as_binary();
                send_result_set(
                    &mut self.io,
                    &schema,
                    stream,
                    deprecate_eof,
                    status,
                    format,
                    objects_as_binary,
                )
                .await
            }
            Ok(QueryOutput::Multiple(_)) => {
                self.queue_err(&ErrorReply::from(&basalt_common::BasaltError::Internal(
                    "nested multiple results".into(),
                )));
                Ok(false)
            }
            Err(e) => {
                self.queue_err(&ErrorReply::from(&e));
                Ok(false)
            }
        }
    }

    /// `LOAD DATA LOCAL INFILE`: asks the client for `file`, then hands its contents, packet
    /// by packet as they arrive, to the backend's load; the client's empty packet ends them.
    /// Every packet is read even when the load has already failed, so that the connection stays
    /// in step.
    async fn load_local_infile(
        &mut self,
        sql: &str,
        file: &str,
    ) -> io::Result<Result<QueryOutput, basalt_common::BasaltError>> {
        self.io.packet(|buf| {
            buf.push(0xFB);
            buf.extend_from_slice(file.as_bytes());
        });
        self.io.flush().await?;
        let (tx, rx) = tokio::sync::mpsc::channel::<Result<bytes::Bytes, String>>(4);
        let io = &mut self.io;
        let read = async move {
            loop {
                match io.read_packet().await {
                    Ok(p) if p.is_empty() => return Ok(()),
                    // A load that stopped reading has failed; the rest is drained.
                    Ok(p) => {
                        let _ = tx.send(Ok(bytes::Bytes::from(p))).await;
                    }
                    Err(ReadError::TooLarge) => {
                        let _ = tx
                            .send(Err("a packet over max_allowed_packet".into()))
                            .await;
                        return Err(io::Error::from(io::ErrorKind::InvalidData));
                    }
                    Err(ReadError::Closed) => {
                        let _ = tx
                            .send(Err("the client closed the connection".into()))
                            .await;
                        return Err(io::Error::from(io::ErrorKind::UnexpectedEof));
                    }
                    Err(ReadError::Io(e)) => {
                        let _ = tx.send(Err(e.to_string())).await;
                        return Err(e);
                    }
                }
            }
        };
        let data = futures::stream::unfold(rx, |mut rx| async move {
            rx.recv().await.map(|chunk| (chunk, rx))
        });
        let load = self.backend.load_local_infile(sql, Box::pin(data));
        let (read, result) = tokio::join!(read, load);
        read?;
        Ok(result)
    }

    fn statistics(&self) -> String {
        let uptime = self.started.elapsed().as_secs();
        let qps = self.questions as f64 / uptime.max(1) as f64;
        format!(
            "Uptime: {uptime}  Threads: 1  Questions: {}  Slow queries: 0  Opens: 0  \
             Flush tables: 0  Open tables: 0  Queries per second avg: {qps:.3}",
            self.questions
        )
    }
}

fn unknown_statement(id: u32, command: &str) -> ErrorReply {
    ErrorReply::new(
        1243,
        "HY000",
        format!("Unknown prepared statement handler ({id}) given to {command}"),
    )
}

fn unknown_command() -> ErrorReply {
    ErrorReply::new(1047, "08S01", "Unknown command")
}

/// `bytes` without trailing NULs.
fn trim_nul(bytes: &[u8]) -> &[u8] {
    let end = bytes.iter().rposition(|b| *b != 0).map_or(0, |i| i + 1);
    bytes.get(..end).unwrap_or_default()
}
