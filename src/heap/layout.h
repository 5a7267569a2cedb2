/*
 * layout.h - HotSpot's instance layout by JDK generation (layout.c; issue
 * 35; docs/heap-model.md, "Shallow sizes").
 */
#ifndef HEAPSH_LAYOUT_H
#define HEAPSH_LAYOUT_H

#include <stdbool.h>
#include <stdint.h>

struct heap;

/* How the dump's JVM laid objects out. Sizes in bytes. */
struct layout_cfg {
	bool gen15;		/* fieldLayoutBuilder (JDK 15 on), else classFileParser (JDK 6-14) */
	int jdk;		/* the JDK's feature version (8, 11, 17, 25...) for its tables */
	int header;		/* instance header: mark word and class pointer (8, 12 or 16) */
	int oop;		/* a reference field or element: 4 or 8 */
	int word;		/* the machine word: 4 or 8 */
	int align;		/* object alignment (-XX:ObjectAlignmentInBytes), 8 by default */
};

/*
 * layout_sizes: the instance size of every class of h with a CLASS DUMP
 * into size[0..h->nclasses) (0 for array classes and classes known only
 * by name): its fields and the fields the VM injects, laid out as cfg's
 * JDK does, with the JDK's @Contended padding, aligned. Algorithms:
 * classFileParser.cpp layout_fields (JDK 6-14, field allocation style 1,
 * compact fields) and fieldLayoutBuilder.cpp (JDK 15 on, JDK-8237767).
 */
void layout_sizes(const struct heap *h, const struct layout_cfg *cfg, uint32_t *size);

/*
 * layout_array_size: an array of len elements of elem_size bytes: header,
 * length, elements from an offset aligned to the word (JDK 21 and before;
 * 8 for longs and doubles) or to the element (JDK 22 on, JDK-8139457),
 * aligned to cfg->align.
 */
uint64_t layout_array_size(const struct layout_cfg *cfg, uint32_t elem_size, uint64_t len);

#endif
