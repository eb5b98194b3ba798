//! The HTTP door: Stream Load, load error logs, health check and Prometheus-style metrics,
//! served with header and idle timeouts.

mod auth;
mod serve;
mod stream_load;

use axum::routing::{get, put};
use axum::Router;
use basalt_frontend::QueryEngine;
use std::sync::Arc;

pub use serve::serve;
pub use stream_load::StreamLoadLimits;

pub fn router(engine: Arc<QueryEngine>, limits: StreamLoadLimits) -> Router {
    Router::new()
        .route("/api/health", get(health))
        .route("/health", get(health))
        .route("/metrics", get(metrics))
        .route("/api/{db}/{table}/_stream_load", put(stream_load::handle))
        .route("/api/_load_error_log", get(stream_load::error_log))
        .layer(axum::Extension(limits))
        .with_state(engine)
}

async fn health() -> axum::Json<serde_json::Value> {
    axum::Json(serde_json::json!({ "status": "OK", "msg": "Basalt is running" }))
}

async fn metrics(axum::extract::State(engine): axum::extract::State<Arc<QueryEngine>>) -> String {
    let catalog = engine.catalog();
    let databases = catalog.databases();
    let mut tables = 0usize;
    let mut rows = 0u64;
    let mut bytes = 0u64;
    for db in &databases {
        for t in catalog.tables(&db.name).unwrap_or_default() {
            tables += 1;
            rows += t.num_rows();
            bytes += t.data_bytes();
        }
    }
    let mut out = format!(
        "# HELP basalt_databases Number of databases.\n# TYPE basalt_databases gauge\nbasalt_databases {}\n\
         # HELP basalt_tables Number of tables.\n# TYPE basalt_tables gauge\nbasalt_tables {tables}\n\
         # HELP basalt_table_rows Rows stored in all tables.\n# TYPE basalt_table_rows gauge\nbasalt_table_rows {rows}\n\
         # HELP basalt_data_bytes Bytes of segment files.\n# TYPE basalt_data_bytes gauge\nbasalt_data_bytes {bytes}\n",
        databases.len()
    );
    workload_group_metrics(&engine, &mut out);
    out
}

/// Each workload group's usage, labelled by group (the figures of
/// `information_schema.workload_group_resource_usage`).
fn workload_group_metrics(engine: &QueryEngine, out: &mut String) {
    use std::fmt::Write;
    let groups = engine.workload().groups();
    type Figure = fn(&basalt_workload::WorkloadGroup) -> f64;
    let figures: [(&str, &str, &str, Figure); 7] = [
        (
            "basalt_workload_group_cpu_seconds_total",
            "counter",
            "CPU time used by the group's queries.",
            |g| g.usage().cpu_time().as_secs_f64(),
        ),
        (
            "basalt_workload_group_cpu_usage_percent",
            "gauge",
            "Percent of all cores the group used over the last sampling interval.",
            |g| g.usage().rates().cpu_percent,
        ),
        (
            "basalt_workload_group_local_scan_bytes_total",
            "counter",
            "Bytes the group's scans read from local storage.",
            |g| g.usage().local_read_bytes() as f64,
        ),
        (
            "basalt_workload_group_local_scan_bytes_per_second",
            "gauge",
            "Local read rate over the last sampling interval.",
            |g| g.usage().rates().local_read_bytes_per_second,
        ),
        (
            "basalt_workload_group_memory_bytes",
            "gauge",
            "Bytes the group's running queries hold.",
            |g| g.memory_used() as f64,
        ),
        (
            "basalt_workload_group_running_queries",
            "gauge",
            "Queries of the group running now.",
            |g| f64::from(g.running()),
        ),
        (
            "basalt_workload_group_waiting_queries",
            "gauge",
            "Queries of the group waiting in its queue.",
            |g| g.waiting() as f64,
        ),
    ];
    for (name, kind, help, figure) in figures {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
        for g in &groups {
            let _ = writeln!(out, "{name}{{group=\"{}\"}} {}", g.name, figure(g));
        }
    }
}
