//! Starting a cluster of real `basalt` processes for a test: one `basalt frontend` and N
//! `basalt backend`s on loopback ports the OS picks, each with its own data directory, sharing
//! a cluster secret.

use crate::harness::parse_ready_line;
use mysql_async::{Conn, Opts, OptsBuilder};
use std::io::BufRead;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

pub const SECRET: &str = "e2e-cluster-secret-0123456789";

/// A child process killed when dropped, and the data directory it owns.
pub struct Node {
    pub child: Child,
    pub dir: tempfile::TempDir,
    /// The warnings (and errors) it has logged so far.
    pub warnings: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Node {
    /// Kills the process (as `kill -9` does) and hands over its data directory.
    pub fn kill(mut self) -> tempfile::TempDir {
        let _ = self.child.kill();
        let _ = self.child.wait();
        std::mem::replace(&mut self.dir, tempfile::tempdir().expect("tempdir"))
    }
}

/// Starts `basalt <args>` and returns it with what `ready` found in its log.
pub fn spawn<T: Send + 'static>(
    args: &[&str],
    secret: &str,
    ready: fn(&str) -> Option<T>,
) -> (Node, T) {
    spawn_in(tempfile::tempdir().expect("tempdir"), args, secret, ready)
}

/// Like [`spawn`], on an existing data directory (a restart).
pub fn spawn_in<T: Send + 'static>(
    dir: tempfile::TempDir,
    args: &[&str],
    secret: &str,
    ready: fn(&str) -> Option<T>,
) -> (Node, T) {
    spawn_under(&[], dir, args, secret, ready)
}

/// Like [`spawn_in`], started by `launcher` (a command and its arguments, e.g. `taskset -c
/// 0`; none: directly).
pub fn spawn_under<T: Send + 'static>(
    launcher: &[&str],
    dir: tempfile::TempDir,
    args: &[&str],
    secret: &str,
    ready: fn(&str) -> Option<T>,
) -> (Node, T) {
    let binary = env!("CARGO_BIN_EXE_basalt");
    let mut command = match launcher.split_first() {
        Some((program, rest)) => {
            let mut c = Command::new(program);
            c.args(rest).arg(binary);
            c
        }
        None => Command::new(binary),
    };
    let mut child = command
        .args(args)
        .arg("--data-dir")
        .arg(dir.path())
        .env("BASALT_CLUSTER_SECRET", secret)
        .env("BASALT_LOG", "info")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start basalt");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    let warnings = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let kept = warnings.clone();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            eprintln!("[basalt {}] {line}", std::process::id());
            if line.contains(" WARN ") || line.contains(" ERROR ") {
                if let Ok(mut kept) = kept.lock() {
                    kept.push(line.clone());
                }
            }
            if let Some(found) = ready(&line) {
                let _ = tx.send(found);
            }
        }
    });
    let found = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("node did not report ready within 60 s");
    (
        Node {
            child,
            dir,
            warnings,
        },
        found,
    )
}

pub fn backend_port(line: &str) -> Option<u16> {
    let rest = &line[line.find("Basalt backend ready on ")? + 24..];
    rest.split([',', ' '])
        .next()?
        .rsplit(':')
        .next()?
        .parse()
        .ok()
}

pub struct Cluster {
    pub frontend: Node,
    pub backends: Vec<(Node, u16)>,
    pub mysql_port: u16,
    pub http_port: u16,
    /// The frontend's config file, when it was given one.
    _config: Option<tempfile::TempDir>,
}

/// Starts one more `basalt backend` (not yet known to any frontend).
pub fn spawn_backend() -> (Node, u16) {
    spawn(&["backend", "--port", "0"], SECRET, backend_port)
}

impl Cluster {
    pub fn start(backends: usize) -> Cluster {
        Cluster::start_with_config(backends, "")
    }

    /// A cluster whose frontend reads `toml` as its config file (empty: none).
    pub fn start_with_config(backends: usize, toml: &str) -> Cluster {
        let backends: Vec<(Node, u16)> = (0..backends).map(|_| spawn_backend()).collect();
        Cluster::start_on(backends, toml)
    }

    /// A cluster of a frontend on `backends`, already started.
    pub fn start_on(backends: Vec<(Node, u16)>, toml: &str) -> Cluster {
        Cluster::start_under(&[], backends, toml)
    }

    /// A frontend started under `launcher` (e.g. `taskset -c 0`) with these backends.
    pub fn start_under(launcher: &[&str], backends: Vec<(Node, u16)>, toml: &str) -> Cluster {
        let list: Vec<String> = backends
            .iter()
            .map(|(_, p)| format!("127.0.0.1:{p}"))
            .collect();
        let list = list.join(",");
        let mut args = vec![
            "frontend",
            "--mysql-port",
            "0",
            "--http-port",
            "0",
            "--backends",
            &list,
        ];
        let config = (!toml.is_empty()).then(|| {
            let dir = tempfile::tempdir().expect("tempdir");
            std::fs::write(dir.path().join("frontend.toml"), toml).expect("write config");
            dir
        });
        let config_path = config.as_ref().map(|d| {
            d.path()
                .join("frontend.toml")
                .to_string_lossy()
                .into_owned()
        });
        if let Some(path) = &config_path {
            args.extend(["--config", path.as_str()]);
        }
        let dir = tempfile::tempdir().expect("tempdir");
        let (frontend, (mysql_port, http_port)) =
            spawn_under(launcher, dir, &args, SECRET, parse_ready_line);
        Cluster {
            frontend,
            backends,
            mysql_port,
            http_port,
            _config: config,
        }
    }

    pub fn opts(&self) -> Opts {
        root_opts(self.mysql_port)
    }

    pub async fn connect(&self) -> Conn {
        Conn::new(self.opts())
            .await
            .expect("connect to the frontend")
    }
}

/// A frontend's MySQL port, as root over TCP.
fn root_opts(mysql_port: u16) -> Opts {
    OptsBuilder::default()
        .ip_or_hostname("127.0.0.1")
        .tcp_port(mysql_port)
        .user(Some("root"))
        .prefer_socket(false)
        .into()
}

/// Connects to a frontend (started by hand, not as a [`Cluster`]) as root.
pub async fn connect_root(mysql_port: u16) -> Conn {
    Conn::new(root_opts(mysql_port))
        .await
        .expect("connect to the frontend")
}
