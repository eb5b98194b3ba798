//! DataFusion integration and statement execution: Basalt tables as DataFusion table providers
//! (with partition and bucket pruning and key-model merging), INSERT as a transactional sink,
//! session variables, MySQL functions, DDL, SHOW and information_schema.

mod ddl;
mod df_error;
mod dml;
mod engine;
mod fast_like;
mod functions;
mod information_schema;
mod key_range;
mod lazy_conjunction;
pub mod load;
mod load_path;
mod local_files;
mod merge_exec;
mod mysql_compat;
mod output;
mod point_query;
mod prepared;
mod process_admin;
pub mod processes;
mod profile;
mod provider;
mod pruning;
mod scan;
mod scan_io;
mod segment_scan;
mod session;
mod show;
mod sink;
mod variables;
mod workload_groups;
mod workload_policies;

pub use engine::{PreparedInfo, QueryEngine};
pub use load_path::LoadDir;
pub use output::{BatchStream, Output};
pub use session::Session;
pub use variables::{SessionVariables, VarValue, SERVER_VERSION};
