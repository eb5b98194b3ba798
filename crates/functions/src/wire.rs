//! Scalar functions that analyzer rules build (implicit string-to-number, number-to-date and
//! string-to-date conversions, checked integer arithmetic, MySQL's `/` (shown and kept), the
//! marks keeping the IPV4 / IPV6 type through COALESCE and CASE, VARIANT subscripts) are in no
//! registry, yet plan fragments name them when they travel to another node. Those with a parameter (a
//! result type, the decimals `/` adds) take it from the call's own result type, which travels
//! with the call, so one registered instance per name runs every call: [`fragment_functions`]
//! are those instances, for the nodes that run fragments.

use datafusion::arrow::datatypes::DataType;
use datafusion::logical_expr::ScalarUDF;

/// The parameterized functions under their names, for a node that runs plan fragments.
pub fn fragment_functions() -> Vec<ScalarUDF> {
    let mut v: Vec<ScalarUDF> = ["checked_add", "checked_sub", "checked_mul"]
        .iter()
        .filter_map(|name| crate::checked_arithmetic::CheckedOp::named(name, DataType::Int64))
        .collect();
    v.push(crate::exact_division::ExactDivide::udf(0));
    v.push(crate::exact_division::ExactDivide::kept(0));
    v.push(crate::implicit_casts::string_to_double().clone());
    v.push(crate::implicit_casts::string_to_bigint().clone());
    v.extend(crate::numeric_dates::NumberToDate::functions());
    v.push(crate::temporal_text::string_to_date().clone());
    v.push(crate::temporal_text::string_to_datetime().clone());
    v.push(crate::temporal_text::string_to_date_strict().clone());
    v.push(crate::temporal_text::string_to_datetime_strict().clone());
    v.push(crate::datetime_to_text::function().clone());
    v.extend(crate::ip::keep_family::functions());
    v.push(crate::text_date_shift::function().clone());
    v.push(crate::date_number::function().clone());
    v.push(crate::variant::element::function().clone());
    v.extend(crate::signed_times::functions());
    v.push(crate::unsigned_casts::function().clone());
    v.push(crate::unsigned_casts::signed_function().clone());
    v.push(crate::nullable_sort_keys::function().clone());
    v.push(crate::checked_doubles::function().clone());
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_parameterized_function_has_an_instance() {
        let names: Vec<String> = fragment_functions()
            .iter()
            .map(|f| f.name().to_string())
            .collect();
        assert_eq!(
            names,
            [
                "checked_add",
                "checked_sub",
                "checked_mul",
                "mysql_divide",
                "mysql_divide_kept",
                "mysql_string_to_double",
                "mysql_string_to_bigint",
                "mysql_number_to_date",
                "mysql_number_to_datetime",
                "mysql_string_to_date",
                "mysql_string_to_datetime",
                "mysql_string_to_date_strict",
                "mysql_string_to_datetime_strict",
                "datetime_text",
                "ip_keep_ipv4",
                "ip_keep_ipv6",
                "mysql_text_date_shift",
                "date_number",
                "variant_element",
                "time_text",
                "time_number",
                "time_part",
                "time_datetime",
                "unsigned_bits",
                "signed_bits",
                "basalt_sort_key",
                "mysql_finite_double"
            ]
        );
    }
}
