//! Connections between cluster members: every gRPC channel (the distributed engine's worker
//! calls, from the frontend and between backends, and the frontend's segment calls) carries the
//! cluster secret, and notices a member that died or froze within seconds: connecting is
//! bounded by a timeout and an open connection is pinged (HTTP/2 keepalive), so a call to a
//! `kill -9`'d or stopped process fails instead of waiting forever.

use crate::secret::{ClusterSecret, SECRET_HEADER};
use async_trait::async_trait;
use datafusion::common::DataFusionError;
use datafusion_distributed::grpc::{create_worker_client, BoxCloneSyncChannel};
use datafusion_distributed::{ChannelResolver, WorkerChannel};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tonic::transport::{Channel, Endpoint};
use url::Url;

/// How long opening a connection to a member may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// A connection that received nothing for this long is pinged...
const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(1);
/// ...and closed, failing its calls, when the ping is not answered within this. Generous
/// enough for a backend whose threads are all busy to answer.
const KEEPALIVE_TIMEOUT: Duration = Duration::from_secs(3);

/// Adds the secret to every request sent on `channel`.
pub fn with_secret(channel: BoxCloneSyncChannel, secret: &ClusterSecret) -> BoxCloneSyncChannel {
    let value = secret.header_value().clone();
    let service = tower::ServiceBuilder::new()
        .map_request(move |mut request: http::Request<tonic::body::Body>| {
            request.headers_mut().insert(SECRET_HEADER, value.clone());
            request
        })
        .service(channel);
    BoxCloneSyncChannel::new(service)
}

/// The distributed engine's channels to workers (backends), cached per URL, with the secret.
#[derive(Clone)]
pub struct SecretChannelResolver {
    channels: Arc<Mutex<HashMap<Url, Channel>>>,
    secret: ClusterSecret,
}

impl SecretChannelResolver {
    pub fn new(secret: ClusterSecret) -> SecretChannelResolver {
        SecretChannelResolver {
            channels: Default::default(),
            secret,
        }
    }

    /// An authenticated channel to `url` (cached). It connects on its first call, and again
    /// after its connection broke (a restarted backend is reached on the same channel).
    pub async fn channel(&self, url: &Url) -> Result<BoxCloneSyncChannel, DataFusionError> {
        let channel = {
            let mut channels = self.channels.lock();
            match channels.get(url) {
                Some(channel) => channel.clone(),
                None => {
                    let channel = endpoint(url)?.connect_lazy();
                    channels.insert(url.clone(), channel.clone());
                    channel
                }
            }
        };
        Ok(with_secret(BoxCloneSyncChannel::new(channel), &self.secret))
    }
}

/// How a member is reached at `url`: with bounded connecting and keepalive pings.
fn endpoint(url: &Url) -> Result<Endpoint, DataFusionError> {
    let endpoint = Endpoint::from_shared(url.to_string()).map_err(|e| {
        DataFusionError::Configuration(format!("invalid cluster member URL '{url}': {e}"))
    })?;
    Ok(endpoint
        .connect_timeout(CONNECT_TIMEOUT)
        .tcp_nodelay(true)
        .tcp_keepalive(Some(KEEPALIVE_INTERVAL))
        .http2_keep_alive_interval(KEEPALIVE_INTERVAL)
        .keep_alive_timeout(KEEPALIVE_TIMEOUT)
        .keep_alive_while_idle(true))
}

#[async_trait]
impl ChannelResolver for SecretChannelResolver {
    async fn get_worker_client_for_url(
        &self,
        url: &Url,
    ) -> Result<Box<dyn WorkerChannel>, DataFusionError> {
        Ok(create_worker_client(self.channel(url).await?))
    }
}
