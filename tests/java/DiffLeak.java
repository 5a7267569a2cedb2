/*
 * DiffLeak - a program whose heap is dumped twice for tests/t_diff.sh
 * (heapsh diff, issue 38): the same program at ROUNDS=1 and at ROUNDS=2.
 *
 * Usage: java -cp DIR com.acme.DiffLeak FILE ROUNDS   dump the heap to FILE
 *        java -cp DIR com.acme.DiffLeak serve        ROUNDS=1, print "ready PID",
 *            then one line of stdin at a time: "grow" leaks 2000 more Entries
 *            and prints "grew N" (N: the cache's size); "exit" (or the end of
 *            stdin) ends it. t_diff dumps it with jcmd between, as the
 *            manual's CI example does.
 *
 * KNOWN FACTS (the test's expectations):
 *   - the leak: 2000 * ROUNDS com.acme.DiffLeak$Entry in the static HashMap
 *     com.acme.DiffLeak.CACHE, each holding a byte[200] payload and a
 *     char[100] note (so neither carries 80% of an Entry's growth: the
 *     chain of growth stops at the Entry); path:
 *     class com.acme.DiffLeak -static CACHE-> java.util.HashMap -table->
 *     java.util.HashMap$Node[] -[]-> java.util.HashMap$Node -value->
 *     com.acme.DiffLeak$Entry
 *   - a look-alike that does not grow: 3000 com.acme.Stable, each with a
 *     byte[300], in the static ArrayList com.acme.DiffLeak.STABLE, bigger
 *     than the leak at ROUNDS=1 and the same at every ROUNDS;
 *   - something that shrinks: 600 / ROUNDS com.acme.Session (each a
 *     byte[64]) in the static ArrayList com.acme.DiffLeak.SESSIONS.
 *   - lambdas of com.acme.DiffLeak kept in the static LISTENERS (a hidden
 *     class whose name holds an address that changes between runs).
 *   - a tree of com.acme.TreeNode (4 children each, a byte[100] each) in
 *     the static field tree, ROUNDS + 2 levels deep: 21 nodes and 5 arrays
 *     of children at ROUNDS=1, 85 and 21 at ROUNDS=2 (a recursive
 *     structure whose depth grows: its nodes are one step of a path).
 *   - 20 * ROUNDS com.acme.DiffLeak$Blob in the static list BLOBS, each a
 *     byte[2048] (98% of its bytes: a class whose growth is its arrays').
 *   - at ROUNDS=2 a local variable of the main thread holds CACHE during the
 *     dump too (a Java frame root): the GC roots dominate the HashMap then.
 */
package com.acme;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntSupplier;

public final class DiffLeak {
    private DiffLeak() {
    }

    static final class Entry {
        final int id;
        final byte[] payload = new byte[200];
        final char[] note = new char[100];

        Entry(int id) {
            this.id = id;
        }
    }

    /** Most of a Blob is its byte[]: growth of Blobs is growth of byte[] too. */
    static final class Blob {
        final byte[] bytes = new byte[2048];
    }

    static final Map<Integer, Entry> CACHE = new HashMap<>();
    static final List<Blob> BLOBS = new ArrayList<>();
    static final List<Stable> STABLE = new ArrayList<>();
    static final List<Session> SESSIONS = new ArrayList<>();
    static final List<IntSupplier> LISTENERS = new ArrayList<>();
    static TreeNode tree;

    /** tree: a node with 4 children down to depth levels (1: a leaf). */
    static TreeNode tree(int levels) {
        TreeNode t = new TreeNode();
        if (levels > 1) {
            t.kids = new TreeNode[4];
            for (int i = 0; i < 4; i++) {
                t.kids[i] = tree(levels - 1);
            }
        }
        return t;
    }

    /** leak: n more Entries in CACHE. */
    static void leak(int n) {
        int from = CACHE.size();
        for (int i = from; i < from + n; i++) {
            CACHE.put(100000 + i, new Entry(i));
        }
    }

    public static void main(String[] args) throws Exception {
        boolean serve = args.length == 1 && args[0].equals("serve");
        if (args.length != 2 && !serve) {
            System.err.println("usage: DiffLeak FILE ROUNDS | DiffLeak serve");
            System.exit(2);
        }
        int rounds = serve ? 1 : Integer.parseInt(args[1]);
        leak(2000 * rounds);
        for (int i = 0; i < 3000; i++) {
            STABLE.add(new Stable(i));
        }
        for (int i = 0; i < 600 / rounds; i++) {
            SESSIONS.add(new Session());
        }
        tree = tree(2 + rounds);
        for (int i = 0; i < 20 * rounds; i++) {
            BLOBS.add(new Blob());
        }
        for (int i = 0; i < 10; i++) {
            final int k = i;
            LISTENERS.add(() -> k);
        }
        if (serve) {
            System.out.println("ready " + ProcessHandle.current().pid());
            java.io.BufferedReader in =
                new java.io.BufferedReader(new java.io.InputStreamReader(System.in));
            for (String line; (line = in.readLine()) != null && !line.equals("exit");) {
                if (line.equals("grow")) {
                    leak(2000);
                    System.out.println("grew " + CACHE.size());
                }
            }
            return;
        }
        // At ROUNDS=2 the main thread's frame also holds the cache while the heap is
        // dumped: the GC roots then dominate its HashMap, which the static field
        // alone dominates at ROUNDS=1 (the path must not move for that).
        Map<Integer, Entry> held = rounds == 2 ? CACHE : null;
        com.sun.management.HotSpotDiagnosticMXBean bean =
            ManagementFactory.getPlatformMXBean(com.sun.management.HotSpotDiagnosticMXBean.class);
        bean.dumpHeap(args[0], true);
        System.out.println(CACHE.size() + STABLE.size() + SESSIONS.size() + LISTENERS.size()
            + (held == null ? 0 : held.size()));
    }
}

final class Stable {
    final int id;
    final byte[] data = new byte[300];

    Stable(int id) {
        this.id = id;
    }
}

final class Session {
    final byte[] token = new byte[64];
}

final class TreeNode {
    TreeNode[] kids;
    final byte[] data = new byte[100];
}
