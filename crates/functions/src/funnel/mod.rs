//! Doris's behaviour-analysis aggregates, what funnel and A/B analysis platforms call:
//! `window_funnel` (how far users get along a chain of steps within a time window),
//! `sequence_match` / `sequence_count` (event chains matching a pattern) and `retention`
//! (which later conditions held for users meeting the first).

mod event_log;
mod retention;
mod sequence_pattern;
mod window_funnel;

use datafusion::logical_expr::AggregateUDF;
use event_log::Analysis;

/// The four aggregates.
pub fn functions() -> Vec<AggregateUDF> {
    vec![
        event_log::function(Analysis::WindowFunnel),
        event_log::function(Analysis::SequenceMatch),
        event_log::function(Analysis::SequenceCount),
        retention::function(),
    ]
}
