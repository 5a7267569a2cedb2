import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.invoke.MutableCallSite;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.SubmissionPublisher;
import java.util.concurrent.atomic.LongAdder;

/**
 * LayoutHeap: objects whose sizes depend on how HotSpot lays fields out
 * (tests/t_layout.sh, issue 35): class hierarchies with holes that the
 * layout of JDK 15 on fills and earlier ones leave, classes with fields the
 * VM injects (String, Thread, ClassLoader, Module, MemberName,
 * ResolvedMethodName, CallSite, InternalError, StackFrameInfo) and the JDK's
 * classes with @Contended fields (Thread on JDK 17, ForkJoinPool and its
 * WorkQueue, ConcurrentHashMap's CounterCell, Striped64's Cell,
 * SubmissionPublisher's BufferedSubscription). Prints "ready PID", then
 * waits for a line on stdin (the test takes a class histogram and a heap
 * dump meanwhile) and exits.
 */
public class LayoutHeap {
    static class Empty {}
    static class OneByte { byte b; }
    static class OneLong { long l; }
    static class LongThenInt extends OneLong { int i; }          // JDK 15+: the int fills the hole at 12
    static class LongByte { long l; byte b; }
    static class LongByteSub extends LongByte { byte c; short s; }
    static class Mixed { Object o; int i; long l; boolean z; char c; }
    static class MixedSub extends Mixed { double d; Object p; }
    static class IntOnly { int a; }
    static class IntLong extends IntOnly { long x; }
    static class IntLongByte extends IntLong { byte q; }
    static class ThreeRefs { Object a, b, c; }
    static class ThreeRefsByte extends ThreeRefs { byte z; }
    static class Bool1 { boolean z1; }
    static class Bool2 extends Bool1 { boolean z2; }
    static class Bool3 extends Bool2 { boolean z3; }
    static class Bool3Long extends Bool3 { long l4; }
    static class Wide { long a, b; int c; short d; byte e; Object f; }
    static class WideChar extends Wide { char g; }
    static class Short1 { short s; }
    static class Short1Sub extends Short1 { long l; short t; Object o; }
    static class Worker extends Thread {
        volatile boolean stop;
        Worker() { setDaemon(true); }
        public void run() { while (!stop) LockSupportPark.park(); }
    }
    static class LockSupportPark { static void park() { java.util.concurrent.locks.LockSupport.parkNanos(1_000_000_000L); } }

    static final List<Object> KEEP = new ArrayList<>();

    public static void main(String[] args) throws Throwable {
        for (int i = 0; i < 3; i++) {
            KEEP.add(new Empty()); KEEP.add(new OneByte()); KEEP.add(new OneLong()); KEEP.add(new LongThenInt());
            KEEP.add(new LongByte()); KEEP.add(new LongByteSub()); KEEP.add(new Mixed()); KEEP.add(new MixedSub());
            KEEP.add(new IntOnly()); KEEP.add(new IntLong()); KEEP.add(new IntLongByte()); KEEP.add(new ThreeRefs());
            KEEP.add(new ThreeRefsByte()); KEEP.add(new Bool1()); KEEP.add(new Bool2()); KEEP.add(new Bool3());
            KEEP.add(new Bool3Long()); KEEP.add(new Wide()); KEEP.add(new WideChar()); KEEP.add(new Short1());
            KEEP.add(new Short1Sub());
        }
        // @Contended in the JDK: ForkJoinPool (ctl), its WorkQueues, LongAdder's cells (under contention),
        // SubmissionPublisher's subscriptions, a Thread subclass (Thread's fields on JDK 17).
        ForkJoinPool pool = new ForkJoinPool(2);
        KEEP.add(pool);
        KEEP.add(pool.submit(() -> 42).get());
        LongAdder adder = new LongAdder();
        ConcurrentHashMap<Integer, Integer> map = new ConcurrentHashMap<>();
        Thread[] ts = new Thread[4];
        for (int t = 0; t < ts.length; t++) {
            ts[t] = new Thread(() -> {
                for (int k = 0; k < 200_000; k++) {
                    adder.increment();
                    map.merge(k & 1023, 1, Integer::sum);
                }
            });
            ts[t].start();
        }
        for (Thread t : ts)
            t.join();
        KEEP.add(adder);
        KEEP.add(map);
        SubmissionPublisher<String> pub = new SubmissionPublisher<>();
        KEEP.add(pub);
        pub.subscribe(new java.util.concurrent.Flow.Subscriber<String>() {
            public void onSubscribe(java.util.concurrent.Flow.Subscription s) { KEEP.add(s); s.request(1); }
            public void onNext(String item) {}
            public void onError(Throwable e) {}
            public void onComplete() {}
        });
        Worker w = new Worker();
        w.start();
        KEEP.add(w);
        // Injected fields.
        KEEP.add(new InternalError("layout"));
        KEEP.add(MethodHandles.lookup().findVirtual(String.class, "length", MethodType.methodType(int.class)));
        KEEP.add(new MutableCallSite(MethodType.methodType(void.class)));
        KEEP.add(StackWalker.getInstance(StackWalker.Option.RETAIN_CLASS_REFERENCE).walk(s -> s.toList()));
        KEEP.add(new ClassLoader() {});
        KEEP.add(LayoutHeap.class.getModule());
        System.gc();
        System.out.println("ready " + ProcessHandle.current().pid());
        System.out.flush();
        new java.io.BufferedReader(new java.io.InputStreamReader(System.in)).readLine();
    }
}
