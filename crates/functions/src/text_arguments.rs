//! MySQL passes a number (or a date) to a function that wants a string as its text:
//! `UPPER(1)` is '1', `LENGTH(123)` is 3, `SUBSTR(12345, 2, 2)` is '23'. DataFusion's string
//! functions refuse such arguments while the statement is planned (JDBC's metadata queries
//! apply UPPER to numbers, for one). [`TextArguments`] wraps a string function: arguments it
//! accepts as they are stay so; otherwise the fewest numbers are given as text that make a
//! call it accepts. IPV6 addresses (bytes) are accepted too, as their text.
//!
//! A binary string (`BINARY 'll'`, `CAST(x AS BINARY)`, a hex literal) given to a function that
//! takes only text is worked on byte by byte, as MySQL does: every text and binary argument is
//! turned into one character per byte (U+0000..U+00FF), the function runs on that, and a text
//! result is turned back into those bytes, a binary string (`REPEAT(0xE298, 2)` is the bytes
//! E298E298, `LOCATE(BINARY 'б', 'аб')` is 3, a byte position; LENGTH counts bytes). UPPER,
//! LOWER and INITCAP leave a binary string as it is (MySQL: binary strings have no letter case).

use basalt_common::ip_address::{ip_family, IpFamily};
use datafusion::arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::{plan_err, Result};
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::planner::{ExprPlanner, PlannerResult};
use datafusion::logical_expr::simplify::{ExprSimplifyResult, SimplifyContext};
use datafusion::logical_expr::sort_properties::{ExprProperties, SortProperties};
use datafusion::logical_expr::type_coercion::functions::fields_with_udf;
use datafusion::logical_expr::{
    ColumnarValue, Documentation, Expr, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF,
    ScalarUDFImpl, Signature,
};
use datafusion::prelude::SessionContext;
use std::sync::Arc;

mod bytewise;

/// The string functions whose text arguments may be numbers.
pub(crate) const STRING_FUNCTIONS: &[&str] = &[
    "ascii",
    "bit_length",
    "btrim",
    "char_length",
    "character_length",
    "ends_with",
    "initcap",
    "instr",
    "left",
    "length",
    "lower",
    "lpad",
    "ltrim",
    "md5",
    "regexp_like",
    "octet_length",
    "repeat",
    "replace",
    "reverse",
    "right",
    "rpad",
    "rtrim",
    "split_part",
    "starts_with",
    "strpos",
    "substr_index",
    "substring_index",
    "translate",
    "trim",
    "upper",
];

/// The registered [`STRING_FUNCTIONS`] of `ctx`, wrapped. Built once and registered on each
/// session (as the Doris functions are) rather than wrapped again per session.
pub fn wrapped(ctx: &SessionContext) -> Vec<ScalarUDF> {
    let state = ctx.state_ref();
    let state = state.read();
    let registered = state.scalar_functions();
    STRING_FUNCTIONS
        .iter()
        .filter_map(|name| registered.get(*name))
        .filter(|f| {
            let inner: &dyn std::any::Any = f.inner().as_ref();
            !inner.is::<TextArguments>()
        })
        .map(|f| ScalarUDF::new_from_impl(TextArguments::new(f.clone())))
        .collect()
}

/// Wraps the registered [`STRING_FUNCTIONS`] of `ctx` in place.
pub fn register(ctx: &SessionContext) {
    for f in wrapped(ctx) {
        ctx.register_udf(f);
    }
}

/// Plans `SUBSTRING(x FROM p FOR n)` and `SUBSTR(x, p, n)` (which DataFusion plans with its
/// own `substr`, not the registered one) with MySQL's ([`crate::substring`]), and
/// `POSITION(sub IN s)` with the wrapped `strpos`.
#[derive(Debug, Default)]
pub struct TextSubstringPlanner;

impl ExprPlanner for TextSubstringPlanner {
    /// `POSITION(sub IN s)` (and LOCATE) with the wrapped `strpos`, which takes numbers as
    /// text and binary strings byte by byte (DataFusion plans its own).
    fn plan_position(&self, args: Vec<Expr>) -> Result<PlannerResult<Vec<Expr>>> {
        static STRPOS: std::sync::OnceLock<Arc<ScalarUDF>> = std::sync::OnceLock::new();
        let strpos = STRPOS.get_or_init(|| {
            let inner = datafusion::functions::unicode::strpos();
            Arc::new(ScalarUDF::new_from_impl(TextArguments::new(inner)))
        });
        Ok(PlannerResult::Planned(Expr::ScalarFunction(
            ScalarFunction::new_udf(strpos.clone(), args),
        )))
    }

    fn plan_substring(&self, args: Vec<Expr>) -> Result<PlannerResult<Vec<Expr>>> {
        static SUBSTR: std::sync::OnceLock<Arc<ScalarUDF>> = std::sync::OnceLock::new();
        let substr = SUBSTR.get_or_init(|| Arc::new(crate::substring::function()));
        Ok(PlannerResult::Planned(Expr::ScalarFunction(
            ScalarFunction::new_udf(substr.clone(), args),
        )))
    }
}

#[derive(Debug)]
pub struct TextArguments {
    inner: Arc<ScalarUDF>,
    signature: Signature,
}

impl PartialEq for TextArguments {
    fn eq(&self, other: &Self) -> bool {
        self.inner == other.inner
    }
}

impl Eq for TextArguments {}

impl std::hash::Hash for TextArguments {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.inner.hash(state)
    }
}

impl TextArguments {
    fn new(inner: Arc<ScalarUDF>) -> TextArguments {
        let signature = Signature::user_defined(inner.signature().volatility);
        TextArguments { inner, signature }
    }

    fn accepted(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        let fields: Vec<FieldRef> = types
            .iter()
            .map(|t| Arc::new(Field::new("a", t.clone(), true)))
            .collect();
        Ok(fields_with_udf(&fields, self.inner.as_ref())?
            .iter()
            .map(|f| f.data_type().clone())
            .collect())
    }

    /// The types a call with `arg_types` takes: as they are if the wrapped function accepts
    /// them, else with the fewest numbers (and, if `bytes_as_text`, bytes) read as text.
    fn coerced(&self, arg_types: &[DataType], bytes_as_text: bool) -> Result<Vec<DataType>> {
        if self.is_bytewise(arg_types) {
            return Ok(arg_types.to_vec());
        }
        let refused = match self.accepted(arg_types) {
            Ok(types) => return Ok(types),
            Err(e) => e,
        };
        // Bytes may be IPV6 addresses, which the analyzer rule gives as their text; they stay
        // bytes here, and the result field (which sees the mark) refuses other bytes.
        let numbers: Vec<usize> = arg_types
            .iter()
            .enumerate()
            .filter(|(_, t)| {
                t.is_numeric()
                    || t.is_temporal()
                    || **t == DataType::Boolean
                    || (bytes_as_text && is_bytes(t))
            })
            .map(|(i, _)| i)
            .collect();
        if numbers.is_empty() || numbers.len() > 4 {
            return Err(refused);
        }
        let mut choices: Vec<u32> = (1..1u32 << numbers.len()).collect();
        choices.sort_by_key(|c| c.count_ones());
        for choice in choices {
            let tried: Vec<DataType> = arg_types
                .iter()
                .enumerate()
                .map(|(i, t)| match numbers.iter().position(|&n| n == i) {
                    Some(bit) if choice & (1 << bit) != 0 => DataType::Utf8,
                    _ => t.clone(),
                })
                .collect();
            if let Ok(mut types) = self.accepted(&tried) {
                for (i, t) in arg_types.iter().enumerate() {
                    if is_bytes(t) && tried[i] == DataType::Utf8 {
                        types[i] = t.clone();
                    }
                }
                return Ok(types);
            }
        }
        plan_err!("{refused}")
    }
}

impl TextArguments {
    /// Whether a call with `arg_types` runs byte by byte: it has a binary string that the
    /// wrapped function refuses, or would read as text (failing on bytes that are no UTF-8).
    fn is_bytewise(&self, arg_types: &[DataType]) -> bool {
        if !arg_types.iter().any(is_bytes) {
            return false;
        }
        match self.accepted(arg_types) {
            Ok(types) => arg_types
                .iter()
                .zip(&types)
                .any(|(given, taken)| is_bytes(given) && !is_bytes(taken)),
            // Refused as given: byte by byte only if the call is right once the bytes are read
            // as text (a wrong number of arguments stays an error, not a call that panics).
            Err(_) => {
                let as_text: Vec<DataType> = arg_types
                    .iter()
                    .map(|t| {
                        if is_bytes(t) {
                            DataType::Utf8
                        } else {
                            t.clone()
                        }
                    })
                    .collect();
                self.accepted(&as_text).is_ok()
            }
        }
    }
}

fn is_bytes(t: &DataType) -> bool {
    matches!(t, DataType::Binary)
}

/// A binary argument's field as the text the function is given instead.
fn bytes_as_text_field(f: &FieldRef) -> FieldRef {
    if is_bytes(f.data_type()) {
        Arc::new(Field::new(f.name(), DataType::Utf8, f.is_nullable()))
    } else {
        f.clone()
    }
}

impl ScalarUDFImpl for TextArguments {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn aliases(&self) -> &[String] {
        self.inner.aliases()
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        self.coerced(arg_types, true)
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        self.inner.return_type(arg_types)
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        // IPV6 addresses are taken as their text (the analyzer rule gives them so).
        let is_address = |f: &FieldRef| ip_family(f) == Some(IpFamily::V6);
        let fields: Vec<FieldRef> = args
            .arg_fields
            .iter()
            .map(|f| match is_address(f) {
                true => Arc::new(Field::new(f.name(), DataType::Utf8, f.is_nullable())),
                false => f.clone(),
            })
            .collect();
        // Other bytes as the wrapped function takes them, else byte by byte.
        let types: Vec<DataType> = fields.iter().map(|f| f.data_type().clone()).collect();
        if self.is_bytewise(&types) {
            let as_text: Vec<FieldRef> = fields.iter().map(bytes_as_text_field).collect();
            let inner = self.inner.return_field_from_args(ReturnFieldArgs {
                arg_fields: &as_text,
                scalar_arguments: args.scalar_arguments,
            })?;
            return Ok(bytewise::result_field(self.name(), inner));
        }
        self.inner.return_field_from_args(ReturnFieldArgs {
            arg_fields: &fields,
            scalar_arguments: args.scalar_arguments,
        })
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let types: Vec<DataType> = args
            .arg_fields
            .iter()
            .map(|f| f.data_type().clone())
            .collect();
        let binary_string = |f: &FieldRef| is_bytes(f.data_type()) && ip_family(f).is_none();
        if args.arg_fields.iter().any(binary_string) && self.is_bytewise(&types) {
            return bytewise::invoke(self.inner.as_ref(), args);
        }
        self.inner.invoke_with_args(args)
    }

    fn simplify(&self, args: Vec<Expr>, info: &SimplifyContext) -> Result<ExprSimplifyResult> {
        self.inner.simplify(args, info)
    }

    fn short_circuits(&self) -> bool {
        self.inner.short_circuits()
    }

    fn output_ordering(&self, inputs: &[ExprProperties]) -> Result<SortProperties> {
        self.inner.output_ordering(inputs)
    }

    fn documentation(&self) -> Option<&Documentation> {
        self.inner.documentation()
    }
}
