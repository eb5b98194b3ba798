//! Doris's IP address functions over its IPV4 and IPV6 types (Arrow `UInt32` and 16-byte
//! `Binary` marked with their family, see `basalt_common::ip_address`): reading addresses from
//! text ([`from_text`]), writing them as text ([`to_text`]), tests on text and addresses
//! ([`predicates`]), subnets ([`ranges`]), the analyzer rule that makes text meet addresses
//! in comparisons, casts and INSERTs ([`rule`]), and what keeps the address type through
//! COALESCE, CASE and the like ([`keep_family`]), aggregates ([`aggregates`]) and the value
//! functions' planning ([`value_functions`]).

pub mod aggregates;
mod arguments;
mod from_text;
pub mod keep_family;
mod predicates;
mod ranges;
mod rule;
mod to_text;
pub mod value_functions;

pub use rule::IpCoercion;

use basalt_common::ip_address::IpFamily;
use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Fields};
use datafusion::common::Result;
use datafusion::logical_expr::{
    ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
    Volatility,
};
use std::sync::Arc;

/// Every IP function.
pub fn functions() -> Vec<ScalarUDF> {
    let mut v = from_text::functions();
    v.extend(to_text::functions());
    v.extend(predicates::functions());
    v.extend(ranges::functions());
    v
}

/// What an IP function returns.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Returns {
    /// A value of a plain type.
    Plain(DataType),
    /// An address of the family.
    Address(IpFamily),
    /// A subnet's first and last addresses: STRUCT<min, max>.
    Range(IpFamily),
}

impl Returns {
    fn field(&self, name: &str) -> Field {
        match self {
            Returns::Plain(t) => Field::new(name, t.clone(), true),
            Returns::Address(family) => family.field(name, true),
            Returns::Range(family) => Field::new(
                name,
                DataType::Struct(Fields::from(vec![
                    family.field("min", true),
                    family.field("max", true),
                ])),
                true,
            ),
        }
    }
}

/// The body of an IP function.
pub(crate) type Body = fn(&ScalarFunctionArgs) -> Result<ColumnarValue>;

/// An IP function: a name, how many arguments of any type it takes (the body reads them), what
/// it returns and its body.
#[derive(Debug)]
pub(crate) struct IpFunction {
    name: &'static str,
    signature: Signature,
    returns: Returns,
    body: Body,
}

/// The function `name` of `arity` arguments.
pub(crate) fn function(
    name: &'static str,
    arity: usize,
    returns: Returns,
    body: Body,
) -> ScalarUDF {
    ScalarUDF::new_from_impl(IpFunction {
        name,
        signature: Signature::any(arity, Volatility::Immutable),
        returns,
        body,
    })
}

// Known by name, signature and result (function pointers do not compare reliably).
impl PartialEq for IpFunction {
    fn eq(&self, other: &Self) -> bool {
        (self.name, &self.signature, &self.returns)
            == (other.name, &other.signature, &other.returns)
    }
}

impl Eq for IpFunction {}

impl std::hash::Hash for IpFunction {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        (self.name, &self.signature, &self.returns).hash(state);
    }
}

impl ScalarUDFImpl for IpFunction {
    fn name(&self) -> &str {
        self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(self.returns.field(self.name).data_type().clone())
    }

    fn return_field_from_args(&self, _args: ReturnFieldArgs) -> Result<FieldRef> {
        Ok(Arc::new(self.returns.field(self.name)))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        (self.body)(&args)
    }
}
