//! The `basalt` binary: command-line parsing, configuration (file, then flags) and logging, then
//! hands over to the server.

use basalt_common::config::Config;
use clap::{Parser, Subcommand};
use std::path::PathBuf;

mod allocator;

#[derive(Parser)]
#[command(
    name = "basalt",
    version,
    about = "Basalt: an analytical database speaking the MySQL protocol"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Start the server.
    Server {
        /// TOML config file; flags given here override it.
        #[arg(long)]
        config: Option<PathBuf>,
        /// Directory for all persistent state (default ./basalt-data).
        #[arg(long)]
        data_dir: Option<PathBuf>,
        /// MySQL protocol port (default 9030).
        #[arg(long)]
        mysql_port: Option<u16>,
        /// HTTP port (default 8030).
        #[arg(long)]
        http_port: Option<u16>,
        /// Address to bind both listeners to (default 127.0.0.1).
        #[arg(long)]
        bind: Option<String>,
        /// The only directory `local(...)` may read files from (default <data-dir>/load_files).
        #[arg(long)]
        allowed_load_dir: Option<PathBuf>,
    },
}

fn main() {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("BASALT_LOG")
                .unwrap_or_else(|_| "info".into()),
        )
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stdout()))
        .init();
    let cli = Cli::parse();
    let Command::Server {
        config,
        data_dir,
        mysql_port,
        http_port,
        bind,
        allowed_load_dir,
    } = cli.command;
    let mut cfg = match config {
        Some(path) => match std::fs::read_to_string(&path)
            .map_err(|e| e.to_string())
            .and_then(|t| Config::from_toml(&t))
        {
            Ok(c) => c,
            Err(e) => {
                eprintln!("basalt: cannot read config {}: {e}", path.display());
                std::process::exit(2);
            }
        },
        None => Config::default(),
    };
    if let Some(v) = data_dir {
        cfg.data_dir = v;
    }
    if let Some(v) = mysql_port {
        cfg.mysql_port = v;
    }
    if let Some(v) = http_port {
        cfg.http_port = v;
    }
    if let Some(v) = bind {
        cfg.bind = v;
    }
    if let Some(v) = allowed_load_dir {
        cfg.allowed_load_dir = Some(v);
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        // Planning and evaluating deeply nested expressions (long OR chains from ORMs) recurses;
        // big stacks cost only address space until used.
        .thread_stack_size(64 * 1024 * 1024)
        .on_thread_park(allocator::collect_parked_thread)
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("basalt: cannot start runtime: {e}");
            std::process::exit(1);
        }
    };
    allocator::start_purger();
    let result = runtime.block_on(basalt_server::run(cfg));
    // Statements still running are abandoned (every acknowledged write is already durable); a
    // task stuck in one must not keep the process alive after SIGTERM.
    runtime.shutdown_timeout(std::time::Duration::from_secs(5));
    if let Err(e) = result {
        eprintln!("basalt: {e}");
        std::process::exit(1);
    }
}
