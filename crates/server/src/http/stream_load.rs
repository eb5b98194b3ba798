//! `PUT /api/{db}/{table}/_stream_load`: Doris's Stream Load over HTTP (basic auth, headers as
//! options, the body streamed into the load), and `GET /api/_load_error_log` for `ErrorURL`.

use super::auth::authenticate;
use axum::body::Body;
use axum::extract::{ConnectInfo, Path, Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use basalt_frontend::QueryEngine;
use basalt_frontend::StreamLoadRequest;
use futures::StreamExt;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;

fn unauthorized() -> Response {
    (
        StatusCode::UNAUTHORIZED,
        [(header::WWW_AUTHENTICATE, "Basic realm=\"Basalt\"")],
        axum::Json(serde_json::json!({
            "status": "FAILED",
            "msg": "Access denied: wrong user or password (HTTP basic authentication)"
        })),
    )
        .into_response()
}

/// Limits of the HTTP loading door, from the server config.
#[derive(Debug, Clone, Copy)]
pub struct StreamLoadLimits {
    pub max_body_bytes: u64,
}

pub async fn handle(
    State(engine): State<Arc<QueryEngine>>,
    axum::Extension(limits): axum::Extension<StreamLoadLimits>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    Path((db, table)): Path<(String, String)>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let host = peer.ip().to_string();
    let Some(user) = authenticate(&engine, &headers, &host).await else {
        return unauthorized();
    };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limits.max_body_bytes) {
        let result = serde_json::json!({
            "Status": "Fail",
            "Message": format!(
                "the body ({} bytes) is larger than stream_load_max_mb ({} MB); nothing was loaded",
                declared.unwrap_or(0),
                limits.max_body_bytes >> 20
            ),
            "NumberLoadedRows": 0,
        });
        return (StatusCode::PAYLOAD_TOO_LARGE, axum::Json(result)).into_response();
    }
    let base_url = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .map(|h| format!("http://{h}"))
        .unwrap_or_default();
    let options = match header_texts(&headers) {
        Ok(o) => o,
        Err(name) => {
            let result = serde_json::json!({
                "Status": "Fail",
                "Message": format!("header {name} is not valid UTF-8; nothing was loaded"),
                "NumberLoadedRows": 0,
            });
            return (StatusCode::BAD_REQUEST, axum::Json(result)).into_response();
        }
    };
    let req = StreamLoadRequest {
        database: db,
        table,
        user,
        host,
        headers: options,
        base_url,
        max_body_bytes: limits.max_body_bytes,
    };
    let body = body
        .into_data_stream()
        .map(|r| r.map_err(|e| e.to_string()))
        .boxed();
    let result = engine.stream_load(req, body).await;
    axum::Json(result).into_response()
}

/// The request headers as text. Values are UTF-8 (a `columns` or `where` header may name
/// non-ASCII columns or compare with non-ASCII text); a value that is not is refused rather
/// than dropped, except in HTTP's own headers, which the load does not read.
fn header_texts(headers: &HeaderMap) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::with_capacity(headers.len());
    for (name, value) in headers {
        match std::str::from_utf8(value.as_bytes()) {
            Ok(v) => out.push((name.as_str().to_string(), v.to_string())),
            Err(_) if is_http_header(name) => {}
            Err(_) => return Err(name.as_str().to_string()),
        }
    }
    Ok(out)
}

fn is_http_header(name: &header::HeaderName) -> bool {
    [
        header::USER_AGENT,
        header::ACCEPT,
        header::ACCEPT_ENCODING,
        header::CONNECTION,
        header::CONTENT_TYPE,
        header::REFERER,
        header::COOKIE,
    ]
    .contains(name)
}

pub async fn error_log(
    State(engine): State<Arc<QueryEngine>>,
    Query(params): Query<HashMap<String, String>>,
) -> Response {
    let Some(name) = params.get("file") else {
        return (StatusCode::BAD_REQUEST, "missing parameter: file").into_response();
    };
    let Some(path) = engine.load_registry().error_log_path(name) else {
        return (StatusCode::NOT_FOUND, "no such error log").into_response();
    };
    match tokio::fs::read(&path).await {
        Ok(bytes) => ([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], bytes).into_response(),
        Err(_) => (StatusCode::NOT_FOUND, "no such error log").into_response(),
    }
}
