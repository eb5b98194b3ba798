//! The `lower_case_table_names` a catalog was created with, recorded in its store on first
//! start and fixed from then on (as MySQL and Doris fix it at initialization).
//!
//! A catalog written before the setting was recorded (it has users but no setting) was made
//! by a Basalt that stored every database and table name in lower case: it is taken as
//! created with 1, which keeps its names and their matching as they were.

use crate::store::{Loaded, Op, Store};
use basalt_common::{BasaltError, Result, TableNameCase};
use std::path::Path;

/// The variable's name, and the store counter holding the setting.
pub(crate) const VARIABLE: &str = "lower_case_table_names";

/// The catalog's setting: the recorded one (refusing a different `requested` one), else
/// `requested` (0 when none) for a new catalog, which is recorded now.
pub(super) fn settle(
    store: &Store,
    loaded: &Loaded,
    requested: Option<TableNameCase>,
    dir: &Path,
) -> Result<TableNameCase> {
    let recorded = loaded
        .counters
        .iter()
        .find(|(k, _)| k == VARIABLE)
        .map(|(_, v)| {
            TableNameCase::from_setting(*v).ok_or_else(|| {
                BasaltError::Catalog(format!("corrupt catalog record: {VARIABLE} = {v}"))
            })
        })
        .transpose()?;
    let created_before_the_setting = recorded.is_none() && !loaded.users.is_empty();
    let settled = match (recorded, requested) {
        (Some(recorded), Some(requested)) if recorded != requested => {
            return Err(BasaltError::Catalog(format!(
                "{VARIABLE} = {requested} was asked for, but the data directory ({}) was \
                 initialized with {VARIABLE} = {recorded}; it cannot change after \
                 initialization (start with {VARIABLE} = {recorded}, or without it)",
                dir.display()
            )));
        }
        (Some(recorded), _) => return Ok(recorded),
        (None, Some(requested)) if created_before_the_setting => {
            if requested != TableNameCase::Lower {
                return Err(BasaltError::Catalog(format!(
                    "{VARIABLE} = {requested} was asked for, but the data directory ({}) was \
                     created by a Basalt that stored names in lower case ({VARIABLE} = 1); it \
                     cannot change after initialization (start with {VARIABLE} = 1, or \
                     without it)",
                    dir.display()
                )));
            }
            requested
        }
        (None, _) if created_before_the_setting => TableNameCase::Lower,
        (None, requested) => requested.unwrap_or_default(),
    };
    store.commit(vec![Op::PutCounter(
        VARIABLE.to_string(),
        settled.setting(),
    )])?;
    Ok(settled)
}
