//! COALESCE, IFNULL / NVL, NULLIF, GREATEST, LEAST, NVL2 and MAKE_ARRAY (`[a, b]`) over an
//! IPV6 address and text (`COALESCE(ip6, '::')`), or an IPV4 beside an IPV6: DataFusion refuses to coerce such
//! arguments while the statement is planned, before the analyzer rule reads the text (or
//! IPV4) as an address ([`super::keep_family`]). [`AddressValues`] wraps such a function: a
//! call it would refuse is accepted as it stands when its results are addresses, text or
//! NULL, and its result is then an address of their family; anything else is refused as
//! before. Once the rule has made the values one family, the wrapped function takes them.

use super::keep_family::result_arguments;
use basalt_common::ip_address::{ip_family, IpFamily};
use datafusion::arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::Result;
use datafusion::logical_expr::interval_arithmetic::Interval;
use datafusion::logical_expr::simplify::{ExprSimplifyResult, SimplifyContext};
use datafusion::logical_expr::sort_properties::{ExprProperties, SortProperties};
use datafusion::logical_expr::type_coercion::functions::fields_with_udf;
use datafusion::logical_expr::{
    ColumnarValue, Documentation, Expr, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF,
    ScalarUDFImpl, Signature,
};
use std::sync::Arc;

/// DataFusion's value functions, wrapped.
pub fn functions() -> Vec<ScalarUDF> {
    use datafusion::functions::core;
    [
        core::coalesce(),
        // IFNULL / NVL: COALESCE under those names (see `crate::null_fallbacks`).
        Arc::new(crate::null_fallbacks::function()),
        core::nullif(),
        core::greatest(),
        core::least(),
        core::nvl2(),
        datafusion::functions_nested::make_array::make_array_udf(),
    ]
    .into_iter()
    .map(|inner| {
        let signature = Signature::user_defined(inner.signature().volatility);
        ScalarUDF::new_from_impl(AddressValues { inner, signature })
    })
    .collect()
}

#[derive(Debug)]
struct AddressValues {
    inner: Arc<ScalarUDF>,
    signature: Signature,
}

impl PartialEq for AddressValues {
    fn eq(&self, other: &Self) -> bool {
        self.inner == other.inner
    }
}

impl Eq for AddressValues {}

impl std::hash::Hash for AddressValues {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.inner.hash(state)
    }
}

fn is_text(t: &DataType) -> bool {
    matches!(t, DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8)
}

impl AddressValues {
    /// The argument types the wrapped function takes for `types`.
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

    /// The family of a refused call's result: its results are addresses (at least one), text
    /// or NULL.
    fn address_result(&self, fields: &[FieldRef]) -> Option<IpFamily> {
        let results = result_arguments(self.inner.name(), fields.len())?;
        let mut family = None;
        for field in &fields[results] {
            match ip_family(field) {
                Some(IpFamily::V6) => family = Some(IpFamily::V6),
                Some(IpFamily::V4) => family = family.or(Some(IpFamily::V4)),
                None if is_text(field.data_type()) || field.data_type().is_null() => {}
                None => return None,
            }
        }
        family
    }
}

impl ScalarUDFImpl for AddressValues {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn aliases(&self) -> &[String] {
        self.inner.aliases()
    }

    fn schema_name(&self, args: &[Expr]) -> Result<String> {
        self.inner.inner().schema_name(args)
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        // MySQL's types for mixed values (a TIME beside a DATE, text beside a number...).
        if let Some(types) = crate::mixed_result_types::coerced_arguments(self.name(), arg_types) {
            return Ok(types);
        }
        let refused = match self.accepted(arg_types) {
            Ok(types) => return Ok(types),
            Err(e) => e,
        };
        // Addresses (by their storage types) with text or NULL: kept as they are until the
        // result field, which sees the family marks, decides.
        let storage = |t: &DataType| matches!(t, DataType::UInt32 | DataType::Binary);
        let addresses = arg_types.iter().any(storage);
        let others_fit = arg_types
            .iter()
            .all(|t| storage(t) || is_text(t) || t.is_null());
        if addresses && others_fit {
            Ok(arg_types.to_vec())
        } else {
            Err(refused)
        }
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        self.inner.return_type(arg_types)
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let types: Vec<DataType> = args
            .arg_fields
            .iter()
            .map(|f| f.data_type().clone())
            .collect();
        // Mixed values (no addresses) that MySQL types: `crate::mixed_result_types`.
        let mixed = crate::mixed_result_types::result_type(self.name(), &types);
        if let (Some(t), None) = (&mixed, self.address_result(args.arg_fields)) {
            return Ok(Arc::new(Field::new(self.name(), t.clone(), true)));
        }
        let refused = match self.accepted(&types) {
            Ok(_) => return self.inner.return_field_from_args(args),
            Err(e) => e,
        };
        let family = self.address_result(args.arg_fields).ok_or(refused)?;
        Ok(Arc::new(if self.name() == "make_array" {
            // The list the function builds names a plain element field; the rule's mark
            // around the call marks it.
            Field::new(
                self.name(),
                DataType::new_list(family.arrow_type(), true),
                true,
            )
        } else {
            family.field(self.name(), true)
        }))
    }

    fn is_strict(&self) -> bool {
        self.inner.inner().is_strict()
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        self.inner.invoke_with_args(args)
    }

    fn simplify(&self, args: Vec<Expr>, info: &SimplifyContext) -> Result<ExprSimplifyResult> {
        self.inner.simplify(args, info)
    }

    fn short_circuits(&self) -> bool {
        self.inner.short_circuits()
    }

    fn conditional_arguments<'a>(
        &self,
        args: &'a [Expr],
    ) -> Option<(Vec<&'a Expr>, Vec<&'a Expr>)> {
        self.inner.inner().conditional_arguments(args)
    }

    fn evaluate_bounds(&self, input: &[&Interval]) -> Result<Interval> {
        self.inner.evaluate_bounds(input)
    }

    fn output_ordering(&self, inputs: &[ExprProperties]) -> Result<SortProperties> {
        self.inner.output_ordering(inputs)
    }

    fn preserves_lex_ordering(&self, inputs: &[ExprProperties]) -> Result<bool> {
        self.inner.preserves_lex_ordering(inputs)
    }

    fn documentation(&self) -> Option<&Documentation> {
        self.inner.documentation()
    }
}
