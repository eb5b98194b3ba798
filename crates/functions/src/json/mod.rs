//! JSON functions: MySQL's (`json_extract`, `json_unquote`, `json_valid`, `json_type`,
//! `json_length`, `json_keys`, `json_contains`, `json_contains_path`, `json_array`,
//! `json_object`, `json_quote`, and the `->` / `->>` operators) and Doris's (`json_parse`,
//! `get_json_string/int/bigint/double`, `json_extract_string/int/bigint/double/bool/isnull`,
//! `json_exists_path`). Documents are JSON text (a JSON column's stored form); results that are
//! documents carry Arrow's `arrow.json` marker, so clients receive them as MySQL's JSON type.
//! MySQL's functions fail on a document that is not JSON; Doris's `get_json_*` give NULL.

mod functions;
mod operators;
pub mod path;

pub use functions::functions;
pub use operators::JsonOperatorPlanner;
