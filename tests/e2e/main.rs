//! End-to-end tests: each test starts the real `basalt` binary on free ports with its own data
//! directory and talks to it over TCP with the `mysql_async` driver.

mod cluster_harness;
mod harness;

mod analytics;
mod backend_failures;
mod basics;
mod clients;
mod compaction;
mod durability;
mod json_storage;
mod local_files;
mod models;
mod privileges;
mod procedures;
mod query_retry;
mod replica_moves;
mod replica_writes;
mod robustness;
mod scale_out;
mod scale_out_tpch;
mod scan;
mod schema_change;
mod serving;
mod show_proc;
mod stream_load;
mod table_name_case;
mod temporary_tables;
mod tools;
mod tpch_answers;
mod tpch_data;
mod transactions;
mod workload;
mod workload_limits;
