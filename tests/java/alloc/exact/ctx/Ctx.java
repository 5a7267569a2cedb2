/*
 * Ctx - calling contexts known by construction, for exact recordings with
 * --depth N (issue 33: "exact calling contexts (JP's MCT, --depth N)";
 * tests/t_alloc_exact.sh, part 6). ExactWork's command `ctx R` calls run(R).
 *
 * Call lines end in a comment "CTX-CALL <name>", allocation sites in
 * "CTX-SITE <class>"; the test finds the lines by these. Every object here
 * has one int field: 16 bytes (HotSpot, 64-bit, compressed class pointers).
 *
 * KNOWN FACTS (with --depth 3: a site and its two nearest callers; R rounds)
 *
 *   context (outermost first)                  class           objects
 *   run[a]      > a[leaf]     > leaf           Ctx$Leaf        R
 *   run[b]      > b[leaf]     > leaf           Ctx$Leaf        2R  (two calls on one line)
 *   c[mid]      > mid[leaf]   > leaf           Ctx$Leaf        3R  (three calls on one line)
 *   command     > run[b]      > b              int[]           R   (int[4], 32 bytes; command:
 *                                                                 ExactWork's, calling run)
 *   rec[rec]    > rec[rec]    > rec            Ctx$Deep        R   (rec(12): 13 frames deep)
 *   far[far]    > far[far]    > far            Ctx$Far         R   (far(2000): past the 1024
 *                                                                 frames a thread keeps)
 *   boom[boom]  > boom[boom]  > boom           Ctx$Boom        R   (thrown through 6 frames)
 *   run[catcher]> catcher[after] > after      Ctx$After       R   (after the catch: the
 *                                                                 thrown frames are gone)
 *   run[viaItf] > viaItf[make] > Impl.make     Ctx$Made        R   (an interface call)
 *
 * run[x] is run's frame at the line that calls x. Nothing else here
 * allocates.
 */
package exact.ctx;

public final class Ctx {
    public static final class Leaf {
        final int v;

        Leaf(int v) {
            this.v = v;
        }
    }

    public static final class Deep {
        final int v;

        Deep(int v) {
            this.v = v;
        }
    }

    public static final class Far {
        final int v;

        Far(int v) {
            this.v = v;
        }
    }

    public static final class After {
        final int v;

        After(int v) {
            this.v = v;
        }
    }

    public static final class Made {
        final int v;

        Made(int v) {
            this.v = v;
        }
    }

    /** Thrown without a stack trace: 16 bytes of its own are not guaranteed, so it is counted, not sized. */
    public static final class Boom extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Boom() {
            super(null, null, false, false);
        }
    }

    public interface Maker {
        Object make(int v);
    }

    static final class Impl implements Maker {
        @Override
        public Object make(int v) {
            return new Made(v);                         // CTX-SITE Made
        }
    }

    static Object sink;
    static final Maker MAKER = new Impl();

    private Ctx() {
    }

    static void leaf(int v) {
        sink = new Leaf(v);                             // CTX-SITE Leaf
    }

    static void a(int v) {
        leaf(v);                                        // CTX-CALL a-leaf
    }

    static void b(int v) {
        leaf(v); leaf(v);                               // CTX-CALL b-leaf
        sink = new int[4];                              // CTX-SITE int[]
    }

    static void mid(int v) {
        leaf(v);                                        // CTX-CALL mid-leaf
    }

    static void c(int v) {
        mid(v); mid(v); mid(v);                         // CTX-CALL c-mid
    }

    static void rec(int n) {
        if (n == 0) {
            sink = new Deep(n);                         // CTX-SITE Deep
            return;
        }
        rec(n - 1);                                     // CTX-CALL rec-rec
    }

    static void far(int n) {
        if (n == 0) {
            sink = new Far(n);                          // CTX-SITE Far
            return;
        }
        far(n - 1);                                     // CTX-CALL far-far
    }

    static void boom(int n) {
        if (n == 0) {
            throw new Boom();                           // CTX-SITE Boom
        }
        boom(n - 1);                                    // CTX-CALL boom-boom
    }

    static void after(int v) {
        sink = new After(v);                            // CTX-SITE After
    }

    static void catcher(int v) {
        try {
            boom(5);                                    // CTX-CALL catcher-boom
        } catch (Boom e) {
            after(v);                                   // CTX-CALL catcher-after
        }
    }

    static void viaItf(int v) {
        sink = MAKER.make(v);                           // CTX-CALL viaItf-make
    }

    /** R rounds of every context above. */
    public static void run(int r) {
        for (int i = 0; i < r; i++) {
            a(i);                                       // CTX-CALL run-a
            b(i);                                       // CTX-CALL run-b
            c(i);                                       // CTX-CALL run-c
            rec(12);                                    // CTX-CALL run-rec
            far(2000);                                  // CTX-CALL run-far
            catcher(i);                                 // CTX-CALL run-catcher
            viaItf(i);                                  // CTX-CALL run-viaItf
        }
        sink = null;
    }
}
