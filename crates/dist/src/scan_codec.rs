//! Carries a [`TabletScanExec`] from the frontend to a backend: the table's definition, the
//! scanned tablets with the rowsets and delete bitmaps of the planned snapshot, projection,
//! filters (as DataFusion logical expressions), limit and placement — and nothing a backend
//! could not check against its own storage.

use basalt_catalog::{DeleteBitmap, RowsetMeta, TableMeta};
use basalt_query::{TabletScanExec, TabletScanSpec};
use datafusion::common::{internal_err, not_impl_err, DataFusionError, Result};
use datafusion::execution::TaskContext;
use datafusion::physical_plan::ExecutionPlan;
use datafusion_proto::logical_plan::from_proto::parse_exprs;
use datafusion_proto::logical_plan::to_proto::serialize_exprs;
use datafusion_proto::logical_plan::DefaultLogicalExtensionCodec;
use datafusion_proto::physical_plan::{PhysicalExtensionCodec, PhysicalProtoConverterExtension};
use datafusion_proto::protobuf::LogicalExprList;
use prost::Message;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

#[derive(Debug)]
pub struct TabletScanCodec;

#[derive(Clone, PartialEq, prost::Message)]
struct TabletScanProto {
    /// A [`ScanWire`] as JSON.
    #[prost(string, tag = "1")]
    scan: String,
    /// The filters, a `LogicalExprList`.
    #[prost(bytes = "vec", tag = "2")]
    filters: Vec<u8>,
}

#[derive(Serialize, Deserialize)]
struct ScanWire {
    /// The table with the scanned partitions and tablets (rowsets travel in `tablets`).
    table: TableMeta,
    tablets: Vec<TabletData>,
    projection: Option<Vec<usize>>,
    limit: Option<usize>,
    partitions: usize,
    placed_on: Option<u64>,
}

#[derive(Serialize, Deserialize)]
struct TabletData {
    rowsets: Vec<RowsetMeta>,
    /// (segment path, deleted rows, roaring bytes)
    delete_bitmaps: Vec<(String, u64, Vec<u8>)>,
}

fn codec_err(e: impl std::fmt::Display) -> DataFusionError {
    DataFusionError::Internal(format!("tablet scan codec: {e}"))
}

impl PhysicalExtensionCodec for TabletScanCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[Arc<dyn ExecutionPlan>],
        ctx: &TaskContext,
        _proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if !inputs.is_empty() {
            return internal_err!("a tablet scan has no inputs");
        }
        let proto = TabletScanProto::decode(buf).map_err(codec_err)?;
        let wire: ScanWire = serde_json::from_str(&proto.scan).map_err(codec_err)?;
        let mut table = wire.table;
        let mut data = wire.tablets.into_iter();
        for partition in &mut table.partitions {
            for tablet in &mut partition.tablets {
                let d = data.next().ok_or_else(|| codec_err("tablets missing"))?;
                tablet.rowsets = d.rowsets.into_iter().map(Arc::new).collect();
                tablet.delete_bitmaps = d
                    .delete_bitmaps
                    .into_iter()
                    .map(|(path, deleted_rows, bytes)| {
                        (
                            path,
                            DeleteBitmap {
                                bytes: Arc::new(bytes),
                                deleted_rows,
                            },
                        )
                    })
                    .collect();
            }
        }
        let filters = LogicalExprList::decode(proto.filters.as_slice()).map_err(codec_err)?;
        let filters = parse_exprs(&filters.expr, ctx, &DefaultLogicalExtensionCodec {})?;
        let exec = TabletScanExec::try_new(TabletScanSpec {
            table: Arc::new(table),
            projection: wire.projection,
            filters,
            limit: wire.limit,
            partitions: wire.partitions,
            placed_on: wire.placed_on,
            binary_json: Vec::new(),
        })?;
        Ok(Arc::new(exec))
    }

    fn try_encode(
        &self,
        node: Arc<dyn ExecutionPlan>,
        buf: &mut Vec<u8>,
        _proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<()> {
        let Some(scan) = node.downcast_ref::<TabletScanExec>() else {
            return not_impl_err!("{} cannot run on a backend yet", node.name());
        };
        let spec = scan.spec();
        let tablets = spec
            .table
            .tablets()
            .map(|(_, t)| TabletData {
                rowsets: t.rowsets.iter().map(|r| (**r).clone()).collect(),
                delete_bitmaps: t
                    .delete_bitmaps
                    .iter()
                    .map(|(p, b)| (p.clone(), b.deleted_rows, b.bytes.to_vec()))
                    .collect(),
            })
            .collect();
        let wire = ScanWire {
            table: (*spec.table).clone(),
            tablets,
            projection: spec.projection.clone(),
            limit: spec.limit,
            partitions: spec.partitions,
            placed_on: spec.placed_on,
        };
        let filters = LogicalExprList {
            expr: serialize_exprs(&spec.filters, &DefaultLogicalExtensionCodec {})?,
        };
        let proto = TabletScanProto {
            scan: serde_json::to_string(&wire).map_err(codec_err)?,
            filters: filters.encode_to_vec(),
        };
        proto.encode(buf).map_err(codec_err)
    }
}
