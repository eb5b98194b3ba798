//! The number MySQL reads an ENUM or SET value as: `enum_number(value, 'enum' | 'set',
//! member, member, ..)`. An ENUM value is its member's position (1 for the first, 0 for the
//! empty error value), a SET value the sum of its members' bits (the first member 1, the
//! second 2, ..); NULL stays NULL. `basalt_query`'s ENUM rule puts the call wherever MySQL uses
//! the number: arithmetic, comparisons with numbers, ORDER BY, numeric casts.

use crate::util::{arguments, output};
use datafusion::arrow::array::{ArrayRef, AsArray, Int64Array};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{plan_err, Result, ScalarValue};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use std::sync::Arc;

/// The function's name.
pub const NAME: &str = "enum_number";

#[derive(Debug, PartialEq, Eq, Hash)]
struct MemberNumbers {
    signature: Signature,
}

/// `enum_number`.
pub fn function() -> ScalarUDF {
    ScalarUDF::new_from_impl(MemberNumbers {
        signature: Signature::variadic_any(Volatility::Immutable),
    })
}

impl ScalarUDFImpl for MemberNumbers {
    fn name(&self) -> &str {
        NAME
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn return_type(&self, types: &[DataType]) -> Result<DataType> {
        if types.len() < 3 {
            return plan_err!("{NAME} takes a value, 'enum' or 'set', and the members");
        }
        Ok(DataType::Int64)
    }
    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let mut constants = Vec::with_capacity(args.args.len() - 1);
        for arg in &args.args[1..] {
            match arg {
                ColumnarValue::Scalar(
                    ScalarValue::Utf8(Some(s))
                    | ScalarValue::Utf8View(Some(s))
                    | ScalarValue::LargeUtf8(Some(s)),
                ) => constants.push(s.as_str()),
                _ => return plan_err!("{NAME}: the kind and members must be constant text"),
            }
        }
        let set = constants[0].eq_ignore_ascii_case("set");
        let members = &constants[1..];
        let (arrays, scalar) = arguments(&args)?;
        let text = cast(&arrays[0], &DataType::Utf8)?;
        let values = text.as_string::<i32>();
        let out: Int64Array = values
            .iter()
            .map(|v| v.map(|v| number_of(v, members, set)))
            .collect();
        output(Arc::new(out) as ArrayRef, scalar)
    }
}

/// The number of a stored ENUM or SET value (stored values are members as declared).
fn number_of(value: &str, members: &[&str], set: bool) -> i64 {
    let position = |v: &str| members.iter().position(|m| *m == v);
    if !set {
        return position(value).map_or(0, |i| i as i64 + 1);
    }
    value
        .split(',')
        .filter_map(position)
        .filter(|i| *i < 64)
        .fold(0i64, |bits, i| bits | (1i64 << i))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_number_as_mysql_reads_them() {
        let sizes = ["small", "medium", "large"];
        assert_eq!(number_of("small", &sizes, false), 1);
        assert_eq!(number_of("large", &sizes, false), 3);
        assert_eq!(number_of("", &sizes, false), 0);
        let flags = ["a", "b", "c"];
        assert_eq!(number_of("a,c", &flags, true), 5);
        assert_eq!(number_of("b", &flags, true), 2);
        assert_eq!(number_of("", &flags, true), 0);
    }
}
