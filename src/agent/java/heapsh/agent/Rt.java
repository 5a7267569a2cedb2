/*
 * Rt - what instrumented code calls in an exact allocation recording made by
 * bytecode instrumentation (docs/agent.md, "Allocation recordings"; src/agent/
 * instrument.c defines this class in the bootstrap class loader, so that code
 * of every class loader and module can call it, and registers its natives).
 *
 * Two things happen here. The allocation sites the transformer
 * (Instrument.java) found call record(object, site, account) just after the
 * object exists; the agent counts it under its site and account and follows
 * it with a weak reference until it dies. And each thread has a slot with
 * its current memory account, the account of the nearest accounted frame,
 * which pays for what unaccounted code allocates (ASGMemProf's thread-local
 * current account, seed 001, sections 4 and 5): methods of accounted
 * classes set it on entry and restore it on every way out.
 *
 * This class is compiled apart from the transformer and must stay small and
 * self-contained: it is never instrumented itself, allocates only its
 * per-thread slots, and uses no lambda, string concatenation or other class
 * of its own, since anything it loaded would be loaded by the bootstrap
 * class loader for good.
 */
package heapsh.agent;

public final class Rt extends ThreadLocal<Object[]> {
    /*
     * A thread's current memory account: slot[0] is the account of the
     * nearest accounted frame (0: none). An accounted method saves it, sets
     * its own and puts the saved one back on every way out, holding the
     * slot in a local variable of its own (Instrument.java).
     */
    private static final Rt SLOTS = new Rt();

    /*
     * The last thread to look its slot up, and the slot: {thread, int[1]}, a
     * thread's own pair (the value of SLOTS). A thread that finds itself
     * here needs no ThreadLocal lookup (a single-threaded program always
     * does); another one looks up its own pair and puts it here.
     */
    private static Object[] last = {null, null};

    private Rt() {
    }

    @Override
    protected Object[] initialValue() {
        return new Object[] {Thread.currentThread(), new int[1]};
    }

    /** This thread's account slot. */
    public static int[] slot() {
        Object[] p = last;
        if (p[0] != Thread.currentThread()) {
            p = SLOTS.get();
            last = p;
        }
        return (int[]) p[1];
    }

    /** An allocation in unaccounted code: the nearest accounted frame pays. */
    public static void allocated(Object o, int site) {
        record(o, site, slot()[0]);
    }

    /** An allocation at site, charged to account (0: none). */
    public static native void record(Object o, int site, int account);

    /** The same at a site whose class is the object's (clone, reflection). */
    public static void dynamic(Object o, int site, int account) {
        Class<?> c = o.getClass();
        recordClass(o, site, account, c, System.identityHashCode(c));
    }

    /** The same in unaccounted code. */
    public static void allocatedDynamic(Object o, int site) {
        Class<?> c = o.getClass();
        recordClass(o, site, slot()[0], c, System.identityHashCode(c));
    }

    /* An allocation of class c (its identity hash: hash) at a site whose class is the object's. */
    private static native void recordClass(Object o, int site, int account, Class<?> c, int hash);

    /**
     * An allocation whose account the agent finds by walking the stack: in
     * the classes that slot() itself runs (ThreadLocal's), where calling
     * slot() or allocated() could recurse.
     */
    public static native void recordWalking(Object o, int site);
}
