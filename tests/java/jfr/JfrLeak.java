import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

/*
 * JfrLeak - three leaks grown in running loops for JFR's old object samples
 * (tests/t_jfr.sh, :alloc leaks): for SECONDS seconds, each round adds
 * - a JfrLeak$Entry (holding a byte[2000]) to the static map CACHE,
 * - a JfrLeak$Listener (holding a byte[1000]) to the static list LISTENERS,
 * - a byte[1000] to a list in a ThreadLocal of the thread "leak-holder",
 *   which stays alive, parked,
 * each up to 15,000 (30, 15 and 15 MB), and makes garbage as it goes.
 * With "wait" for SECONDS (heapsh's :alloc leaks in the running JVM,
 * tests/t_alloc.sh): it prints "ready PID", grows about one round every 4
 * ms (about 1 MB a second) up to 100,000 rounds, so that it still grows
 * however slowly the test runs, and runs until its stdin ends.
 * KNOWN FACTS, the paths from their GC roots:
 *   class JfrLeak.CACHE -> java.util.HashMap.table -> java.util.HashMap$Node[]
 *     -> java.util.HashMap$Node.value -> JfrLeak$Entry.data -> byte[]
 *   class JfrLeak.LISTENERS -> java.util.ArrayList.elementData
 *     -> java.lang.Object[] -> JfrLeak$Listener.buffer -> byte[]
 *   ... java.lang.ThreadLocal$ThreadLocalMap$Entry.value
 *     -> java.util.ArrayList.elementData -> java.lang.Object[] -> byte[]
 */
public class JfrLeak {
    static final class Entry {
        final byte[] data = new byte[2000];
    }

    static final class Listener {
        final byte[] buffer = new byte[1000];
    }

    static final Map<Integer, Entry> CACHE = new HashMap<>();
    static final List<Listener> LISTENERS = new ArrayList<>();
    static final ThreadLocal<List<byte[]>> LOCAL = ThreadLocal.withInitial(ArrayList::new);
    static final int MAX = 15_000;
    static int max = MAX;	/* wait: 100,000, not reached in the minutes a test runs */
    static int sleepMs = 1;	/* wait: 4, about 250 rounds a second */
    static volatile Object sink;

    public static void main(String[] args) throws Exception {
        boolean wait = args[0].equals("wait");
        long end = wait ? Long.MAX_VALUE : System.nanoTime() + Long.parseLong(args[0]) * 1_000_000_000L;
        int every = wait ? 1 : 200;
        if (wait) {
            max = 100_000;
            sleepMs = 4;
        }
        if (wait) {
            Thread reader = new Thread(() -> {
                try {
                    while (System.in.read() >= 0) {
                        // until the end of stdin
                    }
                } catch (java.io.IOException e) {
                    // exit
                }
                System.exit(0);
            }, "stdin");
            reader.setDaemon(true);
            reader.start();
            System.out.println("ready " + ProcessHandle.current().pid());
            System.out.flush();
        }
        CountDownLatch done = new CountDownLatch(1);
        CountDownLatch holderDone = new CountDownLatch(1);
        Thread holder = new Thread(() -> {
            for (int i = 0; System.nanoTime() < end; i++) {
                growLocal();
                sink = new byte[1000];
                if (i % every == 0) {
                    pause();
                }
            }
            holderDone.countDown();
            try {
                done.await();
            } catch (InterruptedException e) {
                // exit
            }
        }, "leak-holder");
        holder.setDaemon(true);
        holder.start();
        for (int i = 0; System.nanoTime() < end; i++) {
            if (CACHE.size() < max) {
                CACHE.put(i, new Entry());
                LISTENERS.add(new Listener());
            }
            sink = new byte[2000];
            if (i % every == 0) {
                pause();
            }
        }
        holderDone.await();
        System.out.println("done " + CACHE.size() + " " + LISTENERS.size());
    }

    /* growLocal: one more byte[] in this thread's list, held by nothing but the ThreadLocal. */
    static void growLocal() {
        List<byte[]> mine = LOCAL.get();
        if (mine.size() < max) {
            mine.add(new byte[1000]);
        }
    }

    static void pause() {
        try {
            Thread.sleep(sleepMs);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
