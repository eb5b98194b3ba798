//! Logins: the account a user name and client host map to, the password check the protocol
//! supplies, and a growing delay after repeated failures from one user and host (MySQL's
//! connection_control idea) so passwords cannot be guessed at network speed. `root` from the
//! local machine is never delayed, so an administrator cannot be locked out.

use crate::engine::QueryEngine;
use basalt_common::{BasaltError, Result};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// Entries are forgotten this long after their last failure.
const FORGET_AFTER: Duration = Duration::from_secs(15 * 60);
/// Above this many remembered (user, host) pairs, old entries are swept.
const MAX_ENTRIES: usize = 10_000;

/// When to delay and by how much.
#[derive(Debug, Clone, Copy)]
pub struct LoginPolicy {
    /// Consecutive failures before attempts are delayed (0: never delay).
    pub failure_threshold: u32,
    /// The longest delay.
    pub max_delay: Duration,
}

impl Default for LoginPolicy {
    fn default() -> Self {
        LoginPolicy {
            failure_threshold: 3,
            max_delay: Duration::from_secs(8),
        }
    }
}

/// Consecutive failed logins by (user, client host).
#[derive(Default)]
pub(crate) struct LoginThrottle {
    policy: parking_lot::RwLock<LoginPolicy>,
    failures: Mutex<HashMap<(String, String), (u32, Instant)>>,
}

impl LoginThrottle {
    /// The delay before answering this attempt: one second per failure beyond the threshold,
    /// up to the maximum.
    fn delay(&self, user: &str, host: &str) -> Duration {
        let policy = *self.policy.read();
        if policy.failure_threshold == 0 || (user == crate::access::ROOT && is_local(host)) {
            return Duration::ZERO;
        }
        let failures = self
            .failures
            .lock()
            .get(&(user.to_string(), host.to_string()))
            .filter(|(_, at)| at.elapsed() < FORGET_AFTER)
            .map_or(0, |(n, _)| *n);
        if failures < policy.failure_threshold {
            return Duration::ZERO;
        }
        let steps = failures - policy.failure_threshold + 1;
        Duration::from_secs(steps as u64).min(policy.max_delay)
    }

    fn failed(&self, user: &str, host: &str) {
        let mut failures = self.failures.lock();
        if failures.len() >= MAX_ENTRIES {
            failures.retain(|_, (_, at)| at.elapsed() < FORGET_AFTER);
        }
        let entry = failures
            .entry((user.to_string(), host.to_string()))
            .or_insert((0, Instant::now()));
        if entry.1.elapsed() >= FORGET_AFTER {
            entry.0 = 0;
        }
        entry.0 = entry.0.saturating_add(1);
        entry.1 = Instant::now();
    }

    fn succeeded(&self, user: &str, host: &str) {
        let mut failures = self.failures.lock();
        if !failures.is_empty() {
            failures.remove(&(user.to_string(), host.to_string()));
        }
    }
}

fn is_local(host: &str) -> bool {
    matches!(host, "127.0.0.1" | "::1" | "localhost")
}

impl QueryEngine {
    /// Sets when failed logins start to be delayed (from the server's configuration).
    pub fn set_login_policy(&self, policy: LoginPolicy) {
        *self.login.policy.write() = policy;
    }

    /// `max_connections`: client sessions allowed at once (ADMIN_PRIV gets one more).
    pub fn max_connections(&self) -> usize {
        let globals = self.services.catalog.global_variables();
        match crate::variables::SessionVariables::new(&globals).get_global("max_connections") {
            Ok(crate::variables::VarValue::Int(n)) => n.max(1) as usize,
            _ => 1024,
        }
    }

    /// Refuses a new session when `max_connections` are open (1040), keeping one more
    /// connection for an account with ADMIN_PRIV, as MySQL keeps one for SUPER.
    pub fn admit_connection(&self, user: &str, client_host: &str) -> Result<()> {
        let max = self.max_connections();
        let open = self.services.processes.connections();
        if open < max {
            return Ok(());
        }
        let catalog = self.services.catalog.as_ref();
        let admin = crate::access::login_access(catalog, user, client_host).is_admin();
        if admin && open < max + 1 {
            Ok(())
        } else {
            Err(BasaltError::TooManyConnections)
        }
    }

    /// Checks a login: `user` from `client_host` whose protocol proves the password with
    /// `proves(stored_hash)` (the hash is MySQL's SHA1(SHA1(password))). A refused login is
    /// 1045, after the delay repeated failures earned.
    pub async fn login(
        &self,
        user: &str,
        client_host: &str,
        using_password: bool,
        proves: &(dyn Fn(&[u8]) -> bool + Sync),
    ) -> Result<()> {
        let delay = self.login.delay(user, client_host);
        if !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
        let ok = self
            .services
            .catalog
            .find_user(user, client_host)
            .is_some_and(|account| proves(&account.password_hash));
        if ok {
            self.login.succeeded(user, client_host);
            Ok(())
        } else {
            self.login.failed(user, client_host);
            Err(BasaltError::AccessDenied {
                user: user.to_string(),
                host: client_host.to_string(),
                using_password,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_grow_after_the_threshold_and_spare_local_root() {
        let t = LoginThrottle::default();
        for _ in 0..3 {
            assert_eq!(t.delay("u", "10.0.0.1"), Duration::ZERO);
            t.failed("u", "10.0.0.1");
        }
        assert_eq!(t.delay("u", "10.0.0.1"), Duration::from_secs(1));
        t.failed("u", "10.0.0.1");
        assert_eq!(t.delay("u", "10.0.0.1"), Duration::from_secs(2));
        for _ in 0..20 {
            t.failed("u", "10.0.0.1");
        }
        assert_eq!(t.delay("u", "10.0.0.1"), Duration::from_secs(8));
        assert_eq!(t.delay("u", "10.0.0.2"), Duration::ZERO);
        t.succeeded("u", "10.0.0.1");
        assert_eq!(t.delay("u", "10.0.0.1"), Duration::ZERO);
        for _ in 0..10 {
            t.failed("root", "127.0.0.1");
            t.failed("root", "10.0.0.9");
        }
        assert_eq!(t.delay("root", "127.0.0.1"), Duration::ZERO);
        assert!(t.delay("root", "10.0.0.9") > Duration::ZERO);
    }
}
