//! The frontend as a load's [`LoadContext`]: catalog, storage, the load registry, and the
//! loading user's session to plan `columns` and `where` expressions in, parsed with Basalt's
//! MySQL parser and rewrites.

use crate::engine::QueryEngine;
use basalt_catalog::Catalog;
use basalt_common::{BasaltError, Result};
use basalt_load::{LoadContext, LoadExpressions, LoadRegistry};
use basalt_sql::ast::{SelectItem, SetExpr, Statement};
use basalt_storage::StorageEngine;
use std::sync::Arc;

impl LoadContext for QueryEngine {
    fn catalog(&self) -> &Arc<dyn Catalog> {
        &self.services().catalog
    }

    fn storage(&self) -> &Arc<StorageEngine> {
        &self.services().storage
    }

    fn load_registry(&self) -> &Arc<LoadRegistry> {
        QueryEngine::load_registry(self)
    }

    fn authorize(&self, user: &str, host: &str, database: &str, table: &str) -> Result<()> {
        let catalog = self.services().catalog.as_ref();
        crate::access::login_access(catalog, user, host).require_table(
            basalt_catalog::Privilege::Load,
            database,
            table,
        )
    }

    fn expressions(&self, user: &str, host: &str) -> LoadExpressions {
        let session = self.new_session(0, user, host);
        let mut state = session.ctx.state();
        // A value that does not convert fails its row (filtered and counted), never NULL.
        if let Some(options) = state
            .config_mut()
            .options_mut()
            .extensions
            .get_mut::<basalt_functions::MySqlOptions>()
        {
            options.lenient_string_casts = false;
        }
        LoadExpressions {
            state,
            to_datafusion_sql: Arc::new(mysql_expression),
        }
    }
}

fn plan_err(e: impl std::fmt::Display) -> BasaltError {
    BasaltError::InvalidData(e.to_string())
}

/// Parses one expression with Basalt's MySQL rewrites applied, returned as SQL DataFusion reads.
fn mysql_expression(sql: &str) -> Result<String> {
    let text = format!("SELECT {sql}");
    let mut stmts = basalt_sql::parse_statements(&text)
        .map_err(|e| plan_err(format!("cannot parse expression '{sql}': {e}")))?;
    if stmts.len() != 1 {
        return Err(plan_err(format!("cannot parse expression '{sql}'")));
    }
    let stmt = stmts.remove(0);
    let basalt_sql::Statement::Standard(mut stmt) = stmt else {
        return Err(plan_err(format!("cannot parse expression '{sql}'")));
    };
    crate::mysql_compat::rewrite(&mut stmt, &Default::default());
    if let Statement::Query(q) = stmt.as_ref() {
        if let SetExpr::Select(s) = q.body.as_ref() {
            if let [SelectItem::UnnamedExpr(e)] = s.projection.as_slice() {
                if s.from.is_empty() {
                    // DataFusion's parser groups operators otherwise than MySQL.
                    return Ok(basalt_sql::parenthesized(e));
                }
            }
        }
    }
    Err(plan_err(format!("'{sql}' is not a single expression")))
}
