//! Basalt's MySQL wire protocol (server side): packet codec, handshake and
//! `mysql_native_password` authentication, the command loop, prepared statements, and text- and
//! binary-protocol result sets streamed from Arrow record batches. Query semantics live behind the [`Backend`] trait.

pub mod auth;
pub mod binary;
pub mod connection;
pub mod handshake;
pub mod nested_text;
pub mod packet;
pub mod prepared;
pub mod response;
pub mod resultset;
pub mod types;
pub mod wire;

#[cfg(test)]
mod tests;

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use basalt_common::{BasaltError, ParamValue};

pub use auth::verify_native_password;
pub use connection::serve_connection;

/// Batches of a result set, produced while they are sent.
pub type BatchStream = futures::stream::BoxStream<'static, Result<RecordBatch, BasaltError>>;

/// What a statement produced.
pub enum QueryOutput {
    /// A result set: column definitions come from `schema`; rows are streamed batch by batch.
    ResultSet {
        schema: SchemaRef,
        stream: BatchStream,
    },
    Ok {
        affected_rows: u64,
        last_insert_id: u64,
        info: String,
    },
    /// Several results in order (a CALL: its result sets, then its OK), each but the last
    /// flagged SERVER_MORE_RESULTS_EXISTS; an error ends them. Parts are never `Multiple`.
    Multiple(Vec<Result<QueryOutput, BasaltError>>),
}

/// A statement COM_STMT_PREPARE created.
#[derive(Debug, Clone)]
pub struct PreparedStatement {
    pub id: u32,
    /// Number of `?` placeholders.
    pub params: u16,
    /// Result columns, when the statement returns rows and they are known before execution.
    pub columns: Option<SchemaRef>,
}

/// Per-connection handler the protocol layer calls.
#[async_trait::async_trait]
pub trait Backend: Send {
    /// Verify a login. `auth_response` is the client's mysql_native_password token (20 bytes or
    /// empty), `salt` the 20-byte scramble this connection sent. Must return
    /// `BasaltError::AccessDenied` (1045) on a bad user/password, or `UnknownDatabase` (1049) for
    /// a bad initial database.
    async fn authenticate(
        &mut self,
        user: &str,
        client_host: &str,
        salt: &[u8],
        auth_response: &[u8],
        database: Option<&str>,
    ) -> Result<(), BasaltError>;
    /// COM_QUERY text (a single statement; may have a trailing ';').
    async fn query(&mut self, sql: &str) -> Result<QueryOutput, BasaltError>;
    /// The statements of a multi-statement COM_QUERY text, in order (the whole text when it
    /// cannot be split; [`Backend::query`] then reports why).
    fn split_statements(&self, sql: &str) -> Vec<String> {
        vec![sql.to_string()]
    }
    /// The file a statement asks the client to send (`LOAD DATA LOCAL INFILE 'file' ..`).
    fn local_infile(&self, _sql: &str) -> Option<String> {
        None
    }
    /// Runs a statement [`Backend::local_infile`] named a file for, on the file's bytes as the
    /// client sends them.
    async fn load_local_infile(
        &mut self,
        _sql: &str,
        _data: futures::stream::BoxStream<'static, Result<bytes::Bytes, String>>,
    ) -> Result<QueryOutput, BasaltError> {
        Err(BasaltError::NotSupported("LOAD DATA LOCAL INFILE".into()))
    }
    /// COM_STMT_PREPARE: parses `sql` (a single statement with `?` placeholders) and keeps it
    /// under a new id.
    async fn prepare(&mut self, sql: &str) -> Result<PreparedStatement, BasaltError>;
    /// COM_STMT_EXECUTE of a statement [`Backend::prepare`] returned, with one value per
    /// placeholder.
    async fn execute(
        &mut self,
        id: u32,
        params: Vec<ParamValue>,
    ) -> Result<QueryOutput, BasaltError>;
    /// COM_STMT_CLOSE (no reply; unknown ids are ignored).
    fn close(&mut self, id: u32);
    /// COM_INIT_DB.
    async fn init_db(&mut self, database: &str) -> Result<(), BasaltError>;
    /// COM_FIELD_LIST: the table's columns, or an error (e.g. 1146).
    async fn field_list(&mut self, table: &str) -> Result<SchemaRef, BasaltError>;
    /// COM_RESET_CONNECTION: reset user variables, session variables and prepared statements;
    /// the current database is kept (as MySQL does).
    async fn reset(&mut self);
    /// Bytes read from and written to this client since the last call (status counters).
    fn count_traffic(&self, _received: u64, _sent: u64) {}
    /// How long the connection may sit idle between commands (`wait_timeout`, or
    /// `interactive_timeout` for an interactive client).
    fn idle_timeout(&self, _interactive: bool) -> std::time::Duration {
        std::time::Duration::from_secs(28_800)
    }
    /// `sql_mode` has NO_BACKSLASH_ESCAPES (a status flag clients escape strings by).
    fn no_backslash_escapes(&self) -> bool {
        false
    }
    /// `return_object_data_as_binary` is on: BITMAP and HLL values go as their serialized
    /// bytes; otherwise they go as NULL, as Doris shows them.
    fn object_data_as_binary(&self) -> bool {
        false
    }
    /// Notes and warnings the last statement left (reported in its OK or EOF packet).
    fn warning_count(&self) -> u16 {
        0
    }
    /// True while autocommit is on (for the SERVER_STATUS_AUTOCOMMIT flag).
    fn autocommit(&self) -> bool;
    /// True while a transaction is open (for the SERVER_STATUS_IN_TRANS flag).
    fn in_transaction(&self) -> bool {
        false
    }
    /// Completes when the connection should close (KILL CONNECTION); asked once, after
    /// authentication.
    fn kill_signal(&self) -> futures::future::BoxFuture<'static, ()> {
        Box::pin(futures::future::pending())
    }
}

/// Per-connection settings.
#[derive(Debug, Clone)]
pub struct ConnectionOptions {
    /// Sent in the handshake, e.g. "5.7.99-Basalt".
    pub server_version: String,
    pub connection_id: u32,
    /// Largest client packet accepted (after reassembly); 0 means the 64 MiB default.
    pub max_packet_size: u32,
}

impl Default for ConnectionOptions {
    fn default() -> Self {
        ConnectionOptions {
            server_version: "5.7.99-Basalt".to_string(),
            connection_id: 0,
            max_packet_size: connection::DEFAULT_MAX_PACKET_SIZE,
        }
    }
}
