//! The compiled pattern of a regex function's rows: compiled once while consecutive rows
//! bring the same pattern (a constant pattern is compiled once per batch), again when it
//! changes; a pattern that does not compile is an error naming the function and the pattern.

use datafusion::common::{exec_err, Result};
use regex::Regex;

/// The last pattern compiled for one function's batch.
pub(crate) struct RowRegex {
    function: &'static str,
    last: Option<(String, Regex)>,
}

impl RowRegex {
    pub(crate) fn new(function: &'static str) -> RowRegex {
        RowRegex {
            function,
            last: None,
        }
    }

    /// `pattern` compiled, reusing the last compilation when it is the same pattern.
    pub(crate) fn get(&mut self, pattern: &str) -> Result<&Regex> {
        if self.last.as_ref().is_none_or(|(p, _)| p != pattern) {
            match Regex::new(pattern) {
                Ok(re) => self.last = Some((pattern.to_string(), re)),
                Err(e) => return exec_err!("{}: invalid pattern '{pattern}': {e}", self.function),
            }
        }
        match &self.last {
            Some((_, re)) => Ok(re),
            None => exec_err!("{}: no compiled pattern", self.function),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::RowRegex;

    #[test]
    fn recompiles_only_a_changed_pattern_and_names_a_bad_one() {
        let mut patterns = RowRegex::new("f");
        assert!(patterns.get("a(b)").unwrap().is_match("ab"));
        assert!(patterns.get("a(b)").unwrap().is_match("xab"));
        assert!(!patterns.get("^c").unwrap().is_match("ab"));
        let e = patterns.get("(").unwrap_err().to_string();
        assert!(e.contains("f: invalid pattern '('"), "{e}");
    }
}
