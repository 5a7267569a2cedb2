package com.acme.kinds;

import java.lang.reflect.Array;
import java.lang.reflect.Constructor;
import java.util.Arrays;
import java.util.function.IntSupplier;

/**
 * Allocations that are not a plain `new` (AllocWork's KNOWN FACTS, "kinds";
 * issue 13: objects made by clone, by reflection and by the JDK's code that
 * the JIT compilers replace by their own): each is counted exactly once, in
 * the accounted package com.acme.kinds. AllocWork does not load this package
 * before its `kinds` command, so an exact recording started earlier meets
 * these classes as they load.
 *
 * One call of make allocates, among others (sizes with compressed oops and
 * class pointers; what the reflective calls and the lambda's bootstrap
 * allocate inside the JDK is not listed and goes to this account too, the
 * nearest accounted frame being make's):
 *
 *  class                            objects  bytes   made by (the site)
 *  int[]                                  1     56   {0, ..., 9}: newarray (Kinds.make)
 *  int[]                                  1     56   its clone() (Kinds.make)
 *  com.acme.kinds.Kinds$Plain             2     32   new, then clone() inherited from Object
 *                                                    (Kinds$Plain.copy)
 *  com.acme.kinds.Kinds$PlainChild        2     32   new, then its own clone() calling
 *                                                    super.clone() (Kinds$PlainChild.clone)
 *  com.acme.kinds.Kinds$Deep              2     32   new, then its own covariant clone()
 *                                                    (Kinds$Deep.clone)
 *  com.acme.kinds.Kinds$DeepChild         2     32   new, then Deep's clone(), inherited
 *                                                    (Kinds$Deep.clone)
 *  java.lang.String[]                     1     48   Array.newInstance(String.class, 7)
 *  int[][]                                1     24   Array.newInstance(int.class, 2, 3)
 *  int[]                                  2     64   ... its two int[3]
 *  com.acme.kinds.Kinds$Made             20    320   Constructor.newInstance, 20 times
 *  long[][]                               1     32   new long[3][4] (multianewarray)
 *  long[]                                 3    144   ... its three long[4]
 *  com.acme.kinds.Kinds$$Lambda...        5     80   a lambda capturing an int, 5 times
 *  java.lang.Object[]                 20000 640000   Arrays.copyOf(a, 4, Object[].class),
 *                                                    20000 times (Kinds.make)
 *  java.lang.Object[]                     1     32   {sink, sink, sink, sink} (Kinds.make)
 *  java.lang.Integer                  20000 320000   Integer.valueOf(1000 + i), 20000 times
 *                                                    (java.lang.Integer.valueOf)
 *
 * None is kept: all are garbage once make returns. copyOf runs 20000 times
 * so that the JIT compiles the loop: C2 replaces Arrays.copyOf by its own
 * code (an intrinsic) and never runs its body. The boxes do not escape: C2
 * may remove a box (or the whole valueOf call) it proves unused, but not one
 * that is reported, and it inlines valueOf's own bytecode otherwise. Where a site is not in
 * Kinds (reflection, the lambda's constructor handle) it is the JDK's code
 * that made the object: Array.newInstance, the constructor accessors,
 * DirectMethodHandle.allocateInstance.
 *
 * fail (accounted, com.acme.kinds) throws one Kinds$Oops (40 bytes: the
 * fields of Throwable; no stack trace is filled in) out of its frame;
 * AllocWork's `kinds` catches it, then calls the unaccounted helper
 * Pool.make(5): those 5 Buffers and the Buffer[5] go to (none), not to
 * com.acme.kinds (an account is left when an exception leaves its frame).
 */
public final class Kinds {
    static final class Plain implements Cloneable {
        Plain copy() throws CloneNotSupportedException {
            return (Plain) clone();                       // SITE com.acme.kinds.Kinds$Plain
        }
    }

    static final class PlainChild extends PlainBase {
        @Override
        protected Object clone() throws CloneNotSupportedException {
            return super.clone();                         // SITE com.acme.kinds.Kinds$PlainChild
        }
    }

    static class PlainBase implements Cloneable {
    }

    static class Deep implements Cloneable {
        @Override
        public Deep clone() {
            try {
                return (Deep) super.clone();              // SITE com.acme.kinds.Kinds$Deep
            } catch (CloneNotSupportedException e) {
                throw new AssertionError(e);
            }
        }
    }

    static final class DeepChild extends Deep {
    }

    public static final class Made {
        int v;

        public Made() {
        }
    }

    static final class Oops extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Oops() {
            super(null, null, false, false);
        }
    }

    static volatile Object sink;

    private Kinds() {
    }

    public static int make() throws ReflectiveOperationException, CloneNotSupportedException {
        int[] ten = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
        sink = ten.clone();                               // SITE int[]
        sink = new Plain().copy();
        sink = new PlainChild().clone();
        sink = new Deep().clone();
        sink = new DeepChild().clone();
        sink = Array.newInstance(String.class, 7);
        sink = Array.newInstance(int.class, 2, 3);
        Constructor<Made> c = Made.class.getConstructor();
        for (int i = 0; i < 20; i++) {
            sink = c.newInstance();
        }
        sink = new long[3][4];                            // SITE long[][]
        int total = 0;
        for (int i = 0; i < 5; i++) {
            final int k = i;
            IntSupplier s = () -> k;                      // SITE com.acme.kinds.Kinds$$Lambda
            sink = s;
            total += s.getAsInt();
        }
        Object[] src = {sink, sink, sink, sink};
        for (int i = 0; i < 20000; i++) {
            sink = Arrays.copyOf(src, 4, Object[].class); // SITE java.lang.Object[]
        }
        for (int i = 0; i < 20000; i++) {
            Integer box = Integer.valueOf(1000 + i);      // boxes (in Integer.valueOf's own code)
            total += box;
        }
        sink = null;
        return total;
    }

    /** Throws a Kinds$Oops out of this accounted frame. */
    public static void fail() {
        throw new Oops();                                 // SITE com.acme.kinds.Kinds$Oops
    }
}
