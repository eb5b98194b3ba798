//! MySQL's `mysql` and `performance_schema` databases, as far as tools read them: the grant
//! tables (`mysql.user`, `db`, `tables_priv`, `columns_priv`, `procs_priv`, which JDBC's
//! getTablePrivileges and admin tools query) from the accounts' grants, and
//! `performance_schema`'s variables and status. Both are read-only and computed when queried;
//! only an administrator sees rows of the grant tables (MySQL grants them to nobody else by
//! default). They are not listed by SHOW DATABASES, so that dumps of "all databases" do not try
//! to restore them; a user database of the same name takes precedence.

use crate::catalog_provider::Services;
use crate::information_schema::{Kind, TableSpec};
use crate::session::SessionInfo;
use crate::show::ResultBuilder;
use async_trait::async_trait;
use basalt_catalog::{GrantObject, Grants, Privilege, PrivilegeSet, UserMeta};
use datafusion::catalog::{SchemaProvider, TableProvider};
use datafusion::common::Result;
use std::sync::Arc;

pub const MYSQL: &str = "mysql";
pub const PERFORMANCE_SCHEMA: &str = "performance_schema";

const T: Kind = Kind::Text;

/// The per-privilege columns of `mysql.user` and `mysql.db`, and the privilege each reads.
const PRIVILEGE_COLUMNS: &[(&str, Privilege)] = &[
    ("Select_priv", Privilege::Select),
    ("Insert_priv", Privilege::Load),
    ("Update_priv", Privilege::Load),
    ("Delete_priv", Privilege::Load),
    ("Create_priv", Privilege::Create),
    ("Drop_priv", Privilege::Drop),
    ("Grant_priv", Privilege::Grant),
    ("Alter_priv", Privilege::Alter),
    ("Create_view_priv", Privilege::Create),
    ("Show_view_priv", Privilege::ShowView),
];

const VARIABLES: [&str; 2] = ["VARIABLE_NAME", "VARIABLE_VALUE"];

const MYSQL_TABLES: &[TableSpec] = &[
    TableSpec {
        name: "tables_priv",
        columns: &[
            ("Host", T),
            ("Db", T),
            ("User", T),
            ("Table_name", T),
            ("Grantor", T),
            ("Timestamp", T),
            ("Table_priv", T),
            ("Column_priv", T),
        ],
    },
    TableSpec {
        name: "columns_priv",
        columns: &[
            ("Host", T),
            ("Db", T),
            ("User", T),
            ("Table_name", T),
            ("Column_name", T),
            ("Timestamp", T),
            ("Column_priv", T),
        ],
    },
    TableSpec {
        name: "procs_priv",
        columns: &[
            ("Host", T),
            ("Db", T),
            ("User", T),
            ("Routine_name", T),
            ("Routine_type", T),
            ("Grantor", T),
            ("Proc_priv", T),
            ("Timestamp", T),
        ],
    },
];

const PERFORMANCE_TABLES: &[&str] = &[
    "global_status",
    "global_variables",
    "session_status",
    "session_variables",
];

/// Which of the two databases `name` is, if it is one.
pub fn system_database(name: &str) -> Option<&'static str> {
    [MYSQL, PERFORMANCE_SCHEMA]
        .into_iter()
        .find(|d| d.eq_ignore_ascii_case(name))
}

fn tables_of(database: &str) -> Vec<&'static str> {
    if database == MYSQL {
        let mut names = vec!["db", "user"];
        names.extend(MYSQL_TABLES.iter().map(|t| t.name));
        names.sort_unstable();
        names
    } else {
        PERFORMANCE_TABLES.to_vec()
    }
}

/// The tables of a system database (SHOW TABLES).
pub fn table_names(database: &str) -> Vec<String> {
    tables_of(database)
        .into_iter()
        .map(str::to_string)
        .collect()
}

pub struct SystemDatabase {
    name: &'static str,
    services: Services,
    session: Arc<SessionInfo>,
}

impl std::fmt::Debug for SystemDatabase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SystemDatabase({})", self.name)
    }
}

impl SystemDatabase {
    pub fn new(name: &'static str, services: Services, session: Arc<SessionInfo>) -> Self {
        SystemDatabase {
            name,
            services,
            session,
        }
    }

    fn names(&self) -> Vec<&'static str> {
        tables_of(self.name)
    }

    /// Accounts whose grants an administrator reads (others read none).
    fn accounts(&self) -> Vec<(UserMeta, Grants)> {
        let access = crate::access::access(self.services.catalog.as_ref(), &self.session);
        if access.viewer().is_some() {
            return Vec::new();
        }
        self.services
            .catalog
            .users()
            .into_iter()
            .map(|u| {
                let grants = crate::access::own_grants(&u);
                (u, grants)
            })
            .collect()
    }

    fn build(&self, table: &str) -> Option<ResultBuilder> {
        if self.name == PERFORMANCE_SCHEMA {
            if !PERFORMANCE_TABLES.contains(&table) {
                return None;
            }
            let mut b = builder(&VARIABLES);
            if table.ends_with("variables") {
                let vars = self.session.vars.read();
                for (n, v) in vars.all(table == "global_variables") {
                    b.row(vec![n.into(), v.as_text().into()]);
                }
            } else {
                for (n, v) in crate::information_schema::status_rows(&self.services.processes) {
                    b.row(vec![n.into(), v.into()]);
                }
            }
            return Some(b);
        }
        match table {
            "user" => Some(self.user_table()),
            "db" => Some(self.db_table()),
            _ => {
                let spec = MYSQL_TABLES.iter().find(|t| t.name == table)?;
                let mut b = spec.builder();
                if table == "tables_priv" {
                    for (u, grants) in self.accounts() {
                        for (object, set) in grants.entries() {
                            if let GrantObject::Table(db, t) = object {
                                b.row(vec![
                                    u.host.clone().into(),
                                    db.into(),
                                    u.user.clone().into(),
                                    t.into(),
                                    "".into(),
                                    None::<String>.into(),
                                    table_privileges(set).into(),
                                    "".into(),
                                ]);
                            }
                        }
                    }
                }
                Some(b)
            }
        }
    }

    fn user_table(&self) -> ResultBuilder {
        let mut cols = vec!["Host", "User"];
        cols.extend(PRIVILEGE_COLUMNS.iter().map(|(c, _)| *c));
        cols.extend([
            "Super_priv",
            "plugin",
            "authentication_string",
            "account_locked",
        ]);
        let mut b = builder(&cols);
        for (u, grants) in self.accounts() {
            let mut row = vec![u.host.clone().into(), u.user.clone().into()];
            row.extend(flags(grants.global));
            row.push(yes_no(grants.global.contains(Privilege::Admin)).into());
            row.push("mysql_native_password".into());
            row.push(native_password_text(&u.password_hash).into());
            row.push("N".into());
            b.row(row);
        }
        b
    }

    fn db_table(&self) -> ResultBuilder {
        let mut cols = vec!["Host", "Db", "User"];
        cols.extend(PRIVILEGE_COLUMNS.iter().map(|(c, _)| *c));
        let mut b = builder(&cols);
        for (u, grants) in self.accounts() {
            for (object, set) in grants.entries() {
                if let GrantObject::Database(db) = object {
                    let mut row = vec![u.host.clone().into(), db.into(), u.user.clone().into()];
                    row.extend(flags(set));
                    b.row(row);
                }
            }
        }
        b
    }
}

/// A result of text columns named `columns`.
fn builder(columns: &[&str]) -> ResultBuilder {
    let cols: Vec<crate::show::Col> = columns.iter().map(|c| crate::show::Col::str(c)).collect();
    ResultBuilder::new(&cols)
}

fn yes_no(held: bool) -> &'static str {
    if held {
        "Y"
    } else {
        "N"
    }
}

fn flags(set: PrivilegeSet) -> Vec<crate::show::Cell> {
    PRIVILEGE_COLUMNS
        .iter()
        .map(|(_, p)| yes_no(set.contains(*p)).into())
        .collect()
}

/// `mysql.tables_priv.Table_priv`: MySQL's comma-separated privilege names.
fn table_privileges(set: PrivilegeSet) -> String {
    crate::information_schema::privilege_names(set)
        .into_iter()
        .map(|name| {
            let mut chars = name.chars();
            match chars.next() {
                Some(first) => first.to_string() + &chars.as_str().to_lowercase(),
                None => String::new(),
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// MySQL's text form of a mysql_native_password hash: `*` and the upper-case hex of
/// SHA1(SHA1(password)); empty for an account without a password.
fn native_password_text(hash: &[u8]) -> String {
    if hash.is_empty() {
        return String::new();
    }
    let hex: String = hash.iter().map(|b| format!("{b:02X}")).collect();
    format!("*{hex}")
}

#[async_trait]
impl SchemaProvider for SystemDatabase {
    fn table_names(&self) -> Vec<String> {
        self.names().into_iter().map(str::to_string).collect()
    }

    async fn table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        self.build(&name.to_lowercase())
            .map(crate::information_schema::in_memory)
            .transpose()
    }

    fn table_exist(&self, name: &str) -> bool {
        self.names().contains(&name.to_lowercase().as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grant_texts() {
        let set: PrivilegeSet = [Privilege::Select, Privilege::Load].into_iter().collect();
        assert_eq!(table_privileges(set), "Select,Insert,Update,Delete");
        assert_eq!(native_password_text(&[]), "");
        assert_eq!(native_password_text(&[0xab, 0x01]), "*AB01");
        assert_eq!(system_database("MySQL"), Some(MYSQL));
        assert_eq!(system_database("sys"), None);
    }
}
