//! A token bucket that is charged after the fact: work (CPU nanoseconds, bytes read) is done,
//! then paid for; a bucket in debt tells its users how long to pause so that, over any second,
//! the work done stays at the bucket's rate. Used for `cpu_hard_limit` (and `cpu_share` under
//! contention) and `read_bytes_per_second`.

use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How much unused rate a bucket saves up: this many seconds' worth, so short bursts after an
/// idle spell run at full speed while any second-long window stays close to the rate.
const BURST_SECONDS: f64 = 0.05;

/// Longest single pause; a paused stream checks again after it (rates can change live).
const MAX_PAUSE: Duration = Duration::from_millis(100);

#[derive(Debug)]
pub struct TokenBucket {
    /// False while the rate is unlimited: charges and checks then take no lock (every
    /// operator poll of every query goes through here).
    limited: AtomicBool,
    state: Mutex<BucketState>,
}

#[derive(Debug)]
struct BucketState {
    /// Units per second; `None`: unlimited.
    rate: Option<f64>,
    /// Saved-up units; negative while in debt.
    tokens: f64,
    refilled: Instant,
}

impl BucketState {
    fn refill(&mut self, now: Instant) {
        if let Some(rate) = self.rate {
            let elapsed = now.saturating_duration_since(self.refilled).as_secs_f64();
            self.tokens = (self.tokens + elapsed * rate).min(rate * BURST_SECONDS);
        }
        self.refilled = now;
    }
}

impl TokenBucket {
    pub fn new(rate: Option<f64>) -> TokenBucket {
        let rate = rate.filter(|r| *r > 0.0);
        TokenBucket {
            limited: AtomicBool::new(rate.is_some()),
            state: Mutex::new(BucketState {
                rate,
                tokens: 0.0,
                refilled: Instant::now(),
            }),
        }
    }

    /// Changes the rate from now on (debt already run up is kept, so a lowered limit holds at
    /// once; lifting the limit forgives it).
    pub fn set_rate(&self, rate: Option<f64>) {
        let mut s = self.state.lock();
        let now = Instant::now();
        s.refill(now);
        if s.rate.is_none() || rate.is_none() {
            s.tokens = 0.0;
        }
        s.rate = rate.filter(|r| *r > 0.0);
        self.limited.store(s.rate.is_some(), Ordering::Release);
    }

    pub fn rate(&self) -> Option<f64> {
        self.state.lock().rate
    }

    /// Pays for `amount` units of work already done.
    pub fn charge(&self, amount: f64) {
        if !self.limited.load(Ordering::Acquire) {
            return;
        }
        let mut s = self.state.lock();
        if s.rate.is_some() {
            s.refill(Instant::now());
            s.tokens -= amount;
        }
    }

    /// How long to pause before doing more work, if the bucket is in debt.
    pub fn delay(&self) -> Option<Duration> {
        if !self.limited.load(Ordering::Acquire) {
            return None;
        }
        let mut s = self.state.lock();
        let rate = s.rate?;
        s.refill(Instant::now());
        if s.tokens >= 0.0 {
            return None;
        }
        Some(Duration::from_secs_f64(-s.tokens / rate).clamp(Duration::from_micros(100), MAX_PAUSE))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unlimited_buckets_never_delay() {
        let b = TokenBucket::new(None);
        b.charge(1e12);
        assert_eq!(b.delay(), None);
    }

    #[test]
    fn debt_delays_in_proportion_to_the_rate() {
        let b = TokenBucket::new(Some(1000.0));
        b.charge(50.0);
        let d = b.delay().expect("in debt");
        // 50 units at 1000/s: about 50 ms (less the few microseconds since the charge).
        assert!(
            d > Duration::from_millis(40) && d <= Duration::from_millis(50),
            "{d:?}"
        );
        // Huge debts pause at most MAX_PAUSE at a time.
        b.charge(1e6);
        assert_eq!(b.delay(), Some(MAX_PAUSE));
    }

    #[test]
    fn savings_are_capped_and_limits_change_live() {
        let b = TokenBucket::new(Some(1000.0));
        std::thread::sleep(Duration::from_millis(120));
        // At most 50 ms worth (50 units) is saved: 60 units put the bucket in debt.
        b.charge(60.0);
        assert!(b.delay().is_some());
        b.set_rate(None);
        assert_eq!(b.delay(), None);
        b.set_rate(Some(10.0));
        b.charge(1.0);
        assert!(b.delay().is_some());
    }
}
