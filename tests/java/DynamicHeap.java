/*
 * DynamicHeap - builds a Java heap whose reachability is exactly known, then
 * dumps it. The test heap of the dynamic-size engine (tests/t_dynsize.sh).
 *
 * Usage:
 *   java -cp DIR DynamicHeap dump OUT.hprof
 *       Build the heap, write OUT.hprof with
 *       HotSpotDiagnosticMXBean.dumpHeap(OUT, true) (live objects only; a
 *       full GC runs first), exit 0. OUT must end in ".hprof" (the JDK
 *       refuses other names); an existing OUT is replaced.
 *
 * Dynamic size (docs/engine.md): the shallow sizes of everything an object
 * reaches, itself included, through instance reference fields, object array
 * elements, and the static reference fields of a class object that is itself
 * reached. The implicit object -> class link is NOT followed.
 *
 * All classes are in the default package, so their HPROF names are simple.
 * None of the classes below has a String field, so what each object reaches
 * is exactly the objects listed. Everything is reachable from a static field
 * of class DynamicHeap, each planted object only through the references
 * listed here. Allocation is deterministic: the same facts hold for every run.
 * Byte counts depend on the JVM's object layout and are NOT facts: tests sum
 * the shallow sizes the dump reports for the objects named here.
 *
 * KNOWN FACTS (tests assert these; keep this list in sync with the code)
 *
 * Instance counts (exact, whole heap):
 *   Data 100, Buffer 1, AnalysisList 1, Figure23 1, FigA 1, FigB 1, FigC 1,
 *   FigD 1, Ring 5000, RingTail 1, Link 10000, Rung 300, Payloaded 1,
 *   ClassHolder 1, DynamicHeap 0.
 *   Arrays of our classes: Data[] 1 (length 100). AnalysisList's array is an
 *   Object[] (length 100) among the JDK's many Object[].
 *
 * The thesis's figure 2.3 (a buffer and an analysis list share their data):
 *   class Data { long value; int index; }  -- 100 instances, index = 0..99,
 *     value = 10 * index; each is referenced ONLY from Buffer.slots[index]
 *     and AnalysisList.elements[index].
 *   class Buffer { Data[] slots; int pos; }  -- 1 instance, slots = a Data[100]
 *     holding all 100 Data in index order, pos = 100.
 *   class AnalysisList { Object[] elements; int used; }  -- 1 instance,
 *     elements = an Object[100] holding the same 100 Data in index order,
 *     used = 100.
 *   class Figure23 { Buffer buffer; AnalysisList analysis; }  -- 1 instance,
 *     static DynamicHeap.figure23, the only holder of the Buffer and the
 *     AnalysisList.
 *   So: retained(Buffer) = Buffer + Data[100] (and the class object Data[],
 *   held only through the array's object -> class link); retained(AnalysisList)
 *   = AnalysisList + Object[100]; dynamic(Buffer) = Buffer + Data[100] + the
 *   100 Data; dynamic(AnalysisList) = AnalysisList + Object[100] + the 100
 *   Data; their union (and dynamic(Figure23) minus Figure23) = Buffer +
 *   AnalysisList + both arrays + the 100 Data, which Figure23 also retains.
 *
 * The thesis's figure 4.11 (an articulation point that is not a dominating
 * one): class FigA { FigB b; FigD d; }, class FigB { FigC c; FigD d; },
 *   class FigC { int c; }, class FigD { long d1; long d2; long d3; }
 *   -- one instance each: A -> B, A -> D, B -> C, B -> D; A is held by static
 *   DynamicHeap.figA, nothing else references B, C or D.
 *   dynamic(A) = A + B + C + D, dynamic(B) = B + C + D (D counted once),
 *   dynamic(C) = C, dynamic(D) = D; retained(B) = B + C.
 *
 * A cycle: class Ring { Ring next; RingTail tail; int n; }  -- 5000 instances,
 *   n = 0..4999, ring n.next = ring (n + 1) % 5000 (one strongly connected
 *   component of 5000 objects; the JDK's own largest has about 3000);
 *   only ring 2500 has a tail, the only RingTail { byte[] data = new byte[100]; },
 *   the other tails are null. Ring 0 is held by static DynamicHeap.ring.
 *   Every Ring has dynamic size 5000 Rings + RingTail + byte[100].
 *
 * A chain: class Link { Link next; int n; }  -- 10000 instances, n = 0..9999,
 *   link n.next = link n + 1 (link 9999.next = null); link 0 is held by static
 *   DynamicHeap.chain. dynamic(link n) = (10000 - n) Links: the head reaches
 *   10000, link 5000 reaches 5000.
 *
 * A ladder (a DAG with sharing, where estimates are used):
 *   class Rung { Rung next; Rung skip; int n; }  -- 300 instances, n = 0..299,
 *   rung n.next = rung n + 1, rung n.skip = rung n + 2 (null past the end);
 *   rung 0 is held by static DynamicHeap.ladder. dynamic(rung n) = (300 - n)
 *   Rungs. Rung 0 dominates all it reaches; rungs 1..298 do not (rung n + 1
 *   is also reached through the skip of rung n - 1), so most rungs are not
 *   shortcuts for the engine and their dynamic sizes are estimated until
 *   computed exactly.
 *
 * Statics reached through a Class object:
 *   class Payloaded { static byte[] payload = new byte[5000]; int x; }
 *     -- 1 instance, static DynamicHeap.plain, x = 7. The byte[5000] is
 *     referenced only by the static field Payloaded.payload.
 *   class ClassHolder { Class<?> k = Payloaded.class; }  -- 1 instance, static
 *     DynamicHeap.classHolder.
 *   Payloaded has no other static reference, and no String constants (so
 *   HotSpot writes no "<resolved_references>" pseudo-static for it):
 *   dynamic(class Payloaded) = class Payloaded + byte[5000];
 *   dynamic(ClassHolder) = ClassHolder + class Payloaded + byte[5000];
 *   dynamic(plain Payloaded) = its shallow size alone (the object -> class
 *   link is not followed, so its class's static payload is not reached).
 *
 * Everything else in the dump belongs to the JDK; counts of JDK classes are
 * NOT exact and tests must not hard-code them.
 */

import com.sun.management.HotSpotDiagnosticMXBean;
import java.io.File;
import java.io.IOException;
import java.lang.management.ManagementFactory;

class Data {
    long value;
    int index;
}

class Buffer {
    Data[] slots;
    int pos;
}

class AnalysisList {
    Object[] elements;
    int used;
}

class Figure23 {
    Buffer buffer;
    AnalysisList analysis;
}

class FigA {
    FigB b;
    FigD d;
}

class FigB {
    FigC c;
    FigD d;
}

class FigC {
    int c;
}

class FigD {
    long d1;
    long d2;
    long d3;
}

class Ring {
    Ring next;
    RingTail tail;
    int n;
}

class RingTail {
    byte[] data = new byte[100];
}

class Link {
    Link next;
    int n;
}

class Rung {
    Rung next;
    Rung skip;
    int n;
}

class Payloaded {
    static byte[] payload = new byte[5000];
    int x;
}

class ClassHolder {
    Class<?> k = Payloaded.class;
}

public class DynamicHeap {
    static final int DATA = 100;
    static final int RING = 5000;
    static final int CHAIN = 10000;
    static final int LADDER = 300;

    static Figure23 figure23;
    static FigA figA;
    static Ring ring;
    static Link chain;
    static Rung ladder;
    static Payloaded plain;
    static ClassHolder classHolder;

    /** Allocates every object listed in the comment at the top of the file. */
    static void build() {
        Buffer buffer = new Buffer();
        buffer.slots = new Data[DATA];
        AnalysisList analysis = new AnalysisList();
        analysis.elements = new Object[DATA];
        for (int i = 0; i < DATA; i++) {
            Data d = new Data();
            d.index = i;
            d.value = 10L * i;
            buffer.slots[i] = d;
            analysis.elements[i] = d;
        }
        buffer.pos = DATA;
        analysis.used = DATA;
        figure23 = new Figure23();
        figure23.buffer = buffer;
        figure23.analysis = analysis;

        FigA a = new FigA();
        FigB b = new FigB();
        FigD d = new FigD();
        b.c = new FigC();
        b.d = d;
        a.b = b;
        a.d = d;
        figA = a;

        Ring[] rings = new Ring[RING];     // garbage after build()
        for (int i = 0; i < RING; i++) {
            rings[i] = new Ring();
            rings[i].n = i;
        }
        for (int i = 0; i < RING; i++) {
            rings[i].next = rings[(i + 1) % RING];
        }
        rings[RING / 2].tail = new RingTail();
        ring = rings[0];

        Link head = null;
        for (int i = CHAIN - 1; i >= 0; i--) {
            Link l = new Link();
            l.n = i;
            l.next = head;
            head = l;
        }
        chain = head;

        Rung[] rungs = new Rung[LADDER];   // garbage after build()
        for (int i = 0; i < LADDER; i++) {
            rungs[i] = new Rung();
            rungs[i].n = i;
        }
        for (int i = 0; i < LADDER; i++) {
            rungs[i].next = i + 1 < LADDER ? rungs[i + 1] : null;
            rungs[i].skip = i + 2 < LADDER ? rungs[i + 2] : null;
        }
        ladder = rungs[0];

        plain = new Payloaded();
        plain.x = 7;
        classHolder = new ClassHolder();
    }

    static void dump(String out) throws IOException {
        File file = new File(out);
        file.delete();                  // dumpHeap refuses to overwrite
        HotSpotDiagnosticMXBean bean =
            ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
        bean.dumpHeap(file.getPath(), true);
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2 || !args[0].equals("dump")) {
            System.err.println("usage: DynamicHeap dump OUT.hprof");
            System.exit(2);
        }
        build();
        dump(args[1]);
        System.exit(0);
    }
}
