//! TPC-H SF 0.1 (tpchgen's data, the bench's Doris DDL with partitions and buckets): the 22
//! queries answer the same on a cluster of one frontend and three backends as on the
//! all-in-one server.

use crate::cluster_harness::Cluster;
use crate::harness::{rows, TestServer};
use crate::tpch_data::{generate, load, queries};

const SF: f64 = 0.1;

#[tokio::test]
async fn tpch_answers_equal_the_single_node() {
    let data = tempfile::tempdir().expect("tempdir");
    generate(data.path(), SF);
    let queries = queries(SF);
    assert_eq!(queries.len(), 22);
    let single = TestServer::start().await;
    let cluster = Cluster::start(3);
    let mut one = single.connect().await;
    let mut many = cluster.connect().await;
    load(&mut one, single.http_port, data.path()).await;
    load(&mut many, cluster.http_port, data.path()).await;
    for (name, sql) in &queries {
        let expected = rows(&mut one, sql).await;
        let got = rows(&mut many, sql).await;
        assert_eq!(got, expected, "{name}");
    }
}
