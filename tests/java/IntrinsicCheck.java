/*
 * IntrinsicCheck - the JDK methods whose bodies the JIT compilers may replace
 * by code of their own (@IntrinsicCandidate) and that may return an object
 * their body allocates: an exact recording by bytecode instrumentation must
 * count those objects at the methods' call sites, since a compiled caller may
 * never run the body (docs/agent.md, "Exact recordings by bytecode
 * instrumentation"; src/agent/java/heapsh/agent/Instrument.java, intrinsic()).
 *
 * Usage: java -cp ASM.jar:DIR IntrinsicCheck
 *   Reads every class of the running JDK's java.base module with ASM and
 *   prints, one a line, sorted, "owner.name descriptor" of each method that
 *   is annotated @IntrinsicCandidate, is not native, returns a reference, and
 *   contains an allocation instruction (new, newarray, anewarray,
 *   multianewarray). tests/t_alloc.sh compares the list with what the agent
 *   knows about, so that a JDK with a new such intrinsic fails the test
 *   instead of being counted short in silence.
 */
import java.net.URI;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.objectweb.asm.AnnotationVisitor;
import org.objectweb.asm.ClassReader;
import org.objectweb.asm.ClassVisitor;
import org.objectweb.asm.MethodVisitor;
import org.objectweb.asm.Opcodes;

public final class IntrinsicCheck {
    private IntrinsicCheck() {
    }

    public static void main(String[] args) throws Exception {
        FileSystem jrt = FileSystems.getFileSystem(URI.create("jrt:/"));
        List<Path> files = new ArrayList<>();
        try (Stream<Path> s = Files.walk(jrt.getPath("/modules/java.base"))) {
            s.filter(p -> p.toString().endsWith(".class")).forEach(files::add);
        }
        TreeSet<String> found = new TreeSet<>();
        for (Path p : files) {
            byte[] b = Files.readAllBytes(p);
            if (((b[6] & 0xff) << 8 | (b[7] & 0xff)) > Opcodes.V20) {
                b[6] = 0;
                b[7] = (byte) Opcodes.V20;   /* ASM 9.4 reads up to Java 20; nothing else differs here */
            }
            new ClassReader(b).accept(new ClassVisitor(Opcodes.ASM9) {
                String owner;

                @Override
                public void visit(int v, int acc, String name, String sig, String sup, String[] itfs) {
                    owner = name;
                }

                @Override
                public MethodVisitor visitMethod(int acc, String name, String desc, String sig, String[] ex) {
                    boolean ref = desc.endsWith(";") || desc.charAt(desc.indexOf(')') + 1) == '[';
                    if ((acc & Opcodes.ACC_NATIVE) != 0 || !ref) {
                        return null;
                    }
                    return new MethodVisitor(Opcodes.ASM9) {
                        boolean intrinsic, allocates;

                        @Override
                        public AnnotationVisitor visitAnnotation(String d, boolean visible) {
                            intrinsic |= d.endsWith("/IntrinsicCandidate;");
                            return null;
                        }

                        @Override
                        public void visitTypeInsn(int op, String t) {
                            allocates |= op == Opcodes.NEW || op == Opcodes.ANEWARRAY;
                        }

                        @Override
                        public void visitIntInsn(int op, int x) {
                            allocates |= op == Opcodes.NEWARRAY;
                        }

                        @Override
                        public void visitMultiANewArrayInsn(String d, int n) {
                            allocates = true;
                        }

                        @Override
                        public void visitEnd() {
                            if (intrinsic && allocates) {
                                found.add(owner + "." + name + " " + desc);
                            }
                        }
                    };
                }
            }, ClassReader.SKIP_DEBUG | ClassReader.SKIP_FRAMES);
        }
        for (String f : found) {
            System.out.println(f);
        }
    }
}
