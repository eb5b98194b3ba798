// YCSB-style point reads through JDBC (MySQL Connector/J) with server-side prepared statements:
// `SELECT * FROM usertable WHERE YCSB_KEY = ?` from N threads, one connection each, uniform
// random keys, for a fixed time. Prints one JSON line: operations, QPS and latency percentiles.
//
// Before timing it checks the driver's statement life cycle against the expected row contents:
// execute, close, re-prepare and execute again, on a connection with the statement cache and on
// one without it (where close really sends COM_STMT_CLOSE).
//
// Usage: java -cp mysql-connector-j.jar YcsbPointRead.java <host> <port> <db> <records>
//        <threads> <seconds> <short_circuit 0|1>

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicReference;

public class YcsbPointRead {
    static final String QUERY = "SELECT * FROM usertable WHERE YCSB_KEY = ?";

    static String key(long i) {
        return String.format("user%010d", i);
    }

    /** The value the loader wrote in FIELD<f> of record i (see bench/ycsb.py). */
    static String expectedPrefix(long i, int f) {
        return String.format("%010d-%d-", i, f);
    }

    static Connection connect(String url, int shortCircuit) throws SQLException {
        Connection c = DriverManager.getConnection(url, "root", "");
        try (Statement s = c.createStatement()) {
            s.execute("SET enable_short_circuit_query = " + shortCircuit);
        }
        return c;
    }

    static void checkRow(ResultSet rs, long i) throws SQLException {
        if (!rs.next()) {
            throw new IllegalStateException("no row for " + key(i));
        }
        if (!rs.getString(1).equals(key(i))) {
            throw new IllegalStateException("wrong key " + rs.getString(1) + " for " + key(i));
        }
        for (int f = 0; f < 10; f++) {
            String v = rs.getString(2 + f);
            if (v == null || !v.startsWith(expectedPrefix(i, f)) || v.length() != 100) {
                throw new IllegalStateException("wrong FIELD" + f + " for " + key(i) + ": " + v);
            }
        }
        if (rs.next()) {
            throw new IllegalStateException("two rows for " + key(i));
        }
    }

    /** Prepare, execute, close and re-prepare three times; a missing key gives no row. */
    static void checkLifecycle(String url, long records, int shortCircuit) throws SQLException {
        try (Connection c = connect(url, shortCircuit)) {
            for (int round = 0; round < 3; round++) {
                long i = ThreadLocalRandom.current().nextLong(records);
                try (PreparedStatement ps = c.prepareStatement(QUERY)) {
                    ps.setString(1, key(i));
                    try (ResultSet rs = ps.executeQuery()) {
                        checkRow(rs, i);
                    }
                    ps.setString(1, "no-such-key");
                    try (ResultSet rs = ps.executeQuery()) {
                        if (rs.next()) {
                            throw new IllegalStateException("a row for a missing key");
                        }
                    }
                }
            }
        }
    }

    public static void main(String[] args) throws Exception {
        String host = args[0];
        int port = Integer.parseInt(args[1]);
        String db = args[2];
        long records = Long.parseLong(args[3]);
        int threads = Integer.parseInt(args[4]);
        int seconds = Integer.parseInt(args[5]);
        int shortCircuit = Integer.parseInt(args[6]);
        // 0 seconds: read every key once (in key order, split across the threads) instead of
        // random keys for a fixed time; the harness warms the caches this way.
        boolean sweep = seconds == 0;
        String base = "jdbc:mysql://" + host + ":" + port + "/" + db
                + "?useSSL=false&allowPublicKeyRetrieval=true&useServerPrepStmts=true";
        String cached = base + "&cachePrepStmts=true&prepStmtCacheSize=250";
        checkLifecycle(cached, records, shortCircuit);
        checkLifecycle(base + "&cachePrepStmts=false", records, shortCircuit);

        long[][] latencies = new long[threads][];
        int[] counts = new int[threads];
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> workers = new ArrayList<>();
        long start = System.nanoTime();
        long end = start + seconds * 1_000_000_000L;
        for (int t = 0; t < threads; t++) {
            final int id = t;
            Thread w = new Thread(() -> {
                long[] lat = new long[1 << 16];
                int n = 0;
                ThreadLocalRandom rnd = ThreadLocalRandom.current();
                try (Connection c = connect(cached, shortCircuit);
                     PreparedStatement ps = c.prepareStatement(QUERY)) {
                    long next = id;
                    while (true) {
                        long t0 = System.nanoTime();
                        long i;
                        if (sweep) {
                            if (next >= records) {
                                break;
                            }
                            i = next;
                            next += threads;
                        } else if (t0 >= end) {
                            break;
                        } else {
                            i = rnd.nextLong(records);
                        }
                        ps.setString(1, key(i));
                        try (ResultSet rs = ps.executeQuery()) {
                            checkRow(rs, i);
                        }
                        if (n == lat.length) {
                            lat = Arrays.copyOf(lat, n * 2);
                        }
                        lat[n++] = System.nanoTime() - t0;
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
                latencies[id] = lat;
                counts[id] = n;
            });
            w.start();
            workers.add(w);
        }
        for (Thread w : workers) {
            w.join();
        }
        double elapsed = (System.nanoTime() - start) / 1e9;
        if (failure.get() != null) {
            failure.get().printStackTrace();
            System.exit(1);
        }
        int total = Arrays.stream(counts).sum();
        long[] all = new long[total];
        int at = 0;
        for (int t = 0; t < threads; t++) {
            System.arraycopy(latencies[t], 0, all, at, counts[t]);
            at += counts[t];
        }
        Arrays.sort(all);
        System.out.printf(
            "{\"ops\": %d, \"seconds\": %.2f, \"qps\": %.1f, \"p50_ms\": %.3f, \"p95_ms\": %.3f, "
                + "\"p99_ms\": %.3f, \"max_ms\": %.3f}%n",
            total, elapsed, total / elapsed, pct(all, 0.50), pct(all, 0.95), pct(all, 0.99),
            total == 0 ? 0.0 : all[total - 1] / 1e6);
    }

    static double pct(long[] sorted, double q) {
        if (sorted.length == 0) {
            return Double.NaN;
        }
        int i = (int) Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1);
        return sorted[Math.max(0, i)] / 1e6;
    }
}
