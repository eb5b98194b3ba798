//! information_schema's USER_PRIVILEGES, SCHEMA_PRIVILEGES, TABLE_PRIVILEGES and
//! COLUMN_PRIVILEGES, read from the accounts' grants (one row per MySQL privilege name; Doris's
//! LOAD_PRIV is INSERT, UPDATE and DELETE). An account without ADMIN_PRIV sees its own rows.

use super::{InformationSchema, TableSpec, T};
use crate::show::ResultBuilder;
use basalt_catalog::{GrantObject, Privilege, PrivilegeSet};

pub(super) const SPECS: &[TableSpec] = &[
    TableSpec {
        name: "user_privileges",
        columns: &[
            ("GRANTEE", T),
            ("TABLE_CATALOG", T),
            ("PRIVILEGE_TYPE", T),
            ("IS_GRANTABLE", T),
        ],
    },
    TableSpec {
        name: "schema_privileges",
        columns: &[
            ("GRANTEE", T),
            ("TABLE_CATALOG", T),
            ("TABLE_SCHEMA", T),
            ("PRIVILEGE_TYPE", T),
            ("IS_GRANTABLE", T),
        ],
    },
    TableSpec {
        name: "table_privileges",
        columns: &[
            ("GRANTEE", T),
            ("TABLE_CATALOG", T),
            ("TABLE_SCHEMA", T),
            ("TABLE_NAME", T),
            ("PRIVILEGE_TYPE", T),
            ("IS_GRANTABLE", T),
        ],
    },
    TableSpec {
        name: "column_privileges",
        columns: &[
            ("GRANTEE", T),
            ("TABLE_CATALOG", T),
            ("TABLE_SCHEMA", T),
            ("TABLE_NAME", T),
            ("COLUMN_NAME", T),
            ("PRIVILEGE_TYPE", T),
            ("IS_GRANTABLE", T),
        ],
    },
];

/// MySQL's names for the privileges of a set.
pub(crate) fn privilege_names(set: PrivilegeSet) -> Vec<&'static str> {
    let mut names = Vec::new();
    for p in set.iter() {
        names.extend_from_slice(match p {
            Privilege::Select => &["SELECT"][..],
            Privilege::Load => &["INSERT", "UPDATE", "DELETE"],
            Privilege::Alter => &["ALTER", "INDEX"],
            Privilege::Create => &["CREATE", "CREATE VIEW"],
            Privilege::Drop => &["DROP"],
            Privilege::ShowView => &["SHOW VIEW"],
            Privilege::Grant => &[],
            Privilege::Node => &["NODE"],
            Privilege::Admin => &["SUPER"],
        });
    }
    names
}

pub(super) fn build(is: &InformationSchema, name: &str) -> Option<ResultBuilder> {
    let spec = SPECS.iter().find(|s| s.name == name)?;
    let mut b = spec.builder();
    // Column-level grants do not exist: COLUMN_PRIVILEGES stays empty.
    if name == "column_privileges" {
        return Some(b);
    }
    let viewer = is.access().viewer();
    for user in is.services.catalog.users() {
        if viewer.as_deref().is_some_and(|v| v != user.user) {
            continue;
        }
        let grantee = format!("'{}'@'{}'", user.user, user.host);
        for (object, set) in crate::access::own_grants(&user).entries() {
            let grantable = if set.contains(Privilege::Grant) {
                "YES"
            } else {
                "NO"
            };
            for privilege in privilege_names(set) {
                match (&object, name) {
                    (GrantObject::Global, "user_privileges") => b.row(vec![
                        grantee.clone().into(),
                        "def".into(),
                        privilege.into(),
                        grantable.into(),
                    ]),
                    (GrantObject::Database(db), "schema_privileges") => b.row(vec![
                        grantee.clone().into(),
                        "def".into(),
                        db.clone().into(),
                        privilege.into(),
                        grantable.into(),
                    ]),
                    (GrantObject::Table(db, t), "table_privileges") => b.row(vec![
                        grantee.clone().into(),
                        "def".into(),
                        db.clone().into(),
                        t.clone().into(),
                        privilege.into(),
                        grantable.into(),
                    ]),
                    _ => {}
                }
            }
        }
    }
    Some(b)
}
