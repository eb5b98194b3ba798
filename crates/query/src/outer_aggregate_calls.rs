//! `__outer_aggregate('max', distinct (0 or 1), args..)`: an aggregate written in a subquery's WHERE,
//! where the subquery cannot aggregate, kept for the outer query that may (MySQL's
//! `HAVING a IN (SELECT c FROM t2 WHERE MAX(t1.b) > 20)` aggregates `t1.b` over each group of
//! the outer query).
//!
//! The frontend writes such calls in place of those aggregates (DataFusion refuses an
//! aggregate in WHERE before any rule sees it); planned as a scalar function, its arguments
//! resolve to the outer query's columns as outer references, and its type is the aggregate's.
//! [`crate::OuterAggregates`] turns each into the outer query's aggregate; one left over is
//! MySQL's error 1111, at planning and, should one ever run, when it runs.

use basalt_common::{df_error::to_df, BasaltError};
use datafusion::arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::{plan_err, Result, ScalarValue};
use datafusion::logical_expr::type_coercion::functions::fields_with_udf;
use datafusion::logical_expr::{
    AggregateUDF, ColumnarValue, Expr, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF,
    ScalarUDFImpl, Signature, Volatility,
};
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// The function's name.
pub const NAME: &str = "__outer_aggregate";

/// The marker function, knowing the session's aggregate functions (by lower-case name).
pub fn outer_aggregate_call(aggregates: HashMap<String, Arc<AggregateUDF>>) -> ScalarUDF {
    ScalarUDF::new_from_impl(OuterAggregateCall {
        signature: Signature::variadic_any(Volatility::Volatile),
        aggregates,
    })
}

/// One marked aggregate: its function, whether DISTINCT, its arguments.
pub(crate) struct MarkedAggregate {
    pub function: Arc<AggregateUDF>,
    pub distinct: bool,
    pub args: Vec<Expr>,
}

impl MarkedAggregate {
    /// The aggregate `expr` stands for, when it is a marker call.
    pub(crate) fn of(expr: &Expr) -> Option<MarkedAggregate> {
        let Expr::ScalarFunction(f) = expr else {
            return None;
        };
        let marker = f.func.inner().downcast_ref::<OuterAggregateCall>()?;
        let (name, distinct) = match f.args.as_slice() {
            [Expr::Literal(ScalarValue::Utf8(Some(name)), _), Expr::Literal(distinct, _), ..] => {
                (name, !distinct.is_null() && distinct.to_string() != "0")
            }
            _ => return None,
        };
        Some(MarkedAggregate {
            function: marker.aggregates.get(name)?.clone(),
            distinct,
            args: f.args[2..].to_vec(),
        })
    }

    /// The aggregate call, its arguments as given (`COUNT(*)` without any).
    pub(crate) fn call(&self) -> Expr {
        let args = match self.args.is_empty() {
            true => vec![Expr::Literal(ScalarValue::Int64(Some(1)), None)],
            false => self.args.clone(),
        };
        Expr::AggregateFunction(datafusion::logical_expr::expr::AggregateFunction::new_udf(
            self.function.clone(),
            args,
            self.distinct,
            None,
            vec![],
            None,
        ))
    }
}

#[derive(Debug)]
struct OuterAggregateCall {
    signature: Signature,
    aggregates: HashMap<String, Arc<AggregateUDF>>,
}

impl PartialEq for OuterAggregateCall {
    fn eq(&self, _: &Self) -> bool {
        // One marker per session; the aggregates it knows are the session's.
        true
    }
}

impl Eq for OuterAggregateCall {}

impl Hash for OuterAggregateCall {
    fn hash<H: Hasher>(&self, state: &mut H) {
        NAME.hash(state);
    }
}

impl ScalarUDFImpl for OuterAggregateCall {
    fn name(&self) -> &str {
        NAME
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        plan_err!("{NAME} is typed from its arguments")
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let name = match args.scalar_arguments.first() {
            Some(Some(ScalarValue::Utf8(Some(name)))) => name,
            _ => return plan_err!("{NAME} needs an aggregate's name"),
        };
        let Some(function) = self.aggregates.get(name) else {
            return plan_err!("{NAME}: no aggregate function {name}");
        };
        let fields: Vec<FieldRef> = match args.arg_fields.get(2..) {
            Some([]) | None => vec![Arc::new(Field::new("1", DataType::Int64, false))],
            Some(rest) => rest.to_vec(),
        };
        let coerced = fields_with_udf(&fields, function.as_ref())?;
        let field = function.return_field(&coerced)?;
        Ok(Arc::new(Field::new(NAME, field.data_type().clone(), true)))
    }

    fn invoke_with_args(&self, _args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        Err(to_df(BasaltError::InvalidGroupFunction))
    }
}
