//! HTTP basic authentication against the same accounts as the MySQL side.

use axum::http::HeaderMap;
use basalt_catalog::native_password_hash;
use basalt_frontend::QueryEngine;
use base64::Engine;

/// The authenticated user name, or `None` when the header is missing, malformed or wrong
/// (failed logins are delayed as on the MySQL port).
pub async fn authenticate(
    engine: &QueryEngine,
    headers: &HeaderMap,
    client_host: &str,
) -> Option<String> {
    let value = headers
        .get(axum::http::header::AUTHORIZATION)?
        .to_str()
        .ok()?;
    let (scheme, encoded) = value.trim().split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .ok()?;
    let text = String::from_utf8(decoded).ok()?;
    // `user:password`; a header without the colon is malformed, not a password-less login.
    let (user, password) = text.split_once(':')?;
    let hash = native_password_hash(password);
    engine
        .login(user, client_host, !password.is_empty(), &|stored| {
            stored == hash
        })
        .await
        .ok()
        .map(|()| user.to_string())
}
