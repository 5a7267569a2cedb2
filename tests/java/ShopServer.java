/*
 * ShopServer - a small shop server with two leaks, known by construction
 * (issues 14 and 16: live snapshots that tell the truth, leak suspects):
 *
 *  - listeners never removed from an event bus held by a static field:
 *    ShopServer.BUS is an EventBus whose CopyOnWriteArrayList `listeners`
 *    holds one anonymous listener (ShopServer$CustomerSession$1) per
 *    CustomerSession ever opened; each listener holds its session (this$0),
 *    and each session its cart: SESSIONS sessions stay alive although the
 *    server forgot them (closed sessions leave the `open` map, not the bus).
 *  - a ThreadLocal buffer growing in the POOL pooled worker threads: each
 *    worker's RequestContext (in ShopServer.CONTEXT, a ThreadLocal) keeps an
 *    auditTrail ArrayList of byte[AUDIT_BYTES], one per request handled,
 *    never cleared.
 *
 * Usage:
 *   java ShopServer wait        serve the requests (below), print "ready PID"
 *                               on stdout, then wait until stdin closes or
 *                               says "exit"; the pooled threads stay parked.
 *   java ShopServer dump FILE   the same, then dump the heap to FILE (live
 *                               objects) and exit.
 *
 * KNOWN FACTS (tests assert these; keep in sync with the code):
 *  - SESSIONS = 2600 sessions opened and closed; each: one CustomerSession
 *    (fields id, name, cart), one ShopServer$CustomerSession$1 listener, one
 *    Cart with an ArrayList of CART_ITEMS = 3 Products (shared, from the
 *    CATALOG of 50 Products held by the static ShopServer.CATALOG).
 *  - BUS.listeners holds exactly SESSIONS listeners; `open` is empty.
 *  - POOL = 4 worker threads named "shop-worker-0".."shop-worker-3"; each
 *    handled REQUESTS = 250 requests, so each auditTrail has 250 byte[]
 *    of AUDIT_BYTES = 1024: 250 * 1040 bytes each, about 254 KB per thread.
 *  - The path from the GC roots to the EventBus goes through the static field
 *    ShopServer.BUS (a system class root: the class ShopServer), never
 *    through a JNI local or another thread's frame.
 */
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.locks.LockSupport;

public final class ShopServer {
    static final int SESSIONS = 2600;
    static final int CART_ITEMS = 3;
    static final int POOL = 4;
    static final int REQUESTS = 250;
    static final int AUDIT_BYTES = 1024;

    interface Listener {
        void priceChanged(Product p);
    }

    static final class EventBus {
        final CopyOnWriteArrayList<Listener> listeners = new CopyOnWriteArrayList<>();

        void register(Listener l) {
            listeners.add(l);
        }
    }

    static final class Product {
        final int sku;
        final String title;
        long cents;

        Product(int sku, String title, long cents) {
            this.sku = sku;
            this.title = title;
            this.cents = cents;
        }
    }

    static final class Cart {
        final List<Product> items = new ArrayList<>();
    }

    static final class CustomerSession {
        final int id;
        final String name;
        final Cart cart = new Cart();
        int repriced;

        CustomerSession(int id) {
            this.id = id;
            this.name = "customer-" + id;
            BUS.register(new Listener() {
                @Override
                public void priceChanged(Product p) {
                    repriced++;
                }
            });
        }
    }

    static final class RequestContext {
        final List<byte[]> auditTrail = new ArrayList<>();
    }

    static final EventBus BUS = new EventBus();
    static final Product[] CATALOG = new Product[50];
    static final Map<Integer, CustomerSession> OPEN = new HashMap<>();
    static final ThreadLocal<RequestContext> CONTEXT = ThreadLocal.withInitial(RequestContext::new);
    static final List<Thread> WORKERS = new ArrayList<>();

    private ShopServer() {
    }

    static void serve() throws InterruptedException {
        for (int i = 0; i < CATALOG.length; i++) {
            CATALOG[i] = new Product(i, "product-" + i, 100L * (i + 1));
        }
        for (int s = 0; s < SESSIONS; s++) {
            CustomerSession cs = new CustomerSession(s);
            for (int k = 0; k < CART_ITEMS; k++) {
                cs.cart.items.add(CATALOG[(s + k) % CATALOG.length]);
            }
            OPEN.put(s, cs);
            OPEN.remove(s);     // closed: forgotten by the server, not by the bus
        }
        CountDownLatch done = new CountDownLatch(POOL);
        for (int w = 0; w < POOL; w++) {
            Thread t = new Thread(() -> {
                for (int r = 0; r < REQUESTS; r++) {
                    CONTEXT.get().auditTrail.add(new byte[AUDIT_BYTES]);
                }
                done.countDown();
                while (true) {
                    LockSupport.park();
                }
            }, "shop-worker-" + w);
            t.setDaemon(true);
            WORKERS.add(t);
            t.start();
        }
        done.await();
    }

    static void dump(String file) throws Exception {
        com.sun.management.HotSpotDiagnosticMXBean bean =
            ManagementFactory.getPlatformMXBean(com.sun.management.HotSpotDiagnosticMXBean.class);
        bean.dumpHeap(file, true);
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 1 && args[0].equals("wait")) {
            serve();
            System.out.println("ready " + ProcessHandle.current().pid());
            System.out.flush();
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
            String line;
            while ((line = in.readLine()) != null && !line.trim().equals("exit")) {
                // nothing else to do: the heap stays as it is
            }
        } else if (args.length == 2 && args[0].equals("dump")) {
            serve();
            dump(args[1]);
        } else {
            System.err.println("usage: ShopServer wait | ShopServer dump FILE");
            System.exit(2);
        }
        System.exit(0);
    }
}
