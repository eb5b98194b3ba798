//! Turns `sqlparser` errors into MySQL-style syntax errors that carry line and position.

use basalt_common::BasaltError;
use sqlparser::parser::ParserError;

/// Converts a parser error on `sql` into error 1064 with the text near the failing position.
pub fn syntax_error(err: ParserError, sql: &str) -> BasaltError {
    let message = match err {
        ParserError::TokenizerError(m) | ParserError::ParserError(m) => m,
        ParserError::RecursionLimitExceeded => "statement nests too deeply".to_string(),
    };
    let (text, line, column) = split_location(&message);
    BasaltError::syntax_at(text, sql, line, column)
}

/// Splits "... at Line: L, Column: C" off a sqlparser message; a message without one points at
/// the end of the statement.
fn split_location(message: &str) -> (String, u64, u64) {
    if let Some(idx) = message.rfind(" at Line: ") {
        let loc = &message[idx + " at Line: ".len()..];
        if let Some((l, c)) = loc.split_once(", Column: ") {
            if let (Ok(line), Ok(column)) = (l.trim().parse(), c.trim().parse()) {
                return (message[..idx].to_string(), line, column);
            }
        }
    }
    (message.to_string(), 0, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extracts_location() {
        let (m, l, c) = split_location("Expected: x, found: y at Line: 2, Column: 7");
        assert_eq!((m.as_str(), l, c), ("Expected: x, found: y", 2, 7));
        let (_, l, _) = split_location("no position");
        assert_eq!(l, 0);
    }
}
