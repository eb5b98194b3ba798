//! Doris's higher-order array functions. `array_map(lambda, arrays..)` is the one function that
//! evaluates a lambda ([`array_map`]); Doris's other lambda-taking functions are it followed by
//! a function over the array of the lambda's results ([`flag_arrays`]), which are also those
//! functions' forms without a lambda. The frontend writes the lambda forms that way.

mod arity_error;
pub mod array_map;
mod flag_arrays;

pub use arity_error::NAME as ARITY_ERROR;
pub use flag_arrays::NAMES as FLAG_ARRAY_FUNCTIONS;

use datafusion::logical_expr::{HigherOrderUDF, ScalarUDF};
use std::sync::Arc;

/// The scalar functions over arrays of flags or keys.
pub fn scalar_functions() -> Vec<ScalarUDF> {
    let mut v = flag_arrays::functions();
    v.push(arity_error::function());
    v
}

/// The higher-order functions (that take a lambda).
pub fn higher_order_functions() -> Vec<Arc<HigherOrderUDF>> {
    vec![array_map::function()]
}
