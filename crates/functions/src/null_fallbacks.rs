//! MySQL's `COALESCE`, `IFNULL(a, b)` and Doris's `NVL(a, b)`: one function, typed as
//! DataFusion's COALESCE types its arguments, except that a DATE or DATETIME beside a number
//! is text (MySQL: `IFNULL(d, 0)` is '2023-01-01'; the two have no common type). DataFusion's own
//! `nvl` picks the first type of a fixed list both arguments convert to, so
//! `IFNULL(CAST(x AS UNSIGNED), 0)` became a FLOAT and lost all but 7 digits
//! (1234567890123456789 came back as 1.234568e18).

use datafusion::arrow::datatypes::{DataType, FieldRef, TimeUnit};
use datafusion::common::Result;
use datafusion::functions::core::coalesce;
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::simplify::{ExprSimplifyResult, SimplifyContext};
use datafusion::logical_expr::ExprSchemable;
use datafusion::logical_expr::{
    ColumnarValue, Expr, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
    Volatility,
};
use datafusion::prelude::lit;
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

    /// DataFusion's field, and for a DATETIME or TIME the most fractional digits an argument
    /// declares (`COALESCE(DATE, DATETIME(3))` is a DATETIME(3), as in MySQL).
    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let declared = args
            .arg_fields
            .iter()
            .filter_map(|f| basalt_common::fraction_digits(f))
            .max();
        let field = self.inner.return_field_from_args(args)?;
        Ok(match field.data_type() {
            DataType::Timestamp(..) | DataType::Time64(_) if declared.is_some() => Arc::new(
                crate::temporal_digits::marked(field.as_ref().clone(), declared),
            ),
            _ => field,
        })
    }

    /// DataFusion's CASE, kept showing the declared digits (a CASE has no field of its own):
    /// `round_fraction(CASE .. END, p)` when every argument's digits are known.
    fn simplify(&self, args: Vec<Expr>, info: &SimplifyContext) -> Result<ExprSimplifyResult> {
        let digits = shown_digits(&args, info);
        Ok(match (self.inner.simplify(args, info)?, digits) {
            (ExprSimplifyResult::Simplified(case), Some(digits)) => {
                ExprSimplifyResult::Simplified(Expr::ScalarFunction(ScalarFunction::new_udf(
                    Arc::new(crate::fraction_digits::function()),
                    vec![case, lit(i64::from(digits))],
                )))
            }
            (other, _) => other,
        })
    }

    fn short_circuits(&self) -> bool {
        self.inner.short_circuits()
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        self.inner.invoke_with_args(args)
    }
}

/// The fractional digits a DATETIME or TIME COALESCE shows: the most any argument declares,
/// a DATE (made a DATETIME) or NULL none; None for other results or an argument whose digits
/// are not known.
fn shown_digits(args: &[Expr], info: &SimplifyContext) -> Option<u8> {
    let result = info.get_data_type(args.first()?).ok()?;
    if !matches!(
        result,
        DataType::Timestamp(TimeUnit::Microsecond, None) | DataType::Time64(TimeUnit::Microsecond)
    ) {
        return None;
    }
    let mut most = None;
    for arg in args {
        let digits = match arg {
            Expr::Cast(cast)
                if matches!(info.get_data_type(&cast.expr).ok()?, DataType::Date32) =>
            {
                0
            }
            Expr::Literal(v, _) if v.is_null() => 0,
            _ => basalt_common::fraction_digits(arg.to_field(info.schema()).ok()?.1.as_ref())?,
        };
        most = Some(most.map_or(digits, |m: u8| m.max(digits)));
    }
    most
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
