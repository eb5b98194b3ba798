//! Doris's lambda-taking array functions as `array_map` followed by their form over the
//! lambda's results, as Doris defines them: array_filter/array_sortby/array_split/
//! array_reverse_split(λ, a, ..) = f(a, array_map(λ, a, ..)); array_exists/count/first_index/
//! last_index/match_any/match_all(λ, ..) = f(array_map(λ, ..)); array_first/array_last(λ, a) =
//! element_at(array_filter(λ, a), 1 / -1). The lambda may also come last (`array_filter(a, x ->
//! ..)`, as Spark, DuckDB and DataFusion write it). A lambda must take one parameter per array,
//! and a function that takes no lambda is refused by name: both as [`ARITY_ERROR`]`(message)`.

use crate::mysql_compat::{call, number, string};
use basalt_functions::array_lambdas::{array_map, ARITY_ERROR, FLAG_ARRAY_FUNCTIONS};
use basalt_sql::ast::{Expr, LambdaFunction};

/// DataFusion's own higher-order functions, planned by DataFusion (lambda after the array).
const DATAFUSION_HIGHER_ORDER: [&str; 7] = [
    "array_transform",
    "list_transform",
    "list_filter",
    "list_first",
    "array_any_match",
    "any_match",
    "list_any_match",
];

/// Doris's functions that take a lambda besides `array_map`.
fn takes_lambda(name: &str) -> bool {
    matches!(
        name,
        "array_first" | "array_last" | "array_split" | "array_reverse_split"
    ) || FLAG_ARRAY_FUNCTIONS.contains(&name)
}

pub(crate) fn rewrite(name: &str, args: &[Expr]) -> Option<Expr> {
    let lambda_at = args.iter().position(|a| matches!(a, Expr::Lambda(_)));
    let ours = name == array_map::NAME || takes_lambda(name);
    let refuse = |message: String| Some(call(ARITY_ERROR, vec![string(&message)]));
    let Some(at) = lambda_at else {
        return match name == array_map::NAME {
            true => refuse(format!("{name} takes a lambda, then arrays")),
            false => None,
        };
    };
    if !ours {
        if DATAFUSION_HIGHER_ORDER.contains(&name) {
            return None;
        }
        return refuse(format!("{name} does not take a lambda"));
    }
    if at != 0 && at != args.len() - 1 {
        return refuse(format!("{name} takes a lambda first, then arrays"));
    }
    if at == 0 && name == array_map::NAME && args.len() - 1 == lambda_parameters(&args[0]) {
        return None; // already the planned form
    }
    let mut ordered = args.to_vec();
    let lambda = ordered.remove(at);
    let Expr::Lambda(function) = &lambda else {
        return None;
    };
    if ordered.iter().any(|a| matches!(a, Expr::Lambda(_))) {
        return refuse(format!("{name} takes one lambda"));
    }
    Some(
        with_lambda(name, lambda.clone(), function, ordered)
            .unwrap_or_else(|message| call(ARITY_ERROR, vec![string(&message)])),
    )
}

fn lambda_parameters(lambda: &Expr) -> usize {
    match lambda {
        Expr::Lambda(function) => function.params.len(),
        _ => 0,
    }
}

/// `name(lambda, arrays..)` written over `array_map(lambda, arrays..)`.
fn with_lambda(
    name: &str,
    lambda: Expr,
    function: &LambdaFunction,
    arrays: Vec<Expr>,
) -> Result<Expr, String> {
    let parameters = function.params.len();
    if parameters != arrays.len() {
        return Err(format!(
            "{name}: the lambda takes {parameters} parameter(s) but {} array(s) follow it",
            arrays.len()
        ));
    }
    let first_array = arrays[0].clone();
    let mut mapped_args = vec![lambda];
    mapped_args.extend(arrays);
    let mapped = call(array_map::NAME, mapped_args);
    Ok(match name {
        "array_map" => mapped,
        "array_filter" | "array_sortby" | "array_split" | "array_reverse_split" => {
            call(name, vec![first_array, mapped])
        }
        "array_first" | "array_last" => {
            let kept = call("array_filter", vec![first_array, mapped]);
            let at = if name == "array_first" { 1 } else { -1 };
            call("element_at", vec![kept, number(at)])
        }
        _ => call(name, vec![mapped]),
    })
}
