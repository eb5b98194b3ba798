//! Columns merged by NATURAL and USING joins, as MySQL resolves them. A join that merges
//! columns by name shows each merged column once, and a SELECT sees its FROM's columns in
//! MySQL's order: the merged columns first (in the order the left side has them), then the rest
//! of the left side's, then the rest of the right side's; nested joins compose. An unqualified
//! name of a merged column means the merged column (the left side's, which `using_joins` made
//! the preserved side of an outer join; both sides' first non-NULL in a FULL join).
//!
//! DataFusion keeps the left side's columns in place (`t1.c, t1.b, t2.a` for `t1(c, b) NATURAL
//! JOIN t2(a, b)` where MySQL shows `b, c, a`) and finds an unqualified merged name ambiguous in
//! WHERE. So, for each SELECT whose FROM holds such a join:
//! - `*` is spelled out as the column list MySQL shows;
//! - an unqualified name of a merged column (outside subqueries) names the column it merges;
//! - a NATURAL join becomes a USING join of the columns both sides have (an ON TRUE join when
//!   they have none).
//!
//! A FROM item's columns come from planning `SELECT * FROM <item>` (a derived table after its
//! own query was rewritten so); an item whose columns cannot be had is kept as `item.*`, which
//! serves a USING join (its columns are named) but not a NATURAL one (that SELECT is left as
//! DataFusion plans it).

use crate::join_operators::{join_constraint, join_constraint_mut};
use basalt_sql::ast::{
    ExcludeSelectItem, Expr, Ident, JoinConstraint, JoinOperator, ObjectName, ObjectNamePart,
    OrderByKind, Query, Select, SelectItem, SelectItemQualifiedWildcardKind, SetExpr, Statement,
    TableFactor, TableWithJoins, Visit, VisitMut, Visitor, VisitorMut, WildcardAdditionalOptions,
    With,
};
use datafusion::execution::SessionState;
use datafusion::sql::parser::Statement as DfStatement;
use futures::future::BoxFuture;
use std::collections::HashMap;
use std::ops::ControlFlow;

/// The columns of FROM items, by the item's SQL text.
type Known = HashMap<String, Vec<String>>;

/// Rewrites every SELECT of `stmt` whose FROM merges columns, learning its FROM items'
/// columns by planning them in `state`.
pub(crate) async fn rewrite(stmt: &mut Statement, state: &SessionState) {
    if !merges_columns(stmt) {
        return;
    }
    let mut known = Known::new();
    learn(stmt, state, &mut known).await;
    apply(stmt, &known);
}

/// True when some FROM of `stmt` holds a NATURAL or USING join.
fn merges_columns(stmt: &Statement) -> bool {
    struct Find;
    impl Visitor for Find {
        type Break = ();
        fn pre_visit_select(&mut self, select: &Select) -> ControlFlow<()> {
            match select.from.iter().any(holds_merging_join) {
                true => ControlFlow::Break(()),
                false => ControlFlow::Continue(()),
            }
        }
    }
    stmt.visit(&mut Find).is_break()
}

fn holds_merging_join(from: &TableWithJoins) -> bool {
    from.joins.iter().any(|j| {
        matches!(
            join_constraint(&j.join_operator),
            Some(JoinConstraint::Natural | JoinConstraint::Using(_))
        )
    }) || std::iter::once(&from.relation)
        .chain(from.joins.iter().map(|j| &j.relation))
        .any(|factor| match factor {
            TableFactor::NestedJoin {
                table_with_joins, ..
            } => holds_merging_join(table_with_joins),
            _ => false,
        })
}

/// Learns the columns of every FROM item beside a merging join in `stmt` (a derived table's
/// after its own query is rewritten, so its `*` has MySQL's order too).
fn learn<'a>(
    stmt: &'a Statement,
    state: &'a SessionState,
    known: &'a mut Known,
) -> BoxFuture<'a, ()> {
    Box::pin(async move {
        let ctes = common_tables(stmt);
        for leaf in leaves(stmt) {
            let key = leaf.to_string();
            if known.contains_key(&key) {
                continue;
            }
            let Some(mut probe) = star_from(leaf, ctes.clone()) else {
                continue;
            };
            learn(&probe, state, known).await;
            apply(&mut probe, known);
            let planned = state
                .statement_to_plan(DfStatement::Statement(Box::new(probe)))
                .await;
            if let Ok(plan) = planned {
                let names = plan.schema().fields().iter().map(|f| f.name().clone());
                known.insert(key, names.collect());
            }
        }
    })
}

/// The common table expressions of every WITH in `stmt` (the first of each name), so that a
/// FROM item naming one can be planned on its own.
fn common_tables(stmt: &Statement) -> Option<With> {
    struct Collect(Option<With>);
    impl Visitor for Collect {
        type Break = ();
        fn pre_visit_query(&mut self, query: &Query) -> ControlFlow<()> {
            let Some(with) = &query.with else {
                return ControlFlow::Continue(());
            };
            let all = self.0.get_or_insert_with(|| With {
                cte_tables: vec![],
                ..with.clone()
            });
            all.recursive |= with.recursive;
            for cte in &with.cte_tables {
                let name = &cte.alias.name.value;
                if !all.cte_tables.iter().any(|c| &c.alias.name.value == name) {
                    all.cte_tables.push(cte.clone());
                }
            }
            ControlFlow::Continue(())
        }
    }
    let mut found = Collect(None);
    let _ = stmt.visit(&mut found);
    found.0
}

/// `[WITH <ctes>] SELECT * FROM <leaf>`.
fn star_from(leaf: TableFactor, ctes: Option<With>) -> Option<Statement> {
    let Ok(basalt_sql::Statement::Standard(stmt)) = basalt_sql::parse_one("SELECT * FROM t") else {
        return None;
    };
    let mut stmt = *stmt;
    let Statement::Query(query) = &mut stmt else {
        return None;
    };
    let SetExpr::Select(select) = query.body.as_mut() else {
        return None;
    };
    select.from[0].relation = leaf;
    query.with = ctes;
    Some(stmt)
}

/// The table factors (not nested joins) of every FROM in `stmt` that holds a merging join.
fn leaves(stmt: &Statement) -> Vec<TableFactor> {
    struct Collect(Vec<TableFactor>);
    impl Visitor for Collect {
        type Break = ();
        fn pre_visit_select(&mut self, select: &Select) -> ControlFlow<()> {
            if select.from.iter().any(holds_merging_join) {
                for from in &select.from {
                    collect_leaves(from, &mut self.0);
                }
            }
            ControlFlow::Continue(())
        }
    }
    let mut found = Collect(Vec::new());
    let _ = stmt.visit(&mut found);
    found.0
}

fn collect_leaves(from: &TableWithJoins, out: &mut Vec<TableFactor>) {
    for factor in std::iter::once(&from.relation).chain(from.joins.iter().map(|j| &j.relation)) {
        match factor {
            TableFactor::NestedJoin {
                table_with_joins, ..
            } => collect_leaves(table_with_joins, out),
            other => out.push(other.clone()),
        }
    }
}

/// Rewrites each SELECT of `stmt` whose FROM merges columns, with the columns in `known`.
fn apply(stmt: &mut Statement, known: &Known) {
    let _ = stmt.visit(&mut Apply { known });
}

struct Apply<'a> {
    known: &'a Known,
}

impl VisitorMut for Apply<'_> {
    type Break = ();

    fn pre_visit_select(&mut self, select: &mut Select) -> ControlFlow<()> {
        if select.from.iter().any(holds_merging_join) {
            rewrite_select(select, self.known);
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_query(&mut self, query: &mut Query) -> ControlFlow<()> {
        let SetExpr::Select(select) = query.body.as_mut() else {
            return ControlFlow::Continue(());
        };
        if !select.from.iter().any(holds_merging_join) {
            return ControlFlow::Continue(());
        }
        // (The SELECT's own visit rewrites it again, to the same.)
        let Some(merged) = rewrite_select(select, self.known) else {
            return ControlFlow::Continue(());
        };
        // ORDER BY names a result column (an alias) before a FROM column.
        let aliases = aliases(select);
        if let Some(order_by) = &mut query.order_by {
            if let OrderByKind::Expressions(exprs) = &mut order_by.kind {
                for e in exprs {
                    qualify(&mut e.expr, &merged, &aliases);
                }
            }
        }
        ControlFlow::Continue(())
    }
}

/// One column a FROM shows: a known column, or the not-yet-named rest of an item whose columns
/// are unknown.
#[derive(Clone)]
enum Shown {
    Column {
        name: Ident,
        source: Box<Expr>,
    },
    Rest {
        item: ObjectName,
        except: Vec<Ident>,
    },
}

impl Shown {
    fn named(&self, name: &str) -> bool {
        matches!(self, Shown::Column { name: n, .. } if n.value.eq_ignore_ascii_case(name))
    }
}

/// Rewrites one SELECT; the merged columns (lower-case name -> what it reads) on success.
fn rewrite_select(select: &mut Select, known: &Known) -> Option<HashMap<String, Expr>> {
    let mut shown = Vec::new();
    let mut merged = HashMap::new();
    let mut from = select.from.clone();
    for item in &mut from {
        shown.extend(shown_by(item, known, &mut merged)?);
    }
    select.from = from;
    let merged = visible(&merged, &shown);
    let no_aliases = Vec::new();
    for item in &mut select.projection {
        match item {
            SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => {
                qualify(e, &merged, &no_aliases)
            }
            _ => {}
        }
    }
    select.projection = std::mem::take(&mut select.projection)
        .into_iter()
        .flat_map(|item| match item {
            SelectItem::Wildcard(options) if is_plain(&options) => {
                shown.iter().map(spelled).collect()
            }
            other => vec![other],
        })
        .collect();
    if let Some(selection) = &mut select.selection {
        qualify(selection, &merged, &no_aliases);
    }
    // GROUP BY names a FROM column before a result column, as MySQL's does.
    if let basalt_sql::ast::GroupByExpr::Expressions(exprs, _) = &mut select.group_by {
        for e in exprs {
            qualify(e, &merged, &no_aliases);
        }
    }
    let aliases = aliases(select);
    if let Some(having) = &mut select.having {
        qualify(having, &merged, &aliases);
    }
    Some(merged)
}

/// The merged columns of `merged` that `shown` has once (a name two columns have is ambiguous,
/// as MySQL finds it), with what they read.
fn visible(merged: &HashMap<String, Expr>, shown: &[Shown]) -> HashMap<String, Expr> {
    merged
        .iter()
        .filter(|(name, source)| {
            let mut named = shown.iter().filter(|s| s.named(name));
            matches!(
                (named.next(), named.next()),
                (Some(Shown::Column { source: s, .. }), None) if s.as_ref() == *source
            )
        })
        .map(|(name, source)| (name.clone(), source.clone()))
        .collect()
}

/// The result column aliases of `select`, lower-case.
fn aliases(select: &Select) -> Vec<String> {
    select
        .projection
        .iter()
        .filter_map(|item| match item {
            SelectItem::ExprWithAlias { alias, .. } => Some(alias.value.to_lowercase()),
            _ => None,
        })
        .collect()
}

/// The columns one FROM item shows, merging those its NATURAL and USING joins merge (and
/// making its NATURAL joins USING joins).
fn shown_by(
    from: &mut TableWithJoins,
    known: &Known,
    merged: &mut HashMap<String, Expr>,
) -> Option<Vec<Shown>> {
    let mut shown = shown_by_factor(&mut from.relation, known, merged)?;
    for join in &mut from.joins {
        let right = shown_by_factor(&mut join.relation, known, merged)?;
        // An ON condition sees the columns of the two sides it joins.
        if let Some(JoinConstraint::On(on)) = join_constraint_mut(&mut join.join_operator) {
            let sides: Vec<Shown> = shown.iter().chain(&right).cloned().collect();
            qualify(on, &visible(merged, &sides), &[]);
        }
        let full = matches!(join.join_operator, JoinOperator::FullOuter(_));
        let names: Vec<Ident> = match join_constraint(&join.join_operator) {
            Some(JoinConstraint::Natural) => {
                if shown
                    .iter()
                    .chain(&right)
                    .any(|s| matches!(s, Shown::Rest { .. }))
                {
                    return None;
                }
                shown
                    .iter()
                    .filter_map(|s| match s {
                        Shown::Column { name, .. }
                            if right.iter().any(|r| r.named(&name.value)) =>
                        {
                            Some(name.clone())
                        }
                        _ => None,
                    })
                    .collect()
            }
            Some(JoinConstraint::Using(names)) => names
                .iter()
                .map(|n| n.0.last().and_then(ObjectNamePart::as_ident).cloned())
                .collect::<Option<_>>()?,
            _ => {
                shown.extend(right);
                continue;
            }
        };
        if matches!(
            join.join_operator,
            JoinOperator::Right(_) | JoinOperator::RightOuter(_)
        ) {
            // using_joins makes these left joins; one left is not for this rewrite.
            return None;
        }
        if matches!(
            join_constraint(&join.join_operator),
            Some(JoinConstraint::Natural)
        ) {
            let new = match names.is_empty() {
                true => {
                    JoinConstraint::On(Expr::Value(basalt_sql::ast::Value::Boolean(true).into()))
                }
                false => JoinConstraint::Using(
                    names
                        .iter()
                        .map(|n| ObjectName::from(vec![n.clone()]))
                        .collect(),
                ),
            };
            if let Some(c) = join_constraint_mut(&mut join.join_operator) {
                *c = new;
            }
        }
        shown = merge(shown, right, &names, full, merged)?;
    }
    Some(shown)
}

fn shown_by_factor(
    factor: &mut TableFactor,
    known: &Known,
    merged: &mut HashMap<String, Expr>,
) -> Option<Vec<Shown>> {
    let key = factor.to_string();
    let qualifier = match factor {
        TableFactor::NestedJoin {
            table_with_joins,
            alias: None,
        } => return shown_by(table_with_joins, known, merged),
        TableFactor::Table {
            alias: Some(alias), ..
        }
        | TableFactor::Derived {
            alias: Some(alias), ..
        } => ObjectName::from(vec![alias.name.clone()]),
        TableFactor::Table {
            name, alias: None, ..
        } => name.clone(),
        _ => return None,
    };
    Some(match known.get(&key) {
        Some(names) => names
            .iter()
            .map(|n| {
                let name = Ident::with_quote('`', n);
                Shown::Column {
                    source: Box::new(column(&qualifier, &name)),
                    name,
                }
            })
            .collect(),
        None => vec![Shown::Rest {
            item: qualifier,
            except: Vec::new(),
        }],
    })
}

/// `item.name`.
fn column(item: &ObjectName, name: &Ident) -> Expr {
    let mut parts: Vec<Ident> = item
        .0
        .iter()
        .filter_map(|p| p.as_ident().cloned())
        .collect();
    parts.push(name.clone());
    Expr::CompoundIdentifier(parts)
}

/// The columns of `left` joined to `right` merging `names`: the merged ones first (in the left
/// side's order), then the rest of the left's, then the rest of the right's.
fn merge(
    mut left: Vec<Shown>,
    mut right: Vec<Shown>,
    names: &[Ident],
    full: bool,
    merged: &mut HashMap<String, Expr>,
) -> Option<Vec<Shown>> {
    // (position on the left, the merged column)
    let mut first: Vec<(usize, Shown)> = Vec::new();
    for name in names {
        let (at, left_source, shown_name) = take(&mut left, name)?;
        let (_, right_source, _) = take(&mut right, name)?;
        let source = match full {
            true => crate::mysql_compat::call("coalesce", vec![left_source, right_source]),
            false => left_source,
        };
        merged.insert(shown_name.value.to_lowercase(), source.clone());
        first.push((
            at,
            Shown::Column {
                name: shown_name,
                source: Box::new(source),
            },
        ));
    }
    first.sort_by_key(|(at, _)| *at);
    let mut shown: Vec<Shown> = first.into_iter().map(|(_, s)| s).collect();
    shown.extend(left);
    shown.extend(right);
    Some(shown)
}

/// Takes the column `name` out of `side`: its position, what it reads and its name as shown.
/// A known column is removed; a name of the one item whose columns are unknown is excepted
/// from that item's rest.
fn take(side: &mut Vec<Shown>, name: &Ident) -> Option<(usize, Expr, Ident)> {
    if let Some(at) = side.iter().position(|s| s.named(&name.value)) {
        let Shown::Column { name, source } = side.remove(at) else {
            return None;
        };
        return Some((at, *source, name));
    }
    let mut rests = side
        .iter_mut()
        .enumerate()
        .filter(|(_, s)| matches!(s, Shown::Rest { .. }));
    let (at, rest) = rests.next()?;
    if rests.next().is_some() {
        return None;
    }
    let Shown::Rest { item, except } = rest else {
        return None;
    };
    except.push(name.clone());
    Some((at, column(item, name), name.clone()))
}

/// A shown column as a select item.
fn spelled(shown: &Shown) -> SelectItem {
    match shown {
        Shown::Column { name, source } => match source.as_ref() {
            Expr::CompoundIdentifier(parts) if parts.last() == Some(name) => {
                SelectItem::UnnamedExpr(*source.clone())
            }
            _ => SelectItem::ExprWithAlias {
                expr: *source.clone(),
                alias: name.clone(),
            },
        },
        Shown::Rest { item, except } => SelectItem::QualifiedWildcard(
            SelectItemQualifiedWildcardKind::ObjectName(item.clone()),
            WildcardAdditionalOptions {
                opt_exclude: (!except.is_empty()).then(|| {
                    ExcludeSelectItem::Multiple(
                        except
                            .iter()
                            .map(|n| ObjectName::from(vec![n.clone()]))
                            .collect(),
                    )
                }),
                ..Default::default()
            },
        ),
    }
}

/// A bare `*`, without EXCLUDE, REPLACE or the like.
pub(crate) fn is_plain(options: &WildcardAdditionalOptions) -> bool {
    options.opt_ilike.is_none()
        && options.opt_exclude.is_none()
        && options.opt_except.is_none()
        && options.opt_replace.is_none()
        && options.opt_rename.is_none()
        && options.opt_alias.is_none()
}

/// Names the merged column each unqualified merged name of `expr` (outside its subqueries)
/// means; a name in `aliases` is a result column's and is left.
fn qualify(expr: &mut Expr, merged: &HashMap<String, Expr>, aliases: &[String]) {
    if merged.is_empty() {
        return;
    }
    crate::own_level::rewrite_own_level(expr, |e| {
        if let Expr::Identifier(ident) = e {
            let name = ident.value.to_lowercase();
            if aliases.contains(&name) {
                return;
            }
            if let Some(source) = merged.get(&name) {
                *e = source.clone();
            }
        }
    });
}
