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
 * Calling contexts (--depth N above 1). Every instrumented method that
 * calls something keeps its frame on the thread's stack of frames (enter();
 * seed 004's method call tree, kept per thread as JP does, without a native
 * call or a stack walk): on entry it pushes its method's number, before
 * each call it stores the call's line in its frame, and on every way out it
 * puts the depth back. A frame below an allocation also holds a hash of its
 * N - 1 nearest callers (method and line), rolled on from its caller's in
 * O(1) when first needed (callers(); a polynomial rolling hash, Karp and
 * Rabin), so that an allocation finds
 * its (site, account, calling context) counter in a table of the thread's
 * own by one 64-bit key (ctxCount, ctxArray). The first object of a key on
 * a thread goes to the agent (firstCtx), which reads the frames and makes
 * the key. Two contexts with one 64-bit key would share a counter: with
 * 2^20 contexts that happens with probability below 2^-23.
 *
 * The transformer's own allocations. Instrument.transform runs inside the
 * class-file hook, on the thread that loads the class, through rewritten
 * code of the JDK: it pauses the thread's counting (pause()) meanwhile, so
 * that what the agent allocates is never counted as the program's.
 *
 * A thread's state is {thread, int[2] {account slot, paused}, counters, long[] stack
 * of frames or null, Object[] the last answers of seed() or null} (the value of SLOTS); counters is {int[] {generation,
 * buffered, misses of `last`, random state, contexts in the table}, long[]
 * counts, Object[] buffer, int[] buffered keys and sizes, WeakReference to
 * the thread, and for calling contexts long[] table of keys, int[] their
 * counter indexes, int[] the agent's key and site per counter (sites.c)},
 * and the registry ALL
 * holds every thread's counters (not the thread) so that they outlive it
 * until the agent folds them.
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
    private static Object[] last = {null, null, null, null, null};

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
     * Per site whose class is the object's (its number's low 24 bits): a
     * table of pairs {Class, int[] {a site of that class, its element kind,
     * -1 not an array, -2 not counted here; the class's identity hash}}, by
     * identity hash (open addressing), put here by the agent once it has
     * seen the class there (sites.c, cache).
     */
    static volatile Object[] dyn = new Object[0];

    /*
     * Calling contexts, set by the agent: cgen, the recording's generation
     * when contexts are counted here (--depth above 1), else 0; depth, N;
     * pn, P^(N-1) (sites.c computes it with the same P). A thread's counters
     * of contexts carry CTX in their generation, so that count() and array()
     * never take them for counters of sites.
     */
    static volatile int cgen;
    /*
     * Set by the agent when its recording ends (until the next begins):
     * rewritten code still running then (until the classes are put back)
     * asks the agent nothing.
     */
    static volatile int off;
    static int depth = 1;
    static long pn;
    private static final long P = 0x9E3779B97F4A7C15L;
    private static final int CTX = 0x40000000;
    /*
     * Contexts a thread's table holds (its counter 0, of no key, counts the
     * rest as dropped): 2^18, a table of 6 MB at most.
     */
    private static final int MAX_CONTEXTS = 1 << 18;
    /* Frames kept per thread; a deeper one shares the deepest kept. */
    private static final int CAP = 1024;

    /* Every thread's counters, for the agent; guarded by Rt.class. */
    static Object[] all = new Object[16];
    static int nall;

    private Rt() {
    }

    @Override
    protected Object[] initialValue() {
        Thread t = Thread.currentThread();
        return new Object[] {t, new int[2], counters(t), null, null};
    }

    /* counters: a thread's counters of the current recording, registered. */
    private static Object[] counters(Thread t) {
        boolean follow = live != 0;
        int g = gen != 0 ? gen : cgen != 0 ? cgen | CTX : 0;
        Object[] c = {new int[] {g, 0, 0, System.identityHashCode(t) | 1, 0}, new long[0], follow ? new Object[BUF] : null,
                      follow ? new int[2 * BUF] : null, new WeakReference<Thread>(t), null, null, null};
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

    /** The transformer begins (1) or ends (-1) its work on this thread: nothing it allocates is counted. */
    public static void pause(int d) {
        ((int[]) mine()[1])[1] += d;
    }

    /** This thread's account slot. */
    public static int[] slot() {
        return (int[]) mine()[1];
    }

    /** A new object of a site whose class is known (new C), charged to account (0: none). */
    public static void count(Object o, int site, int account) {
        Object[] p = mine();
        if (((int[]) p[1])[1] != 0) {
            return;
        }
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
        if (((int[]) p[1])[1] != 0) {
            return;
        }
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
        if (off != 0) {
            return;
        }
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
        int[] v = cached(site, gen, c);
        if (v == null) {
            recordClass(o, site, account, c, System.identityHashCode(c));
        } else if (v[1] == -1) {
            count(o, v[0], account);
        } else if (v[1] >= 0) {
            array(o, Array.getLength(o), v[0], account, v[1]);
        }
    }

    /*
     * cached: what the agent put in dyn for class c at site (of recording
     * g): {a site of c's own, its element kind or -1 not an array, -2 not
     * counted here; c's identity hash}, or null: not there (yet).
     */
    private static int[] cached(int site, int g, Class<?> c) {
        Object[] d = dyn;
        int s = site & 0xffffff;
        if (s >= d.length || site >>> 24 != g) {
            return null;
        }
        Object[] e = (Object[]) d[s];
        if (e == null) {
            return null;
        }
        int mask = (e.length >> 1) - 1;
        for (int j = System.identityHashCode(c) & mask, n = 0; n <= mask; j = (j + 1) & mask, n++) {
            Object k = e[2 * j];
            if (k == c) {
                return (int[]) e[2 * j + 1];
            }
            if (k == null) {
                return null;
            }
        }
        return null;
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

    /* ---- calling contexts (--depth above 1) ---- */

    /*
     * A thread's stack of frames (long[]): s[0] its depth, s[1] the line of
     * a frame past CAP (not kept), s[2] the depth of its bottom (seeded()),
     * s[3] and s[4] what the last enter() returns besides s: the index of
     * the new frame's line and the depth before it; then frame j (1..CAP) at
     * 4j + 4: {method, with COMPUTED once its callers' hash is known; the
     * line it calls from; its callers' hash; its own value in the hash (next)}.
     */
    private static final int HDR = 8;
    private static final long COMPUTED = 1L << 62;

    /**
     * A method (the agent's number) begins: its frame pushed on the calling
     * thread's stack of frames, which is returned, with s[3] the index of
     * the frame's line, which the method sets before each call, and s[4]
     * the depth to put back on every way out.
     */
    public static long[] enter(int method) {
        long[] s = stack(mine());
        int d = (int) s[0];
        s[4] = d;
        if (d >= CAP || d < 0) {
            s[3] = 1;
            return s;
        }
        d++;
        s[0] = d;
        int b = 4 * d + 4;
        s[b] = method;
        s[b + 1] = 0;
        s[3] = b + 1;
        return s;
    }

    private static long[] stack(Object[] p) {
        long[] s = (long[]) p[3];
        if (s == null || (s[0] == s[2] && ((int[]) p[1])[1] == 0)) {
            s = seeded(p, s);
        }
        return s;
    }

    /*
     * seeded: the thread's stack of frames, made, or holding nothing above
     * its bottom (no instrumented method runs on the thread), given a new
     * bottom: the frames under the method entering (the agent's seed():
     * methods running since before the recording, which keep their old
     * code, or not instrumented). s[2] keeps the bottom's depth, so that
     * the next method entered at the bottom asks again: one stack walk per
     * entry from code not instrumented into code that is.
     */
    private static long[] seeded(Object[] p, long[] s) {
        if (s == null) {
            s = new long[HDR + 4 * CAP];
            p[3] = s;
        }
        s[0] = 0;
        Object[] known = (Object[]) p[4];
        if (known == null) {
            known = new Object[SEEDS];
            p[4] = known;
        }
        long[] f = cgen != 0 ? seed(known) : null;
        remember(known, f);
        int from = f == null || f.length < 2 ? 0 : 2 + 2 * (int) f[1];
        for (int j = from; f != null && j + 1 < f.length && s[0] < CAP; j += 2) {
            int d = (int) s[0] + 1;
            s[0] = d;
            s[4 * d + 4] = f[j];
            s[4 * d + 5] = f[j + 1];
        }
        s[2] = s[0];
        return s;
    }

    /* The thread's last answers of seed() it keeps, the newest first. */
    private static final int SEEDS = 8;

    /* remember: f first among the answers known, unless it is one of them. */
    private static void remember(Object[] known, long[] f) {
        for (int i = 0; f != null && i < known.length; i++) {
            if (known[i] == f) {
                return;
            }
        }
        if (f != null) {
            System.arraycopy(known, 0, known, 1, known.length - 1);
            known[0] = f;
        }
    }

    /*
     * seed: the frames under the method entering: {generation, n, n frames
     * as walked, then {method, line} pairs outermost first}, or the one of
     * known walked the same (sites.c); null: none.
     */
    private static native long[] seed(Object[] known);

    /*
     * frame: a frame's value in the rolling hash, from its method and line:
     * a bijection (an odd multiplier, then the high half folded in), so
     * that distinct frames have distinct values; one multiply, as it runs
     * for every frame the hash rolls over.
     */
    private static long frame(long method, long line) {
        long x = ((method & ~COMPUTED) << 32 ^ (line & 0xffffffffL)) * 0xff51afd7ed558ccdL;
        return x ^ x >>> 32;
    }

    /* mix: MurmurHash3's fmix64, for the table key made once per allocation. */
    private static long mix(long x) {
        x ^= x >>> 33;
        x *= 0xff51afd7ed558ccdL;
        x ^= x >>> 33;
        x *= 0xc4ceb9fe1a85ec53L;
        return x ^ x >>> 33;
    }

    /*
     * callers: the hash of the N - 1 nearest callers of frame j (1..CAP) of
     * s, computed when first asked (from the nearest frame below that knows
     * its own, rolled on one frame at a time: Karp and Rabin's rolling hash,
     * h(j + 1) = v(j) + P h(j) - v(j - N + 1) P^(N-1)) and kept in the frame
     * until it returns, so that a method entry only pushes.
     */
    private static long callers(long[] s, int j) {
        if ((s[4 * j + 4] & COMPUTED) != 0) {
            return s[4 * j + 6];
        }
        return roll(s, j);
    }

    /* roll: callers() of a frame whose hash is not known yet (apart, so that compiled code keeps it out of line). */
    private static long roll(long[] s, int j) {
        int i = j;
        while (i > 1 && (s[4 * i + 4] & COMPUTED) == 0) {
            i--;
        }
        if ((s[4 * i + 4] & COMPUTED) == 0) {
            s[4 * i + 6] = 0;   /* the bottom frame: no caller kept */
            s[4 * i + 4] |= COMPUTED;
        }
        for (; i < j; i++) {
            s[4 * i + 10] = next(s, i);
            s[4 * i + 8] |= COMPUTED;
        }
        return s[4 * j + 6];
    }

    /*
     * next: the callers' hash of a frame called from frame d of s, whose own
     * is known. Frame d's value is kept in its fourth word for when it
     * leaves the window: its line cannot change while a frame above it runs,
     * and every frame above a frame whose hash is known has had its own
     * computed since it was pushed (roll goes up from the highest known).
     */
    private static long next(long[] s, int d) {
        int b = 4 * d + 4;
        long v = frame(s[b], s[b + 1]);
        s[b + 3] = v;
        long h = v + P * s[b + 2];
        int o = d - depth + 1;  /* the caller leaving the window of N - 1 */
        if (o >= 1) {
            h -= s[4 * o + 7] * pn;
        }
        return h;
    }

    /* ctxKey: the table key of (site, account) in the context of s (pushed: the allocating method's frame is the top). */
    private static long ctxKey(long[] s, int pushed, int site, int account) {
        int d = (int) s[0];
        long h = 0;
        if (d > 0 && d <= CAP) {
            h = callers(s, d);
            if (pushed == 0) {
                h = next(s, d);    /* the site's method is a callee of the top frame */
            }
        }
        long k = mix(h ^ ((long) site << 32 | account & 0xffffffffL)) ^ h;
        return k == 0 ? 1 : k;
    }

    /* ctxFind: the counter index of key k in counters c, -1: not there. */
    private static int ctxFind(Object[] c, long k) {
        long[] keys = (long[]) c[5];
        if (keys == null) {
            return -1;
        }
        int mask = keys.length - 1;
        for (int j = (int) (k ^ k >>> 32) & mask;; j = (j + 1) & mask) {
            long x = keys[j];
            if (x == k) {
                return ((int[]) c[6])[j];
            }
            if (x == 0) {
                return -1;
            }
        }
    }

    /* ctxPut: key k has counter index i in c (the table doubled at half full). */
    private static void ctxPut(Object[] c, long k, int i) {
        long[] keys = (long[]) c[5];
        int[] idx = (int[]) c[6];
        int[] m = (int[]) c[0];
        if (keys == null || 2 * (m[4] + 1) > keys.length) {
            int cap = keys == null ? 64 : 2 * keys.length;
            long[] nk = new long[cap];
            int[] ni = new int[cap];
            for (int j = 0; keys != null && j < keys.length; j++) {
                if (keys[j] != 0) {
                    insert(nk, ni, keys[j], idx[j]);
                }
            }
            c[5] = keys = nk;
            c[6] = idx = ni;
        }
        insert(keys, idx, k, i);
        m[4]++;
    }

    private static void insert(long[] keys, int[] idx, long k, int i) {
        int mask = keys.length - 1;
        int j = (int) (k ^ k >>> 32) & mask;
        while (keys[j] != 0) {
            j = (j + 1) & mask;
        }
        keys[j] = k;
        idx[j] = i;
    }

    /**
     * A new object of a site whose class is known, in its calling context,
     * charged to account (-1: the thread's current account). pushed: the
     * allocating method's own frame is on the stack.
     */
    public static void ctxCount(Object o, int site, int account, int pushed) {
        ctxIn(mine(), o, -1, site, account, 0, pushed);
    }

    /** A new array of len elements of kind elem, in its calling context (as ctxCount). */
    public static void ctxArray(Object a, int len, int site, int account, int elem, int pushed) {
        ctxIn(mine(), a, len, site, account, elem, pushed);
    }

    /* ctxIn: ctxCount (len -1) or ctxArray on the thread whose state is p. */
    private static void ctxIn(Object[] p, Object o, int len, int site, int account, int elem, int pushed) {
        int[] slot = (int[]) p[1];
        if (slot[1] != 0) {
            return;
        }
        if (account < 0) {
            account = slot[0];
        }
        long[] s = stack(p);
        Object[] c = (Object[]) p[2];
        int[] m = (int[]) c[0];
        long k = ctxKey(s, pushed, site, account);
        int i = m[0] == (site >>> 24 | CTX) ? ctxFind(c, k) : -1;
        long[] n = (long[]) c[1];
        if (i < 0 || i + 2 >= n.length) {
            ctxSlow(o, site, account, len, p, s, pushed, k);
            return;
        }
        long x = ++n[i];
        int words = 0;
        if (len >= 0) {
            long bytes = (BASE[elem] + ((long) len << SHIFT[elem]) + align - 1) & -align;
            n[i + 1] += bytes;
            n[i + 2] += len;
            words = (int) Math.min(bytes >>> 3, Integer.MAX_VALUE >>> 1);
        }
        if (c[2] != null && i != 0) {
            if (x <= FIRST || live == 2) {
                follow(c, m, o, i, words);
            } else if (pick(m)) {
                follow(c, m, o, i, words | SAMPLED);
            }
        }
    }

    /**
     * A new object of a known class in the classes that mine() itself runs
     * (ThreadLocal's), in its calling context: counted here when this
     * thread's state is the last one looked up, by the agent's stack walk
     * otherwise (as countWalking).
     */
    public static void ctxCountWalking(Object o, int site) {
        Object[] p = last;
        if (p[0] == Thread.currentThread()) {
            ctxIn(p, o, -1, site, -1, 0, 0);
        } else {
            recordWalking(o, site);
        }
    }

    /** The same for an array. */
    public static void ctxArrayWalking(Object a, int len, int site, int elem) {
        Object[] p = last;
        if (p[0] == Thread.currentThread()) {
            ctxIn(p, a, len, site, -1, elem, 0);
        } else {
            recordWalking(a, site);
        }
    }

    /* ctxSlow: the first object of its key on this thread, or counters of an earlier recording. */
    private static void ctxSlow(Object o, int site, int account, int len, Object[] p, long[] s, int pushed, long k) {
        Object[] c = (Object[]) p[2];
        int g = cgen;
        if (off != 0) {
            return;
        }
        if (g != 0 && ((int[]) c[0])[0] != (g | CTX)) {
            c = counters((Thread) p[0]);
            p[2] = c;
        }
        int[] m = (int[]) c[0];
        long[] n = (long[]) c[1];
        if (m[4] >= MAX_CONTEXTS && n.length >= 3) {
            n[0]++;     /* the thread's table is full: counter 0, read as dropped */
            return;
        }
        int i = firstCtx(o, site, account, len, c, s, pushed);
        if (i >= 0 && m[0] == (site >>> 24 | CTX)) {
            ctxPut(c, k, i);
        }
    }

    /*
     * firstCtx: the agent counts o (len: its length, -1 for an object) at
     * site for account in the calling context on s, makes the key, its
     * counter in c and returns the counter's index, or -1 when it counted
     * the object itself (another recording's site, no room).
     */
    private static native int firstCtx(Object o, int site, int account, int len, Object[] c, long[] s, int pushed);

    /**
     * A new object at a site whose class is the object's (clone, reflection)
     * or with arrays inside (multianewarray), in its calling context: counted
     * here under the site the agent made for its class there (dyn), by the
     * agent otherwise (recordCtx).
     */
    public static void ctxDynamic(Object o, int site, int account, int pushed) {
        Object[] p = mine();
        int[] slot = (int[]) p[1];
        if (slot[1] != 0) {
            return;
        }
        if (account < 0) {
            account = slot[0];
        }
        Class<?> c = o.getClass();
        int[] v = cached(site, cgen, c);
        if (v != null) {
            if (v[1] == -1) {
                ctxCount(o, v[0], account, pushed);
            } else if (v[1] >= 0) {
                ctxArray(o, Array.getLength(o), v[0], account, v[1], pushed);
            }
            return;
        }
        recordCtx(o, site, account, stack(p), pushed, c, System.identityHashCode(c));
    }

    /* recordCtx: the agent counts o (of class c, identity hash hash) at site in the calling context on s. */
    private static native void recordCtx(Object o, int site, int account, long[] s, int pushed, Class<?> c, int hash);
}
