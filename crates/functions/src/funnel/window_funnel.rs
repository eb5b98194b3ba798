//! `window_funnel`'s level: the longest chain of conditions 1, 2, .. N matched in that order by
//! events within `window` of the chain's first event, under one of Doris's four modes.

use datafusion::common::{plan_err, Result};

/// How a chain may continue (Doris's `mode` argument).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    /// The next level is the first later event matching it.
    Default,
    /// As default, but a repeat of an already matched level before the next one ends the chain.
    Deduplication,
    /// The next level must be the very next event (any other event ends the chain).
    Fixed,
    /// As default, with strictly increasing timestamps.
    Increase,
}

impl Mode {
    pub(super) fn parse(func: &str, text: &str) -> Result<Mode> {
        Ok(match text.to_ascii_lowercase().as_str() {
            "default" => Mode::Default,
            "deduplication" => Mode::Deduplication,
            "fixed" => Mode::Fixed,
            "increase" => Mode::Increase,
            _ => {
                return plan_err!(
                    "{func}: unknown mode '{text}' (default, deduplication, fixed or increase)"
                )
            }
        })
    }

    /// Whether events matching no condition matter (they break a fixed chain).
    pub(super) fn keeps_unmatched(self) -> bool {
        self == Mode::Fixed
    }
}

/// The level reached over `events` (sorted by time: (microseconds, condition bits)) with
/// `levels` conditions: the best over every event matching the first condition as a start.
pub(super) fn level(events: &[(i64, u64)], levels: usize, window: i64, mode: Mode) -> i32 {
    let mut best = 0;
    for (start, &(ts, bits)) in events.iter().enumerate() {
        if bits & 1 == 0 {
            continue;
        }
        let reached = chain(events, start, ts.saturating_add(window), levels, mode);
        best = best.max(reached);
        if best == levels {
            break;
        }
    }
    best as i32
}

/// The levels matched by the chain starting at event `start`, which matches level 1.
fn chain(events: &[(i64, u64)], start: usize, deadline: i64, levels: usize, mode: Mode) -> usize {
    let mut matched = 1;
    let mut last = start;
    while matched < levels {
        let want = 1u64 << matched;
        let next = if mode == Mode::Fixed {
            Some(last + 1).filter(|&i| events.get(i).is_some_and(|e| e.1 & want != 0))
        } else {
            (last + 1..events.len()).find(|&i| events[i].1 & want != 0)
        };
        let Some(next) = next else { break };
        let ts = events[next].0;
        if ts > deadline || (mode == Mode::Increase && ts <= events[last].0) {
            break;
        }
        if mode == Mode::Deduplication {
            let earlier_levels = want - 1;
            if events[last + 1..next]
                .iter()
                .any(|e| e.1 & earlier_levels != 0)
            {
                break;
            }
        }
        matched += 1;
        last = next;
    }
    matched
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINUTE: i64 = 60_000_000;

    /// Events a minute apart, each matching the one level given (0: none).
    fn events(levels: &[u32]) -> Vec<(i64, u64)> {
        levels
            .iter()
            .enumerate()
            .map(|(i, &l)| (i as i64 * MINUTE, if l == 0 { 0 } else { 1 << (l - 1) }))
            .collect()
    }

    #[test]
    fn modes() {
        let hour = 60 * MINUTE;
        // login, visit, login, order, payment: a repeated login ends a deduplicated chain.
        let e = events(&[1, 2, 1, 3, 4]);
        assert_eq!(level(&e, 4, hour, Mode::Default), 4);
        assert_eq!(level(&e, 4, hour, Mode::Deduplication), 2);
        // login, visit, order, (other), payment: the other event ends a fixed chain.
        let e = events(&[1, 2, 3, 0, 4]);
        assert_eq!(level(&e, 4, hour, Mode::Default), 4);
        assert_eq!(level(&e, 4, hour, Mode::Fixed), 3);
        // The window counts from the chain's first event.
        assert_eq!(level(&e, 4, 3 * MINUTE, Mode::Default), 3);
        // Equal timestamps do not increase.
        let e = vec![(0, 1), (MINUTE, 2), (MINUTE, 4)];
        assert_eq!(level(&e, 3, hour, Mode::Default), 3);
        assert_eq!(level(&e, 3, hour, Mode::Increase), 2);
        // A later start can reach further.
        let e = events(&[1, 0, 0, 0, 0, 1, 2]);
        assert_eq!(level(&e, 2, 2 * MINUTE, Mode::Default), 2);
        assert_eq!(level(&events(&[2, 3]), 3, hour, Mode::Default), 0);
    }
}
