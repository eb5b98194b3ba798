//! A backend's tablet directories as a whole (`data/<table>/<tablet>/`): which tablets it holds
//! files of ([`LIST_TABLETS`]), and removing every segment of tablets it no longer holds a
//! replica of ([`REMOVE_TABLETS`]) — the old replica after a move, or what a backend that was
//! down while its replicas were re-created elsewhere still keeps. Files go as other removed
//! segments do ([`StorageEngine::remove_segments`]: caches forgotten, deleted once no scan
//! reads them).

use basalt_storage::files::check_segment_path;
use basalt_storage::StorageEngine;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Action: the tablets this backend holds segment files of; answered with a JSON list of
/// [`TabletDir`].
pub const LIST_TABLETS: &str = "list_tablets";

/// Action: remove every segment file of some tablets; body: a JSON list of [`TabletDir`],
/// answered with the JSON number of segments removed.
pub const REMOVE_TABLETS: &str = "remove_tablets";

/// One tablet's directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TabletDir {
    pub table_id: u64,
    pub tablet_id: u64,
}

fn numbered_dirs(dir: &Path) -> Vec<(u64, std::path::PathBuf)> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .filter_map(|e| {
                    let id = e.file_name().to_str()?.parse::<u64>().ok()?;
                    Some((id, e.path()))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The catalog paths of the segment files under one tablet's directory.
fn segments_of(data_dir: &Path, tablet: TabletDir) -> Vec<String> {
    let dir = basalt_storage::files::tablet_dir(tablet.table_id, tablet.tablet_id);
    std::fs::read_dir(data_dir.join(&dir))
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .filter_map(|e| {
                    let name = e.file_name().to_str()?.to_string();
                    let rel = format!("{}/{name}", dir.to_str()?);
                    check_segment_path(&rel).ok().map(|_| rel)
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The tablets with at least one segment file under `data_dir`.
pub(crate) fn list_tablets(data_dir: &Path) -> Vec<TabletDir> {
    let mut out = Vec::new();
    for (table_id, table_dir) in numbered_dirs(&data_dir.join("data")) {
        for (tablet_id, _) in numbered_dirs(&table_dir) {
            let tablet = TabletDir {
                table_id,
                tablet_id,
            };
            if !segments_of(data_dir, tablet).is_empty() {
                out.push(tablet);
            }
        }
    }
    out
}

/// Removes every segment file of `tablets`; returns how many segments went.
pub(crate) fn remove_tablets(storage: &StorageEngine, tablets: &[TabletDir]) -> usize {
    let segments: Vec<String> = tablets
        .iter()
        .flat_map(|t| segments_of(storage.data_dir(), *t))
        .collect();
    storage.remove_segments(&segments);
    segments.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tablets_are_listed_by_their_segment_files() {
        let dir = tempfile::tempdir().unwrap();
        let put = |rel: &str| {
            let path = dir.path().join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, b"x").unwrap();
        };
        put("data/7/70/12_0.parquet");
        put("data/7/70/12_0.rows");
        put("data/7/71/c13_1.parquet");
        put("data/8/80/notes.txt");
        put("data/x/90/1_0.parquet");
        let mut listed = list_tablets(dir.path());
        listed.sort_by_key(|t| t.tablet_id);
        let ids: Vec<(u64, u64)> = listed.iter().map(|t| (t.table_id, t.tablet_id)).collect();
        assert_eq!(ids, vec![(7, 70), (7, 71)]);
        let segments = segments_of(
            dir.path(),
            TabletDir {
                table_id: 7,
                tablet_id: 70,
            },
        );
        assert_eq!(segments, vec!["data/7/70/12_0.parquet".to_string()]);
    }
}
