//! One MySQL connection's view of Basalt: authentication against the catalog's users and
//! statements executed by the query engine in the connection's session.

use crate::mysql::{verify_native_password, Backend, PreparedStatement, QueryOutput};
use arrow::datatypes::SchemaRef;
use basalt_common::{BasaltError, ParamValue};
use basalt_query::{Output, QueryEngine, Session};
use std::sync::Arc;

pub struct SessionBackend {
    engine: Arc<QueryEngine>,
    connection_id: u32,
    session: Option<Session>,
}

impl SessionBackend {
    pub fn new(engine: Arc<QueryEngine>, connection_id: u32) -> SessionBackend {
        SessionBackend {
            engine,
            connection_id,
            session: None,
        }
    }

    fn session(&self) -> Result<&Session, BasaltError> {
        self.session
            .as_ref()
            .ok_or_else(|| BasaltError::Internal("command before authentication".into()))
    }
}

/// Runs a statement's future; a panic inside fails this statement only.
async fn guard_panics<T>(
    fut: impl std::future::Future<Output = Result<T, BasaltError>>,
    what: &str,
) -> Result<T, BasaltError> {
    match futures::FutureExt::catch_unwind(std::panic::AssertUnwindSafe(fut)).await {
        Ok(r) => r,
        Err(panic) => {
            let msg = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown panic".into());
            tracing::error!("statement panicked: {msg}: {what}");
            Err(BasaltError::Internal(format!(
                "the statement failed unexpectedly: {msg}"
            )))
        }
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
        let denied = || BasaltError::AccessDenied {
            user: user.to_string(),
            host: client_host.to_string(),
            using_password: !auth_response.is_empty(),
        };
        let account = self
            .engine
            .catalog()
            .find_user(user, client_host)
            .ok_or_else(denied)?;
        if !verify_native_password(salt, auth_response, &account.password_hash) {
            return Err(denied());
        }
        let session = self
            .engine
            .new_session(self.connection_id, user, client_host);
        if let Some(db) = database.filter(|d| !d.is_empty()) {
            self.engine.use_database(&session, db)?;
        }
        self.session = Some(session);
        Ok(())
    }

    async fn query(&mut self, sql: &str) -> Result<QueryOutput, BasaltError> {
        let session = self.session()?;
        let output = guard_panics(self.engine.execute(session, sql), sql).await?;
        Ok(to_query_output(output))
    }

    async fn prepare(&mut self, sql: &str) -> Result<PreparedStatement, BasaltError> {
        let session = self.session()?;
        let info = guard_panics(self.engine.prepare(session, sql), sql).await?;
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
        let session = self.session()?;
        let what = format!("prepared statement {id}");
        let output = guard_panics(self.engine.execute_prepared(session, id, params), &what).await?;
        Ok(to_query_output(output))
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

    fn autocommit(&self) -> bool {
        self.session
            .as_ref()
            .map(|s| s.autocommit())
            .unwrap_or(true)
    }
}
