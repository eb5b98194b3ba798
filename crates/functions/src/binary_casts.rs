//! Numbers, dates and booleans converted to bytes as MySQL converts them: the bytes of their
//! text. `CAST(2 AS BINARY)` is `'2'`, and `INSERT INTO t (blob_col) VALUES (2)` stores `'2'`;
//! Arrow's cast gave an integer's eight little-endian bytes (and refused decimals), so a BLOB
//! or VARBINARY column silently held `0x0200000000000000`. An analyzer rule right after type
//! coercion (so casts coercion adds are covered too) sends such casts through text; the rules
//! after it write that text MySQL's way (dates, booleans).
//!
//! `CAST(x AS BINARY(n))` is `binary_width(CAST(x AS BINARY), n)`: the bytes cut or padded
//! with 0x00 to exactly `n`, as MySQL's cast gives them.

use crate::expr_rules::rewrite_node_expressions;
use crate::util::{arguments, output, plain_function};
use datafusion::arrow::array::{Array, ArrayRef, AsArray, BinaryBuilder};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::Transformed;
use datafusion::common::{exec_err, DFSchema, Result};
use datafusion::logical_expr::expr::TryCast;
use datafusion::logical_expr::{
    Cast, ColumnarValue, Expr, ExprSchemable, LogicalPlan, ScalarFunctionArgs, ScalarUDF,
    Signature, Volatility,
};
use datafusion::optimizer::AnalyzerRule;
use std::sync::{Arc, OnceLock};

/// The widest BINARY(n) a cast gives (MySQL's own limit is `max_allowed_packet`).
const MAX_WIDTH: usize = 64 << 20;
/// The most bytes one batch of results holds (Arrow's 32-bit offsets).
const MAX_BYTES: usize = i32::MAX as usize;

/// The name of the width function.
pub const WIDTH: &str = "binary_width";

/// `binary_width(bytes, n)`: `bytes` cut or right-padded with 0x00 to `n` bytes.
pub fn width_function() -> &'static ScalarUDF {
    static F: OnceLock<ScalarUDF> = OnceLock::new();
    F.get_or_init(|| {
        plain_function(
            WIDTH,
            Signature::exact(
                vec![DataType::Binary, DataType::Int64],
                Volatility::Immutable,
            ),
            DataType::Binary,
            binary_width,
        )
    })
}

fn binary_width(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let bytes = arrays[0].as_binary::<i32>();
    let widths = datafusion::arrow::compute::cast(&arrays[1], &DataType::Int64)?;
    let widths = widths.as_primitive::<datafusion::arrow::datatypes::Int64Type>();
    let mut out = BinaryBuilder::with_capacity(bytes.len(), bytes.value_data().len());
    for row in 0..bytes.len() {
        if bytes.is_null(row) || widths.is_null(row) {
            out.append_null();
            continue;
        }
        let width = match usize::try_from(widths.value(row)) {
            Ok(w) if w <= MAX_WIDTH => w,
            _ => return exec_err!("BINARY({}) is not a supported width", widths.value(row)),
        };
        if out.values_slice().len() + width > MAX_BYTES {
            return exec_err!("CAST(.. AS BINARY({width})) gives more bytes than one batch holds");
        }
        let value = bytes.value(row);
        let mut fitted = value[..value.len().min(width)].to_vec();
        fitted.resize(width, 0);
        out.append_value(fitted);
    }
    output(Arc::new(out.finish()) as ArrayRef, scalar)
}

/// The analyzer rule; it runs right after DataFusion's type coercion.
#[derive(Debug, Default)]
pub struct BinaryCasts;

impl AnalyzerRule for BinaryCasts {
    fn name(&self) -> &str {
        "mysql_binary_casts"
    }

    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        plan.transform_up_with_subqueries(|node| rewrite_node_expressions(node, through_text))
            .map(|t| t.data)
    }
}

fn is_bytes(t: &DataType) -> bool {
    matches!(
        t,
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView
    ) || matches!(t, DataType::FixedSizeBinary(_))
}

/// Whether MySQL converts a value of type `t` to bytes through its text.
fn converts_through_text(t: &DataType) -> bool {
    t.is_numeric() || t.is_temporal() || matches!(t, DataType::Boolean | DataType::Decimal256(_, _))
}

fn text(e: Expr) -> Expr {
    Expr::Cast(Cast::new(Box::new(e), DataType::Utf8))
}

fn through_text(e: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    let from_value = |e: &Expr| e.get_type(schema).is_ok_and(|t| converts_through_text(&t));
    Ok(match e {
        Expr::Cast(Cast { expr, field }) if is_bytes(field.data_type()) && from_value(&expr) => {
            let to = field.data_type().clone();
            Transformed::yes(Expr::Cast(Cast::new(Box::new(text(*expr)), to)))
        }
        Expr::TryCast(TryCast { expr, field })
            if is_bytes(field.data_type()) && from_value(&expr) =>
        {
            let to = field.data_type().clone();
            Transformed::yes(Expr::TryCast(TryCast::new(Box::new(text(*expr)), to)))
        }
        other => Transformed::no(other),
    })
}
