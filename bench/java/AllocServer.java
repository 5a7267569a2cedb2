/*
 * AllocServer - the server workload of bench/alloc_server.sh (issue 33): an
 * embedded Jetty 9.4 (Debian's libjetty9-java) serving one servlet that does
 * what a small JSON API does on each request, loaded by wrk from another
 * process. The allocating is done mostly by code nobody here wrote: Jetty's
 * HTTP parser, request and response objects, query-string decoding
 * (UrlEncoded, MultiMap), its JSON writer (org.eclipse.jetty.util.ajax.JSON),
 * and the JDK's collections, BigDecimal and strings.
 *
 * Usage:
 *   java -cp JETTY_JARS:DIR AllocServer THREADS LIFETIME_S
 *       THREADS   the pool's worker threads (besides one acceptor and one
 *                 selector thread; no reserved threads), e.g. 2 on 2 cores
 *       LIFETIME_S the server exits by itself after this many seconds, so an
 *                 orphaned server cannot run for ever
 *   Listens on 127.0.0.1 only, on a port the system picks, and prints on
 *   standard output, flushed:
 *       port N                   once, when it accepts connections
 *       tick EPOCH_MS COUNT      about every second, on the second: the wall
 *                                clock (ms since the epoch) and the number of
 *                                requests completed so far (cumulative; the
 *                                rate is the difference between ticks over
 *                                the difference of their clocks, so a tick
 *                                the JVM delayed is still right)
 *   Jetty's own log goes to standard error.
 *
 * The endpoint: GET /api/order?user=uN&items=K&coupon=C&q=WORDS
 *   looks the customer up in a map of 50 000 made at start-up (long-lived
 *   objects), prices K catalogue lines with BigDecimal (the coupon takes a
 *   percentage off), searches the catalogue for the words of q, keeps the
 *   order in a bounded cache of recent orders (an LRU LinkedHashMap of 20 000:
 *   objects that live a while, as a session cache's do), and answers with the
 *   order as JSON (Jetty's JSON.toString of maps and lists). Unknown users get
 *   404, a bad number 400. Any other path: 404.
 */
import java.io.IOException;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import javax.servlet.http.HttpServlet;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;

import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.servlet.ServletContextHandler;
import org.eclipse.jetty.servlet.ServletHolder;
import org.eclipse.jetty.util.ajax.JSON;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

public final class AllocServer {
    private AllocServer() {
    }

    static final AtomicLong COMPLETED = new AtomicLong();
    static final int CUSTOMERS = 50_000;
    static final int RECENT = 20_000;

    static final String[] WORDS = {
        "blue", "red", "green", "steel", "oak", "linen", "wool", "glass", "copper",
        "lamp", "chair", "table", "shelf", "rug", "mug", "kettle", "clock", "vase",
        "small", "large", "classic", "modern", "outdoor", "kids",
    };
    static final String[] CITIES = {
        "Amsterdam", "Berlin", "Cairo", "Delhi", "Edinburgh", "Florence", "Geneva",
        "Hanoi", "Istanbul", "Jakarta", "Kyoto", "Lima", "Madrid", "Nairobi", "Oslo",
    };

    record Customer(String id, String name, String city, String tier, int since) {
    }

    record Product(String sku, String title, BigDecimal price, String[] tags) {
    }

    static final Map<String, Customer> CUSTOMER = new HashMap<>();
    static final List<Product> CATALOGUE = new ArrayList<>();
    static final Map<String, Integer> COUPON = Map.of("SPRING", 10, "VIP", 25, "NONE", 0, "WELCOME", 5);

    /* The recent orders, least recently used first; guarded by itself. */
    static final LinkedHashMap<String, Map<String, Object>> RECENT_ORDERS =
        new LinkedHashMap<>(RECENT * 2, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, Map<String, Object>> e) {
                return size() > RECENT;
            }
        };

    static void makeData() {
        for (int i = 0; i < CUSTOMERS; i++) {
            String id = "u" + i;
            CUSTOMER.put(id, new Customer(id, "Customer " + i, CITIES[i % CITIES.length],
                i % 17 == 0 ? "gold" : i % 5 == 0 ? "silver" : "basic", 2000 + i % 25));
        }
        for (int i = 0; i < 400; i++) {
            String[] tags = { WORDS[i % WORDS.length], WORDS[(i * 7 + 3) % WORDS.length],
                WORDS[(i * 13 + 5) % WORDS.length] };
            String title = (tags[0] + " " + tags[1] + " " + tags[2]).toUpperCase(Locale.ROOT);
            CATALOGUE.add(new Product(String.format("SKU-%05d", i), title,
                BigDecimal.valueOf(199 + (i * 7919L) % 20000, 2), tags));
        }
    }

    static final class OrderServlet extends HttpServlet {
        private static final long serialVersionUID = 1L;

        @Override
        protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            try {
                answer(req, resp);
            } finally {
                COMPLETED.incrementAndGet();
            }
        }

        private static void answer(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            if (!"/api/order".equals(req.getRequestURI())) {
                resp.sendError(404);
                return;
            }
            String user = req.getParameter("user");
            Customer c = user == null ? null : CUSTOMER.get(user);
            if (c == null) {
                resp.sendError(404, "no such user");
                return;
            }
            int items;
            try {
                items = Integer.parseInt(req.getParameter("items"));
            } catch (NumberFormatException e) {
                resp.sendError(400, "items must be a number");
                return;
            }
            items = Math.max(1, Math.min(items, 50));
            String coupon = req.getParameter("coupon");
            int off = COUPON.getOrDefault(coupon == null ? "NONE" : coupon.toUpperCase(Locale.ROOT), 0);
            String q = req.getParameter("q");

            int seed = c.id().hashCode() * 31 + items;
            List<Object> lines = new ArrayList<>();
            BigDecimal total = BigDecimal.ZERO;
            for (int k = 0; k < items; k++) {
                Product p = CATALOGUE.get(Math.floorMod(seed + k * 101, CATALOGUE.size()));
                int qty = 1 + Math.floorMod(seed + k, 4);
                BigDecimal sum = p.price().multiply(BigDecimal.valueOf(qty));
                Map<String, Object> line = new HashMap<>();
                line.put("sku", p.sku());
                line.put("title", p.title());
                line.put("qty", qty);
                line.put("price", p.price().toPlainString());
                line.put("sum", sum.toPlainString());
                lines.add(line);
                total = total.add(sum);
            }
            BigDecimal discount = total.multiply(BigDecimal.valueOf(off)).divide(BigDecimal.valueOf(100), 2,
                RoundingMode.HALF_EVEN);

            List<Object> found = new ArrayList<>();
            if (q != null && !q.isBlank()) {
                String[] words = q.toLowerCase(Locale.ROOT).trim().split("\\s+");
                for (Product p : CATALOGUE) {
                    String t = p.title().toLowerCase(Locale.ROOT);
                    int hits = 0;
                    for (String w : words)
                        if (t.contains(w))
                            hits++;
                    if (hits == words.length && found.size() < 10)
                        found.add(Map.of("sku", p.sku(), "title", p.title(), "price", p.price().toPlainString()));
                }
            }

            Map<String, Object> order = new LinkedHashMap<>();
            order.put("customer", Map.of("id", c.id(), "name", c.name(), "city", c.city(), "tier", c.tier()));
            order.put("lines", lines);
            order.put("total", total.toPlainString());
            order.put("discount", discount.toPlainString());
            order.put("pay", total.subtract(discount).toPlainString());
            order.put("search", found);
            order.put("agent", String.valueOf(req.getHeader("User-Agent")));
            String body = JSON.toString(order);
            synchronized (RECENT_ORDERS) {
                RECENT_ORDERS.put(c.id() + "/" + items + "/" + q, order);
            }
            resp.setContentType("application/json");
            resp.setCharacterEncoding("UTF-8");
            resp.getWriter().write(body);
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: AllocServer THREADS LIFETIME_S");
            System.exit(2);
        }
        int workers = Integer.parseInt(args[0]);
        long lifetimeMs = Long.parseLong(args[1]) * 1000;
        makeData();

        // One acceptor and one selector thread, no reserved threads: a pool
        // of exactly workers + 2 threads, so that the setup does not follow
        // the number of processors.
        QueuedThreadPool pool = new QueuedThreadPool(workers + 2, workers + 2);
        pool.setReservedThreads(0);
        pool.setName("server");
        Server server = new Server(pool);
        ServerConnector http = new ServerConnector(server, 1, 1);
        http.setHost("127.0.0.1");
        http.setPort(0);
        server.addConnector(http);
        ServletContextHandler ctx = new ServletContextHandler(ServletContextHandler.NO_SESSIONS);
        ctx.setContextPath("/");
        ctx.addServlet(new ServletHolder(new OrderServlet()), "/*");
        server.setHandler(ctx);
        server.start();
        System.out.println("port " + http.getLocalPort());
        System.out.flush();

        long end = System.currentTimeMillis() + lifetimeMs;
        while (true) {
            long now = System.currentTimeMillis();
            if (now >= end)
                break;
            Thread.sleep(1000 - now % 1000);
            System.out.println("tick " + System.currentTimeMillis() + " " + COMPLETED.get());
            System.out.flush();
        }
        System.err.println("AllocServer: lifetime of " + args[1] + " s over, exiting");
        System.exit(3);
    }
}
