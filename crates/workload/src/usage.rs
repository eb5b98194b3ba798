//! Live usage of a workload group: running totals (CPU time, bytes read from local and remote
//! storage) and the rates computed from them once per sampling tick, which
//! `information_schema.workload_group_resource_usage` and `/metrics` show. The sampler thread
//! also turns `cpu_share` into CPU limits while the machine is contended, and applies the
//! workload policies to running statements.

use crate::WorkloadManager;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

/// How often rates are recomputed (and shares re-weighed).
pub const SAMPLE_INTERVAL: Duration = Duration::from_millis(500);

/// How often workload policies look at the running statements.
pub const POLICY_INTERVAL: Duration = Duration::from_millis(100);

/// Cores the process may use (read once: finding out reads cgroup files).
pub fn cpu_cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    })
}

#[derive(Debug, Default)]
pub struct GroupUsage {
    cpu_ns: AtomicU64,
    local_read_bytes: AtomicU64,
    remote_read_bytes: AtomicU64,
    rates: Mutex<Rates>,
}

/// Rates over the last sampling interval.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Rates {
    /// Percent of all cores.
    pub cpu_percent: f64,
    pub local_read_bytes_per_second: f64,
    pub remote_read_bytes_per_second: f64,
    /// Totals at the last sample.
    sampled: (u64, u64, u64),
    sampled_at: Option<Instant>,
}

impl GroupUsage {
    pub(crate) fn add_cpu(&self, ns: u64) {
        self.cpu_ns.fetch_add(ns, Ordering::Relaxed);
    }

    pub(crate) fn add_local_read(&self, bytes: u64) {
        self.local_read_bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    pub(crate) fn add_remote_read(&self, bytes: u64) {
        self.remote_read_bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    /// CPU time the group's queries have used since the server started.
    pub fn cpu_time(&self) -> Duration {
        Duration::from_nanos(self.cpu_ns.load(Ordering::Relaxed))
    }

    pub fn local_read_bytes(&self) -> u64 {
        self.local_read_bytes.load(Ordering::Relaxed)
    }

    /// Bytes read from remote (object) storage; Basalt has no remote storage yet, so nothing
    /// charges it outside tests.
    pub fn remote_read_bytes(&self) -> u64 {
        self.remote_read_bytes.load(Ordering::Relaxed)
    }

    pub fn rates(&self) -> Rates {
        *self.rates.lock()
    }

    /// Recomputes the rates from the totals' growth since the last sample.
    pub(crate) fn sample(&self, now: Instant, cores: usize) -> Rates {
        let totals = (
            self.cpu_ns.load(Ordering::Relaxed),
            self.local_read_bytes(),
            self.remote_read_bytes(),
        );
        let mut r = self.rates.lock();
        if let Some(at) = r.sampled_at {
            let secs = now.saturating_duration_since(at).as_secs_f64();
            if secs > 0.0 {
                let per_second = |now: u64, before: u64| now.saturating_sub(before) as f64 / secs;
                r.cpu_percent =
                    per_second(totals.0, r.sampled.0) / 1e9 / cores.max(1) as f64 * 100.0;
                r.local_read_bytes_per_second = per_second(totals.1, r.sampled.1);
                r.remote_read_bytes_per_second = per_second(totals.2, r.sampled.2);
            }
        }
        r.sampled = totals;
        r.sampled_at = Some(now);
        *r
    }
}

/// Starts the thread that samples every group's usage until `manager` is dropped.
pub(crate) fn start_sampler(manager: Weak<WorkloadManager>) {
    let spawned = std::thread::Builder::new()
        .name("basalt-wg-usage".into())
        .spawn(move || {
            let cores = cpu_cores();
            let mut last_sample = Instant::now();
            loop {
                std::thread::sleep(POLICY_INTERVAL);
                let Some(manager) = manager.upgrade() else {
                    return;
                };
                manager.enforce_policies();
                manager.guard_process_memory();
                let now = Instant::now();
                if now.duration_since(last_sample) < SAMPLE_INTERVAL {
                    continue;
                }
                last_sample = now;
                let sampled: Vec<_> = manager
                    .groups()
                    .into_iter()
                    .map(|g| {
                        let rates = g.usage().sample(now, cores);
                        (g, rates)
                    })
                    .collect();
                weigh_shares(&sampled);
            }
        });
    if let Err(e) = spawned {
        tracing::warn!("workload usage sampler not started: {e}");
    }
}

/// Below this share of all cores a group counts as idle when weighing `cpu_share`.
const ACTIVE_PERCENT: f64 = 2.0;
/// The machine counts as contended when groups together use this much of all cores.
const CONTENDED_PERCENT: f64 = 90.0;

/// `cpu_share` weighs groups only under contention: while the busy groups together use
/// (nearly) all cores, the cores are divided among them by weight, max-min fair: a group using
/// well under its part keeps what it uses and no limit, and what it leaves is divided among the
/// others, each held to its part. Otherwise share limits are lifted; hard limits always hold.
fn weigh_shares(sampled: &[(Arc<crate::WorkloadGroup>, Rates)]) {
    let active: Vec<(usize, f64, f64)> = sampled
        .iter()
        .enumerate()
        .filter(|(_, (_, r))| r.cpu_percent >= ACTIVE_PERCENT)
        .map(|(i, (g, r))| (i, r.cpu_percent, f64::from(g.settings().cpu_share.max(1))))
        .collect();
    let total: f64 = active.iter().map(|(_, used, _)| used).sum();
    let mut limits: Vec<Option<f64>> = vec![None; sampled.len()];
    if active.len() > 1 && total >= CONTENDED_PERCENT {
        for (i, part) in share_parts(&active) {
            limits[i] = part;
        }
    }
    for ((group, _), limit) in sampled.iter().zip(limits) {
        group.set_share_limit(limit);
    }
}

/// A group using less than this fraction of its part counts as satisfied (it wants no more);
/// one using more is held to its part, even if it uses less now: it may be using less only
/// because the others take the cores, so it must be given room to grow to its part.
const SATISFIED: f64 = 0.5;

/// Max-min fair division of 100% of the cores among `(index, used percent, weight)`: the
/// limit of each, `None` for those that are satisfied.
fn share_parts(active: &[(usize, f64, f64)]) -> Vec<(usize, Option<f64>)> {
    let mut capped: Vec<(usize, f64, f64)> = active.to_vec();
    let mut out = Vec::with_capacity(active.len());
    let mut capacity = 100.0;
    while !capped.is_empty() {
        let weights: f64 = capped.iter().map(|(_, _, w)| w).sum();
        let (under, over): (Vec<_>, Vec<_>) = std::mem::take(&mut capped)
            .into_iter()
            .partition(|(_, used, w)| *used < SATISFIED * capacity * w / weights);
        if under.is_empty() {
            out.extend(
                over.iter()
                    .map(|(i, _, w)| (*i, Some(capacity * w / weights))),
            );
            break;
        }
        for (i, used, _) in under {
            capacity -= used;
            out.push((i, None));
        }
        capped = over;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_follow_the_totals() {
        let u = GroupUsage::default();
        let t0 = Instant::now();
        u.sample(t0, 2);
        u.add_cpu(500_000_000);
        u.add_local_read(4_000);
        let r = u.sample(t0 + Duration::from_millis(500), 2);
        // 0.5 s of CPU in 0.5 s on 2 cores: 50%.
        assert!((r.cpu_percent - 50.0).abs() < 1e-9, "{r:?}");
        assert!((r.local_read_bytes_per_second - 8_000.0).abs() < 1e-9);
        let r = u.sample(t0 + Duration::from_millis(1000), 2);
        assert_eq!(r.cpu_percent, 0.0);
    }

    #[test]
    fn shares_divide_the_cores_max_min_fairly() {
        // Two busy groups weighted 3:1 get 75% and 25%.
        let parts = share_parts(&[(0, 80.0, 3.0), (1, 60.0, 1.0)]);
        assert_eq!(parts, vec![(0, Some(75.0)), (1, Some(25.0))]);
        // A group using less than its part keeps it unlimited; the rest goes to the other.
        let parts = share_parts(&[(0, 10.0, 1.0), (1, 95.0, 1.0)]);
        assert_eq!(parts, vec![(0, None), (1, Some(90.0))]);
        // An even split while both want more: the heavier weight is given room to grow.
        let parts = share_parts(&[(0, 50.0, 3.0), (1, 50.0, 1.0)]);
        assert_eq!(parts, vec![(0, Some(75.0)), (1, Some(25.0))]);
    }
}
