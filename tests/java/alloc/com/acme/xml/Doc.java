package com.acme.xml;

/**
 * Package com.acme.xml: matched by the pattern com.acme.xml (this package
 * only) and by com.acme.xml.* (this package and its subpackages). Called
 * from com.acme.web.WebHandler.handle, so what build allocates has two
 * accounted frames on its stack, Doc.build (nearest) and WebHandler.handle:
 * the nearest one decides (AllocWork's KNOWN FACTS).
 */
public final class Doc {
    public static final int N_ATTR = 40;

    static Attr[] attrs;             // kept until release()

    private Doc() {
    }

    /** An attribute: 16 bytes (header, int). Name: com.acme.xml.Doc$Attr. */
    public static final class Attr {
        int index;

        Attr(int index) {
            this.index = index;
        }
    }

    /** 40 Attrs in a new Attr[40], kept. */
    public static void build() {
        Attr[] a = new Attr[N_ATTR];            // SITE com.acme.xml.Doc$Attr[]
        for (int i = 0; i < N_ATTR; i++) {
            a[i] = new Attr(i);                 // SITE com.acme.xml.Doc$Attr
        }
        attrs = a;
    }

    /** Lets go of everything build kept. */
    public static void release() {
        attrs = null;
    }
}
