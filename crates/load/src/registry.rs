//! Loads in flight and recently failed: labels of running loads (a label cannot be used twice
//! at once), failed loads for `SHOW LOAD` (committed ones live in the catalog), and the
//! directory of error logs behind `ErrorURL`.

use basalt_catalog::LoadJobRecord;
use parking_lot::Mutex;
use std::collections::{HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Rejected rows written to one load's error log.
pub const ERROR_LOG_ROWS: usize = 1000;
/// Failed loads remembered for `SHOW LOAD`.
const RECENT_FAILURES: usize = 1000;

#[derive(Debug)]
pub struct LoadRegistry {
    running: Mutex<HashSet<String>>,
    failures: Mutex<VecDeque<Arc<LoadJobRecord>>>,
    error_dir: PathBuf,
}

/// Holds a label while its load runs (owned, so the work that may outlive the request keeps
/// the label until it really stops).
pub struct RunningLabel {
    registry: Arc<LoadRegistry>,
    key: String,
}

impl Drop for RunningLabel {
    fn drop(&mut self) {
        self.registry.running.lock().remove(&self.key);
    }
}

impl LoadRegistry {
    /// Opens the registry; error logs older than three days and spool files left by loads that
    /// were interrupted are removed.
    pub fn new(error_dir: PathBuf) -> LoadRegistry {
        remove_stale_files(&error_dir);
        LoadRegistry {
            running: Mutex::new(HashSet::new()),
            failures: Mutex::new(VecDeque::new()),
            error_dir,
        }
    }

    pub fn error_dir(&self) -> &Path {
        &self.error_dir
    }

    /// Claims `label` in `database` for a running load; `None` if another load holds it.
    pub fn begin(self: &Arc<Self>, database: &str, label: &str) -> Option<RunningLabel> {
        let key = LoadJobRecord::key(database, label);
        if !self.running.lock().insert(key.clone()) {
            return None;
        }
        Some(RunningLabel {
            registry: self.clone(),
            key,
        })
    }

    /// Labels of the loads running now in `database`, sorted.
    pub fn running_labels(&self, database: &str) -> Vec<String> {
        let prefix = LoadJobRecord::key(database, "");
        let mut labels: Vec<String> = self
            .running
            .lock()
            .iter()
            .filter_map(|key| key.strip_prefix(&prefix).map(str::to_string))
            .collect();
        labels.sort();
        labels
    }

    pub fn remember_failure(&self, record: LoadJobRecord) {
        let mut f = self.failures.lock();
        if f.len() >= RECENT_FAILURES {
            f.pop_front();
        }
        f.push_back(Arc::new(record));
    }

    /// Failed loads of `database`, oldest first.
    pub fn failures(&self, database: &str) -> Vec<Arc<LoadJobRecord>> {
        self.failures
            .lock()
            .iter()
            .filter(|r| r.database == database)
            .cloned()
            .collect()
    }

    /// The error log file named `name` (as given in an `ErrorURL`), if it exists. Only plain
    /// names of our own logs are accepted.
    pub fn error_log_path(&self, name: &str) -> Option<PathBuf> {
        let valid = name
            .strip_prefix("error_log_")
            .and_then(|rest| rest.split_once('_'))
            .is_some_and(|(txn, token)| {
                !txn.is_empty()
                    && txn.chars().all(|c| c.is_ascii_digit())
                    && token.len() == 16
                    && token.chars().all(|c| c.is_ascii_hexdigit())
            });
        let path = self.error_dir.join(name);
        (valid && path.is_file()).then_some(path)
    }
}

/// How long error logs are kept (as long as labels are remembered).
const ERROR_LOG_KEEP: std::time::Duration = std::time::Duration::from_secs(3 * 24 * 3600);

fn remove_stale_files(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > ERROR_LOG_KEEP);
        if name.starts_with("spool_") || (name.starts_with("error_log_") && old) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Writes the rejected rows' samples; returns the URL that serves them.
pub(crate) fn write_error_log(
    dir: &std::path::Path,
    txn_id: u64,
    rejects: &crate::rejects::Rejects,
    base_url: &str,
) -> basalt_common::Result<String> {
    use std::io::Write;
    std::fs::create_dir_all(dir)?;
    // The random part makes the URL a capability: it is served without a password, as Doris
    // does, but cannot be guessed from another load's transaction id.
    let name = format!("error_log_{txn_id}_{:016x}", crate::spool::rand_suffix());
    let mut f = std::io::BufWriter::new(std::fs::File::create(dir.join(&name))?);
    for (text, reason) in rejects.samples.iter().take(ERROR_LOG_ROWS) {
        writeln!(f, "Reason: {reason}. src line [{text}]; ")?;
    }
    if rejects.count as usize > rejects.samples.len().min(ERROR_LOG_ROWS) {
        writeln!(
            f,
            "... {} more filtered rows not shown",
            rejects.count as usize - rejects.samples.len().min(ERROR_LOG_ROWS)
        )?;
    }
    f.flush()?;
    Ok(format!("{base_url}/api/_load_error_log?file={name}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn running_labels_are_listed_per_database_while_held() {
        let dir = tempfile::tempdir().unwrap();
        let registry = Arc::new(LoadRegistry::new(dir.path().to_path_buf()));
        let a = registry.begin("db", "b_label").unwrap();
        let _b = registry.begin("db", "a_label").unwrap();
        let _other = registry.begin("db2", "c_label").unwrap();
        assert_eq!(registry.running_labels("db"), ["a_label", "b_label"]);
        assert_eq!(registry.running_labels("db2"), ["c_label"]);
        assert!(registry.running_labels("d").is_empty());
        drop(a);
        assert_eq!(registry.running_labels("db"), ["a_label"]);
    }
}
