//! Where tablet files live and the durability helpers: write to a temporary name, fsync, rename,
//! fsync the directory — so a file is either whole under its final name or absent.

use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};

/// Relative directory of a tablet's segment files.
pub fn tablet_dir(table_id: u64, tablet_id: u64) -> PathBuf {
    PathBuf::from("data")
        .join(table_id.to_string())
        .join(tablet_id.to_string())
}

/// The load or compaction id a segment file (or its row store) is named by: `17` for
/// `.../17_0.parquet`, `.../c17_2.rows`.
pub fn segment_file_id(rel: &Path) -> Option<u64> {
    let stem = rel.file_stem()?.to_str()?;
    let stem = stem.strip_prefix('c').unwrap_or(stem);
    stem.split_once('_')?.0.parse().ok()
}

/// Checks that `rel` names a segment file as loads and compactions name them
/// (`data/<table>/<tablet>/[c]<id>_<n>.parquet`), so a path from another node can neither escape the data directory nor name
/// anything but a segment.
pub fn check_segment_path(rel: &str) -> Result<PathBuf, String> {
    let parts: Vec<&str> = rel.split('/').collect();
    let digits = |s: &str| !s.is_empty() && s.len() <= 20 && s.bytes().all(|b| b.is_ascii_digit());
    // A load's segments are `<load>_<n>`, a compaction's `c<id>_<n>`.
    let file_ok = |f: &str| {
        f.strip_suffix(".parquet")
            .map(|stem| stem.strip_prefix('c').unwrap_or(stem))
            .and_then(|stem| stem.split_once('_'))
            .is_some_and(|(a, b)| digits(a) && digits(b))
    };
    match parts.as_slice() {
        ["data", table, tablet, file] if digits(table) && digits(tablet) && file_ok(file) => {
            Ok(PathBuf::from(rel))
        }
        _ => Err(format!("'{rel}' is not a segment path")),
    }
}

/// fsyncs a directory so a rename or create inside it is durable.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Makes `tmp` durable and moves it to `dest` atomically.
pub fn publish_file(tmp: &Path, dest: &Path) -> io::Result<()> {
    File::open(tmp)?.sync_all()?;
    fs::rename(tmp, dest)?;
    if let Some(parent) = dest.parent() {
        sync_dir(parent)?;
    }
    Ok(())
}

/// Removes a segment file and its row store (if any); a missing file is not an error.
pub fn remove_segment_files(segment: &Path) -> io::Result<()> {
    let mut result = Ok(());
    for f in [
        segment.to_path_buf(),
        crate::row_store::row_store_path(segment),
    ] {
        if let Err(e) = fs::remove_file(&f) {
            if e.kind() != io::ErrorKind::NotFound && result.is_ok() {
                result = Err(e);
            }
        }
    }
    result
}

/// Every regular file under `root`, as paths relative to `base`.
pub fn list_files(base: &Path, root: &Path) -> io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries = match fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        for entry in entries {
            let entry = entry?;
            let path = entry.path();
            if entry.file_type()?.is_dir() {
                stack.push(path);
            } else if let Ok(rel) = path.strip_prefix(base) {
                out.push(rel.to_path_buf());
            }
        }
    }
    Ok(out)
}

/// Creates `dir` and any missing parents, fsyncing each parent whose entries changed, so the
/// directories of published segments survive a power loss.
pub fn create_dir_durable(dir: &Path) -> io::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    if let Some(parent) = dir.parent() {
        create_dir_durable(parent)?;
    }
    match fs::create_dir(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => return Ok(()),
        Err(e) => return Err(e),
    }
    if let Some(parent) = dir.parent() {
        sync_dir(parent)?;
    }
    Ok(())
}

/// Held shared by a writer from making a new file's directory until the file exists, and
/// exclusively by the sweep of empty directories: a directory made for a file is empty until
/// the file exists, and the sweep would remove it in between (a load on a new tablet failed
/// with "No such file or directory").
static NEW_FILES: std::sync::RwLock<()> = std::sync::RwLock::new(());

/// Creates (or truncates) the file `path`, making its directories first.
pub fn create_file_with_dirs(path: &Path) -> io::Result<fs::File> {
    let _making = NEW_FILES
        .read()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(dir) = path.parent() {
        create_dir_durable(dir)?;
    }
    fs::File::create(path)
}

/// Removes the empty directories under `root` (left by dropped tables and tablets).
pub fn remove_empty_dirs(root: &Path) -> io::Result<()> {
    let _sweeping = NEW_FILES
        .write()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    remove_empty_dirs_under(root)
}

fn remove_empty_dirs_under(root: &Path) -> io::Result<()> {
    let entries = match fs::read_dir(root) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    for entry in entries {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            let path = entry.path();
            remove_empty_dirs_under(&path)?;
            // Fails (and is ignored) while the directory still holds files.
            let _ = fs::remove_dir(&path);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Files made in new directories while the orphan sweep removes empty ones all get made.
    #[test]
    fn new_files_survive_a_concurrent_sweep_of_empty_dirs() {
        let root = tempfile::tempdir().unwrap();
        let data = root.path().join("data");
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let sweeper = {
            let (data, done) = (data.clone(), done.clone());
            std::thread::spawn(move || {
                while !done.load(std::sync::atomic::Ordering::Relaxed) {
                    remove_empty_dirs(&data).unwrap();
                    // Sweeps back to back would hold the lock almost always: on a busy
                    // machine the writer could wait for minutes between two of them.
                    std::thread::sleep(std::time::Duration::from_micros(100));
                }
            })
        };
        for tablet in 0..300 {
            let file = data.join(format!("1/{tablet}/7_0.parquet.tmp"));
            create_file_with_dirs(&file).unwrap();
        }
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        sweeper.join().unwrap();
        assert_eq!(list_files(root.path(), &data).unwrap().len(), 300);
    }

    #[test]
    fn segment_files_are_named_by_their_load_or_compaction_id() {
        assert_eq!(
            segment_file_id(Path::new("data/1/2/17_0.parquet")),
            Some(17)
        );
        assert_eq!(segment_file_id(Path::new("data/1/2/c17_3.rows")), Some(17));
        assert_eq!(
            segment_file_id(Path::new("data/1/2/9_1.parquet.tmp")),
            Some(9)
        );
        assert_eq!(segment_file_id(Path::new("data/1/2/notes.txt")), None);
        assert_eq!(segment_file_id(Path::new("data/1/2/x_1.parquet")), None);
    }
}
