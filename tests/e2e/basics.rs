//! Connecting, session variables, users, DDL and errors through a real driver.

use crate::harness::*;
use mysql_async::prelude::*;
use mysql_async::Conn;

#[tokio::test]
async fn connect_variables_and_driver_commands() {
    let server = TestServer::start().await;
    let mut c = server.connect().await;
    let r = rows(&mut c, "SELECT @@version_comment LIMIT 1").await;
    assert!(r[0][0].as_deref().unwrap().contains("Basalt"));
    let r = rows(&mut c, "SELECT @@version").await;
    assert!(r[0][0].as_deref().unwrap().starts_with("5.7"));
    exec(&mut c, "SET NAMES utf8mb4").await;
    exec(&mut c, "SET autocommit=1").await;
    let r = rows(
        &mut c,
        "SELECT @@session.transaction_isolation, @@autocommit",
    )
    .await;
    assert_eq!(r[0], vec![s("REPEATABLE-READ"), s("1")]);
    exec(&mut c, "SET wait_timeout = 1234").await;
    assert_eq!(rows(&mut c, "SELECT @@wait_timeout").await[0][0], s("1234"));
    let r = rows(&mut c, "SHOW VARIABLES LIKE 'wait%'").await;
    assert_eq!(r, vec![vec![s("wait_timeout"), s("1234")]]);
    let r = rows(&mut c, "SELECT variable_value FROM information_schema.session_variables WHERE variable_name = 'WAIT_TIMEOUT'").await;
    assert_eq!(r[0][0], s("1234"));
    assert_eq!(
        code(c.query_drop("SET no_such_variable = 1").await.unwrap_err()),
        1193
    );
    assert_eq!(rows(&mut c, "SELECT DATABASE()").await[0][0], None);
    // DataFusion's execution options are session settings too.
    exec(&mut c, "SET datafusion.execution.batch_size = 1024").await;
    exec(
        &mut c,
        "SET datafusion.execution.parquet.pushdown_filters = false",
    )
    .await;
    exec(
        &mut c,
        "SET datafusion.optimizer.enable_dynamic_filter_pushdown = ON",
    )
    .await;
    assert_eq!(
        code(
            c.query_drop("SET datafusion.execution.no_such_option = 1")
                .await
                .unwrap_err()
        ),
        1193
    );
    assert_eq!(
        code(
            c.query_drop("SET datafusion.execution.batch_size = 'many'")
                .await
                .unwrap_err()
        ),
        1231
    );
    assert_eq!(
        code(
            c.query_drop("SET GLOBAL datafusion.execution.batch_size = 8")
                .await
                .unwrap_err()
        ),
        1235
    );
    assert_eq!(rows(&mut c, "SELECT 1 + 1").await[0][0], s("2"));
    c.ping().await.expect("COM_PING");
    exec(&mut c, "CREATE DATABASE d1").await;
    c.query_drop("USE d1").await.unwrap();
    assert_eq!(rows(&mut c, "SELECT DATABASE()").await[0][0], s("d1"));
    // COM_RESET_CONNECTION forgets session settings.
    c.reset().await.expect("COM_RESET_CONNECTION");
    assert_eq!(
        rows(&mut c, "SELECT @@wait_timeout").await[0][0],
        s("28800")
    );
    // COM_INIT_DB via the connection's database option
    let mut c2 = Conn::new(server.opts("root", None, Some("d1")))
        .await
        .unwrap();
    assert_eq!(rows(&mut c2, "SELECT DATABASE()").await[0][0], s("d1"));
    assert_eq!(
        code(
            Conn::new(server.opts("root", None, Some("nope")))
                .await
                .unwrap_err()
        ),
        1049
    );
    c2.disconnect().await.unwrap();
    c.disconnect().await.unwrap();
}

#[tokio::test]
async fn users_and_passwords() {
    let server = TestServer::start().await;
    let mut root = server.connect().await;
    exec(&mut root, "CREATE USER 'alice'@'%' IDENTIFIED BY 's3cret'").await;
    let mut a = Conn::new(server.opts("alice", Some("s3cret"), None))
        .await
        .expect("alice logs in");
    assert_eq!(rows(&mut a, "SELECT 1 + 1").await[0][0], s("2"));
    // Only root manages accounts.
    assert_eq!(
        code(a.query_drop("CREATE USER 'mallory'").await.unwrap_err()),
        1227
    );
    assert_eq!(
        code(
            Conn::new(server.opts("alice", Some("wrong"), None))
                .await
                .unwrap_err()
        ),
        1045
    );
    assert_eq!(
        code(Conn::new(server.opts("bob", None, None)).await.unwrap_err()),
        1045
    );
    exec(&mut root, "SET PASSWORD FOR 'alice'@'%' = PASSWORD('n3w')").await;
    assert_eq!(
        code(
            Conn::new(server.opts("alice", Some("s3cret"), None))
                .await
                .unwrap_err()
        ),
        1045
    );
    Conn::new(server.opts("alice", Some("n3w"), None))
        .await
        .expect("new password works");
    exec(&mut root, "DROP USER 'alice'@'%'").await;
    assert_eq!(
        code(
            Conn::new(server.opts("alice", Some("n3w"), None))
                .await
                .unwrap_err()
        ),
        1045
    );
    a.disconnect().await.unwrap();
}
