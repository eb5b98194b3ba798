//! Rows a load filters out: an exact count, and the first few with their source text and the
//! reason, for the error log behind `ErrorURL`.

/// Samples kept per batch of rows; the error log keeps at most `ERROR_LOG_ROWS` overall.
const SAMPLES_PER_BATCH: usize = 50;
/// Source text kept per rejected row.
const MAX_TEXT: usize = 1024;

#[derive(Debug, Default, Clone)]
pub struct Rejects {
    pub count: u64,
    /// (source row text, reason)
    pub samples: Vec<(String, String)>,
}

impl Rejects {
    /// Counts one rejected row; builds its text only if it is kept as a sample.
    pub fn add(&mut self, text: impl FnOnce() -> String, reason: String) {
        self.count += 1;
        if self.samples.len() < SAMPLES_PER_BATCH {
            let mut t = text();
            if t.len() > MAX_TEXT {
                let mut cut = MAX_TEXT;
                while !t.is_char_boundary(cut) {
                    cut -= 1;
                }
                t.truncate(cut);
                t.push_str("...");
            }
            self.samples.push((t, reason));
        }
    }

    pub fn merge(&mut self, other: Rejects) {
        self.count += other.count;
        self.samples.extend(other.samples);
    }
}
