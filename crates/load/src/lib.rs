//! Loading data: Doris's Stream Load (CSV, JSON, Parquet; compressed bodies; column mappings,
//! filters and merge types) streamed through parallel parse-and-convert workers into one atomic
//! storage load, with labels for idempotence and an error log for filtered rows; and the
//! `local()` table function that reads files on the server for `INSERT .. SELECT`.

mod context;
mod csv;
mod job;
mod json;
mod load_path;
pub mod local_files;
mod options;
mod registry;
mod rejects;
mod source;
mod spool;
mod transform;

pub use context::{LoadContext, LoadExpressions, ToDataFusionSql};
pub use job::{stream_load, StreamLoadRequest, StreamLoadResult};
pub use load_path::LoadDir;
pub use options::LoadOptions;
pub use registry::LoadRegistry;
