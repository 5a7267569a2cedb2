import java.util.ArrayList;
import java.util.List;

/*
 * JfrWork - allocations for JFR to record (tests/t_jfr.sh): for SECONDS
 * seconds, JfrWork.Block objects (24 bytes each, with compressed oops) and
 * long[] of 125 elements (1016 bytes) from the sites marked "// SITE", one
 * Block in 500 kept alive (for jdk.OldObjectSample). JFR samples them;
 * the test compares heapsh's reading with jfr print's.
 */
public class JfrWork {
    static final class Block {
        long id;
        Object next;
    }

    static final List<Block> KEPT = new ArrayList<>();

    static Object make(long i) {
        Block b = new Block(); // SITE JfrWork$Block
        b.id = i;
        b.next = new long[125]; // SITE long[]
        return b;
    }

    public static void main(String[] args) {
        long end = System.nanoTime() + Long.parseLong(args[0]) * 1_000_000_000L;
        long sum = 0;
        for (long i = 0; System.nanoTime() < end; i++) {
            Object o = make(i);
            if (i % 500 == 0 && KEPT.size() < 20000) {
                KEPT.add((Block) o);
            }
            sum += o.hashCode() & 1;
        }
        System.out.println("done " + sum + " " + KEPT.size());
    }
}
