//! Keeps files alive while queries may read them. A query takes a [`ReadGuard`] before it looks
//! at the catalog; files removed from the catalog (TRUNCATE, DROP, DROP PARTITION) are deleted
//! only once every query that started before the removal has finished. On a cluster's
//! frontend the files are the backends': what is deferred is asking them to delete
//! ([`ReadTracker::run_when_unread`]).

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
    pending: Vec<(u64, Removal)>,
}

/// What is done once no reader can see the removed files any more.
enum Removal {
    Files(Vec<PathBuf>),
    Run(Box<dyn FnOnce() + Send>),
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
        self.defer(Removal::Files(files));
    }

    /// Runs `removal` (asking the backends to delete files) now if no reader could still see
    /// the files, else when the last such reader ends.
    pub fn run_when_unread(&self, removal: impl FnOnce() + Send + 'static) {
        self.defer(Removal::Run(Box::new(removal)));
    }

    fn defer(&self, removal: Removal) {
        let ready = {
            let mut s = self.state.lock();
            let epoch = s.epoch;
            s.epoch += 1;
            s.pending.push((epoch, removal));
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
fn take_ready(s: &mut State) -> Vec<Removal> {
    let oldest_reader = s.readers.keys().next().copied();
    let (ready, waiting): (Vec<_>, Vec<_>) = std::mem::take(&mut s.pending)
        .into_iter()
        // Readers with start epoch <= `epoch` may have seen the files.
        .partition(|(epoch, _)| oldest_reader.is_none_or(|r| r > *epoch));
    s.pending = waiting;
    ready.into_iter().map(|(_, r)| r).collect()
}

fn remove(ready: Vec<Removal>) {
    for removal in ready {
        match removal {
            Removal::Files(files) => {
                for f in files {
                    if let Err(e) = crate::files::remove_segment_files(&f) {
                        tracing::warn!("could not remove {}: {e}", f.display());
                    }
                }
            }
            Removal::Run(run) => run(),
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
