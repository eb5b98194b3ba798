//! Starting, killing and restarting a real `basalt` server process for a test.

use mysql_async::prelude::*;
use mysql_async::{Conn, Opts, OptsBuilder};
use std::io::BufRead;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct TestServer {
    child: Option<Child>,
    pub data_dir: tempfile::TempDir,
    pub mysql_port: u16,
    pub http_port: u16,
    /// Run in `data_dir` with the default `./basalt-data` instead of passing --data-dir.
    default_dir: bool,
    /// A config file passed with --config (its contents may change between restarts).
    pub config: Option<PathBuf>,
    /// More command-line flags for `basalt server`.
    extra_args: Vec<String>,
}

impl TestServer {
    /// Starts a server with `--data-dir` pointing at a fresh temporary directory.
    pub async fn start() -> TestServer {
        Self::start_with(false, &[]).await
    }

    /// Like [`TestServer::start`], with more `basalt server` flags.
    pub async fn start_with_args(args: &[&str]) -> TestServer {
        Self::start_with(false, args).await
    }

    /// Starts the server the way the README does: no --data-dir, so it uses ./basalt-data under
    /// its working directory (a fresh temporary one here).
    pub async fn start_with_default_data_dir() -> TestServer {
        Self::start_with(true, &[]).await
    }

    /// Starts a server with a config file holding `toml` (beside the data, in the temporary
    /// directory); rewrite it with [`TestServer::set_config`] before a restart.
    pub async fn start_with_config(toml: &str) -> TestServer {
        let data_dir = tempfile::tempdir().expect("tempdir");
        let path = data_dir.path().join("basalt-test.toml");
        std::fs::write(&path, toml).expect("write config");
        let mut s = TestServer {
            child: None,
            data_dir,
            mysql_port: 0,
            http_port: 0,
            default_dir: false,
            config: Some(path),
            extra_args: Vec::new(),
        };
        s.spawn().await;
        s
    }

    /// Replaces the config file's contents (takes effect at the next restart).
    pub fn set_config(&self, toml: &str) {
        let path = self.config.as_ref().expect("started with a config file");
        std::fs::write(path, toml).expect("write config");
    }

    async fn start_with(default_dir: bool, args: &[&str]) -> TestServer {
        let data_dir = tempfile::tempdir().expect("tempdir");
        let mut s = TestServer {
            child: None,
            data_dir,
            mysql_port: 0,
            http_port: 0,
            default_dir,
            config: None,
            extra_args: args.iter().map(|a| a.to_string()).collect(),
        };
        s.spawn().await;
        s
    }

    fn binary() -> PathBuf {
        PathBuf::from(env!("CARGO_BIN_EXE_basalt"))
    }

    /// Starts the server on ports the OS picks (port 0) and learns them from its "ready" log line,
    /// so parallel tests never race for a port.
    async fn spawn(&mut self) {
        let mut command = Command::new(Self::binary());
        if self.default_dir {
            command.arg("server").current_dir(self.data_dir.path());
        } else {
            command
                .args(["server", "--data-dir"])
                .arg(self.data_dir.path());
        }
        if let Some(config) = &self.config {
            command.arg("--config").arg(config);
        }
        let mut child = command
            .args(["--mysql-port", "0", "--http-port", "0"])
            .args(&self.extra_args)
            .env("BASALT_LOG", "info")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start basalt");
        let stdout = child.stdout.take().expect("stdout");
        self.child = Some(child);
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout)
                .lines()
                .map_while(Result::ok)
            {
                eprintln!("[basalt] {line}");
                if let Some(ports) = parse_ready_line(&line) {
                    let _ = tx.send(ports);
                }
            }
        });
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Ok((mysql, http)) = rx.try_recv() {
                self.mysql_port = mysql;
                self.http_port = http;
                return;
            }
            if let Some(status) = self
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten())
            {
                panic!("basalt exited early: {status}");
            }
            assert!(
                Instant::now() < deadline,
                "basalt did not report ready within 60 s"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    pub fn opts(&self, user: &str, password: Option<&str>, db: Option<&str>) -> Opts {
        OptsBuilder::default()
            .ip_or_hostname("127.0.0.1")
            .tcp_port(self.mysql_port)
            .user(Some(user))
            .pass(password)
            .db_name(db)
            .prefer_socket(false)
            .into()
    }

    pub async fn connect(&self) -> Conn {
        Conn::new(self.opts("root", None, None))
            .await
            .expect("connect as root")
    }

    /// Process id of the running server.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("server running").id()
    }

    /// CPU seconds (user + system) the server process has used so far.
    pub fn cpu_seconds(&self) -> f64 {
        let stat =
            std::fs::read_to_string(format!("/proc/{}/stat", self.pid())).expect("/proc stat");
        // Fields after the command name (which is in parentheses).
        let rest = &stat[stat.rfind(')').expect("stat format") + 2..];
        let f: Vec<&str> = rest.split_whitespace().collect();
        let ticks: f64 = f[11].parse::<f64>().unwrap() + f[12].parse::<f64>().unwrap();
        ticks / 100.0
    }

    /// The server process's resident memory in bytes.
    pub fn resident_bytes(&self) -> u64 {
        let status =
            std::fs::read_to_string(format!("/proc/{}/status", self.pid())).expect("/proc status");
        let kb: u64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("VmRSS");
        kb * 1024
    }

    /// SIGKILL, no chance to clean up.
    pub fn kill9(&mut self) {
        if let Some(mut c) = self.child.take() {
            c.kill().expect("kill -9");
            let _ = c.wait();
        }
    }

    /// SIGTERM and wait for a clean exit.
    pub fn terminate(&mut self) -> std::process::ExitStatus {
        let mut c = self.child.take().expect("server running");
        let _ = Command::new("kill")
            .args(["-TERM", &c.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Ok(Some(status)) = c.try_wait() {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "basalt did not exit after SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Starts the server again on the same data directory (stopping it first if it runs).
    pub async fn restart(&mut self) {
        if self.child.is_some() {
            self.terminate();
        }
        self.spawn().await;
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.kill9();
    }
}

/// The MySQL error code of a failed statement.
pub fn code(e: mysql_async::Error) -> u16 {
    match e {
        mysql_async::Error::Server(s) => s.code,
        other => panic!("expected a server error, got {other:?}"),
    }
}

pub async fn rows(conn: &mut Conn, sql: &str) -> Vec<Vec<Option<String>>> {
    try_rows(conn, sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// The rows of `sql` as text (NULL as `None`), or its error's text.
pub async fn try_rows(conn: &mut Conn, sql: &str) -> Result<Vec<Vec<Option<String>>>, String> {
    let rows: Vec<mysql_async::Row> = conn.query(sql).await.map_err(|e| e.to_string())?;
    Ok(rows
        .into_iter()
        .map(|r| {
            (0..r.len())
                .map(|i| match r.as_ref(i) {
                    Some(mysql_async::Value::NULL) | None => None,
                    Some(mysql_async::Value::Bytes(b)) => {
                        Some(String::from_utf8_lossy(b).into_owned())
                    }
                    Some(v) => Some(v.as_sql(true).trim_matches('\'').to_string()),
                })
                .collect()
        })
        .collect())
}

pub async fn exec(conn: &mut Conn, sql: &str) {
    conn.query_drop(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
}

/// Waits (at most `timeout`) until background compaction has brought every tablet of `table`
/// down to at most `max_rowsets` rowsets; returns SHOW TABLETS' rows, or panics on timeout.
pub async fn wait_for_compaction(
    conn: &mut Conn,
    table: &str,
    max_rowsets: usize,
    timeout: Duration,
) -> Vec<Vec<Option<String>>> {
    let deadline = Instant::now() + timeout;
    loop {
        let tablets = rows(conn, &format!("SHOW TABLETS FROM {table}")).await;
        let counts: Vec<usize> = tablets
            .iter()
            .map(|r| {
                r[4].as_deref()
                    .and_then(|v| v.parse().ok())
                    .expect("RowsetCount")
            })
            .collect();
        if counts.iter().all(|c| *c <= max_rowsets) {
            return tablets;
        }
        assert!(
            Instant::now() < deadline,
            "compaction of {table} did not settle within {timeout:?}: rowsets per tablet {counts:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

pub fn s(v: &str) -> Option<String> {
    Some(v.to_string())
}

/// Ports from "... MySQL protocol on 127.0.0.1:P1, HTTP on 127.0.0.1:P2, ...".
pub fn parse_ready_line(line: &str) -> Option<(u16, u16)> {
    let port_after = |marker: &str| -> Option<u16> {
        let rest = &line[line.find(marker)? + marker.len()..];
        let addr = rest.split([',', ' ']).next()?;
        addr.rsplit(':').next()?.parse().ok()
    };
    Some((port_after("MySQL protocol on ")?, port_after("HTTP on ")?))
}

/// Runs `tests/py/<script>` with python3 against the server on `port`; the test fails, showing
/// the script's output, when the script does.
pub fn run_python_script(script: &str, port: u16, what: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/py")
        .join(script);
    let out = Command::new("python3")
        .arg(&path)
        .arg(port.to_string())
        .output()
        .expect("python3 must be installed");
    assert!(
        out.status.success(),
        "{what}:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Every file under `dir` (recursively), as a path relative to it, with its size.
pub fn files_under(dir: &std::path::Path) -> std::collections::BTreeMap<PathBuf, u64> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if let Ok(meta) = e.metadata() {
                out.insert(p.strip_prefix(dir).unwrap_or(&p).to_path_buf(), meta.len());
            }
        }
    }
    out
}
