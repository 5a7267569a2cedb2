/*
 * ReportHeap - a small heap whose texts are hostile to HTML and whose waste
 * is known by construction, for :duplicates, :collections and the HTML
 * report (tests/t_waste.sh, tests/t_report.sh).
 *
 * Usage:
 *   java -cp DIR ReportHeap dump OUT.hprof
 *       Build the heap, dump it with HotSpotDiagnosticMXBean.dumpHeap(OUT,
 *       true) (live objects only), exit 0.
 *
 * KNOWN FACTS (tests assert these; keep in sync with the code):
 *  - HOSTILE = <script>alert('heapsh')</script> & "quoted" <b>bold</b>
 *    (55 characters, all ASCII), built at run time (no literal of it is in
 *    the class file): static String[] ReportHeap.COPIES holds exactly 50
 *    String objects with that text, each with its own byte[]; no other
 *    String has it.
 *  - static String[] ReportHeap.EDGES holds two copies (each with its own
 *    byte[]) of each of EDGE_TEXTS: control characters, U+0000, Latin-1
 *    and CJK characters, a surrogate pair, lone surrogates, and texts over
 *    40 characters of 2-byte characters and with a lone surrogate (texts
 *    that are not strict UTF-8 once decoded). With EDGE_TEXTS's own, three
 *    Strings hold each of these texts, wasting less than HOSTILE's copies.
 *  - Thread "<img src=x onerror=alert(1)> & worker" (a daemon thread of
 *    class ReportHeap$Hoarder, which extends Thread) keeps in its field
 *    `hoard` an ArrayList of HOARD = 3000 byte[1024] (about 3 MB, the
 *    largest part of this heap), then parks forever; it is held by the
 *    static ReportHeap.HOARDER as well as by its thread root.
 *  - ReportHeap$Bag extends ArrayList: static ReportHeap.BAGS holds 50:
 *    30 made with new Bag() and left empty (their elementData is the JDK's
 *    shared empty array: 0 slots, and it wastes nothing), 20 made with
 *    new Bag(100) holding one element (99 unused slots each).
 *  - ReportHeap$Index extends HashMap: static ReportHeap.INDEXES holds 15:
 *    5 made with new Index() and left empty (no table yet), 10 made with
 *    new Index(64) holding one entry (a table of 64 slots: 63 unused).
 */
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.locks.LockSupport;

public final class ReportHeap {
    static final int COPIES_N = 50;
    static final int HOARD = 3000;

    static final class Bag extends ArrayList<Object> {
        Bag() {
        }

        Bag(int capacity) {
            super(capacity);
        }
    }

    static final class Index extends HashMap<String, Object> {
        Index() {
        }

        Index(int capacity) {
            super(capacity);
        }
    }

    static final class Hoarder extends Thread {
        final List<byte[]> hoard = new ArrayList<>();
        final CountDownLatch filled;

        Hoarder(String name, CountDownLatch filled) {
            super(name);
            this.filled = filled;
        }

        @Override
        public void run() {
            for (int k = 0; k < HOARD; k++) {
                hoard.add(new byte[1024]);
            }
            filled.countDown();
            while (true) {
                LockSupport.park();
            }
        }
    }

    static String[] COPIES;
    static final String[] EDGE_TEXTS = {
        "line\nbreak\ttab\rret\u0001ctl\u007fdel",
        "nul\u0000inside",
        "caf\u00e9 \u65e5\u672c\u8a9e",
        "emoji \uD83D\uDE00 pair",
        "lone \uD800 surrogate \uDC00",
        "\u00e9".repeat(45),
        "\uD800" + "x".repeat(50),
    };
    static String[] EDGES;
    static Hoarder HOARDER;
    static final Bag[] BAGS = new Bag[50];
    static final Index[] INDEXES = new Index[15];

    private ReportHeap() {
    }

    /* The hostile text from its parts, so that javac folds no literal of it. */
    static String hostile() {
        StringBuilder b = new StringBuilder();
        b.append("<script>alert('heapsh')</script>").append(' ').append('&').append(' ');
        b.append('"').append("quoted").append('"').append(" <b>bold</b>");
        return b.toString();
    }

    static void build() throws InterruptedException {
        char[] text = hostile().toCharArray();
        COPIES = new String[COPIES_N];
        for (int k = 0; k < COPIES_N; k++) {
            COPIES[k] = new String(text);
        }
        EDGES = new String[2 * EDGE_TEXTS.length];
        for (int k = 0; k < EDGES.length; k++) {
            EDGES[k] = new String(EDGE_TEXTS[k / 2].toCharArray());
        }
        for (int k = 0; k < BAGS.length; k++) {
            if (k < 30) {
                BAGS[k] = new Bag();
            } else {
                BAGS[k] = new Bag(100);
                BAGS[k].add(Integer.valueOf(k));
            }
        }
        for (int k = 0; k < INDEXES.length; k++) {
            if (k < 5) {
                INDEXES[k] = new Index();
            } else {
                INDEXES[k] = new Index(64);
                INDEXES[k].put("k", Integer.valueOf(k));
            }
        }
        CountDownLatch filled = new CountDownLatch(1);
        HOARDER = new Hoarder("<img src=x onerror=alert(1)> & worker", filled);
        HOARDER.setDaemon(true);
        HOARDER.start();
        filled.await();
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2 || !args[0].equals("dump")) {
            System.err.println("usage: ReportHeap dump OUT.hprof");
            System.exit(2);
        }
        build();
        java.io.File file = new java.io.File(args[1]);
        file.delete();
        com.sun.management.HotSpotDiagnosticMXBean bean =
            ManagementFactory.getPlatformMXBean(com.sun.management.HotSpotDiagnosticMXBean.class);
        bean.dumpHeap(file.getPath(), true);
        System.exit(0);
    }
}
