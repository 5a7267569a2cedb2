/*
 * AllocHold - what recording allocations costs in memory per recorded object
 * still alive (bench/alloc.sh, "memory"): allocates N small objects (one int
 * field: 16 bytes each with compressed oops) and keeps them all, in one
 * array allocated first, runs a full GC, prints "held N rss KB" (VmRSS from
 * /proc/self/status) and exits (an agent with HEAPSH_AGENT_DEBUG=1 then logs
 * the size of its tables).
 *
 * Usage: java AllocHold N
 */
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Paths;

public final class AllocHold {
    static final class Item {
        int v;

        Item(int v) {
            this.v = v;
        }
    }

    private AllocHold() {
    }

    static long rssKb() throws IOException {
        for (String l : Files.readAllLines(Paths.get("/proc/self/status"))) {
            if (l.startsWith("VmRSS:")) {
                return Long.parseLong(l.replaceAll("[^0-9]", ""));
            }
        }
        return -1;
    }

    public static void main(String[] args) throws IOException {
        int n = Integer.parseInt(args[0]);
        Item[] held = new Item[n];
        for (int i = 0; i < n; i++) {
            held[i] = new Item(i);
        }
        System.gc();
        System.out.println("held " + held.length + " rss " + rssKb());
        System.out.flush();
    }
}
