/*
 * H2Load - the H2 workload of bench/alloc.sh (issue 13): an in-memory H2
 * database (Debian's libh2-java, /usr/share/java/h2.jar) loaded and queried
 * through JDBC, a real program nobody here wrote doing the allocating.
 *
 * Usage:
 *   java -cp /usr/share/java/h2.jar:DIR H2Load [ROWS]
 *       ROWS (default 1000000) rows inserted into one table in batches of
 *       1000 (prepared statement, autocommit off, a commit per batch), then:
 *       an index on a column built, 4 aggregate queries (GROUP BY, each over
 *       the whole table), ROWS / 5 point lookups by primary key, ROWS / 20
 *       range scans of 10 rows through the index, and an UPDATE of a tenth of
 *       the rows. Prints one line,
 *           rows ROWS checksum C ms MS
 *       where C is a sum over every result read (the same for every run with
 *       the same ROWS: the data are a function of the row number, no random
 *       numbers) and MS the work's own wall time. Exit 0; an SQL error is
 *       printed on stderr with exit 1.
 *
 * Nothing else runs: one thread, the main one.
 */
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

public final class H2Load {
    private H2Load() {
    }

    static final String[] CITIES = {
        "Amsterdam", "Berlin", "Cairo", "Delhi", "Edinburgh", "Florence", "Geneva",
        "Hanoi", "Istanbul", "Jakarta", "Kyoto", "Lima", "Madrid", "Nairobi", "Oslo",
        "Porto", "Quito", "Riga", "Seoul", "Tunis",
    };

    public static void main(String[] args) throws Exception {
        int rows = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
        long t0 = System.nanoTime();
        long sum = 0;
        try (Connection c = DriverManager.getConnection("jdbc:h2:mem:bench;DB_CLOSE_DELAY=0", "sa", "")) {
            try (Statement s = c.createStatement()) {
                s.execute("CREATE TABLE orders(id BIGINT PRIMARY KEY, customer VARCHAR(40),"
                    + " city VARCHAR(20), status INT, amount DECIMAL(12,2), note VARCHAR(100))");
            }
            c.setAutoCommit(false);
            try (PreparedStatement p = c.prepareStatement("INSERT INTO orders VALUES(?, ?, ?, ?, ?, ?)")) {
                for (int i = 0; i < rows; i++) {
                    p.setLong(1, i);
                    p.setString(2, "customer-" + (i % 50_000));
                    p.setString(3, CITIES[i % CITIES.length]);
                    p.setInt(4, i % 10);
                    p.setBigDecimal(5, java.math.BigDecimal.valueOf((i % 100_000) * 25L, 2));
                    p.setString(6, "order " + i + " of customer " + (i % 50_000));
                    p.addBatch();
                    if (i % 1000 == 999 || i == rows - 1) {
                        p.executeBatch();
                        c.commit();
                    }
                }
            }
            try (Statement s = c.createStatement()) {
                s.execute("CREATE INDEX orders_customer ON orders(customer)");
                c.commit();
                for (int q = 0; q < 4; q++) {
                    try (ResultSet r = s.executeQuery("SELECT city, status, COUNT(*), SUM(amount)"
                            + " FROM orders WHERE MOD(id, 4) = " + q + " GROUP BY city, status")) {
                        while (r.next()) {
                            sum += r.getString(1).length() + r.getInt(2) + r.getLong(3)
                                + r.getBigDecimal(4).longValue();
                        }
                    }
                }
            }
            try (PreparedStatement p = c.prepareStatement("SELECT customer, amount FROM orders WHERE id = ?")) {
                for (int i = 0; i < rows / 5; i++) {
                    p.setLong(1, (i * 7919L) % rows);
                    try (ResultSet r = p.executeQuery()) {
                        while (r.next()) {
                            sum += r.getString(1).length() + r.getBigDecimal(2).longValue();
                        }
                    }
                }
            }
            try (PreparedStatement p = c.prepareStatement(
                    "SELECT id, note FROM orders WHERE customer = ? ORDER BY id LIMIT 10")) {
                for (int i = 0; i < rows / 20; i++) {
                    p.setString(1, "customer-" + ((i * 31L) % 50_000));
                    try (ResultSet r = p.executeQuery()) {
                        while (r.next()) {
                            sum += r.getLong(1) + r.getString(2).length();
                        }
                    }
                }
            }
            try (Statement s = c.createStatement()) {
                sum += s.executeUpdate("UPDATE orders SET status = status + 1, note = CONCAT(note, ' (seen)')"
                    + " WHERE MOD(id, 10) = 3");
                c.commit();
            }
        } catch (SQLException e) {
            System.err.println("H2Load: " + e);
            System.exit(1);
        }
        long ms = (System.nanoTime() - t0) / 1_000_000;
        System.out.println("rows " + rows + " checksum " + sum + " ms " + ms);
    }
}
