/*
 * Broken - a class that cannot be linked: the test deletes Gone.class after
 * compiling, and verifying get() needs Gone (is it a Base?). ExactWork loads
 * it before any recording starts without linking it, as a JVM holds classes
 * an optional dependency is missing for (Jetty's Slf4jLog without slf4j):
 * an exact start must neither fail on it nor be slowed by it, and linking it
 * later (ExactWork `lazy`) throws NoClassDefFoundError as it would without
 * heapsh.
 */
package exact.lazy;

public final class Broken {
    private Broken() {
    }

    public static class Base {
    }

    public static final class Gone extends Base {
    }

    public static Base get() {
        return new Gone();
    }
}
