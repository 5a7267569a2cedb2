package com.acme.xml.parse;

import com.acme.util.Buffer;
import com.acme.util.Pool;

/**
 * Package com.acme.xml.parse: matched by the pattern com.acme.xml.* but not
 * by com.acme.xml. Called from AllocWork (default package, never accounted),
 * so under the accounts com.acme.web,com.acme.xml everything below goes to
 * (none). Same rules as WebHandler: no static initializer, no string
 * constants, no boxing, no string concatenation.
 */
public final class Parser {
    public static final int N_NODE = 300;
    public static final int N_INTS = 100;
    public static final int INTS_LENGTH = 37;
    public static final int N_STRS = 50;
    public static final int STRS_LENGTH = 5;
    public static final int M_BUF = 200;

    static Node[] nodes;             // all kept until release()
    static int[][] ints;
    static String[][] strs;
    static Buffer[] buffers;

    private Parser() {
    }

    /**
     * 300 Nodes in a new Node[300]; 100 int[37] in a new int[100][] (each
     * row its own newarray, not one multianewarray); 50 String[5] (all
     * null) in a new String[50][]; 200 Buffers and their Buffer[200]
     * through Pool.make. All kept.
     */
    public static void parse() {
        Node[] n = new Node[N_NODE];            // SITE com.acme.xml.parse.Node[]
        for (int i = 0; i < N_NODE; i++) {
            n[i] = new Node(i, i == 0 ? null : n[i - 1]);   // SITE com.acme.xml.parse.Node
        }
        nodes = n;

        int[][] a = new int[N_INTS][];          // SITE int[][]
        for (int i = 0; i < N_INTS; i++) {
            a[i] = new int[INTS_LENGTH];        // SITE int[]
            a[i][0] = i;
        }
        ints = a;

        String[][] s = new String[N_STRS][];    // SITE java.lang.String[][]
        for (int i = 0; i < N_STRS; i++) {
            s[i] = new String[STRS_LENGTH];     // SITE java.lang.String[]
        }
        strs = s;

        buffers = Pool.make(M_BUF);
    }

    /** Lets go of everything parse kept. */
    public static void release() {
        nodes = null;
        ints = null;
        strs = null;
        buffers = null;
    }
}
