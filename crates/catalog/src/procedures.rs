//! Stored procedures and functions as the catalog keeps them: a name in a database, its
//! parameters, a function's return type, the body as written and MySQL's characteristics.
//! Routine names match without regard to case (as MySQL's do), whatever
//! `lower_case_table_names` says of tables; procedures and functions have names of their own.

use serde::{Deserialize, Serialize};

/// How a procedure parameter passes its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ParameterMode {
    In,
    Out,
    InOut,
}

impl ParameterMode {
    /// MySQL's spelling (`IN`, `OUT`, `INOUT`).
    pub fn as_str(self) -> &'static str {
        match self {
            ParameterMode::In => "IN",
            ParameterMode::Out => "OUT",
            ParameterMode::InOut => "INOUT",
        }
    }
}

/// One declared parameter: `[IN|OUT|INOUT] name type`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcedureParameter {
    pub mode: ParameterMode,
    pub name: String,
    /// The type as written (`VARCHAR(255)`, `INT`).
    pub data_type: String,
}

/// A stored procedure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcedureMeta {
    pub database: String,
    pub name: String,
    pub parameters: Vec<ProcedureParameter>,
    /// The body as written (`BEGIN .. END`, or one statement).
    pub body: String,
    /// `user@host` of the account that created it.
    pub definer: String,
    pub comment: String,
    pub deterministic: bool,
    /// `CONTAINS SQL`, `NO SQL`, `READS SQL DATA` or `MODIFIES SQL DATA`.
    pub data_access: String,
    /// `DEFINER` or `INVOKER`.
    pub security: String,
    /// The session's `sql_mode` when it was created.
    pub sql_mode: String,
    pub created_ms: i64,
    /// A stored function's return type as written (`None`: a procedure).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub returns: Option<String>,
}

impl ProcedureMeta {
    /// The key a procedure is found by within its database.
    pub fn key(name: &str) -> String {
        name.to_lowercase()
    }

    /// The key a stored function is found by within its database (apart from procedures').
    pub fn function_key(name: &str) -> String {
        format!("function\0{}", name.to_lowercase())
    }

    /// True for a stored function.
    pub fn is_function(&self) -> bool {
        self.returns.is_some()
    }

    /// `PROCEDURE` or `FUNCTION`.
    pub fn kind(&self) -> &'static str {
        if self.is_function() {
            "FUNCTION"
        } else {
            "PROCEDURE"
        }
    }

    /// This routine's key within its database.
    pub fn routine_key(&self) -> String {
        match self.is_function() {
            true => Self::function_key(&self.name),
            false => Self::key(&self.name),
        }
    }
}
