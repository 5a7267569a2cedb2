package exact.plain;

import exact.outer.Outer;
import exact.svc.Service;
import exact.util.Helper;

/**
 * Unaccounted callers (package exact.plain) that catch an exception thrown
 * under accounted frames and then allocate themselves: those objects belong
 * to no account, (none), whatever frames the exception crossed.
 */
public final class Caller {
    /** Kept. 16 bytes. */
    public static final class AfterA {
        final AfterA next;

        AfterA(AfterA next) {
            this.next = next;
        }
    }

    /** Kept. 16 bytes. */
    public static final class AfterC {
        final AfterC next;

        AfterC(AfterC next) {
            this.next = next;
        }
    }

    public static AfterA afterA;    // every AfterA made, kept
    public static AfterC afterC;    // every AfterC made, kept

    private Caller() {
    }

    /** Service.work(n) (accounted) throws a Boom from its helper; caught here, then m AfterAs. */
    public static void call(int n, int m) {
        try {
            Service.work(n);
        } catch (Helper.Boom e) {
            for (int i = 0; i < m; i++) {
                afterA = new AfterA(afterA);            // EXACT-SITE exact.plain.Caller$AfterA
            }
        }
    }

    /**
     * Outer.pass(n) -> Service.workNpe(n) -> the helper's NullPointerException,
     * through two accounted frames of two accounts; caught here, then m AfterCs.
     */
    public static void callDeep(int n, int m) {
        try {
            Outer.pass(n);
        } catch (NullPointerException e) {
            for (int i = 0; i < m; i++) {
                afterC = new AfterC(afterC);            // EXACT-SITE exact.plain.Caller$AfterC
            }
        }
    }
}
