/*
 * ExactWork - allocations known by construction for the hard cases of
 * heapsh's exact allocation recordings (issue 33, "Tests";
 * tests/t_alloc_exact.sh): a loop in main that was running before the
 * recording started, exceptions crossing accounted frames, threads that
 * start and die while the recording runs, and (with classes the test
 * generates) methods close to the 64 KB bytecode limit.
 *
 * Build (JDK 17 and JDK 25 both run the result):
 *   javac --release 11 -d DIR tests/java/alloc/ExactWork.java $(find tests/java/alloc/exact -name '*.java')
 *
 * Usage:
 *   java -cp DIR[:GENERATED] ExactWork wait [CLASS...]
 *       Load and initialize every class the commands below use, and each
 *       CLASS (a generated class, loaded before any recording starts);
 *       start the 4 Sleeper threads (exact.threads.Worker), which wait;
 *       print "ready <pid>" on stdout, then read commands from stdin, one a
 *       line. Each prints "done <command>" when it is over, or
 *       "fail <command> <throwable>" if it threw.
 *         loop N     N iterations of the loop in main's own body (below).
 *         throw R    R rounds of the three exception paths (below).
 *         threads N M  start N threads (Worker.Spawned), each allocating M
 *                    Sparks (kept) and M Ashes (garbage), and wait for all
 *                    of them to end.
 *         wake M     let the 4 Sleepers go: each allocates M Glows (kept)
 *                    and M Embers (garbage) and ends; wait for all of them.
 *         huge CLASS load CLASS (if not loaded yet), make one with its
 *                    no-argument constructor and call its run() (a
 *                    Runnable): the test's generated classes, whose run()
 *                    calls one huge method.
 *         ctx R      R rounds of exact.ctx.Ctx.run (calling contexts
 *                    known by construction: its KNOWN FACTS).
 *         load CLASS load CLASS without linking it (Class.forName(CLASS,
 *                    false, loader)).
 *         later N    exact.lazy.Later.make(N) (its KNOWN FACTS).
 *         table      initialize exact.lazy.Table, linked at "wait" but
 *                    not initialized (its KNOWN FACTS).
 *         lazy N     exact.lazy.Lazy.make(N) (its KNOWN FACTS): Lazy is
 *                    loaded at "wait" but not linked, so that this links it;
 *                    then exact.lazy.Broken linked, which throws
 *                    NoClassDefFoundError (caught: the command is done).
 *         gc         System.gc().
 *         exit       exit 0 (so does end of file on stdin).
 *       Anything else: a line on stderr, and the next command is read.
 * Nothing else is printed.
 *
 * Allocation sites end in a comment "EXACT-SITE <class>" (not "SITE", so
 * that AllocWork's grep for its own table's sites does not see these).
 * Sizes as in AllocWork.java (HotSpot, 64-bit, compressed oops and class
 * pointers): an object of one int or one reference field is 16 bytes.
 *
 * KNOWN FACTS (tests/t_alloc_exact.sh asserts these)
 *
 *  loop N: in main's own frame, the loop that serves the commands: each
 *    iteration allocates one ExactWork$Item (16 bytes) and one byte[100]
 *    (120 bytes), nothing else, both really allocated (stored in rings of
 *    256, so the last 256 of each stay alive). main runs from start-up to
 *    exit: a recording started in between finds it running.
 *
 *  throw R: R rounds, each of
 *    A  exact.plain.Caller.call(3, 2): Service.work(3) (exact.svc) calls the
 *       unaccounted Helper.allocThenThrow(3): 3 Helper$Scrap and 1
 *       Helper$Boom (40 bytes), charged to exact.svc; the Boom leaves
 *       Service's frame; Caller (unaccounted) catches it and allocates 2
 *       Caller$AfterA itself: (none).
 *    B  exact.outer.Outer.call(3, 2): the same Service.work(3) (3 Scrap, 1
 *       Boom: exact.svc); Outer (exact.outer) catches the Boom and calls the
 *       unaccounted Helper.makeAfterB(2): 2 Helper$AfterB, exact.outer.
 *    C  exact.plain.Caller.callDeep(3, 2): Outer.pass -> Service.workNpe ->
 *       Helper.allocThenNpe(3): 3 Scrap (exact.svc), then the JVM's
 *       NullPointerException leaves Service's and Outer's frames; Caller
 *       catches it and allocates 2 Caller$AfterC itself: (none).
 *    With --accounts exact.svc,exact.outer, after `throw R` (Scrap, AfterA,
 *    AfterB, AfterC kept; Boom garbage):
 *      account      class                         objects  bytes    live
 *      exact.svc    exact.util.Helper$Scrap       9R       144R     9R
 *      exact.svc    exact.util.Helper$Boom        2R       80R      0
 *      exact.outer  exact.util.Helper$AfterB      2R       32R      2R
 *      (none)       exact.plain.Caller$AfterA     2R       32R      2R
 *      (none)       exact.plain.Caller$AfterC     2R       32R      2R
 *
 *  threads N M: exact.threads.Worker$Spark N*M objects (16 N M bytes, all
 *    live), Worker$Ash N*M (garbage once the command is done), each thread's
 *    in its own run() (new code from its first frame). Each `threads`
 *    command keeps its Sparks in new slots: after two, 2 N M live.
 *  wake M: Worker$Glow 4*M (all live), Worker$Ember 4*M (garbage), each
 *    Sleeper's in Worker.burst, called after the Sleeper's run() (running
 *    since before the recording) wakes up. `wake` works once.
 *
 * Every class above is loaded and initialized before "ready", and no
 * command loads a class inside an accounted frame.
 */
import exact.outer.Outer;
import exact.plain.Caller;
import exact.threads.Worker;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.ArrayList;
import java.util.List;

public final class ExactWork {
    /** One per iteration of main's loop. 16 bytes. */
    static final class Item {
        final int i;

        Item(int i) {
            this.i = i;
        }
    }

    static final int RING = 256;
    static final Item[] ITEMS = new Item[RING];          // the last RING Items, alive
    static final byte[][] BYTES = new byte[RING][];      // the last RING byte[100], alive
    static final int SLEEPERS = 4;
    static final List<Thread> SLEEPING = new ArrayList<>();
    static int nextSlot;                                  // Worker.KEPT slots of Spawned threads

    private ExactWork() {
    }

    static void say(String line) {
        System.out.println(line);
        System.out.flush();
    }

    static void preload(String[] extra) throws ClassNotFoundException {
        String[] names = {
            "ExactWork$Item", "[LExactWork$Item;", "[B", "[[B",
            "exact.svc.Service", "exact.outer.Outer",
            "exact.plain.Caller", "exact.plain.Caller$AfterA", "exact.plain.Caller$AfterC",
            "exact.util.Helper", "exact.util.Helper$Scrap", "exact.util.Helper$AfterB",
            "exact.util.Helper$Boom", "java.lang.NullPointerException",
            "exact.threads.Worker", "exact.threads.Worker$Spark", "exact.threads.Worker$Ash",
            "exact.threads.Worker$Glow", "exact.threads.Worker$Ember",
            "exact.threads.Worker$Spawned", "exact.threads.Worker$Sleeper",
            "exact.ctx.Ctx", "exact.ctx.Ctx$Leaf", "exact.ctx.Ctx$Deep", "exact.ctx.Ctx$Far",
            "exact.ctx.Ctx$After", "exact.ctx.Ctx$Made", "exact.ctx.Ctx$Boom", "exact.ctx.Ctx$Impl",
        };
        ClassLoader loader = ExactWork.class.getClassLoader();
        for (String name : names) {
            Class.forName(name, true, loader);
        }
        for (int i = 1; i < extra.length; i++) {
            Class.forName(extra[i], true, loader);
        }
        // Loaded, not linked (command lazy): Broken cannot be (Broken$Gone deleted).
        for (String name : new String[] {"exact.lazy.Lazy", "exact.lazy.Lazy$Bit", "exact.lazy.Broken"}) {
            Class.forName(name, false, loader);
        }
        // Linked, not initialized (command table): its static initializer runs after the start.
        Class.forName("exact.lazy.Table", false, loader).getDeclaredConstructors();
    }

    static void rounds(int r) {
        for (int i = 0; i < r; i++) {
            Caller.call(3, 2);
            Outer.call(3, 2);
            Caller.callDeep(3, 2);
        }
    }

    static void spawn(int n, int m) throws InterruptedException {
        Thread[] t = new Thread[n];
        for (int i = 0; i < n; i++) {
            t[i] = new Worker.Spawned(m, nextSlot++);
            t[i].start();
        }
        for (int i = 0; i < n; i++) {
            t[i].join();
        }
        Worker.sink = null;
    }

    static void wake(int m) throws InterruptedException {
        Worker.wake(m);
        for (Thread t : SLEEPING) {
            t.join();
        }
        Worker.sink = null;
    }

    static void huge(String name) throws ReflectiveOperationException {
        Class<?> c = Class.forName(name, true, ExactWork.class.getClassLoader());
        ((Runnable) c.getDeclaredConstructor().newInstance()).run();
    }

    /** The commands other than loop and exit; false for an unknown one. */
    static boolean command(String[] w) throws Exception {
        String cmd = w[0];
        if (cmd.equals("throw") && w.length == 2) {
            rounds(Integer.parseInt(w[1]));
        } else if (cmd.equals("threads") && w.length == 3) {
            spawn(Integer.parseInt(w[1]), Integer.parseInt(w[2]));
        } else if (cmd.equals("wake") && w.length == 2) {
            wake(Integer.parseInt(w[1]));
        } else if (cmd.equals("huge") && w.length == 2) {
            huge(w[1]);
        } else if (cmd.equals("ctx") && w.length == 2) {
            exact.ctx.Ctx.run(Integer.parseInt(w[1]));
        } else if (cmd.equals("lazy") && w.length == 2) {
            exact.lazy.Lazy.make(Integer.parseInt(w[1]));
            try {
                Class.forName("exact.lazy.Broken", true, ExactWork.class.getClassLoader());
                throw new IllegalStateException("exact.lazy.Broken linked: Broken$Gone is there");
            } catch (NoClassDefFoundError expected) {
                // KNOWN FACTS: Broken cannot be linked.
            }
        } else if (cmd.equals("table") && w.length == 1) {
            exact.lazy.Table.touch();
        } else if (cmd.equals("load") && w.length == 2) {
            Class.forName(w[1], false, ExactWork.class.getClassLoader());
        } else if (cmd.equals("later") && w.length == 2) {
            exact.lazy.Later.make(Integer.parseInt(w[1]));
        } else if (cmd.equals("gc") && w.length == 1) {
            System.gc();
        } else {
            return false;
        }
        return true;
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 1 || !args[0].equals("wait")) {
            System.err.println("usage: ExactWork wait [CLASS...]");
            System.exit(2);
        }
        preload(args);
        for (int i = 0; i < SLEEPERS; i++) {
            Thread t = new Worker.Sleeper(Worker.KEPT.length - 1 - i);
            SLEEPING.add(t);
            t.start();
        }
        say("ready " + ProcessHandle.current().pid());
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String line;
        while ((line = in.readLine()) != null) {
            String[] w = line.trim().split("\\s+");
            if (w[0].equals("loop") && w.length == 2) {
                int n = Integer.parseInt(w[1]);
                // The loop of the KNOWN FACTS: in main's own body, two allocations an iteration.
                for (int i = 0; i < n; i++) {
                    Item it = new Item(i);                      // EXACT-SITE ExactWork$Item
                    byte[] b = new byte[100];                   // EXACT-SITE byte[]
                    ITEMS[i & (RING - 1)] = it;
                    BYTES[i & (RING - 1)] = b;
                }
                say("done loop");
            } else if (w[0].equals("exit") && w.length == 1) {
                break;
            } else if (w[0].isEmpty()) {
                continue;
            } else {
                try {
                    if (command(w)) {
                        say("done " + w[0]);
                    } else {
                        System.err.println("ExactWork: unknown command: " + line.trim());
                    }
                } catch (Exception | Error e) {
                    say("fail " + w[0] + " " + e);
                }
            }
        }
        System.exit(0);
    }
}
