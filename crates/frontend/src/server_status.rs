//! The server's status counters (`SHOW STATUS`, information_schema.GLOBAL_STATUS): uptime,
//! connections, statements and bytes over the wire, counted as they happen.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

#[derive(Debug)]
pub struct ServerStatus {
    started: Instant,
    connections: AtomicU64,
    questions: AtomicU64,
    bytes_received: AtomicU64,
    bytes_sent: AtomicU64,
    max_used_connections: AtomicU64,
}

impl Default for ServerStatus {
    fn default() -> Self {
        ServerStatus {
            started: Instant::now(),
            connections: AtomicU64::new(0),
            questions: AtomicU64::new(0),
            bytes_received: AtomicU64::new(0),
            bytes_sent: AtomicU64::new(0),
            max_used_connections: AtomicU64::new(0),
        }
    }
}

impl ServerStatus {
    /// A client connected; `open` connections are open now (this one included).
    pub fn connected(&self, open: usize) {
        self.connections.fetch_add(1, Ordering::Relaxed);
        self.max_used_connections
            .fetch_max(open as u64, Ordering::Relaxed);
    }

    /// A statement arrived (MySQL's `Questions`).
    pub fn question(&self) {
        self.questions.fetch_add(1, Ordering::Relaxed);
    }

    /// Bytes read from and written to clients.
    pub fn traffic(&self, received: u64, sent: u64) {
        self.bytes_received.fetch_add(received, Ordering::Relaxed);
        self.bytes_sent.fetch_add(sent, Ordering::Relaxed);
    }

    pub fn uptime_secs(&self) -> u64 {
        self.started.elapsed().as_secs()
    }

    /// `(Variable_name, Value)` rows in MySQL's names, sorted by name. `connected` and
    /// `running` are the sessions open and running a statement now.
    pub fn rows(&self, connected: usize, running: usize) -> Vec<(&'static str, String)> {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed).to_string();
        let questions = get(&self.questions);
        let mut rows = vec![
            ("Aborted_clients", "0".to_string()),
            ("Aborted_connects", "0".to_string()),
            ("Bytes_received", get(&self.bytes_received)),
            ("Bytes_sent", get(&self.bytes_sent)),
            ("Connections", get(&self.connections)),
            ("Max_used_connections", get(&self.max_used_connections)),
            ("Queries", questions.clone()),
            ("Questions", questions),
            ("Slow_queries", "0".to_string()),
            ("Threads_cached", "0".to_string()),
            ("Threads_connected", connected.to_string()),
            ("Threads_created", get(&self.connections)),
            ("Threads_running", running.to_string()),
            ("Uptime", self.uptime_secs().to_string()),
            ("Uptime_since_flush_status", self.uptime_secs().to_string()),
        ];
        rows.sort_by_key(|(name, _)| *name);
        rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_add_up() {
        let s = ServerStatus::default();
        s.connected(1);
        s.connected(3);
        s.question();
        s.question();
        s.traffic(10, 100);
        s.traffic(5, 1);
        let rows: std::collections::HashMap<_, _> = s.rows(2, 1).into_iter().collect();
        assert_eq!(rows["Connections"], "2");
        assert_eq!(rows["Max_used_connections"], "3");
        assert_eq!(rows["Questions"], "2");
        assert_eq!(rows["Bytes_received"], "15");
        assert_eq!(rows["Bytes_sent"], "101");
        assert_eq!(rows["Threads_connected"], "2");
        assert_eq!(rows["Threads_running"], "1");
    }
}
