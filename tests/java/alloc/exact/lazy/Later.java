/*
 * Later - a class ExactWork loads while a recording runs but does not link
 * (command `load`): the recording rewrites it as it loads, and when the
 * recording stops the agent links it before it puts it back as it was
 * (tests/t_alloc_exact.sh, part 7; docs/agent.md).
 *
 * KNOWN FACTS: make(n) allocates n Later$Bit (16 bytes) and one
 * Later$Bit[n], and keeps them (KEPT).
 */
package exact.lazy;

public final class Later {
    private Later() {
    }

    static final class Bit {
        final int v;

        Bit(int v) {
            this.v = v;
        }
    }

    public static Object kept;

    public static void make(int n) {
        Bit[] bits = new Bit[n];                // EXACT-SITE exact.lazy.Later$Bit[]
        for (int i = 0; i < n; i++) {
            bits[i] = new Bit(i);               // EXACT-SITE exact.lazy.Later$Bit
        }
        kept = bits;
    }
}
