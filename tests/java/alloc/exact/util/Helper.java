package exact.util;

/**
 * An unaccounted helper (package exact.util, never accounted) for
 * ExactWork's `throw` command: it allocates, then throws, from under an
 * accounted frame (exact.svc.Service). What it allocates is charged to
 * Service's account; the exception then leaves Service's frame, and what its
 * catcher allocates afterwards must not be (ExactWork's KNOWN FACTS, "throw").
 * No static initializer and no string constants: a call allocates only what
 * its comment says.
 */
public final class Helper {
    /** Kept (a list through next). 16 bytes: header 12, one reference. */
    public static final class Scrap {
        final Scrap next;

        Scrap(Scrap next) {
            this.next = next;
        }
    }

    /** Kept. 16 bytes. Allocated by makeAfterB for exact.outer.Outer's catch. */
    public static final class AfterB {
        final AfterB next;

        AfterB(AfterB next) {
            this.next = next;
        }
    }

    /** Thrown by allocThenThrow; no stack trace, no suppression: 40 bytes. */
    public static final class Boom extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Boom() {
            super(null, null, false, false);
        }
    }

    public static Scrap scraps;     // every Scrap made, kept
    public static AfterB afterB;    // every AfterB made, kept
    static Object nothing;          // always null: allocThenNpe's NullPointerException

    private Helper() {
    }

    /** Allocates n Scraps and one Boom, and throws the Boom. */
    public static void allocThenThrow(int n) {
        for (int i = 0; i < n; i++) {
            scraps = new Scrap(scraps);                 // EXACT-SITE exact.util.Helper$Scrap
        }
        throw new Boom();                               // EXACT-SITE exact.util.Helper$Boom
    }

    /**
     * Allocates n Scraps, then dereferences null: the JVM throws the
     * NullPointerException (an object it makes itself, not counted).
     */
    public static int allocThenNpe(int n) {
        for (int i = 0; i < n; i++) {
            scraps = new Scrap(scraps);                 // EXACT-SITE exact.util.Helper$Scrap
        }
        return nothing.hashCode();
    }

    /** Allocates m AfterBs (for whoever calls it: the slot's account pays). */
    public static void makeAfterB(int m) {
        for (int i = 0; i < m; i++) {
            afterB = new AfterB(afterB);                // EXACT-SITE exact.util.Helper$AfterB
        }
    }
}
