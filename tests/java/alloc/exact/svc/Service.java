package exact.svc;

import exact.util.Helper;

/**
 * An accounted class (ExactWork's tests account exact.svc) whose methods
 * allocate nothing themselves: they call the unaccounted helper, which
 * allocates and throws, and the exception leaves these frames uncaught.
 */
public final class Service {
    private Service() {
    }

    /** Helper.allocThenThrow(n): n Scraps and a Boom, charged to exact.svc; the Boom goes on. */
    public static void work(int n) {
        Helper.allocThenThrow(n);
    }

    /** Helper.allocThenNpe(n): n Scraps charged to exact.svc; the JVM's NullPointerException goes on. */
    public static int workNpe(int n) {
        return Helper.allocThenNpe(n);
    }
}
