//! Basalt's SQL surface: a parser that accepts MySQL statements (via `sqlparser`'s MySQL dialect)
//! plus Doris DDL (key models, PARTITION BY, DISTRIBUTED BY, PROPERTIES), users, privileges and roles,
//! and turns text into typed [`Statement`]s.

mod alter;
mod alter_options;
mod asof_joins;
mod calls;
mod charset_forms;
mod column_forms;
mod compound;
mod compound_intervals;
mod ddl;
mod delete_forms;
mod dialect;
mod error;
mod group_by_order;
mod in_lists;
mod insert_labels;
mod join_lists;
mod lexer;
mod load_data;
mod locking_reads;
mod map_literals;
mod multi_update;
mod mysql_forms;
mod operator_forms;
mod parenthesized;
mod parser;
mod partition_words;
mod privileges;
mod query_bytes;
mod routines;
mod set_statement;
mod set_transaction;
mod sp_body;
mod statement;
mod string_escapes;
mod table_constraints;
mod table_options;
mod tool_statements;
mod trim_forms;
mod view_forms;
mod words;
mod workload;

pub use asof_joins::INNER_MARK as ASOF_INNER_MARK;
pub use calls::function_call;
pub use compound::procedure_statements;
pub use ddl::unique_column_index;
pub use dialect::SqlSyntax;
pub use lexer::{split_statements, MYSQL_VERSION_ID};
pub use parenthesized::parenthesized;
pub use parser::{
    parse_one, parse_one_with, parse_statements, parse_statements_with, placeholder_offsets,
};
pub use partition_words::{temporary_partition, TEMPORARY_MARK};
pub use query_bytes::query_text;
pub use sp_body::{parse_function_body, parse_procedure_body, SpCondition, SpStatement};
pub use statement::*;

/// Re-export of the sqlparser AST so downstream crates share one version of it.
pub use sqlparser::ast;
