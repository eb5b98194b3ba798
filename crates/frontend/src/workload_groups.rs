//! Workload group statements: CREATE / ALTER / DROP WORKLOAD GROUP (checked by the workload
//! manager, stored by the catalog, then made live), SHOW WORKLOAD GROUPS, and the group a
//! session's statements are admitted into (`SET workload_group`).

use crate::output::Output;
use crate::session::Session;
use crate::show::{self, Col, ResultBuilder};
use crate::statement::ddl::require_admin;
use crate::variables::VarValue;
use basalt_catalog::{Catalog, WorkloadGroupMeta};
use basalt_common::{BasaltError, Result};
use basalt_workload::{WorkloadGroup, WorkloadManager, NORMAL_GROUP, PROPERTY_NAMES};
use std::collections::BTreeMap;
use std::sync::Arc;

/// PROPERTIES as a map with trimmed, lower-case names.
pub(crate) fn property_map(properties: &[(String, String)]) -> BTreeMap<String, String> {
    properties
        .iter()
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.clone()))
        .collect()
}

pub(crate) fn create(
    manager: &WorkloadManager,
    catalog: &dyn Catalog,
    session: &Session,
    name: &str,
    if_not_exists: bool,
    properties: &[(String, String)],
) -> Result<Output> {
    require_admin(session, "CREATE WORKLOAD GROUP")?;
    let _ddl = manager.ddl_lock();
    if manager.exists(name) {
        if if_not_exists {
            return Ok(Output::ok());
        }
        return Err(BasaltError::InvalidWorkloadGroup(format!(
            "workload group {name} already exists"
        )));
    }
    let settings = manager.check_create(name, &property_map(properties))?;
    let id = catalog.allocate_id();
    catalog.put_workload_group(WorkloadGroupMeta {
        id,
        name: name.to_string(),
        properties: settings.to_properties(),
    })?;
    manager.apply(id, name, settings)?;
    Ok(Output::ok())
}

pub(crate) fn alter(
    manager: &WorkloadManager,
    catalog: &dyn Catalog,
    session: &Session,
    name: &str,
    properties: &[(String, String)],
) -> Result<Output> {
    require_admin(session, "ALTER WORKLOAD GROUP")?;
    let _ddl = manager.ddl_lock();
    let group = manager.get(name)?;
    let settings = manager.check_alter(name, &property_map(properties))?;
    catalog.put_workload_group(WorkloadGroupMeta {
        id: group.id,
        name: group.name.clone(),
        properties: settings.to_properties(),
    })?;
    manager.apply(group.id, &group.name, settings)?;
    Ok(Output::ok())
}

pub(crate) fn drop(
    manager: &WorkloadManager,
    catalog: &dyn Catalog,
    session: &Session,
    name: &str,
    if_exists: bool,
) -> Result<Output> {
    require_admin(session, "DROP WORKLOAD GROUP")?;
    let _ddl = manager.ddl_lock();
    if !manager.exists(name) && if_exists {
        return Ok(Output::ok());
    }
    let group = manager.check_drop(name)?;
    catalog.drop_workload_group(&group.name)?;
    manager.remove(&group.name);
    Ok(Output::ok())
}

/// `SHOW WORKLOAD GROUPS`: one row per group with every property and its live query counts.
pub(crate) fn show(manager: &WorkloadManager, like: Option<&str>) -> Output {
    rows(manager, like).into_output()
}

/// The rows of SHOW WORKLOAD GROUPS and information_schema.workload_groups.
pub(crate) fn rows(manager: &WorkloadManager, like: Option<&str>) -> ResultBuilder {
    let mut cols = vec![Col::int("Id"), Col::str("Name")];
    cols.extend(PROPERTY_NAMES.iter().map(|n| Col::str(n)));
    cols.push(Col::int("running_query_num"));
    cols.push(Col::int("waiting_query_num"));
    let mut b = ResultBuilder::new(&cols);
    for g in manager.groups() {
        if like.is_some_and(|p| !show::like(p, &g.name)) {
            continue;
        }
        let settings = g.settings();
        let mut row: Vec<show::Cell> = vec![(g.id as i64).into(), g.name.clone().into()];
        row.extend(PROPERTY_NAMES.iter().map(|n| settings.display(n).into()));
        row.push((g.running() as i64).into());
        row.push((g.waiting() as i64).into());
        b.row(row);
    }
    b
}

/// The group this session's statements run in: its `workload_group` variable, or `normal` if
/// the group it named has been dropped since.
/// `information_schema.workload_group_resource_usage`: each group's live usage on each node, as
/// its usage sampler last measured it (rates over its last interval). The all-in-one server is
/// node 1; a cluster's frontend (which runs the final steps of its queries) is node 0 and each
/// backend reports under its id with every heartbeat, so summing a group's rows gives its use
/// of the whole cluster.
pub(crate) fn resource_usage(services: &crate::catalog_provider::Services) -> ResultBuilder {
    let mut b = ResultBuilder::new(&[
        Col::int("BE_ID"),
        Col::int("WORKLOAD_GROUP_ID"),
        Col::str("WORKLOAD_GROUP_NAME"),
        Col::int("MEMORY_USAGE_BYTES"),
        Col::float("CPU_USAGE_PERCENT"),
        Col::int("LOCAL_SCAN_BYTES_PER_SECOND"),
        Col::int("REMOTE_SCAN_BYTES_PER_SECOND"),
        Col::float("CPU_LIMIT_PERCENT"),
        Col::int("CPU_TIME_MS"),
        Col::int("LOCAL_SCAN_BYTES"),
    ]);
    let this_node: i64 = if services.cluster.is_some() { 0 } else { 1 };
    let round = |p: f64| (p * 100.0).round() / 100.0;
    for g in services.workload.groups() {
        let usage = g.usage();
        let rates = usage.rates();
        b.row(vec![
            this_node.into(),
            (g.id as i64).into(),
            g.name.clone().into(),
            (g.memory_used() as i64).into(),
            round(rates.cpu_percent).into(),
            (rates.local_read_bytes_per_second as i64).into(),
            (rates.remote_read_bytes_per_second as i64).into(),
            g.cpu_limit_percent().into(),
            (usage.cpu_time().as_millis() as i64).into(),
            (usage.local_read_bytes() as i64).into(),
        ]);
    }
    let Some(cluster) = &services.cluster else {
        return b;
    };
    for (backend, health) in cluster.health() {
        if !health.alive {
            continue;
        }
        for g in &health.status.groups {
            b.row(vec![
                (backend.id as i64).into(),
                (g.id as i64).into(),
                g.name.clone().into(),
                (g.memory_bytes as i64).into(),
                round(g.cpu_percent).into(),
                (g.local_read_bytes_per_second as i64).into(),
                (g.remote_read_bytes_per_second as i64).into(),
                g.cpu_limit_percent.into(),
                (g.cpu_time_ms as i64).into(),
                (g.local_read_bytes as i64).into(),
            ]);
        }
    }
    b
}

pub(crate) fn session_group(
    manager: &WorkloadManager,
    session: &Session,
) -> Result<Arc<WorkloadGroup>> {
    let name = match session.variables().get("workload_group") {
        Ok(VarValue::Str(s)) => s,
        _ => NORMAL_GROUP.to_string(),
    };
    manager.get(&name).or_else(|_| manager.get(NORMAL_GROUP))
}
