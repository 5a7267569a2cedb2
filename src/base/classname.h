/*
 * classname.h - how heapsh matches class names, one rule for dumps, live
 * JVMs and the agent (docs/manual.md, "Class names"): a pattern with * or ?
 * is a glob over the whole Java name (java.util.*, *Shop*); a name without
 * is the class of that name, or else every class it ends at a package or
 * nesting boundary: a simple name (Product) or a nested one (ShopServer.Product,
 * ShopServer$Product) names com.acme.ShopServer$Product. A simple name never
 * names a nested class of it (CustomerSession is not CustomerSession$1).
 *
 * Self-contained (no other heapsh module): the agent builds it in too.
 */
#ifndef HS_CLASSNAME_H
#define HS_CLASSNAME_H

#include <stdbool.h>
#include <stdint.h>

/* cn_wild: pattern has a * or a ?. */
bool cn_wild(const char *pattern);
/* cn_glob: pattern (* any run of characters, ? one) matches the whole name. */
bool cn_glob(const char *pattern, const char *name);
/* cn_tail: tail ends name at a package or nesting boundary ('.' in tail matches '$'). */
bool cn_tail(const char *name, const char *tail);

/*
 * cn_select: which of names[0..n) (Java names) pattern names, by the rule
 * above: their indexes into out (room for n), in order; returns how many.
 */
uint32_t cn_select(const char *pattern, const char *const *names, uint32_t n, uint32_t *out);

#endif
