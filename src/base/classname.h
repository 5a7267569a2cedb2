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
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* cn_wild: pattern has a * or a ?. */
bool cn_wild(const char *pattern);
/* cn_glob: pattern (* any run of characters, ? one) matches the whole name. */
bool cn_glob(const char *pattern, const char *name);
/* cn_tail: tail ends name at a package or nesting boundary ('.' in tail matches '$'). */
bool cn_tail(const char *name, const char *tail);

/*
 * cn_java_name: the Java name of a JVM class name, into out (cap bytes,
 * NUL-terminated, cut to fit): an internal name as HPROF's LOAD CLASS
 * records give it (java/lang/String, [[I, [Ljava/lang/Object;) or, with
 * signature, a type signature as JVMTI gives it (Ljava/lang/String;, [I, I
 * for int.class): java.lang.String, int[][], java.lang.Object[], int.
 * Returns the Java name's
 * length; CN_JAVA_NAME_MAX(name) bytes always hold it. (JVMS 4.2.1, 4.3.2.)
 */
size_t cn_java_name(const char *name, bool signature, char *out, size_t cap);
#define CN_JAVA_NAME_MAX(name) (2 * strlen(name) + 8)

/*
 * cn_select: which of names[0..n) (Java names) pattern names, by the rule
 * above: their indexes into out (room for n), in order; returns how many.
 */
uint32_t cn_select(const char *pattern, const char *const *names, uint32_t n, uint32_t *out);

#endif
