//! Server configuration: defaults, the optional TOML config file, and command-line overrides.

use serde::Deserialize;
use std::path::PathBuf;

/// Everything the server needs to start.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Root of all persistent state (catalog and tablet files).
    pub data_dir: PathBuf,
    /// Address both listeners bind to.
    pub bind: String,
    pub mysql_port: u16,
    pub http_port: u16,
    /// Rows a load buffers for one tablet before it writes that load's segments.
    pub write_buffer_rows: usize,
    /// Memory a load buffers for all its tablets before it writes segments, in MB.
    pub write_buffer_mb: usize,
    /// Memory for decoded segment columns that scans share, in MB (Doris's page cache);
    /// default: 20% of the machine's memory. 0 reads every scan from the Parquet files.
    pub column_cache_mb: Option<usize>,
    /// Background compaction threads (at most this many compactions at once); 0 disables
    /// background compaction.
    pub compaction_threads: usize,
    /// How often compaction looks at every tablet even when no load woke it, in milliseconds.
    pub compaction_interval_ms: u64,
    /// A load that would give a tablet more rowsets (versions) than this fails at once with a
    /// "too many versions" error (Doris's `max_tablet_version_num`).
    pub max_tablet_versions: usize,
    /// The only directory `local(...)` may read files from (symlinks are followed and must stay
    /// inside it). Default: `<data_dir>/load_files`, created at startup.
    pub allowed_load_dir: Option<PathBuf>,
    /// Largest Stream Load body accepted, in MB (Doris's `streaming_load_max_mb`).
    pub stream_load_max_mb: u64,
    /// Memory for encoded rows that point queries share (Doris's `row_cache_mem_limit`): a
    /// percentage of the machine's memory ("5%") or a size ("512MB", "2GB", bytes); "0"
    /// disables the cache.
    pub row_cache_mem_limit: String,
    /// Memory all queries together may use (Doris's `mem_limit`): a percentage of the
    /// machine's memory or a size. Workload groups' `memory_limit` is a percentage of it.
    pub mem_limit: String,
    /// Consecutive failed logins from one user and host before each further attempt is
    /// delayed (one more second per failure); 0 never delays. `root` from the local machine is
    /// never delayed.
    pub login_failure_threshold: u32,
    /// The longest such delay, in milliseconds.
    pub login_delay_max_ms: u64,
    /// Scale-out: the secret a frontend and its backends share (at least 16 characters; the
    /// environment variable BASALT_CLUSTER_SECRET overrides it). Required by `basalt frontend`
    /// and `basalt backend`.
    pub cluster_secret: Option<String>,
    /// Scale-out: the port `basalt backend` serves the cluster on.
    pub backend_port: u16,
    /// Scale-out: the backends ("host:port") `basalt frontend` adds at startup.
    pub backends: Vec<String>,
    /// Scale-out: the most a stale replica's catch-up copies per second, in MiB (one copy
    /// runs at a time), so foreground queries and loads keep their speed; 0: unbounded.
    pub catch_up_mb_per_second: u64,
    /// Scale-out: a backend that has not answered heartbeats for this many seconds has each
    /// of its replicas re-created (cloned) on another live backend, and then leaves those
    /// tablets. Its copies share `catch_up_mb_per_second`.
    pub replica_clone_after_seconds: u64,
    /// How database and table names keep and compare their case (MySQL's and Doris's
    /// `lower_case_table_names`: 0, 1 or 2; see [`crate::name_case`]). A new data directory
    /// records it (0 when not given); it cannot change afterwards: a start giving another
    /// value is refused, one giving none uses the recorded one.
    pub lower_case_table_names: Option<u64>,
    /// New segments (loads, compactions, a backend's writes) hold JSON columns as binary
    /// documents (on by default) instead of compact text. Segments of either form are always
    /// read; the JSON path functions walk binary documents without decoding them.
    pub json_binary_segments: bool,
    /// How often the frontend brings dynamically partitioned tables (Doris's
    /// `dynamic_partition.*` properties) up to date, in seconds (Doris's
    /// `dynamic_partition_check_interval_seconds`); they are also checked at startup.
    pub dynamic_partition_check_interval_seconds: u64,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            data_dir: PathBuf::from("./basalt-data"),
            bind: "127.0.0.1".to_string(),
            mysql_port: 9030,
            http_port: 8030,
            write_buffer_rows: 1_000_000,
            write_buffer_mb: 1_024,
            column_cache_mb: None,
            compaction_threads: 1,
            compaction_interval_ms: 1_000,
            max_tablet_versions: 500,
            allowed_load_dir: None,
            stream_load_max_mb: 10_240,
            row_cache_mem_limit: "5%".to_string(),
            mem_limit: "80%".to_string(),
            login_failure_threshold: 3,
            login_delay_max_ms: 8_000,
            cluster_secret: None,
            backend_port: 9060,
            backends: Vec::new(),
            catch_up_mb_per_second: 64,
            replica_clone_after_seconds: 300,
            lower_case_table_names: None,
            json_binary_segments: true,
            dynamic_partition_check_interval_seconds: 600,
        }
    }
}

impl Config {
    /// The column cache's size in bytes: the configured MB, or a fifth of physical memory.
    pub fn column_cache_bytes(&self) -> usize {
        match self.column_cache_mb {
            Some(mb) => mb.saturating_mul(1 << 20),
            None => physical_memory_bytes().map_or(1 << 30, |m| m / 5),
        }
    }

    /// The query memory limit in bytes, from `mem_limit`.
    pub fn query_memory_bytes(&self) -> Result<usize, String> {
        parse_memory_limit(&self.mem_limit, physical_memory_bytes().unwrap_or(8 << 30))
            .filter(|b| *b > 0)
            .ok_or_else(|| {
                format!(
                    "mem_limit = {:?}: expected a percentage like \"80%\" or a size like \"8GB\"",
                    self.mem_limit
                )
            })
    }

    /// The row cache's size in bytes, from `row_cache_mem_limit`.
    pub fn row_cache_bytes(&self) -> Result<usize, String> {
        parse_memory_limit(&self.row_cache_mem_limit, physical_memory_bytes().unwrap_or(8 << 30))
            .ok_or_else(|| {
                format!(
                    "row_cache_mem_limit = {:?}: expected a percentage like \"5%\" or a size like \"512MB\"",
                    self.row_cache_mem_limit
                )
            })
    }

    /// The directory `local(...)` reads files from: the configured one, else
    /// `<data_dir>/load_files`.
    pub fn load_dir(&self) -> PathBuf {
        self.allowed_load_dir
            .clone()
            .unwrap_or_else(|| self.data_dir.join("load_files"))
    }

    /// The configured `lower_case_table_names`, if any (an error names a value other than 0, 1
    /// or 2).
    pub fn table_name_case(&self) -> Result<Option<crate::TableNameCase>, String> {
        self.lower_case_table_names
            .map(|v| {
                crate::TableNameCase::from_setting(v)
                    .ok_or_else(|| format!("lower_case_table_names = {v}: expected 0, 1 or 2"))
            })
            .transpose()
    }

    /// Parses a TOML config file's text; unknown keys are errors.
    pub fn from_toml(text: &str) -> Result<Config, String> {
        toml::from_str(text).map_err(|e| format!("config file: {e}"))
    }
}

/// A memory size: "N%" of `total`, or a number of bytes with an optional unit (K, KB, M, MB,
/// G, GB, T, TB; powers of 1024).
pub fn parse_memory_limit(text: &str, total: usize) -> Option<usize> {
    let t = text.trim();
    if let Some(pct) = t.strip_suffix('%') {
        let pct: f64 = pct.trim().parse().ok()?;
        if !(0.0..=100.0).contains(&pct) {
            return None;
        }
        return Some((total as f64 * pct / 100.0) as usize);
    }
    let upper = t.to_ascii_uppercase();
    let digits_end = upper
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(upper.len());
    let (number, unit) = upper.split_at(digits_end);
    let n: usize = number.parse().ok()?;
    let shift = match unit.trim() {
        "" | "B" => 0,
        "K" | "KB" => 10,
        "M" | "MB" => 20,
        "G" | "GB" => 30,
        "T" | "TB" => 40,
        _ => return None,
    };
    n.checked_mul(1usize << shift)
}

/// Total memory of this machine (Linux `/proc/meminfo`), if known.
pub fn physical_memory_bytes() -> Option<usize> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kb: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb.saturating_mul(1024))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_limits() {
        assert_eq!(parse_memory_limit("20%", 1000), Some(200));
        assert_eq!(parse_memory_limit("0", 1000), Some(0));
        assert_eq!(parse_memory_limit("512MB", 0), Some(512 << 20));
        assert_eq!(parse_memory_limit("2g", 0), Some(2 << 30));
        assert_eq!(parse_memory_limit("1234", 0), Some(1234));
        assert_eq!(parse_memory_limit("150%", 1000), None);
        assert_eq!(parse_memory_limit("12 parsecs", 1000), None);
        assert_eq!(parse_memory_limit("", 1000), None);
    }

    #[test]
    fn reads_config_file() {
        let c = Config::from_toml("# c\nmysql_port = 9999\ndata_dir = \"/tmp/x\"\n").unwrap();
        assert_eq!(c.mysql_port, 9999);
        assert_eq!(c.http_port, 8030);
        assert_eq!(c.data_dir, PathBuf::from("/tmp/x"));
        assert_eq!(c.compaction_threads, 1);
        assert_eq!(c.max_tablet_versions, 500);
        assert_eq!(c.load_dir(), PathBuf::from("/tmp/x/load_files"));
        let c = Config::from_toml("compaction_threads = 0\nmax_tablet_versions = 20\n").unwrap();
        assert_eq!((c.compaction_threads, c.max_tablet_versions), (0, 20));
        let c = Config::from_toml("allowed_load_dir = \"/srv/in\"").unwrap();
        assert_eq!(c.load_dir(), PathBuf::from("/srv/in"));
        assert!(Config::from_toml("nope = 1").is_err());
        let c = Config::from_toml("row_cache_mem_limit = \"64MB\"").unwrap();
        assert_eq!(c.row_cache_bytes().unwrap(), 64 << 20);
        let c = Config::from_toml("row_cache_mem_limit = \"lots\"").unwrap();
        assert!(c.row_cache_bytes().is_err());
        assert!(Config::from_toml("mysql_port = x").is_err());
        assert_eq!(c.table_name_case(), Ok(None));
        let c = Config::from_toml("lower_case_table_names = 2").unwrap();
        assert_eq!(
            c.table_name_case(),
            Ok(Some(crate::TableNameCase::Insensitive))
        );
        let c = Config::from_toml("lower_case_table_names = 3").unwrap();
        assert!(c.table_name_case().is_err());
    }
}
