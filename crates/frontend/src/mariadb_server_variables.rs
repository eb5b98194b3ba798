//! MariaDB's session tuning variables that its regression tests and tools set (optimizer
//! statistics and selectivity levels, join cache level, in-memory temporary table size, note
//! verbosity, compatibility modes), and MySQL's connection-limit and ALTER switches: accepted,
//! stored and shown with MariaDB 10.11's (MySQL 8.0's) defaults, acted on by nothing. Basalt
//! plans with its own optimizer and keeps its own statistics, so a script tuning these runs on
//! instead of stopping at error 1193. As in `mysql_server_variables`, variables whose value
//! would change an answer are not here.

use crate::doris_variables::stored;
use crate::variables::{VarDef, VarKind::*};

/// Sorted by name.
pub static MARIADB_SERVER_VARIABLES: &[VarDef] = &[
    stored("expensive_subquery_limit", Int, "100"),
    stored("histogram_size", Int, "254"),
    stored("join_cache_level", Int, "2"),
    stored("max_statement_time", Str, "0.000000"),
    stored("max_user_connections", Int, "0"),
    stored("myisam_stats_method", Str, "NULLS_UNEQUAL"),
    stored("note_verbosity", Str, "basic,explain"),
    stored("old_alter_table", Bool, "0"),
    stored("old_mode", Str, "UTF8_IS_UTF8MB3"),
    stored(
        "optimizer_adjust_secondary_key_costs",
        Str,
        "fix_reuse_range_for_ref,fix_card_multiplier",
    ),
    stored("optimizer_use_condition_selectivity", Int, "4"),
    stored("tmp_memory_table_size", Int, "16777216"),
    stored("use_stat_tables", Str, "PREFERABLY_FOR_QUERIES"),
];
