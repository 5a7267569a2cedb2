package com.acme.util;

/**
 * A helper in package com.acme.util, which the tests never account: what it
 * allocates goes to the account of the nearest accounted frame below it on
 * the stack (its caller's), not to com.acme.util and not to (none).
 * No static initializer and no string constants, so calling it allocates
 * nothing beyond what make says.
 */
public final class Pool {
    private Pool() {
    }

    /**
     * Allocates n Buffers and the Buffer[] of length n that holds them, and
     * returns that array (n + 1 allocations, all in this frame).
     */
    public static Buffer[] make(int n) {
        Buffer[] all = new Buffer[n];           // SITE com.acme.util.Buffer[]
        for (int i = 0; i < n; i++) {
            all[i] = new Buffer(i);             // SITE com.acme.util.Buffer
        }
        return all;
    }
}
