/*
 * KnownHeap - builds a Java heap with exactly known contents, then dumps it.
 *
 * Usage:
 *   java -cp DIR KnownHeap dump OUT.hprof
 *       Build the heap, write OUT.hprof with
 *       HotSpotDiagnosticMXBean.dumpHeap(OUT, true) (live objects only; a
 *       full GC runs first), exit 0. OUT must end in ".hprof" (the JDK
 *       refuses other names); an existing OUT is replaced.
 *   java -cp DIR KnownHeap wait
 *       Build the heap, then leave 50 more Orders with status 7 as garbage
 *       (unreachable at once, and still in the heap until the next GC: a walk
 *       of the whole heap that does not collect first counts 150 Orders with
 *       status 7), print "ready <pid>" on stdout, then block until a line
 *       is read from stdin or stdin is closed, then exit 0. Meant for
 *       `jcmd <pid> GC.heap_dump [-gz=1] FILE` or `jcmd <pid> GC.class_histogram`.
 *
 * All classes are in the default package, so their HPROF names are simple
 * ("Order", "Order[]", "Child", ...). Everything below is reachable from a
 * static field of class KnownHeap, except the Holder, which is reachable only
 * from a local variable of the "heapsh-holder" thread (a Java-frame GC root).
 * Allocation is deterministic: the same facts hold for every run.
 *
 * KNOWN FACTS (tests assert these; keep this list in sync with the code)
 *
 * Instance counts (exact, whole heap):
 *   Order 1000, Leaf 500, Shared 1, Owner 2, CycleNode 3, Measure 4,
 *   Child 7, Parent 0, Grandparent 0, Holder 1, HolderThread 1, KnownHeap 0.
 *   Arrays of our classes: Order[] 1 (length 1000), Measure[] 1 (length 4),
 *   Child[] 1 (length 7).
 *
 * class Order { long id; int status; double amount; String customer; Order next; }
 *   static Order[] KnownHeap.orders, length 1000; orders[i] has
 *     id = i (0..999), status = i % 10 (so exactly 100 Orders have status 7,
 *     and 100 of each value 0..9), amount = i * 1.5 (0.0 .. 1498.5),
 *     customer = "customer-" + (i % 50), next = null for ALL 1000 Orders.
 *   The 50 customer strings "customer-0" .. "customer-49" are built at run
 *   time, one String object each, shared: 20 Orders point at each of them.
 *   Each Order is referenced only from the orders array, except orders[0]
 *   (also from KnownHeap.mixed[3] and byCustomer) and orders[1..9] (also
 *   from byCustomer).
 *
 * class Leaf { long a; long b; }
 *   500 instances, leaf j has a = j, b = 2 * j (j = 0..499), held ONLY by
 *   static java.util.ArrayList<Leaf> KnownHeap.leaves, created with
 *   new ArrayList<>(500), so its elementData is an Object[] of length 500,
 *   size = 500. Nothing else references the ArrayList, its array or any Leaf:
 *   the ArrayList retains itself + the Object[500] + the 500 Leafs.
 *
 * class Shared { int[] payload; }  -- exactly 1 instance, payload = new int[256]
 *   (all zeros), referenced from both Owners and nothing else.
 * class Owner { Shared shared; String name; }  -- exactly 2 instances:
 *   static KnownHeap.ownerA (name "owner-a"), static KnownHeap.ownerB
 *   (name "owner-b"); both .shared point at the same Shared. Neither Owner
 *   dominates the Shared; the class object of KnownHeap does.
 *
 * class CycleNode { CycleNode next; int n; }  -- exactly 3 instances,
 *   n = 1, 2, 3 with 1 -> 2 -> 3 -> 1 (a cycle); only node 1 is held, by
 *   static KnownHeap.cycle.
 *
 * class Measure { double value; String label; }  -- exactly 4 instances in
 *   static Measure[] KnownHeap.measures (length 4), in this order:
 *     [0] 3.1415  "pi-low"   [1] 3.1416  "pi-high"
 *     [2] 2.71828 "e"        [3] 1.0     "one"
 *   Exactly 2 values lie in 3.141 .. 3.142. Labels are string literals.
 *
 * Statics of primitive arrays and strings:
 *   String KnownHeap.greeting = "hello heapsh" (a literal, interned)
 *   int[]  KnownHeap.primes   = the first 100 primes, 2, 3, 5, ..., 541
 *                               (primes[99] = 541, sum = 24133)
 *   byte[] KnownHeap.blob     = new byte[1000], blob[i] = (byte) i
 *                               (so 0..127, -128..-1, 0, ... repeating)
 *   long[] KnownHeap.longs    = {0, 1, ..., 9} (length 10)
 *   char[] KnownHeap.chars    = "abc".toCharArray() (length 3)
 *   Object[] KnownHeap.mixed  = { greeting, primes, null, orders[0] } (length 4)
 *
 * java.lang.ref.SoftReference<Cached> KnownHeap.softCache: a SoftReference to
 *   the only Cached { byte[] data = new byte[2048]; } instance (Cached 16
 *   bytes + byte[2048] 2064 bytes). Nothing else references the Cached, so
 *   it is reachable only through the Reference.referent field: a live dump
 *   keeps it (soft references survive GC without memory pressure), and an
 *   analysis that ignores weak/soft referents sees it as unreachable.
 *
 * java.util.HashMap<String,Order> KnownHeap.byCustomer: 10 entries,
 *   "key-" + i -> orders[i] for i = 0..9 (keys built at run time). Created
 *   with new HashMap<>() and 10 puts, so its table is a HashMap$Node[16].
 *
 * class Grandparent { int g; }, class Parent extends Grandparent { long p; },
 * class Child extends Parent { String c; }
 *   exactly 7 Child instances (no plain Parent or Grandparent instances) in
 *   static Child[] KnownHeap.children (length 7): children[i] has
 *   g = i, p = 100 * i, c = "child-" + i (built at run time), i = 0..6.
 *
 * Thread "heapsh-holder": a daemon thread of class HolderThread (extends
 *   Thread), also held by static KnownHeap.holderThread. Its run() keeps a
 *   LOCAL variable pointing at the only Holder { byte[] data = new byte[4096]; }
 *   (data all zeros); nothing else references the Holder, so in the dump
 *   its only GC root is a Java-frame root of that thread. build() waits (on
 *   a CountDownLatch that is garbage afterwards) until the thread has created
 *   the Holder, so the Holder is always in the dump.
 *
 * Everything else in the dump belongs to the JDK. Counts of JDK classes
 * (java.lang.String, byte[], int[], Object[], HashMap$Node, ...) are NOT
 * exact: they vary slightly between runs (e.g. compiler threads started on
 * demand), JDK builds and flags (CDS archived objects), so tests must not
 * hard-code them. Hidden classes (lambdas) have names like
 * "Foo$$Lambda$14+0x00007ff25404a950" in the dump, different on every run.
 */

import com.sun.management.HotSpotDiagnosticMXBean;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.concurrent.CountDownLatch;

class Order {
    long id;
    int status;
    double amount;
    String customer;
    Order next;
}

class Leaf {
    long a;
    long b;
}

class Shared {
    int[] payload;
}

class Owner {
    Shared shared;
    String name;
}

class CycleNode {
    CycleNode next;
    int n;
}

class Measure {
    double value;
    String label;
}

class Grandparent {
    int g;
}

class Parent extends Grandparent {
    long p;
}

class Child extends Parent {
    String c;
}

/** Only ever referenced from the local variable of HolderThread.run(). */
class Holder {
    byte[] data = new byte[4096];
}

/** Keeps a Holder in a local variable and sleeps until the JVM exits. */
class HolderThread extends Thread {
    /**
     * Counted down once the Holder exists. The thread drops its reference
     * first, so after build() the latch is garbage and not in the dump.
     */
    private CountDownLatch started;
    /** Never set to true; it only keeps the loop (and the local) alive. */
    volatile boolean stop;
    /** Written after the loop so the JIT must keep 'holder' live. */
    volatile Object sink;

    HolderThread(CountDownLatch started) {
        super("heapsh-holder");
        this.started = started;
        setDaemon(true);
    }

    @Override
    public void run() {
        Holder holder = new Holder();   // the ONLY reference to the Holder
        CountDownLatch latch = started;
        started = null;
        latch.countDown();
        latch = null;
        while (!stop) {
            try {
                Thread.sleep(60_000);
            } catch (InterruptedException e) {
                // keep waiting; the JVM ends this daemon thread at exit
            }
        }
        sink = holder;                  // use the local after the loop
    }
}

public class KnownHeap {
    static Order[] orders;
    static ArrayList<Leaf> leaves;
    static Owner ownerA;
    static Owner ownerB;
    static CycleNode cycle;
    static Measure[] measures;
    static String greeting;
    static int[] primes;
    static byte[] blob;
    static long[] longs;
    static char[] chars;
    static Object[] mixed;
    static HashMap<String, Order> byCustomer;
    static java.lang.ref.SoftReference<Cached> softCache;
    static Child[] children;
    static HolderThread holderThread;

    /** Allocates every object listed in the comment at the top of the file. */
    static void build() throws InterruptedException {
        softCache = new java.lang.ref.SoftReference<>(new Cached());
        // 50 shared customer strings, built at run time (not literals)
        String[] customers = new String[50];
        for (int c = 0; c < customers.length; c++) {
            customers[c] = "customer-" + c;
        }
        orders = new Order[1000];
        for (int i = 0; i < orders.length; i++) {
            Order o = new Order();
            o.id = i;
            o.status = i % 10;
            o.amount = i * 1.5;
            o.customer = customers[i % 50];
            o.next = null;
            orders[i] = o;
        }

        leaves = new ArrayList<>(500);
        for (int j = 0; j < 500; j++) {
            Leaf leaf = new Leaf();
            leaf.a = j;
            leaf.b = 2L * j;
            leaves.add(leaf);
        }

        Shared shared = new Shared();
        shared.payload = new int[256];
        ownerA = new Owner();
        ownerA.shared = shared;
        ownerA.name = "owner-a";
        ownerB = new Owner();
        ownerB.shared = shared;
        ownerB.name = "owner-b";

        CycleNode n1 = new CycleNode();
        CycleNode n2 = new CycleNode();
        CycleNode n3 = new CycleNode();
        n1.n = 1;
        n2.n = 2;
        n3.n = 3;
        n1.next = n2;
        n2.next = n3;
        n3.next = n1;
        cycle = n1;

        measures = new Measure[] {
            measure(3.1415, "pi-low"),
            measure(3.1416, "pi-high"),
            measure(2.71828, "e"),
            measure(1.0, "one"),
        };

        greeting = "hello heapsh";
        primes = firstPrimes(100);
        blob = new byte[1000];
        for (int i = 0; i < blob.length; i++) {
            blob[i] = (byte) i;
        }
        longs = new long[10];
        for (int i = 0; i < longs.length; i++) {
            longs[i] = i;
        }
        chars = "abc".toCharArray();
        mixed = new Object[] { greeting, primes, null, orders[0] };

        byCustomer = new HashMap<>();
        for (int i = 0; i < 10; i++) {
            byCustomer.put("key-" + i, orders[i]);
        }

        children = new Child[7];
        for (int i = 0; i < children.length; i++) {
            Child ch = new Child();
            ch.g = i;
            ch.p = 100L * i;
            ch.c = "child-" + i;
            children[i] = ch;
        }

        CountDownLatch started = new CountDownLatch(1);
        holderThread = new HolderThread(started);
        holderThread.start();
        started.await();                // the Holder exists and is held
    }

    static Measure measure(double value, String label) {
        Measure m = new Measure();
        m.value = value;
        m.label = label;
        return m;
    }

    /** Returns the first n primes by trial division. */
    static int[] firstPrimes(int n) {
        int[] result = new int[n];
        int found = 0;
        for (int candidate = 2; found < n; candidate++) {
            boolean prime = true;
            for (int k = 0; k < found && result[k] * result[k] <= candidate; k++) {
                if (candidate % result[k] == 0) {
                    prime = false;
                    break;
                }
            }
            if (prime) {
                result[found++] = candidate;
            }
        }
        return result;
    }

    static void dump(String out) throws IOException {
        File file = new File(out);
        file.delete();                  // dumpHeap refuses to overwrite
        HotSpotDiagnosticMXBean bean =
            ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
        bean.dumpHeap(file.getPath(), true);
    }

    /** Blocks until a full line has been read or stdin reaches end of file. */
    static void waitForStdin() throws IOException {
        InputStream in = System.in;
        int c;
        do {
            c = in.read();
        } while (c != -1 && c != '\n');
    }

    /** 50 Orders with status 7 that nothing references once this returns. */
    static void leaveGarbage() {
        Order[] junk = new Order[50];
        for (int i = 0; i < junk.length; i++) {
            junk[i] = new Order();
            junk[i].id = 1000 + i;
            junk[i].status = 7;
        }
    }

    static void usage() {
        System.err.println("usage: KnownHeap dump OUT.hprof | KnownHeap wait");
        System.exit(2);
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 2 && args[0].equals("dump")) {
            build();
            dump(args[1]);
        } else if (args.length == 1 && args[0].equals("wait")) {
            build();
            leaveGarbage();
            System.out.println("ready " + ProcessHandle.current().pid());
            System.out.flush();
            waitForStdin();
        } else {
            usage();
        }
        System.exit(0);
    }
}

/** Held only through the SoftReference KnownHeap.softCache. */
class Cached {
    byte[] data = new byte[2048];
}
