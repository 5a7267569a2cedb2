/*
 * LuaHeap - a heap with known duplicate strings, empty and sparse
 * collections, one accumulation point and classes that grow, shrink or stay
 * put between three dumps: the test heap of the ready Lua scripts in lua/
 * (tests/t_lua.sh).
 *
 * Usage:
 *   java -cp DIR LuaHeap dump PREFIX
 *       Build the heap, then three times: apply the step's changes (below)
 *       and write PREFIX-1.hprof, PREFIX-2.hprof, PREFIX-3.hprof with
 *       HotSpotDiagnosticMXBean.dumpHeap(FILE, true) (live objects only; a
 *       full GC runs first); exit 0. Existing files are replaced.
 *
 * All classes are in the default package, so their HPROF names are simple
 * ("LuaList", "LuaEntry", ...), and every collection planted here is an
 * instance of a subclass of its java.util class, so that no JDK collection
 * is counted with it. Everything below is reachable from static fields of
 * class LuaHeap. Allocation is deterministic: the same facts hold for every
 * run.
 *
 * KNOWN FACTS (tests assert these; keep this list in sync with the code)
 *
 * Duplicate strings: static String[] LuaHeap.dups (length 54) holds
 *   40 copies of "dup-40", 7 copies of "dup-7" and 3 copies of "long-"
 *   followed by 95 'x' (100 characters): every one of these copies is its
 *   own java.lang.String with its own byte[] value (built at run time by
 *   string concatenation; no literal has any of these texts), so each text's
 *   copies all have the same size; and 4 copies of "shared-4" that share ONE
 *   byte[] value (new String(s) keeps s's array). No other String in the
 *   heap has any of these texts.
 *
 * Collections (all empty ones and all under 25% of their capacity are
 * listed; "empty" means size 0):
 *   class            extends                  instances
 *   LuaList          java.util.ArrayList      69: 30 empty, new LuaList(10)
 *                                             (elementData Object[10]); 5
 *                                             empty, new LuaList(0), sharing
 *                                             the JDK's empty Object[0]; 20
 *                                             with capacity 100 and 5
 *                                             elements; 4 with capacity 8
 *                                             and 2 elements (25% exactly);
 *                                             10 with capacity 4 and 4
 *                                             elements (full)
 *   LuaMap           java.util.HashMap        20: 8 empty, table null (never
 *                                             used); 12 with 1 entry (table
 *                                             HashMap$Node[16])
 *   LuaLinkedMap     java.util.LinkedHashMap  2: 1 entry each (table
 *                                             HashMap$Node[16])
 *   LuaSet           java.util.HashSet        5: empty, but once used: one
 *                                             add then clear(), so the map's
 *                                             table is a HashMap$Node[16]
 *   LuaDeque         java.util.ArrayDeque     7: 4 empty, new LuaDeque()
 *                                             (the JDK's default elements
 *                                             array, 17 slots in JDK 17); 3
 *                                             with 2 elements added by
 *                                             addFirst, so that head has
 *                                             wrapped around past tail
 *   LuaVector        java.util.Vector         6: empty, new LuaVector()
 *                                             (elementData Object[10])
 *   LuaConcMap       ConcurrentHashMap        5: 2 empty, table null; 3 with
 *                                             1 entry (table of 16 slots)
 *   Every backing array above belongs to its collection alone, except the
 *   shared Object[0] of the 5 LuaList(0). The elements
 *   and keys are the one Object LuaHeap.ELEM and Integers.
 *
 * Accumulation point: static LuaCache LuaHeap.cache -> LuaCache.region (the
 *   only LuaRegion) -> LuaRegion.entries (a java.util.ArrayList made with
 *   new ArrayList<>(20000), 20000 elements) -> its elementData, an Object[]
 *   of length 20000 -> 20000 LuaEntry { long key; byte[] payload =
 *   new byte[200]; }, key = 0..19999. Nothing else references any of them.
 *   So class LuaHeap, dominated directly by the GC roots, retains more than
 *   half of the heap; the cache holds more than 90% of what class LuaHeap
 *   retains, and the dominator tree goes down one object at a time (cache,
 *   region, ArrayList, Object[20000]) to the Object[20000], whose dominator
 *   children are the 20000 LuaEntry, none holding more than 0.01% of it.
 *
 * A near miss: static LuaPair LuaHeap.pair, LuaPair { byte[] big =
 *   new byte[30000]; byte[] small = new byte[10000]; }, nothing else
 *   referencing them: big holds less than 80% (about 75%) of what the pair
 *   retains, so the pair is its own accumulation point.
 *
 * Steps, one before each dump (counts in dump 1, 2, 3):
 *   LuaGrowing { long n; }   1000, 2000, 3000 (1000 more each step; held in
 *                            static ArrayList<LuaGrowing> LuaHeap.growing)
 *   LuaShrinking { int n; }  300, 200, 100 (held in the static
 *                            ArrayList<LuaShrinking> LuaHeap.shrinking)
 *   LuaSteady { int n; }     50, 50, 50 (static LuaSteady[] LuaHeap.steady)
 *   LuaBumpy { int n; }      10, 30, 20 (static ArrayList<LuaBumpy>
 *                            LuaHeap.bumpy)
 *   Nothing else of ours changes between the dumps.
 *
 * Everything else in the dumps belongs to the JDK (counts of JDK classes are
 * not exact and vary between runs: tests must not hard-code them).
 */

import com.sun.management.HotSpotDiagnosticMXBean;
import java.io.File;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Vector;
import java.util.concurrent.ConcurrentHashMap;

class LuaList extends ArrayList<Object> {
    LuaList(int capacity) {
        super(capacity);
    }
}

class LuaMap extends HashMap<Object, Object> {
}

class LuaLinkedMap extends LinkedHashMap<Object, Object> {
}

class LuaSet extends HashSet<Object> {
}

class LuaDeque extends ArrayDeque<Object> {
}

class LuaVector extends Vector<Object> {
}

class LuaConcMap extends ConcurrentHashMap<Object, Object> {
}

class LuaEntry {
    long key;
    byte[] payload = new byte[200];
}

class LuaRegion {
    ArrayList<LuaEntry> entries = new ArrayList<>(20000);
}

class LuaCache {
    LuaRegion region = new LuaRegion();
}

class LuaPair {
    byte[] big = new byte[30000];
    byte[] small = new byte[10000];
}

class LuaGrowing {
    long n;
}

class LuaShrinking {
    int n;
}

class LuaSteady {
    int n;
}

class LuaBumpy {
    int n;
}

public class LuaHeap {
    static final Object ELEM = new Object();
    static String[] dups;
    static LuaList[] lists;
    static LuaMap[] maps;
    static LuaLinkedMap[] linkedMaps;
    static LuaSet[] sets;
    static LuaDeque[] deques;
    static LuaVector[] vectors;
    static LuaConcMap[] concMaps;
    static LuaCache cache;
    static LuaPair pair = new LuaPair();
    static ArrayList<LuaGrowing> growing = new ArrayList<>();
    static ArrayList<LuaShrinking> shrinking = new ArrayList<>();
    static LuaSteady[] steady;
    static ArrayList<LuaBumpy> bumpy = new ArrayList<>();

    /** Allocates everything the comment at the top lists, but the steps. */
    static void build() {
        dups = new String[54];
        int d = 0;
        for (int k = 0; k < 40; k++) {
            dups[d++] = "dup-" + forty();
        }
        for (int k = 0; k < 7; k++) {
            dups[d++] = "dup-" + (forty() - 33);
        }
        String xs = "x".repeat(95);
        for (int k = 0; k < 3; k++) {
            dups[d++] = "long-" + xs;
        }
        String shared = "shared-" + (forty() - 36);
        dups[d++] = shared;
        for (int k = 0; k < 3; k++) {
            dups[d++] = new String(shared);
        }

        lists = new LuaList[69];
        int l = 0;
        for (int k = 0; k < 30; k++) {
            lists[l++] = new LuaList(10);
        }
        for (int k = 0; k < 5; k++) {
            lists[l++] = new LuaList(0);
        }
        for (int k = 0; k < 20; k++) {
            LuaList list = new LuaList(100);
            for (int e = 0; e < 5; e++) {
                list.add(ELEM);
            }
            lists[l++] = list;
        }
        for (int k = 0; k < 4; k++) {
            LuaList list = new LuaList(8);
            list.add(ELEM);
            list.add(ELEM);
            lists[l++] = list;
        }
        for (int k = 0; k < 10; k++) {
            LuaList list = new LuaList(4);
            for (int e = 0; e < 4; e++) {
                list.add(ELEM);
            }
            lists[l++] = list;
        }

        maps = new LuaMap[20];
        for (int k = 0; k < 8; k++) {
            maps[k] = new LuaMap();
        }
        for (int k = 8; k < 20; k++) {
            maps[k] = new LuaMap();
            maps[k].put(k, ELEM);
        }
        linkedMaps = new LuaLinkedMap[2];
        for (int k = 0; k < 2; k++) {
            linkedMaps[k] = new LuaLinkedMap();
            linkedMaps[k].put(k, ELEM);
        }
        sets = new LuaSet[5];
        for (int k = 0; k < 5; k++) {
            sets[k] = new LuaSet();
            sets[k].add(k);
            sets[k].clear();
        }
        deques = new LuaDeque[7];
        for (int k = 0; k < 7; k++) {
            deques[k] = new LuaDeque();
            if (k >= 4) {
                deques[k].addFirst(ELEM);
                deques[k].addFirst(ELEM);
            }
        }
        vectors = new LuaVector[6];
        for (int k = 0; k < 6; k++) {
            vectors[k] = new LuaVector();
        }
        concMaps = new LuaConcMap[5];
        for (int k = 0; k < 5; k++) {
            concMaps[k] = new LuaConcMap();
            if (k >= 2) {
                concMaps[k].put(k, ELEM);
            }
        }

        cache = new LuaCache();
        for (int k = 0; k < 20000; k++) {
            LuaEntry e = new LuaEntry();
            e.key = k;
            cache.region.entries.add(e);
        }

        for (int k = 0; k < 300; k++) {
            LuaShrinking s = new LuaShrinking();
            s.n = k;
            shrinking.add(s);
        }
        steady = new LuaSteady[50];
        for (int k = 0; k < 50; k++) {
            steady[k] = new LuaSteady();
            steady[k].n = k;
        }
    }

    /** 40, from a method so that "dup-" + forty() is concatenated at run time. */
    static int forty() {
        return Integer.parseInt("40");
    }

    /** The changes before dump number step (1, 2, 3). */
    static void step(int step) {
        for (int k = 0; k < 1000; k++) {
            LuaGrowing g = new LuaGrowing();
            g.n = growing.size();
            growing.add(g);
        }
        if (step > 1) {
            for (int k = 0; k < 100; k++) {
                shrinking.remove(shrinking.size() - 1);
            }
        }
        int want = step == 1 ? 10 : step == 2 ? 30 : 20;
        while (bumpy.size() < want) {
            LuaBumpy b = new LuaBumpy();
            b.n = bumpy.size();
            bumpy.add(b);
        }
        while (bumpy.size() > want) {
            bumpy.remove(bumpy.size() - 1);
        }
    }

    static void dump(String out) throws IOException {
        File file = new File(out);
        file.delete();                  // dumpHeap refuses to overwrite
        HotSpotDiagnosticMXBean bean =
            ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
        bean.dumpHeap(file.getPath(), true);
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2 || !args[0].equals("dump")) {
            System.err.println("usage: LuaHeap dump PREFIX   (writes PREFIX-1.hprof .. PREFIX-3.hprof)");
            System.exit(2);
        }
        build();
        for (int s = 1; s <= 3; s++) {
            step(s);
            dump(args[1] + "-" + s + ".hprof");
        }
        System.exit(0);
    }
}
