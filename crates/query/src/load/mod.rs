//! Loading data: Doris's Stream Load (CSV, JSON, Parquet; compressed bodies; column mappings,
//! filters and merge types) streamed through parallel parse-and-convert workers into one atomic
//! storage load, with labels for idempotence and an error log for filtered rows.

mod csv;
mod job;
mod json;
mod options;
mod registry;
mod rejects;
mod source;
mod transform;

pub use job::{stream_load, StreamLoadRequest, StreamLoadResult};
pub use options::LoadOptions;
pub use registry::LoadRegistry;
