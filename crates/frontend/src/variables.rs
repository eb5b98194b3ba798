//! The registry of system variables (names, types, defaults, scopes) and one session's values.
//! `SET` writes it; `@@name`, `SHOW VARIABLES` and information_schema read it.

use basalt_common::{BasaltError, Result};
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq)]
pub enum VarValue {
    Int(i64),
    /// DOUBLE, which only user variables hold (`SET @x = 1e3`, `SET @x = RAND()`).
    Double(f64),
    /// An exact number in text form (`1.50`), which only user variables hold.
    Decimal(String),
    Str(String),
}

impl VarValue {
    pub fn as_text(&self) -> String {
        match self {
            VarValue::Int(i) => i.to_string(),
            VarValue::Double(d) => d.to_string(),
            VarValue::Decimal(s) | VarValue::Str(s) => s.clone(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VarKind {
    Int,
    /// Stored as 0/1, accepts ON/OFF/TRUE/FALSE.
    Bool,
    Str,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Settable per session and globally.
    Both,
    /// Only `SET GLOBAL`.
    Global,
    /// Cannot be set.
    ReadOnly,
}

/// One known system variable.
pub struct VarDef {
    pub name: &'static str,
    pub kind: VarKind,
    pub scope: Scope,
    pub default: &'static str,
}

const fn def(name: &'static str, kind: VarKind, scope: Scope, default: &'static str) -> VarDef {
    VarDef {
        name,
        kind,
        scope,
        default,
    }
}

use Scope::*;
use VarKind::*;

pub const SERVER_VERSION: &str = "5.7.99-Basalt-0.1.0";

/// Every system variable Basalt knows, sorted by name.
pub static VARIABLES: &[VarDef] = &[
    def("auto_increment_increment", Int, Both, "1"),
    def("auto_increment_offset", Int, Both, "1"),
    def("autocommit", Bool, Both, "1"),
    def("block_encryption_mode", Str, Both, "aes-128-ecb"),
    def("character_set_client", Str, Both, "utf8mb4"),
    def("character_set_connection", Str, Both, "utf8mb4"),
    def("character_set_database", Str, Both, "utf8mb4"),
    def("character_set_results", Str, Both, "utf8mb4"),
    def("character_set_server", Str, Both, "utf8mb4"),
    def("character_set_system", Str, ReadOnly, "utf8"),
    def("collation_connection", Str, Both, "utf8mb4_general_ci"),
    def("collation_database", Str, Both, "utf8mb4_general_ci"),
    def("collation_server", Str, Both, "utf8mb4_general_ci"),
    // The iterations a recursive CTE may run (`recursion_depth`'s limit on its plan).
    def("cte_max_recursion_depth", Int, Both, "1000"),
    def("default_storage_engine", Str, Both, "OLAP"),
    // WEEK(d)'s mode (mysql_compat's week rewrite reads it).
    def("default_week_format", Int, Both, "0"),
    def("div_precision_increment", Int, Both, "4"),
    def("enable_nereids_timeout", Bool, Both, "1"),
    def("enable_profile", Bool, Both, "0"),
    def("enable_short_circuit_query", Bool, Both, "1"),
    def("exec_mem_limit", Int, Both, "2147483648"),
    def("gtid_mode", Str, ReadOnly, "OFF"),
    def("init_connect", Str, Global, ""),
    def("insert_timeout", Int, Both, "14400"),
    def("interactive_timeout", Int, Both, "28800"),
    def("license", Str, ReadOnly, "Apache License 2.0"),
    def("log_bin", Bool, ReadOnly, "0"),
    def("lower_case_table_names", Int, ReadOnly, "0"),
    def("max_allowed_packet", Int, Both, "67108864"),
    def("max_connections", Int, Global, "1024"),
    def("max_execution_time", Int, Both, "0"),
    def("max_prepared_stmt_count", Int, Global, "16382"),
    def("max_sp_recursion_depth", Int, Both, "0"),
    def("nereids_timeout_second", Int, Both, "30"),
    def("net_buffer_length", Int, Both, "16384"),
    def("net_read_timeout", Int, Both, "60"),
    def("net_write_timeout", Int, Both, "60"),
    def("parallel_pipeline_task_num", Int, Both, "0"),
    def("performance_schema", Bool, ReadOnly, "0"),
    def("query_cache_size", Int, Global, "0"),
    def("query_cache_type", Str, Both, "OFF"),
    def("query_timeout", Int, Both, "900"),
    def("return_object_data_as_binary", Bool, Both, "0"),
    def("sql_auto_is_null", Bool, Both, "0"),
    def(
        "sql_mode",
        Str,
        Both,
        "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ENGINE_SUBSTITUTION",
    ),
    def("sql_safe_updates", Bool, Both, "0"),
    def("sql_select_limit", Int, Both, "9223372036854775807"),
    def("system_time_zone", Str, ReadOnly, "UTC"),
    def("time_zone", Str, Both, "SYSTEM"),
    // Unix seconds the session's clock is fixed at; 0 is the real time (`session_clock`).
    def("timestamp", Str, Both, "0"),
    def("transaction_isolation", Str, Both, "REPEATABLE-READ"),
    def("transaction_read_only", Bool, Both, "0"),
    def("tx_isolation", Str, Both, "REPEATABLE-READ"),
    def("tx_read_only", Bool, Both, "0"),
    def("version", Str, ReadOnly, SERVER_VERSION),
    def(
        "version_comment",
        Str,
        ReadOnly,
        "Basalt 0.1.0, an analytical database (MySQL protocol)",
    ),
    def("wait_timeout", Int, Both, "28800"),
    def("workload_group", Str, Both, "normal"),
];

pub fn lookup(name: &str) -> Option<&'static VarDef> {
    let lower = name.to_ascii_lowercase();
    known().find(|d| d.name == lower)
}

/// The variables Basalt acts on, then Doris's that it only stores.
fn known() -> impl Iterator<Item = &'static VarDef> {
    VARIABLES
        .iter()
        .chain(crate::doris_variables::DORIS_VARIABLES.iter())
        .chain(crate::doris_variables::MYSQL_TOOL_VARIABLES.iter())
        .chain(crate::mysql_server_variables::MYSQL_SERVER_VARIABLES.iter())
        .chain(crate::mariadb_server_variables::MARIADB_SERVER_VARIABLES.iter())
}

/// Converts user text to a variable's stored value, or a 1231 error.
pub fn coerce(def: &VarDef, value: &str) -> Result<VarValue> {
    let bad = || BasaltError::WrongVariableValue {
        name: def.name.to_string(),
        value: value.to_string(),
    };
    match def.kind {
        Int => value
            .trim()
            .parse::<i64>()
            .map(VarValue::Int)
            .map_err(|_| bad()),
        Bool => match value.trim().to_ascii_lowercase().as_str() {
            "1" | "on" | "true" => Ok(VarValue::Int(1)),
            "0" | "off" | "false" => Ok(VarValue::Int(0)),
            _ => Err(bad()),
        },
        Str if def.name == "time_zone" => {
            if basalt_functions::time_zones::is_known_zone(value) {
                Ok(VarValue::Str(value.trim().to_string()))
            } else {
                Err(BasaltError::UnknownTimeZone(value.to_string()))
            }
        }
        Str if matches!(def.name, "transaction_isolation" | "tx_isolation") => {
            crate::isolation::canonical_level(value)
                .map(|level| VarValue::Str(level.to_string()))
                .ok_or_else(bad)
        }
        Str => Ok(VarValue::Str(value.to_string())),
    }
}

fn default_value(def: &VarDef) -> VarValue {
    coerce(def, def.default).unwrap_or_else(|_| VarValue::Str(def.default.to_string()))
}

/// A session variable's own setting as it was (`None`: not set in the session).
#[derive(Debug, Clone)]
pub struct SessionSetting {
    name: &'static str,
    value: Option<VarValue>,
}

/// One session's variables: its own settings over the server's global values.
#[derive(Debug, Clone, Default)]
pub struct SessionVariables {
    globals: BTreeMap<String, VarValue>,
    session: BTreeMap<String, VarValue>,
    user: BTreeMap<String, VarValue>,
}

impl SessionVariables {
    /// A session seeing `globals` (persisted `SET GLOBAL` values, as text).
    pub fn new(globals: &BTreeMap<String, String>) -> SessionVariables {
        let mut g = BTreeMap::new();
        for (k, v) in globals {
            if let Some(def) = lookup(k) {
                if let Ok(val) = coerce(def, v) {
                    g.insert(def.name.to_string(), val);
                }
            }
        }
        SessionVariables {
            globals: g,
            session: BTreeMap::new(),
            user: BTreeMap::new(),
        }
    }

    /// The session value of `name` (session setting, else global, else default).
    pub fn get(&self, name: &str) -> Result<VarValue> {
        let def = lookup(name).ok_or_else(|| BasaltError::UnknownVariable(name.to_string()))?;
        Ok(self
            .session
            .get(def.name)
            .or_else(|| self.globals.get(def.name))
            .cloned()
            .unwrap_or_else(|| default_value(def)))
    }

    pub fn get_global(&self, name: &str) -> Result<VarValue> {
        let def = lookup(name).ok_or_else(|| BasaltError::UnknownVariable(name.to_string()))?;
        Ok(self
            .globals
            .get(def.name)
            .cloned()
            .unwrap_or_else(|| default_value(def)))
    }

    /// `SET [SESSION] name = value`.
    pub fn set_session(&mut self, name: &str, value: &str) -> Result<()> {
        let def = lookup(name).ok_or_else(|| BasaltError::UnknownVariable(name.to_string()))?;
        match def.scope {
            ReadOnly => return Err(BasaltError::ReadOnlyVariable(def.name.to_string())),
            Global => {
                return Err(BasaltError::Execution(format!(
                    "Variable '{}' is a GLOBAL variable and should be set with SET GLOBAL",
                    def.name
                )))
            }
            Both => {}
        }
        let v = coerce(def, value)?;
        if let Some(twin) = crate::isolation::twin(def.name) {
            self.session.insert(twin.to_string(), v.clone());
        }
        self.session.insert(def.name.to_string(), v);
        Ok(())
    }

    /// A variable's own session setting, to be put back by [`SessionVariables::restore`]
    /// (`SET STATEMENT .. FOR`).
    pub fn setting(&self, name: &str) -> Result<SessionSetting> {
        let def = lookup(name).ok_or_else(|| BasaltError::UnknownVariable(name.to_string()))?;
        Ok(SessionSetting {
            name: def.name,
            value: self.session.get(def.name).cloned(),
        })
    }

    /// Puts a [`SessionVariables::setting`] back: the value the session had set, or none (the
    /// session reads the global value again).
    pub fn restore(&mut self, saved: SessionSetting) {
        let names = std::iter::once(saved.name).chain(crate::isolation::twin(saved.name));
        for name in names {
            match &saved.value {
                Some(v) => self.session.insert(name.to_string(), v.clone()),
                None => self.session.remove(name),
            };
        }
    }

    /// `SET [SESSION] name = DEFAULT`: the session takes the global value again.
    pub fn reset_session(&mut self, name: &str) -> Result<()> {
        let def = lookup(name).ok_or_else(|| BasaltError::UnknownVariable(name.to_string()))?;
        if def.scope != Both {
            // The same refusals as any other value.
            return self.set_session(name, def.default);
        }
        self.session.remove(def.name);
        if let Some(twin) = crate::isolation::twin(def.name) {
            self.session.remove(twin);
        }
        Ok(())
    }

    /// A variable's compiled-in default (`SET GLOBAL name = DEFAULT`).
    pub fn default_text(name: &str) -> Result<&'static str> {
        lookup(name)
            .map(|d| d.default)
            .ok_or_else(|| BasaltError::UnknownVariable(name.to_string()))
    }

    /// Validates `SET GLOBAL name = value` and applies it to this session's view; returns the
    /// canonical name and text to persist.
    pub fn set_global(&mut self, name: &str, value: &str) -> Result<(String, String)> {
        let def = lookup(name).ok_or_else(|| BasaltError::UnknownVariable(name.to_string()))?;
        if def.scope == ReadOnly {
            return Err(BasaltError::ReadOnlyVariable(def.name.to_string()));
        }
        let v = coerce(def, value)?;
        let text = v.as_text();
        if let Some(twin) = crate::isolation::twin(def.name) {
            self.globals.insert(twin.to_string(), v.clone());
        }
        self.globals.insert(def.name.to_string(), v);
        Ok((def.name.to_string(), text))
    }

    pub fn set_user(&mut self, name: &str, value: VarValue) {
        self.user.insert(name.to_ascii_lowercase(), value);
    }

    /// `SET @name = NULL`: the variable reads as NULL again.
    pub fn unset_user(&mut self, name: &str) {
        self.user.remove(&name.to_ascii_lowercase());
    }

    pub fn get_user(&self, name: &str) -> Option<VarValue> {
        self.user.get(&name.to_ascii_lowercase()).cloned()
    }

    /// All variables with their session (or global) values, sorted by name.
    pub fn all(&self, global: bool) -> Vec<(&'static str, VarValue)> {
        let mut all: Vec<(&'static str, VarValue)> = known()
            .map(|d| {
                let v = if global {
                    self.get_global(d.name)
                } else {
                    self.get(d.name)
                };
                (d.name, v.unwrap_or_else(|_| default_value(d)))
            })
            .collect();
        all.sort_by_key(|(name, _)| *name);
        all
    }

    /// COM_RESET_CONNECTION: session settings and user variables are forgotten.
    pub fn reset(&mut self) {
        self.session.clear();
        self.user.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_rules() {
        let mut globals = BTreeMap::new();
        globals.insert("wait_timeout".to_string(), "100".to_string());
        let mut v = SessionVariables::new(&globals);
        assert_eq!(v.get("WAIT_TIMEOUT").unwrap(), VarValue::Int(100));
        assert_eq!(v.get("autocommit").unwrap(), VarValue::Int(1));
        v.set_session("autocommit", "OFF").unwrap();
        assert_eq!(v.get("autocommit").unwrap(), VarValue::Int(0));
        assert_eq!(v.get_global("autocommit").unwrap(), VarValue::Int(1));
        assert_eq!(v.set_session("nope", "1").unwrap_err().mysql_code(), 1193);
        assert_eq!(
            v.set_session("wait_timeout", "abc")
                .unwrap_err()
                .mysql_code(),
            1231
        );
        assert!(v.set_session("version", "x").is_err());
        assert!(VARIABLES.windows(2).all(|w| w[0].name < w[1].name));
        let doris = crate::doris_variables::DORIS_VARIABLES;
        assert!(doris.windows(2).all(|w| w[0].name < w[1].name));
        assert!(doris
            .iter()
            .all(|d| !VARIABLES.iter().any(|v| v.name == d.name)));
        assert!(doris.iter().all(|d| coerce(d, d.default).is_ok()));
        v.set_session("enable_nereids_planner", "true").unwrap();
        assert_eq!(v.get("ENABLE_NEREIDS_PLANNER").unwrap(), VarValue::Int(1));
        assert!(v.all(false).windows(2).all(|w| w[0].0 < w[1].0));
        v.reset();
        assert_eq!(v.get("autocommit").unwrap(), VarValue::Int(1));
    }

    /// Each list of variables is sorted by name, and no name is in two lists (a second
    /// definition would never be found).
    #[test]
    fn lists_are_sorted_and_names_are_defined_once() {
        for list in [
            crate::mysql_server_variables::MYSQL_SERVER_VARIABLES,
            crate::mariadb_server_variables::MARIADB_SERVER_VARIABLES,
        ] {
            assert!(list.windows(2).all(|w| w[0].name < w[1].name));
        }
        let mut seen = std::collections::HashSet::new();
        for def in known() {
            assert!(seen.insert(def.name), "{} is defined twice", def.name);
        }
    }
}
