package exact.threads;

import java.util.concurrent.CountDownLatch;

/**
 * Threads that allocate a known number of objects and die while a recording
 * runs (ExactWork's `threads` and `wake` commands). Every class here is 16
 * bytes (header 12, one reference). Each thread keeps its Sparks or Glows
 * alive through a slot of its own in KEPT; Ashes and Embers are garbage at
 * once (each stored in sink, which the caller clears once the threads have
 * ended, so that none is left alive).
 */
public final class Worker {
    public static final class Spark {
        final Spark next;

        Spark(Spark next) {
            this.next = next;
        }
    }

    public static final class Ash {
        final Ash next;

        Ash(Ash next) {
            this.next = next;
        }
    }

    public static final class Glow {
        final Glow next;

        Glow(Glow next) {
            this.next = next;
        }
    }

    public static final class Ember {
        final Ember next;

        Ember(Ember next) {
            this.next = next;
        }
    }

    /** The garbage objects pass through here, so that they are really allocated. */
    public static volatile Object sink;

    /** Slots of kept lists; made at start-up (before any recording). */
    public static final Object[] KEPT = new Object[1024];

    /**
     * A thread started mid-recording: its run() is new code from its first
     * frame on. Allocates m Sparks (kept in KEPT[slot]) and m Ashes
     * (garbage), then ends.
     */
    public static final class Spawned extends Thread {
        private final int m;
        private final int slot;

        public Spawned(int m, int slot) {
            this.m = m;
            this.slot = slot;
        }

        @Override
        public void run() {
            Spark s = null;
            for (int i = 0; i < m; i++) {
                s = new Spark(s);                       // EXACT-SITE exact.threads.Worker$Spark
                sink = new Ash(null);                   // EXACT-SITE exact.threads.Worker$Ash
            }
            KEPT[slot] = s;
        }
    }

    static final CountDownLatch WAKE = new CountDownLatch(1);
    static volatile int wakeCount;

    /**
     * A thread started before the recording, waiting in run() (old code
     * while the recording starts); woken, it calls burst (new code) and ends.
     */
    public static final class Sleeper extends Thread {
        private final int slot;

        public Sleeper(int slot) {
            this.slot = slot;
            setDaemon(true);
        }

        @Override
        public void run() {
            try {
                WAKE.await();
            } catch (InterruptedException e) {
                return;
            }
            burst(wakeCount, slot);
        }
    }

    private Worker() {
    }

    /** m Glows kept in KEPT[slot], m Embers garbage. */
    static void burst(int m, int slot) {
        Glow g = null;
        for (int i = 0; i < m; i++) {
            g = new Glow(g);                            // EXACT-SITE exact.threads.Worker$Glow
            sink = new Ember(null);                     // EXACT-SITE exact.threads.Worker$Ember
        }
        KEPT[slot] = g;
    }

    /** Lets every Sleeper go on, each allocating m Glows and m Embers. */
    public static void wake(int m) {
        wakeCount = m;
        WAKE.countDown();
    }
}
