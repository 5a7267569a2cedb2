/*
 * waste.h - memory a program wastes without leaking it: java.lang.String
 * objects that hold the same text, and collections that are empty or
 * filled under a threshold. The same definitions as the ready Lua scripts
 * lua/duplicate_strings.lua and lua/collections.lua (whose header
 * comments are the specification), computed in C so that :duplicates,
 * :collections and the HTML report need no Lua and run in one pass.
 *
 * Ownership: the row arrays are malloc'd and freed with waste_dup_free /
 * free(); a waste_dup's text is its own; class and kind names point into
 * the heap (or are static), which must outlive the rows.
 */
#ifndef HS_WASTE_H
#define HS_WASTE_H

#include <stdbool.h>
#include <stdint.h>

#include "../heap/heap.h"

/* heap_string's limit for the texts compared, as the Lua binding's o.text. */
#define WASTE_TEXT_MAX (1u << 20)

/* One text held by several String objects. */
struct waste_dup {
	char *text;		/* UTF-8 as heap_string gives it (owned); whole up to
				 * WASTE_TEXT_MAX characters, then cut with "..." */
	uint64_t length;	/* characters (bytes when text is not strict UTF-8, as Lua's
				 * utf8.len or #text) */
	uint64_t count;		/* String objects with this text */
	uint64_t copy_bytes;	/* one copy: the first String's shallow size and its value array's */
	uint64_t total_bytes;	/* all copies; a value array several of them share counted once */
	uint64_t wasted_bytes;	/* total_bytes - copy_bytes */
	uint32_t example;	/* the first String (lowest index) with the text */
};

/*
 * waste_dup_strings: the texts held by min_count or more instances of
 * java.lang.String (min_count 0 is taken as 1), most wasted bytes first,
 * then most copies, then the text (byte order, as Lua compares strings in
 * the C locale). *out (n rows) is the caller's, freed with
 * waste_dup_free; a heap without java.lang.String gives no rows. A
 * String whose value is missing counts as the text "" with no array.
 * Cost: every String's text decoded once (heap_string) and hashed; memory
 * the distinct texts, plus 32 bytes per String whose value array is
 * referenced from elsewhere too. Returns HS_OK, or HS_INTERRUPTED on
 * Ctrl-C (nothing returned). Source: lua/duplicate_strings.lua.
 */
int waste_dup_strings(const struct heap *h, uint32_t min_count, struct waste_dup **out,
		      uint32_t *n);
void waste_dup_free(struct waste_dup *rows, uint32_t n);

/*
 * waste_text_show: text for a table cell as duplicate_strings.lua shows it:
 * at most width characters, then "..." (when text is not UTF-8: width
 * bytes), and the control characters (0-31, 127) as \n, \t, \r or \xHH.
 * A new string the caller frees.
 */
char *waste_text_show(const char *text, uint32_t width);

/* One collection class: its empty and sparse instances. */
struct waste_coll {
	uint32_t cls;		/* class index; HEAP_NONE for the total */
	const char *name;	/* the class's name, or "total" */
	const char *kind;	/* simple name of the JDK class whose layout it has
				 * ("ArrayList"), "" for the total */
	uint64_t instances;
	uint64_t empty;		/* instances of size 0 */
	uint64_t sparse;	/* not empty, filled under the threshold */
	int64_t unused_slots;	/* capacity - size over the empty and sparse ones */
	int64_t wasted_bytes;	/* sparse: unused slots x reference size; empty: the backing
				 * array's shallow size when nothing else refers to it */
};

/*
 * waste_collections: the instances of java.util.ArrayList, Vector,
 * HashMap, LinkedHashMap, HashSet, LinkedHashSet, ArrayDeque and
 * java.util.concurrent.ConcurrentHashMap, and of their subclasses (each
 * class on its own row, with the layout of its nearest listed superclass),
 * that are empty or filled under threshold_pct percent of their capacity.
 * Classes with none are left out unless all. Rows most wasted bytes first,
 * then by class name; *total sums the rows (name "total"). The reference
 * size is read from the first object array met (align8(header + 4 + n x
 * ref)), 4 if none. *out (n rows) is the caller's to free(). Cost: one
 * look at each collection and its backing array. Returns HS_OK, or
 * HS_INTERRUPTED on Ctrl-C (nothing returned). Source:
 * lua/collections.lua.
 */
int waste_collections(const struct heap *h, double threshold_pct, bool all,
		      struct waste_coll **out, uint32_t *n, struct waste_coll *total);

#endif
