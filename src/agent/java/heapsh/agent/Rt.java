/*
 * Rt - what instrumented code calls in an exact allocation recording made by
 * bytecode instrumentation (docs/agent.md, "Allocation recordings"; src/agent/
 * instrument.c defines this class in the bootstrap class loader, so that code
 * of every class loader and module can call it, and src/agent/sites.c binds
 * its natives and sets its static fields).
 *
 * Counting. The allocation sites the transformer (Instrument.java) found
 * call count / array just after the object exists. The counters are kept
 * here, in Java, per thread: a long[] of three counters (objects, bytes,
 * array elements) per (site, account), indexed by the site's number and the
 * account, incremented without a lock, a native call or a stack walk
 * (seed 004, JP: counters in bytecode, per thread; seed 002, DuckTracks:
 * counters per site). Only the first object of a (site, account) on a
 * thread, a counter array too small, or a site of another recording go
 * through the native method first(), which makes the site's key, learns its
 * objects' size and grows the array. The agent adds up every thread's
 * counters when it reads the recording (sites.c, fold).
 *
 * Live objects. Counted objects are followed (not with --live none) by a
 * small buffer of the thread's own: when it is full, one native call
 * (flush) turns the whole batch into JNI weak references, and a read drains
 * every buffer before its full GC; one JNI transition per batch instead of
 * one per object. By default (--live sampled) the first FIRST objects of a
 * (site, account) on a thread are followed, then one in 64 at random, each
 * standing for 64: a weak reference per object is what made following every
 * one (--live all) cost several times the program's CPU on allocation-heavy
 * servers (docs/performance.md).
 *
 * Accounts. Each thread has a slot with its current memory account, the
 * account of the nearest accounted frame, which pays for what unaccounted
 * code allocates (ASGMemProf's thread-local current account, seed 001,
 * sections 4 and 5): methods of accounted classes set it on entry and
 * restore it on every way out.
 *
 * A thread's state is a pair {thread, int[1] account slot, counters} (the
 * value of SLOTS); counters is {int[] {generation, buffered, misses of `last`,
 * random state}, long[] counts,
 * Object[] buffer, int[] buffered keys and sizes, WeakReference to the
 * thread}, and the registry ALL holds every thread's counters (not the
 * thread) so that they outlive it until the agent folds them.
 *
 * This class is compiled apart from the transformer and must stay small and
 * self-contained: it is never instrumented itself, allocates only its
 * per-thread state, and uses no lambda, string concatenation or other class
 * of its own, since anything it loaded would be loaded by the bootstrap
 * class loader for good.
 */
package heapsh.agent;

import java.lang.ref.WeakReference;
import java.lang.reflect.Array;

public final class Rt extends ThreadLocal<Object[]> {
    private static final Rt SLOTS = new Rt();

    /*
     * The last thread to look its state up, and the state: a thread's own
     * pair (the value of SLOTS). A thread that finds itself here needs no
     * ThreadLocal lookup (a single-threaded program always does); another
     * one looks up its own pair and puts it here.
     */
    private static Object[] last = {null, null, null};

    /* Objects buffered per thread before one native call follows them all. */
    private static final int BUF = 256;

    /*
     * A sampled follow (live 1, the default): the first FIRST objects of a
     * (site, account) on a thread, then each with probability 1/64 (the low
     * six bits of a per-thread xorshift), standing for 64 (src/agent/
     * recorder.h, LIVE_FIRST and LIVE_RATE).
     */
    private static final int FIRST = 256;
    private static final int SAMPLED = 0x80000000;

    /*
     * Set by the agent (sites.c). gen: the recording's generation when the
     * counting is done here (an exact recording of sites, --depth 1), 0
     * when every allocation goes to the natives. accounts: account patterns
     * plus one. live: counted objects are followed. base, shift, align: how
     * big the VM makes an array of each element kind (Instrument.java's
     * numbers): align(base + length << shift).
     */
    static volatile int gen;
    static int accounts = 1;
    static int live;    /* 0: none followed, 1: a sample (FIRST, then one in RATE), 2: every one */
    static final int[] BASE = new int[9];
    static final int[] SHIFT = new int[9];
    static long align = 8;

    /*
     * Per site whose class is the object's (its number's low 24 bits): up
     * to four pairs {Class, int[] {a site of that class, its element kind,
     * -1 not an array, -2 not counted here}}, put here by the agent once it
     * has seen the class there (sites.c, cache).
     */
    static volatile Object[] dyn = new Object[0];

    /* Every thread's counters, for the agent; guarded by Rt.class. */
    static Object[] all = new Object[16];
    static int nall;

    private Rt() {
    }

    @Override
    protected Object[] initialValue() {
        Thread t = Thread.currentThread();
        return new Object[] {t, new int[1], counters(t)};
    }

    /* counters: a thread's counters of the current recording, registered. */
    private static Object[] counters(Thread t) {
        boolean follow = live != 0;
        Object[] c = {new int[] {gen, 0, 0, System.identityHashCode(t) | 1}, new long[0], follow ? new Object[BUF] : null,
                      follow ? new int[2 * BUF] : null, new WeakReference<Thread>(t)};
        synchronized (Rt.class) {
            if (nall == all.length) {
                Object[] a = new Object[2 * nall];
                System.arraycopy(all, 0, a, 0, nall);
                all = a;
            }
            all[nall++] = c;
        }
        return c;
    }

    /*
     * mine: this thread's pair. A thread that misses `last` takes it only
     * every 64th time, so that threads taking turns (a server's workers)
     * do not write one shared field at every allocation, while a thread
     * that allocates alone soon finds itself there.
     */
    private static Object[] mine() {
        Object[] p = last;
        if (p[0] != Thread.currentThread()) {
            p = SLOTS.get();
            int[] m = (int[]) ((Object[]) p[2])[0];
            if ((++m[2] & 63) == 0) {
                last = p;
            }
        }
        return p;
    }

    /** This thread's account slot. */
    public static int[] slot() {
        return (int[]) mine()[1];
    }

    /** A new object of a site whose class is known (new C), charged to account (0: none). */
    public static void count(Object o, int site, int account) {
        Object[] p = mine();
        Object[] c = (Object[]) p[2];
        int[] m = (int[]) c[0];
        long[] n = (long[]) c[1];
        int i = ((site & 0xffffff) * accounts + account) * 3;
        if (m[0] != site >>> 24 || i < 0 || i + 2 >= n.length || n[i] == 0) {
            slow(o, site, account, -1, p);
            return;
        }
        long k = ++n[i];
        if (c[2] != null) {
            if (k <= FIRST || live == 2) {
                follow(c, m, o, i, 0);
            } else if (pick(m)) {
                follow(c, m, o, i, SAMPLED);
            }
        }
    }

    /* pick: one time in 64, at random (xorshift32 in m[3]). */
    private static boolean pick(int[] m) {
        int x = m[3];
        x ^= x << 13;
        x ^= x >>> 17;
        x ^= x << 5;
        m[3] = x;
        return (x & 63) == 0;
    }

    /** The same in unaccounted code: the nearest accounted frame pays. */
    public static void countHere(Object o, int site) {
        count(o, site, ((int[]) mine()[1])[0]);
    }

    /** A new array of len elements of kind elem (newarray, anewarray), charged to account. */
    public static void array(Object a, int len, int site, int account, int elem) {
        Object[] p = mine();
        Object[] c = (Object[]) p[2];
        int[] m = (int[]) c[0];
        long[] n = (long[]) c[1];
        int i = ((site & 0xffffff) * accounts + account) * 3;
        if (m[0] != site >>> 24 || i < 0 || i + 2 >= n.length || n[i] == 0) {
            slow(a, site, account, len, p);
            return;
        }
        long bytes = (BASE[elem] + ((long) len << SHIFT[elem]) + align - 1) & -align;
        long k = ++n[i];
        n[i + 1] += bytes;
        n[i + 2] += len;
        if (c[2] != null) {
            int words = (int) Math.min(bytes >>> 3, Integer.MAX_VALUE >>> 1);
            if (k <= FIRST || live == 2) {
                follow(c, m, a, i, words);
            } else if (pick(m)) {
                follow(c, m, a, i, words | SAMPLED);
            }
        }
    }

    /** The same in unaccounted code. */
    public static void arrayHere(Object a, int len, int site, int elem) {
        array(a, len, site, ((int[]) mine()[1])[0], elem);
    }

    /* slow: the first object of its key on this thread, or counters of an earlier recording. */
    private static void slow(Object o, int site, int account, int len, Object[] p) {
        Object[] c = (Object[]) p[2];
        int g = gen;
        if (g != 0 && ((int[]) c[0])[0] != g) {
            c = counters((Thread) p[0]);
            p[2] = c;
        }
        first(o, site, account, len, c);
    }

    /*
     * follow: o (counter index i; its size in words, 0: the site's size,
     * with SAMPLED when it stands for 64) into the buffer; a full one is
     * flushed.
     */
    private static void follow(Object[] c, int[] m, Object o, int i, int words) {
        Object[] buf = (Object[]) c[2];
        int k = m[1];
        if (k >= buf.length) {
            flush(c);
            k = m[1];
            if (k >= buf.length) {
                return;
            }
        }
        buf[k] = o;
        int[] keys = (int[]) c[3];
        keys[2 * k] = i;
        keys[2 * k + 1] = words;
        m[1] = k + 1;
    }

    /*
     * first: the agent counts o (len: its length, -1 for an object) at site
     * for account, makes the key and the room in the counters c, and sets
     * the counters so that the next objects of the key are counted here.
     */
    private static native void first(Object o, int site, int account, int len, Object[] c);

    /* flush: the agent follows the buffered objects of c and empties the buffer. */
    private static native void flush(Object[] c);

    /** An allocation at site, charged to account (0: none): counted by the agent. */
    public static native void record(Object o, int site, int account);

    /** An allocation in unaccounted code, counted by the agent. */
    public static void allocated(Object o, int site) {
        record(o, site, ((int[]) mine()[1])[0]);
    }

    /** The same at a site whose class is the object's (clone, reflection). */
    public static void dynamic(Object o, int site, int account) {
        Class<?> c = o.getClass();
        Object[] d = dyn;
        int s = site & 0xffffff;
        if (s < d.length && site >>> 24 == gen) {
            Object[] e = (Object[]) d[s];
            for (int j = 0; e != null && j + 1 < e.length; j += 2) {
                if (e[j] == c) {
                    int[] v = (int[]) e[j + 1];
                    if (v[1] == -1) {
                        count(o, v[0], account);
                    } else if (v[1] >= 0) {
                        array(o, Array.getLength(o), v[0], account, v[1]);
                    }
                    return;
                }
            }
        }
        recordClass(o, site, account, c, System.identityHashCode(c));
    }

    /** The same in unaccounted code. */
    public static void allocatedDynamic(Object o, int site) {
        dynamic(o, site, ((int[]) mine()[1])[0]);
    }

    /* An allocation of class c (its identity hash: hash) at a site whose class is the object's. */
    private static native void recordClass(Object o, int site, int account, Class<?> c, int hash);

    /**
     * A new object of a known class in the classes that mine() itself runs
     * (ThreadLocal's): counted here when this thread's state is the last
     * one looked up (so this is not mine() making it), by the agent's stack
     * walk otherwise.
     */
    public static void countWalking(Object o, int site) {
        Object[] p = last;
        if (p[0] == Thread.currentThread()) {
            count(o, site, ((int[]) p[1])[0]);
        } else {
            recordWalking(o, site);
        }
    }

    /** The same for an array. */
    public static void arrayWalking(Object a, int len, int site, int elem) {
        Object[] p = last;
        if (p[0] == Thread.currentThread()) {
            array(a, len, site, ((int[]) p[1])[0], elem);
        } else {
            recordWalking(a, site);
        }
    }

    /**
     * An allocation whose account the agent finds by walking the stack: in
     * the classes that slot() itself runs (ThreadLocal's), where calling
     * slot() or allocated() could recurse.
     */
    public static native void recordWalking(Object o, int site);
}
