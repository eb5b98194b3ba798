//! Rows a load filters out: an exact count, and the first few with their source text and the
//! reason, for the error log behind `ErrorURL`.

/// Samples kept per batch of rows.
const SAMPLES_PER_BATCH: usize = 50;
/// Samples kept for a whole load (what its error log shows).
const SAMPLES_PER_LOAD: usize = super::registry::ERROR_LOG_ROWS;
/// Source text, and reason, kept per rejected row.
const MAX_TEXT: usize = 1024;

#[derive(Debug, Default, Clone)]
pub struct Rejects {
    pub count: u64,
    /// (source row text, reason)
    pub samples: Vec<(String, String)>,
}

impl Rejects {
    /// Counts one rejected row; builds its text and reason only if it is kept as a sample.
    pub fn add(&mut self, text: impl FnOnce() -> String, reason: impl FnOnce() -> String) {
        self.count += 1;
        if self.samples.len() < SAMPLES_PER_BATCH {
            self.samples.push((shortened(text()), shortened(reason())));
        }
    }

    /// Adds a batch's rejects to the load's, keeping at most the load's share of samples.
    pub fn merge(&mut self, other: Rejects) {
        self.count += other.count;
        let room = SAMPLES_PER_LOAD.saturating_sub(self.samples.len());
        self.samples.extend(other.samples.into_iter().take(room));
    }
}

fn shortened(mut t: String) -> String {
    if t.len() > MAX_TEXT {
        let mut cut = MAX_TEXT;
        while !t.is_char_boundary(cut) {
            cut -= 1;
        }
        t.truncate(cut);
        t.push_str("...");
    }
    t
}
