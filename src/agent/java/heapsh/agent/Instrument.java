/*
 * Instrument - the class-file transformer of exact allocation recordings
 * (docs/agent.md, "Allocation recordings", "Bytecode instrumentation").
 *
 * src/agent/instrument.c calls transform() from its JVMTI ClassFileLoadHook,
 * for each class loaded or retransformed while a recording made by bytecode
 * instrumentation runs. Using ASM (Debian's libasm-java, in a class loader of
 * the agent's own), it rewrites the class so that
 *
 *  - every allocation site reports the object it made, just after it exists,
 *    to Rt.record / Rt.allocated / Rt.recordWalking (the allocation sites of
 *    seed 002, counted per site as JP and DuckTracks do, seeds 004 and 002):
 *      new C ... invokespecial C.<init>   after the constructor returns
 *      newarray, anewarray, multianewarray
 *      calls that return a new object made outside bytecode: clone() (when
 *        it ran Object.clone, which the agent decides per class),
 *        Array.newArray / multiNewArray (reflection), Unsafe.allocateInstance,
 *        the native constructor accessors (reflection), and the Java methods
 *        the JIT compilers replace by their own code (intrinsics:
 *        Arrays.copyOf / copyOfRange with a class, Unsafe.allocateUninitialized-
 *        Array0), whose own allocation sites are not instrumented instead
 *    (a lambda capturing values is made through a method handle of its
 *    class's constructor, DirectMethodHandle.allocateInstance, whose
 *    Unsafe.allocateInstance call counts it)
 *  - with --depth N above 1, every method that calls anything (outside the
 *    packages Rt itself runs) keeps its frame on the thread's stack of
 *    frames (Rt.enter on entry, after the super or this call in a
 *    constructor; its line stored in the frame before each call; the depth
 *    put back before each return and in a handler for every exception that
 *    leaves the method), and its allocation sites of a known class count in
 *    their calling context (Rt.ctxCount, ctxArray: seed 004's method call
 *    tree, per thread)
 *  - every method of an accounted class that calls anything sets the
 *    thread's current account (Rt.slot()) to its own on entry (after the
 *    super or this call in a constructor), keeping the caller's in a local
 *    variable, and puts it back before each return and in a handler for
 *    every exception that leaves the method, so that unaccounted code pays
 *    to the account of the nearest accounted frame (seed 001, definitions
 *    1-3, section 4; the principal-agent relationship).
 *
 * A site is registered with the agent (site(), a native) when its class is
 * transformed; the bytecode passes its number. Nothing is rewritten when a
 * class has no site and no accounted method that calls something (transform
 * returns null and the class is left as it is). Any failure leaves the class
 * as it is, and the agent counts it (failed()).
 *
 * Frames: allocation sites add no local variable and no branch target, so
 * the class's stack map frames stay valid. A method that sets the account
 * gets two local variables (the slot and the caller's account), which ASM's
 * LocalVariablesSorter adds to every frame of the method, and one handler
 * with a frame of its own. The operand stack grows by at most 5.
 */
package heapsh.agent;

import org.objectweb.asm.ClassReader;
import org.objectweb.asm.ClassVisitor;
import org.objectweb.asm.ClassWriter;
import org.objectweb.asm.Handle;
import org.objectweb.asm.Label;
import org.objectweb.asm.MethodVisitor;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.Type;
import org.objectweb.asm.commons.LocalVariablesSorter;

import java.util.ArrayList;
import java.util.List;

final class Instrument {
    /* Site kinds; src/agent/instrument.c has the same numbers. */
    static final int NEW = 0;           /* new C: the class is known */
    static final int ARRAY = 1;         /* newarray, anewarray: the class is known */
    static final int MULTI = 2;         /* multianewarray: the arrays inside are counted too */
    static final int DYNAMIC = 3;       /* a call's result: the class is the object's */
    static final int DYNAMIC_MULTI = 4; /* Array.multiNewArray's result */
    static final int CLONE_VIRTUAL = 5; /* x.clone(): counted when Object.clone ran */
    static final int CLONE_SPECIAL = 6; /* super.clone(): the same, resolved from the caller's superclass */

    private static final String RT = "heapsh/agent/Rt";
    private static final int ASM_MAX_VERSION = Opcodes.V20;

    private Instrument() {
    }

    /** The site's number, or -1 when the agent's tables are full (the site is then left alone). */
    static native int site(String owner, String method, String desc, String file, int line,
                           String type, int kind);

    /** The agent's number of a method, for its frames in calling contexts; -1 when its tables are full. */
    static native int method(String owner, String name, String desc, String file);

    /** The memory account of a class (internal name): 1.. for an account pattern, 0 for none. */
    static native int account(String owner);

    /** A class that could not be instrumented, and why. */
    static native void failed(String owner, String why);

    /**
     * transform: the instrumented class file of class name (internal form,
     * may be null for classes defined without a name), or null to leave it as
     * it is. accounts: whether the recording has account patterns; depth:
     * its --depth (above 1: calling contexts are kept).
     */
    static byte[] transform(String name, byte[] bytes, boolean accounts, int depth) {
        Rt.pause(1);
        try {
            return rewrite(name, bytes, accounts, depth > 1);
        } catch (Throwable t) {
            failed(name == null ? "?" : name, String.valueOf(t));
            return null;
        } finally {
            Rt.pause(-1);
        }
    }

    /*
     * allocatingCall: the kind of site a call is, or -1: the methods of the
     * JDK whose new objects are counted at their call sites. A clone() call
     * may run Object.clone or an override (which counts its own); the agent
     * tells them apart at run time (docs/agent.md).
     */
    private static int allocatingCall(int op, String owner, String name, String desc) {
        switch (name) {
            case "clone":
                if (!desc.equals("()Ljava/lang/Object;")) {
                    return -1;
                }
                return op == Opcodes.INVOKEVIRTUAL ? CLONE_VIRTUAL : op == Opcodes.INVOKESPECIAL ? CLONE_SPECIAL : -1;
            case "newArray":
                return owner.equals("java/lang/reflect/Array")
                    && desc.equals("(Ljava/lang/Class;I)Ljava/lang/Object;") ? DYNAMIC : -1;
            case "multiNewArray":
                return owner.equals("java/lang/reflect/Array")
                    && desc.equals("(Ljava/lang/Class;[I)Ljava/lang/Object;") ? DYNAMIC_MULTI : -1;
            case "allocateInstance":
                return owner.equals("jdk/internal/misc/Unsafe")
                    && desc.equals("(Ljava/lang/Class;)Ljava/lang/Object;") ? DYNAMIC : -1;
            case "newInstance0":
                return owner.startsWith("jdk/internal/reflect/")
                    && desc.equals("(Ljava/lang/reflect/Constructor;[Ljava/lang/Object;)Ljava/lang/Object;")
                    ? DYNAMIC : -1;
            default:
                return intrinsic(owner, name, desc) ? DYNAMIC : -1;
        }
    }

    /*
     * Intrinsics that return a new object: C2 replaces their bodies with its
     * own code, so their call sites count the object and their own
     * allocation sites are not instrumented.
     */
    private static boolean intrinsic(String owner, String name, String desc) {
        switch (name) {
            case "copyOf":
                return owner.equals("java/util/Arrays")
                    && desc.equals("([Ljava/lang/Object;ILjava/lang/Class;)[Ljava/lang/Object;");
            case "copyOfRange":
                return owner.equals("java/util/Arrays")
                    && desc.equals("([Ljava/lang/Object;IILjava/lang/Class;)[Ljava/lang/Object;");
            case "allocateUninitializedArray0":
                return owner.equals("jdk/internal/misc/Unsafe")
                    && desc.equals("(Ljava/lang/Class;I)Ljava/lang/Object;");
            default:
                return false;
        }
    }

    /*
     * The classes Rt.slot and Rt.allocated run (ThreadLocal's): their sites
     * report through Rt.recordWalking, and the packages whose methods never
     * set the account (Rt.slot would call back into them).
     */
    private static boolean walkingClass(String owner) {
        return owner.equals("java/lang/ThreadLocal") || owner.startsWith("java/lang/ThreadLocal$");
    }

    private static boolean noAccountStack(String owner) {
        String pkg = owner.lastIndexOf('/') < 0 ? "" : owner.substring(0, owner.lastIndexOf('/'));
        return pkg.equals("java/lang") || pkg.equals("java/lang/ref") || pkg.equals("jdk/internal/misc")
            || owner.startsWith("heapsh/agent/");
    }

    /*
     * What the first, quick pass finds in each method, in class-file order.
     * "Calls something" counts only the calls a frame pushed on entry would
     * be under: in a constructor, those after its super(...) or this(...)
     * call (the frame and the account are entered there), so that the
     * common constructor that only calls super() and sets fields pushes no
     * frame; its sites count as a callee's of the frame below (as a method
     * that calls nothing does), which names the same calling context.
     */
    private static final class Scan extends ClassVisitor {
        final List<boolean[]> methods = new ArrayList<>();  /* {has a site, calls something} */
        boolean anySite, anyCall;

        Scan() {
            super(Opcodes.ASM9);
        }

        @Override
        public MethodVisitor visitMethod(int access, String name, String desc, String sig, String[] ex) {
            boolean[] m = new boolean[2];
            methods.add(m);
            boolean constructor = name.equals("<init>");
            return new MethodVisitor(Opcodes.ASM9) {
                /* A constructor's NEWs not initialized yet (their classes), until its super() or this() call. */
                final List<String> news = new ArrayList<>();
                boolean superDone = !constructor;

                private void site() {
                    m[0] = true;
                    anySite = true;
                }

                private void call() {
                    if (superDone) {
                        m[1] = true;
                        anyCall = true;
                    }
                }

                @Override
                public void visitTypeInsn(int op, String type) {
                    if (op == Opcodes.NEW || op == Opcodes.ANEWARRAY) {
                        site();
                    }
                    if (op == Opcodes.NEW && !superDone) {
                        news.add(type);
                    }
                }

                @Override
                public void visitIntInsn(int op, int operand) {
                    if (op == Opcodes.NEWARRAY) {
                        site();
                    }
                }

                @Override
                public void visitMultiANewArrayInsn(String desc2, int dims) {
                    site();
                }

                @Override
                public void visitMethodInsn(int op, String owner, String mname, String mdesc, boolean itf) {
                    call();
                    if (!superDone && op == Opcodes.INVOKESPECIAL && mname.equals("<init>")) {
                        /* As Method.visitMethodInsn tells the super() call from a NEW's. */
                        if (!news.isEmpty() && news.get(news.size() - 1).equals(owner)) {
                            news.remove(news.size() - 1);
                        } else {
                            superDone = true;
                        }
                    }
                    if (allocatingCall(op, owner, mname, mdesc) >= 0) {
                        site();
                    }
                }

                @Override
                public void visitInvokeDynamicInsn(String mname, String mdesc, Handle bsm, Object... args) {
                    call();
                }
            };
        }
    }

    private static byte[] rewrite(String name, byte[] bytes, boolean accounts, boolean contexts) {
        if (name == null || name.startsWith("heapsh/agent/") || bytes.length < 8) {
            return null;
        }
        int version = ((bytes[6] & 0xff) << 8) | (bytes[7] & 0xff);
        byte[] input = bytes;
        if (version > ASM_MAX_VERSION) {
            /* ASM 9.4 reads up to Java 20; later class files differ in nothing it rewrites. */
            input = bytes.clone();
            input[6] = (byte) (ASM_MAX_VERSION >> 8);
            input[7] = (byte) ASM_MAX_VERSION;
        }
        ClassReader reader = new ClassReader(input);
        Scan scan = new Scan();
        reader.accept(scan, ClassReader.SKIP_DEBUG | ClassReader.SKIP_FRAMES);
        int account = accounts ? account(name) : 0;
        boolean stack = account > 0 && !noAccountStack(name) && scan.anyCall;
        boolean frames = contexts && !noAccountStack(name) && scan.anyCall;
        if (!scan.anySite && !stack && !frames) {
            return null;
        }
        ClassWriter writer = new ClassWriter(reader, 0);
        /* LocalVariablesSorter needs every frame expanded. */
        reader.accept(new Rewriter(writer, name, version, scan, accounts, account, stack, contexts, frames),
                      stack || frames ? ClassReader.EXPAND_FRAMES : 0);
        return writer.toByteArray();
    }

    private static final class Rewriter extends ClassVisitor {
        final String owner;
        final int version;
        final Scan scan;
        final boolean accounts, stack, contexts, frames;
        final int account;
        String superName, file;
        int index;

        Rewriter(ClassVisitor next, String owner, int version, Scan scan, boolean accounts,
                 int account, boolean stack, boolean contexts, boolean frames) {
            super(Opcodes.ASM9, next);
            this.owner = owner;
            this.version = version;
            this.scan = scan;
            this.accounts = accounts;
            this.account = account;
            this.stack = stack;
            this.contexts = contexts;
            this.frames = frames;
        }

        @Override
        public void visit(int v, int access, String name, String sig, String sup, String[] itfs) {
            superName = sup;
            super.visit(version, access, name, sig, sup, itfs);   /* the class's own version */
        }

        @Override
        public void visitSource(String source, String debug) {
            file = source;
            super.visitSource(source, debug);
        }

        @Override
        public MethodVisitor visitMethod(int access, String name, String desc, String sig, String[] ex) {
            MethodVisitor mv = super.visitMethod(access, name, desc, sig, ex);
            boolean[] m = index < scan.methods.size() ? scan.methods.get(index) : new boolean[2];
            index++;
            boolean sites = m[0] && !intrinsic(owner, name, desc);
            boolean code = m[1] && (access & (Opcodes.ACC_ABSTRACT | Opcodes.ACC_NATIVE)) == 0;
            boolean keep = stack && code;
            int mid = frames && code && mv != null ? method(owner, name, desc, file) : -1;
            if (mv == null || (!sites && !keep && mid < 0)) {
                return mv;
            }
            Slots slots = keep || mid >= 0 ? new Slots(access, desc, mv) : null;
            return new Method(slots != null ? slots : mv, this, name, desc, sites, slots, keep, mid);
        }
    }

    /* Adds local variables to a method, remapping its own and its frames. */
    private static final class Slots extends LocalVariablesSorter {
        Slots(int access, String desc, MethodVisitor next) {
            super(Opcodes.ASM9, access, desc, next);
        }

        /* The visitor after the remapping, for the added variables' own instructions. */
        MethodVisitor raw() {
            return mv;
        }
    }

    /* A NEW waiting for its constructor call. */
    private static final class Pending {
        final String type;
        final int line;
        boolean dup;    /* a DUP follows the NEW: the object is on the stack after <init> */

        Pending(String type, int line) {
            this.type = type;
            this.line = line;
        }
    }

    private static final class Method extends MethodVisitor {
        final Rewriter cls;
        final String name, desc;
        final boolean sites, keep, constructor;
        final int mid;          /* the method's number for its frame (--depth above 1), -1: no frame */
        final Slots slots;      /* keep or a frame: the local variables added */
        int slotVar, savedVar;  /* keep: Rt.slot() and the caller's account */
        int stackVar, depthVar, lineVar;  /* a frame: Rt.enter()'s stack, the caller's depth, the frame's line index */
        final List<Pending> pending = new ArrayList<>();
        Pending justNew;        /* the NEW just visited, until the next instruction */
        int line = -1;
        boolean started;        /* the account stack is entered (after super() in a constructor) */
        boolean superDone;
        final Label start = new Label(), end = new Label(), handler = new Label();

        Method(MethodVisitor next, Rewriter cls, String name, String desc, boolean sites, Slots slots,
               boolean keep, int mid) {
            super(Opcodes.ASM9, next);
            this.cls = cls;
            this.name = name;
            this.desc = desc;
            this.sites = sites;
            this.slots = slots;
            this.keep = keep;
            this.mid = mid;
            this.constructor = name.equals("<init>");
        }

        /* Whether the method sets anything on entry and puts it back on the way out. */
        private boolean wraps() {
            return keep || mid >= 0;
        }

        @Override
        public void visitCode() {
            super.visitCode();
            /*
             * Made and given a value first, so that every frame may name
             * them, even before a constructor's super() call.
             */
            if (keep) {
                slotVar = slots.newLocal(Type.getType("[I"));
                savedVar = slots.newLocal(Type.INT_TYPE);
                super.visitInsn(Opcodes.ACONST_NULL);
                slots.raw().visitVarInsn(Opcodes.ASTORE, slotVar);
                super.visitInsn(Opcodes.ICONST_0);
                slots.raw().visitVarInsn(Opcodes.ISTORE, savedVar);
            }
            if (mid >= 0) {
                stackVar = slots.newLocal(Type.getType("[J"));
                depthVar = slots.newLocal(Type.INT_TYPE);
                lineVar = slots.newLocal(Type.INT_TYPE);
                super.visitInsn(Opcodes.ACONST_NULL);
                slots.raw().visitVarInsn(Opcodes.ASTORE, stackVar);
                super.visitInsn(Opcodes.ICONST_0);
                slots.raw().visitVarInsn(Opcodes.ISTORE, depthVar);
                super.visitInsn(Opcodes.ICONST_1);
                slots.raw().visitVarInsn(Opcodes.ISTORE, lineVar);
            }
        }

        /*
         * Called before any code is visited (so after the method's own
         * try-catch blocks, which must come first in the exception table):
         * enter the account stack, except in a constructor, where that
         * waits for the super() or this() call.
         */
        private void begin() {
            if (wraps() && !started && !constructor) {
                enter();
            }
        }

        /*
         * enter: the caller's account saved, this class's set; the frame
         * pushed (the caller's depth saved); the handler's range begins.
         */
        private void enter() {
            started = true;
            MethodVisitor raw = slots.raw();
            if (keep) {
                super.visitMethodInsn(Opcodes.INVOKESTATIC, RT, "slot", "()[I", false);
                super.visitInsn(Opcodes.DUP);
                raw.visitVarInsn(Opcodes.ASTORE, slotVar);
                super.visitInsn(Opcodes.ICONST_0);
                super.visitInsn(Opcodes.IALOAD);
                raw.visitVarInsn(Opcodes.ISTORE, savedVar);
                raw.visitVarInsn(Opcodes.ALOAD, slotVar);
                super.visitInsn(Opcodes.ICONST_0);
                push(cls.account);
                super.visitInsn(Opcodes.IASTORE);
            }
            if (mid >= 0) {
                push(mid);
                super.visitMethodInsn(Opcodes.INVOKESTATIC, RT, "enter", "(I)[J", false);
                super.visitInsn(Opcodes.DUP);
                raw.visitVarInsn(Opcodes.ASTORE, stackVar);
                super.visitInsn(Opcodes.ICONST_3);
                super.visitInsn(Opcodes.LALOAD);
                super.visitInsn(Opcodes.L2I);
                raw.visitVarInsn(Opcodes.ISTORE, lineVar);
                raw.visitVarInsn(Opcodes.ALOAD, stackVar);
                super.visitInsn(Opcodes.ICONST_4);
                super.visitInsn(Opcodes.LALOAD);
                super.visitInsn(Opcodes.L2I);
                raw.visitVarInsn(Opcodes.ISTORE, depthVar);
            }
            super.visitTryCatchBlock(start, end, handler, null);
            super.visitLabel(start);
        }

        /* leave: the caller's account and depth back. */
        private void leave() {
            MethodVisitor raw = slots.raw();
            if (keep) {
                raw.visitVarInsn(Opcodes.ALOAD, slotVar);
                super.visitInsn(Opcodes.ICONST_0);
                raw.visitVarInsn(Opcodes.ILOAD, savedVar);
                super.visitInsn(Opcodes.IASTORE);
            }
            if (mid >= 0) {
                raw.visitVarInsn(Opcodes.ALOAD, stackVar);
                super.visitInsn(Opcodes.ICONST_0);
                raw.visitVarInsn(Opcodes.ILOAD, depthVar);
                super.visitInsn(Opcodes.I2L);
                super.visitInsn(Opcodes.LASTORE);
            }
        }

        /* callLine: before a call, the frame's line is the call's. */
        private void callLine() {
            if (mid >= 0 && started) {
                MethodVisitor raw = slots.raw();
                raw.visitVarInsn(Opcodes.ALOAD, stackVar);
                raw.visitVarInsn(Opcodes.ILOAD, lineVar);
                push(line < 0 ? 0 : line);
                super.visitInsn(Opcodes.I2L);
                super.visitInsn(Opcodes.LASTORE);
            }
        }

        private void push(int v) {
            if (v >= -1 && v <= 5) {
                super.visitInsn(Opcodes.ICONST_0 + v);
            } else if (v >= Byte.MIN_VALUE && v <= Byte.MAX_VALUE) {
                super.visitIntInsn(Opcodes.BIPUSH, v);
            } else if (v >= Short.MIN_VALUE && v <= Short.MAX_VALUE) {
                super.visitIntInsn(Opcodes.SIPUSH, v);
            } else {
                super.visitLdcInsn(v);
            }
        }

        /*
         * report: the object on top of the stack was allocated at a new site
         * of this kind. Objects of a known class and arrays are counted in
         * Rt (count, array: Java counters per thread); the rest, whose class
         * or arrays inside only the agent can find, go to its natives.
         */
        private void report(String type, int kind, int atLine) {
            int site = site(cls.owner, name, desc, cls.file, atLine, type, kind);
            if (site < 0) {
                return;
            }
            boolean here = cls.accounts && cls.account == 0;   /* the slot's account pays */
            if (cls.contexts && !walkingClass(cls.owner) && kind != NEW && kind != ARRAY) {
                super.visitInsn(Opcodes.DUP);
                push(site);
                push(here ? -1 : cls.account);
                push(mid >= 0 && started ? 1 : 0);
                super.visitMethodInsn(Opcodes.INVOKESTATIC, RT, "ctxDynamic", "(Ljava/lang/Object;III)V", false);
            } else if (cls.contexts && !walkingClass(cls.owner)) {
                int pushed = mid >= 0 && started ? 1 : 0;
                super.visitInsn(Opcodes.DUP);
                if (kind == ARRAY) {
                    super.visitInsn(Opcodes.DUP);
                    super.visitInsn(Opcodes.ARRAYLENGTH);
                }
                push(site);
                push(here ? -1 : cls.account);
                if (kind == ARRAY) {
                    push(element(type));
                }
                push(pushed);
                super.visitMethodInsn(Opcodes.INVOKESTATIC, RT, kind == NEW ? "ctxCount" : "ctxArray",
                                      kind == NEW ? "(Ljava/lang/Object;III)V" : "(Ljava/lang/Object;IIIII)V", false);
            } else if (cls.contexts && kind == NEW) {
                super.visitInsn(Opcodes.DUP);
                push(site);
                super.visitMethodInsn(Opcodes.INVOKESTATIC, RT, "ctxCountWalking", "(Ljava/lang/Object;I)V", false);
            } else if (cls.contexts && kind == ARRAY) {
                super.visitInsn(Opcodes.DUP);
                super.visitInsn(Opcodes.DUP);
                super.visitInsn(Opcodes.ARRAYLENGTH);
                push(site);
                push(element(type));
                super.visitMethodInsn(Opcodes.INVOKESTATIC, RT, "ctxArrayWalking", "(Ljava/lang/Object;III)V", false);
            } else if (walkingClass(cls.owner) && kind == NEW) {
                super.visitInsn(Opcodes.DUP);
                push(site);
                super.visitMethodInsn(Opcodes.INVOKESTATIC, RT, "countWalking", "(Ljava/lang/Object;I)V", false);
            } else if (walkingClass(cls.owner) && kind == ARRAY) {
                super.visitInsn(Opcodes.DUP);
                super.visitInsn(Opcodes.DUP);
                super.visitInsn(Opcodes.ARRAYLENGTH);
                push(site);
                push(element(type));
                super.visitMethodInsn(Opcodes.INVOKESTATIC, RT, "arrayWalking", "(Ljava/lang/Object;III)V", false);
            } else if (walkingClass(cls.owner)) {
                super.visitInsn(Opcodes.DUP);
                push(site);
                super.visitMethodInsn(Opcodes.INVOKESTATIC, RT, "recordWalking", "(Ljava/lang/Object;I)V", false);
            } else if (kind == NEW) {
                super.visitInsn(Opcodes.DUP);
                push(site);
                if (here) {
                    super.visitMethodInsn(Opcodes.INVOKESTATIC, RT, "countHere", "(Ljava/lang/Object;I)V", false);
                } else {
                    push(cls.account);
                    super.visitMethodInsn(Opcodes.INVOKESTATIC, RT, "count", "(Ljava/lang/Object;II)V", false);
                }
            } else if (kind == ARRAY) {
                super.visitInsn(Opcodes.DUP);
                super.visitInsn(Opcodes.DUP);
                super.visitInsn(Opcodes.ARRAYLENGTH);
                push(site);
                if (here) {
                    push(element(type));
                    super.visitMethodInsn(Opcodes.INVOKESTATIC, RT, "arrayHere", "(Ljava/lang/Object;III)V", false);
                } else {
                    push(cls.account);
                    push(element(type));
                    super.visitMethodInsn(Opcodes.INVOKESTATIC, RT, "array", "(Ljava/lang/Object;IIII)V", false);
                }
            } else {
                super.visitInsn(Opcodes.DUP);
                push(site);
                /* A site whose class is the object's passes the class on: Rt.dynamic, allocatedDynamic. */
                String dyn = kind >= DYNAMIC ? "Dynamic" : "";
                if (!here) {
                    push(cls.account);
                    super.visitMethodInsn(Opcodes.INVOKESTATIC, RT, kind >= DYNAMIC ? "dynamic" : "record",
                                          "(Ljava/lang/Object;II)V", false);
                } else {
                    super.visitMethodInsn(Opcodes.INVOKESTATIC, RT, "allocated" + dyn, "(Ljava/lang/Object;I)V", false);
                }
            }
        }

        private void instruction() {
            begin();
            justNew = null;
        }

        @Override
        public void visitLabel(Label label) {
            begin();
            super.visitLabel(label);
        }

        @Override
        public void visitLineNumber(int l, Label label) {
            line = l;
            super.visitLineNumber(l, label);
        }

        @Override
        public void visitFrame(int type, int nLocal, Object[] local, int nStack, Object[] stk) {
            begin();
            super.visitFrame(type, nLocal, local, nStack, stk);
        }

        @Override
        public void visitInsn(int op) {
            Pending p = justNew;
            instruction();
            if (op == Opcodes.DUP && p != null) {
                p.dup = true;
            }
            if (started && op >= Opcodes.IRETURN && op <= Opcodes.RETURN) {
                leave();
            }
            super.visitInsn(op);
        }

        @Override
        public void visitIntInsn(int op, int operand) {
            instruction();
            super.visitIntInsn(op, operand);
            if (op == Opcodes.NEWARRAY && sites) {
                report(primitiveArray(operand), ARRAY, line);
            }
        }

        @Override
        public void visitTypeInsn(int op, String type) {
            instruction();
            super.visitTypeInsn(op, type);
            if (op == Opcodes.NEW && sites) {
                Pending p = new Pending(type, line);
                pending.add(p);
                justNew = p;
            } else if (op == Opcodes.ANEWARRAY && sites) {
                report("[" + (type.startsWith("[") ? type : "L" + type + ";"), ARRAY, line);
            }
        }

        @Override
        public void visitMultiANewArrayInsn(String d, int dims) {
            instruction();
            super.visitMultiANewArrayInsn(d, dims);
            if (sites) {
                report(d, MULTI, line);
            }
        }

        @Override
        public void visitMethodInsn(int op, String owner, String mname, String mdesc, boolean itf) {
            instruction();
            callLine();
            super.visitMethodInsn(op, owner, mname, mdesc, itf);
            if (op == Opcodes.INVOKESPECIAL && mname.equals("<init>")) {
                Pending p = pending.isEmpty() ? null : pending.get(pending.size() - 1);
                if (p != null && p.type.equals(owner)) {
                    pending.remove(pending.size() - 1);
                    if (p.dup) {
                        report("L" + owner + ";", NEW, p.line);
                    }
                } else if (constructor && !superDone) {
                    /* super(...) or this(...): the object under construction is initialized */
                    superDone = true;
                    pending.clear();
                    if (wraps() && !started) {
                        enter();
                    }
                } else {
                    pending.clear();   /* code javac does not write: leave its NEWs alone */
                }
            } else if (sites) {
                int kind = allocatingCall(op, owner, mname, mdesc);
                if (kind >= 0) {
                    report(null, kind, line);
                }
            }
        }

        @Override
        public void visitInvokeDynamicInsn(String mname, String mdesc, Handle bsm, Object... args) {
            instruction();
            callLine();
            super.visitInvokeDynamicInsn(mname, mdesc, bsm, args);
        }

        @Override
        public void visitFieldInsn(int op, String owner, String fname, String fdesc) {
            instruction();
            super.visitFieldInsn(op, owner, fname, fdesc);
        }

        @Override
        public void visitVarInsn(int op, int var) {
            instruction();
            super.visitVarInsn(op, var);
        }

        @Override
        public void visitJumpInsn(int op, Label label) {
            instruction();
            super.visitJumpInsn(op, label);
        }

        @Override
        public void visitLdcInsn(Object value) {
            instruction();
            super.visitLdcInsn(value);
        }

        @Override
        public void visitIincInsn(int var, int incr) {
            instruction();
            super.visitIincInsn(var, incr);
        }

        @Override
        public void visitTableSwitchInsn(int min, int max, Label dflt, Label... labels) {
            instruction();
            super.visitTableSwitchInsn(min, max, dflt, labels);
        }

        @Override
        public void visitLookupSwitchInsn(Label dflt, int[] keys, Label[] labels) {
            instruction();
            super.visitLookupSwitchInsn(dflt, keys, labels);
        }

        @Override
        public void visitMaxs(int maxStack, int maxLocals) {
            if (started) {
                /* Every exception leaving the method leaves its account too. */
                super.visitLabel(end);
                super.visitLabel(handler);
                if (cls.version >= Opcodes.V1_6) {
                    /* Expanded, as LocalVariablesSorter wants; it adds the two variables. */
                    super.visitFrame(Opcodes.F_NEW, 0, new Object[0], 1, new Object[] {"java/lang/Throwable"});
                }
                leave();
                super.visitInsn(Opcodes.ATHROW);
            }
            super.visitMaxs(maxStack + 6, maxLocals);
        }
    }

    /* element: the element kind of an array class (src/agent/sites.c's E_* numbers). */
    private static int element(String arrayType) {
        switch (arrayType.charAt(1)) {
            case 'Z': return 0;
            case 'B': return 1;
            case 'C': return 2;
            case 'S': return 3;
            case 'I': return 4;
            case 'F': return 5;
            case 'J': return 6;
            case 'D': return 7;
            default: return 8;
        }
    }

    private static String primitiveArray(int t) {
        switch (t) {
            case Opcodes.T_BOOLEAN: return "[Z";
            case Opcodes.T_CHAR: return "[C";
            case Opcodes.T_FLOAT: return "[F";
            case Opcodes.T_DOUBLE: return "[D";
            case Opcodes.T_BYTE: return "[B";
            case Opcodes.T_SHORT: return "[S";
            case Opcodes.T_INT: return "[I";
            default: return "[J";
        }
    }
}
