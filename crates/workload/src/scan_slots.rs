//! `scan_thread_num`: how many of a group's row-group reads (decode included) may run at
//! once, across all its queries — the share of scan threads Doris gives a group, enforced on
//! the shared runtime. A scan waits (asynchronously, holding no thread) for a slot before each
//! row group and gives it back after. ALTER changes the number for reads that start later.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use tokio::sync::Notify;

/// Means "no limit".
const UNLIMITED: usize = usize::MAX;

#[derive(Debug)]
pub struct ScanSlots {
    limit: AtomicUsize,
    in_use: AtomicUsize,
    freed: Notify,
}

/// A slot held for one read; dropping it lets the next read in.
#[derive(Debug)]
pub struct ScanSlot(Option<Arc<ScanSlots>>);

impl Drop for ScanSlot {
    fn drop(&mut self) {
        if let Some(slots) = self.0.take() {
            slots.in_use.fetch_sub(1, Ordering::AcqRel);
            slots.freed.notify_one();
        }
    }
}

impl ScanSlots {
    pub fn new(limit: Option<u32>) -> Arc<ScanSlots> {
        let slots = Arc::new(ScanSlots {
            limit: AtomicUsize::new(UNLIMITED),
            in_use: AtomicUsize::new(0),
            freed: Notify::new(),
        });
        slots.set_limit(limit);
        slots
    }

    pub fn set_limit(&self, limit: Option<u32>) {
        let limit = limit.map_or(UNLIMITED, |n| n.max(1) as usize);
        self.limit.store(limit, Ordering::Release);
        self.freed.notify_waiters();
    }

    /// Reads running now.
    pub fn in_use(&self) -> usize {
        self.in_use.load(Ordering::Acquire)
    }

    /// Waits for a slot (at once when there is no limit).
    pub async fn acquire(self: &Arc<Self>) -> ScanSlot {
        loop {
            if self.limit.load(Ordering::Acquire) == UNLIMITED {
                return ScanSlot(None);
            }
            let freed = self.freed.notified();
            tokio::pin!(freed);
            // Registered before looking, so a slot freed in between wakes this waiter.
            freed.as_mut().enable();
            let limit = self.limit.load(Ordering::Acquire);
            let taken = self
                .in_use
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                    (n < limit).then_some(n + 1)
                })
                .is_ok();
            if taken {
                return ScanSlot(Some(self.clone()));
            }
            freed.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn at_most_limit_reads_run_and_changes_apply() {
        let slots = ScanSlots::new(Some(2));
        let a = slots.acquire().await;
        let _b = slots.acquire().await;
        assert_eq!(slots.in_use(), 2);
        let third = tokio::spawn({
            let slots = slots.clone();
            async move { slots.acquire().await }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!third.is_finished());
        drop(a);
        let _c = tokio::time::timeout(Duration::from_secs(1), third)
            .await
            .expect("freed slot lets the waiter in")
            .unwrap();
        // Raising the limit lets waiters in at once; no limit never waits.
        let fourth = tokio::spawn({
            let slots = slots.clone();
            async move { slots.acquire().await }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!fourth.is_finished());
        slots.set_limit(Some(3));
        tokio::time::timeout(Duration::from_secs(1), fourth)
            .await
            .expect("a higher limit lets the waiter in")
            .unwrap();
        slots.set_limit(None);
        let _free: Vec<_> = futures::future::join_all((0..10).map(|_| slots.acquire())).await;
    }
}
