//! MySQL session functions: DATABASE()/SCHEMA(), USER()/CURRENT_USER(), CONNECTION_ID(),
//! VERSION(), LAST_INSERT_ID(), ROW_COUNT(), FOUND_ROWS() — each reads the live state of its
//! own session.

use crate::session::SessionInfo;
use crate::variables::SERVER_VERSION;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{Result, ScalarValue};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use std::hash::{Hash, Hasher};
use std::sync::Arc;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    Database,
    User,
    CurrentUser,
    ConnectionId,
    Version,
    LastInsertId,
    RowCount,
    FoundRows,
}

#[derive(Debug)]
struct SessionFunction {
    name: &'static str,
    aliases: Vec<String>,
    kind: Kind,
    signature: Signature,
    info: Arc<SessionInfo>,
}

impl PartialEq for SessionFunction {
    fn eq(&self, other: &Self) -> bool {
        self.kind == other.kind && Arc::ptr_eq(&self.info, &other.info)
    }
}

impl Eq for SessionFunction {}

impl Hash for SessionFunction {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.kind.hash(state);
    }
}

impl ScalarUDFImpl for SessionFunction {
    fn name(&self) -> &str {
        self.name
    }

    fn aliases(&self) -> &[String] {
        &self.aliases
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(match self.kind {
            Kind::ConnectionId | Kind::LastInsertId => DataType::UInt64,
            Kind::RowCount | Kind::FoundRows => DataType::Int64,
            _ => DataType::Utf8,
        })
    }

    fn invoke_with_args(&self, _args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let info = &self.info;
        let v = match self.kind {
            Kind::Database => ScalarValue::Utf8(info.database()),
            Kind::User => ScalarValue::Utf8(Some(format!("{}@{}", info.user, info.host))),
            Kind::CurrentUser => ScalarValue::Utf8(Some(format!("{}@%", info.user))),
            Kind::ConnectionId => ScalarValue::UInt64(Some(info.connection_id as u64)),
            Kind::Version => ScalarValue::Utf8(Some(SERVER_VERSION.to_string())),
            Kind::LastInsertId => ScalarValue::UInt64(Some(info.last_insert_id())),
            Kind::RowCount => ScalarValue::Int64(Some(info.row_count.value())),
            Kind::FoundRows => ScalarValue::Int64(Some(info.found_rows.value())),
        };
        Ok(ColumnarValue::Scalar(v))
    }
}

/// The session functions bound to one session.
pub fn session_functions(info: &Arc<SessionInfo>) -> Vec<ScalarUDF> {
    let make = |name: &'static str, aliases: &[&str], kind: Kind| {
        ScalarUDF::new_from_impl(SessionFunction {
            name,
            aliases: aliases.iter().map(|a| a.to_string()).collect(),
            kind,
            signature: Signature::nullary(Volatility::Stable),
            info: info.clone(),
        })
    };
    vec![
        make("database", &["schema"], Kind::Database),
        make("user", &["session_user", "system_user"], Kind::User),
        make("current_user", &[], Kind::CurrentUser),
        make("connection_id", &[], Kind::ConnectionId),
        make("version", &[], Kind::Version),
        make("last_insert_id", &[], Kind::LastInsertId),
        make("row_count", &[], Kind::RowCount),
        make("found_rows", &[], Kind::FoundRows),
    ]
}
