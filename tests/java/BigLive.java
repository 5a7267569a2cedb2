/*
 * BigLive - a heap large enough that a heapsh snapshot of it takes a while,
 * for tests/t_live.sh (the JVM is killed in the middle of a snapshot).
 *
 * Usage:
 *   java -Xmx1g -cp DIR BigLive wait [N]
 *       Allocate N Cell objects (default 2000000) in a linked structure,
 *       print "ready <pid>" on stdout, then block until a line is read from
 *       stdin or stdin is closed, then exit 0 (as KnownHeap's wait mode).
 *
 * KNOWN FACTS
 *   Exactly N instances of Cell { Cell next; int n; }: cells[k] (k = 0..N-1)
 *   has n = k, and next = the following cell in its chunk of 1000 (the last
 *   of a chunk points nowhere). The chunk heads are held by the static
 *   Cell[] BigLive.heads (length ceil(N / 1000)), so every Cell is reachable
 *   and a snapshot has to follow every one of them: its cost grows with N.
 *   With the default N a heapsh snapshot takes over a second on a 2-core
 *   machine (measured by t_live.sh, which prints the time it saw).
 */

import java.io.IOException;
import java.io.InputStream;

class Cell {
    Cell next;
    int n;
}

public class BigLive {
    static Cell[] heads;

    static void build(int n) {
        heads = new Cell[(n + 999) / 1000];
        Cell prev = null;
        for (int k = 0; k < n; k++) {
            Cell c = new Cell();
            c.n = k;
            if (k % 1000 == 0) {
                heads[k / 1000] = c;
            } else {
                prev.next = c;
            }
            prev = c;
        }
    }

    /** Blocks until a full line has been read or stdin reaches end of file. */
    static void waitForStdin() throws IOException {
        InputStream in = System.in;
        int c;
        do {
            c = in.read();
        } while (c != -1 && c != '\n');
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 1 || args.length > 2 || !args[0].equals("wait")) {
            System.err.println("usage: BigLive wait [N]");
            System.exit(2);
        }
        int n = args.length == 2 ? Integer.parseInt(args[1]) : 2_000_000;
        build(n);
        System.out.println("ready " + ProcessHandle.current().pid());
        System.out.flush();
        waitForStdin();
        System.exit(0);
    }
}
