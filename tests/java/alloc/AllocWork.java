/*
 * AllocWork - allocations known by construction, for heapsh's allocation
 * recordings and memory accounts (issue 13).
 *
 * Build (JDK 17 and JDK 25 both run the result):
 *   javac --release 11 -d build/java/alloc $(find tests/java/alloc -name '*.java')
 *
 * Usage:
 *   java -cp DIR AllocWork wait
 *       Load every class below (so that no class loading happens inside an
 *       accounted frame later), print "ready <pid>" on stdout, then read
 *       commands from stdin, one a line:
 *         run [N]  do all the allocations of one run (below) N times (default
 *                  1), then print "done run". Each repetition replaces what
 *                  the one before kept, so after `run N` the allocated counts
 *                  are N times those of one run and the live counts those of
 *                  one run (the rest is garbage until the next GC).
 *         drop     let go of everything still kept, print "done drop" (the
 *                  objects are garbage until the next GC).
 *         gc       System.gc(), print "done gc".
 *         kinds    com.acme.kinds.Kinds.make() (clone, reflection, lambdas,
 *                  multianewarray, Arrays.copyOf: see Kinds.java for what it
 *                  allocates), then Kinds.fail() caught here and
 *                  Pool.make(5) from this unaccounted frame; print "done
 *                  kinds". Kinds is loaded by this command, not before.
 *         warm     allocate 32 MB of garbage byte[1024] arrays in this
 *                  (unaccounted) frame, print "done warm": an exact
 *                  recording started in a running JVM records a thread from
 *                  its first sample on (docs/agent.md, "Limits"), and this
 *                  makes the main thread take it before a run.
 *         exit     exit 0 (so does end of file on stdin).
 *       Anything else: a line on stderr, and the next command is read.
 *   java -cp DIR AllocWork once
 *       Load the classes, do one run, print "done run", exit 0 (for an agent
 *       loaded at start-up with -agentpath:...=alloc=...).
 * Nothing else is printed and no thread of ours runs in the background.
 *
 * KNOWN FACTS (tests assert these; keep this list in sync with the code)
 *
 * Sizes are HotSpot's on 64-bit with compressed oops and compressed class
 * pointers (the default of JDK 17 and JDK 25 for heaps under 32 GB; not with
 * -XX:+UseCompactObjectHeaders): object header 12 bytes, array header 16,
 * 8-byte alignment. jcmd PID GC.class_histogram shows the same.
 *
 * One run allocates exactly these objects of these classes (per repetition of
 * `run N`); "live" is after the run and a GC, until the next run or drop:
 *
 *  class                      objects  each   bytes  live  allocated in (the frame that executes `new`)
 *  com.acme.web.Session          1000    24   24000  1000  WebHandler.handle
 *  com.acme.web.Session[]           1  4016    4016     1  WebHandler.handle     (length 1000)
 *  com.acme.web.Temp              500    16    8000     0  WebHandler.handle     (die: garbage once handle returns)
 *  com.acme.web.Temp[]              1  2016    2016     0  WebHandler.handle     (length 500; dies too)
 *  com.acme.util.Buffer           700    32   22400   700  Pool.make <- WebHandler.handle
 *  com.acme.util.Buffer[]           1  2816    2816     1  Pool.make <- WebHandler.handle  (length 700)
 *  com.acme.xml.Doc$Attr           40    16     640    40  Doc.build <- WebHandler.handle
 *  com.acme.xml.Doc$Attr[]          1   176     176     1  Doc.build <- WebHandler.handle  (length 40)
 *  com.acme.xml.parse.Node        300    40   12000   300  Parser.parse <- AllocWork.runOnce
 *  com.acme.xml.parse.Node[]        1  1216    1216     1  Parser.parse          (length 300)
 *  int[]                          100   168   16800   100  Parser.parse          (length 37 each: 3700 elements)
 *  int[][]                          1   416     416     1  Parser.parse          (length 100)
 *  java.lang.String[]              50    40    2000    50  Parser.parse          (length 5 each: 250 elements, all null)
 *  java.lang.String[][]             1   216     216     1  Parser.parse          (length 50)
 *  com.acme.util.Buffer           200    32    6400   200  Pool.make <- Parser.parse
 *  com.acme.util.Buffer[]           1   816     816     1  Pool.make <- Parser.parse   (length 200)
 *  AllocWork$Loose                250    16    4000   250  AllocWork.runOnce
 *  AllocWork$Loose[]                1  1016    1016     1  AllocWork.runOnce     (length 250)
 *
 * Totals of one run: com.acme.util.Buffer 900 objects (28800 bytes) and
 * Buffer[] 2 (3632 bytes) over both callers; all rows 3149 objects, 108 944
 * bytes allocated, 2648 objects and 98 928 bytes live. Every array of the
 * table is allocated by its own newarray/anewarray bytecode (no
 * multianewarray). Each allocation line ends in a comment "SITE <class>":
 * `grep -rnE ';[[:space:]]+// SITE ' tests/java/alloc` gives the file and line of
 * every allocation site of the table (the site is that method, file, line).
 *
 * Call stacks: AllocWork.main -> AllocWork.runOnce -> WebHandler.handle
 * [-> Pool.make | -> Doc.build], and AllocWork.runOnce -> Parser.parse
 * [-> Pool.make]. AllocWork and Loose are in the default package, Pool and
 * Buffer in com.acme.util (never accounted in these facts).
 *
 * Accounts (the rule of ASGMemProf, seed 001, section 4: an allocation is
 * charged to the account whose pattern matches the package of the NEAREST
 * frame on the stack that any pattern matches; `a.b` matches package a.b
 * only, `a.b.*` matches a.b and all its subpackages; no match on the whole
 * stack: (none)):
 *
 *  rows (class, allocated in)              A: com.acme.web,com.acme.xml.*   B: com.acme.web,com.acme.xml
 *  Session, Session[], Temp, Temp[]        com.acme.web                     com.acme.web
 *  Buffer, Buffer[] via WebHandler         com.acme.web (*)                 com.acme.web (*)
 *  Doc$Attr, Doc$Attr[]                    com.acme.xml.* (**)              com.acme.xml (**)
 *  Node, Node[], int[], int[][],
 *    String[], String[][]                  com.acme.xml.*                   (none)
 *  Buffer, Buffer[] via Parser             com.acme.xml.* (*)               (none)
 *  Loose, Loose[]                          (none)                           (none)
 *   (*)  Pool.make's package com.acme.util is not accounted: its caller's
 *        account pays, never com.acme.util, never (none).
 *   (**) Doc.build (com.acme.xml) is nearer than WebHandler.handle
 *        (com.acme.web), so the xml account pays, not com.acme.web.
 *
 * So per account under A: com.acme.web 2203 objects / 63 248 bytes allocated,
 * 1702 / 53 232 live (Session 1000, Session[] 1, Temp 500 live 0, Temp[] 1
 * live 0, Buffer 700, Buffer[] 1); com.acme.xml.* 695 objects / 40 680 bytes,
 * all live (Doc$Attr 40, Doc$Attr[] 1, Node 300, Node[] 1, int[] 100,
 * int[][] 1, String[] 50, String[][] 1, Buffer 200, Buffer[] 1).
 * Under B: com.acme.web the same as under A; com.acme.xml only Doc$Attr 40 and
 * Doc$Attr[] 1 (816 bytes); the Parser's rows go to (none).
 *
 * Other sets of accounts:
 *  - com.acme.web alone: Doc$Attr and Doc$Attr[] go to com.acme.web too (Doc
 *    is no longer accounted, WebHandler.handle is the nearest accounted frame).
 *  - com.acme.util: all 900 Buffers and both Buffer[] go to com.acme.util
 *    (Pool.make is itself the nearest accounted frame).
 *  - Two patterns matching the same package (com.acme.xml is matched by both
 *    com.acme.xml and com.acme.xml.*): the seed does not say which wins;
 *    heapsh's rule is THE MOST SPECIFIC (an exact package pattern before a
 *    .* one, a longer .* before a shorter, then the first listed). So with
 *    com.acme.xml,com.acme.xml.* in either order, Doc$Attr and Doc$Attr[]
 *    go to com.acme.xml and the Parser's rows to com.acme.xml.*. In both,
 *    WebHandler's rows (and its Buffers) go to (none).
 *
 * The account (none) also gets whatever the JDK allocates outside our frames
 * (reading stdin, printing, start-up with an agent loaded at start-up, other
 * JDK threads): for (none) compare only the AllocWork$Loose rows; in the
 * other accounts nothing but the rows above appears (no class loading, static
 * initializer, string constant, boxing or string concatenation runs in an
 * accounted frame; main loads every class, and the array classes, first).
 */
import com.acme.util.Buffer;
import com.acme.util.Pool;
import com.acme.web.WebHandler;
import com.acme.xml.Doc;
import com.acme.xml.parse.Parser;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;

public final class AllocWork {
    static final int N_LOOSE = 250;

    /** Allocated directly by AllocWork (default package): account (none). 16 bytes. */
    static final class Loose {
        int id;

        Loose(int id) {
            this.id = id;
        }
    }

    static Loose[] loose;            // kept until drop

    private AllocWork() {
    }

    /**
     * Loads and initializes every class that a run allocates or calls, and
     * the array classes, from this unaccounted frame: the first run then
     * loads nothing inside an accounted frame (the class loader's own
     * allocations would be charged to that account).
     */
    static void preload() throws ClassNotFoundException {
        String[] names = {
            "com.acme.web.WebHandler", "com.acme.web.Session", "com.acme.web.Temp",
            "com.acme.util.Pool", "com.acme.util.Buffer",
            "com.acme.xml.Doc", "com.acme.xml.Doc$Attr",
            "com.acme.xml.parse.Parser", "com.acme.xml.parse.Node",
            "AllocWork$Loose",
            "[Lcom.acme.web.Session;", "[Lcom.acme.web.Temp;", "[Lcom.acme.util.Buffer;",
            "[Lcom.acme.xml.Doc$Attr;", "[Lcom.acme.xml.parse.Node;",
            "[I", "[[I", "[Ljava.lang.String;", "[[Ljava.lang.String;",
            "[LAllocWork$Loose;",
        };
        ClassLoader loader = AllocWork.class.getClassLoader();
        for (String name : names) {
            Class.forName(name, true, loader);
        }
    }

    /** One run: the table of KNOWN FACTS. */
    static void runOnce() {
        WebHandler.handle();
        Parser.parse();
        Loose[] l = new Loose[N_LOOSE];                 // SITE AllocWork$Loose[]
        for (int i = 0; i < N_LOOSE; i++) {
            l[i] = new Loose(i);                        // SITE AllocWork$Loose
        }
        loose = l;
    }

    static Buffer[] afterOops;       // the (none) Buffers of `kinds`, kept

    /**
     * The `kinds` command: Kinds.make, then an exception out of an accounted
     * frame. Kinds's classes are loaded here, from this unaccounted frame.
     */
    static void kinds() {
        try {
            ClassLoader loader = AllocWork.class.getClassLoader();
            for (String c : new String[] {"", "$Plain", "$PlainBase", "$PlainChild", "$Deep",
                                          "$DeepChild", "$Made", "$Oops"}) {
                Class.forName("com.acme.kinds.Kinds" + c, true, loader);
            }
            com.acme.kinds.Kinds.make();
        } catch (ReflectiveOperationException | CloneNotSupportedException e) {
            throw new IllegalStateException(e);
        }
        try {
            com.acme.kinds.Kinds.fail();
        } catch (RuntimeException e) {
            afterOops = Pool.make(5);
        }
    }

    static void drop() {
        WebHandler.release();
        Doc.release();
        Parser.release();
        loose = null;
    }

    static void say(String line) {
        System.out.println(line);
        System.out.flush();
    }

    static void serve() throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String line;
        while ((line = in.readLine()) != null) {
            String[] words = line.trim().split("\\s+");
            String cmd = words[0];
            if (cmd.equals("run") && words.length <= 2) {
                int n = 1;
                if (words.length == 2) {
                    try {
                        n = Integer.parseInt(words[1]);
                    } catch (NumberFormatException e) {
                        n = -1;
                    }
                }
                if (n < 1) {
                    System.err.println("AllocWork: run N: N must be a positive integer");
                    continue;
                }
                for (int i = 0; i < n; i++) {
                    runOnce();
                }
                say("done run");
            } else if (cmd.equals("drop") && words.length == 1) {
                drop();
                say("done drop");
            } else if (cmd.equals("kinds") && words.length == 1) {
                kinds();
                say("done kinds");
            } else if (cmd.equals("warm") && words.length == 1) {
                byte[][] w = new byte[1024][];
                for (int i = 0; i < 32 * 1024; i++) {
                    w[i % 1024] = new byte[1024];
                }
                say("done warm");
            } else if (cmd.equals("gc") && words.length == 1) {
                System.gc();
                say("done gc");
            } else if (cmd.equals("exit") && words.length == 1) {
                return;
            } else if (!cmd.isEmpty()) {
                System.err.println("AllocWork: unknown command: " + line.trim()
                    + " (run [N], kinds, warm, drop, gc, exit)");
            }
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 1 && args[0].equals("wait")) {
            preload();
            say("ready " + ProcessHandle.current().pid());
            serve();
        } else if (args.length == 1 && args[0].equals("once")) {
            preload();
            runOnce();
            say("done run");
        } else {
            System.err.println("usage: AllocWork wait | AllocWork once");
            System.exit(2);
        }
        System.exit(0);
    }
}
