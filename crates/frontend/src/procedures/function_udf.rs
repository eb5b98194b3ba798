//! `basalt_stored_function('db', 'f', 'type', args..)`: what a call of a stored function is
//! planned as (see [`super::functions`]). A scalar function of the session: each row's call
//! runs the function's body through the session's own statement path (so it sees the session's
//! variables, temporary tables and transaction) and its value comes back as the return type's
//! column. Its result type is the declared return type (the third argument).
//!
//! The body's statements are asynchronous and the call sits anywhere in a plan (a projection,
//! a filter, an aggregate's argument, another call's argument), so the call waits for them
//! with the worker thread handed over to the runtime (`block_in_place`): the execution
//! runtime's other tasks go on, also those the body's own statements start. Calls nest (a
//! function calling another) the same way; a runtime with one thread cannot run them. A query's
//! partitions call at once, but the session runs one body at a time per depth (the statement's
//! `routine_depth`, see `RoutineContext::call_turn`): bodies share the session's state.

use crate::session::SessionInfo;
use basalt_common::df_error::to_df;
use basalt_common::SqlType;
use datafusion::arrow::array::{ArrayRef, RecordBatch, RecordBatchOptions, StringArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Schema};
use datafusion::common::{exec_err, Result, ScalarValue};
use datafusion::logical_expr::{
    ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
    Volatility,
};
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// The stored-function call of one session.
#[derive(Debug)]
struct StoredFunctionCall {
    info: Arc<SessionInfo>,
    signature: Signature,
}

impl PartialEq for StoredFunctionCall {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.info, &other.info)
    }
}

impl Eq for StoredFunctionCall {}

impl Hash for StoredFunctionCall {
    fn hash<H: Hasher>(&self, state: &mut H) {
        super::functions::CALL_NAME.hash(state);
    }
}

/// The session's stored-function call, to register in its context.
pub(crate) fn function(info: &Arc<SessionInfo>) -> ScalarUDF {
    ScalarUDF::new_from_impl(StoredFunctionCall {
        info: info.clone(),
        // Volatile: never folded at planning, and called for every row.
        signature: Signature::variadic_any(Volatility::Volatile),
    })
}

/// The Arrow type of a declared return type (`VARCHAR(10)`, `DECIMAL(10,2)`, `INT UNSIGNED`);
/// text for a type Basalt has no column type for.
pub(crate) fn arrow_type(declared: &str) -> DataType {
    let upper = declared.trim().to_ascii_uppercase();
    let name_end = upper.find(['(', ' ']).unwrap_or(upper.len());
    let args: Vec<u64> = upper[name_end..]
        .trim_start()
        .strip_prefix('(')
        .and_then(|rest| rest.split(')').next())
        .map(|inside| {
            inside
                .split(',')
                .filter_map(|a| a.trim().parse().ok())
                .collect()
        })
        .unwrap_or_default();
    match SqlType::from_name(&upper[..name_end], &args) {
        Ok(t) if !t.is_nested() && !t.is_sketch() => t.arrow_type(),
        _ => DataType::Utf8,
    }
}

fn text_argument(value: &ColumnarValue) -> Option<String> {
    match value {
        ColumnarValue::Scalar(ScalarValue::Utf8(Some(s)))
        | ColumnarValue::Scalar(ScalarValue::LargeUtf8(Some(s)))
        | ColumnarValue::Scalar(ScalarValue::Utf8View(Some(s))) => Some(s.clone()),
        _ => None,
    }
}

impl ScalarUDFImpl for StoredFunctionCall {
    fn name(&self) -> &str {
        super::functions::CALL_NAME
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Utf8)
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let declared = match args.scalar_arguments.get(2) {
            Some(Some(ScalarValue::Utf8(Some(t)))) => t.as_str(),
            _ => "TEXT",
        };
        Ok(Arc::new(Field::new(
            self.name(),
            arrow_type(declared),
            true,
        )))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        use tokio::runtime::{Handle, RuntimeFlavor};
        match Handle::try_current() {
            Ok(h) if h.runtime_flavor() == RuntimeFlavor::MultiThread => {
                tokio::task::block_in_place(|| h.block_on(self.evaluate(args)))
            }
            _ => exec_err!("stored functions run only on a multi-threaded runtime"),
        }
    }
}

impl StoredFunctionCall {
    /// Runs the function for every row of `args`.
    async fn evaluate(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let rows = args.number_rows;
        let (Some(database), Some(name)) = (
            args.args.first().and_then(text_argument),
            args.args.get(1).and_then(text_argument),
        ) else {
            return exec_err!("{} takes a database and a name", self.name());
        };
        let Some((engine, session)) = self.info.routine.handles() else {
            return exec_err!("stored functions cannot run in this session");
        };
        let depth = args
            .config_options
            .extensions
            .get::<basalt_functions::MySqlOptions>()
            .map_or(0, |o| o.routine_depth);
        let turn = self.info.routine.call_turn(depth);
        let _turn = turn.lock().await;
        let function = engine
            .services
            .catalog
            .function(&database, &name)
            .ok_or_else(|| to_df(super::define::unknown_function(&database, &name)))?;
        let values: Vec<ArrayRef> = args.args[3.min(args.args.len())..]
            .iter()
            .map(|a| a.to_array(rows))
            .collect::<Result<_>>()?;
        let schema = Arc::new(Schema::new(
            values
                .iter()
                .enumerate()
                .map(|(i, v)| Field::new(format!("a{i}"), v.data_type().clone(), true))
                .collect::<Vec<_>>(),
        ));
        let mut out: Vec<Option<String>> = Vec::with_capacity(rows);
        for row in 0..rows {
            let arguments = if values.is_empty() {
                None
            } else {
                let columns = values.iter().map(|v| v.slice(row, 1)).collect();
                Some(RecordBatch::try_new_with_options(
                    schema.clone(),
                    columns,
                    &RecordBatchOptions::new().with_row_count(Some(1)),
                )?)
            };
            let value = engine
                .run_function(&session, &function, arguments.as_ref())
                .await
                .map_err(to_df)?;
            out.push(value);
        }
        let text: ArrayRef = Arc::new(StringArray::from(out));
        let target = arrow_type(function.returns.as_deref().unwrap_or("TEXT"));
        Ok(ColumnarValue::Array(cast(&text, &target)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn return_types_map_to_arrow() {
        assert_eq!(arrow_type("INT"), DataType::Int32);
        assert_eq!(arrow_type("int(11)"), DataType::Int32);
        assert_eq!(arrow_type("VARCHAR(10)"), DataType::Utf8);
        assert_eq!(arrow_type("DECIMAL(10,2)"), DataType::Decimal128(10, 2));
        assert_eq!(arrow_type("BIGINT UNSIGNED"), DataType::Int64);
        assert_eq!(arrow_type("NO SUCH TYPE"), DataType::Utf8);
    }
}
