/*
 * VisualVMHistogram - reference class histogram of an HPROF dump, computed by
 * VisualVM's heap library (org.graalvm.visualvm.lib.jfluid.heap), for
 * comparing heapsh's numbers against an independent implementation.
 *
 * Usage:
 *   java -cp "$(sh tests/visualvm-classpath.sh):DIR" VisualVMHistogram DUMP \
 *        [--retained] [--retained-by-class]
 *
 * DUMP must be an uncompressed .hprof file (this VisualVM version cannot read
 * gzip-compressed dumps).
 *
 * Output (stdout), CSV with a header line:
 *   class,instances,shallow_bytes[,retained_bytes][,retained_by_class]
 * one row per JavaClass, i.e. per CLASS DUMP record: two classes with the same
 * name from different class loaders are two rows; classes with no instances
 * are listed too (instances 0). Columns:
 *   class             JavaClass.getName(), e.g. java.lang.String, byte[],
 *                     java.util.HashMap$Node[] (quoted only if it contains a
 *                     comma or a double quote)
 *   instances         JavaClass.getInstancesCount()
 *   shallow_bytes     JavaClass.getAllInstancesSize()
 *   retained_bytes    (--retained) the SUM of Instance.getRetainedSize() over
 *                     the class's instances. Instances that dominate each
 *                     other (e.g. nodes of a linked list) are counted more
 *                     than once, so this can exceed the heap size.
 *   retained_by_class (--retained-by-class) JavaClass.getRetainedSizeByClass():
 *                     the library's "retained size of the set of instances":
 *                     only instances that have no other instance of the same
 *                     class on their dominator chain contribute.
 * Rows are sorted by class name, then by instances, then by shallow bytes.
 *
 * Cache files: HeapFactory.createHeap(File) keeps an index next to the dump,
 * in the directory DUMP.hwcache (files NBProfiler*.map, NBProfiler.nphd,
 * dirty.lck). If DUMP.hwcache/NBProfiler.nphd exists, createHeap loads that
 * index instead of parsing the dump, even when the dump at that path has been
 * replaced since. So this program deletes DUMP.hwcache before opening the
 * dump and again when it is done, leaving nothing behind.
 */

import java.io.File;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.graalvm.visualvm.lib.jfluid.heap.Heap;
import org.graalvm.visualvm.lib.jfluid.heap.HeapFactory;
import org.graalvm.visualvm.lib.jfluid.heap.Instance;
import org.graalvm.visualvm.lib.jfluid.heap.JavaClass;

public class VisualVMHistogram {

    /** One output line. */
    static final class Row {
        String name;
        long instances;
        long shallow;
        long retained;          // sum of Instance.getRetainedSize()
        long retainedByClass;   // JavaClass.getRetainedSizeByClass()
    }

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

    static String csvField(String s) {
        if (s.indexOf(',') < 0 && s.indexOf('"') < 0) {
            return s;
        }
        return '"' + s.replace("\"", "\"\"") + '"';
    }

    public static void main(String[] args) throws IOException {
        File dump = null;
        boolean retained = false;
        boolean byClass = false;
        for (String a : args) {
            if (a.equals("--retained")) {
                retained = true;
            } else if (a.equals("--retained-by-class")) {
                byClass = true;
            } else if (dump == null && !a.startsWith("--")) {
                dump = new File(a);
            } else {
                dump = null;
                break;
            }
        }
        if (dump == null) {
            System.err.println("usage: VisualVMHistogram DUMP [--retained] [--retained-by-class]");
            System.exit(2);
        }
        if (!dump.isFile()) {
            System.err.println("VisualVMHistogram: no such file: " + dump);
            System.exit(1);
        }

        deleteCache(dump);
        Heap heap = HeapFactory.createHeap(dump);

        // One row per class object, keyed by class id (unique per CLASS DUMP).
        List<JavaClass> classes = heap.getAllClasses();
        Map<Long, Row> rows = new HashMap<>(classes.size() * 2);
        for (JavaClass cls : classes) {
            Row r = new Row();
            r.name = cls.getName();
            r.instances = cls.getInstancesCount();
            r.shallow = cls.getAllInstancesSize();
            if (byClass) {
                r.retainedByClass = cls.getRetainedSizeByClass();
            }
            rows.put(cls.getJavaClassId(), r);
        }

        if (retained) {
            // One pass over all instances (the iterator does not return class
            // objects, so this matches getInstancesCount()).
            Iterator<Instance> it = heap.getAllInstancesIterator();
            while (it.hasNext()) {
                Instance inst = it.next();
                Row r = rows.get(inst.getJavaClass().getJavaClassId());
                r.retained += inst.getRetainedSize();
            }
        }

        List<Row> sorted = new ArrayList<>(rows.values());
        sorted.sort(Comparator.comparing((Row r) -> r.name)
                .thenComparingLong(r -> r.instances)
                .thenComparingLong(r -> r.shallow)
                .thenComparingLong(r -> r.retained)
                .thenComparingLong(r -> r.retainedByClass));

        StringBuilder out = new StringBuilder(sorted.size() * 48);
        out.append("class,instances,shallow_bytes");
        if (retained) {
            out.append(",retained_bytes");
        }
        if (byClass) {
            out.append(",retained_by_class");
        }
        out.append('\n');
        for (Row r : sorted) {
            out.append(csvField(r.name)).append(',').append(r.instances).append(',').append(r.shallow);
            if (retained) {
                out.append(',').append(r.retained);
            }
            if (byClass) {
                out.append(',').append(r.retainedByClass);
            }
            out.append('\n');
        }
        System.out.print(out);
        System.out.flush();

        deleteCache(dump);
        System.exit(0);
    }
}
