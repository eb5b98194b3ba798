//! Reads of segment files charged to the query that makes them: a Parquet reader factory that
//! wraps DataFusion's, so every byte range a scan fetches counts as scanned and as read from
//! local storage, and waits while the query's workload group is over `read_bytes_per_second`.

use basalt_workload::QueryAccount;
use bytes::Bytes;
use datafusion::common::Result;
use datafusion::datasource::listing::PartitionedFile;
use datafusion::datasource::physical_plan::parquet::ParquetFileReaderFactory;
use datafusion::parquet::arrow::arrow_reader::ArrowReaderOptions;
use datafusion::parquet::arrow::async_reader::AsyncFileReader;
use datafusion::parquet::file::metadata::ParquetMetaData;
use datafusion::physical_plan::metrics::ExecutionPlanMetricsSet;
use futures::future::BoxFuture;
use futures::FutureExt;
use std::ops::Range;
use std::sync::Arc;

/// The query's account, if the statement runs with one (set on the session config).
pub(crate) fn query_account(
    config: &datafusion::prelude::SessionConfig,
) -> Option<Arc<QueryAccount>> {
    config.get_extension::<QueryAccount>()
}

#[derive(Debug)]
pub(crate) struct AccountedReaderFactory {
    pub inner: Arc<dyn ParquetFileReaderFactory>,
    pub account: Arc<QueryAccount>,
}

impl ParquetFileReaderFactory for AccountedReaderFactory {
    fn create_reader(
        &self,
        partition_index: usize,
        partitioned_file: PartitionedFile,
        metadata_size_hint: Option<usize>,
        metrics: &ExecutionPlanMetricsSet,
    ) -> Result<Box<dyn AsyncFileReader + Send>> {
        let inner = self.inner.create_reader(
            partition_index,
            partitioned_file,
            metadata_size_hint,
            metrics,
        )?;
        Ok(Box::new(AccountedReader {
            inner,
            account: self.account.clone(),
        }))
    }
}

struct AccountedReader {
    inner: Box<dyn AsyncFileReader + Send>,
    account: Arc<QueryAccount>,
}

impl AccountedReader {
    async fn charge(account: &QueryAccount, bytes: usize) {
        account.add_scan_bytes(bytes as u64);
        account.read_local(bytes as u64).await;
    }
}

impl AsyncFileReader for AccountedReader {
    fn get_bytes(
        &mut self,
        range: Range<u64>,
    ) -> BoxFuture<'_, datafusion::parquet::errors::Result<Bytes>> {
        async move {
            // On this path scan_thread_num bounds the group's concurrent reads.
            let _slot = self.account.scan_slot().await;
            let bytes = self.inner.get_bytes(range).await?;
            Self::charge(&self.account, bytes.len()).await;
            Ok(bytes)
        }
        .boxed()
    }

    fn get_byte_ranges(
        &mut self,
        ranges: Vec<Range<u64>>,
    ) -> BoxFuture<'_, datafusion::parquet::errors::Result<Vec<Bytes>>> {
        async move {
            let _slot = self.account.scan_slot().await;
            let parts = self.inner.get_byte_ranges(ranges).await?;
            Self::charge(&self.account, parts.iter().map(Bytes::len).sum()).await;
            Ok(parts)
        }
        .boxed()
    }

    fn get_metadata<'a>(
        &'a mut self,
        options: Option<&'a ArrowReaderOptions>,
    ) -> BoxFuture<'a, datafusion::parquet::errors::Result<Arc<ParquetMetaData>>> {
        self.inner.get_metadata(options)
    }
}
