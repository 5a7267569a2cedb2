/*
 * Table - a class ExactWork links before any recording starts but does not
 * initialize (Class.getDeclaredConstructors links, JVMS 5.4): its static
 * initializer, its only allocating code, runs after the start, so that the
 * recording must have rewritten it even though an initialized class's
 * static initializer is left alone (it never runs again; issue 33,
 * tests/t_alloc_exact.sh, part 7).
 *
 * KNOWN FACTS: initializing it allocates 33 Table$Cell (one int field: 16
 * bytes) and one Table$Cell[33] (152 bytes), and keeps them all (CELLS).
 */
package exact.lazy;

public final class Table {
    static final class Cell {
        final int v;

        Cell(int v) {
            this.v = v;
        }
    }

    static final Cell[] CELLS = new Cell[33];   // EXACT-SITE exact.lazy.Table$Cell[]

    static {
        for (int i = 0; i < CELLS.length; i++) {
            CELLS[i] = new Cell(i);             // EXACT-SITE exact.lazy.Table$Cell
        }
    }

    private Table() {
    }

    /** touch: initializes the class (its first use); the number of cells. */
    public static int touch() {
        return CELLS.length;
    }
}
