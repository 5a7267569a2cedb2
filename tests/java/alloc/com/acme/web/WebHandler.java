package com.acme.web;

import com.acme.util.Buffer;
import com.acme.util.Pool;
import com.acme.xml.Doc;

/**
 * The accounted package com.acme.web (AllocWork's KNOWN FACTS list every
 * allocation below). No static initializer, no string constants, no boxing,
 * no string concatenation: handle allocates exactly what it says, in frames
 * of this class or of the helpers it calls.
 */
public final class WebHandler {
    public static final int N_SESSION = 1000;
    public static final int N_TEMP = 500;
    public static final int M_BUF = 700;

    static Session[] sessions;       // kept until release()
    static Buffer[] buffers;         // kept until release(); made by Pool.make
    /*
     * Volatile so that the compiler cannot drop the store as dead (it is
     * overwritten with null a few lines later): the Temps escape globally,
     * are really allocated, and die when the field is cleared.
     */
    static volatile Temp[] temps;

    private WebHandler() {
    }

    /**
     * One request: 1000 Sessions in a new Session[1000] (kept), 500 Temps
     * in a new Temp[500] (released before returning), 700 Buffers and their
     * Buffer[700] through Pool.make (kept), and Doc.build, which allocates
     * in the accounted package com.acme.xml (the nearest accounted frame,
     * Doc.build, wins over this one).
     */
    public static void handle() {
        Session[] s = new Session[N_SESSION];   // SITE com.acme.web.Session[]
        for (int i = 0; i < N_SESSION; i++) {
            s[i] = new Session(i);              // SITE com.acme.web.Session
        }
        sessions = s;

        Temp[] t = new Temp[N_TEMP];            // SITE com.acme.web.Temp[]
        temps = t;
        for (int i = 0; i < N_TEMP; i++) {
            t[i] = new Temp(i);                 // SITE com.acme.web.Temp
        }
        temps = null;

        buffers = Pool.make(M_BUF);
        Doc.build();
    }

    /** Lets go of everything handle kept. */
    public static void release() {
        sessions = null;
        buffers = null;
        temps = null;
    }
}
