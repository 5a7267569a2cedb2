/*
 * VisualVMBench - times VisualVM's heap library on a dump, as the baseline
 * that heapsh is benchmarked against.
 *
 * Usage:
 *   java -Xmx16g -cp "$(sh tests/visualvm-classpath.sh):DIR" VisualVMBench MODE DUMP
 *
 * MODE
 *   histogram  HeapFactory.createHeap(DUMP), then for every JavaClass
 *              getInstancesCount() and getAllInstancesSize(), summed.
 *              objects = total instances, bytes = total shallow bytes.
 *   retained   HeapFactory.createHeap(DUMP), then Instance.getRetainedSize()
 *              for every instance (Heap.getAllInstancesIterator()), summed.
 *              objects = instances visited, bytes = sum of retained sizes
 *              (nested objects are counted once per dominator, so this is
 *              much larger than the heap).
 *   diff       (VisualVMBench diff OLD NEW) what VisualVM's heap viewer's
 *              "Compare with another heap dump" shows: HeapFactory.createHeap
 *              on both dumps, then per class name (classes of one name in
 *              several loaders summed) getInstancesCount() and
 *              getAllInstancesSize() in each, their differences, sorted by
 *              the size difference, largest first. No retained sizes: the
 *              comparison has none. objects = class names compared, bytes =
 *              the first row's size difference; the first row's class on
 *              stderr ("visualvm diff first=NAME").
 *
 * Output: exactly one line on stdout,
 *   visualvm MODE seconds=<s> objects=<n> bytes=<sum>
 * where seconds is the wall time from just before createHeap to the end of
 * the work (JVM start-up and cache cleanup are not included).
 *
 * VisualVM keeps an index of a dump in DUMP.hwcache next to it and reuses it
 * on the next createHeap, which would skip most of the work. So, in both
 * modes, DUMP.hwcache is deleted before the timed part (a cold run every
 * time) and again at the end, leaving nothing behind.
 */

import java.io.File;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.graalvm.visualvm.lib.jfluid.heap.Heap;
import org.graalvm.visualvm.lib.jfluid.heap.HeapFactory;
import org.graalvm.visualvm.lib.jfluid.heap.Instance;
import org.graalvm.visualvm.lib.jfluid.heap.JavaClass;

public class VisualVMBench {

    /** Deletes VisualVM's cache directory DUMP.hwcache (a flat directory). */
    static void deleteCache(File dump) {
        File dir = new File(dump.getAbsoluteFile().getParentFile(), dump.getName() + ".hwcache");
        File[] files = dir.listFiles();
        if (files != null) {
            for (File f : files) {
                f.delete();
            }
        }
        dir.delete();
    }

    /** Per class name: instances and their shallow bytes, [0] and [1]. */
    static Map<String, long[]> perName(Heap heap) {
        Map<String, long[]> m = new HashMap<>();
        for (JavaClass cls : heap.getAllClasses()) {
            long[] v = m.computeIfAbsent(cls.getName(), k -> new long[2]);
            v[0] += cls.getInstancesCount();
            v[1] += cls.getAllInstancesSize();
        }
        return m;
    }

    /** The diff mode: two dumps compared class by class, as VisualVM's heap viewer does. */
    static void diff(File older, File newer) throws IOException {
        deleteCache(older);
        deleteCache(newer);
        long start = System.nanoTime();
        Map<String, long[]> a = perName(HeapFactory.createHeap(older));
        Map<String, long[]> b = perName(HeapFactory.createHeap(newer));
        List<Object[]> rows = new ArrayList<>();
        Map<String, long[]> all = new HashMap<>(a);
        for (String k : b.keySet()) {
            all.putIfAbsent(k, new long[2]);
        }
        for (String k : all.keySet()) {
            long[] x = a.getOrDefault(k, new long[2]);
            long[] y = b.getOrDefault(k, new long[2]);
            rows.add(new Object[] {k, y[0] - x[0], y[1] - x[1]});
        }
        rows.sort((p, q) -> Long.compare((Long) q[2], (Long) p[2]));
        double seconds = (System.nanoTime() - start) / 1e9;
        System.out.printf(Locale.ROOT, "visualvm diff seconds=%.3f objects=%d bytes=%d%n",
                          seconds, rows.size(), rows.isEmpty() ? 0 : (Long) rows.get(0)[2]);
        System.err.println("visualvm diff first=" + (rows.isEmpty() ? "" : rows.get(0)[0]));
        System.out.flush();
        deleteCache(older);
        deleteCache(newer);
        System.exit(0);
    }

    public static void main(String[] args) throws IOException {
        if (args.length == 3 && args[0].equals("diff")) {
            diff(new File(args[1]), new File(args[2]));
        }
        if (args.length != 2 || !(args[0].equals("histogram") || args[0].equals("retained"))) {
            System.err.println("usage: VisualVMBench histogram|retained DUMP | VisualVMBench diff OLD NEW");
            System.exit(2);
        }
        String mode = args[0];
        File dump = new File(args[1]);
        if (!dump.isFile()) {
            System.err.println("VisualVMBench: no such file: " + dump);
            System.exit(1);
        }
        deleteCache(dump);

        long objects = 0;
        long bytes = 0;
        long start = System.nanoTime();
        Heap heap = HeapFactory.createHeap(dump);
        if (mode.equals("histogram")) {
            for (JavaClass cls : heap.getAllClasses()) {
                objects += cls.getInstancesCount();
                bytes += cls.getAllInstancesSize();
            }
        } else {
            Iterator<Instance> it = heap.getAllInstancesIterator();
            while (it.hasNext()) {
                bytes += it.next().getRetainedSize();
                objects++;
            }
        }
        double seconds = (System.nanoTime() - start) / 1e9;

        System.out.printf(Locale.ROOT, "visualvm %s seconds=%.3f objects=%d bytes=%d%n",
                          mode, seconds, objects, bytes);
        System.out.flush();
        deleteCache(dump);
        System.exit(0);
    }
}
