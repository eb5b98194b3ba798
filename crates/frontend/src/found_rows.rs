//! MySQL's FOUND_ROWS(): the rows the session's last statement that returned rows (a SELECT,
//! a SHOW, an EXPLAIN) found "up to its LIMIT" — the rows it gave its client, plus those its
//! outer OFFSET skipped — or, for a `SELECT SQL_CALC_FOUND_ROWS ... LIMIT`, the rows it would
//! have given without its LIMIT. A UNION with a LIMIT on the whole counts its rows without that
//! LIMIT too, with or without SQL_CALC_FOUND_ROWS (as MySQL and MariaDB do). `SELECT ... INTO`
//! and `INSERT ... SELECT` count the rows they selected. Other statements that return no rows
//! (INSERT ... VALUES, UPDATE, SET, DDL) and statements that fail leave the count as it was.
//! As with ROW_COUNT(), a statement sees the count as it was when it began: its own rows are
//! counted as the client reads them.

use crate::output::Output;
use basalt_common::df_error::from_df;
use basalt_common::{BasaltError, Result};
use basalt_sql::ast;
use datafusion::arrow::array::{Array, Int64Array, RecordBatch};
use datafusion::logical_expr::{
    Expr, FetchType, LogicalPlan, LogicalPlanBuilder, Projection, SkipType,
};
use futures::StreamExt;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Counts the rows an OFFSET skipped (at most the OFFSET), when polled.
pub(crate) type SkippedRows = futures::future::BoxFuture<'static, u64>;

/// One session's counts.
#[derive(Default)]
pub(crate) struct FoundRows {
    /// The count of the last statement that returned rows (set when its client has read them).
    last: Arc<AtomicU64>,
    /// What FOUND_ROWS() gives in the running statement.
    visible: AtomicU64,
    /// The running statement's own count (its rows without LIMIT, or the rows it selected).
    total: parking_lot::Mutex<Option<u64>>,
    /// The running query's outer OFFSET and what counts the rows it skipped (run only when no
    /// row comes back).
    offset: parking_lot::Mutex<Option<(u64, SkippedRows)>>,
}

impl std::fmt::Debug for FoundRows {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FoundRows")
            .field("last", &self.last)
            .field("visible", &self.visible)
            .field("total", &self.total)
            .finish_non_exhaustive()
    }
}

impl FoundRows {
    /// A statement begins: FOUND_ROWS() gives the count as the statements before left it.
    pub fn begin(&self) {
        self.visible
            .store(self.last.load(Ordering::Relaxed), Ordering::Relaxed);
        *self.total.lock() = None;
        *self.offset.lock() = None;
    }

    /// The running statement's rows without its LIMIT (SQL_CALC_FOUND_ROWS).
    pub fn set_total(&self, rows: u64) {
        *self.total.lock() = Some(rows);
    }

    /// The rows the running statement selected without returning them (`SELECT ... INTO`,
    /// `INSERT ... SELECT`), unless it counted its rows without LIMIT already.
    pub fn set_selected(&self, rows: u64) {
        self.total.lock().get_or_insert(rows);
    }

    /// The running query's outer OFFSET: its rows count from there.
    pub fn set_offset(&self, skip: u64, skipped: SkippedRows) {
        *self.offset.lock() = Some((skip, skipped));
    }

    /// FOUND_ROWS() in the running statement.
    pub fn value(&self) -> i64 {
        i64::try_from(self.visible.load(Ordering::Relaxed)).unwrap_or(i64::MAX)
    }

    /// A statement ended with `result`: the rows it counted become the count (its total
    /// without LIMIT, or the rows it selected), else a result set's rows as the client reads
    /// them (after the last one), past its OFFSET.
    pub fn finish(&self, result: Result<Output>) -> Result<Output> {
        let total = self.total.lock().take();
        let offset = self.offset.lock().take();
        let (schema, stream) = match (result, total) {
            (Ok(output), Some(total)) => {
                self.last.store(total, Ordering::Relaxed);
                return Ok(output);
            }
            (Ok(Output::Rows { schema, stream }), None) => (schema, stream),
            (other, _) => return other,
        };
        let read = Arc::new(AtomicU64::new(0));
        let counting = read.clone();
        let stream = stream.inspect(move |batch| {
            if let Ok(batch) = batch {
                counting.fetch_add(batch.num_rows() as u64, Ordering::Relaxed);
            }
        });
        let last = self.last.clone();
        let at_end = futures::stream::once(async move {
            let read = read.load(Ordering::Relaxed);
            let found = match offset {
                None => read,
                Some((skip, _)) if read > 0 => skip.saturating_add(read),
                Some((_, skipped)) => skipped.await,
            };
            last.store(found, Ordering::Relaxed);
        })
        .filter_map(|()| async { None });
        Ok(Output::Rows {
            schema,
            stream: Box::pin(stream.chain(at_end)),
        })
    }
}

/// How FOUND_ROWS() counts a statement's rows beyond those it returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rule {
    /// Not a query.
    NotAQuery,
    /// Rows up to its LIMIT: those returned and those its outer OFFSET skipped.
    UpToLimit,
    /// Its rows without its outer LIMIT: a query with a LIMIT whose first SELECT says
    /// SQL_CALC_FOUND_ROWS, or whose body is a UNION (INTERSECT, EXCEPT).
    WithoutLimit,
}

impl Rule {
    pub(crate) fn of(stmt: &ast::Statement) -> Rule {
        let ast::Statement::Query(query) = stmt else {
            return Rule::NotAQuery;
        };
        let without_limit = match query.body.as_ref() {
            ast::SetExpr::SetOperation { .. } => true,
            body => first_select(body).is_some_and(calculates),
        };
        match without_limit && query.limit_clause.is_some() {
            true => Rule::WithoutLimit,
            false => Rule::UpToLimit,
        }
    }
}

/// What has to be counted for a query's FOUND_ROWS() besides its rows.
pub(crate) enum Counting {
    /// Its rows without the outer LIMIT: a plan counting them.
    Total(LogicalPlan),
    /// An outer OFFSET `skip`, and a plan counting the rows it skipped (at most `skip`).
    Offset { skip: u64, skipped: LogicalPlan },
}

impl Counting {
    /// What `plan` (of a statement under `rule`) needs counted; `None`: its rows alone.
    pub(crate) fn of(rule: Rule, plan: &LogicalPlan) -> Result<Option<Counting>> {
        if rule == Rule::NotAQuery {
            return Ok(None);
        }
        let Some((skip, fetch, unlimited)) = without_outer_limit(plan)? else {
            return Ok(None);
        };
        let counted = |plan: LogicalPlan| {
            LogicalPlanBuilder::from(plan)
                .aggregate(
                    Vec::<Expr>::new(),
                    vec![datafusion::functions_aggregate::count::count_all()],
                )
                .and_then(|b| b.build())
                .map_err(from_df)
        };
        match (rule, skip, fetch) {
            (Rule::WithoutLimit, _, _) => Ok(Some(Counting::Total(counted(unlimited)?))),
            // Nothing skipped, or LIMIT 0 (MySQL does not run the query: nothing found).
            (_, 0, _) | (_, _, Some(0)) => Ok(None),
            (_, skip, _) => {
                let fetch = usize::try_from(skip).unwrap_or(usize::MAX);
                let first = LogicalPlanBuilder::from(unlimited)
                    .limit(0, Some(fetch))
                    .and_then(|b| b.build())
                    .map_err(from_df)?;
                Ok(Some(Counting::Offset {
                    skip,
                    skipped: counted(first)?,
                }))
            }
        }
    }
}

/// Whether `stmt` is an INSERT (REPLACE) of a query's rows: they count as found.
pub(crate) fn inserts_selected_rows(stmt: &ast::Statement) -> bool {
    match stmt {
        ast::Statement::Insert(insert) => insert
            .source
            .as_ref()
            .is_some_and(|q| !matches!(q.body.as_ref(), ast::SetExpr::Values(_))),
        _ => false,
    }
}

/// The first SELECT of a query body (through parentheses and set operations).
fn first_select(body: &ast::SetExpr) -> Option<&ast::Select> {
    match body {
        ast::SetExpr::Select(select) => Some(select),
        ast::SetExpr::Query(query) => first_select(&query.body),
        ast::SetExpr::SetOperation { left, .. } => first_select(left),
        _ => None,
    }
}

/// SQL_CALC_FOUND_ROWS only in the first SELECT of a query statement (1234 elsewhere: in a
/// subquery, a derived table, a later SELECT of a UNION).
pub(crate) fn check_placement(stmt: &ast::Statement) -> Result<()> {
    use ast::Visit;
    let mut flagged = Flagged(0);
    let _ = stmt.visit(&mut flagged);
    let first_flagged = match stmt {
        ast::Statement::Query(query) => first_select(&query.body).is_some_and(calculates),
        _ => false,
    };
    match flagged.0 {
        0 => Ok(()),
        1 if first_flagged => Ok(()),
        _ => Err(BasaltError::OptionPlacement("SQL_CALC_FOUND_ROWS".into())),
    }
}

/// Counts the SELECTs that say SQL_CALC_FOUND_ROWS.
struct Flagged(usize);

impl ast::Visitor for Flagged {
    type Break = ();

    fn pre_visit_query(&mut self, query: &ast::Query) -> ControlFlow<()> {
        self.0 += flagged_in(&query.body);
        ControlFlow::Continue(())
    }
}

/// The flagged SELECTs of one query body (its parenthesized queries are visited on their own).
fn flagged_in(body: &ast::SetExpr) -> usize {
    match body {
        ast::SetExpr::Select(select) => usize::from(calculates(select)),
        ast::SetExpr::SetOperation { left, right, .. } => flagged_in(left) + flagged_in(right),
        _ => 0,
    }
}

fn calculates(select: &ast::Select) -> bool {
    select
        .select_modifiers
        .as_ref()
        .is_some_and(|m| m.sql_calc_found_rows)
}

/// `plan` without the LIMIT at its top (under the projections that name its columns), with
/// that LIMIT's OFFSET and row count; `None` when it has none (or one that is no number).
fn without_outer_limit(plan: &LogicalPlan) -> Result<Option<(u64, Option<usize>, LogicalPlan)>> {
    match plan {
        LogicalPlan::Limit(limit) => {
            let skip = match limit.get_skip_type().map_err(from_df)? {
                SkipType::Literal(skip) => skip as u64,
                SkipType::UnsupportedExpr => return Ok(None),
            };
            let fetch = match limit.get_fetch_type().map_err(from_df)? {
                FetchType::Literal(fetch) => fetch,
                FetchType::UnsupportedExpr => return Ok(None),
            };
            Ok(Some((skip, fetch, limit.input.as_ref().clone())))
        }
        LogicalPlan::Projection(p) => {
            let Some((skip, fetch, input)) = without_outer_limit(&p.input)? else {
                return Ok(None);
            };
            let projection =
                Projection::try_new(p.expr.clone(), Arc::new(input)).map_err(from_df)?;
            Ok(Some((skip, fetch, LogicalPlan::Projection(projection))))
        }
        _ => Ok(None),
    }
}

/// The count a counting plan gave (its one row's one value).
pub(crate) fn counted(batches: &[RecordBatch]) -> u64 {
    batches
        .iter()
        .find(|b| b.num_rows() > 0)
        .and_then(|b| b.column(0).as_any().downcast_ref::<Int64Array>())
        .filter(|a| !a.is_null(0))
        .map_or(0, |a| u64::try_from(a.value(0)).unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::datatypes::{DataType, Field, Schema};

    fn query(sql: &str) -> ast::Statement {
        match basalt_sql::parse_one(sql) {
            Ok(basalt_sql::Statement::Standard(s)) => *s,
            other => panic!("not a standard statement: {other:?}"),
        }
    }

    #[test]
    fn totals_are_counted_for_calc_found_rows_and_unions_with_a_limit() {
        assert_eq!(
            Rule::of(&query("SELECT SQL_CALC_FOUND_ROWS a FROM t LIMIT 1")),
            Rule::WithoutLimit
        );
        assert_eq!(
            Rule::of(&query(
                "(SELECT SQL_CALC_FOUND_ROWS a FROM t LIMIT 1) UNION SELECT b FROM u LIMIT 2"
            )),
            Rule::WithoutLimit
        );
        assert_eq!(
            Rule::of(&query("SELECT a FROM t UNION ALL SELECT b FROM u LIMIT 2")),
            Rule::WithoutLimit
        );
        assert_eq!(
            Rule::of(&query("SELECT SQL_CALC_FOUND_ROWS a FROM t")),
            Rule::UpToLimit
        );
        assert_eq!(Rule::of(&query("SELECT a FROM t LIMIT 1")), Rule::UpToLimit);
        assert_eq!(
            Rule::of(&query("SELECT a FROM t UNION SELECT b FROM u")),
            Rule::UpToLimit
        );
    }

    #[test]
    fn inserts_of_queries_count_their_rows() {
        assert!(inserts_selected_rows(&query(
            "INSERT INTO t SELECT * FROM u"
        )));
        assert!(!inserts_selected_rows(&query("INSERT INTO t VALUES (1)")));
        assert_eq!(Rule::of(&query("INSERT INTO t SELECT 1")), Rule::NotAQuery);
    }

    #[test]
    fn calc_found_rows_belongs_to_the_first_select() {
        let placed = |sql: &str| check_placement(&query(sql)).is_ok();
        assert!(placed("SELECT SQL_CALC_FOUND_ROWS a FROM t LIMIT 1"));
        assert!(placed(
            "(SELECT SQL_CALC_FOUND_ROWS a FROM t LIMIT 1) UNION SELECT 1"
        ));
        assert!(placed("SELECT a FROM t WHERE a IN (SELECT b FROM u)"));
        assert!(!placed(
            "SELECT a FROM t UNION SELECT SQL_CALC_FOUND_ROWS b FROM u"
        ));
        assert!(!placed(
            "SELECT * FROM (SELECT SQL_CALC_FOUND_ROWS a FROM t LIMIT 1) x"
        ));
        assert!(!placed(
            "SELECT SQL_CALC_FOUND_ROWS a FROM t UNION SELECT SQL_CALC_FOUND_ROWS b FROM u"
        ));
        let e = check_placement(&query("SELECT 1 FROM (SELECT SQL_CALC_FOUND_ROWS 1) x"));
        assert_eq!(e.map_err(|e| e.mysql_code()), Err(1234));
    }

    fn batch3(schema: &Arc<Schema>) -> RecordBatch {
        RecordBatch::try_new(
            schema.clone(),
            vec![Arc::new(Int64Array::from(vec![1, 2, 3]))],
        )
        .expect("batch")
    }

    #[tokio::test]
    async fn a_result_sets_rows_count_once_read() {
        let found = FoundRows::default();
        let schema = Arc::new(Schema::new(vec![Field::new("a", DataType::Int64, false)]));
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![Arc::new(Int64Array::from(vec![1, 2, 3]))],
        )
        .expect("batch");
        found.begin();
        let out = found.finish(Ok(Output::batches(
            schema.clone(),
            vec![batch.clone(), batch],
        )));
        let Ok(Output::Rows { stream, .. }) = out else {
            panic!("rows expected");
        };
        assert_eq!(found.last.load(Ordering::Relaxed), 0, "counted as read");
        let _: Vec<_> = stream.collect().await;
        assert_eq!(
            found.value(),
            0,
            "the running statement sees the count before it"
        );
        found.begin();
        assert_eq!(found.value(), 6);
        // A statement without rows leaves the count; a total replaces the rows read.
        assert!(found.finish(Ok(Output::affected(2))).is_ok());
        found.begin();
        assert_eq!(found.value(), 6);
        found.set_selected(1);
        assert!(found.finish(Ok(Output::ok())).is_ok());
        found.begin();
        assert_eq!(found.value(), 1);
        found.set_total(40);
        let _ = found.finish(Ok(Output::batches(schema.clone(), vec![])));
        found.begin();
        assert_eq!(found.value(), 40);
        // Past an OFFSET: the rows skipped and read; when none came back, the rows skipped.
        for (batches, found_rows) in [(vec![batch3(&schema)], 5), (vec![], 1)] {
            found.begin();
            found.set_offset(2, Box::pin(async { 1 }));
            let out = found.finish(Ok(Output::batches(schema.clone(), batches)));
            let Ok(Output::Rows { stream, .. }) = out else {
                panic!("rows expected");
            };
            let _: Vec<_> = stream.collect().await;
            found.begin();
            assert_eq!(found.value(), found_rows);
        }
    }
}
