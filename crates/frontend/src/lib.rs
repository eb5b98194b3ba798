//! The frontend: sessions and the statements they run. Parses SQL (the only crate that does),
//! dispatches each statement — queries and INSERT through DataFusion over basalt-query's tables,
//! DDL to the catalog, loads to basalt-load, SET/SHOW/KILL and workload administration here —
//! and keeps variables, prepared statements, the short-circuit point-query path and
//! information_schema.

mod access;
mod alter_declared_order;
mod alter_mysql_forms;
mod ambiguous_aliases;
mod asof_joins;
mod backend_failover;
mod backends;
mod bit_literals;
mod cache_memory;
mod cast_names;
mod catalog_provider;
mod charset_conversions;
mod collations;
mod column_origins;
mod constant_not_in;
mod create_table_as;
mod cte_column_lists;
mod ddl_text;
mod derived_order;
mod distinct_tuples;
mod doris_aliases;
mod doris_more_spellings;
mod doris_spellings;
mod doris_variables;
mod dynamic_partitions;
mod engine;
mod fetch_first;
mod found_rows;
mod frontend_config;
mod frontend_node;
mod function_aliases;
mod function_library;
mod functions;
#[cfg(test)]
mod fuzz_tests;
mod grants;
mod grouping;
mod having_filter;
mod identifier_case;
mod information_schema;
mod isolation;
mod join_dependence;
mod join_hints;
mod join_operators;
mod join_view_writes;
mod lambda_calls;
mod lateral_views;
mod lenient_insert;
mod limit_clause;
mod load_context;
mod local_calls;
mod local_node;
mod login;
mod mariadb_server_variables;
mod merged_columns;
mod mysql_compat;
mod mysql_server_variables;
mod named_locks;
mod named_windows;
mod nullable_subqueries;
mod numbers_table;
mod order_keys;
mod order_positions;
mod output;
mod own_level;
mod partition_selection;
mod planning_budget;
mod planning_lane;
mod point_query;
mod prepared;
mod procedures;
mod process_admin;
pub mod processes;
mod profile;
mod quantified_comparisons;
mod query_shapes;
mod read_snapshot;
mod recursive_with;
mod result_column_types;
mod result_names;
mod row_assignments;
mod row_count;
mod row_subqueries;
mod schema_change;
mod server_status;
mod session;
mod session_clock;
mod shadowed_ctes;
mod show;
mod show_proc;
mod show_rows;
mod statement;
mod statement_limits;
mod statement_timeout;
mod system_databases;
mod table_def;
mod table_keys;
mod tableless_subqueries;
mod temporary_tables;
mod transaction;
mod user_variables;
mod using_joins;
mod variable_literals;
mod variables;
mod view_columns;
mod view_merge;
mod view_writes;
mod views;
mod warnings;
mod where_aggregates;
mod wildcard_columns;
mod wildcard_qualifiers;
mod workload_groups;
mod workload_policies;

/// The secret a cluster's frontend shares with its backends.
pub use basalt_dist::ClusterSecret;
pub use basalt_load::{LoadDir, StreamLoadRequest, StreamLoadResult};

/// The statements of a multi-statement text, in order.
pub fn split_statements(sql: &str) -> Vec<String> {
    basalt_sql::split_statements(sql)
        .into_iter()
        .map(str::to_string)
        .collect()
}
pub use engine::{PreparedInfo, QueryEngine};
pub use login::LoginPolicy;
pub use output::{BatchStream, Output};
pub use session::Session;
pub use show_proc::ListenAddresses;
pub use statement::{local_infile_name, ParsedStatement};
pub use variables::{SessionVariables, VarValue, SERVER_VERSION};
