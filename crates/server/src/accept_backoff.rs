//! Failed accepts (out of file descriptors, or another transient failure) on either listener:
//! wait a little instead of spinning, and log at most once per second with how many there were.

use std::time::{Duration, Instant};

/// How long a listener waits after a failed accept.
const PAUSE: Duration = Duration::from_millis(50);

/// The failed accepts of one listener.
pub struct AcceptFailures {
    listener: &'static str,
    since_log: u64,
    last_log: Option<Instant>,
}

impl AcceptFailures {
    pub fn new(listener: &'static str) -> AcceptFailures {
        AcceptFailures {
            listener,
            since_log: 0,
            last_log: None,
        }
    }

    /// Counts a failure, logs when a second has passed since the last log, then pauses.
    pub async fn record(&mut self, e: &std::io::Error) {
        self.since_log += 1;
        if self
            .last_log
            .is_none_or(|t| t.elapsed() >= Duration::from_secs(1))
        {
            tracing::warn!(
                "accepting {} connections failed {} time(s): {e}",
                self.listener,
                self.since_log
            );
            self.since_log = 0;
            self.last_log = Some(Instant::now());
        }
        tokio::time::sleep(PAUSE).await;
    }
}
