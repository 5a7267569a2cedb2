/*
 * JfrAlloc - the allocation events of a JFR recording, read with the JDK's
 * own jdk.jfr.consumer API, summed per (stack trace, class) and written on
 * standard output for heapsh (src/alloc/jfr.c reads it). heapsh embeds this
 * class and runs it with the JDK's java: no JFR parser of heapsh's own.
 *
 * Usage: java -cp DIR heapsh.jfr.JfrAlloc RECORDING.jfr
 *
 * Events read:
 * - jdk.ObjectAllocationSample (JDK 16+): one sampled allocation; its weight
 *   is the bytes the thread allocated since its previous sample (JFR's own
 *   estimate), so a class's bytes are the sum of its events' weights.
 * - jdk.ObjectAllocationInNewTLAB / OutsideTLAB (older recordings, or when
 *   enabled): weighted by the new TLAB's size and by the object's size, as
 *   JDK Mission Control and async-profiler weigh them; used only when the
 *   recording has no ObjectAllocationSample (both sample the same
 *   allocations).
 * - jdk.OldObjectSample: a sampled object still alive at the recording's
 *   end: live objects (and bytes where the JDK records objectSize).
 *
 * Output: one record a line, fields separated by tabs, strings with tab,
 * newline and backslash escaped as \t \n \\:
 *   H  heapsh-jfr 1
 *   M  id  class  method  descriptor           (a method)
 *   N  id  parent  method  line                (a frame: parent -1 = outermost kept)
 *   C  id  class                               (an allocated class, as JFR names it: "[I" for int[])
 *   K  node  class  objects  bytes  live_objects  live_bytes  (node -1: no stack)
 *   P  node  class  skipped  root  type  field  type  field ...  (an old object
 *      sample's path from its GC root: root system, then each referrer's type
 *      and the field, "[]" an array element, that holds the next; the sample,
 *      of class, last)
 *   S  key  value                              (a fact: events, start_ms, end_ms, source, depth, ...)
 *   E  message                                 (an error; the exit status is 1)
 * Ids count from 0 in order of appearance; parents come before children.
 */
package heapsh.jfr;

import java.io.BufferedWriter;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import jdk.jfr.consumer.RecordedClass;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedMethod;
import jdk.jfr.consumer.RecordedObject;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordedThread;
import jdk.jfr.consumer.RecordingFile;

public final class JfrAlloc {
    private final PrintWriter out;
    private final Map<String, Integer> methods = new HashMap<>();
    private final Map<Frame, Integer> nodes = new HashMap<>();
    private final Map<String, Integer> classes = new HashMap<>();
    /*
     * The consumer resolves a chunk's stack traces, methods and classes once
     * and hands the same objects to every event naming them: these caches
     * make an event with a stack seen before cost a lookup, not a walk.
     */
    private final Map<RecordedStackTrace, Integer> stackNodes = new IdentityHashMap<>();
    private final Map<RecordedMethod, Integer> methodIds = new IdentityHashMap<>();
    private final Map<RecordedClass, Integer> classIds = new IdentityHashMap<>();
    /* per event family: (node, class) -> {objects, bytes, live objects, live bytes} */
    private final Map<Long, double[]> samples = new LinkedHashMap<>(), tlab = new LinkedHashMap<>(),
        old = new LinkedHashMap<>();

    /* A frame of the tree: its caller's node, its method, its line. */
    private static final class Frame {
        final int parent, method, line;

        Frame(int parent, int method, int line) {
            this.parent = parent;
            this.method = method;
            this.line = line;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Frame && ((Frame) o).parent == parent && ((Frame) o).method == method
                && ((Frame) o).line == line;
        }

        @Override
        public int hashCode() {
            return (parent * 31 + method) * 31 + line;
        }
    }
    private final Map<Long, Long> firstWeight = new HashMap<>();
    private long events, sampleEvents, tlabEvents, oldEvents, truncated, maxDepth;
    private long startMs = Long.MAX_VALUE, endMs = Long.MIN_VALUE;
    private long firstMax = 0;
    private String firstMaxThread = "";

    private JfrAlloc(PrintWriter out) {
        this.out = out;
    }

    private static String esc(String s) {
        if (s == null) {
            return "";
        }
        StringBuilder b = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '\t': b.append("\\t"); break;
                case '\n': b.append("\\n"); break;
                case '\r': b.append("\\r"); break;
                case '\\': b.append("\\\\"); break;
                default: b.append(c);
            }
        }
        return b.toString();
    }

    private int method(RecordedMethod m) {
        Integer known = methodIds.get(m);
        if (known != null) {
            return known;
        }
        String cls = m.getType() == null ? "?" : m.getType().getName();
        String key = cls + "\t" + m.getName() + "\t" + m.getDescriptor();
        Integer id = methods.get(key);
        if (id == null) {
            id = methods.size();
            methods.put(key, id);
            out.println("M\t" + id + "\t" + esc(cls) + "\t" + esc(m.getName()) + "\t" + esc(m.getDescriptor()));
        }
        methodIds.put(m, id);
        return id;
    }

    /* node: the frame tree's node of a stack trace (innermost frame), -1 without frames. */
    private int node(RecordedStackTrace st) {
        if (st == null) {
            return -1;
        }
        if (st.isTruncated()) {
            truncated++;
        }
        Integer known = stackNodes.get(st);
        if (known != null) {
            return known;
        }
        List<RecordedFrame> frames = st.getFrames();
        maxDepth = Math.max(maxDepth, frames.size());
        int parent = -1;
        for (int i = frames.size() - 1; i >= 0; i--) {
            RecordedFrame f = frames.get(i);
            if (f.getMethod() == null) {
                continue;
            }
            int m = method(f.getMethod());
            int line = f.getLineNumber();
            Frame key = new Frame(parent, m, line);
            Integer id = nodes.get(key);
            if (id == null) {
                id = nodes.size();
                nodes.put(key, id);
                out.println("N\t" + id + "\t" + parent + "\t" + m + "\t" + line);
            }
            parent = id;
        }
        stackNodes.put(st, parent);
        return parent;
    }

    private int cls(RecordedClass c) {
        Integer id = c == null ? null : classIds.get(c);
        if (id != null) {
            return id;
        }
        String name = c == null ? "?" : c.getName();
        id = classes.get(name);
        if (id == null) {
            id = classes.size();
            classes.put(name, id);
            out.println("C\t" + id + "\t" + esc(name));
        }
        if (c != null) {
            classIds.put(c, id);
        }
        return id;
    }

    private static void add(Map<Long, double[]> m, int node, int cls, double objs, double bytes,
                            double liveObjs, double liveBytes) {
        double[] v = m.computeIfAbsent((long) node << 32 | (cls & 0xffffffffL), k -> new double[4]);
        v[0] += objs;
        v[1] += bytes;
        v[2] += liveObjs;
        v[3] += liveBytes;
    }

    private static long longField(RecordedEvent e, String name) {
        return e.hasField(name) ? e.getLong(name) : 0;
    }

    private void event(RecordedEvent e) {
        String type = e.getEventType().getName();
        boolean sample = type.equals("jdk.ObjectAllocationSample");
        boolean inTlab = type.equals("jdk.ObjectAllocationInNewTLAB");
        boolean outTlab = type.equals("jdk.ObjectAllocationOutsideTLAB");
        boolean oldObj = type.equals("jdk.OldObjectSample");
        if (!sample && !inTlab && !outTlab && !oldObj) {
            return;
        }
        events++;
        Instant t = e.getStartTime();
        if (t != null) {
            startMs = Math.min(startMs, t.toEpochMilli());
            endMs = Math.max(endMs, t.toEpochMilli());
        }
        int node = node(e.getStackTrace());
        if (sample) {
            sampleEvents++;
            long w = e.getLong("weight");
            add(samples, node, cls(e.getClass("objectClass")), 1, w, 0, 0);
            RecordedThread th = e.getThread();
            long tid = th == null ? -1 : th.getJavaThreadId();
            if (!firstWeight.containsKey(tid)) {
                firstWeight.put(tid, w);
                if (w > firstMax) {
                    firstMax = w;
                    firstMaxThread = th == null ? "?" : th.getJavaName();
                }
            }
        } else if (inTlab || outTlab) {
            tlabEvents++;
            long w = inTlab ? longField(e, "tlabSize") : longField(e, "allocationSize");
            add(tlab, node, cls(e.getClass("objectClass")), 1, w, 0, 0);
        } else {
            oldEvents++;
            RecordedObject o = e.getValue("object");
            RecordedClass c = o != null && o.hasField("type") ? o.getClass("type") : null;
            int k = cls(c);
            add(old, node, k, 0, 0, 1, longField(e, "objectSize"));
            path(node, k, o, e.hasField("root") ? e.getValue("root") : null);
        }
    }

    /*
     * path: an old object sample's reference chain (path-to-gc-roots=true), as
     * a P line, root first: the GC root's system, then each referrer's type
     * and the field it holds the next one by ("[]" for an array element; a
     * class object's type is "class NAME", its statics' holder). Chains JFR
     * cut in the middle count their skipped links. No line without a chain.
     */
    private void path(int node, int k, RecordedObject o, RecordedObject root) {
        List<String> steps = new ArrayList<>();
        long skipped = 0;
        RecordedObject ref = o != null && o.hasField("referrer") ? o.getValue("referrer") : null;
        for (int guard = 0; ref != null && guard < 10000; guard++) {
            RecordedObject next = ref.hasField("object") ? ref.getValue("object") : null;
            if (next == null) {
                break;
            }
            String field = "?";
            RecordedObject f = ref.hasField("field") ? ref.getValue("field") : null;
            RecordedObject a = ref.hasField("array") ? ref.getValue("array") : null;
            if (f != null && f.hasField("name")) {
                field = f.getString("name");
            } else if (a != null) {
                field = "[]";
            }
            int skip = ref.hasField("skip") ? Math.max(0, ref.getInt("skip")) : 0;
            skipped += skip;
            RecordedClass t = next.hasField("type") ? next.getClass("type") : null;
            String type = t == null ? "?" : t.getName();
            String d = next.hasField("description") ? next.getString("description") : null;
            if (type.equals("java.lang.Class") && d != null && d.startsWith("Class Name: ")) {
                type = "class " + d.substring("Class Name: ".length());
            }
            steps.add(field);
            steps.add(type);
            if (skip > 0) {
                steps.add("");
                steps.add("(" + skip + " links JFR left out)");
            }
            ref = next.hasField("referrer") ? next.getValue("referrer") : null;
        }
        if (steps.isEmpty()) {
            return;
        }
        String system = root != null && root.hasField("system") ? root.getString("system") : null;
        StringBuilder b = new StringBuilder("P\t").append(node).append('\t').append(k).append('\t')
            .append(skipped).append('\t').append(esc(system == null ? "?" : system));
        for (int i = steps.size() - 1; i >= 0; i--) {
            b.append('\t').append(esc(steps.get(i)));
        }
        out.println(b);
    }

    private void keys(Map<Long, double[]> m) {
        for (Map.Entry<Long, double[]> k : m.entrySet()) {
            double[] v = k.getValue();
            long key = k.getKey();
            out.println("K\t" + (int) (key >> 32) + "\t" + (int) key + "\t" + (long) v[0] + "\t" + (long) v[1]
                        + "\t" + (long) v[2] + "\t" + (long) v[3]);
        }
    }

    private void finish() {
        String source = sampleEvents > 0 ? "jdk.ObjectAllocationSample"
            : tlabEvents > 0 ? "jdk.ObjectAllocationInNewTLAB/OutsideTLAB" : "none";
        keys(sampleEvents > 0 ? samples : tlab);
        keys(old);
        long firstSum = 0;
        for (long w : firstWeight.values()) {
            firstSum += w;
        }
        out.println("S\tevents\t" + events);
        out.println("S\tsource\t" + source);
        out.println("S\tsample_events\t" + sampleEvents);
        out.println("S\ttlab_events\t" + tlabEvents);
        out.println("S\told_object_samples\t" + oldEvents);
        out.println("S\ttruncated_stacks\t" + truncated);
        out.println("S\tdepth\t" + maxDepth);
        if (startMs <= endMs) {
            out.println("S\tstart_ms\t" + startMs);
            out.println("S\tend_ms\t" + endMs);
        }
        out.println("S\tfirst_sample_threads\t" + firstWeight.size());
        out.println("S\tfirst_sample_bytes\t" + firstSum);
        out.println("S\tfirst_sample_max\t" + firstMax);
        out.println("S\tfirst_sample_max_thread\t" + esc(firstMaxThread));
    }

    public static void main(String[] args) throws Exception {
        PrintWriter out = new PrintWriter(new BufferedWriter(
            new OutputStreamWriter(System.out, StandardCharsets.UTF_8), 1 << 16));
        out.println("H\theapsh-jfr\t1");
        int status = 0;
        try (RecordingFile f = new RecordingFile(Path.of(args[0]))) {
            JfrAlloc a = new JfrAlloc(out);
            while (f.hasMoreEvents()) {
                a.event(f.readEvent());
            }
            a.finish();
        } catch (Exception | OutOfMemoryError e) {
            String m = e.getMessage();
            out.println("E\t" + esc(e.getClass().getSimpleName() + (m == null ? "" : ": " + m)));
            status = 1;
        }
        out.flush();
        System.exit(status);
    }
}
