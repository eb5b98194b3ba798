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

/// Options every role shares.
#[derive(clap::Args)]
struct Common {
    /// TOML config file; flags given here override it.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Directory for all persistent state (default ./basalt-data).
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// Address to bind the listeners to (default 127.0.0.1).
    #[arg(long)]
    bind: Option<String>,
}

/// The doors of a node clients talk to.
#[derive(clap::Args)]
struct Doors {
    /// MySQL protocol port (default 9030).
    #[arg(long)]
    mysql_port: Option<u16>,
    /// HTTP port (default 8030).
    #[arg(long)]
    http_port: Option<u16>,
    /// The only directory `local(...)` may read files from (default <data-dir>/load_files).
    #[arg(long)]
    allowed_load_dir: Option<PathBuf>,
}

/// Options of a node that holds the catalog (a server, a cluster's frontend).
#[derive(clap::Args)]
struct CatalogOptions {
    /// How database and table names keep their case: 0 (default for a new data directory)
    /// stored as written and compared exactly, 1 stored in lower case, 2 stored as written and
    /// compared without regard to case. Fixed when the data directory is created.
    #[arg(long)]
    lower_case_table_names: Option<u64>,
}

#[derive(Subcommand)]
enum Command {
    /// Start the all-in-one server (catalog, tablets and queries in one process).
    Server {
        #[command(flatten)]
        common: Common,
        #[command(flatten)]
        doors: Doors,
        #[command(flatten)]
        catalog: CatalogOptions,
    },
    /// Start a cluster's frontend: MySQL/HTTP, the catalog and planning; tablets live on
    /// backends. Needs the cluster secret (`cluster_secret` in the config file, or the
    /// BASALT_CLUSTER_SECRET environment variable).
    Frontend {
        #[command(flatten)]
        common: Common,
        #[command(flatten)]
        doors: Doors,
        #[command(flatten)]
        catalog: CatalogOptions,
        /// Backends to add at startup, as host:port,host:port (more with ALTER SYSTEM ADD
        /// BACKEND).
        #[arg(long, value_delimiter = ',')]
        backends: Vec<String>,
    },
    /// Start a cluster's backend: holds tablets and runs plan fragments for the frontend.
    /// Needs the cluster secret, as the frontend does.
    Backend {
        #[command(flatten)]
        common: Common,
        /// The port the frontend and other backends reach this backend at (default 9060).
        #[arg(long)]
        port: Option<u16>,
    },
}

/// The config file (if any) with the flags applied over it.
fn load_config(common: &Common) -> Config {
    let mut cfg = match &common.config {
        Some(path) => match std::fs::read_to_string(path)
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
    if let Some(v) = &common.data_dir {
        cfg.data_dir = v.clone();
    }
    if let Some(v) = &common.bind {
        cfg.bind = v.clone();
    }
    cfg
}

fn apply_catalog_options(cfg: &mut Config, options: CatalogOptions) {
    if let Some(v) = options.lower_case_table_names {
        cfg.lower_case_table_names = Some(v);
    }
}

fn apply_doors(cfg: &mut Config, doors: Doors) {
    if let Some(v) = doors.mysql_port {
        cfg.mysql_port = v;
    }
    if let Some(v) = doors.http_port {
        cfg.http_port = v;
    }
    if let Some(v) = doors.allowed_load_dir {
        cfg.allowed_load_dir = Some(v);
    }
}

/// The cluster secret: BASALT_CLUSTER_SECRET, else the config file's; the process stops
/// without one (a cluster without it would run anyone's plan fragments).
fn cluster_secret(cfg: &Config) -> basalt_dist::ClusterSecret {
    let value = std::env::var("BASALT_CLUSTER_SECRET")
        .ok()
        .or_else(|| cfg.cluster_secret.clone())
        .unwrap_or_default();
    match basalt_dist::ClusterSecret::new(&value) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("basalt: {e}");
            std::process::exit(2);
        }
    }
}

enum Role {
    Server,
    Frontend(basalt_dist::ClusterSecret),
    Backend(basalt_dist::ClusterSecret, u16),
}

/// A multi-threaded runtime whose threads are named `name`; exits the process when the
/// system refuses one.
fn build_runtime(name: &str) -> tokio::runtime::Runtime {
    match tokio::runtime::Builder::new_multi_thread()
        .thread_name(name)
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
    }
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
    let (cfg, role) = match cli.command {
        Command::Server {
            common,
            doors,
            catalog,
        } => {
            let mut cfg = load_config(&common);
            apply_doors(&mut cfg, doors);
            apply_catalog_options(&mut cfg, catalog);
            (cfg, Role::Server)
        }
        Command::Frontend {
            common,
            doors,
            catalog,
            backends,
        } => {
            let mut cfg = load_config(&common);
            apply_doors(&mut cfg, doors);
            apply_catalog_options(&mut cfg, catalog);
            cfg.backends.extend(backends);
            let secret = cluster_secret(&cfg);
            (cfg, Role::Frontend(secret))
        }
        Command::Backend { common, port } => {
            let cfg = load_config(&common);
            let port = port.unwrap_or(cfg.backend_port);
            let secret = cluster_secret(&cfg);
            (cfg, Role::Backend(secret, port))
        }
    };
    let runtime = build_runtime("basalt");
    // A backend runs plan fragments on a runtime of their own: the main one keeps answering
    // heartbeats, point reads and loads while fragments keep every core busy.
    let fragments = matches!(role, Role::Backend(..)).then(|| build_runtime("basalt-fragments"));
    allocator::start_purger();
    let fragments_handle = fragments.as_ref().map(|r| r.handle().clone());
    let result = runtime.block_on(async move {
        match role {
            Role::Server => basalt_server::run(cfg).await,
            Role::Frontend(secret) => basalt_server::run_frontend(cfg, secret).await,
            Role::Backend(secret, port) => {
                let fragments = fragments_handle.unwrap_or_else(tokio::runtime::Handle::current);
                basalt_dist::run_backend(
                    &cfg,
                    port,
                    secret,
                    fragments,
                    basalt_server::shutdown_signal(),
                )
                .await
            }
        }
    });
    // Statements still running are abandoned (every acknowledged write is already durable); a
    // task stuck in one must not keep the process alive after SIGTERM.
    runtime.shutdown_timeout(std::time::Duration::from_secs(5));
    if let Some(fragments) = fragments {
        fragments.shutdown_timeout(std::time::Duration::from_secs(5));
    }
    if let Err(e) = result {
        eprintln!("basalt: {e}");
        std::process::exit(1);
    }
}
