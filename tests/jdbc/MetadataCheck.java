// MySQL Connector/J's DatabaseMetaData against Basalt: what DBeaver, DataGrip, Metabase and
// Superset's JDBC paths call to browse a schema. Run by tests/e2e/tools.rs as
//   java -cp mysql-connector-j.jar MetadataCheck.java PORT [extra URL properties]
// and exits non-zero, naming the call, at the first wrong answer.
import java.sql.*;
import java.util.*;

public class MetadataCheck {
    static void check(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError(what);
        }
    }

    static List<List<String>> rows(ResultSet rs, String... columns) throws SQLException {
        List<List<String>> out = new ArrayList<>();
        while (rs.next()) {
            List<String> row = new ArrayList<>();
            for (String c : columns) {
                row.add(rs.getString(c));
            }
            out.add(row);
        }
        return out;
    }

    public static void main(String[] args) throws Exception {
        String url = "jdbc:mysql://127.0.0.1:" + args[0] + "/?user=root&password="
                + (args.length > 1 ? "&" + args[1] : "");
        try (Connection c = DriverManager.getConnection(url)) {
            try (Statement s = c.createStatement()) {
                s.execute("CREATE DATABASE jdbcmeta");
                s.execute("CREATE TABLE jdbcmeta.users (id INT NOT NULL, name VARCHAR(50) COMMENT 'full name', "
                        + "score DECIMAL(10, 2), seen DATETIME, PRIMARY KEY (id))");
                s.execute("CREATE TABLE jdbcmeta.logs (ts DATE, host VARCHAR(20)) DUPLICATE KEY(ts, host) "
                        + "DISTRIBUTED BY HASH(host) BUCKETS 1");
                s.execute("CREATE VIEW jdbcmeta.names AS SELECT name FROM jdbcmeta.users");
                s.execute("CREATE USER IF NOT EXISTS jdbcreader IDENTIFIED BY 'pw'");
                s.execute("GRANT SELECT ON jdbcmeta.users TO jdbcreader");
            }
            DatabaseMetaData m = c.getMetaData();

            List<List<String>> catalogs = rows(m.getCatalogs(), "TABLE_CAT");
            check(catalogs.contains(List.of("jdbcmeta")), "getCatalogs: " + catalogs);

            List<List<String>> tables = rows(m.getTables("jdbcmeta", null, "%", null), "TABLE_NAME", "TABLE_TYPE");
            check(tables.equals(List.of(List.of("logs", "TABLE"), List.of("users", "TABLE"), List.of("names", "VIEW"))),
                    "getTables: " + tables);

            List<List<String>> columns = rows(m.getColumns("jdbcmeta", null, "users", "%"),
                    "COLUMN_NAME", "DATA_TYPE", "TYPE_NAME", "COLUMN_SIZE", "NULLABLE", "REMARKS", "ORDINAL_POSITION");
            check(columns.equals(List.of(
                    List.of("id", String.valueOf(Types.INTEGER), "INT", "10", "0", "", "1"),
                    List.of("name", String.valueOf(Types.VARCHAR), "VARCHAR", "50", "1", "full name", "2"),
                    List.of("score", String.valueOf(Types.DECIMAL), "DECIMAL", "10", "1", "", "3"),
                    List.of("seen", String.valueOf(Types.TIMESTAMP), "DATETIME", "19", "1", "", "4"))),
                    "getColumns: " + columns);
            ResultSet score = m.getColumns("jdbcmeta", null, "users", "score");
            check(score.next() && score.getInt("DECIMAL_DIGITS") == 2, "getColumns: DECIMAL_DIGITS of DECIMAL(10, 2)");

            List<List<String>> pk = rows(m.getPrimaryKeys("jdbcmeta", null, "users"), "COLUMN_NAME", "KEY_SEQ", "PK_NAME");
            check(pk.equals(List.of(List.of("id", "1", "PRIMARY"))), "getPrimaryKeys: " + pk);
            List<List<String>> noPk = rows(m.getPrimaryKeys("jdbcmeta", null, "logs"), "COLUMN_NAME");
            check(noPk.isEmpty(), "getPrimaryKeys of a Duplicate table: " + noPk);

            List<List<String>> index = rows(m.getIndexInfo("jdbcmeta", null, "logs", false, false),
                    "INDEX_NAME", "ORDINAL_POSITION", "COLUMN_NAME");
            check(index.equals(List.of(List.of("duplicate_key", "1", "ts"), List.of("duplicate_key", "2", "host"))),
                    "getIndexInfo: " + index);
            ResultSet nonUnique = m.getIndexInfo("jdbcmeta", null, "logs", false, false);
            check(nonUnique.next() && nonUnique.getBoolean("NON_UNIQUE"), "getIndexInfo: NON_UNIQUE of a Duplicate key");
            List<List<String>> unique = rows(m.getIndexInfo("jdbcmeta", null, "users", true, false), "INDEX_NAME", "COLUMN_NAME");
            check(unique.equals(List.of(List.of("PRIMARY", "id"))), "getIndexInfo(unique): " + unique);

            List<List<String>> privileges = rows(m.getTablePrivileges("jdbcmeta", null, "users"),
                    "TABLE_NAME", "GRANTEE", "PRIVILEGE");
            check(privileges.stream().anyMatch(r -> r.get(0).equals("users") && r.get(1).contains("jdbcreader")
                    && r.get(2).equalsIgnoreCase("SELECT")), "getTablePrivileges: " + privileges);
            check(rows(m.getColumnPrivileges("jdbcmeta", null, "users", "%"), "COLUMN_NAME").isEmpty(),
                    "getColumnPrivileges");

            check(rows(m.getImportedKeys("jdbcmeta", null, "users"), "PKCOLUMN_NAME").isEmpty(), "getImportedKeys");
            check(rows(m.getProcedures("jdbcmeta", null, "%"), "PROCEDURE_NAME").isEmpty(), "getProcedures");
            check(rows(m.getFunctions("jdbcmeta", null, "%"), "FUNCTION_NAME").isEmpty(), "getFunctions");

            try (PreparedStatement p = c.prepareStatement("INSERT INTO jdbcmeta.users VALUES (?, ?, ?, ?)")) {
                p.setInt(1, 7);
                p.setString(2, "zoe");
                p.setBigDecimal(3, new java.math.BigDecimal("12.50"));
                p.setTimestamp(4, Timestamp.valueOf("2024-05-06 07:08:09"));
                check(p.executeUpdate() == 1, "INSERT");
            }
            try (Statement s = c.createStatement();
                 ResultSet rs = s.executeQuery("SELECT id, name, score, seen FROM jdbcmeta.users")) {
                check(rs.next() && rs.getInt(1) == 7 && rs.getString(2).equals("zoe")
                        && rs.getBigDecimal(3).equals(new java.math.BigDecimal("12.50"))
                        && rs.getTimestamp(4).equals(Timestamp.valueOf("2024-05-06 07:08:09")), "SELECT");
            }
        }
        System.out.println("ok");
    }
}
