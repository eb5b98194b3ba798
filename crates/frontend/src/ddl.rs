//! DDL and privilege helpers shared by statement execution: resolving the database a statement
//! names, dropping databases and tables (catalog first, then files), and admin checks.

use crate::catalog_provider::Services;
use crate::engine::split_name;
use crate::session::Session;
use basalt_common::{BasaltError, Result};
use basalt_sql::ast::{ObjectName, ObjectType};

/// The database a statement names, or the session's current one.
pub fn database_of(session: &Session, named: &Option<String>) -> Result<String> {
    match named {
        Some(d) => Ok(d.to_lowercase()),
        None => session.database().ok_or(BasaltError::NoDatabaseSelected),
    }
}

/// Only `root` may manage users and global settings.
pub fn require_admin(session: &Session, what: &str) -> Result<()> {
    if session.user() == "root" {
        Ok(())
    } else {
        Err(BasaltError::PrivilegeRequired(format!(
            "{what} needs the root account"
        )))
    }
}

pub fn drop_object(
    services: &Services,
    session: &Session,
    kind: ObjectType,
    name: &ObjectName,
    if_exists: bool,
) -> Result<()> {
    let (db, n) = split_name(name);
    match kind {
        ObjectType::Table => {
            let db = database_of(session, &db)?;
            if let Some(t) = services.catalog.drop_table(&db, &n, if_exists)? {
                services.storage.remove_table_files(&t);
            }
        }
        ObjectType::Database | ObjectType::Schema => {
            if let Some(tables) = services.catalog.drop_database(&n, if_exists)? {
                for t in tables {
                    services.storage.remove_table_files(&t);
                }
                if session.database().as_deref() == Some(n.as_str()) {
                    session.set_database(None);
                }
            }
        }
        other => return Err(BasaltError::NotSupported(format!("DROP {other}"))),
    }
    Ok(())
}

/// Refines DataFusion's "table not found": with no database selected it is 1046, in a database
/// that does not exist it is 1049.
pub fn no_database_hint(services: &Services, e: BasaltError) -> BasaltError {
    let BasaltError::UnknownTable(name) = &e else {
        return e;
    };
    match name.split_once('.') {
        Some((db, _)) if db == crate::session::NO_DATABASE => BasaltError::NoDatabaseSelected,
        Some((db, _))
            if db != crate::catalog_provider::INFORMATION_SCHEMA
                && !services.catalog.database_exists(db) =>
        {
            BasaltError::UnknownDatabase(db.to_string())
        }
        _ => e,
    }
}
