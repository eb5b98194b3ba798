//! Doris's `xpath_string(xml, path)`: the XPath 1.0 string value of `path` evaluated over the
//! XML text `xml`: for nodes, the text of the first in document order (its descendants' text,
//! CDATA included, comments not), '' when nothing matches; NULL when an argument is NULL. Text
//! that is no XML, or a path that is no XPath, is an error naming the function. The XML is
//! read by `sxd-document`, the path by `sxd-xpath` (compiled once for a constant path).

use crate::util::{arguments, output, plain_function};
use datafusion::arrow::array::{Array, AsArray, StringArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{exec_err, Result};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, Signature, Volatility,
};
use std::sync::Arc;
use sxd_xpath::{Context, Factory, XPath};

pub fn function() -> ScalarUDF {
    plain_function(
        "xpath_string",
        Signature::coercible(
            vec![
                datafusion::logical_expr::Coercion::new_exact(
                    datafusion::logical_expr::TypeSignatureClass::Native(
                        datafusion::common::types::logical_string(),
                    ),
                ),
                datafusion::logical_expr::Coercion::new_exact(
                    datafusion::logical_expr::TypeSignatureClass::Native(
                        datafusion::common::types::logical_string(),
                    ),
                ),
            ],
            Volatility::Immutable,
        ),
        DataType::Utf8,
        xpath_string,
    )
}

fn xpath_string(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let xml = cast(&arrays[0], &DataType::Utf8)?;
    let paths = cast(&arrays[1], &DataType::Utf8)?;
    let (xml, paths) = (xml.as_string::<i32>(), paths.as_string::<i32>());
    let factory = Factory::new();
    // The last path compiled, for the next row with the same text.
    let mut compiled: Option<(String, XPath)> = None;
    let mut out = Vec::with_capacity(xml.len());
    for i in 0..xml.len() {
        if xml.is_null(i) || paths.is_null(i) {
            out.push(None);
            continue;
        }
        let path = paths.value(i);
        if compiled.as_ref().is_none_or(|(text, _)| text != path) {
            let xpath = match factory.build(path) {
                Ok(Some(xpath)) => xpath,
                Ok(None) => return exec_err!("xpath_string: empty XPath"),
                Err(e) => return exec_err!("xpath_string: invalid XPath '{path}': {e}"),
            };
            compiled = Some((path.to_string(), xpath));
        }
        let Some((_, xpath)) = &compiled else {
            return exec_err!("xpath_string: no XPath");
        };
        out.push(Some(evaluate(xml.value(i), xpath)?));
    }
    output(Arc::new(StringArray::from(out)), scalar)
}

/// The string value of `xpath` over the document `xml`.
fn evaluate(xml: &str, xpath: &XPath) -> Result<String> {
    let package = match sxd_document::parser::parse(xml) {
        Ok(package) => package,
        Err(e) => return exec_err!("xpath_string: invalid XML: {e:?}"),
    };
    let document = package.as_document();
    let context = Context::new();
    match xpath.evaluate(&context, document.root()) {
        Ok(value) => Ok(value.string()),
        Err(e) => exec_err!("xpath_string: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn string_of(xml: &str, path: &str) -> String {
        let xpath = Factory::new().build(path).expect("path").expect("a path");
        evaluate(xml, &xpath).expect("evaluates")
    }

    #[test]
    fn first_match_text() {
        assert_eq!(string_of("<a>123</a>", "/a"), "123");
        assert_eq!(
            string_of(r#"<a><b id="1">123</b></a>"#, r#"//b[@id="1"]"#),
            "123"
        );
        assert_eq!(string_of("<a><b>1</b><b>2</b></a>", "/a/b[2]"), "2");
        assert_eq!(string_of("<a><b>1</b><b>2</b></a>", "/a/b"), "1");
        assert_eq!(string_of("<a><![CDATA[123]]></a>", "/a"), "123");
        assert_eq!(string_of("<a><!-- c -->123</a>", "/a"), "123");
        assert_eq!(string_of("<a>123</a>", "/b"), "");
        assert_eq!(string_of("<a><b>x</b>y</a>", "/a"), "xy");
    }
}
