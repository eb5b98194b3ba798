//! Doris's `group_bit_and` / `group_bit_or` / `group_bit_xor`: DataFusion's `bit_and`,
//! `bit_or` and `bit_xor` (the bitwise AND / OR / XOR of a group's integers, NULLs skipped)
//! under Doris's names.

use datafusion::functions_aggregate::bit_and_or_xor::{bit_and_udaf, bit_or_udaf, bit_xor_udaf};
use datafusion::logical_expr::AggregateUDF;

/// The three aggregates, each also known by its Doris name.
pub fn functions() -> Vec<AggregateUDF> {
    vec![
        (*bit_and_udaf()).clone().with_aliases(["group_bit_and"]),
        (*bit_or_udaf()).clone().with_aliases(["group_bit_or"]),
        (*bit_xor_udaf()).clone().with_aliases(["group_bit_xor"]),
    ]
}
