//! Stored procedures in the local catalog: stored in their own `redb` table, kept in memory by
//! database and dropped with it.

use super::{to_json, validate_name, LocalCatalog};
use crate::procedures::ProcedureMeta;
use crate::store::Op;
use basalt_common::{BasaltError, Result};
use std::sync::Arc;

/// The stored record's key.
pub(crate) fn procedure_key(database: &str, name: &str) -> String {
    format!("{database}\0{}", ProcedureMeta::key(name))
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

    pub(crate) fn procedure_named(&self, database: &str, name: &str) -> Option<Arc<ProcedureMeta>> {
        self.state
            .read()
            .procedures
            .get(&self.key(database))
            .and_then(|p| p.get(&ProcedureMeta::key(name)).cloned())
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
        let (db_key, key) = (self.key(&db), ProcedureMeta::key(&procedure.name));
        let exists = self
            .state
            .read()
            .procedures
            .get(&db_key)
            .is_some_and(|p| p.contains_key(&key));
        if exists {
            return if if_not_exists {
                Ok(false)
            } else {
                Err(BasaltError::ProcedureExists(procedure.name))
            };
        }
        let procedure = ProcedureMeta {
            database: db.clone(),
            ..procedure
        };
        self.store.commit(vec![Op::PutProcedure(
            procedure_key(&db, &procedure.name),
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

    /// Drops a procedure; false when it did not exist and `if_exists` (else 1305).
    pub(crate) fn remove_procedure(
        &self,
        database: &str,
        name: &str,
        if_exists: bool,
    ) -> Result<bool> {
        let _w = self.writer.lock();
        let (db_key, key) = (self.key(database), ProcedureMeta::key(name));
        let existing = self
            .state
            .read()
            .procedures
            .get(&db_key)
            .and_then(|p| p.get(&key))
            .cloned();
        let Some(procedure) = existing else {
            return if if_exists {
                Ok(false)
            } else {
                Err(BasaltError::UnknownProcedure(format!(
                    "{}.{name}",
                    self.name_case.stored(database)
                )))
            };
        };
        self.store.commit(vec![Op::DeleteProcedure(procedure_key(
            &procedure.database,
            &procedure.name,
        ))])?;
        if let Some(procedures) = self.state.write().procedures.get_mut(&db_key) {
            procedures.remove(&key);
        }
        Ok(true)
    }
}
