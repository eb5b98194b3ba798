//! MySQL's `IFNULL(a, b)` and Doris's `NVL(a, b)` are `COALESCE(a, b)`, typed as COALESCE types
//! its arguments. DataFusion's own `nvl` picks the first type of a fixed list both arguments
//! convert to, so `IFNULL(CAST(x AS UNSIGNED), 0)` became a FLOAT and lost all but 7 digits
//! (1234567890123456789 came back as 1.234568e18).

use datafusion::functions::core::coalesce;
use datafusion::logical_expr::ScalarUDF;

/// COALESCE, also answering to IFNULL and NVL.
pub fn function() -> ScalarUDF {
    coalesce().as_ref().clone().with_aliases(["ifnull", "nvl"])
}

#[cfg(test)]
mod tests {
    use datafusion::prelude::SessionContext;

    #[tokio::test]
    async fn keeps_every_digit_of_a_bigint_unsigned() {
        let ctx = SessionContext::new();
        ctx.register_udf(super::function());
        let batches = ctx
            .sql("SELECT ifnull(CAST(1234567890123456789 AS BIGINT UNSIGNED), 0) AS v, nvl(NULL, 7) AS w")
            .await
            .unwrap()
            .collect()
            .await
            .unwrap();
        let text = datafusion::arrow::util::pretty::pretty_format_batches(&batches)
            .unwrap()
            .to_string();
        assert!(text.contains("1234567890123456789"), "{text}");
        assert!(text.contains("| 7 "), "{text}");
    }
}

