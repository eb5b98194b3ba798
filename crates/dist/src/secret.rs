//! The cluster secret: frontend and backends prove to each other that they belong to the same
//! cluster by sending it with every gRPC request; a backend refuses a request without it, so a
//! stranger on the network can neither run plan fragments nor read or write tablets.

use http::HeaderValue;
use std::sync::Arc;

/// The metadata key the secret travels in.
pub const SECRET_HEADER: &str = "x-basalt-cluster-secret";

/// Shortest secret accepted: a guessable secret is no protection.
const MIN_SECRET_LEN: usize = 16;

#[derive(Clone)]
pub struct ClusterSecret {
    value: Arc<str>,
    header: HeaderValue,
}

impl std::fmt::Debug for ClusterSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ClusterSecret(..)")
    }
}

impl ClusterSecret {
    pub fn new(value: &str) -> Result<ClusterSecret, String> {
        if value.len() < MIN_SECRET_LEN {
            return Err(format!(
                "the cluster secret (cluster_secret in the config file, or BASALT_CLUSTER_SECRET) \
                 must be at least {MIN_SECRET_LEN} characters"
            ));
        }
        let header = HeaderValue::from_str(value)
            .map_err(|_| "the cluster secret must be printable ASCII".to_string())?;
        Ok(ClusterSecret {
            value: value.into(),
            header,
        })
    }

    pub fn header_value(&self) -> &HeaderValue {
        &self.header
    }

    /// True when `presented` is the secret (compared in constant time).
    pub fn matches(&self, presented: &[u8]) -> bool {
        let expected = self.value.as_bytes();
        if presented.len() != expected.len() {
            return false;
        }
        presented
            .iter()
            .zip(expected)
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
    }

    /// A tonic interceptor admitting only requests that carry the secret.
    pub fn interceptor(
        &self,
    ) -> impl Fn(tonic::Request<()>) -> Result<tonic::Request<()>, tonic::Status> + Clone {
        let secret = self.clone();
        move |request: tonic::Request<()>| {
            let presented = request
                .metadata()
                .get(SECRET_HEADER)
                .map(|v| v.as_bytes())
                .unwrap_or_default();
            if secret.matches(presented) {
                Ok(request)
            } else {
                Err(tonic::Status::unauthenticated(
                    "not a member of this Basalt cluster (wrong or missing cluster secret)",
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_exact_secret_passes() {
        let s = ClusterSecret::new("0123456789abcdef").unwrap();
        assert!(s.matches(b"0123456789abcdef"));
        assert!(!s.matches(b"0123456789abcdeF"));
        assert!(!s.matches(b"0123456789abcde"));
        assert!(!s.matches(b""));
        assert!(ClusterSecret::new("short").is_err());
        let check = s.interceptor();
        assert!(check(tonic::Request::new(())).is_err());
        let mut ok = tonic::Request::new(());
        ok.metadata_mut()
            .insert(SECRET_HEADER, "0123456789abcdef".parse().unwrap());
        assert!(check(ok).is_ok());
    }
}
