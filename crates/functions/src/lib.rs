//! Basalt's Doris-compatible SQL functions for DataFusion: BITMAP, HLL and QUANTILE_STATE values
//! (Arrow `Binary` holding the `basalt_common::bitmap_value` / `hll_value` / `quantile_value`
//! formats) with their scalar functions
//! and aggregates, the statistics aggregates under Doris names and semantics, and MySQL's
//! checked integer arithmetic and exact integer SUMs.
//!
//! Everything is registered with [`register_all`]; registering after DataFusion's defaults makes
//! Doris's meaning win where names clash (`stddev` and `variance` are population statistics).

mod aes_crypt;
mod array_apply;
mod array_building;
mod array_compact;
mod array_cum_sum;
mod array_difference;
pub mod array_lambdas;
mod array_matching;
mod array_positions;
pub mod array_range;
pub mod array_slicing;
mod array_text;
mod arrays_overlap;
mod asof_joins;
mod assert_true;
mod avg_weighted;
mod base64_text;
mod base_conversion;
mod benchmark;
mod bigint_arithmetic;
pub mod binary_casts;
mod bit_aggregates;
mod bit_not;
mod bit_value_numbers;
mod bitmap_agg;
mod bitmap_arrays;
pub mod bitmap_cast;
mod bitmap_count_distinct;
mod bitmap_expressions;
mod bitmap_scalar;
mod bitmap_subsets;
mod bits;
mod boolean_casts;
mod byte_length;
mod calendar_days;
mod char_codes;
pub mod charset_conversion;
mod charset_info;
mod checked_arithmetic;
mod checked_doubles;
mod checksums;
mod coerced_text_dates;
mod collect;
mod compound_extract;
mod compression;
mod convert_to;
mod count_arguments;
mod count_by_enum;
mod covariance;
pub mod date_arguments;
pub mod date_arith;
mod date_number;
pub mod date_range;
pub mod date_round;
mod datetime_to_text;
mod digests;
mod division_digits;
mod doris_arrays_more;
mod doris_calendar;
mod doris_numbers;
mod doris_strings;
mod doris_text_search;
mod doris_trims;
mod element_at;
mod empty_lists;
mod entropy;
mod exact_division;
mod expr_rules;
pub use expr_rules::{is_comparison, rewrite_node_expressions};
mod extremum_by;
pub mod foreach;
mod fraction_digits;
pub mod full_text;
mod funnel;
pub mod generated_columns;
mod geo;
mod geomean;
mod group_array_intersect;
mod group_concat;
pub mod group_concat_cut;
mod hamming_distance;
mod hex;
mod histogram;
mod hll;
mod implicit_casts;
pub mod integral_casts;
mod intersect_count;
mod interval_index;
mod ip;
mod json;
mod json_object_entries;
pub mod like;
mod like_escapes;
mod linear_histogram;
mod list_reverse;
mod list_rows;
mod logical_not;
mod lossy_cast_comparisons;
mod map_agg;
pub mod map_building;
mod map_entry_lookup;
mod member_numbers;
pub mod mixed_result_types;
mod moments;
mod money_format;
mod multi_match;
pub mod murmur3;
mod murmur_hash;
mod mysql_comparisons;
mod mysql_crypt;
mod mysql_rand;
mod mysql_rounding;
mod mysql_time_format;
mod mysql_values;
mod named_cast;
mod negation;
mod nested_casts;
mod null_concat;
mod null_fallbacks;
mod nullable_sort_keys;
pub mod nullable_value;
mod number_format;
mod number_sign;
mod numeric_dates;
mod partition_names;
mod percentile;
mod percentile_approx;
mod percentile_array;
mod quantile_state;
mod random_values;
mod regexp_extract;
mod regexp_split;
mod row_regex;
mod signed_times;
pub mod single_row;
mod sketch_base64;
mod sketch_fields;
mod sleep;
mod stats;
mod string_edits;
mod string_lists;
mod string_order;
pub mod string_size;
mod struct_element;
mod substring;
mod tdigest;
mod temporal_avg;
pub mod temporal_digits;
mod temporal_numbers;
mod temporal_rounding;
pub mod temporal_text;
mod text_arguments;
mod text_date_comparisons;
mod text_date_shift;
mod text_format;
mod text_negation;
mod text_number_comparisons;
mod time_arith;
mod time_beside_dates;
pub mod time_cast;
mod time_intervals;
mod type_names;
mod union_types;
pub mod unix_seconds;
mod unsigned_casts;
pub use text_arguments::{
    register as accept_numbers_as_text, wrapped as numbers_as_text_functions, TextSubstringPlanner,
};
mod time_spans;
pub mod time_zones;
mod topn;
mod url_codec;
mod url_functions;
mod url_parts;
mod util;
mod uuid_numbers;
mod value_counts;
mod variance;
mod variant;
mod vector_distance;
mod week_modes;
mod wide_sum;
mod xpath_string;

#[cfg(test)]
mod sql_tests;

pub use bigint_arithmetic::BigintArithmetic;
pub use bit_value_numbers::{BitValueNumbers, BitValueNumbersPlanner};
pub use bitmap_count_distinct::BitmapCountDistinct;
pub use charset_info::COERCIBILITY as MYSQL_COERCIBILITY;
pub use checked_arithmetic::CheckedIntegerArithmetic;
pub use count_arguments::NAME as MYSQL_COUNT;
use datafusion::logical_expr::{AggregateUDF, ScalarUDF};
pub use datetime_to_text::{datetime_text, DatetimeTextCasts};
pub use empty_lists::NAME as EMPTY_LIST_IF_NULL;
pub use like_escapes::LikeEscapes;
pub use member_numbers::{function as enum_number, NAME as ENUM_NUMBER};
pub use mixed_result_types::{MixedQuotientTypes, MixedResultTypes};
pub use mysql_comparisons::{ComparisonsPlanner, MySqlComparisons};
pub use mysql_rounding::function_name as mysql_rounding_function;
pub use negation::NAME as MYSQL_NEGATE;
pub use text_negation::NAME as MYSQL_NEGATE_TEXT;
pub mod wire;
pub use asof_joins::{AsofJoins, ASOF_MATCH};
pub use binary_casts::BinaryCasts;
pub use boolean_casts::BooleanCasts;
pub use coerced_text_dates::CoercedTextDates;
use datafusion::prelude::SessionContext;
pub use division_digits::DivisionDigits;
pub use exact_division::{ExactDivision, MySqlOptions};
pub use implicit_casts::{ImplicitCasts, StringArithmeticPlanner};
pub use integral_casts::IntegralCastOperands;
pub use ip::IpCoercion;
pub use json::{reads_json_paths, JsonOperatorPlanner};
pub use list_reverse::ListReverse;
pub use lossy_cast_comparisons::LossyCastComparisons;
pub use named_cast::NAMED_CAST;
pub use nested_casts::{without_metadata, NestedCasts, TEXT_TO_NESTED};
pub use nullable_sort_keys::OuterJoinSortKeys;
pub use numeric_dates::{CoercedNumberDates, NumericDates, NumericDatesPlanner};
pub use signed_times::SignedTimeCasts;
pub use temporal_numbers::TemporalNumbers;
pub use time_beside_dates::{TimeBesideDates, TimeBesideDatesPlanner};
pub use time_intervals::TimeIntervals;
pub use unsigned_casts::UnsignedCasts;
pub use variant::VariantSubscriptPlanner;

/// Every scalar function: the BITMAP and HLL scalars, MySQL's date range guard, the
/// size-bounded REPEAT/LPAD/RPAD, Doris's element_at, HEX/UNHEX, the IP address functions and
/// more.
pub fn scalar_functions() -> Vec<ScalarUDF> {
    let mut v = bitmap_scalar::functions();
    v.extend(array_lambdas::scalar_functions());
    v.extend(bitmap_arrays::functions());
    v.extend(bitmap_subsets::functions());
    v.push(bitmap_cast::function());
    v.extend(hll::scalar_functions());
    v.extend(quantile_state::scalar_functions());
    v.push(date_range::function());
    v.push(asof_joins::function().clone());
    v.push(xpath_string::function());
    v.push(partition_names::function());
    v.push(type_names::function());
    v.push(text_format::function());
    v.push(date_arguments::function().clone());
    v.extend(date_arith::functions());
    v.extend(date_round::functions());
    v.push(time_zones::function());
    v.extend(logical_not::functions());
    v.push(named_cast::function());
    v.push(bit_not::function());
    v.push(null_concat::function());
    v.push(like_escapes::function());
    v.push(mysql_comparisons::function());
    v.push(money_format::function());
    v.push(binary_casts::width_function().clone());
    v.push(group_concat_cut::function().clone());
    v.push(integral_casts::signed_function().clone());
    v.push(integral_casts::unsigned_function().clone());
    v.push(time_cast::function().clone());
    v.push(time_cast::strict_function().clone());
    v.extend(time_spans::functions());
    v.extend(time_arith::functions());
    v.extend(bits::functions());
    v.extend(string_size::functions());
    v.push(sleep::function());
    v.push(single_row::function());
    v.push(nullable_value::function());
    v.push(unix_seconds::function());
    v.push(substring::function());
    v.push(element_at::function());
    v.extend(hex::functions());
    v.extend(json::functions());
    v.extend(nested_casts::functions());
    v.extend(mysql_time_format::functions());
    v.push(fraction_digits::function());
    v.push(byte_length::function());
    v.extend(murmur_hash::functions());
    v.extend(regexp_extract::functions());
    v.push(assert_true::function());
    v.extend(doris_arrays_more::functions());
    v.extend(doris_calendar::functions());
    v.extend(doris_numbers::functions());
    v.extend(doris_strings::functions());
    v.extend(doris_text_search::functions());
    v.extend(uuid_numbers::functions());
    v.extend(array_apply::functions());
    v.extend(arrays_overlap::functions());
    v.extend(hamming_distance::functions());
    v.extend(map_entry_lookup::functions());
    v.extend(regexp_split::functions());
    v.extend(url_codec::functions());
    v.extend(url_functions::functions());
    v.extend(digests::functions());
    v.extend(sketch_base64::functions());
    v.extend(doris_trims::functions());
    v.push(json_object_entries::function());
    v.push(array_difference::function());
    v.push(array_compact::function());
    // Doris's ARRAY and MAP builders, slices, positions and comparisons.
    v.extend(array_building::functions());
    v.extend(array_slicing::functions());
    v.extend(array_positions::functions());
    v.extend(array_matching::functions());
    v.push(array_cum_sum::function());
    v.push(array_range::function());
    v.extend(map_building::functions());
    v.push(empty_lists::function());
    v.extend(geo::functions());
    v.extend(ip::functions());
    v.extend(ip::value_functions::functions());
    v.extend(week_modes::functions());
    v.extend(calendar_days::functions());
    v.extend(vector_distance::functions());
    v.push(struct_element::function());
    v.extend(variant::functions());
    // MySQL's string, number-formatting and rounding functions.
    v.extend(string_edits::functions());
    v.extend(string_lists::functions());
    v.push(interval_index::function());
    v.push(member_numbers::function());
    v.extend(checksums::functions());
    v.extend(compression::functions());
    v.push(multi_match::function());
    v.extend(full_text::functions());
    v.extend(aes_crypt::functions());
    v.extend(mysql_crypt::functions());
    v.extend(base64_text::functions());
    v.extend(char_codes::functions());
    v.push(string_order::function());
    v.extend(charset_info::functions());
    v.push(charset_conversion::function());
    v.extend(random_values::functions());
    v.extend(convert_to::functions());
    v.push(benchmark::function());
    v.push(base_conversion::function());
    v.push(number_format::function());
    v.push(number_sign::function());
    v.extend(mysql_rounding::functions());
    v.push(count_arguments::function());
    v.push(mysql_rand::function());
    v.push(text_negation::function());
    v.push(negation::function().clone());
    v.push(compound_extract::function());
    v
}

/// Every aggregate: BITMAP, `intersect_count`, HLL, the statistics aggregates (and kurtosis,
/// skewness), the exact integer `sum`, the funnel family, `max_by`/`min_by`, the
/// `group_bit_*` family, and the counting ones (`topn*`, `histogram`, `count_by_enum`,
/// `map_agg`, `collect_list`/`collect_set` with a size, `group_concat`).
pub fn aggregate_functions() -> Vec<AggregateUDF> {
    let mut v = bitmap_agg::functions();
    v.push(intersect_count::function());
    v.push(intersect_count::bitmap_function());
    v.extend(bitmap_expressions::aggregate_functions());
    v.extend(hll::aggregate_functions());
    v.extend(quantile_state::aggregate_functions());
    v.extend(linear_histogram::aggregate_functions());
    v.extend(stats::functions());
    v.push(percentile::function());
    v.push(wide_sum::function());
    v.push(temporal_avg::function());
    v.extend(funnel::functions());
    v.extend(moments::functions());
    v.push(entropy::function());
    v.push(group_array_intersect::function());
    v.extend(
        extremum_by::functions()
            .into_iter()
            .map(ip::aggregates::keeps_addresses),
    );
    v.extend(bit_aggregates::functions());
    v.push(percentile_array::function());
    v.push(avg_weighted::function());
    v.push(geomean::function());
    v.extend(
        topn::functions()
            .into_iter()
            .map(ip::aggregates::keeps_addresses),
    );
    v.push(histogram::function());
    v.push(count_by_enum::function());
    v.push(map_agg::function());
    v.extend(
        collect::functions()
            .into_iter()
            .map(ip::aggregates::keeps_addresses),
    );
    v.push(group_concat::function());
    v.extend(json::aggregate_functions());
    v.extend(percentile_approx::functions());
    // DataFusion's max, min, array_agg and nth_value, keeping IPV4 / IPV6 values' type.
    v.extend(ip::aggregates::functions());
    v
}

/// Registers everything on a SessionContext that has DataFusion's defaults (later
/// registrations override DataFusion's same-named built-ins, e.g. Doris's `variance` =
/// population variance). The functions are built once per process and registered in the same
/// order every time: a backend builds a session for every task it runs.
pub fn register_all(ctx: &SessionContext) {
    let (scalars, aggregates) = all_functions();
    for f in scalars {
        ctx.register_udf(f.clone());
    }
    for f in aggregates {
        ctx.register_udaf(f.clone());
    }
    for f in array_lambdas::higher_order_functions() {
        ctx.register_higher_order_function(f);
    }
}

/// Every scalar and aggregate function in registration order, built on first use over a
/// session with DataFusion's defaults.
fn all_functions() -> &'static (Vec<ScalarUDF>, Vec<AggregateUDF>) {
    static FUNCTIONS: std::sync::OnceLock<(Vec<ScalarUDF>, Vec<AggregateUDF>)> =
        std::sync::OnceLock::new();
    FUNCTIONS.get_or_init(|| {
        let registry = SessionContext::new();
        let mut scalars = scalar_functions();
        for f in &scalars {
            registry.register_udf(f.clone());
        }
        let mut aggregates = aggregate_functions();
        for f in &aggregates {
            registry.register_udaf(f.clone());
        }
        // Last: `<aggregate>_foreach` for every aggregate registered above, and the string
        // functions that take numbers as text, wrapping those registered above.
        aggregates.extend(foreach::functions(&registry));
        scalars.extend(numbers_as_text_functions(&registry));
        (scalars, aggregates)
    })
}
