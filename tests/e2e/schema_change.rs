//! ALTER TABLE and DELETE on Duplicate tables while other sessions load: every acknowledged
//! INSERT is in the table afterwards (also after `kill -9`), every refused one (1412, the table
//! changed under it) left nothing, and the rewritten rows keep their values.

use crate::harness::*;
use mysql_async::prelude::Queryable;

#[tokio::test]
async fn alters_and_deletes_under_concurrent_inserts_lose_nothing() {
    let mut server = TestServer::start().await;
    let mut c = server.connect().await;
    exec(&mut c, "CREATE DATABASE sc").await;
    exec(&mut c, "USE sc").await;
    exec(
        &mut c,
        "CREATE TABLE t (id INT, v VARCHAR(20)) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 3",
    )
    .await;
    let seed: Vec<String> = (0..2000).map(|i| format!("({i}, 'v{i}')")).collect();
    exec(&mut c, &format!("INSERT INTO t VALUES {}", seed.join(","))).await;

    // Two writers insert ids 10_000.. one statement at a time, naming their columns so that
    // statements planned after an ALTER still fit.
    let mut writers = Vec::new();
    for w in 0..2 {
        let mut conn = server.connect().await;
        writers.push(tokio::spawn(async move {
            conn.query_drop("USE sc").await.unwrap();
            let (mut acked, mut refused) = (Vec::new(), Vec::new());
            for i in 0..60 {
                let id = 10_000 + w * 1000 + i;
                let sql = format!("INSERT INTO t (id, v) VALUES ({id}, 'w{id}')");
                match conn.query_drop(&sql).await {
                    Ok(()) => acked.push(id),
                    Err(e) => {
                        assert_eq!(code(e), 1412, "{sql}");
                        refused.push(id);
                    }
                }
            }
            (acked, refused)
        }));
    }
    for sql in [
        "ALTER TABLE t ADD COLUMN n INT DEFAULT '7'",
        "ALTER TABLE t MODIFY COLUMN v VARCHAR(40)",
        "DELETE FROM t WHERE id < 1000",
        "ALTER TABLE t ADD COLUMN d DATE DEFAULT '2024-05-06' AFTER id",
        "ALTER TABLE t RENAME COLUMN n m",
        "ALTER TABLE t DROP COLUMN d",
    ] {
        exec(&mut c, sql).await;
    }
    let mut acked = Vec::new();
    let mut refused = Vec::new();
    for w in writers {
        let (a, r) = w.await.unwrap();
        acked.extend(a);
        refused.extend(r);
    }
    let check = |got: Vec<Vec<Option<String>>>| {
        let ids: Vec<i64> = got
            .iter()
            .map(|r| r[0].as_deref().unwrap().parse().unwrap())
            .collect();
        let mut want: Vec<i64> = (1000..2000).chain(acked.iter().copied()).collect();
        want.sort();
        assert_eq!(ids, want, "refused: {refused:?}");
        for r in &got {
            let id = r[0].as_deref().unwrap();
            let prefix = if id.parse::<i64>().unwrap() < 10_000 {
                "v"
            } else {
                "w"
            };
            assert_eq!(r[1].as_deref(), Some(format!("{prefix}{id}").as_str()));
            // Rows that existed at the ADD COLUMN got its default; later ones too.
            assert_eq!(r[2].as_deref(), Some("7"), "{r:?}");
        }
    };
    check(rows(&mut c, "SELECT id, v, m FROM t ORDER BY id").await);
    assert_eq!(
        rows(&mut c, "SELECT column_name FROM information_schema.columns WHERE table_schema = 'sc' AND table_name = 't' ORDER BY ordinal_position").await,
        vec![vec![s("id")], vec![s("v")], vec![s("m")]]
    );
    eprintln!("acked {}, refused {}", acked.len(), refused.len());
    server.kill9();
    server.restart().await;
    let mut c = server.connect().await;
    exec(&mut c, "USE sc").await;
    check(rows(&mut c, "SELECT id, v, m FROM t ORDER BY id").await);
}
