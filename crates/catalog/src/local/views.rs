//! Views in the local catalog: stored in their own `redb` table, kept in memory by database,
//! sharing one namespace with the database's tables.

use super::{normalize, to_json, validate_name, LocalCatalog};
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
            .get(&normalize(database))
            .map(|v| v.values().cloned().collect())
            .unwrap_or_default()
    }

    pub(crate) fn view_named(&self, database: &str, name: &str) -> Option<Arc<ViewMeta>> {
        self.state
            .read()
            .views
            .get(&normalize(database))
            .and_then(|v| v.get(&normalize(name)).cloned())
    }

    /// Stores `view`; `replace` says whether an existing view of the name may (`Some(true)`),
    /// must (`None`: ALTER VIEW) or must not (`Some(false)`) be replaced.
    pub(crate) fn put_view(&self, view: ViewMeta, replace: Option<bool>) -> Result<()> {
        let db = normalize(&view.database);
        let name = normalize(&view.name);
        validate_name(&name)?;
        let _w = self.writer.lock();
        let exists = {
            let s = self.state.read();
            if !s.databases.contains_key(&db) {
                return Err(BasaltError::UnknownDatabase(db));
            }
            if s.tables.get(&db).is_some_and(|t| t.contains_key(&name)) {
                return Err(BasaltError::TableExists(name));
            }
            s.views.get(&db).is_some_and(|v| v.contains_key(&name))
        };
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
        self.store
            .commit(vec![Op::PutView(view_key(&db, &name), to_json(&view)?)])?;
        self.state
            .write()
            .views
            .entry(db)
            .or_default()
            .insert(name, Arc::new(view));
        Ok(())
    }

    pub(crate) fn remove_view(&self, database: &str, name: &str, if_exists: bool) -> Result<bool> {
        let db = normalize(database);
        let name = normalize(name);
        let _w = self.writer.lock();
        let exists = self
            .state
            .read()
            .views
            .get(&db)
            .is_some_and(|v| v.contains_key(&name));
        if !exists {
            return if if_exists {
                Ok(false)
            } else {
                Err(BasaltError::UnknownTableToDrop(format!("{db}.{name}")))
            };
        }
        self.store
            .commit(vec![Op::DeleteView(view_key(&db, &name))])?;
        if let Some(views) = self.state.write().views.get_mut(&db) {
            views.remove(&name);
        }
        Ok(true)
    }
}
