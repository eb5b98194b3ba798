//! Stored procedures and functions in the local catalog: stored in their own `redb` table,
//! kept in memory by database and dropped with it.

use super::{to_json, validate_name, LocalCatalog};
use crate::procedures::ProcedureMeta;
use crate::store::Op;
use basalt_common::{BasaltError, Result};
use std::sync::Arc;

/// The stored record's key.
pub(crate) fn procedure_key(database: &str, routine: &ProcedureMeta) -> String {
    format!("{database}\0{}", routine.routine_key())
}

impl LocalCatalog {
    pub(crate) fn procedures_of(&self, database: &str) -> Vec<Arc<ProcedureMeta>> {
        self.state
            .read()
            .procedures
            .get(&self.key(database))
            .map(|p| p.values().cloned().collect())
            .unwrap_or_default()
    }

    /// A procedure (`function` false) or function by name.
    pub(crate) fn procedure_named(
        &self,
        database: &str,
        name: &str,
        function: bool,
    ) -> Option<Arc<ProcedureMeta>> {
        let key = match function {
            true => ProcedureMeta::function_key(name),
            false => ProcedureMeta::key(name),
        };
        self.state
            .read()
            .procedures
            .get(&self.key(database))
            .and_then(|p| p.get(&key).cloned())
    }

    /// Stores a new procedure; false when one of the name exists and `if_not_exists` (else
    /// 1304).
    pub(crate) fn put_procedure(
        &self,
        procedure: ProcedureMeta,
        if_not_exists: bool,
    ) -> Result<bool> {
        validate_name(&procedure.name)?;
        let _w = self.writer.lock();
        let db = self.database_named(&procedure.database).ok_or_else(|| {
            BasaltError::UnknownDatabase(self.name_case.stored(&procedure.database))
        })?;
        let (db_key, key) = (self.key(&db), procedure.routine_key());
        let exists = self
            .state
            .read()
            .procedures
            .get(&db_key)
            .is_some_and(|p| p.contains_key(&key));
        if exists {
            return match (if_not_exists, procedure.is_function()) {
                (true, _) => Ok(false),
                (false, false) => Err(BasaltError::ProcedureExists(procedure.name)),
                (false, true) => Err(BasaltError::Routine {
                    code: 1304,
                    message: format!("FUNCTION {} already exists", procedure.name),
                }),
            };
        }
        let procedure = ProcedureMeta {
            database: db.clone(),
            ..procedure
        };
        self.store.commit(vec![Op::PutProcedure(
            procedure_key(&db, &procedure),
            to_json(&procedure)?,
        )])?;
        self.state
            .write()
            .procedures
            .entry(db_key)
            .or_default()
            .insert(key, Arc::new(procedure));
        Ok(true)
    }

    /// Drops a procedure (`function` false) or function; false when it did not exist and
    /// `if_exists` (else 1305).
    pub(crate) fn remove_procedure(
        &self,
        database: &str,
        name: &str,
        function: bool,
        if_exists: bool,
    ) -> Result<bool> {
        let _w = self.writer.lock();
        let key = match function {
            true => ProcedureMeta::function_key(name),
            false => ProcedureMeta::key(name),
        };
        let db_key = self.key(database);
        let existing = self
            .state
            .read()
            .procedures
            .get(&db_key)
            .and_then(|p| p.get(&key))
            .cloned();
        let Some(procedure) = existing else {
            let name = format!("{}.{name}", self.name_case.stored(database));
            return match (if_exists, function) {
                (true, _) => Ok(false),
                (false, false) => Err(BasaltError::UnknownProcedure(name)),
                (false, true) => Err(BasaltError::Routine {
                    code: 1305,
                    message: format!("FUNCTION {name} does not exist"),
                }),
            };
        };
        self.store.commit(vec![Op::DeleteProcedure(procedure_key(
            &procedure.database,
            &procedure,
        ))])?;
        if let Some(procedures) = self.state.write().procedures.get_mut(&db_key) {
            procedures.remove(&key);
        }
        Ok(true)
    }
}
