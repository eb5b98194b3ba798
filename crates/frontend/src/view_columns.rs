//! The column names of a view made without a column list, by MySQL's rules: each select item
//! of the (first) SELECT is named by its alias, its column, or the expression as written (a
//! string literal by its value); two items named alike (names compare without regard to case)
//! are an error (1060) when both names were given (an alias or a column), and otherwise the
//! generated one is renamed `My_exp_<name>`, or `My_exp_<n>_<name>` with the first `n` that
//! names no item before it, as MySQL and MariaDB do. Also: the select lists of a view's query
//! made plannable when they name result columns alike.

use basalt_common::{BasaltError, Result};
use basalt_sql::ast::{Expr, Ident, Query, SelectItem, SetExpr, Value};

/// One result column of the view's query: its name and whether the name was generated.
struct Item {
    name: String,
    generated: bool,
}

/// The view's column names, from `names` (the first SELECT's items as the client names them).
pub(crate) fn unique_names(query: &Query, names: Vec<String>) -> Result<Vec<String>> {
    let Some(select) = first_select(query.body.as_ref()) else {
        return Ok(names);
    };
    if select.projection.len() != names.len() {
        return Ok(names);
    }
    let mut items: Vec<Item> = select
        .projection
        .iter()
        .zip(names)
        .map(|(item, name)| match item {
            SelectItem::UnnamedExpr(Expr::Identifier(_) | Expr::CompoundIdentifier(_))
            | SelectItem::ExprWithAlias { .. } => Item {
                name,
                generated: false,
            },
            SelectItem::UnnamedExpr(Expr::Value(v)) => Item {
                name: match &v.value {
                    Value::SingleQuotedString(s) | Value::DoubleQuotedString(s) => s.clone(),
                    _ => name,
                },
                generated: true,
            },
            _ => Item {
                name,
                generated: true,
            },
        })
        .collect();
    for i in 0..items.len() {
        for j in 0..i {
            if !items[i].name.eq_ignore_ascii_case(&items[j].name) {
                continue;
            }
            let renamed = if items[i].generated {
                i
            } else if items[j].generated {
                j
            } else {
                return Err(BasaltError::DuplicateColumn(items[i].name.clone()));
            };
            items[renamed].name = generated_name(&items, renamed, i);
            if renamed == i {
                break;
            }
        }
    }
    Ok(items.into_iter().map(|i| i.name).collect())
}

/// `My_exp_<name>` or `My_exp_<n>_<name>`: the first that no item up to `last` (other than
/// `target`) is named.
fn generated_name(items: &[Item], target: usize, last: usize) -> String {
    let name = &items[target].name;
    (0..)
        .map(|attempt| match attempt {
            0 => format!("My_exp_{name}"),
            n => format!("My_exp_{n}_{name}"),
        })
        .find(|candidate| {
            !items[..=last]
                .iter()
                .enumerate()
                .any(|(k, item)| k != target && item.name.eq_ignore_ascii_case(candidate))
        })
        .expect("some attempt names no item")
}

/// Gives the select items of every arm of the query an alias of their own when an arm names
/// two columns alike (DataFusion needs distinct names): the view's column name where `names`
/// has one per item, else a name of its position. An alias the query refers to elsewhere
/// (ORDER BY, HAVING) is kept when it is the first of its name.
pub(crate) fn alias_duplicates(query: &mut Query, names: Option<&[String]>) {
    let mut pending = vec![query.body.as_mut()];
    while let Some(body) = pending.pop() {
        match body {
            SetExpr::Select(select) => {
                let fits = names.filter(|n| n.len() == select.projection.len());
                let mut seen = std::collections::HashSet::new();
                for (i, item) in select.projection.iter_mut().enumerate() {
                    let alias = |i: usize| match fits {
                        Some(names) => Ident::with_quote('`', names[i].clone()),
                        None => {
                            Ident::new(format!("{}{i}", crate::result_names::INTERNAL_ALIAS_PREFIX))
                        }
                    };
                    match item {
                        SelectItem::UnnamedExpr(e) => {
                            *item = SelectItem::ExprWithAlias {
                                expr: e.clone(),
                                alias: alias(i),
                            };
                        }
                        SelectItem::ExprWithAlias { alias: a, .. }
                            if !seen.insert(a.value.to_lowercase()) =>
                        {
                            *a = alias(i);
                        }
                        _ => {}
                    }
                }
            }
            SetExpr::SetOperation { left, right, .. } => {
                pending.push(left.as_mut());
                pending.push(right.as_mut());
            }
            SetExpr::Query(q) => pending.push(q.body.as_mut()),
            _ => {}
        }
    }
}

/// The SELECT that names a query's columns: the query's own, or a set operation's first.
fn first_select(body: &SetExpr) -> Option<&basalt_sql::ast::Select> {
    match body {
        SetExpr::Select(select) => Some(select),
        SetExpr::SetOperation { left, .. } => first_select(left),
        SetExpr::Query(q) => first_select(q.body.as_ref()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(sql: &str) -> Result<Vec<String>> {
        let stmt = match basalt_sql::parse_one(sql).unwrap() {
            basalt_sql::Statement::Standard(s) => *s,
            other => panic!("{other:?}"),
        };
        let given = crate::statement::mysql_column_names(&stmt).unwrap();
        let basalt_sql::ast::Statement::Query(q) = stmt else {
            panic!("not a query")
        };
        unique_names(&q, given)
    }

    #[test]
    fn generated_names_give_way() {
        assert_eq!(names("select 'a','a'").unwrap(), ["a", "My_exp_a"]);
        assert_eq!(names("select 'k','K'").unwrap(), ["k", "My_exp_K"]);
        assert_eq!(
            names("select 1 as s1, 's1', 's1' from t1").unwrap(),
            ["s1", "My_exp_s1", "My_exp_1_s1"]
        );
        assert_eq!(
            names("select 's1', 's1', 1 as s1 from t1").unwrap(),
            ["My_exp_1_s1", "My_exp_s1", "s1"]
        );
        assert_eq!(
            names("select 'a', 'a' as a2, 'a'").unwrap(),
            ["a", "a2", "My_exp_a"]
        );
    }

    #[test]
    fn given_names_alike_are_an_error() {
        for sql in [
            "select a, a from t1",
            "select t1.b, t2.b from t1, t2",
            "select 1 as a, 2 as A",
        ] {
            assert!(
                matches!(names(sql), Err(BasaltError::DuplicateColumn(_))),
                "{sql}"
            );
        }
        assert_eq!(
            names("select 1 as a, 2 as b union all select 1 as a, 1 as a").unwrap(),
            ["a", "b"]
        );
    }
}
