//! DDL and privilege helpers shared by statement execution: resolving the database a statement
//! names, dropping databases and tables (catalog first, then files), and admin checks.

use crate::engine::split_name;
use crate::provider::Services;
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
        Err(BasaltError::AccessDenied {
            user: session.user().to_string(),
            host: session.host().to_string(),
            using_password: true,
        })
        .map_err(|e| BasaltError::Execution(format!("{what} needs the root account: {e}")))
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

/// An unknown table while no database is selected is really "No database selected" (1046);
/// an unknown table in a database that does not exist is 1049.
pub fn no_database_hint(session: &Session, e: BasaltError) -> BasaltError {
    match &e {
        BasaltError::UnknownTable(name) => {
            if name.starts_with(crate::session::NO_DATABASE)
                || (session.database().is_none() && !name.contains('.'))
            {
                return BasaltError::NoDatabaseSelected;
            }
            if let Some((db, _)) = name.split_once('.') {
                if db == crate::session::NO_DATABASE {
                    return BasaltError::NoDatabaseSelected;
                }
            }
            e
        }
        BasaltError::Execution(msg)
            if msg.contains("failed to resolve schema")
                || msg.contains("schema") && msg.contains("not found") =>
        {
            let db = msg.split('\'').nth(1).unwrap_or("").to_string();
            BasaltError::UnknownDatabase(db)
        }
        _ => e,
    }
}
