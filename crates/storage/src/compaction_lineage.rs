//! Which rowsets compactions made, and of what: a bounded record of the recent compactions'
//! outputs and their inputs. A SQL transaction's COMMIT asks it whether a table changed since
//! the transaction read it only by compaction (the same rows, merged), which it can publish on,
//! or by another session's write (a conflict). A rewrite (DELETE or UPDATE on a Duplicate
//! table) keeps the tablet's version as a compaction does, so versions cannot tell them apart.

use crate::engine::StorageEngine;
use basalt_catalog::{RowsetId, RowsetMeta, TabletId, TabletMeta};
use parking_lot::Mutex;
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;

/// Compactions remembered (the oldest are forgotten first; a transaction older than that many
/// compactions conflicts as before).
const REMEMBERED: usize = 100_000;

#[derive(Debug, Default)]
pub struct CompactionLineage {
    inner: Mutex<Lineage>,
}

#[derive(Debug, Default)]
struct Lineage {
    inputs: HashMap<(TabletId, RowsetId), Vec<RowsetId>>,
    order: VecDeque<(TabletId, RowsetId)>,
}

impl CompactionLineage {
    /// Records that compaction made `output` of tablet `tablet` from `inputs`.
    pub(crate) fn record(&self, tablet: TabletId, output: RowsetId, inputs: Vec<RowsetId>) {
        let mut l = self.inner.lock();
        if l.order.len() >= REMEMBERED {
            if let Some(old) = l.order.pop_front() {
                l.inputs.remove(&old);
            }
        }
        l.inputs.insert((tablet, output), inputs);
        l.order.push_back((tablet, output));
    }

    /// True when every rowset of `current` is one of `base`'s or was made by compactions from
    /// `base`'s rowsets alone, and every rowset of `base` is in `current` or went into one.
    pub fn only_compacted(&self, base: &TabletMeta, current: &TabletMeta) -> bool {
        let base_ids: HashSet<RowsetId> = base.rowsets.iter().map(|r| r.id).collect();
        let l = self.inner.lock();
        let mut covered: HashSet<RowsetId> = HashSet::new();
        for rowset in &current.rowsets {
            let mut stack = vec![rowset.id];
            while let Some(id) = stack.pop() {
                if base_ids.contains(&id) {
                    covered.insert(id);
                    continue;
                }
                match l.inputs.get(&(current.id, id)) {
                    Some(inputs) => stack.extend(inputs.iter().copied()),
                    None => return false,
                }
            }
        }
        covered.len() == base_ids.len()
    }
}

impl StorageEngine {
    /// A fresh id for the rowset a compaction of `inputs` (rowsets of tablet `tablet`) is about
    /// to publish, with its lineage recorded first: a COMMIT that sees the output must find
    /// what it was made of, however soon after the publish it runs. An output whose publish
    /// then fails is never seen in a table, so its record misleads nobody.
    pub(crate) fn record_compaction_output(
        &self,
        tablet: TabletId,
        inputs: &[Arc<RowsetMeta>],
    ) -> RowsetId {
        let output = self.catalog().allocate_id();
        self.lineage
            .record(tablet, output, inputs.iter().map(|r| r.id).collect());
        output
    }
}
