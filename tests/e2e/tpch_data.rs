//! TPC-H for the end-to-end tests: tpchgen's data (the generator behind `tpchgen-cli`) written
//! as Parquet, the bench's Doris DDL (partitions, buckets), Stream Load through `curl`, and the
//! 22 queries of bench/tpch/queries.sql with their validation parameters.

use crate::harness::exec;
use parquet::arrow::ArrowWriter;
use std::path::Path;
use std::process::Command;
use tpchgen::generators::{
    CustomerGenerator, LineItemGenerator, NationGenerator, OrderGenerator, PartGenerator,
    PartSuppGenerator, RegionGenerator, SupplierGenerator,
};
use tpchgen_arrow::{
    CustomerArrow, LineItemArrow, NationArrow, OrderArrow, PartArrow, PartSuppArrow, RegionArrow,
    SupplierArrow,
};

const YEARS: &str = "PARTITION p1992 VALUES LESS THAN ('1993-01-01'), \
    PARTITION p1993 VALUES LESS THAN ('1994-01-01'), PARTITION p1994 VALUES LESS THAN ('1995-01-01'), \
    PARTITION p1995 VALUES LESS THAN ('1996-01-01'), PARTITION p1996 VALUES LESS THAN ('1997-01-01'), \
    PARTITION p1997 VALUES LESS THAN ('1998-01-01'), PARTITION p1998 VALUES LESS THAN ('1999-01-01')";

pub fn ddl(table: &str) -> String {
    match table {
        "region" => "CREATE TABLE region (r_regionkey INT NOT NULL, r_name CHAR(25) NOT NULL, \
            r_comment VARCHAR(152)) DUPLICATE KEY(r_regionkey) DISTRIBUTED BY HASH(r_regionkey) BUCKETS 1"
            .into(),
        "nation" => "CREATE TABLE nation (n_nationkey INT NOT NULL, n_name CHAR(25) NOT NULL, \
            n_regionkey INT NOT NULL, n_comment VARCHAR(152)) DUPLICATE KEY(n_nationkey) \
            DISTRIBUTED BY HASH(n_nationkey) BUCKETS 1"
            .into(),
        "supplier" => "CREATE TABLE supplier (s_suppkey INT NOT NULL, s_name CHAR(25) NOT NULL, \
            s_address VARCHAR(40) NOT NULL, s_nationkey INT NOT NULL, s_phone CHAR(15) NOT NULL, \
            s_acctbal DECIMAL(15,2) NOT NULL, s_comment VARCHAR(101) NOT NULL) \
            DUPLICATE KEY(s_suppkey) DISTRIBUTED BY HASH(s_suppkey) BUCKETS 2"
            .into(),
        "customer" => "CREATE TABLE customer (c_custkey INT NOT NULL, c_name VARCHAR(25) NOT NULL, \
            c_address VARCHAR(40) NOT NULL, c_nationkey INT NOT NULL, c_phone CHAR(15) NOT NULL, \
            c_acctbal DECIMAL(15,2) NOT NULL, c_mktsegment CHAR(10) NOT NULL, \
            c_comment VARCHAR(117) NOT NULL) DUPLICATE KEY(c_custkey) \
            DISTRIBUTED BY HASH(c_custkey) BUCKETS 3"
            .into(),
        "part" => "CREATE TABLE part (p_partkey INT NOT NULL, p_name VARCHAR(55) NOT NULL, \
            p_mfgr CHAR(25) NOT NULL, p_brand CHAR(10) NOT NULL, p_type VARCHAR(25) NOT NULL, \
            p_size INT NOT NULL, p_container CHAR(10) NOT NULL, p_retailprice DECIMAL(15,2) NOT NULL, \
            p_comment VARCHAR(23) NOT NULL) DUPLICATE KEY(p_partkey) \
            DISTRIBUTED BY HASH(p_partkey) BUCKETS 3"
            .into(),
        "partsupp" => "CREATE TABLE partsupp (ps_partkey INT NOT NULL, ps_suppkey INT NOT NULL, \
            ps_availqty INT NOT NULL, ps_supplycost DECIMAL(15,2) NOT NULL, \
            ps_comment VARCHAR(199) NOT NULL) DUPLICATE KEY(ps_partkey, ps_suppkey) \
            DISTRIBUTED BY HASH(ps_partkey) BUCKETS 3"
            .into(),
        "orders" => format!(
            "CREATE TABLE orders (o_orderdate DATE NOT NULL, o_orderkey BIGINT NOT NULL, \
            o_custkey INT NOT NULL, o_orderstatus CHAR(1) NOT NULL, o_totalprice DECIMAL(15,2) NOT NULL, \
            o_orderpriority CHAR(15) NOT NULL, o_clerk CHAR(15) NOT NULL, o_shippriority INT NOT NULL, \
            o_comment VARCHAR(79) NOT NULL) DUPLICATE KEY(o_orderdate, o_orderkey) \
            PARTITION BY RANGE(o_orderdate) ({YEARS}) DISTRIBUTED BY HASH(o_orderkey) BUCKETS 3"
        ),
        _ => format!(
            "CREATE TABLE lineitem (l_shipdate DATE NOT NULL, l_orderkey BIGINT NOT NULL, \
            l_partkey INT NOT NULL, l_suppkey INT NOT NULL, l_linenumber INT NOT NULL, \
            l_quantity DECIMAL(15,2) NOT NULL, l_extendedprice DECIMAL(15,2) NOT NULL, \
            l_discount DECIMAL(15,2) NOT NULL, l_tax DECIMAL(15,2) NOT NULL, \
            l_returnflag CHAR(1) NOT NULL, l_linestatus CHAR(1) NOT NULL, l_commitdate DATE NOT NULL, \
            l_receiptdate DATE NOT NULL, l_shipinstruct CHAR(25) NOT NULL, l_shipmode CHAR(10) NOT NULL, \
            l_comment VARCHAR(44) NOT NULL) DUPLICATE KEY(l_shipdate, l_orderkey) \
            PARTITION BY RANGE(l_shipdate) ({YEARS}) DISTRIBUTED BY HASH(l_orderkey) BUCKETS 3"
        ),
    }
}

pub const TABLES: [&str; 8] = [
    "region", "nation", "supplier", "customer", "part", "partsupp", "orders", "lineitem",
];

/// Writes `batches` as a Parquet file.
fn write_parquet<E: std::fmt::Debug>(
    path: &Path,
    batches: impl Iterator<Item = Result<arrow::array::RecordBatch, E>>,
) {
    let mut batches = batches.map(|b| b.expect("generate TPC-H")).peekable();
    let schema = batches.peek().expect("a table has rows").schema();
    let file = std::fs::File::create(path).expect("create parquet");
    let mut writer = ArrowWriter::try_new(file, schema, None).expect("parquet writer");
    for b in batches {
        writer.write(&b).expect("write batch");
    }
    writer.close().expect("close parquet");
}

/// Every table of TPC-H at scale factor `sf` as Parquet under `dir`.
pub fn generate(dir: &Path, sf: f64) {
    let p = |t: &str| dir.join(format!("{t}.parquet"));
    write_parquet(
        &p("region"),
        RegionArrow::new(RegionGenerator::new(sf, 1, 1)),
    );
    write_parquet(
        &p("nation"),
        NationArrow::new(NationGenerator::new(sf, 1, 1)),
    );
    write_parquet(
        &p("supplier"),
        SupplierArrow::new(SupplierGenerator::new(sf, 1, 1)),
    );
    write_parquet(
        &p("customer"),
        CustomerArrow::new(CustomerGenerator::new(sf, 1, 1)),
    );
    write_parquet(&p("part"), PartArrow::new(PartGenerator::new(sf, 1, 1)));
    write_parquet(
        &p("partsupp"),
        PartSuppArrow::new(PartSuppGenerator::new(sf, 1, 1)),
    );
    write_parquet(&p("orders"), OrderArrow::new(OrderGenerator::new(sf, 1, 1)));
    write_parquet(
        &p("lineitem"),
        LineItemArrow::new(LineItemGenerator::new(sf, 1, 1)),
    );
}

/// The 22 queries of the bench (validation parameters for scale factor `sf`), named.
pub fn queries(sf: f64) -> Vec<(String, String)> {
    let text = include_str!("../../bench/tpch/queries.sql");
    let mut out: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        let header = line
            .strip_prefix("-- Q")
            .filter(|n| !n.trim().is_empty() && n.trim().bytes().all(|b| b.is_ascii_digit()));
        if let Some(name) = header {
            out.push((format!("Q{}", name.trim()), String::new()));
        } else if let Some((_, sql)) = out.last_mut() {
            sql.push_str(line);
            sql.push('\n');
        }
    }
    for (_, sql) in &mut out {
        *sql = sql
            .trim()
            .trim_end_matches(';')
            .replace("{q11_fraction}", &format!("{:.10}", 0.0001 / sf));
    }
    out
}

/// Creates database `tpch` with the eight tables and loads the Parquet files of `dir`.
pub async fn load(conn: &mut mysql_async::Conn, http_port: u16, dir: &Path) {
    exec(conn, "CREATE DATABASE tpch").await;
    exec(conn, "USE tpch").await;
    for t in TABLES {
        exec(conn, &ddl(t)).await;
        let out = Command::new("curl")
            .args(["-sS", "-u", "root:", "-H", "format:parquet", "-T"])
            .arg(dir.join(format!("{t}.parquet")))
            .arg(format!(
                "http://127.0.0.1:{http_port}/api/tpch/{t}/_stream_load"
            ))
            .output()
            .expect("curl");
        let body = String::from_utf8_lossy(&out.stdout);
        assert!(body.contains("\"Status\":\"Success\""), "{t}: {body}");
    }
}
