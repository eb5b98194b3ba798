//! Keeps files alive while queries may read them. A query takes a [`ReadGuard`] before it looks
//! at the catalog; files removed from the catalog (TRUNCATE, DROP, DROP PARTITION) are deleted
//! only once every query that started before the removal has finished.

use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Default)]
struct State {
    /// Epoch of the next reader or deletion.
    epoch: u64,
    /// Running readers per start epoch.
    readers: BTreeMap<u64, usize>,
    /// Files removed from the catalog at an epoch, waiting for older readers to finish.
    pending: Vec<(u64, Vec<PathBuf>)>,
}

#[derive(Default)]
pub struct ReadTracker {
    state: Mutex<State>,
}

/// Held by a query (its plan) for as long as it may open segment files.
pub struct ReadGuard {
    tracker: Arc<ReadTracker>,
    epoch: u64,
}

impl std::fmt::Debug for ReadGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ReadGuard(epoch {})", self.epoch)
    }
}

impl ReadTracker {
    pub fn begin_read(self: &Arc<Self>) -> ReadGuard {
        let mut s = self.state.lock();
        let epoch = s.epoch;
        *s.readers.entry(epoch).or_default() += 1;
        ReadGuard {
            tracker: self.clone(),
            epoch,
        }
    }

    /// Deletes `files` now if no reader could still see them, else when the last such reader ends.
    pub fn delete_when_unread(&self, files: Vec<PathBuf>) {
        let ready = {
            let mut s = self.state.lock();
            let epoch = s.epoch;
            s.epoch += 1;
            s.pending.push((epoch, files));
            take_ready(&mut s)
        };
        remove(ready);
    }

    fn end_read(&self, epoch: u64) {
        let ready = {
            let mut s = self.state.lock();
            if let Some(n) = s.readers.get_mut(&epoch) {
                *n -= 1;
                if *n == 0 {
                    s.readers.remove(&epoch);
                }
            }
            take_ready(&mut s)
        };
        remove(ready);
    }

    #[cfg(test)]
    fn pending(&self) -> usize {
        self.state.lock().pending.len()
    }
}

impl Drop for ReadGuard {
    fn drop(&mut self) {
        self.tracker.end_read(self.epoch);
    }
}

/// Pending deletions that no running reader can see: no reader that started at or before the
/// removal is still running.
fn take_ready(s: &mut State) -> Vec<PathBuf> {
    let oldest_reader = s.readers.keys().next().copied();
    let mut ready = Vec::new();
    s.pending.retain_mut(|(epoch, files)| {
        // Readers with start epoch <= `epoch` may have seen the files.
        let still_seen = oldest_reader.is_some_and(|r| r <= *epoch);
        if !still_seen {
            ready.append(files);
        }
        still_seen
    });
    ready
}

fn remove(files: Vec<PathBuf>) {
    for f in files {
        if let Err(e) = crate::files::remove_segment_files(&f) {
            tracing::warn!("could not remove {}: {e}", f.display());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_outlive_readers_that_started_before_removal() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("seg");
        std::fs::write(&f, b"x").unwrap();
        let tracker = Arc::new(ReadTracker::default());
        let early = tracker.begin_read();
        tracker.delete_when_unread(vec![f.clone()]);
        let late = tracker.begin_read();
        assert!(
            f.exists(),
            "a reader that started before the removal may still read it"
        );
        drop(early);
        assert!(!f.exists());
        assert_eq!(tracker.pending(), 0);
        drop(late);
    }
}
