//! Key models, INSERT ... SELECT, types and formatting, pruning in EXPLAIN.

use crate::harness::*;

#[tokio::test]
async fn key_models_across_loads() {
    let server = TestServer::start().await;
    let mut c = server.connect().await;
    exec(&mut c, "CREATE DATABASE m").await;
    exec(&mut c, "USE m").await;
    exec(
        &mut c,
        "CREATE TABLE dup (k INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2",
    )
    .await;
    exec(&mut c, "CREATE TABLE uniq (k INT, v VARCHAR(10), n INT) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2").await;
    exec(
        &mut c,
        "CREATE TABLE agg (k INT, s BIGINT SUM, mn INT MIN, mx INT MAX, r VARCHAR(5) REPLACE, rn VARCHAR(5) REPLACE_IF_NOT_NULL) \
         AGGREGATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 3",
    )
    .await;
    for _ in 0..2 {
        exec(&mut c, "INSERT INTO dup VALUES (1, 10), (1, 10), (2, 20)").await;
    }
    assert_eq!(
        rows(&mut c, "SELECT COUNT(*), SUM(v) FROM dup").await[0],
        vec![s("6"), s("80")]
    );
    exec(
        &mut c,
        "INSERT INTO uniq VALUES (1, 'a', 1), (2, 'b', 2), (1, 'c', 3)",
    )
    .await;
    exec(&mut c, "INSERT INTO uniq VALUES (2, 'd', 4)").await;
    exec(&mut c, "INSERT INTO uniq (k, v) VALUES (3, 'e')").await;
    assert_eq!(
        rows(&mut c, "SELECT k, v, n FROM uniq ORDER BY k").await,
        vec![
            vec![s("1"), s("c"), s("3")],
            vec![s("2"), s("d"), s("4")],
            vec![s("3"), s("e"), None]
        ]
    );
    exec(
        &mut c,
        "INSERT INTO agg VALUES (1, 5, 5, 5, 'x', 'x'), (2, 1, 1, 1, 'y', 'y')",
    )
    .await;
    exec(&mut c, "INSERT INTO agg VALUES (1, 7, 3, 9, 'z', NULL)").await;
    exec(&mut c, "INSERT INTO agg VALUES (1, 1, 4, 4, NULL, NULL)").await;
    assert_eq!(
        rows(&mut c, "SELECT k, s, mn, mx, r, rn FROM agg ORDER BY k").await,
        vec![
            vec![s("1"), s("13"), s("3"), s("9"), None, s("x")],
            vec![s("2"), s("1"), s("1"), s("1"), s("y"), s("y")]
        ]
    );
    // INSERT ... SELECT is one statement, one transaction.
    exec(
        &mut c,
        "CREATE TABLE copy (k INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2",
    )
    .await;
    let r: Vec<mysql_async::Row> = mysql_async::prelude::Queryable::query(
        &mut c,
        "INSERT INTO copy SELECT k, v * 2 FROM dup WHERE k = 1",
    )
    .await
    .unwrap();
    assert!(r.is_empty());
    assert_eq!(c.affected_rows(), 4);
    assert_eq!(rows(&mut c, "SELECT SUM(v) FROM copy").await[0][0], s("80"));
    // Joins, window functions, CTEs over Basalt tables.
    let r = rows(
        &mut c,
        "WITH u AS (SELECT k, v FROM uniq) SELECT u.k, u.v, SUM(d.v) OVER (PARTITION BY u.k) AS w \
         FROM u JOIN dup d ON u.k = d.k WHERE u.k = 2 LIMIT 1",
    )
    .await;
    assert_eq!(r, vec![vec![s("2"), s("d"), s("40")]]);
    c.disconnect().await.unwrap();
}

#[tokio::test]
async fn types_nulls_and_formatting() {
    let server = TestServer::start().await;
    let mut c = server.connect().await;
    exec(&mut c, "CREATE DATABASE ty").await;
    exec(&mut c, "USE ty").await;
    exec(
        &mut c,
        "CREATE TABLE t (id INT NOT NULL, b BOOLEAN, ti TINYINT, si SMALLINT, bi BIGINT, li LARGEINT, f FLOAT, d DOUBLE, \
         dec DECIMAL(38, 10), dt DATE, ts DATETIME, c CHAR(4), vc VARCHAR(10), st STRING) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1",
    )
    .await;
    exec(
        &mut c,
        "INSERT INTO t VALUES (1, true, -1, 300, 9000000000, 170141183460469231731687303715884105727, 1.5, 2.25, \
         1234567890123456789012345678.0123456789, '2024-02-29', '2024-02-29 13:14:15', 'ab', 'hello', 'world'), \
         (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)",
    )
    .await;
    let r = rows(&mut c, "SELECT * FROM t ORDER BY id").await;
    assert_eq!(
        r[0],
        vec![
            s("1"),
            s("1"),
            s("-1"),
            s("300"),
            s("9000000000"),
            s("170141183460469231731687303715884105727"),
            s("1.5"),
            s("2.25"),
            s("1234567890123456789012345678.0123456789"),
            s("2024-02-29"),
            s("2024-02-29 13:14:15"),
            s("ab"),
            s("hello"),
            s("world")
        ]
    );
    assert_eq!(r[1][0], s("2"));
    assert!(r[1][1..].iter().all(|v| v.is_none()));
    let e = mysql_async::prelude::Queryable::query_drop(&mut c, "INSERT INTO t (id) VALUES (NULL)")
        .await
        .unwrap_err();
    assert_eq!(code(e), 1048);
    assert_eq!(
        rows(&mut c, "SELECT CAST(1.5 AS DECIMAL(10,2))").await[0][0],
        s("1.50")
    );
    c.disconnect().await.unwrap();
}

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
async fn common_mysql_functions_and_column_names() {
    let server = TestServer::start().await;
    let mut c = server.connect().await;
    let r = rows(
        &mut c,
        "SELECT IF(1 > 0, 'a', 'b'), IFNULL(NULL, 2), YEAR('2024-03-05'), MONTH(DATE '2024-03-05'), DAY('2024-03-05'), \
         DAYOFWEEK('2024-03-05'), WEEKDAY('2024-03-05'), DATE_ADD('2024-03-05', INTERVAL 1 DAY), \
         DATE_SUB('2024-03-05', INTERVAL 1 MONTH), DATEDIFF('2024-03-05', '2024-03-01'), DATE('2024-03-05 10:11:12'), \
         LCASE('AbC'), UCASE('a'), LOCATE('b', 'abc'), MOD(7, 3), 7 DIV 2, CAST('12' AS SIGNED), \
         UNIX_TIMESTAMP('2024-01-01 00:00:01'), CONCAT('a', 1), DATE_FORMAT(DATE '2024-03-05', '%Y/%m/%d')",
    )
    .await;
    let expected = [
        "a",
        "2",
        "2024",
        "3",
        "5",
        "3",
        "1",
        "2024-03-06",
        "2024-02-05",
        "4",
        "2024-03-05",
        "abc",
        "A",
        "2",
        "1",
        "3",
        "12",
        "1704067201",
        "a1",
        "2024/03/05",
    ];
    assert_eq!(r[0], expected.iter().map(|v| s(v)).collect::<Vec<_>>());
    let now = rows(&mut c, "SELECT NOW(), CURDATE()").await;
    assert_eq!(
        now[0][0].as_ref().unwrap().len(),
        19,
        "NOW() has second precision like MySQL"
    );
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
async fn list_partitions_and_column_defaults() {
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
    let r = rows(
        &mut c,
        "SELECT city, id, n, note, at IS NOT NULL FROM visits ORDER BY id",
    )
    .await;
    assert_eq!(r[0], vec![s("beijing"), s("1"), s("7"), s("none"), s("1")]);
    assert_eq!(r[1][0], s("shanghai"));
    let e = mysql_async::prelude::Queryable::query_drop(
        &mut c,
        "INSERT INTO visits (city, id) VALUES ('paris', 3)",
    )
    .await
    .unwrap_err();
    assert_eq!(code(e), 1526);
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
    assert_eq!(
        rows(
            &mut c,
            "SELECT COUNT(*) FROM visits WHERE city IN ('beijing', 'tianjin')"
        )
        .await[0][0],
        s("1")
    );
    c.disconnect().await.unwrap();
}
