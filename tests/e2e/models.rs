//! What SQL files cannot check: partition and bucket pruning in EXPLAIN, result column names.
//! Key models, types and functions are in tests/sql.

use crate::harness::*;

#[tokio::test]
async fn explain_shows_partition_and_bucket_pruning() {
    let server = TestServer::start().await;
    let mut c = server.connect().await;
    exec(&mut c, "CREATE DATABASE p").await;
    exec(&mut c, "USE p").await;
    exec(
        &mut c,
        "CREATE TABLE ev (dt DATE NOT NULL, uid INT NOT NULL, v INT) DUPLICATE KEY(dt, uid) \
         PARTITION BY RANGE(dt) (PARTITION p1 VALUES LESS THAN ('2024-02-01'), PARTITION p2 VALUES LESS THAN ('2024-03-01'), \
         PARTITION p3 VALUES LESS THAN ('2024-04-01'), PARTITION p4 VALUES LESS THAN ('2024-05-01')) DISTRIBUTED BY HASH(uid) BUCKETS 4",
    )
    .await;
    exec(&mut c, "INSERT INTO ev VALUES ('2024-01-10', 1, 1), ('2024-02-10', 2, 2), ('2024-03-10', 3, 3), ('2024-04-10', 4, 4), ('2024-02-11', 7, 5)").await;
    let plan = rows(
        &mut c,
        "EXPLAIN SELECT * FROM ev WHERE dt = '2024-02-10' AND uid = 2",
    )
    .await;
    let text: Vec<String> = plan.iter().filter_map(|r| r[1].clone()).collect();
    let scan = text
        .iter()
        .find(|l| l.starts_with("BasaltScan"))
        .unwrap_or_else(|| panic!("{text:?}"));
    assert!(
        scan.contains("partitions=1/4 [p2]") && scan.contains("tablets=1/16"),
        "{scan}"
    );
    assert_eq!(
        rows(
            &mut c,
            "SELECT v FROM ev WHERE dt = '2024-02-10' AND uid = 2"
        )
        .await,
        vec![vec![s("2")]]
    );
    assert_eq!(
        rows(
            &mut c,
            "SELECT SUM(v) FROM ev WHERE dt >= '2024-02-01' AND dt < '2024-03-01'"
        )
        .await[0][0],
        s("7")
    );
    let plan = rows(
        &mut c,
        "EXPLAIN SELECT * FROM ev WHERE dt BETWEEN '2024-02-15' AND '2024-03-05'",
    )
    .await;
    let text: Vec<String> = plan.iter().filter_map(|r| r[1].clone()).collect();
    assert!(
        text.iter().any(|l| l.contains("partitions=2/4 [p2, p3]")),
        "{text:?}"
    );
    c.disconnect().await.unwrap();
}

#[tokio::test]
async fn result_columns_are_named_like_mysql() {
    let server = TestServer::start().await;
    let mut c = server.connect().await;
    // Unaliased result columns are named by the expression text, aliased ones by the alias.
    let result = mysql_async::prelude::Queryable::query_iter(
        &mut c,
        "SELECT 1 + 1, 'x' AS label, @@version_comment",
    )
    .await
    .unwrap();
    let names: Vec<String> = result
        .columns_ref()
        .iter()
        .map(|col| col.name_str().to_string())
        .collect();
    assert_eq!(names, vec!["1 + 1", "label", "@@version_comment"]);
    result.drop_result().await.unwrap();
    c.disconnect().await.unwrap();
}

#[tokio::test]
async fn explain_shows_list_partition_pruning() {
    let server = TestServer::start().await;
    let mut c = server.connect().await;
    exec(&mut c, "CREATE DATABASE l").await;
    exec(&mut c, "USE l").await;
    exec(
        &mut c,
        "CREATE TABLE visits (city VARCHAR(20) NOT NULL, id INT NOT NULL, n INT DEFAULT '7', note VARCHAR(10) DEFAULT 'none', \
         at DATETIME DEFAULT CURRENT_TIMESTAMP) DUPLICATE KEY(city, id) \
         PARTITION BY LIST(city) (PARTITION p_north VALUES IN ('beijing', 'tianjin'), PARTITION p_south VALUES IN ('shanghai')) \
         DISTRIBUTED BY HASH(id) BUCKETS 2",
    )
    .await;
    exec(
        &mut c,
        "INSERT INTO visits (city, id) VALUES ('beijing', 1), ('shanghai', 2)",
    )
    .await;
    let plan = rows(
        &mut c,
        "EXPLAIN SELECT * FROM visits WHERE city = 'shanghai'",
    )
    .await;
    let text: Vec<String> = plan.iter().filter_map(|r| r[1].clone()).collect();
    assert!(
        text.iter().any(|l| l.contains("partitions=1/2 [p_south]")),
        "{text:?}"
    );
    c.disconnect().await.unwrap();
}
