//! One MySQL connection's view of Basalt: authentication against the catalog's users and
//! statements executed by the query engine in the connection's session.
//!
//! Connections live on protocol threads (see `protocol_threads`). A point query that the
//! short-circuit path answers runs right there, with no hand-off; every other statement runs on
//! the execution runtime (`exec`), and its result batches come back through a small channel, so
//! a heavy query never stalls the other connections of its protocol thread.

use crate::mysql::{verify_native_password, Backend, PreparedStatement, QueryOutput};
use arrow::datatypes::SchemaRef;
use basalt_common::{BasaltError, ParamValue};
use basalt_frontend::processes::StatementGuard;
use basalt_frontend::{BatchStream, Output, QueryEngine, Session};
use futures::StreamExt;
use std::future::Future;
use std::sync::Arc;
use tokio::runtime::Handle;
use tokio_util::sync::CancellationToken;

pub struct SessionBackend {
    engine: Arc<QueryEngine>,
    /// Where statements other than short-circuit point queries run.
    exec: Handle,
    connection_id: u32,
    session: Option<Arc<Session>>,
}

impl SessionBackend {
    pub fn new(engine: Arc<QueryEngine>, exec: Handle, connection_id: u32) -> SessionBackend {
        SessionBackend {
            engine,
            exec,
            connection_id,
            session: None,
        }
    }

    fn session(&self) -> Result<&Arc<Session>, BasaltError> {
        self.session
            .as_ref()
            .ok_or_else(|| BasaltError::Internal("command before authentication".into()))
    }

    /// Runs `work` on the execution runtime and waits for it. KILL (the statement's token) or
    /// the client going away (dropping this wait) cancels the work.
    async fn on_exec<T: Send + 'static>(
        &self,
        cancel: &CancellationToken,
        work: impl Future<Output = Result<T, BasaltError>> + Send + 'static,
    ) -> Result<T, BasaltError> {
        let mut task = AbortOnDrop(self.exec.spawn(work));
        tokio::select! {
            done = &mut task.0 => match done {
                Ok(result) => result,
                Err(e) => Err(BasaltError::Internal(format!("statement task failed: {e}"))),
            },
            _ = cancel.cancelled() => {
                // The work is dropped (and what it holds of the session released, such as a
                // CALL's place on the procedure stack) before the client hears of the KILL and
                // sends its next statement; a task that does not yield within 5 s is left to
                // its abort.
                task.0.abort();
                let _ = tokio::time::timeout(std::time::Duration::from_secs(5), &mut task.0).await;
                Err(BasaltError::QueryInterrupted)
            }
        }
    }

    /// A statement's output, with a result stream driven on the execution runtime; the
    /// statement stays registered (and killable) until its results are consumed.
    async fn run_statement(
        &self,
        statement: StatementGuard,
        work: impl Future<Output = Result<Output, BasaltError>> + Send + 'static,
    ) -> Result<QueryOutput, BasaltError> {
        let output = self
            .on_exec(statement.token(), work)
            .await
            .map_err(|e| match e {
                BasaltError::QueryInterrupted => statement.interrupted(),
                other => other,
            })?;
        Ok(to_query_output(match output {
            Output::Rows { schema, stream } => Output::Rows {
                schema,
                stream: drive_on(&self.exec, stream, statement),
            },
            other => other,
        }))
    }
}

/// Aborts a spawned task when dropped.
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Polls `stream` on `exec` (where its operators' own tasks belong) and hands the batches over
/// a bounded channel; dropping the returned stream stops the producer, and KILL ends it with an
/// error. A cancelled statement's plan is dropped at once (its memory freed) even while the
/// client is not reading and the connection waits to send what it has.
fn drive_on(exec: &Handle, mut stream: BatchStream, statement: StatementGuard) -> BatchStream {
    let (tx, rx) = tokio::sync::mpsc::channel(2);
    let cancelled = statement.token().clone();
    let producer = exec.spawn(async move {
        loop {
            // A panic while computing a batch (in DataFusion or below) fails the statement
            // with an error; it must not end the result early as if it were complete.
            let next =
                futures::FutureExt::catch_unwind(std::panic::AssertUnwindSafe(stream.next()));
            let batch = tokio::select! {
                biased;
                _ = cancelled.cancelled() => break,
                batch = next => match batch {
                    Ok(Some(batch)) => Some(batch),
                    Ok(None) => None,
                    Err(panic) => Some(Err(panic_error(panic, "a running query"))),
                },
            };
            let last = !matches!(batch, Some(Ok(_)));
            let sent = tokio::select! {
                biased;
                _ = cancelled.cancelled() => false,
                sent = tx.send(batch) => sent.is_ok(),
            };
            if !sent || last {
                break;
            }
        }
    });
    struct Consumer {
        rx: tokio::sync::mpsc::Receiver<Option<Result<arrow::array::RecordBatch, BasaltError>>>,
        _producer: AbortOnDrop<()>,
        statement: StatementGuard,
        done: bool,
    }
    let consumer = Consumer {
        rx,
        _producer: AbortOnDrop(producer),
        statement,
        done: false,
    };
    let batches = futures::stream::unfold(consumer, |mut c| async move {
        if c.done {
            return None;
        }
        // The producer ends every result with `None`. A killed statement ends with its
        // error, never with a short result: the producer stops on the same token, so the
        // channel closing may be the first sign of the KILL; a channel that closes without
        // the end mark and without a KILL is a failure too.
        let next = tokio::select! {
            biased;
            _ = c.statement.token().cancelled() => Err(c.statement.interrupted()),
            message = c.rx.recv() => match message {
                Some(Some(batch)) => Ok(Some(batch)),
                Some(None) => Ok(None),
                None if c.statement.token().is_cancelled() => Err(c.statement.interrupted()),
                None => Err(BasaltError::Internal(
                    "the statement stopped before its result was complete".into(),
                )),
            },
        };
        match next {
            Ok(Some(batch)) => Some((batch, c)),
            Ok(None) => None,
            Err(e) => {
                c.done = true;
                Some((Err(e), c))
            }
        }
    });
    Box::pin(batches)
}

/// Runs a statement's future; a panic inside fails this statement only.
async fn guard_panics<T>(
    fut: impl std::future::Future<Output = Result<T, BasaltError>>,
    what: &str,
) -> Result<T, BasaltError> {
    match futures::FutureExt::catch_unwind(std::panic::AssertUnwindSafe(fut)).await {
        Ok(r) => r,
        Err(panic) => Err(panic_error(panic, what)),
    }
}

/// The error a statement that panicked fails with (the panic is logged).
fn panic_error(panic: Box<dyn std::any::Any + Send>, what: &str) -> BasaltError {
    let msg = panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "unknown panic".into());
    tracing::error!("statement panicked: {msg}: {what}");
    BasaltError::Internal(format!("the statement failed unexpectedly: {msg}"))
}

/// The short-circuit path, run where the request arrived; a panic fails this statement only.
fn point_inline(
    what: &str,
    lookup: impl FnOnce() -> Option<Result<Output, BasaltError>>,
) -> Option<Result<QueryOutput, BasaltError>> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(lookup)) {
        Ok(found) => found.map(|r| r.map(to_query_output)),
        Err(panic) => Some(Err(panic_error(panic, what))),
    }
}

fn to_query_output(output: Output) -> QueryOutput {
    match output {
        Output::Rows { schema, stream } => QueryOutput::ResultSet { schema, stream },
        Output::Ok {
            affected_rows,
            last_insert_id,
            info,
        } => QueryOutput::Ok {
            affected_rows,
            last_insert_id,
            info,
        },
        Output::Multiple(parts) => QueryOutput::Multiple(
            parts
                .into_iter()
                .map(|part| part.map(to_query_output))
                .collect(),
        ),
    }
}

#[async_trait::async_trait]
impl Backend for SessionBackend {
    async fn authenticate(
        &mut self,
        user: &str,
        client_host: &str,
        salt: &[u8],
        auth_response: &[u8],
        database: Option<&str>,
    ) -> Result<(), BasaltError> {
        self.engine
            .login(user, client_host, !auth_response.is_empty(), &|hash| {
                verify_native_password(salt, auth_response, hash)
            })
            .await?;
        self.engine.admit_connection(user, client_host)?;
        let session = self
            .engine
            .new_session(self.connection_id, user, client_host);
        if let Some(db) = database.filter(|d| !d.is_empty()) {
            self.engine.use_database(&session, db)?;
        }
        let session = Arc::new(session);
        session.enable_routines(&self.engine);
        self.session = Some(session);
        Ok(())
    }

    async fn query(&mut self, sql: &str) -> Result<QueryOutput, BasaltError> {
        let session = self.session()?.clone();
        // Parsed once, here: the short-circuit check and execution share the statement.
        let mut parsed = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.engine.parse(&session, sql)
        })) {
            Ok(parsed) => parsed,
            Err(panic) => Err(panic_error(panic, sql)),
        };
        if let Ok(stmt) = &mut parsed {
            if let Some(done) = point_inline(sql, || self.engine.try_point_query(&session, stmt)) {
                return done;
            }
        }
        let statement = self.engine.begin_statement(&session, sql);
        let engine = self.engine.clone();
        let sql = sql.to_string();
        self.run_statement(statement, async move {
            let run = async { engine.execute_parsed(&session, parsed?).await };
            guard_panics(run, &sql).await
        })
        .await
    }

    fn local_infile(&self, sql: &str) -> Option<String> {
        basalt_frontend::local_infile_name(sql)
    }

    async fn load_local_infile(
        &mut self,
        sql: &str,
        data: futures::stream::BoxStream<'static, Result<bytes::Bytes, String>>,
    ) -> Result<QueryOutput, BasaltError> {
        let session = self.session()?.clone();
        let statement = self.engine.begin_statement(&session, sql);
        let engine = self.engine.clone();
        let sql = sql.to_string();
        self.run_statement(statement, async move {
            let run = async { engine.load_local_infile(&session, &sql, data).await };
            guard_panics(run, &sql).await
        })
        .await
    }

    async fn prepare(&mut self, sql: &str) -> Result<PreparedStatement, BasaltError> {
        let session = self.session()?.clone();
        let statement = self.engine.begin_statement(&session, sql);
        let engine = self.engine.clone();
        let sql = sql.to_string();
        let info = self
            .on_exec(statement.token(), async move {
                guard_panics(engine.prepare(&session, &sql), &sql).await
            })
            .await?;
        Ok(PreparedStatement {
            id: info.id,
            params: u16::try_from(info.params).map_err(|_| {
                BasaltError::NotSupported("more than 65535 parameters in a statement".into())
            })?,
            columns: info.columns,
        })
    }

    async fn execute(
        &mut self,
        id: u32,
        params: Vec<ParamValue>,
    ) -> Result<QueryOutput, BasaltError> {
        let session = self.session()?.clone();
        let what = format!("prepared statement {id}");
        if let Some(done) = point_inline(&what, || {
            self.engine.try_point_prepared(&session, id, &params)
        }) {
            return done;
        }
        let statement = self.engine.begin_prepared(&session, id);
        let engine = self.engine.clone();
        self.run_statement(statement, async move {
            guard_panics(engine.execute_prepared(&session, id, params), &what).await
        })
        .await
    }

    fn close(&mut self, id: u32) {
        if let Some(session) = &self.session {
            self.engine.close_prepared(session, id);
        }
    }

    async fn init_db(&mut self, database: &str) -> Result<(), BasaltError> {
        let session = self.session()?;
        self.engine.use_database(session, database)
    }

    async fn field_list(&mut self, table: &str) -> Result<SchemaRef, BasaltError> {
        let session = self.session()?;
        self.engine.table_schema(session, table)
    }

    async fn reset(&mut self) {
        if let Some(s) = &self.session {
            s.reset();
        }
    }

    fn kill_signal(&self) -> futures::future::BoxFuture<'static, ()> {
        match &self.session {
            Some(session) => Box::pin(session.killed().cancelled_owned()),
            None => Box::pin(futures::future::pending()),
        }
    }

    fn split_statements(&self, sql: &str) -> Vec<String> {
        basalt_frontend::split_statements(sql)
    }

    fn idle_timeout(&self, interactive: bool) -> std::time::Duration {
        let name = if interactive {
            "interactive_timeout"
        } else {
            "wait_timeout"
        };
        let secs = self
            .session
            .as_ref()
            .and_then(|s| match s.variables().get(name) {
                Ok(basalt_frontend::VarValue::Int(n)) => u64::try_from(n).ok(),
                _ => None,
            })
            .unwrap_or(28_800);
        // MySQL's range is 1 .. 31536000 seconds.
        std::time::Duration::from_secs(secs.clamp(1, 31_536_000))
    }

    fn no_backslash_escapes(&self) -> bool {
        self.session
            .as_ref()
            .is_some_and(|s| !s.backslash_escapes())
    }

    fn object_data_as_binary(&self) -> bool {
        self.session.as_ref().is_some_and(|s| {
            matches!(
                s.variables().get("return_object_data_as_binary"),
                Ok(basalt_frontend::VarValue::Int(n)) if n != 0
            )
        })
    }

    fn warning_count(&self) -> u16 {
        self.session
            .as_ref()
            .map(|s| s.warning_count())
            .unwrap_or(0)
    }

    fn count_traffic(&self, received: u64, sent: u64) {
        self.engine.count_traffic(received, sent);
    }

    fn autocommit(&self) -> bool {
        self.session
            .as_ref()
            .map(|s| s.autocommit())
            .unwrap_or(true)
    }

    fn in_transaction(&self) -> bool {
        self.session.as_ref().is_some_and(|s| s.in_transaction())
    }
}
