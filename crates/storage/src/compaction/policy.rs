//! Which rowsets of a tablet to compact next: a size-tiered policy over adjacent rowsets.
//!
//! Rowsets fall into size tiers (everything up to `base_tier_bytes` is tier 0, then each tier is
//! `tier_ratio` times larger). A run of at least `min_run` adjacent rowsets of one tier is merged
//! (cheap merges of similar sizes, so each byte is rewritten about log(size) times). A tablet that
//! has seen no new rowset for `quiet_ms` merges runs of two or more, so a burst of small loads
//! settles into one rowset per tier; a quiet tablet also rewrites alone a rowset whose segments
//! overlap (one large load cut into several unsorted-between-them segments), so Aggregate and
//! Unique tables are not merged on every read. A tablet with more than `force_rowsets` rowsets merges the
//! cheapest window whatever the tiers, so the version count stays bounded. A Unique-key rowset
//! with at least `deleted_ratio` of its rows deleted is rewritten alone to drop them.
//!
//! Only adjacent rowsets are merged: the output takes their place in version order, which keeps
//! "newer wins" (Unique, REPLACE) right. Pure logic: it sees sizes and times, not files.

/// What the policy knows about one rowset, in version order.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RowsetStats {
    pub bytes: u64,
    pub rows: u64,
    pub deleted_rows: u64,
    pub created_ms: i64,
    /// Segments whose key ranges may overlap (0 when they are disjoint, as after compaction).
    pub overlapping_segments: usize,
}

#[derive(Debug, Clone)]
pub struct CompactionPolicy {
    /// Rowsets up to this size are all tier 0.
    pub base_tier_bytes: u64,
    /// Size ratio between tiers.
    pub tier_ratio: u64,
    /// Adjacent rowsets of one tier that trigger a merge.
    pub min_run: usize,
    /// Most rowsets one compaction merges.
    pub max_inputs: usize,
    /// Most input bytes one compaction merges (it holds its inputs in memory); a run larger than
    /// this is cut, and a single rowset larger than this is never rewritten.
    pub max_input_bytes: u64,
    /// Above this many rowsets a tablet compacts its cheapest window regardless of tiers.
    pub force_rowsets: usize,
    /// A tablet whose newest rowset is at least this old merges runs of two or more.
    pub quiet_ms: i64,
    /// A rowset with at least this share of deleted rows is rewritten alone.
    pub deleted_ratio: f64,
    /// Most rows in one output segment.
    pub output_segment_rows: usize,
}

impl Default for CompactionPolicy {
    fn default() -> Self {
        CompactionPolicy {
            base_tier_bytes: 1 << 20,
            tier_ratio: 4,
            min_run: 4,
            max_inputs: 64,
            max_input_bytes: 128 << 20,
            force_rowsets: 100,
            quiet_ms: 1_000,
            deleted_ratio: 0.5,
            output_segment_rows: 1 << 20,
        }
    }
}

/// A chosen compaction: rowsets `start..end` (indexes in version order).
#[derive(Debug, Clone, PartialEq)]
pub struct Pick {
    pub start: usize,
    pub end: usize,
    pub reason: Reason,
    /// Higher is more urgent (compared across tablets).
    pub score: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// A run of similar-sized rowsets.
    Tier,
    /// The tablet went quiet with small runs left.
    Quiet,
    /// Too many rowsets: the cheapest window.
    Forced,
    /// One rowset with many deleted rows.
    Deletes,
    /// One rowset of overlapping segments, on a quiet tablet.
    Overlap,
}

impl Reason {
    pub fn name(&self) -> &'static str {
        match self {
            Reason::Tier => "size-tiered",
            Reason::Quiet => "quiet",
            Reason::Forced => "too many rowsets",
            Reason::Deletes => "deleted rows",
            Reason::Overlap => "overlapping segments",
        }
    }
}

impl CompactionPolicy {
    /// The size tier of a rowset of `bytes` bytes.
    pub fn tier(&self, bytes: u64) -> u32 {
        let ratio = self.tier_ratio.max(2);
        let mut limit = self.base_tier_bytes.max(1);
        let mut tier = 0;
        while bytes > limit {
            tier += 1;
            limit = limit.saturating_mul(ratio);
        }
        tier
    }

    /// The compaction to run on a tablet with `rowsets` (version order) at time `now_ms`, if any.
    pub fn pick(&self, rowsets: &[RowsetStats], now_ms: i64) -> Option<Pick> {
        let n = rowsets.len();
        if n == 0 {
            return None;
        }
        if n > self.force_rowsets {
            if let Some(p) = self.cheapest_window(rowsets) {
                return Some(p);
            }
        }
        let quiet = rowsets
            .last()
            .is_some_and(|r| now_ms.saturating_sub(r.created_ms) >= self.quiet_ms);
        let min_run = if quiet { 2 } else { self.min_run.max(2) };
        let mut best: Option<Pick> = None;
        let mut start = 0;
        while start < n {
            let tier = self.tier(rowsets[start].bytes);
            let mut end = start + 1;
            while end < n && self.tier(rowsets[end].bytes) == tier {
                end += 1;
            }
            if let Some((s, e)) = self.bounded(rowsets, start, end) {
                if e - s >= min_run {
                    let long_enough = e - s >= self.min_run.max(2);
                    let pick = Pick {
                        start: s,
                        end: e,
                        reason: if long_enough {
                            Reason::Tier
                        } else {
                            Reason::Quiet
                        },
                        score: n as u64 + (e - s) as u64,
                    };
                    // Prefer longer runs; among equal lengths, the smaller (lower) tier.
                    if best.as_ref().is_none_or(|b| e - s > b.end - b.start) {
                        best = Some(pick);
                    }
                }
            }
            start = end;
        }
        if best.is_some() {
            return best;
        }
        // A rowset mostly made of deleted rows is rewritten alone.
        let deletes = rowsets
            .iter()
            .enumerate()
            .filter(|(_, r)| {
                r.rows > 0
                    && r.bytes <= self.max_input_bytes
                    && r.deleted_rows as f64 >= self.deleted_ratio * r.rows as f64
            })
            .max_by_key(|(_, r)| r.deleted_rows)
            .map(|(i, r)| Pick {
                start: i,
                end: i + 1,
                reason: Reason::Deletes,
                score: r.deleted_rows.min(1 << 20) / 1024 + 1,
            });
        if deletes.is_some() || !quiet {
            return deletes;
        }
        // Once loads stop, a rowset of overlapping segments is sorted into disjoint ones.
        rowsets
            .iter()
            .enumerate()
            .filter(|(_, r)| r.overlapping_segments > 1 && r.bytes <= self.max_input_bytes)
            .max_by_key(|(_, r)| r.overlapping_segments)
            .map(|(i, r)| Pick {
                start: i,
                end: i + 1,
                reason: Reason::Overlap,
                score: r.overlapping_segments as u64,
            })
    }

    /// Cuts the run `start..end` to at most `max_inputs` rowsets and `max_input_bytes`, keeping
    /// the oldest (merging from the old end keeps the run's remainder adjacent to newer loads).
    fn bounded(&self, rowsets: &[RowsetStats], start: usize, end: usize) -> Option<(usize, usize)> {
        let mut bytes = 0u64;
        let mut e = start;
        while e < end && e - start < self.max_inputs.max(2) {
            let next = bytes.saturating_add(rowsets[e].bytes);
            if next > self.max_input_bytes && e > start {
                break;
            }
            bytes = next;
            e += 1;
        }
        (e > start && bytes <= self.max_input_bytes).then_some((start, e))
    }

    /// The adjacent window of `max_inputs` (or fewer, at least two) rowsets with the fewest bytes
    /// that fits `max_input_bytes`.
    fn cheapest_window(&self, rowsets: &[RowsetStats]) -> Option<Pick> {
        let n = rowsets.len();
        for len in (2..=self.max_inputs.max(2).min(n)).rev() {
            let best = (0..=n - len)
                .map(|s| (s, rowsets[s..s + len].iter().map(|r| r.bytes).sum::<u64>()))
                .filter(|(_, bytes)| *bytes <= self.max_input_bytes)
                .min_by_key(|(_, bytes)| *bytes);
            if let Some((s, _)) = best {
                return Some(Pick {
                    start: s,
                    end: s + len,
                    reason: Reason::Forced,
                    score: u64::MAX / 2 + n as u64,
                });
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MB: u64 = 1 << 20;

    fn rs(bytes: u64, created_ms: i64) -> RowsetStats {
        RowsetStats {
            bytes,
            rows: bytes / 100,
            deleted_rows: 0,
            created_ms,
            overlapping_segments: 0,
        }
    }

    fn busy(sizes: &[u64]) -> Vec<RowsetStats> {
        sizes.iter().map(|b| rs(*b, 10_000)).collect()
    }

    const NOW: i64 = 10_100; // 100 ms after the last load: not quiet

    #[test]
    fn tiers_grow_by_ratio() {
        let p = CompactionPolicy::default();
        assert_eq!(p.tier(0), 0);
        assert_eq!(p.tier(MB), 0);
        assert_eq!(p.tier(MB + 1), 1);
        assert_eq!(p.tier(4 * MB), 1);
        assert_eq!(p.tier(4 * MB + 1), 2);
        assert_eq!(p.tier(u64::MAX), 22, "terminates at the top");
    }

    #[test]
    fn merges_runs_of_similar_size_only() {
        let p = CompactionPolicy::default();
        // Three small loads: not yet a run while loads keep coming.
        assert_eq!(p.pick(&busy(&[2000, 2000, 2000]), NOW), None);
        // A fourth makes a run.
        let pick = p.pick(&busy(&[2000, 2000, 2000, 2000]), NOW).unwrap();
        assert_eq!((pick.start, pick.end, pick.reason), (0, 4, Reason::Tier));
        // A big base rowset is not rewritten with small ones.
        let pick = p
            .pick(&busy(&[100 * MB, 2000, 2000, 2000, 2000]), NOW)
            .unwrap();
        assert_eq!((pick.start, pick.end), (1, 5));
        // Big rowsets of one tier merge with each other.
        let pick = p
            .pick(&busy(&[20 * MB, 30 * MB, 25 * MB, 20 * MB, 1000]), NOW)
            .unwrap();
        assert_eq!((pick.start, pick.end), (0, 4));
        // Alternating sizes form no run.
        assert_eq!(p.pick(&busy(&[100 * MB, 1000, 100 * MB, 1000]), NOW), None);
    }

    #[test]
    fn a_quiet_tablet_settles_small_runs() {
        let p = CompactionPolicy::default();
        let rowsets = busy(&[100 * MB, 2000, 2000]);
        assert_eq!(p.pick(&rowsets, NOW), None);
        let pick = p.pick(&rowsets, 10_000 + p.quiet_ms).unwrap();
        assert_eq!((pick.start, pick.end, pick.reason), (1, 3, Reason::Quiet));
        // One rowset per tier is settled.
        assert_eq!(p.pick(&busy(&[100 * MB, 2000]), 1 << 40), None);
        assert_eq!(p.pick(&busy(&[2000]), 1 << 40), None);
    }

    #[test]
    fn a_quiet_tablet_sorts_a_rowset_of_overlapping_segments() {
        let p = CompactionPolicy::default();
        let mut rowsets = busy(&[30 * MB, 100 * MB]);
        rowsets[0].overlapping_segments = 10;
        // Not while loads come in.
        assert_eq!(p.pick(&rowsets, NOW), None);
        let pick = p.pick(&rowsets, 10_000 + p.quiet_ms).unwrap();
        assert_eq!((pick.start, pick.end, pick.reason), (0, 1, Reason::Overlap));
        // Disjoint segments, or a rowset over the memory bound, stay.
        rowsets[0].overlapping_segments = 0;
        assert_eq!(p.pick(&rowsets, 1 << 40), None);
        let mut big = busy(&[300 * MB]);
        big[0].overlapping_segments = 3;
        assert_eq!(p.pick(&big, 1 << 40), None);
    }

    #[test]
    fn runs_are_cut_to_the_input_bounds() {
        let p = CompactionPolicy {
            max_inputs: 5,
            ..Default::default()
        };
        let pick = p.pick(&busy(&[1000; 12]), NOW).unwrap();
        assert_eq!((pick.start, pick.end), (0, 5));
        let p = CompactionPolicy {
            max_input_bytes: 70 * MB,
            ..Default::default()
        };
        // Tier-3 rowsets of 30 MB: only two fit the memory bound; a run needs four.
        assert_eq!(p.pick(&busy(&[30 * MB; 6]), NOW), None);
        let pick = p.pick(&busy(&[30 * MB; 6]), 1 << 40).unwrap();
        assert_eq!((pick.start, pick.end, pick.reason), (0, 2, Reason::Quiet));
        // A rowset over the bound alone is never picked.
        assert_eq!(p.pick(&busy(&[300 * MB, 300 * MB]), 1 << 40), None);
    }

    #[test]
    fn too_many_rowsets_forces_the_cheapest_window() {
        let p = CompactionPolicy {
            force_rowsets: 10,
            max_inputs: 4,
            ..Default::default()
        };
        // Alternating tiers never form a run, but the count is over the bound.
        let sizes: Vec<u64> = (0..12)
            .map(|i| if i % 2 == 0 { 50 * MB } else { 1000 })
            .collect();
        let mut rowsets = busy(&sizes);
        // Every window of four holds two 50 MB rowsets, except those holding this one.
        rowsets[8].bytes = 2 * MB;
        let pick = p.pick(&rowsets, NOW).unwrap();
        assert_eq!(pick.reason, Reason::Forced);
        assert_eq!(pick.end - pick.start, 4);
        let bytes: u64 = rowsets[pick.start..pick.end].iter().map(|r| r.bytes).sum();
        assert_eq!(bytes, 50 * MB + 2 * MB + 2000, "{pick:?}");
        assert_eq!(pick.start, 5);
        assert!(pick.score > p.pick(&busy(&[1000; 8]), NOW).unwrap().score);
    }

    #[test]
    fn rowsets_full_of_deleted_rows_are_rewritten() {
        let p = CompactionPolicy::default();
        let mut rowsets = busy(&[100 * MB, 2000]);
        assert_eq!(p.pick(&rowsets, NOW), None);
        rowsets[0].deleted_rows = rowsets[0].rows * 3 / 4;
        let pick = p.pick(&rowsets, NOW).unwrap();
        assert_eq!((pick.start, pick.end, pick.reason), (0, 1, Reason::Deletes));
    }
}
