//! Backends in the local catalog: their records in their own `redb` table, and the placement of
//! new tablets on them.

use super::{to_json, LocalCatalog};
use crate::api::TabletCatalog;
use crate::backends::{load_per_backend, parse_backend_address, place_tablets, BackendMeta};
use crate::model::TableMeta;
use crate::store::Op;
use basalt_common::{BasaltError, Result};

impl LocalCatalog {
    pub(crate) fn backend_list(&self) -> Vec<BackendMeta> {
        self.state.read().backends.values().cloned().collect()
    }

    /// Places the tablets of `table` that have no replicas yet (a new table, partition or
    /// rewritten tablet). Called with the writer lock held.
    pub(super) fn place(&self, table: &mut TableMeta) -> Result<()> {
        let s = self.state.read();
        // A decommissioned backend takes no new tablets.
        let backends: Vec<BackendMeta> = s
            .backends
            .values()
            .filter(|b| !b.decommissioned)
            .cloned()
            .collect();
        // A single node only checks replication_num: nothing to balance.
        let mut load = if backends.is_empty() {
            Default::default()
        } else {
            load_per_backend(s.tables.values().flat_map(|t| t.values()).map(|t| &**t))
        };
        place_tablets(table, &backends, &mut load)
    }

    pub(crate) fn put_backend(&self, address: &str) -> Result<BackendMeta> {
        let (host, port) = parse_backend_address(address)?;
        let _w = self.writer.lock();
        if let Some(b) = self
            .backend_list()
            .into_iter()
            .find(|b| b.host == host && b.port == port)
        {
            return Err(BasaltError::InvalidDdl(format!(
                "backend {} already exists",
                b.address()
            )));
        }
        let backend = BackendMeta {
            id: self.allocate_id(),
            host,
            port,
            decommissioned: false,
        };
        self.store.commit(vec![
            Op::PutBackend(backend.id, to_json(&backend)?),
            self.counter_op(),
        ])?;
        self.state
            .write()
            .backends
            .insert(backend.id, backend.clone());
        Ok(backend)
    }

    pub(crate) fn remove_backend(&self, address: &str) -> Result<()> {
        let (host, port) = parse_backend_address(address)?;
        let _w = self.writer.lock();
        let backend = self
            .backend_list()
            .into_iter()
            .find(|b| b.host == host && b.port == port)
            .ok_or_else(|| BasaltError::InvalidDdl(format!("backend {address} does not exist")))?;
        let held = {
            let s = self.state.read();
            load_per_backend(s.tables.values().flat_map(|t| t.values()).map(|t| &**t))
                .get(&backend.id)
                .map_or(0, |l| l.tablets)
        };
        if held > 0 {
            return Err(BasaltError::InvalidDdl(format!(
                "backend {address} holds {held} tablet replica(s); ALTER SYSTEM DECOMMISSION \
                 BACKEND \"{address}\" moves them to other backends first and then removes it"
            )));
        }
        self.store.commit(vec![Op::DeleteBackend(backend.id)])?;
        self.state.write().backends.remove(&backend.id);
        Ok(())
    }

    pub(crate) fn mark_decommissioned(
        &self,
        address: &str,
        decommissioned: bool,
    ) -> Result<BackendMeta> {
        let (host, port) = parse_backend_address(address)?;
        let _w = self.writer.lock();
        let mut backend = self
            .backend_list()
            .into_iter()
            .find(|b| b.host == host && b.port == port)
            .ok_or_else(|| BasaltError::InvalidDdl(format!("backend {address} does not exist")))?;
        if backend.decommissioned == decommissioned {
            return Ok(backend);
        }
        backend.decommissioned = decommissioned;
        self.store
            .commit(vec![Op::PutBackend(backend.id, to_json(&backend)?)])?;
        self.state
            .write()
            .backends
            .insert(backend.id, backend.clone());
        Ok(backend)
    }
}
