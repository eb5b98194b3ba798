//! Doris's URL functions over text (the parsing is [`crate::url_parts`]'s):
//! - `parse_url(url, part [, key])`: PROTOCOL, HOST, PATH, QUERY, REF, AUTHORITY (host and
//!   port), FILE (path and query), USERINFO or PORT of a `scheme://` URL (the part's name in any
//!   case; another name is an error); with a key, QUERY is that parameter's value. NULL when the
//!   URL has no `scheme://` or lacks the part (PATH and FILE are '' then);
//! - `extract_url_parameter(url, name)`: the first value of the query parameter, '' without one;
//! - `protocol(url)`, `domain(url)`, `domain_without_www(url)`, `top_level_domain(url)`,
//!   `first_significant_subdomain(url)`, `cut_to_first_significant_subdomain(url)`: '' when the
//!   URL has no such part.
//!
//! Each is NULL when an argument is NULL.

use crate::url_parts::{self, UrlParts};
use crate::util::{arguments, output, plain_function};
use datafusion::arrow::array::{Array, ArrayRef, AsArray, StringBuilder};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{exec_err, Result};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, Signature, TypeSignature, Volatility,
};
use std::sync::Arc;

pub fn functions() -> Vec<ScalarUDF> {
    let texts = |n: usize| TypeSignature::Exact(vec![DataType::Utf8; n]);
    let exact = |n: usize| Signature::one_of(vec![texts(n)], Volatility::Immutable);
    let one_url = |name: &'static str, body: crate::util::Body| {
        plain_function(name, exact(1), DataType::Utf8, body)
    };
    vec![
        plain_function(
            "parse_url",
            Signature::one_of(vec![texts(2), texts(3)], Volatility::Immutable),
            DataType::Utf8,
            parse_url,
        ),
        plain_function(
            "extract_url_parameter",
            exact(2),
            DataType::Utf8,
            extract_url_parameter,
        ),
        one_url("protocol", protocol),
        one_url("domain", domain),
        one_url("domain_without_www", domain_without_www),
        one_url("top_level_domain", top_level_domain),
        one_url("first_significant_subdomain", first_significant_subdomain),
        one_url(
            "cut_to_first_significant_subdomain",
            cut_to_first_significant_subdomain,
        ),
    ]
}

/// Applies `f` to the text arguments of every row; a row with a NULL argument is NULL.
fn map_rows(
    args: &ScalarFunctionArgs,
    f: impl Fn(&[&str]) -> Result<Option<String>>,
) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let texts = arrays
        .iter()
        .map(|a| cast(a, &DataType::Utf8))
        .collect::<std::result::Result<Vec<ArrayRef>, _>>()?;
    let rows = texts.first().map_or(1, |a| a.len());
    let mut out = StringBuilder::new();
    let mut values = Vec::with_capacity(texts.len());
    for row in 0..rows {
        values.clear();
        for text in &texts {
            if text.is_null(row) {
                break;
            }
            values.push(text.as_string::<i32>().value(row));
        }
        if values.len() < texts.len() {
            out.append_null();
            continue;
        }
        out.append_option(f(&values)?);
    }
    output(Arc::new(out.finish()), scalar)
}

fn parse_url(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    map_rows(args, |v| {
        let part = v[1].to_ascii_uppercase();
        let Some(parts) = UrlParts::parse(v[0]) else {
            return known_part(&part).map(|_| None);
        };
        if let Some(key) = v.get(2) {
            if part != "QUERY" {
                return exec_err!("parse_url: a key is only read from the QUERY part, not {part}");
            }
            return Ok(parts
                .query
                .and_then(|q| url_parts::parameter_in_query(q, key))
                .map(str::to_string));
        }
        Ok(match known_part(&part)? {
            "PROTOCOL" => Some(parts.protocol.to_string()),
            "HOST" => Some(parts.host.to_string()),
            "PATH" => Some(parts.path.to_string()),
            "QUERY" => parts.query.map(str::to_string),
            "REF" => parts.reference.map(str::to_string),
            "AUTHORITY" => Some(parts.authority()),
            "FILE" => Some(parts.file()),
            "USERINFO" => parts.userinfo.map(str::to_string),
            _ => parts.port.map(str::to_string),
        })
    })
}

/// The part names `parse_url` knows.
const PARTS: [&str; 9] = [
    "PROTOCOL",
    "HOST",
    "PATH",
    "QUERY",
    "REF",
    "AUTHORITY",
    "FILE",
    "USERINFO",
    "PORT",
];

/// `part` when `parse_url` knows it, else an error naming the known ones.
fn known_part(part: &str) -> Result<&'static str> {
    match PARTS.iter().find(|p| **p == part) {
        Some(p) => Ok(p),
        None => exec_err!(
            "parse_url: unknown URL part '{part}' (expected one of {})",
            PARTS.join(", ")
        ),
    }
}

fn extract_url_parameter(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    map_rows(args, |v| {
        Ok(Some(
            url_parts::query_parameter(v[0], v[1])
                .unwrap_or("")
                .to_string(),
        ))
    })
}

fn protocol(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    map_rows(args, |v| Ok(Some(url_parts::protocol(v[0]).to_string())))
}

fn domain(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    map_rows(args, |v| Ok(Some(url_parts::host(v[0]).to_string())))
}

fn domain_without_www(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    map_rows(args, |v| {
        let host = url_parts::host(v[0]);
        Ok(Some(host.strip_prefix("www.").unwrap_or(host).to_string()))
    })
}

fn top_level_domain(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    map_rows(args, |v| {
        Ok(Some(url_parts::top_level_domain(v[0]).to_string()))
    })
}

fn first_significant_subdomain(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    map_rows(args, |v| {
        let host = url_parts::host(v[0]);
        let range = url_parts::first_significant_subdomain_range(host);
        Ok(Some(range.map_or("", |r| &host[r]).to_string()))
    })
}

fn cut_to_first_significant_subdomain(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    map_rows(args, |v| {
        let host = url_parts::host(v[0]);
        let range = url_parts::first_significant_subdomain_range(host);
        Ok(Some(range.map_or("", |r| &host[r.start..]).to_string()))
    })
}
