//! Doris's VARIANT in queries: `v['a']['b']` reads the value at a path of a VARIANT column
//! ([`element`], planned by [`VariantSubscriptPlanner`]; NULL where the path is missing or holds
//! JSON null), and `variant_type(v)` names the JSON type of a value ([`type_name`]). Values read
//! at a path are VARIANT values carried as text (see `basalt_common::variant`), so CAST,
//! comparisons and arithmetic read them as Basalt reads text: `v['n'] + 1` and `v['n'] > 9` take
//! the number, `CAST(v['s'] AS STRING) = 'x'` the string.

pub(crate) mod element;
mod planner;
mod type_name;

pub use planner::VariantSubscriptPlanner;

use datafusion::logical_expr::ScalarUDF;

/// The VARIANT functions a query may name.
pub fn functions() -> Vec<ScalarUDF> {
    vec![type_name::function()]
}
