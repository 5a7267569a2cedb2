/*
 * H2Leak - the JVM of bench/leaks.sh (issue 34): an in-memory H2 database
 * (Debian's libh2-java, /usr/share/java/h2.jar), a real program nobody here
 * wrote, under a steady one-thread load, with a slowly growing leak of the
 * application's own.
 *
 * Usage:
 *   java -cp /usr/share/java/h2.jar:DIR H2Leak ROWS [OPS_PER_S]
 *       Loads ROWS rows into one table (as bench/java/H2Load.java does),
 *       prints "ready PID", then runs until its stdin ends: each operation
 *       inserts a row and deletes the oldest (the table keeps ROWS rows),
 *       reads one by primary key and updates one; every 500th
 *       also puts a copy of the row it read (an H2Leak$Cached holding the
 *       customer String, the note String and a byte[2048]) into the static
 *       map H2Leak.CACHE, which nothing ever empties: the leak. Every second
 *       it prints "ops N" (operations done in all). With OPS_PER_S, at most
 *       that many operations a second (bench/serve.sh: many light JVMs);
 *       without, as fast as it can.
 *
 * KNOWN FACTS: the leak's path from its GC root is
 *   class H2Leak.CACHE -> java.util.HashMap.table -> java.util.HashMap$Node[]
 *     -> java.util.HashMap$Node.value -> H2Leak$Cached
 */

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.HashMap;
import java.util.Map;

public final class H2Leak {
    private H2Leak() {
    }

    static final class Cached {
        final String customer;
        final String note;
        final byte[] digest = new byte[2048];

        Cached(String customer, String note) {
            this.customer = customer;
            this.note = note;
        }
    }

    static final Map<Long, Cached> CACHE = new HashMap<>();

    public static void main(String[] args) throws Exception {
        int rows = Integer.parseInt(args[0]);
        long pace = args.length > 1 ? 1_000_000_000L / Long.parseLong(args[1]) : 0;
        Thread reader = new Thread(() -> {
            try {
                while (System.in.read() >= 0) {
                    // until the end of stdin
                }
            } catch (java.io.IOException e) {
                // exit
            }
            System.exit(0);
        }, "stdin");
        reader.setDaemon(true);
        try (Connection c = DriverManager.getConnection("jdbc:h2:mem:leak;DB_CLOSE_DELAY=0", "sa", "")) {
            try (Statement s = c.createStatement()) {
                s.execute("CREATE TABLE orders(id BIGINT PRIMARY KEY, customer VARCHAR(40),"
                    + " status INT, amount DECIMAL(12,2), note VARCHAR(100))");
            }
            c.setAutoCommit(false);
            PreparedStatement ins = c.prepareStatement("INSERT INTO orders VALUES(?, ?, ?, ?, ?)");
            PreparedStatement sel = c.prepareStatement("SELECT customer, note FROM orders WHERE id = ?");
            PreparedStatement upd = c.prepareStatement("UPDATE orders SET status = status + 1 WHERE id = ?");
            PreparedStatement del = c.prepareStatement("DELETE FROM orders WHERE id = ?");
            for (int i = 0; i < rows; i++) {
                insert(ins, i);
                ins.addBatch();
                if (i % 1000 == 999 || i == rows - 1) {
                    ins.executeBatch();
                    c.commit();
                }
            }
            System.out.println("ready " + ProcessHandle.current().pid());
            System.out.flush();
            reader.start();
            long next = System.nanoTime() + 1_000_000_000L;
            long ops = 0;
            final long start = System.nanoTime();
            for (long id = rows;; id++) {
                insert(ins, id);
                ins.executeUpdate();
                del.setLong(1, id - rows);
                del.executeUpdate();
                long oldest = id - rows + 1;
                long k = oldest + (id * 7919L) % rows;
                sel.setLong(1, k);
                try (ResultSet r = sel.executeQuery()) {
                    if (r.next() && ops % 500 == 0) {
                        CACHE.put(id, new Cached(r.getString(1), r.getString(2)));
                    }
                }
                upd.setLong(1, oldest + (id * 31L) % rows);
                upd.executeUpdate();
                c.commit();
                ops++;
                if (pace > 0) {
                    long ahead = start + ops * pace - System.nanoTime();
                    if (ahead > 0)
                        Thread.sleep(ahead / 1_000_000L, (int) (ahead % 1_000_000L));
                }
                if (System.nanoTime() >= next) {
                    System.out.println("ops " + ops);
                    System.out.flush();
                    next += 1_000_000_000L;
                }
            }
        }
    }

    static void insert(PreparedStatement p, long i) throws Exception {
        p.setLong(1, i);
        p.setString(2, "customer-" + (i % 50_000));
        p.setInt(3, (int) (i % 10));
        p.setBigDecimal(4, java.math.BigDecimal.valueOf((i % 100_000) * 25L, 2));
        p.setString(5, "order " + i + " of customer " + (i % 50_000));
    }
}
