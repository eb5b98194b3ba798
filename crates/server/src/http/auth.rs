//! HTTP basic authentication against the same accounts as the MySQL side.

use axum::http::HeaderMap;
use basalt_catalog::{native_password_hash, Catalog};
use base64::Engine;

/// The authenticated user name, or `None` when the header is missing or wrong.
pub fn authenticate(
    catalog: &dyn Catalog,
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
    let (user, password) = text.split_once(':').unwrap_or((text.as_str(), ""));
    let account = catalog.find_user(user, client_host)?;
    // Constant-time comparison is not needed for hashes of hashes, but keep it simple and exact.
    (account.password_hash == native_password_hash(password)).then(|| user.to_string())
}
