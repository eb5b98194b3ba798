//! Spooling a load body to disk: a temporary file that deletes itself, and random file-name
//! suffixes.

use basalt_common::{BasaltError, Result};
use std::io::Read;
use std::path::{Path, PathBuf};

/// A self-deleting temporary file (a spooled Parquet body) under the data directory.
pub struct TempFile {
    path: PathBuf,
}

impl TempFile {
    /// Copies `reader` into a new file; more than `limit` bytes is an error.
    pub fn copy_from(reader: &mut dyn Read, dir: &Path, limit: u64) -> Result<TempFile> {
        std::fs::create_dir_all(dir)?;
        let path = dir.join(format!(
            "spool_{}_{:x}.tmp",
            std::process::id(),
            rand_suffix()
        ));
        let file = TempFile { path };
        let mut out = std::fs::File::create(&file.path)?;
        let copied = std::io::copy(&mut reader.take(limit.saturating_add(1)), &mut out)?;
        if copied > limit {
            return Err(BasaltError::InvalidData(format!(
                "the Parquet data is larger than stream_load_max_mb ({} MB) after decompression",
                limit >> 20
            )));
        }
        Ok(file)
    }

    pub fn reopen(&self) -> std::io::Result<std::fs::File> {
        std::fs::File::open(&self.path)
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// A random number for file names that must not be guessed.
pub fn rand_suffix() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    h.finish()
}
