//! MySQL's server tuning variables that applications, ORMs and test suites set per session
//! (buffer and cache sizes, optimizer switches, slow-log settings): accepted, stored and shown
//! with MySQL 8.0's defaults, acted on by nothing. Basalt sizes its memory by workload groups
//! (`exec_mem_limit`, the group's memory limit), plans with its own optimizer, and keeps no
//! slow log, so a script that tunes MySQL runs unchanged instead of stopping at error 1193.
//! Variables whose value changes an answer (`default_week_format`, `lc_time_names`,
//! `cte_max_recursion_depth`, ...) are deliberately not here: storing them without acting
//! would answer differently from MySQL without saying so.

use crate::doris_variables::stored;
use crate::variables::{VarDef, VarKind::*};

/// MySQL 8.0's `optimizer_switch` default (a `SET` stores the text given, without MySQL's
/// merging of single flags into the current list).
const OPTIMIZER_SWITCH: &str = "index_merge=on,index_merge_union=on,index_merge_sort_union=on,\
index_merge_intersection=on,engine_condition_pushdown=on,index_condition_pushdown=on,mrr=on,\
mrr_cost_based=on,block_nested_loop=on,batched_key_access=off,materialization=on,semijoin=on,\
loosescan=on,firstmatch=on,duplicateweedout=on,subquery_materialization_cost_based=on,\
use_index_extensions=on,condition_fanout_filter=on,derived_merge=on,use_invisible_indexes=off,\
skip_scan=on,hash_join=on,subquery_to_derived=off,prefer_ordering_index=on,\
hypergraph_optimizer=off,derived_condition_pushdown=on";

/// Sorted by name.
pub static MYSQL_SERVER_VARIABLES: &[VarDef] = &[
    stored("bulk_insert_buffer_size", Int, "8388608"),
    stored("connect_timeout", Int, "10"),
    stored("eq_range_index_dive_limit", Int, "200"),
    stored("innodb_lock_wait_timeout", Int, "50"),
    stored("join_buffer_size", Int, "262144"),
    stored("lock_wait_timeout", Int, "31536000"),
    stored("long_query_time", Str, "10.000000"),
    stored("max_heap_table_size", Int, "16777216"),
    stored("max_length_for_sort_data", Int, "4096"),
    stored("max_sort_length", Int, "1024"),
    stored("optimizer_prune_level", Int, "1"),
    stored("optimizer_search_depth", Int, "62"),
    stored("optimizer_switch", Str, OPTIMIZER_SWITCH),
    stored("optimizer_trace", Str, "enabled=off,one_line=off"),
    stored("range_optimizer_max_mem_size", Int, "8388608"),
    stored("read_buffer_size", Int, "131072"),
    stored("read_rnd_buffer_size", Int, "262144"),
    stored("slow_query_log", Bool, "0"),
    stored("sort_buffer_size", Int, "262144"),
    stored("table_definition_cache", Int, "2000"),
    stored("table_open_cache", Int, "4000"),
    stored("tmp_table_size", Int, "16777216"),
    stored("updatable_views_with_limit", Str, "YES"),
];
