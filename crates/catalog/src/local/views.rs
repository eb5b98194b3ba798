//! Views in the local catalog: stored in their own `redb` table, kept in memory by database,
//! sharing one namespace with the database's tables.

use super::{to_json, validate_name, LocalCatalog};
use crate::model::ViewMeta;
use crate::store::Op;
use basalt_common::{BasaltError, Result};
use std::sync::Arc;

/// The stored record's key.
pub(crate) fn view_key(database: &str, name: &str) -> String {
    format!("{database}\0{name}")
}

impl LocalCatalog {
    pub(crate) fn views_of(&self, database: &str) -> Vec<Arc<ViewMeta>> {
        self.state
            .read()
            .views
            .get(&self.key(database))
            .map(|v| v.values().cloned().collect())
            .unwrap_or_default()
    }

    pub(crate) fn view_named(&self, database: &str, name: &str) -> Option<Arc<ViewMeta>> {
        self.state
            .read()
            .views
            .get(&self.key(database))
            .and_then(|v| v.get(&self.key(name)).cloned())
    }

    /// Stores `view`; `replace` says whether an existing view of the name may (`Some(true)`),
    /// must (`None`: ALTER VIEW) or must not (`Some(false)`) be replaced.
    pub(crate) fn put_view(&self, view: ViewMeta, replace: Option<bool>) -> Result<()> {
        let name = self.name_case.stored(&view.name);
        validate_name(&name)?;
        let _w = self.writer.lock();
        let db = self
            .database_named(&view.database)
            .ok_or_else(|| BasaltError::UnknownDatabase(self.name_case.stored(&view.database)))?;
        let (db_key, key) = (self.key(&db), self.key(&name));
        let replaced = {
            let s = self.state.read();
            if s.tables.get(&db_key).is_some_and(|t| t.contains_key(&key)) {
                return Err(BasaltError::TableExists(name));
            }
            s.views.get(&db_key).and_then(|v| v.get(&key)).cloned()
        };
        let exists = replaced.is_some();
        match (replace, exists) {
            (Some(false), true) => return Err(BasaltError::TableExists(name)),
            (None, false) => return Err(BasaltError::UnknownTable(format!("{db}.{name}"))),
            _ => {}
        }
        let view = ViewMeta {
            database: db.clone(),
            name: name.clone(),
            ..view
        };
        let mut ops = vec![Op::PutView(view_key(&db, &name), to_json(&view)?)];
        // A view replaced under another spelling of its name (when names match without
        // regard to case) leaves no record behind.
        if let Some(old) = replaced.filter(|old| old.name != name) {
            ops.insert(0, Op::DeleteView(view_key(&db, &old.name)));
        }
        self.store.commit(ops)?;
        self.state
            .write()
            .views
            .entry(db_key)
            .or_default()
            .insert(key, Arc::new(view));
        Ok(())
    }

    pub(crate) fn remove_view(&self, database: &str, name: &str, if_exists: bool) -> Result<bool> {
        let _w = self.writer.lock();
        let (db_key, key) = (self.key(database), self.key(name));
        let existing = self
            .state
            .read()
            .views
            .get(&db_key)
            .and_then(|v| v.get(&key))
            .cloned();
        let Some(view) = existing else {
            return if if_exists {
                Ok(false)
            } else {
                let (db, name) = (self.name_case.stored(database), self.name_case.stored(name));
                Err(BasaltError::UnknownTableToDrop(format!("{db}.{name}")))
            };
        };
        self.store
            .commit(vec![Op::DeleteView(view_key(&view.database, &view.name))])?;
        if let Some(views) = self.state.write().views.get_mut(&db_key) {
            views.remove(&key);
        }
        Ok(true)
    }
}
