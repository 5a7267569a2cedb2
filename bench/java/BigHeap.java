/*
 * BigHeap - produces a large, realistic heap dump from a real program: the
 * JDK's own Java compiler (javac, run in-process through javax.tools).
 *
 * Usage:
 *   java -Xmx4g -cp DIR BigHeap OUT.hprof [SCALE]
 *   (-Dbigheap.files=N changes the number of files per SCALE unit, default 500;
 *   only meant for tuning.)
 *
 * What it does:
 *   1. Generates FILES_PER_SCALE * SCALE Java source files (SCALE defaults to
 *      1) into a temporary directory. The sources are deterministic: generic
 *      classes with fields, methods, loops, lambdas, streams, nested classes,
 *      string constants and calls into other generated classes, so javac has
 *      real symbol tables, types and attributed trees to build.
 *   2. Runs javac on all of them in-process: JavacTask.parse() then
 *      JavacTask.analyze() (enter + attribute + flow, no class files).
 *   3. While the JavacTask and the parsed compilation units are still
 *      reachable (local variables used after the dump), writes OUT.hprof with
 *      HotSpotDiagnosticMXBean.dumpHeap(OUT, true): live objects only, after a
 *      full GC. OUT must end in ".hprof"; an existing OUT is replaced.
 *   4. Deletes the temporary sources and prints a summary on stderr.
 *
 * The heap (and so the dump) grows about linearly with SCALE: every file adds
 * the same amount of trees, symbols, types and constants. With JDK 17:
 * SCALE 1 (500 files) gives a dump of about 177 MB, SCALE 2 about 341 MB
 * (about 14 MB of javac/JDK baseline plus about 0.33 MB per file), and
 * takes about 8 s (SCALE 1) or 15 s (SCALE 2) on 2 cores.
 */

import com.sun.management.HotSpotDiagnosticMXBean;
import com.sun.source.tree.CompilationUnitTree;
import com.sun.source.util.JavacTask;
import java.io.File;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;

public class BigHeap {
    /** Generated source files for SCALE 1 (-Dbigheap.files=N overrides it). */
    static final int FILES_PER_SCALE = Integer.getInteger("bigheap.files", 500);
    /** Generated classes per package. */
    static final int CLASSES_PER_PACKAGE = 100;
    /** Methods per generated class. */
    static final int METHODS = 4;

    static String packageOf(int n) {
        return "gen.p" + (n / CLASSES_PER_PACKAGE);
    }

    static String qualifiedName(int n) {
        return packageOf(n) + ".C" + n;
    }

    /** Returns the source text of class number n out of count classes. */
    static String source(int n, int count) {
        String next = qualifiedName((n + 1) % count);
        String other = qualifiedName((n * 7 + 3) % count);
        StringBuilder s = new StringBuilder(16 * 1024);
        s.append("package ").append(packageOf(n)).append(";\n\n");
        s.append("import java.util.*;\n");
        s.append("import java.util.function.*;\n");
        s.append("import java.util.stream.*;\n\n");
        s.append("/** Generated class number ").append(n).append(". */\n");
        s.append("public class C").append(n).append("<T extends Comparable<T>> implements Comparable<C")
         .append(n).append("<T>> {\n");

        // string constants, unique per class
        for (int k = 0; k < 8; k++) {
            s.append("    public static final String TEXT_").append(k).append(" = \"class ").append(n)
             .append(" constant ").append(k).append(" lorem ipsum dolor sit amet\";\n");
        }
        s.append("    public static final int SEED = ").append(n * 31 + 7).append(";\n\n");

        // instance fields
        s.append("    private final List<String> names = new ArrayList<>();\n");
        s.append("    private final Map<String, Integer> counts = new HashMap<>();\n");
        s.append("    private final int[] data = new int[").append(8 + n % 8).append("];\n");
        s.append("    private T value;\n");
        s.append("    private ").append(other).append("<String> peer;\n\n");

        s.append("    public C").append(n).append("(T value) {\n");
        s.append("        this.value = value;\n");
        s.append("        for (int i = 0; i < data.length; i++) {\n");
        s.append("            data[i] = i * SEED;\n");
        s.append("        }\n");
        s.append("    }\n\n");

        s.append("    public static int helper(int x) {\n");
        s.append("        return x * ").append(n % 13 + 1).append(" + SEED;\n");
        s.append("    }\n\n");

        s.append("    @Override\n");
        s.append("    public int compareTo(C").append(n).append("<T> o) {\n");
        s.append("        return value.compareTo(o.value);\n");
        s.append("    }\n\n");

        for (int m = 0; m < METHODS; m++) {
            s.append("    /** Method ").append(m).append(" of class ").append(n).append(". */\n");
            s.append("    public <R extends Comparable<R>> List<String> method").append(m)
             .append("(List<R> input, int limit) {\n");
            s.append("        List<String> out = new ArrayList<>();\n");
            s.append("        int total = ").append(next).append(".helper(limit + ").append(m).append(");\n");
            s.append("        for (int i = 0; i < limit && i < input.size(); i++) {\n");
            s.append("            R item = input.get(i);\n");
            s.append("            if (i % ").append(m + 2).append(" == 0) {\n");
            s.append("                out.add(TEXT_").append(m % 8).append(" + \":\" + item + \":\" + total);\n");
            s.append("            } else {\n");
            s.append("                counts.merge(String.valueOf(item), i, Integer::sum);\n");
            s.append("            }\n");
            s.append("            total += data[i % data.length];\n");
            s.append("        }\n");
            s.append("        Map<Boolean, List<String>> parts = out.stream()\n");
            s.append("            .filter(x -> x.length() > ").append(m).append(")\n");
            s.append("            .map(x -> x.toUpperCase(Locale.ROOT) + \"-m").append(m).append("\")\n");
            s.append("            .collect(Collectors.partitioningBy(x -> x.hashCode() % 2 == 0));\n");
            s.append("        names.addAll(parts.get(Boolean.TRUE));\n");
            s.append("        Function<String, Integer> len = String::length;\n");
            s.append("        BiFunction<Integer, Integer, Integer> add = (a, b) -> a + b + ").append(m).append(";\n");
            s.append("        int sum = 0;\n");
            s.append("        for (String x : parts.get(Boolean.FALSE)) {\n");
            s.append("            sum = add.apply(sum, len.apply(x));\n");
            s.append("        }\n");
            s.append("        switch (sum % 4) {\n");
            s.append("            case 0: out.add(\"zero ").append(n).append('.').append(m).append("\"); break;\n");
            s.append("            case 1: out.add(\"one ").append(n).append('.').append(m).append("\"); break;\n");
            s.append("            default: out.add(\"many ").append(n).append('.').append(m).append("\");\n");
            s.append("        }\n");
            s.append("        if (peer != null) {\n");
            s.append("            out.addAll(peer.names());\n");
            s.append("        }\n");
            s.append("        return out;\n");
            s.append("    }\n\n");
        }

        s.append("    public List<String> names() {\n");
        s.append("        return Collections.unmodifiableList(names);\n");
        s.append("    }\n\n");

        // a nested generic class with a generic method
        s.append("    public static final class Node<K extends Comparable<K>, V> {\n");
        s.append("        final K key;\n");
        s.append("        final V val;\n");
        s.append("        Node<K, V> left, right;\n\n");
        s.append("        Node(K key, V val) {\n");
        s.append("            this.key = key;\n");
        s.append("            this.val = val;\n");
        s.append("        }\n\n");
        s.append("        <U> Optional<U> find(K k, Function<? super V, ? extends U> f) {\n");
        s.append("            int c = k.compareTo(key);\n");
        s.append("            if (c == 0) return Optional.ofNullable(f.apply(val));\n");
        s.append("            Node<K, V> child = c < 0 ? left : right;\n");
        s.append("            return child == null ? Optional.empty() : child.find(k, f);\n");
        s.append("        }\n");
        s.append("    }\n");
        s.append("}\n");
        return s.toString();
    }

    /** Writes count generated sources under dir and returns their files. */
    static List<File> generate(Path dir, int count) throws IOException {
        List<File> files = new ArrayList<>(count);
        for (int n = 0; n < count; n++) {
            Path pkg = dir.resolve(packageOf(n).replace('.', File.separatorChar));
            Files.createDirectories(pkg);
            Path file = pkg.resolve("C" + n + ".java");
            Files.writeString(file, source(n, count), StandardCharsets.UTF_8);
            files.add(file.toFile());
        }
        return files;
    }

    static void deleteTree(Path dir) throws IOException {
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    static double seconds(long startNanos) {
        return (System.nanoTime() - startNanos) / 1e9;
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 1 || args.length > 2) {
            System.err.println("usage: java -Xmx4g BigHeap OUT.hprof [SCALE]");
            System.exit(2);
        }
        File out = new File(args[0]);
        int scale = args.length > 1 ? Integer.parseInt(args[1]) : 1;
        if (scale < 1) {
            System.err.println("BigHeap: SCALE must be >= 1");
            System.exit(2);
        }
        JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
        if (compiler == null) {
            System.err.println("BigHeap: no system Java compiler (run with a JDK, not a JRE)");
            System.exit(1);
        }

        long t0 = System.nanoTime();
        int count = FILES_PER_SCALE * scale;
        Path dir = Files.createTempDirectory("bigheap-src");
        try {
            List<File> files = generate(dir, count);
            double genSeconds = seconds(t0);

            // Compile: parse + enter + attribute + flow, but write no classes.
            long t1 = System.nanoTime();
            DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
            StandardJavaFileManager fm = compiler.getStandardFileManager(diagnostics, Locale.ROOT,
                                                                         StandardCharsets.UTF_8);
            Iterable<? extends JavaFileObject> units = fm.getJavaFileObjectsFromFiles(files);
            List<String> options = List.of("-proc:none", "-Xlint:none", "-nowarn");
            JavacTask task = (JavacTask) compiler.getTask(null, fm, diagnostics, options, null, units);
            Iterable<? extends CompilationUnitTree> trees = task.parse();
            task.analyze();
            double compileSeconds = seconds(t1);
            for (Diagnostic<? extends JavaFileObject> d : diagnostics.getDiagnostics()) {
                if (d.getKind() == Diagnostic.Kind.ERROR) {
                    System.err.println("BigHeap: javac error: " + d);
                    System.exit(1);
                }
            }

            // Dump while javac's trees, symbols and types are still reachable.
            long t2 = System.nanoTime();
            out.delete();                // dumpHeap refuses to overwrite
            HotSpotDiagnosticMXBean bean =
                ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
            bean.dumpHeap(out.getPath(), true);
            double dumpSeconds = seconds(t2);

            // Use the compiler state after the dump so it stays live until here.
            int unitCount = 0;
            for (CompilationUnitTree unused : trees) {
                unitCount++;
            }
            System.err.printf(Locale.ROOT,
                "BigHeap: scale=%d files=%d units=%d generate=%.1fs compile=%.1fs dump=%.1fs "
                + "total=%.1fs dump_bytes=%d (%s)%n",
                scale, count, unitCount, genSeconds, compileSeconds, dumpSeconds, seconds(t0),
                out.length(), task.getClass().getSimpleName());
            fm.close();
        } finally {
            deleteTree(dir);
        }
    }
}
