//! The pattern language of `sequence_match` / `sequence_count` and its matcher.
//!
//! A pattern is a sequence of steps: `(?N)` one event for which condition N holds, `.` any one
//! event, `.*` any number of events, and `(?t OP SECONDS)` a time check between the event
//! matched last and the next one (OP is `<=`, `<`, `>=`, `>`, `==`; any number of events may lie
//! in between). The search is unanchored: a match may start at any event.
//!
//! The matcher is a depth-first search over (step, event, base event) states, trying the
//! shorter alternative first (a `.*` matches as few events as it can). A state that failed once
//! fails again, so each is explored at most once: the search is polynomial in the number of
//! events, never exponential, and needs no recursion (a user's events can be many).

use std::collections::HashSet;

use datafusion::common::{exec_err, plan_err, Result};

/// One step of a pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Step {
    /// An event for which the condition at this index (from 0) holds.
    Event(usize),
    /// Any one event.
    Any,
    /// Any number of events.
    Star,
    /// The time from the base event to the next one, in microseconds, compared with a bound.
    Time(TimeOp, i64),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum TimeOp {
    LessOrEqual,
    Less,
    GreaterOrEqual,
    Greater,
    Equal,
}

impl TimeOp {
    fn holds(self, elapsed: i64, bound: i64) -> bool {
        match self {
            TimeOp::LessOrEqual => elapsed <= bound,
            TimeOp::Less => elapsed < bound,
            TimeOp::GreaterOrEqual => elapsed >= bound,
            TimeOp::Greater => elapsed > bound,
            TimeOp::Equal => elapsed == bound,
        }
    }
}

/// A parsed pattern.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Pattern {
    steps: Vec<Step>,
}

const MICROS_PER_SECOND: i64 = 1_000_000;

impl Pattern {
    /// Parses `text` for a function with `conditions` condition arguments.
    pub(super) fn parse(func: &str, text: &str, conditions: usize) -> Result<Pattern> {
        let bad = |why: &str| plan_err!("{func}: invalid pattern '{text}': {why}");
        // The search starts anywhere: an implicit leading `.*`.
        let mut steps = vec![Step::Star];
        let mut rest = text;
        while !rest.is_empty() {
            if let Some(r) = rest.strip_prefix(".*") {
                steps.push(Step::Star);
                rest = r;
            } else if let Some(r) = rest.strip_prefix('.') {
                steps.push(Step::Any);
                rest = r;
            } else if let Some(r) = rest.strip_prefix("(?t") {
                let Some(end) = r.find(')') else {
                    return bad("a time condition is not closed");
                };
                let Some((op, number)) = parse_time_condition(&r[..end]) else {
                    return bad("a time condition must be like (?t>=3600)");
                };
                if !matches!(steps.last(), Some(Step::Event(_) | Step::Any | Step::Star)) {
                    return bad("a time condition must follow an event");
                }
                let Some(bound) = number.checked_mul(MICROS_PER_SECOND) else {
                    return bad("the time is too large");
                };
                steps.push(Step::Time(op, bound));
                rest = &r[end + 1..];
            } else if let Some(r) = rest.strip_prefix("(?") {
                let Some(end) = r.find(')') else {
                    return bad("a condition reference is not closed");
                };
                let n: usize = match r[..end].parse() {
                    Ok(n) if n >= 1 && n <= conditions => n,
                    _ => {
                        return bad(&format!(
                            "(?N) must name one of the {conditions} conditions (1 to {conditions})"
                        ))
                    }
                };
                steps.push(Step::Event(n - 1));
                rest = &r[end + 1..];
            } else {
                return bad(&format!("unexpected '{rest}'"));
            }
        }
        if !steps
            .iter()
            .any(|s| matches!(s, Step::Event(_) | Step::Any))
        {
            return bad("it matches no event");
        }
        Ok(Pattern { steps })
    }

    /// Whether `events` (sorted by time: (microseconds, condition bits)) contain a match.
    pub(super) fn matches(&self, func: &str, events: &[(i64, u64)]) -> Result<bool> {
        Ok(Search::new(self, events).find(func, 0)?.is_some())
    }

    /// Non-overlapping matches, each search starting after the previous match's last event.
    pub(super) fn count(&self, func: &str, events: &[(i64, u64)]) -> Result<i64> {
        let mut search = Search::new(self, events);
        let mut start = 0;
        let mut count = 0;
        while start < events.len() {
            match search.find(func, start)? {
                Some(end) => {
                    count += 1;
                    start = end.max(start + 1);
                }
                None => break,
            }
        }
        Ok(count)
    }
}

/// States a search may visit before it gives up with an error (a pattern of time conditions
/// over a very long event list), rather than run for minutes.
const MAX_STATES: usize = 20_000_000;

/// Base event of a state whose step does not read it (only time conditions do).
const NO_BASE: usize = usize::MAX;

/// One search over one event list. The visited states carry over between the searches of
/// `count`: whether a state reaches the pattern's end does not depend on where the search
/// started, and the states a successful search visited without failing (its path) all lie
/// before the event the next search starts at, or after its last consuming step — which a
/// search starting there cannot reach without consuming an event.
struct Search<'a> {
    steps: &'a [Step],
    events: &'a [(i64, u64)],
    failed: HashSet<(usize, usize, usize)>,
}

impl<'a> Search<'a> {
    fn new(pattern: &'a Pattern, events: &'a [(i64, u64)]) -> Self {
        Search {
            steps: &pattern.steps,
            events,
            failed: HashSet::new(),
        }
    }

    /// The first match starting at or after `start`: the index after its last event.
    fn find(&mut self, func: &str, start: usize) -> Result<Option<usize>> {
        let steps = self.steps;
        // (step, next event, base event): alternatives still to try, the preferred on top.
        let mut stack = vec![(0usize, start, NO_BASE)];
        while let Some((step, at, base)) = stack.pop() {
            if step == steps.len() {
                return Ok(Some(at));
            }
            let reads_base = matches!(steps[step], Step::Time(..));
            let base = if reads_base { base } else { NO_BASE };
            if !self.failed.insert((step, at, base)) {
                continue;
            }
            if self.failed.len() > MAX_STATES {
                return exec_err!(
                    "{func}: the pattern is too costly to match over {} events",
                    self.events.len()
                );
            }
            let Some(&(ts, bits)) = self.events.get(at) else {
                // No event left: only trailing `.*` can still match (nothing).
                if steps[step..].iter().all(|s| *s == Step::Star) {
                    return Ok(Some(at));
                }
                continue;
            };
            match steps[step] {
                Step::Event(c) => {
                    if bits & (1 << c) != 0 {
                        stack.push((step + 1, at + 1, at));
                    }
                }
                Step::Any => stack.push((step + 1, at + 1, at)),
                Step::Star => {
                    // Pushed last, tried first: match nothing more.
                    stack.push((step, at + 1, base));
                    stack.push((step + 1, at, at));
                }
                Step::Time(op, bound) => {
                    let since = self.events.get(base).map_or(ts, |e| e.0);
                    if op.holds(ts.saturating_sub(since), bound) {
                        stack.push((step, at + 1, base));
                        stack.push((step + 1, at, at));
                    }
                }
            }
        }
        Ok(None)
    }
}

/// `>=3600` → (GreaterOrEqual, 3600).
fn parse_time_condition(text: &str) -> Option<(TimeOp, i64)> {
    let ops = [
        ("<=", TimeOp::LessOrEqual),
        (">=", TimeOp::GreaterOrEqual),
        ("==", TimeOp::Equal),
        ("<", TimeOp::Less),
        (">", TimeOp::Greater),
    ];
    let (number, op) = ops
        .iter()
        .find_map(|(sym, op)| text.strip_prefix(sym).map(|rest| (rest, *op)))?;
    let seconds: i64 = number.trim().parse().ok()?;
    (seconds >= 0).then_some((op, seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOUR: i64 = 3600 * MICROS_PER_SECOND;

    fn ev(hours: f64, bits: u64) -> (i64, u64) {
        ((hours * HOUR as f64) as i64, bits)
    }

    #[test]
    fn parses_and_rejects() {
        assert!(Pattern::parse("f", "(?1).*(?2)(?t<=10)(?1)", 2).is_ok());
        assert!(Pattern::parse("f", "(?3)", 2).is_err());
        assert!(Pattern::parse("f", "(?0)", 2).is_err());
        assert!(Pattern::parse("f", "(?1)(?t~5)", 2).is_err());
        assert!(Pattern::parse("f", "(?1", 2).is_err());
        assert!(Pattern::parse("f", ".*", 2).is_err());
        assert!(Pattern::parse("f", "x", 2).is_err());
    }

    #[test]
    fn adjacent_events_and_gaps() {
        // cond1, cond2, cond1, cond2 an hour or more apart.
        let events = [ev(0.0, 1), ev(2.8, 2), ev(5.5, 1), ev(8.4, 2)];
        let p = Pattern::parse("f", "(?1)(?2)", 2).unwrap();
        assert!(p.matches("f", &events).unwrap());
        assert_eq!(p.count("f", &events).unwrap(), 2);
        let timed = Pattern::parse("f", "(?1)(?t>=10000)(?2)", 2).unwrap();
        assert_eq!(timed.count("f", &events).unwrap(), 2);
        let too_long = Pattern::parse("f", "(?1)(?t>36000)(?2)", 2).unwrap();
        assert!(!too_long.matches("f", &events).unwrap());
        // An event of another condition in between breaks (?1)(?2) but not (?1).*(?2).
        let broken = [ev(0.0, 1), ev(1.0, 4), ev(2.0, 2)];
        assert!(!p.matches("f", &broken).unwrap());
        assert!(Pattern::parse("f", "(?1).*(?2)", 3)
            .unwrap()
            .matches("f", &broken)
            .unwrap());
        assert!(Pattern::parse("f", "(?1).(?2)", 3)
            .unwrap()
            .matches("f", &broken)
            .unwrap());
    }

    #[test]
    fn trailing_star_and_missing_event() {
        let events = [ev(0.0, 1)];
        assert!(!Pattern::parse("f", "(?1)(?2).*", 2)
            .unwrap()
            .matches("f", &events)
            .unwrap());
        assert!(Pattern::parse("f", "(?1).*", 2)
            .unwrap()
            .matches("f", &events)
            .unwrap());
        assert_eq!(
            Pattern::parse("f", "(?2)", 2)
                .unwrap()
                .count("f", &events)
                .unwrap(),
            0
        );
    }

    #[test]
    fn many_events_stay_fast() {
        let events: Vec<(i64, u64)> = (0..20_000).map(|i| (i, 1)).collect();
        let p = Pattern::parse("f", "(?1).*(?2)", 2).unwrap();
        assert!(!p.matches("f", &events).unwrap());
        assert_eq!(
            Pattern::parse("f", "(?1)(?1)", 2)
                .unwrap()
                .count("f", &events)
                .unwrap(),
            10_000
        );
    }
}
