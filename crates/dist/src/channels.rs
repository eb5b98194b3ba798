//! Connections between cluster members: every gRPC channel (the distributed engine's worker
//! calls, from the frontend and between backends, and the frontend's segment calls) carries the
//! cluster secret.

use crate::secret::{ClusterSecret, SECRET_HEADER};
use async_trait::async_trait;
use datafusion::common::DataFusionError;
use datafusion_distributed::grpc::{
    create_worker_client, BoxCloneSyncChannel, DefaultChannelResolver,
};
use datafusion_distributed::{ChannelResolver, WorkerChannel};
use url::Url;

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
    inner: DefaultChannelResolver,
    secret: ClusterSecret,
}

impl SecretChannelResolver {
    pub fn new(secret: ClusterSecret) -> SecretChannelResolver {
        SecretChannelResolver {
            inner: DefaultChannelResolver::default(),
            secret,
        }
    }

    /// An authenticated channel to `url` (cached).
    pub async fn channel(&self, url: &Url) -> Result<BoxCloneSyncChannel, DataFusionError> {
        let channel = self.inner.get_channel(url).await?;
        Ok(with_secret(channel, &self.secret))
    }
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
