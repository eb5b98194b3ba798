//! The doors into Basalt: the MySQL protocol listener (sessions over [`mysql`]'s codec) and the
//! HTTP listener (health, metrics), plus the wiring that opens catalog, storage and query engine.

mod accept_backoff;
mod backend;
mod http;
pub mod mysql;
mod protocol_threads;
mod server;

pub use server::{run, run_frontend, shutdown_signal, Server};
