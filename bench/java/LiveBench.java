/*
 * LiveBench - the running JVMs of bench/live.sh (issue 6): a quiescent JVM
 * holding about 1 GB of live objects with a known number of Orders planted
 * with status 7, and a CPU- and allocation-bound workload that reports its
 * throughput over fixed intervals.
 *
 * Usage:
 *   java -Xms3g -Xmx3g -cp DIR LiveBench wait [MB]
 *       Build about MB megabytes (MiB) of live objects (default 1024), run a
 *       full GC, print
 *           orders <N> status7 <K> objects <approx> live <bytes used after GC>
 *           ready <pid>
 *       on stdout, then block until a line is read from stdin or stdin is
 *       closed, then exit 0 (as tests/java/KnownHeap.java's wait mode).
 *       Nothing runs meanwhile: the heap stays exactly as built.
 *
 *   java -Xms256m -Xmx256m -cp DIR LiveBench workload
 *       Warm up (about 8 s), print "ready <pid>", then read commands from
 *       stdin, one a line:
 *           run ID N MS   run N intervals of MS milliseconds; after each print
 *                         "ops ID K OPS_PER_S" (K = 1..N), then "done ID"
 *           quit          (or end of file) exit 0
 *       Between commands the JVM is idle (blocked reading stdin), so
 *       several workload JVMs can take turns on the same machine.
 *   java -cp DIR LiveBench workload N MS
 *       The same loop on its own: warm up, print "ready <pid>", run N
 *       intervals of MS ms printing "ops - K OPS_PER_S", exit 0.
 *
 * KNOWN FACTS of the wait heap (MB = 1024, the default):
 *   class Order { long id; int status; double amount; String customer; }
 *     N = 4000 * MB / 1024 rounded down to a multiple of 1000 (4,000,000),
 *     all held by the static Order[] LiveBench.orders (length N) and, per
 *     customer, by Customer.orders lists. orders[i] has id = i,
 *     amount = (i % 10000) * 0.25, customer = the name of customers[i % C],
 *     status = 7 exactly when i % 1000 == 7 (so K = N / 1000 = 4000 Orders
 *     have status 7), and otherwise i % 10 with 7 replaced by 8.
 *   C = N / 40 Customer { String name; long since; ArrayList<Order> orders; }
 *     (100,000), name "customer-" + c (one String each), each list holding
 *     its 40 Orders.
 *   HashMap<Long, Order> LiveBench.byId: the first N / 4 Orders by id.
 *   Measure[] LiveBench.measures: 1000 Measure { double value; }, value
 *     i * 0.01, but 3.1415 and 3.1416 at 314 and 315 (queries/pi_check.hq
 *     finds those two).
 *   String[] LiveBench.notes: N / 2 strings "note <i> for order <j> ..."
 *     (about 40 characters, Latin-1).
 *   Object[] LiveBench.blobs: byte[], int[] and long[] arrays of 1-8 KiB
 *     (deterministic sizes) until the heap holds about MB megabytes.
 *   All sizes scale with MB; the line "orders ... status7 ..." gives the
 *   exact N and K of the run.
 *
 * The workload: each operation builds 32 short-lived Orders with fresh
 * customer strings, sorts them by amount, sums them through a small
 * HashMap by status, and keeps one of them in a ring of 100,000 (so some
 * objects survive young collections and the old generation churns). Its
 * result is folded into a checksum printed at exit, so nothing is optimised
 * away.
 */

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Map;

class Order {
    long id;
    int status;
    double amount;
    String customer;
}

class Measure {
    double value;
}

class Customer {
    String name;
    long since;
    ArrayList<Order> orders;
}

public class LiveBench {
    static Order[] orders;
    static Customer[] customers;
    static HashMap<Long, Order> byId;
    static String[] notes;
    static Object[] blobs;
    static Measure[] measures;

    static long status7;

    static void build(int mb) {
        long target = (long) mb << 20;
        int n = (int) ((4_000_000L * mb / 1024) / 1000 * 1000);
        if (n < 1000)
            n = 1000;
        int nc = Math.max(1, n / 40);
        customers = new Customer[nc];
        for (int c = 0; c < nc; c++) {
            Customer cu = new Customer();
            cu.name = "customer-" + c;
            cu.since = 1_600_000_000_000L + c;
            cu.orders = new ArrayList<>(n / nc + 1);
            customers[c] = cu;
        }
        orders = new Order[n];
        for (int i = 0; i < n; i++) {
            Order o = new Order();
            o.id = i;
            int s = i % 10;
            if (s == 7)
                s = 8;
            if (i % 1000 == 7)
                s = 7;
            if (s == 7)
                status7++;
            o.status = s;
            o.amount = (i % 10000) * 0.25;
            Customer cu = customers[i % nc];
            o.customer = cu.name;
            cu.orders.add(o);
            orders[i] = o;
        }
        // queries/pi_check.hq's Measures: 1000, two of them between 3.141 and 3.142
        measures = new Measure[1000];
        for (int i = 0; i < measures.length; i++) {
            measures[i] = new Measure();
            measures[i].value = i * 0.01;
        }
        measures[314].value = 3.1415;
        measures[315].value = 3.1416;
        byId = new HashMap<>(n / 2);
        for (int i = 0; i < n / 4; i++)
            byId.put((long) i, orders[i]);
        notes = new String[n / 2];
        for (int i = 0; i < notes.length; i++)
            notes[i] = "note " + i + " for order " + (i * 7L % n) + " (checked)";
        // Fill up to the target with primitive arrays of 1-8 KiB.
        long used = usedAfterGc();
        long left = Math.max(0, target - used);
        ArrayList<Object> bl = new ArrayList<>();
        long k = 0;
        while (left > 0) {
            int bytes = 1024 * (int) (1 + (k * 2654435761L >>> 7) % 8);
            Object a;
            switch ((int) (k % 3)) {
                case 0: a = new byte[bytes]; break;
                case 1: a = new int[bytes / 4]; break;
                default: a = new long[bytes / 8]; break;
            }
            bl.add(a);
            left -= bytes + 16;
            k++;
        }
        blobs = bl.toArray();
    }

    static long usedAfterGc() {
        System.gc();
        System.gc();
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    /** Blocks until a full line has been read or stdin reaches end of file. */
    static void waitForStdin() throws IOException {
        InputStream in = System.in;
        int c;
        do {
            c = in.read();
        } while (c != -1 && c != '\n');
    }

    // ---- the workload ----

    static Order[] ring;          // allocated by workload() only: not in the wait heap
    static int ringPos;
    static long checksum;

    static final Comparator<Order> BY_AMOUNT = Comparator.comparingDouble(o -> o.amount);

    static void op(long seq) {
        Order[] batch = new Order[32];
        for (int i = 0; i < batch.length; i++) {
            Order o = new Order();
            long v = seq * 31 + i;
            o.id = v;
            o.status = (int) (v % 10);
            o.amount = (v * 2654435761L & 0xffff) / 16.0;
            o.customer = "c-" + (v % 5000);
            batch[i] = o;
        }
        Arrays.sort(batch, BY_AMOUNT);
        Map<Integer, Double> sums = new HashMap<>();
        for (Order o : batch)
            sums.merge(o.status, o.amount, Double::sum);
        double t = 0;
        for (double d : sums.values())
            t += d;
        ring[ringPos] = batch[(int) (seq & 31)];
        ringPos = ringPos + 1 == ring.length ? 0 : ringPos + 1;
        checksum += (long) t + batch[0].customer.length();
    }

    static long seq;

    /** Runs ops for ms milliseconds; returns the operations per second. */
    static double interval(long ms) {
        long t0 = System.nanoTime(), end = t0 + ms * 1_000_000L, n = 0, now;
        do {
            for (int i = 0; i < 256; i++)
                op(seq++);
            n += 256;
            now = System.nanoTime();
        } while (now < end);
        return n * 1e9 / (now - t0);
    }

    static void workload(String[] args) throws IOException {
        ring = new Order[100_000];
        for (int i = 0; i < 8; i++)     // warm-up: JIT, heap sizing, the ring full
            interval(1000);
        System.out.println("ready " + ProcessHandle.current().pid());
        System.out.flush();
        if (args.length == 3) {
            int n = Integer.parseInt(args[1]);
            long ms = Long.parseLong(args[2]);
            for (int k = 1; k <= n; k++)
                System.out.printf("ops - %d %.1f%n", k, interval(ms));
        } else {
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
            String line;
            while ((line = in.readLine()) != null) {
                String[] w = line.trim().split("\\s+");
                if (w[0].equals("quit"))
                    break;
                if (w.length != 4 || !w[0].equals("run")) {
                    System.out.println("error: run ID N MS | quit");
                    System.out.flush();
                    continue;
                }
                int n = Integer.parseInt(w[2]);
                long ms = Long.parseLong(w[3]);
                for (int k = 1; k <= n; k++)
                    System.out.printf("ops %s %d %.1f%n", w[1], k, interval(ms));
                System.out.println("done " + w[1]);
                System.out.flush();
            }
        }
        System.out.println("checksum " + checksum);
        System.out.flush();
    }

    public static void main(String[] args) throws Exception {
        if (args.length >= 1 && args[0].equals("wait") && args.length <= 2) {
            int mb = args.length == 2 ? Integer.parseInt(args[1]) : 1024;
            build(mb);
            long live = usedAfterGc();
            long objs = orders.length + customers.length * 5L + notes.length * 2L
                + byId.size() * 2L + blobs.length;
            System.out.println("orders " + orders.length + " status7 " + status7 + " objects "
                + objs + " live " + live);
            System.out.println("ready " + ProcessHandle.current().pid());
            System.out.flush();
            waitForStdin();
            System.exit(0);
        } else if (args.length >= 1 && args[0].equals("workload") && (args.length == 1 || args.length == 3)) {
            workload(args);
            System.exit(0);
        }
        System.err.println("usage: LiveBench wait [MB] | workload [N MS]");
        System.exit(2);
    }
}
