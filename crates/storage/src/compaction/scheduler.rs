//! Background compaction: a few dedicated threads (outside the async runtime, so merges never
//! hold up queries or loads) that wake after every publish and at a fixed interval, pick the most
//! urgent tablet and compact it. A tablet is compacted by one thread at a time; a tablet whose
//! compaction failed is left alone for a while so a bad file cannot make a thread spin.

use super::policy::CompactionPolicy;
use crate::engine::StorageEngine;
use basalt_catalog::TabletId;
use basalt_common::BasaltError;
use parking_lot::{Condvar, Mutex};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

/// How long a tablet whose compaction failed is skipped.
const FAILURE_BACKOFF: Duration = Duration::from_secs(30);
/// How long a tablet is skipped after its compaction lost a race with a catalog change.
const STALE_BACKOFF: Duration = Duration::from_secs(1);

#[derive(Default)]
struct State {
    /// Counts wake-up requests; a thread that saw an older count looks for work again.
    wakeups: u64,
    stop: bool,
    /// Tablets being compacted now.
    running: HashSet<TabletId>,
    /// Tablets whose last compaction failed, until when to skip them.
    backoff: HashMap<TabletId, Instant>,
}

struct Shared {
    state: Mutex<State>,
    cond: Condvar,
}

/// Handle to the background compaction threads; dropping it stops them (after the compaction in
/// progress, if any).
pub struct CompactionScheduler {
    shared: Arc<Shared>,
}

impl CompactionScheduler {
    /// Starts `threads` compaction threads (none if 0) for `engine`.
    pub fn start(
        engine: &Arc<StorageEngine>,
        threads: usize,
        interval: Duration,
        policy: CompactionPolicy,
    ) -> std::io::Result<CompactionScheduler> {
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            cond: Condvar::new(),
        });
        for i in 0..threads {
            let shared = shared.clone();
            let engine = Arc::downgrade(engine);
            let policy = policy.clone();
            std::thread::Builder::new()
                .name(format!("basalt-compaction-{i}"))
                .spawn(move || run(shared, engine, interval, policy))?;
        }
        Ok(CompactionScheduler { shared })
    }

    /// Asks the threads to look for work now (after a publish). Never blocks for long.
    pub fn notify(&self) {
        self.shared.state.lock().wakeups += 1;
        self.shared.cond.notify_one();
    }

    pub fn stop(&self) {
        self.shared.state.lock().stop = true;
        self.shared.cond.notify_all();
    }
}

impl Drop for CompactionScheduler {
    fn drop(&mut self) {
        self.stop();
    }
}

fn run(
    shared: Arc<Shared>,
    engine: Weak<StorageEngine>,
    interval: Duration,
    policy: CompactionPolicy,
) {
    let mut seen = 0u64;
    loop {
        {
            let mut s = shared.state.lock();
            if !s.stop && s.wakeups == seen {
                shared.cond.wait_for(&mut s, interval);
            }
            if s.stop {
                return;
            }
            seen = s.wakeups;
        }
        // Work until nothing is left to do.
        loop {
            let Some(engine) = engine.upgrade() else {
                return;
            };
            let skip = {
                let mut s = shared.state.lock();
                if s.stop {
                    return;
                }
                let now = Instant::now();
                s.backoff.retain(|_, until| *until > now);
                s.running
                    .iter()
                    .chain(s.backoff.keys())
                    .copied()
                    .collect::<HashSet<_>>()
            };
            let Some(job) = engine.pick_compaction(&policy, &skip) else {
                break;
            };
            let tablet = job.tablet.id;
            if !shared.state.lock().running.insert(tablet) {
                continue; // another thread took it meanwhile
            }
            let started = Instant::now();
            let result =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| engine.compact(job)));
            let mut s = shared.state.lock();
            s.running.remove(&tablet);
            match result {
                Ok(Ok(stats)) => {
                    let took = started.elapsed();
                    let line = format!(
                        "compacted tablet {} ({}): {} rowsets, versions {}-{}, {} -> {} rows, \
                         {} segments, {} deletes carried, {:?}",
                        stats.tablet_id,
                        stats.reason.name(),
                        stats.input_rowsets,
                        stats.start_version,
                        stats.end_version,
                        stats.input_rows,
                        stats.output_rows,
                        stats.output_segments,
                        stats.carried_deletes,
                        took
                    );
                    if took >= Duration::from_millis(500) {
                        tracing::info!("{line}");
                    } else {
                        tracing::debug!("{line}");
                    }
                }
                Ok(Err(e @ BasaltError::Catalog(_))) => {
                    // Lost a race with TRUNCATE/DROP (or another compaction): try again later.
                    tracing::debug!("compaction of tablet {tablet} did not publish: {e}");
                    s.backoff.insert(tablet, Instant::now() + STALE_BACKOFF);
                }
                Ok(Err(e)) => {
                    tracing::warn!("compaction of tablet {tablet} failed: {e}");
                    s.backoff.insert(tablet, Instant::now() + FAILURE_BACKOFF);
                }
                Err(_) => {
                    tracing::error!("compaction of tablet {tablet} panicked");
                    s.backoff.insert(tablet, Instant::now() + FAILURE_BACKOFF);
                }
            }
        }
    }
}
