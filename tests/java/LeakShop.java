/*
 * LeakShop - a shop with four planted leaks and two correct look-alikes,
 * known by construction, for testing leak suspects (the objects that keep
 * much of the heap alive, and where the memory piles up inside them).
 *
 * The leaks (each grows with ROUNDS):
 *  1. listeners never removed: LeakShop.BUS (a LeakShop$EventBus) keeps in
 *     its CopyOnWriteArrayList `listeners` one LeakShop$SessionListener per
 *     LeakShop$Session ever opened; the listener's field `session` holds the
 *     session (its byte[] `state` and its LeakShop$Cart). Sessions are closed
 *     and leave LeakShop.OPEN, but their listeners stay on the bus.
 *  2. a ThreadLocal in pooled threads: LeakShop.CONTEXT (a ThreadLocal) gives
 *     each of the POOL worker threads a LeakShop$RequestContext whose
 *     ArrayList<byte[]> `auditTrail` gets one entry per request handled and
 *     is never cleared; the workers stay alive (parked) after their work.
 *  3. an unbounded static cache: LeakShop.PRICE_CACHE, a HashMap<String,
 *     LeakShop$Quote> that is only ever added to (unique keys "quote-N").
 *  4. a class-loader leak: each "deployment" makes a LeakShop$PluginLoader
 *     (named "plugin-loader") that defines its own copy of LeakShop$Plugin
 *     from the bytes of LeakShop$Plugin.class (it never asks its parent for
 *     that name); the class fills its static List<byte[]> BLOBS when
 *     initialized. Every deployment is undeployed again, but LeakShop.PLUGINS
 *     keeps the plugin instance each made, and through it (instance -> class
 *     -> loader) the whole loader with its class and BLOBS.
 *
 * The look-alikes (correct code; they do not grow with ROUNDS):
 *  5. a bounded LRU cache: LeakShop.LRU, a LeakShop$LruCache (a LinkedHashMap
 *     whose removeEldestEntry caps it at LRU_MAX entries); LRU_PUTS distinct
 *     keys are put, so it evicts.
 *  6. a large but legitimate catalog: LeakShop.CATALOG, a HashMap<String,
 *     LeakShop$Product> of CATALOG_SIZE products.
 *
 * Usage:
 *   java LeakShop wait [ROUNDS]       build everything (below), print
 *                                     "ready PID" on stdout, then wait until
 *                                     stdin closes or says "exit"; the
 *                                     worker threads stay parked.
 *   java LeakShop dump FILE [ROUNDS]  the same, then dump the heap to FILE
 *                                     (live objects only) and exit 0.
 * ROUNDS (default 2, at least 1) multiplies the number of leaked objects of
 * every leak, not the look-alikes: dumps at ROUNDS=1 and ROUNDS=2 show the
 * leaks doubling while the look-alikes stay the same.
 *
 * KNOWN FACTS (tests assert these; keep in sync with the code):
 *  - Listener leak: SESSIONS = 1500 * ROUNDS (1500 at ROUNDS=1, 3000 at 2)
 *    sessions opened and closed; BUS.listeners holds exactly that many
 *    LeakShop$SessionListener, each with field `session` -> its own
 *    LeakShop$Session (fields id, name, state, cart); state is a
 *    byte[SESSION_BYTES = 1024]; cart is a LeakShop$Cart whose ArrayList
 *    `items` holds CART_ITEMS = 2 LeakShop$LineItem (sku, qty) of its own.
 *    LeakShop.OPEN (a HashMap) is empty. Nothing else references a session.
 *  - ThreadLocal leak: POOL = 4 daemon threads named "leak-worker-0" ..
 *    "leak-worker-3", started by LeakShop itself (no executor), each handled
 *    exactly REQUESTS = 500 * ROUNDS requests (500 / 1000), so each one's
 *    LeakShop$RequestContext (in LeakShop.CONTEXT) has an auditTrail of
 *    exactly REQUESTS byte[AUDIT_BYTES = 1024]: the four threads retain the
 *    same amount. After their work they park forever (LockSupport.park).
 *  - Cache leak: LeakShop.PRICE_CACHE holds exactly QUOTES = 2000 * ROUNDS
 *    (2000 / 4000) entries, keys "quote-0" .. "quote-(QUOTES-1)", each value
 *    a LeakShop$Quote (fields symbol, cents, data) with data a
 *    byte[QUOTE_BYTES = 1024].
 *  - Class-loader leak: DEPLOYS = 2 * ROUNDS (2 / 4) instances of
 *    LeakShop$PluginLoader (a ClassLoader named "plugin-loader", parent the
 *    application class loader), each a separate object that defined its own
 *    class LeakShop$Plugin: DEPLOYS distinct class objects of that name, none
 *    defined by the application class loader (it never loads LeakShop$Plugin).
 *    Each copy's static BLOBS (an ArrayList) holds BLOB_COUNT = 56
 *    byte[BLOB_BYTES = 16384], about 0.9 MB per loader. LeakShop.PLUGINS (an
 *    ArrayList<Object>) holds exactly DEPLOYS LeakShop$Plugin instances, one
 *    of each class; no other live reference reaches the loaders.
 *  - LRU look-alike: LeakShop.LRU (a LeakShop$LruCache) holds exactly
 *    LRU_MAX = 1000 entries (keys "page-4000" .. "page-4999", values
 *    byte[LRU_BYTES = 1024]) after LRU_PUTS = 5000 puts, at every ROUNDS.
 *  - Catalog look-alike: LeakShop.CATALOG holds exactly CATALOG_SIZE = 3000
 *    entries (keys "sku-0" .. "sku-2999"), each a LeakShop$Product (fields
 *    sku, name, description, cents) with description a byte[DESC_BYTES =
 *    256], at every ROUNDS. Cart line items refer to products by sku number
 *    only, so nothing outside CATALOG references a product.
 *  - All the static roots are fields of the one class LeakShop, so class
 *    LeakShop dominates all of leaks 1, 3, 4 and look-alikes 5, 6 (about 80%
 *    of the reachable heap); each leak and look-alike is one dominator child
 *    of it (the object in its static field). The worker threads are
 *    dominated directly by the GC roots, each retaining its RequestContext.
 *    Leak 4's chain of dominators: PLUGINS -> its Object[] -> each
 *    LeakShop$Plugin instance -> its class LeakShop$Plugin -> the class's
 *    BLOBS ArrayList and its LeakShop$PluginLoader (the loader is dominated
 *    by the class and retains under 1 KB itself).
 *  - Retained sizes (measured, HotSpot 17 and 25, compressed oops, bytes):
 *                          ROUNDS=1   ROUNDS=2
 *      PRICE_CACHE         2431648    4864032
 *      BUS                 1890072    3780072
 *      PLUGINS             ~1839480   ~3678880
 *      each leak-worker-N  ~523000    ~1046000 (the four: ~2.1 / ~4.2 MB)
 *      CATALOG             1336448    1336448
 *      LRU                 1144272    1144272
 *    the reachable heap is about 12 MB at ROUNDS=1, 20 MB at ROUNDS=2.
 *    Tests may assert: every leak (the ThreadLocal leak counted as its four
 *    threads together) retains more than every look-alike at every ROUNDS;
 *    one worker thread alone retains less than either look-alike;
 *    the four worker threads retain exactly the same; each leak grows by 2x
 *    (within 1%) from ROUNDS=1 to ROUNDS=2 and the look-alikes do not change.
 */
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.locks.LockSupport;

public final class LeakShop {
    static final int SESSIONS_PER_ROUND = 1500;
    static final int SESSION_BYTES = 1024;
    static final int CART_ITEMS = 2;
    static final int POOL = 4;
    static final int REQUESTS_PER_ROUND = 500;
    static final int AUDIT_BYTES = 1024;
    static final int QUOTES_PER_ROUND = 2000;
    static final int QUOTE_BYTES = 1024;
    static final int DEPLOYS_PER_ROUND = 2;
    static final String PLUGIN_CLASS = "LeakShop$Plugin";
    static final int LRU_MAX = 1000;
    static final int LRU_PUTS = 5000;
    static final int LRU_BYTES = 1024;
    static final int CATALOG_SIZE = 3000;
    static final int DESC_BYTES = 256;

    // ---- 1. listeners never removed -------------------------------------

    interface Listener {
        void priceChanged(int sku, long cents);
    }

    static final class EventBus {
        final CopyOnWriteArrayList<Listener> listeners = new CopyOnWriteArrayList<>();

        void register(Listener l) {
            listeners.add(l);
        }

        void publish(int sku, long cents) {
            for (Listener l : listeners) {
                l.priceChanged(sku, cents);
            }
        }
    }

    static final class LineItem {
        final int sku;
        final int qty;

        LineItem(int sku, int qty) {
            this.sku = sku;
            this.qty = qty;
        }
    }

    static final class Cart {
        final List<LineItem> items = new ArrayList<>(CART_ITEMS);
    }

    static final class Session {
        final int id;
        final String name;
        final byte[] state = new byte[SESSION_BYTES];
        final Cart cart = new Cart();
        int repriced;

        Session(int id) {
            this.id = id;
            this.name = "session-" + id;
            // the bug: registered here, never unregistered in close()
            BUS.register(new SessionListener(this));
        }

        void close() {
            OPEN.remove(id);
        }
    }

    static final class SessionListener implements Listener {
        final Session session;

        SessionListener(Session session) {
            this.session = session;
        }

        @Override
        public void priceChanged(int sku, long cents) {
            session.repriced++;
        }
    }

    // ---- 2. ThreadLocal in pooled threads --------------------------------

    static final class RequestContext {
        final ArrayList<byte[]> auditTrail = new ArrayList<>();
        int handled;
    }

    // ---- 3. unbounded static cache ---------------------------------------

    static final class Quote {
        final String symbol;
        final long cents;
        final byte[] data = new byte[QUOTE_BYTES];

        Quote(String symbol, long cents) {
            this.symbol = symbol;
            this.cents = cents;
        }
    }

    // ---- 4. class-loader leak --------------------------------------------

    /**
     * Loaded only by PluginLoaders, never by the application class loader
     * (LeakShop names it by string only). Public, so that LeakShop may make
     * instances of the copies, which are in other runtime packages.
     */
    public static final class Plugin {
        static final int BLOB_COUNT = 56;
        static final int BLOB_BYTES = 16384;
        public static final List<byte[]> BLOBS = new ArrayList<>();

        static {
            for (int i = 0; i < BLOB_COUNT; i++) {
                BLOBS.add(new byte[BLOB_BYTES]);
            }
        }

        public Plugin() {
        }
    }

    /** Defines its own LeakShop$Plugin; everything else goes to the parent. */
    static final class PluginLoader extends ClassLoader {
        private byte[] code;

        PluginLoader(byte[] code) {
            super("plugin-loader", LeakShop.class.getClassLoader());
            this.code = code;
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            if (!name.equals(PLUGIN_CLASS)) {
                return super.loadClass(name, resolve);
            }
            synchronized (getClassLoadingLock(name)) {
                Class<?> c = findLoadedClass(name);
                if (c == null) {
                    c = defineClass(name, code, 0, code.length);
                    code = null;    // keep nothing but the class
                }
                if (resolve) {
                    resolveClass(c);
                }
                return c;
            }
        }
    }

    // ---- 5. bounded LRU cache (correct) ----------------------------------

    static final class LruCache extends LinkedHashMap<String, byte[]> {
        private static final long serialVersionUID = 1L;
        final int max;

        LruCache(int max) {
            super(16, 0.75f, true);
            this.max = max;
        }

        @Override
        protected boolean removeEldestEntry(Map.Entry<String, byte[]> eldest) {
            return size() > max;
        }
    }

    // ---- 6. large legitimate catalog (correct) ---------------------------

    static final class Product {
        final int sku;
        final String name;
        final byte[] description = new byte[DESC_BYTES];
        final long cents;

        Product(int sku, String name, long cents) {
            this.sku = sku;
            this.name = name;
            this.cents = cents;
        }
    }

    // ---- the roots -------------------------------------------------------

    static final EventBus BUS = new EventBus();
    static final Map<Integer, Session> OPEN = new HashMap<>();
    static final ThreadLocal<RequestContext> CONTEXT = ThreadLocal.withInitial(RequestContext::new);
    static final HashMap<String, Quote> PRICE_CACHE = new HashMap<>();
    static final ArrayList<Object> PLUGINS = new ArrayList<>();
    static final LruCache LRU = new LruCache(LRU_MAX);
    static final HashMap<String, Product> CATALOG = new HashMap<>();

    private LeakShop() {
    }

    static void build(int rounds) throws Exception {
        buildCatalog();
        buildLru();
        openSessions(SESSIONS_PER_ROUND * rounds);
        runWorkers(REQUESTS_PER_ROUND * rounds);
        fillPriceCache(QUOTES_PER_ROUND * rounds);
        deployPlugins(DEPLOYS_PER_ROUND * rounds);
    }

    static void buildCatalog() {
        for (int i = 0; i < CATALOG_SIZE; i++) {
            CATALOG.put("sku-" + i, new Product(i, "product " + i, 100L * (i + 1)));
        }
    }

    static void buildLru() {
        for (int i = 0; i < LRU_PUTS; i++) {
            LRU.put("page-" + i, new byte[LRU_BYTES]);
        }
        if (LRU.size() != LRU_MAX) {
            throw new IllegalStateException("LRU holds " + LRU.size());
        }
    }

    static void openSessions(int sessions) {
        for (int s = 0; s < sessions; s++) {
            Session session = new Session(s);
            for (int k = 0; k < CART_ITEMS; k++) {
                session.cart.items.add(new LineItem((s + k) % CATALOG_SIZE, k + 1));
            }
            OPEN.put(s, session);
            session.close();    // closed: forgotten by the shop, not by the bus
        }
        BUS.publish(0, 199L);
        if (!OPEN.isEmpty() || BUS.listeners.size() != sessions) {
            throw new IllegalStateException("sessions: " + OPEN.size() + " " + BUS.listeners.size());
        }
    }

    static void runWorkers(int requests) throws InterruptedException {
        CountDownLatch done = new CountDownLatch(POOL);
        for (int w = 0; w < POOL; w++) {
            Thread t = new Thread(() -> {
                for (int r = 0; r < requests; r++) {
                    RequestContext ctx = CONTEXT.get();
                    ctx.auditTrail.add(new byte[AUDIT_BYTES]);
                    ctx.handled++;
                }
                done.countDown();
                while (true) {
                    LockSupport.park();
                }
            }, "leak-worker-" + w);
            t.setDaemon(true);
            t.start();
        }
        done.await();
    }

    static void fillPriceCache(int quotes) {
        for (int i = 0; i < quotes; i++) {
            PRICE_CACHE.put("quote-" + i, new Quote("SYM" + (i % 97), 1000L + i));
        }
    }

    static void deployPlugins(int deploys) throws Exception {
        byte[] code;
        try (InputStream in = LeakShop.class.getResourceAsStream(PLUGIN_CLASS + ".class")) {
            if (in == null) {
                throw new IOException(PLUGIN_CLASS + ".class not found on the class path");
            }
            code = in.readAllBytes();
        }
        List<Class<?>> seen = new ArrayList<>();
        for (int d = 0; d < deploys; d++) {
            PluginLoader deployed = new PluginLoader(code);
            Class<?> c = deployed.loadClass(PLUGIN_CLASS);
            if (c.getClassLoader() != deployed || seen.contains(c)) {
                throw new IllegalStateException("plugin class not defined by its own loader");
            }
            seen.add(c);
            PLUGINS.add(c.getDeclaredConstructor().newInstance());    // the bug
            deployed = null;    // undeployed: only PLUGINS keeps it
        }
    }

    static void dump(String file) throws Exception {
        System.gc();
        com.sun.management.HotSpotDiagnosticMXBean bean =
            ManagementFactory.getPlatformMXBean(com.sun.management.HotSpotDiagnosticMXBean.class);
        bean.dumpHeap(file, true);
    }

    static int rounds(String[] args, int i) {
        if (args.length <= i) {
            return 2;
        }
        int r = Integer.parseInt(args[i]);
        if (r < 1) {
            throw new IllegalArgumentException("ROUNDS must be at least 1: " + r);
        }
        return r;
    }

    public static void main(String[] args) throws Exception {
        if (args.length >= 1 && args.length <= 2 && args[0].equals("wait")) {
            build(rounds(args, 1));
            System.out.println("ready " + ProcessHandle.current().pid());
            System.out.flush();
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
            String line;
            while ((line = in.readLine()) != null && !line.trim().equals("exit")) {
                // nothing else to do: the heap stays as it is
            }
        } else if (args.length >= 2 && args.length <= 3 && args[0].equals("dump")) {
            build(rounds(args, 2));
            dump(args[1]);
        } else {
            System.err.println("usage: LeakShop wait [ROUNDS] | LeakShop dump FILE [ROUNDS]");
            System.exit(2);
        }
        System.exit(0);
    }
}
