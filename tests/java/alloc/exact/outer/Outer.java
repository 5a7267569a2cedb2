package exact.outer;

import exact.svc.Service;
import exact.util.Helper;

/**
 * A second accounted class (exact.outer) around exact.svc.Service: call
 * catches the exception that left Service and has the unaccounted helper
 * allocate (charged to exact.outer, the account restored when the exception
 * left Service); pass lets it go through its own frame too.
 */
public final class Outer {
    private Outer() {
    }

    /** Service.work(n), whose Boom is caught here; then Helper.makeAfterB(m). */
    public static void call(int n, int m) {
        try {
            Service.work(n);
        } catch (Helper.Boom e) {
            Helper.makeAfterB(m);
        }
    }

    /** Service.workNpe(n): its NullPointerException leaves this frame as well. */
    public static int pass(int n) {
        return Service.workNpe(n);
    }
}
