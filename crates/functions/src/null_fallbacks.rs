//! MySQL's `COALESCE`, `IFNULL(a, b)` and Doris's `NVL(a, b)`: one function, typed as
//! DataFusion's COALESCE types its arguments, except that a DATE or DATETIME beside a number
//! is text (MySQL: `IFNULL(d, 0)` is '2023-01-01'; the two have no common type). DataFusion's own
//! `nvl` picks the first type of a fixed list both arguments convert to, so
//! `IFNULL(CAST(x AS UNSIGNED), 0)` became a FLOAT and lost all but 7 digits
//! (1234567890123456789 came back as 1.234568e18).

use datafusion::arrow::datatypes::{DataType, FieldRef};
use datafusion::common::Result;
use datafusion::functions::core::coalesce;
use datafusion::logical_expr::simplify::{ExprSimplifyResult, SimplifyContext};
use datafusion::logical_expr::{
    ColumnarValue, Expr, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
    Volatility,
};
use std::sync::Arc;

/// COALESCE, also answering to IFNULL and NVL.
pub fn function() -> ScalarUDF {
    ScalarUDF::new_from_impl(MySqlCoalesce {
        inner: coalesce(),
        signature: Signature::user_defined(Volatility::Immutable),
        aliases: vec!["ifnull".to_string(), "nvl".to_string()],
    })
}

#[derive(Debug)]
struct MySqlCoalesce {
    inner: Arc<ScalarUDF>,
    signature: Signature,
    aliases: Vec<String>,
}

impl PartialEq for MySqlCoalesce {
    fn eq(&self, other: &Self) -> bool {
        self.inner == other.inner
    }
}

impl Eq for MySqlCoalesce {}

impl std::hash::Hash for MySqlCoalesce {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.inner.hash(state)
    }
}

fn is_temporal(t: &DataType) -> bool {
    matches!(
        t,
        DataType::Date32 | DataType::Date64 | DataType::Timestamp(_, _)
    )
}

impl ScalarUDFImpl for MySqlCoalesce {
    fn name(&self) -> &str {
        "coalesce"
    }

    fn aliases(&self) -> &[String] {
        &self.aliases
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        if types.iter().any(is_temporal) && types.iter().any(DataType::is_numeric) {
            return Ok(types
                .iter()
                .map(|t| {
                    if t.is_null() {
                        t.clone()
                    } else {
                        DataType::Utf8
                    }
                })
                .collect());
        }
        self.inner.coerce_types(types)
    }

    fn return_type(&self, types: &[DataType]) -> Result<DataType> {
        self.inner.return_type(types)
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        self.inner.return_field_from_args(args)
    }

    fn simplify(&self, args: Vec<Expr>, info: &SimplifyContext) -> Result<ExprSimplifyResult> {
        self.inner.simplify(args, info)
    }

    fn short_circuits(&self) -> bool {
        self.inner.short_circuits()
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        self.inner.invoke_with_args(args)
    }
}

#[cfg(test)]
mod tests {
    use datafusion::prelude::SessionContext;

    #[tokio::test]
    async fn keeps_every_digit_of_a_bigint_unsigned_and_reads_dates_beside_numbers_as_text() {
        let ctx = SessionContext::new();
        ctx.register_udf(super::function());
        let batches = ctx
            .sql(
                "SELECT ifnull(CAST(1234567890123456789 AS BIGINT UNSIGNED), 0) AS v, \
                 nvl(NULL, 7) AS w, ifnull(DATE '2023-01-01', 0) AS d",
            )
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
        assert!(text.contains("2023-01-01"), "{text}");
    }
}
