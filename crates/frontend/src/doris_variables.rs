//! Doris's session variables that Basalt accepts, stores and shows but does not act on: planner
//! switches (`enable_nereids_planner`), engine tuning (`batch_size`, runtime filters, pipeline
//! and spill switches) and the like, which Doris's own scripts and regression suites set on
//! their first lines. They keep Doris's defaults; setting one changes nothing but its value.
//! The variables Basalt does act on live in `variables::VARIABLES`.
//!
//! MySQL's switches that dump and migration tools set and restore around their work
//! (`unique_checks`, `foreign_key_checks`, `sql_notes`, `sql_quote_show_create`, ..) are stored
//! the same way: Basalt has no foreign keys or secondary unique checks to switch off, and SHOW
//! CREATE TABLE always quotes names.

use crate::variables::{Scope::Both, VarDef, VarKind::*};

/// A variable kept in both scopes with `default`, acted on by nothing.
pub(crate) const fn stored(
    name: &'static str,
    kind: crate::variables::VarKind,
    default: &'static str,
) -> VarDef {
    VarDef {
        name,
        kind,
        scope: Both,
        default,
    }
}

/// MySQL's switches for tools, sorted by name.
pub static MYSQL_TOOL_VARIABLES: &[VarDef] = &[
    stored("big_tables", Bool, "0"),
    stored("character_set_filesystem", Str, "binary"),
    stored("explicit_defaults_for_timestamp", Bool, "1"),
    stored("foreign_key_checks", Bool, "1"),
    stored("information_schema_stats_expiry", Int, "0"),
    stored("sql_big_selects", Bool, "1"),
    stored("sql_buffer_result", Bool, "0"),
    stored("sql_log_bin", Bool, "1"),
    stored("sql_notes", Bool, "1"),
    stored("sql_quote_show_create", Bool, "1"),
    stored("sql_warnings", Bool, "0"),
    stored("unique_checks", Bool, "1"),
];

/// Sorted by name.
pub static DORIS_VARIABLES: &[VarDef] = &[
    stored("batch_size", Int, "4064"),
    stored("debug_skip_fold_constant", Bool, "0"),
    stored("default_order_by_limit", Int, "-1"),
    stored("delete_without_partition", Bool, "0"),
    stored("disable_colocate_plan", Bool, "0"),
    stored("disable_join_reorder", Bool, "0"),
    stored("disable_nereids_rules", Str, ""),
    stored("dry_run_query", Bool, "0"),
    stored("enable_agg_spill", Bool, "0"),
    stored("enable_auto_analyze", Bool, "1"),
    stored("enable_auto_create_when_overwrite", Bool, "0"),
    stored("enable_bucket_shuffle_join", Bool, "1"),
    stored("enable_common_expr_pushdown", Bool, "1"),
    stored("enable_cost_based_join_reorder", Bool, "0"),
    stored("enable_decimal256", Bool, "0"),
    stored("enable_dphyp_optimizer", Bool, "0"),
    stored("enable_fallback_to_original_planner", Bool, "0"),
    stored("enable_fold_constant_by_be", Bool, "0"),
    stored("enable_fold_nondeterministic_fn", Bool, "0"),
    stored("enable_force_spill", Bool, "0"),
    stored("enable_infer_predicate", Bool, "1"),
    stored("enable_insert_strict", Bool, "1"),
    stored("enable_inverted_index_query", Bool, "1"),
    stored("enable_join_spill", Bool, "0"),
    stored("enable_local_exchange", Bool, "1"),
    stored("enable_materialized_view_rewrite", Bool, "1"),
    stored("enable_nereids_dml", Bool, "1"),
    stored("enable_nereids_planner", Bool, "1"),
    stored("enable_partition_cache", Bool, "0"),
    stored("enable_partition_topn", Bool, "1"),
    stored("enable_pipeline_engine", Bool, "1"),
    stored("enable_pipeline_x_engine", Bool, "1"),
    stored("enable_projection", Bool, "1"),
    stored("enable_query_cache", Bool, "0"),
    stored("enable_runtime_filter_prune", Bool, "1"),
    stored("enable_share_hash_table_for_broadcast_join", Bool, "1"),
    stored("enable_sort_spill", Bool, "0"),
    stored("enable_spilling", Bool, "0"),
    stored("enable_sql_cache", Bool, "0"),
    stored("enable_stats", Bool, "1"),
    stored("enable_strict_consistency_dml", Bool, "1"),
    stored("enable_two_phase_read_opt", Bool, "1"),
    stored("enable_unique_key_partial_update", Bool, "0"),
    stored("enable_vectorized_engine", Bool, "1"),
    stored("experimental_enable_pipeline_engine", Bool, "1"),
    stored("experimental_enable_pipeline_x_engine", Bool, "1"),
    stored("forward_to_master", Bool, "1"),
    stored("group_concat_max_len", Int, "2147483646"),
    stored("load_mem_limit", Int, "0"),
    stored("max_pushdown_conditions_per_column", Int, "1024"),
    stored("max_scan_key_num", Int, "48"),
    stored("parallel_exchange_instance_num", Int, "-1"),
    stored("parallel_fragment_exec_instance_num", Int, "8"),
    stored("partition_pruning_expand_threshold", Int, "10"),
    stored("profile_level", Int, "1"),
    stored("rewrite_or_to_in_predicate_threshold", Int, "2"),
    stored("runtime_bloom_filter_size", Int, "2097152"),
    stored("runtime_filter_max_in_num", Int, "1024"),
    stored("runtime_filter_mode", Str, "GLOBAL"),
    stored("runtime_filter_type", Str, "IN_OR_BLOOM_FILTER,MIN_MAX"),
    stored("runtime_filter_wait_time_ms", Int, "1000"),
    stored("send_batch_parallelism", Int, "1"),
    stored("show_hidden_columns", Bool, "0"),
    stored("skip_delete_bitmap", Bool, "0"),
    stored("skip_delete_predicate", Bool, "0"),
    stored("skip_delete_sign", Bool, "0"),
    stored("skip_storage_engine_merge", Bool, "0"),
    stored("sql_dialect", Str, "doris"),
    stored("topn_opt_limit_threshold", Int, "1024"),
    stored("trace_nereids", Bool, "0"),
    stored("truncate_char_or_varchar_columns", Bool, "0"),
];
