//! Admission into a workload group: at most `max_concurrency` queries run at once; later ones
//! wait first-in first-out in a queue of at most `max_queue_size`, each for at most
//! `queue_timeout`. A full queue fails at once; a query that waits too long fails with the
//! timeout; a waiting query that is cancelled leaves the queue. Raising `max_concurrency` lets
//! waiting queries in at once.

use basalt_common::{BasaltError, Result};
use parking_lot::Mutex;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::oneshot;

#[derive(Debug)]
pub struct AdmissionQueue {
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    max_concurrency: u32,
    running: u32,
    waiting: VecDeque<Waiter>,
    next_ticket: u64,
}

#[derive(Debug)]
struct Waiter {
    ticket: u64,
    admit: oneshot::Sender<()>,
}

/// A running query's slot; dropping it lets the next waiting query in.
#[derive(Debug)]
pub struct Permit {
    queue: Arc<AdmissionQueue>,
}

impl Drop for Permit {
    fn drop(&mut self) {
        self.queue.release();
    }
}

/// The limits a query is admitted under (the group's current settings).
#[derive(Debug, Clone, Copy)]
pub struct QueueLimits {
    pub max_queue_size: u32,
    pub queue_timeout: Duration,
}

impl AdmissionQueue {
    pub fn new(max_concurrency: u32) -> Arc<AdmissionQueue> {
        Arc::new(AdmissionQueue {
            state: Mutex::new(State {
                max_concurrency,
                running: 0,
                waiting: VecDeque::new(),
                next_ticket: 0,
            }),
        })
    }

    pub fn running(&self) -> u32 {
        self.state.lock().running
    }

    pub fn waiting(&self) -> usize {
        self.state.lock().waiting.len()
    }

    /// Applies a new `max_concurrency`; waiting queries that now fit start.
    pub fn set_max_concurrency(&self, max: u32) {
        let mut s = self.state.lock();
        s.max_concurrency = max;
        grant(&mut s);
    }

    /// Takes a slot without waiting, even beyond `max_concurrency` (a query moved here by a
    /// policy is already running).
    pub(crate) fn admit_now(self: &Arc<Self>) -> Permit {
        self.state.lock().running += 1;
        Permit {
            queue: self.clone(),
        }
    }

    /// Waits for a slot under `limits`.
    pub async fn admit(self: &Arc<Self>, limits: QueueLimits) -> Result<Permit> {
        let (ticket, admitted) = {
            let mut s = self.state.lock();
            if s.running < s.max_concurrency && s.waiting.is_empty() {
                s.running += 1;
                return Ok(Permit {
                    queue: self.clone(),
                });
            }
            if s.waiting.len() >= limits.max_queue_size as usize {
                return Err(BasaltError::QueueFull(s.waiting.len()));
            }
            let ticket = s.next_ticket;
            s.next_ticket += 1;
            let (tx, rx) = oneshot::channel();
            s.waiting.push_back(Waiter { ticket, admit: tx });
            (ticket, rx)
        };
        let mut wait = WaitGuard {
            queue: self.clone(),
            ticket,
            armed: true,
        };
        let timed_out = tokio::time::timeout(limits.queue_timeout, admitted)
            .await
            .is_err();
        // Granted (possibly just as the timeout fired) unless still in the queue.
        let still_waiting = timed_out && wait.leave_queue();
        wait.armed = false;
        if still_waiting {
            return Err(BasaltError::QueueTimeout(
                limits.queue_timeout.as_millis() as u64
            ));
        }
        Ok(Permit {
            queue: self.clone(),
        })
    }

    fn release(&self) {
        let mut s = self.state.lock();
        s.running = s.running.saturating_sub(1);
        grant(&mut s);
    }
}

/// Lets waiting queries in, first come first served, while there is room.
fn grant(s: &mut State) {
    while s.running < s.max_concurrency {
        let Some(next) = s.waiting.pop_front() else {
            break;
        };
        if next.admit.send(()).is_ok() {
            s.running += 1;
        }
    }
}

/// Removes a waiter that stops waiting (timed out, or its query was cancelled); if it had
/// already been let in, gives the slot back.
struct WaitGuard {
    queue: Arc<AdmissionQueue>,
    ticket: u64,
    armed: bool,
}

impl WaitGuard {
    /// Takes the ticket out of the queue; false if it was already let in.
    fn leave_queue(&mut self) -> bool {
        let mut s = self.queue.state.lock();
        match s.waiting.iter().position(|w| w.ticket == self.ticket) {
            Some(i) => {
                s.waiting.remove(i);
                true
            }
            None => false,
        }
    }
}

impl Drop for WaitGuard {
    fn drop(&mut self) {
        if self.armed && !self.leave_queue() {
            self.queue.release();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(queue: u32, timeout_ms: u64) -> QueueLimits {
        QueueLimits {
            max_queue_size: queue,
            queue_timeout: Duration::from_millis(timeout_ms),
        }
    }

    #[tokio::test]
    async fn full_queue_fails_at_once_and_waiters_go_in_order() {
        let q = AdmissionQueue::new(1);
        let first = q.admit(limits(2, 10_000)).await.unwrap();
        let (a, b) = (q.clone(), q.clone());
        let second = tokio::spawn(async move { a.admit(limits(2, 10_000)).await });
        tokio::task::yield_now().await;
        let third = tokio::spawn(async move { b.admit(limits(2, 10_000)).await });
        while q.waiting() < 2 {
            tokio::task::yield_now().await;
        }
        let e = q.admit(limits(2, 10_000)).await.unwrap_err();
        assert_eq!(e.to_string(), "query waiting queue is full, queue length=2");
        drop(first);
        let second = second.await.unwrap().unwrap();
        assert_eq!((q.running(), q.waiting()), (1, 1));
        drop(second);
        let third = third.await.unwrap().unwrap();
        drop(third);
        assert_eq!((q.running(), q.waiting()), (0, 0));
    }

    #[tokio::test]
    async fn waiting_too_long_times_out_and_leaves_the_queue() {
        let q = AdmissionQueue::new(1);
        let _running = q.admit(limits(1, 0)).await.unwrap();
        let e = q.admit(limits(1, 20)).await.unwrap_err();
        assert_eq!(e.to_string(), "query queue timeout, timeout: 20 ms");
        assert_eq!(q.waiting(), 0);
    }

    #[tokio::test]
    async fn cancelled_waiters_leave_and_more_concurrency_lets_them_in() {
        let q = AdmissionQueue::new(1);
        let running = q.admit(limits(0, 0)).await.unwrap();
        let a = q.clone();
        let cancelled = tokio::spawn(async move { a.admit(limits(5, 60_000)).await });
        while q.waiting() < 1 {
            tokio::task::yield_now().await;
        }
        cancelled.abort();
        let _ = cancelled.await;
        assert_eq!(q.waiting(), 0);
        let b = q.clone();
        let waiter = tokio::spawn(async move { b.admit(limits(5, 60_000)).await });
        while q.waiting() < 1 {
            tokio::task::yield_now().await;
        }
        q.set_max_concurrency(2);
        let admitted = waiter.await.unwrap().unwrap();
        assert_eq!(q.running(), 2);
        drop(admitted);
        drop(running);
        assert_eq!(q.running(), 0);
    }
}
