//! JSON functions: MySQL's (`json_extract`, `json_unquote`, `json_valid`, `json_type`,
//! `json_length`, `json_keys`, `json_contains`, `json_contains_path`, `json_array`,
//! `json_object`, `json_quote`, `json_overlaps`, `json_merge_preserve` (`json_merge`),
//! `json_merge_patch`, `json_depth`, `json_remove`, `json_replace`, `json_set`, `json_insert`,
//! `json_array_append`, `json_array_insert`, `json_search`, and the `->` / `->>` operators)
//! and Doris's (`jsonb_extract`, `json_array_ignore_null`, `json_parse` and its `_error_to_null` /
//! `_error_to_value` forms,
//! `get_json_string/int/bigint/double`, `json_extract_string/int/bigint/double/bool/isnull`,
//! `json_exists_path`). Documents are JSON text (a JSON column's stored form); results that are
//! documents carry Arrow's `arrow.json` marker, so clients receive them as MySQL's JSON type.
//! MySQL's functions fail on a document that is not JSON; Doris's `get_json_*` give NULL.
//! The aggregates `json_arrayagg` and `json_objectagg` build documents from a group's rows.

mod aggregates;
mod edits;
mod functions;
pub mod node;
mod operators;
pub mod path;

pub use aggregates::functions as aggregate_functions;
pub use functions::{functions, reads_json_paths};
pub use operators::JsonOperatorPlanner;
