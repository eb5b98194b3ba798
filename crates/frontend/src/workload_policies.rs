//! Workload policy statements (CREATE / ALTER / DROP WORKLOAD POLICY: checked by the workload
//! crate, stored by the catalog, then made live) and `information_schema.workload_policy`; who
//! may use which workload group (GRANT / REVOKE USAGE_PRIV ON WORKLOAD GROUP, checked by `SET
//! workload_group`) and the user property `default_workload_group` (SET PROPERTY), the group a
//! user's sessions start in.

use crate::output::Output;
use crate::session::Session;
use crate::show::{Col, ResultBuilder};
use crate::statement::ddl::require_admin;
use crate::workload_groups::property_map;
use basalt_catalog::{Catalog, UserMeta, WorkloadPolicyMeta};
use basalt_common::{BasaltError, Result};
use basalt_sql::{PolicyAction, PolicyCondition, UserName};
use basalt_workload::{Policy, WorkloadManager, NORMAL_GROUP};

/// Makes the stored policies live at startup; a policy that no longer checks (its group was
/// dropped) is kept stored but not enforced.
pub(crate) fn load(manager: &WorkloadManager, catalog: &dyn Catalog) {
    for meta in catalog.workload_policies() {
        match policy_from_meta(manager, &meta) {
            Ok(p) => manager.put_policy(p),
            Err(e) => tracing::warn!("workload policy '{}' not enforced: {e}", meta.name),
        }
    }
}

fn policy_from_meta(manager: &WorkloadManager, meta: &WorkloadPolicyMeta) -> Result<Policy> {
    Policy::new(
        meta.id,
        &meta.name,
        &meta.conditions,
        &meta.actions,
        &meta.properties,
        &|g| manager.exists(g),
    )
}

pub(crate) struct CreatePolicy<'a> {
    pub name: &'a str,
    pub if_not_exists: bool,
    pub conditions: &'a [PolicyCondition],
    pub actions: &'a [PolicyAction],
    pub properties: &'a [(String, String)],
}

pub(crate) fn create(
    manager: &WorkloadManager,
    catalog: &dyn Catalog,
    session: &Session,
    stmt: CreatePolicy<'_>,
) -> Result<Output> {
    require_admin(session, "CREATE WORKLOAD POLICY")?;
    let _ddl = manager.ddl_lock();
    if manager.policy(stmt.name).is_some() {
        if stmt.if_not_exists {
            return Ok(Output::ok());
        }
        return Err(BasaltError::InvalidWorkloadGroup(format!(
            "workload policy '{}' already exists",
            stmt.name
        )));
    }
    let mut meta = WorkloadPolicyMeta {
        id: catalog.allocate_id(),
        name: stmt.name.to_string(),
        conditions: stmt
            .conditions
            .iter()
            .map(|c| (c.metric.clone(), c.op.clone(), c.value.clone()))
            .collect(),
        actions: stmt
            .actions
            .iter()
            .map(|a| (a.action.clone(), a.argument.clone()))
            .collect(),
        properties: property_map(stmt.properties),
    };
    // Checked before anything is stored.
    let policy = policy_from_meta(manager, &meta)?;
    meta.properties = policy.properties();
    catalog.put_workload_policy(meta)?;
    manager.put_policy(policy);
    Ok(Output::ok())
}

pub(crate) fn alter(
    manager: &WorkloadManager,
    catalog: &dyn Catalog,
    session: &Session,
    name: &str,
    properties: &[(String, String)],
) -> Result<Output> {
    require_admin(session, "ALTER WORKLOAD POLICY")?;
    let _ddl = manager.ddl_lock();
    let (Some(current), Some(mut meta)) = (
        manager.policy(name),
        catalog
            .workload_policies()
            .into_iter()
            .find(|m| m.name == name),
    ) else {
        return Err(unknown_policy(name));
    };
    let policy = current.with_properties(&property_map(properties), &|g| manager.exists(g))?;
    meta.properties = policy.properties();
    catalog.put_workload_policy(meta)?;
    manager.put_policy(policy);
    Ok(Output::ok())
}

pub(crate) fn drop(
    manager: &WorkloadManager,
    catalog: &dyn Catalog,
    session: &Session,
    name: &str,
    if_exists: bool,
) -> Result<Output> {
    require_admin(session, "DROP WORKLOAD POLICY")?;
    let _ddl = manager.ddl_lock();
    if !catalog.workload_policies().iter().any(|m| m.name == name) {
        return if if_exists {
            Ok(Output::ok())
        } else {
            Err(unknown_policy(name))
        };
    }
    catalog.drop_workload_policy(name)?;
    manager.remove_policy(name);
    Ok(Output::ok())
}

fn unknown_policy(name: &str) -> BasaltError {
    BasaltError::InvalidWorkloadGroup(format!("workload policy '{name}' does not exist"))
}

/// `information_schema.workload_policy`.
pub(crate) fn rows(manager: &WorkloadManager) -> ResultBuilder {
    let mut b = ResultBuilder::new(&[
        Col::int("ID"),
        Col::str("NAME"),
        Col::str("CONDITION"),
        Col::str("ACTION"),
        Col::int("PRIORITY"),
        Col::str("ENABLED"),
        Col::int("VERSION"),
        Col::str("WORKLOAD_GROUP"),
    ]);
    for p in manager.policies() {
        b.row(vec![
            (p.id as i64).into(),
            p.name.clone().into(),
            p.condition_text().into(),
            p.action_text().into(),
            p.priority.into(),
            p.enabled.to_string().into(),
            0i64.into(),
            p.groups.join(",").into(),
        ]);
    }
    b
}

/// GRANT / REVOKE USAGE_PRIV ON WORKLOAD GROUP 'g' TO / FROM 'u'@'h'.
pub(crate) fn grant(
    manager: &WorkloadManager,
    catalog: &dyn Catalog,
    session: &Session,
    group: &str,
    user: &UserName,
    revoke: bool,
) -> Result<Output> {
    let what = if revoke { "REVOKE" } else { "GRANT" };
    require_admin(session, what)?;
    if group != "%" && !manager.exists(group) {
        return Err(BasaltError::UnknownWorkloadGroup(group.to_string()));
    }
    let found = catalog.update_user(&user.user, &user.host, &mut |u| {
        if revoke {
            u.workload_groups.remove(group);
        } else {
            u.workload_groups.insert(group.to_string());
        }
    })?;
    if !found {
        return Err(BasaltError::UserOperation {
            operation: what.to_string(),
            user: format!("'{}'@'{}'", user.user, user.host),
        });
    }
    Ok(Output::ok())
}

/// True if `user` may run statements in `group`: root may use every group, everyone may use
/// `normal`, others need USAGE_PRIV on the group (or on `%`) for one of their accounts.
pub(crate) fn may_use(catalog: &dyn Catalog, user: &str, group: &str) -> bool {
    user == "root"
        || group == NORMAL_GROUP
        || catalog.users_named(user).iter().any(|u: &UserMeta| {
            u.workload_groups.contains(group) || u.workload_groups.contains("%")
        })
}

/// The error for a user without USAGE_PRIV on `group`.
pub(crate) fn usage_denied(user: &str, group: &str) -> BasaltError {
    BasaltError::WorkloadGroupDenied {
        user: user.to_string(),
        group: group.to_string(),
    }
}

/// SET PROPERTY [FOR 'u'] 'default_workload_group' = 'g'.
pub(crate) fn set_property(
    manager: &WorkloadManager,
    catalog: &dyn Catalog,
    session: &Session,
    user: Option<&str>,
    properties: &[(String, String)],
) -> Result<Output> {
    let me = session.user();
    let target = user.unwrap_or(me).to_string();
    if target != me {
        require_admin(session, "SET PROPERTY FOR another user")?;
    }
    if catalog.users_named(&target).is_empty() {
        return Err(BasaltError::UserOperation {
            operation: "SET PROPERTY".into(),
            user: format!("'{target}'"),
        });
    }
    for (key, value) in properties {
        if key != "default_workload_group" {
            return Err(BasaltError::NotSupported(format!(
                "user property '{key}' (Basalt keeps only default_workload_group)"
            )));
        }
        let group = value.trim().to_ascii_lowercase();
        if !manager.exists(&group) {
            return Err(BasaltError::UnknownWorkloadGroup(group));
        }
        if !may_use(catalog, &target, &group) {
            return Err(usage_denied(&target, &group));
        }
    }
    for account in catalog.users_named(&target) {
        catalog.update_user(&account.user, &account.host, &mut |u| {
            for (key, value) in properties {
                u.properties
                    .insert(key.clone(), value.trim().to_ascii_lowercase());
            }
        })?;
    }
    Ok(Output::ok())
}

/// The group a new session of `user` starts in: its `default_workload_group` if that still
/// exists (and the user may use it), else `normal`.
pub(crate) fn default_group(
    manager: &WorkloadManager,
    catalog: &dyn Catalog,
    user: &str,
) -> String {
    catalog
        .users_named(user)
        .iter()
        .find_map(|u| u.properties.get("default_workload_group").cloned())
        .filter(|g| manager.exists(g) && may_use(catalog, user, g))
        .unwrap_or_else(|| NORMAL_GROUP.to_string())
}
