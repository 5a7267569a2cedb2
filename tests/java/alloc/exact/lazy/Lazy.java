/*
 * Lazy - a class ExactWork loads before any recording starts but does not
 * link (Class.forName(name, false, loader)): an exact recording leaves it as
 * it is at its start and rewrites it when the JVM links it, before its code
 * first runs (issue 33; tests/t_alloc_exact.sh, part 7).
 *
 * KNOWN FACTS: make(n) allocates n Lazy$Bit (one int field: 16 bytes) and
 * one Lazy$Bit[n], and keeps them all (KEPT).
 */
package exact.lazy;

public final class Lazy {
    private Lazy() {
    }

    static final class Bit {
        final int v;

        Bit(int v) {
            this.v = v;
        }
    }

    public static Object kept;

    public static void make(int n) {
        Bit[] bits = new Bit[n];                // EXACT-SITE exact.lazy.Lazy$Bit[]
        for (int i = 0; i < n; i++) {
            bits[i] = new Bit(i);               // EXACT-SITE exact.lazy.Lazy$Bit
        }
        kept = bits;
    }
}
