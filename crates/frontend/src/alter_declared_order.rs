//! ALTER TABLE on a table declared in another order than it stores (a MySQL `PRIMARY KEY`
//! naming columns that do not lead the declaration): the statement's changes apply to the
//! columns in declared order (`AFTER c` and `FIRST` are declared positions, added columns go
//! last, as in MySQL), and the result is laid out again for storage: key columns first in key
//! order (added key columns after the existing ones), then the others in declared order.

use basalt_catalog::TableMeta;

/// `old`'s columns in declared order, with the storage index each came from; partition and
/// bucket columns are named by their declared positions (as the changes see them).
pub(crate) fn declared_view(old: &TableMeta) -> (TableMeta, Vec<Option<usize>>) {
    let mut view = old.clone();
    let order = old.declared_indexes();
    view.columns = order.iter().map(|&i| old.columns[i].clone()).collect();
    view.partition_column = old.partition_column.map(|i| old.declared_position(i));
    view.distribution.columns = old
        .distribution
        .columns
        .iter()
        .map(|&i| old.declared_position(i))
        .collect();
    view.declared_order = Vec::new();
    (view, order.into_iter().map(Some).collect())
}

/// Lays `view` (columns in declared order, `sources` beside them) out in storage order and
/// records the declared order; placement columns are set by the caller from the old table.
pub(crate) fn restore_storage_order(view: &mut TableMeta, sources: &mut Vec<Option<usize>>) {
    let mut keys: Vec<usize> = (0..view.columns.len())
        .filter(|&p| view.columns[p].is_key)
        .collect();
    // Existing keys keep their key order (their old storage order); added ones follow.
    keys.sort_by_key(|&p| (sources[p].unwrap_or(usize::MAX), p));
    let storage: Vec<usize> = keys
        .iter()
        .copied()
        .chain((0..view.columns.len()).filter(|&p| !view.columns[p].is_key))
        .collect();
    let mut declared_order = vec![0; storage.len()];
    for (s, &p) in storage.iter().enumerate() {
        declared_order[p] = s;
    }
    view.columns = storage.iter().map(|&p| view.columns[p].clone()).collect();
    *sources = storage.iter().map(|&p| sources[p]).collect();
    view.set_declared_order(declared_order);
}
