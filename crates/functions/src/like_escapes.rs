//! `LIKE .. ESCAPE 'c'` with an escape character other than the backslash (SQLAlchemy writes
//! `ESCAPE '/'`). The LIKE kernels know only the backslash, so a constant pattern is rewritten
//! to escape with it: `c%` becomes `\%`, `c_` `\_`, `cc` the character itself, and a backslash
//! that the pattern meant literally `\\`. MySQL matches a trailing escape character literally.
//! A pattern that is not a constant (`LIKE concat('%', ?, '%') ESCAPE '/'`, a column) is
//! rewritten the same way row by row, by `mysql_like_escape(pattern, escape)`.

use crate::expr_rules::rewrite_node_expressions;
use crate::util::{arguments, output, plain_function};
use datafusion::arrow::array::{Array, AsArray, StringBuilder};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::Transformed;
use datafusion::common::{exec_err, Result, ScalarValue};
use datafusion::logical_expr::expr::{Like, ScalarFunction};
use datafusion::logical_expr::{
    ColumnarValue, Expr, LogicalPlan, ScalarFunctionArgs, ScalarUDF, Signature, Volatility,
};
use datafusion::optimizer::AnalyzerRule;
use std::sync::{Arc, LazyLock};

/// `pattern` written with `escape` as the same pattern written with the backslash.
pub fn with_backslash_escape(pattern: &str, escape: char) -> String {
    let mut out = String::with_capacity(pattern.len() + 4);
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        if c == escape {
            match chars.next() {
                Some(next @ ('%' | '_')) => {
                    out.push('\\');
                    out.push(next);
                }
                Some('\\') => out.push_str("\\\\"),
                Some(next) => out.push(next),
                None => push_literal(&mut out, escape),
            }
        } else if c == '\\' {
            out.push_str("\\\\");
        } else {
            out.push(c);
        }
    }
    out
}

fn push_literal(out: &mut String, c: char) {
    if matches!(c, '%' | '_' | '\\') {
        out.push('\\');
    }
    out.push(c);
}

/// Rewrites constant LIKE patterns with a non-backslash escape character.
#[derive(Debug, Default)]
pub struct LikeEscapes;

impl AnalyzerRule for LikeEscapes {
    fn name(&self) -> &str {
        "mysql_like_escapes"
    }

    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        plan.transform_up_with_subqueries(|node| rewrite_node_expressions(node, |e, _| rewrite(e)))
            .map(|t| t.data)
    }
}

/// `mysql_like_escape(pattern, escape)`: a pattern computed per row, written with the backslash.
pub fn function() -> ScalarUDF {
    plain_function(
        "mysql_like_escape",
        Signature::exact(vec![DataType::Utf8, DataType::Utf8], Volatility::Immutable),
        DataType::Utf8,
        escape_rows,
    )
}

static FUNCTION: LazyLock<Arc<ScalarUDF>> = LazyLock::new(|| Arc::new(function()));

fn escape_rows(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let [patterns, escapes] = arrays.as_slice() else {
        return exec_err!("mysql_like_escape takes a pattern and an escape character");
    };
    let patterns = cast(patterns, &DataType::Utf8)?;
    let escapes = cast(escapes, &DataType::Utf8)?;
    let (patterns, escapes) = (patterns.as_string::<i32>(), escapes.as_string::<i32>());
    let mut out = StringBuilder::with_capacity(patterns.len(), patterns.value_data().len() + 8);
    for i in 0..patterns.len() {
        if patterns.is_null(i) {
            out.append_null();
            continue;
        }
        let pattern = patterns.value(i);
        match (!escapes.is_null(i))
            .then(|| escapes.value(i).chars().next())
            .flatten()
        {
            Some(escape) if escape != '\\' => {
                out.append_value(with_backslash_escape(pattern, escape))
            }
            _ => out.append_value(pattern),
        }
    }
    output(Arc::new(out.finish()), scalar)
}

fn rewrite(e: Expr) -> Result<Transformed<Expr>> {
    let Expr::Like(like) = e else {
        return Ok(Transformed::no(e));
    };
    let escape = match like.escape_char {
        Some(c) if c != '\\' => c,
        _ => return Ok(Transformed::no(Expr::Like(like))),
    };
    let text = match like.pattern.as_ref() {
        Expr::Literal(
            ScalarValue::Utf8(Some(s))
            | ScalarValue::Utf8View(Some(s))
            | ScalarValue::LargeUtf8(Some(s)),
            _,
        ) => Some(s.clone()),
        _ => None,
    };
    let pattern = match text {
        Some(text) => Expr::Literal(
            ScalarValue::Utf8(Some(with_backslash_escape(&text, escape))),
            None,
        ),
        None => Expr::ScalarFunction(ScalarFunction::new_udf(
            FUNCTION.clone(),
            vec![
                *like.pattern,
                Expr::Literal(ScalarValue::Utf8(Some(escape.to_string())), None),
            ],
        )),
    };
    Ok(Transformed::yes(Expr::Like(Like {
        pattern: Box::new(pattern),
        escape_char: Some('\\'),
        ..like
    })))
}

#[cfg(test)]
mod tests {
    use super::with_backslash_escape;

    #[test]
    fn patterns_move_to_the_backslash() {
        assert_eq!(with_backslash_escape("a/%b", '/'), "a\\%b");
        assert_eq!(with_backslash_escape("/_x%", '/'), "\\_x%");
        assert_eq!(with_backslash_escape("//", '/'), "/");
        assert_eq!(with_backslash_escape("a\\b%", '/'), "a\\\\b%");
        assert_eq!(with_backslash_escape("ab/", '/'), "ab/");
        assert_eq!(with_backslash_escape("a#%", '#'), "a\\%");
        assert_eq!(with_backslash_escape("a/b", '/'), "ab");
    }
}
