//! `SHOW PROC '/auth'`: every account with its roles and privileges at each level, in Doris's
//! columns and spelling (`Select_priv Load_priv`, objects named `internal.db.tbl`).

use crate::output::Output;
use crate::show::{Cell, Col, ResultBuilder};
use basalt_catalog::{Catalog, Grants, Privilege, PrivilegeSet, UserMeta};

/// Doris's spelling of a privilege: `SELECT_PRIV` is shown as `Select_priv`.
fn shown_name(p: Privilege) -> String {
    let upper = p.doris_name();
    let mut out = String::with_capacity(upper.len());
    for (i, c) in upper.chars().enumerate() {
        out.push(if i == 0 { c } else { c.to_ascii_lowercase() });
    }
    out
}

fn shown_set(set: PrivilegeSet) -> String {
    set.iter().map(shown_name).collect::<Vec<_>>().join(" ")
}

/// `object: privileges` entries joined with "; ", or NULL when there are none.
fn level(entries: Vec<(String, PrivilegeSet)>) -> Option<String> {
    let parts: Vec<String> = entries
        .into_iter()
        .filter(|(_, set)| !set.is_empty())
        .map(|(object, set)| format!("{object}: {}", shown_set(set)))
        .collect();
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// What an account holds: its own grants and those of its roles.
fn effective_grants(catalog: &dyn Catalog, user: &UserMeta) -> Grants {
    let mut grants = crate::access::own_grants(user);
    for role in &user.roles {
        if let Some(r) = catalog.role(role) {
            grants.merge(&r.grants);
        }
    }
    grants
}

/// The workload groups an account may use: `normal` for everyone, and those granted.
fn workload_groups(user: &UserMeta) -> String {
    let mut groups: Vec<&str> = vec!["normal"];
    groups.extend(
        user.workload_groups
            .iter()
            .map(String::as_str)
            .filter(|g| *g != "normal"),
    );
    groups
        .into_iter()
        .map(|g| format!("{g}: Usage_priv"))
        .collect::<Vec<_>>()
        .join("; ")
}

/// `/auth`: one row per account, sorted by user and host. Basalt keeps no account comments
/// (empty), no TLS subject requirements, column, resource, cloud, storage vault or compute
/// group privileges, and has only the `internal` catalog with no catalog-level grants: those
/// columns are NULL.
pub(super) fn auth(catalog: &dyn Catalog) -> Output {
    let mut b = ResultBuilder::new(&[
        Col::str("UserIdentity"),
        Col::str("Comment"),
        Col::str("Password"),
        Col::str("RequireSan"),
        Col::str("Roles"),
        Col::str("GlobalPrivs"),
        Col::str("CatalogPrivs"),
        Col::str("DatabasePrivs"),
        Col::str("TablePrivs"),
        Col::str("ColPrivs"),
        Col::str("ResourcePrivs"),
        Col::str("CloudClusterPrivs"),
        Col::str("CloudStagePrivs"),
        Col::str("StorageVaultPrivs"),
        Col::str("WorkloadGroupPrivs"),
        Col::str("ComputeGroupPrivs"),
    ]);
    let mut users = catalog.users();
    users.sort_by(|a, b| (&a.user, &a.host).cmp(&(&b.user, &b.host)));
    for user in users {
        let grants = effective_grants(catalog, &user);
        let global = (!grants.global.is_empty()).then(|| shown_set(grants.global));
        let databases = level(
            grants
                .databases
                .iter()
                .map(|(db, set)| (format!("internal.{db}"), *set))
                .collect(),
        );
        let tables = level(
            grants
                .tables
                .iter()
                .flat_map(|(db, tables)| {
                    tables
                        .iter()
                        .map(move |(t, set)| (format!("internal.{db}.{t}"), *set))
                })
                .collect(),
        );
        let roles = user.roles.iter().cloned().collect::<Vec<_>>().join(",");
        let mut row: Vec<Cell> = vec![
            format!("'{}'@'{}'", user.user, user.host).into(),
            "".into(),
            if user.password_hash.is_empty() {
                "No"
            } else {
                "Yes"
            }
            .into(),
            None::<String>.into(),
            roles.into(),
            global.into(),
            None::<String>.into(),
            databases.into(),
            tables.into(),
        ];
        row.extend((0..5).map(|_| Cell::from(None::<String>)));
        row.push(workload_groups(&user).into());
        row.push(None::<String>.into());
        b.row(row);
    }
    b.into_output()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn privileges_are_spelled_as_doris_shows_them() {
        assert_eq!(shown_name(Privilege::Select), "Select_priv");
        assert_eq!(shown_name(Privilege::ShowView), "Show_view_priv");
        let set: PrivilegeSet = [Privilege::Select, Privilege::Load].into_iter().collect();
        assert_eq!(
            level(vec![
                ("internal.d".into(), set),
                ("internal.e".into(), PrivilegeSet::default())
            ]),
            Some("internal.d: Select_priv Load_priv".to_string())
        );
        assert_eq!(level(vec![]), None);
    }
}
