//! The privilege statements: GRANT/REVOKE of privileges to accounts and roles, GRANT/REVOKE
//! of roles, CREATE/DROP ROLE, SHOW GRANTS, SHOW ROLES and SET ROLE. Privilege names are
//! MySQL's or Doris's (`SELECT` or `SELECT_PRIV`, `INSERT`/`UPDATE`/`DELETE` or `LOAD_PRIV`);
//! SHOW GRANTS prints MySQL's form so tools that read it understand it.

use crate::access::Access;
use crate::catalog_provider::Services;
use crate::output::Output;
use crate::session::Session;
use crate::show::{Col, ResultBuilder};
use crate::statement::ddl::database_of;
use basalt_catalog::{Catalog, GrantObject, Grants, Privilege, PrivilegeSet};
use basalt_common::{BasaltError, Result};
use basalt_sql::{Grantee, PrivilegeObject, RoleSelection, Statement, UserName};

/// The privileges a GRANT list names (`WITH GRANT OPTION` adds GRANT).
pub(crate) fn privileges_named(names: &[String], with_grant_option: bool) -> Result<PrivilegeSet> {
    use Privilege as P;
    let mut set = PrivilegeSet::EMPTY;
    for name in names {
        let named: &[Privilege] = match name.as_str() {
            "ALL" | "ALL PRIVILEGES" => {
                set = set.union(PrivilegeSet::all_data());
                &[]
            }
            "SELECT" | "SELECT_PRIV" => &[P::Select],
            "INSERT" | "UPDATE" | "DELETE" | "LOAD" | "LOAD_PRIV" => &[P::Load],
            "ALTER" | "ALTER_PRIV" | "INDEX" => &[P::Alter],
            "CREATE" | "CREATE_PRIV" | "CREATE VIEW" => &[P::Create],
            "DROP" | "DROP_PRIV" => &[P::Drop],
            "SHOW VIEW" | "SHOW_VIEW_PRIV" => &[P::ShowView],
            "GRANT" | "GRANT OPTION" | "GRANT_PRIV" => &[P::Grant],
            "NODE_PRIV" => &[P::Node],
            "ADMIN_PRIV" | "SUPER" => &[P::Admin],
            // USAGE grants nothing (MySQL: "no privileges").
            "USAGE" | "USAGE_PRIV" => &[],
            other => {
                return Err(BasaltError::IllegalGrant(format!(
                    "unknown privilege {other}"
                )))
            }
        };
        for p in named {
            set.insert(*p);
        }
    }
    if with_grant_option {
        set.insert(Privilege::Grant);
    }
    Ok(set)
}

/// The object a GRANT names, resolved against the session's database.
/// Names are kept as the catalog keys them (`lower_case_table_names`: as written with 0, in
/// lower case otherwise), so a grant names what the catalog's lookups find.
fn grant_object(session: &Session, object: &PrivilegeObject) -> Result<GrantObject> {
    let key = |name: &str| session.name_case().key(name);
    Ok(match object {
        PrivilegeObject::Global => GrantObject::Global,
        PrivilegeObject::CurrentDatabase => {
            GrantObject::Database(key(&database_of(session, &None)?))
        }
        PrivilegeObject::Database(db) => GrantObject::Database(key(db)),
        PrivilegeObject::Table { database, table } => {
            GrantObject::Table(key(&database_of(session, database)?), key(table))
        }
    })
}

/// What GRANT/REVOKE of privileges needs: GRANT_PRIV at the object's level (or above) and
/// the privileges themselves, and ADMIN_PRIV to hand out ADMIN_PRIV or NODE_PRIV.
pub(crate) fn check_grant(
    access: &Access,
    session: &Session,
    privileges: &[String],
    object: &PrivilegeObject,
) -> Result<()> {
    let set = privileges_named(privileges, false)?;
    if set.contains(Privilege::Admin) || set.contains(Privilege::Node) {
        return access.require_global(Privilege::Admin);
    }
    // GRANT_PRIV at the object's level, and (as MySQL asks) every privilege handed out.
    let object = grant_object(session, object)?;
    for p in std::iter::once(Privilege::Grant).chain(set.iter()) {
        match &object {
            GrantObject::Global => access.require_global(p)?,
            GrantObject::Database(db) => access.require_database(p, db)?,
            GrantObject::Table(db, t) => access.require_table(p, db, t)?,
        }
    }
    Ok(())
}

/// Runs a privilege statement (its access check already passed).
pub(crate) fn execute(services: &Services, session: &Session, stmt: Statement) -> Result<Output> {
    let catalog = services.catalog.as_ref();
    match stmt {
        Statement::Grant {
            privileges,
            object,
            grantees,
            with_grant_option,
            revoke,
        } => {
            let set = privileges_named(&privileges, with_grant_option)?;
            let object = grant_object(session, &object)?;
            if !matches!(object, GrantObject::Global) {
                if let Some(p) = set.iter().find(|p| p.global_only()) {
                    return Err(BasaltError::IllegalGrant(format!(
                        "{} can only be granted ON *.*",
                        p.doris_name()
                    )));
                }
            }
            // Every grantee exists before anything changes.
            for g in &grantees {
                check_grantee_exists(catalog, g)?;
            }
            for g in &grantees {
                let change = |grants: &mut Grants| {
                    if revoke {
                        grants.revoke(&object, set)
                    } else {
                        grants.grant(&object, set)
                    }
                };
                match g {
                    Grantee::User(u) => {
                        catalog.update_user(&u.user, &u.host, &mut |m| change(&mut m.grants))?;
                    }
                    Grantee::Role(r) => {
                        catalog.update_role(r, &mut |m| change(&mut m.grants))?;
                    }
                }
            }
            Ok(Output::ok())
        }
        Statement::GrantRole {
            roles,
            users,
            revoke,
        } => {
            for r in &roles {
                if catalog.role(r).is_none() {
                    return Err(BasaltError::UnknownRole(r.clone()));
                }
            }
            for u in &users {
                check_grantee_exists(catalog, &Grantee::User(u.clone()))?;
            }
            for u in &users {
                catalog.update_user(&u.user, &u.host, &mut |m| {
                    for r in &roles {
                        if revoke {
                            m.roles.remove(r);
                        } else {
                            m.roles.insert(r.clone());
                        }
                    }
                })?;
            }
            Ok(Output::ok())
        }
        Statement::CreateRole {
            names,
            if_not_exists,
        } => {
            for n in names {
                catalog.create_role(&n, if_not_exists)?;
            }
            Ok(Output::ok())
        }
        Statement::DropRole { names, if_exists } => {
            for n in names {
                catalog.drop_role(&n, if_exists)?;
            }
            Ok(Output::ok())
        }
        Statement::ShowGrants { user, all } => show_grants(catalog, session, user, all),
        Statement::ShowRoles => {
            let mut b = ResultBuilder::new(&[Col::str("Name"), Col::str("Users")]);
            let users = catalog.users();
            for role in catalog.roles() {
                let holders: Vec<String> = users
                    .iter()
                    .filter(|u| u.roles.contains(&role.name))
                    .map(|u| format!("'{}'@'{}'", u.user, u.host))
                    .collect();
                b.row(vec![role.name.into(), holders.join(", ").into()]);
            }
            Ok(b.into_output())
        }
        Statement::SetRole { roles } => {
            let account = &session.info.account;
            let granted = catalog
                .find_user(&account.user, &account.host)
                .map(|u| u.roles)
                .unwrap_or_default();
            let not_granted = |r: &String| BasaltError::RoleNotGranted {
                role: r.clone(),
                user: format!("`{}`@`{}`", account.user, account.host),
            };
            let active = match roles {
                RoleSelection::Default => None,
                RoleSelection::None => Some(Default::default()),
                RoleSelection::All { except } => Some(
                    granted
                        .iter()
                        .filter(|r| !except.contains(r))
                        .cloned()
                        .collect(),
                ),
                RoleSelection::Only(names) => {
                    if let Some(missing) = names.iter().find(|r| !granted.contains(*r)) {
                        return Err(not_granted(missing));
                    }
                    Some(names.into_iter().collect())
                }
            };
            *account.active_roles.write() = active;
            Ok(Output::ok())
        }
        _ => Err(BasaltError::Internal(
            "statement routed to the wrong family".into(),
        )),
    }
}

fn check_grantee_exists(catalog: &dyn Catalog, grantee: &Grantee) -> Result<()> {
    match grantee {
        Grantee::User(u) => {
            let exists = catalog
                .users_named(&u.user)
                .iter()
                .any(|m| m.host == u.host);
            if exists {
                Ok(())
            } else {
                Err(BasaltError::UnknownGrantee(format!(
                    "'{}'@'{}'",
                    u.user, u.host
                )))
            }
        }
        Grantee::Role(r) => match catalog.role(r) {
            Some(_) => Ok(()),
            None => Err(BasaltError::UnknownRole(r.clone())),
        },
    }
}

/// `SHOW GRANTS [FOR u]` in MySQL's form (one `GRANT .. ON .. TO ..` per level, then the
/// roles); `SHOW ALL GRANTS` lists every account.
fn show_grants(
    catalog: &dyn Catalog,
    session: &Session,
    user: Option<UserName>,
    all: bool,
) -> Result<Output> {
    let me = &session.info.account;
    let accounts: Vec<(String, String)> = if all {
        catalog
            .users()
            .into_iter()
            .map(|u| (u.user, u.host))
            .collect()
    } else {
        match user {
            Some(u) => vec![(u.user, u.host)],
            None => vec![(me.user.clone(), me.host.clone())],
        }
    };
    let title = match accounts.as_slice() {
        [(u, h)] if !all => format!("Grants for {u}@{h}"),
        _ => "Grants".to_string(),
    };
    let mut b = ResultBuilder::new(&[Col::str(&title)]);
    for (user, host) in accounts {
        let to = format!("`{user}`@`{host}`");
        let (grants, roles) = match catalog.find_user(&user, &host) {
            Some(meta) if meta.host == host => (crate::access::own_grants(&meta), meta.roles),
            // SHOW GRANTS FOR a role shows the role's privileges.
            _ => match catalog.role(&user) {
                Some(role) => (role.grants, Default::default()),
                None => {
                    return Err(BasaltError::UnknownGrantee(format!("'{user}'@'{host}'")));
                }
            },
        };
        if grants.global.is_empty() {
            b.row(vec![format!("GRANT USAGE ON *.* TO {to}").into()]);
        }
        for (object, set) in grants.entries() {
            let option = if set.contains(Privilege::Grant) {
                " WITH GRANT OPTION"
            } else {
                ""
            };
            let names = mysql_names(set);
            let names = if names.is_empty() {
                "USAGE".into()
            } else {
                names
            };
            b.row(vec![
                format!("GRANT {names} ON {object} TO {to}{option}").into()
            ]);
        }
        if !roles.is_empty() {
            let list: Vec<String> = roles.iter().map(|r| format!("`{r}`@`%`")).collect();
            b.row(vec![format!("GRANT {} TO {to}", list.join(",")).into()]);
        }
    }
    Ok(b.into_output())
}

/// The privileges of a set as MySQL names them (GRANT OPTION is said with WITH GRANT OPTION).
fn mysql_names(set: PrivilegeSet) -> String {
    let data = PrivilegeSet::all_data();
    let all = set.union(data) == set;
    let mut names: Vec<&str> = Vec::new();
    if all {
        names.push("ALL PRIVILEGES");
    }
    for p in set.iter() {
        if all && data.contains(p) {
            continue;
        }
        names.push(match p {
            Privilege::Select => "SELECT",
            Privilege::Load => "INSERT, UPDATE, DELETE",
            Privilege::Alter => "ALTER",
            Privilege::Create => "CREATE",
            Privilege::Drop => "DROP",
            Privilege::ShowView => "SHOW VIEW",
            Privilege::Grant => continue,
            Privilege::Node => "NODE_PRIV",
            Privilege::Admin => "SUPER",
        });
    }
    names.join(", ")
}
