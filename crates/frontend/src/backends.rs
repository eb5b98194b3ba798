//! Doris's cluster administration: `ALTER SYSTEM ADD/DROP/DECOMMISSION BACKEND`, `CANCEL
//! DECOMMISSION BACKEND` and `SHOW BACKENDS`.

use crate::catalog_provider::Services;
use crate::output::Output;
use crate::show::{Col, ResultBuilder};
use basalt_common::{BasaltError, Result};
use basalt_sql::BackendAction;
use std::collections::HashMap;

fn require_cluster(services: &Services) -> Result<&std::sync::Arc<basalt_dist::Cluster>> {
    services.cluster.as_ref().ok_or_else(|| {
        BasaltError::NotSupported(
            "managing backends on an all-in-one server (start `basalt frontend` and `basalt \
             backend` for a cluster)"
                .into(),
        )
    })
}

pub fn alter_system(
    services: &Services,
    action: BackendAction,
    addresses: &[String],
) -> Result<Output> {
    let cluster = require_cluster(services)?;
    for address in addresses {
        match action {
            BackendAction::Add => {
                services.catalog.add_backend(address)?;
                // The balancer moves replicas onto it until tablet counts are even.
                cluster.request_rebalance();
            }
            // Refused while it holds replicas: the message points at DECOMMISSION.
            BackendAction::Drop => services.catalog.drop_backend(address)?,
            // No new tablets go there; the balancer moves its replicas away and then removes
            // it from the cluster.
            BackendAction::Decommission => {
                services.catalog.set_backend_decommissioned(address, true)?;
            }
            BackendAction::CancelDecommission => {
                services
                    .catalog
                    .set_backend_decommissioned(address, false)?;
            }
        }
    }
    let cluster = cluster.clone();
    tokio::spawn(async move { cluster.heartbeat_all().await });
    Ok(Output::ok())
}

/// `SHOW BACKENDS`, in Doris's column order (the columns Basalt has).
pub fn show(services: &Services) -> Output {
    let mut b = ResultBuilder::new(&[
        Col::int("BackendId"),
        Col::str("Host"),
        Col::int("HeartbeatPort"),
        Col::int("BePort"),
        Col::str("LastHeartbeat"),
        Col::str("Alive"),
        Col::str("SystemDecommissioned"),
        Col::int("TabletNum"),
        Col::int("DataUsedCapacity"),
        Col::str("ErrMsg"),
        Col::str("Version"),
        Col::str("NodeRole"),
        // Basalt's: the tablets the backend has scanned since it started (only ones it holds).
        Col::str("ScannedTablets"),
    ]);
    let Some(cluster) = &services.cluster else {
        return b.into_output();
    };
    let mut tablets: HashMap<u64, i64> = HashMap::new();
    for db in services.catalog.databases() {
        for table in services.catalog.tables(&db.name).unwrap_or_default() {
            for (_, tablet) in table.tablets() {
                for id in &tablet.replicas {
                    *tablets.entry(*id).or_default() += 1;
                }
            }
        }
    }
    for (backend, health) in cluster.health() {
        let last = health
            .last_heartbeat_ms
            .and_then(chrono::DateTime::from_timestamp_millis)
            .map(|t| t.format("%Y-%m-%d %H:%M:%S").to_string())
            .unwrap_or_default();
        b.row(vec![
            (backend.id as i64).into(),
            backend.host.clone().into(),
            (backend.port as i64).into(),
            (backend.port as i64).into(),
            last.into(),
            health.alive.to_string().into(),
            backend.decommissioned.to_string().into(),
            tablets.get(&backend.id).copied().unwrap_or(0).into(),
            (health.status.data_bytes as i64).into(),
            health.error.clone().into(),
            env!("CARGO_PKG_VERSION").to_string().into(),
            "mix".to_string().into(),
            health
                .status
                .scanned_tablets
                .iter()
                .map(|t| t.to_string())
                .collect::<Vec<_>>()
                .join(",")
                .into(),
        ]);
    }
    b.into_output()
}
