/*
 * req.c - what the agent reads from requests (docs/protocol.md) beyond
 * their fields, which the codec's reader (src/base/wire.h) checks against
 * what is left: the INSTANCES filter's predicate tree, whose malformed
 * nodes set the reader's error; and the allocation recorder's settings:
 * account patterns (ALLOC_START, and the agent's start-up options) and the
 * option string itself. Nothing here touches the JVM, so the fuzz harness
 * (tests/fuzz/fuzz_wire.c) runs these readers as the agent does.
 */
#include <stdlib.h>
#include <string.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>

#include "ag.h"

/* ---- the INSTANCES filter ---- */

void ag_pred_free(struct pnode *p)
{
	if (!p)
		return;
	for (int i = 0; i < p->n; i++)
		ag_pred_free(p->kid[i]);
	free(p->kid);
	free(p->field);
	free(p->text);
	free(p);
}

struct pnode *ag_pred_read(struct wire_r *r, int depth, int *budget)
{
	if (depth > 32 || --*budget < 0) {
		wire_r_fail(r, WIRE_BAD);
		return NULL;
	}
	struct pnode *p = calloc(1, sizeof *p);
	if (!p) {
		wire_r_fail(r, WIRE_NOMEM);
		return NULL;
	}
	p->op = wire_get8(r);
	switch (p->op) {
	case P_TRUE:
		break;
	case P_AND:
	case P_OR:
	case P_NOT:
		p->n = p->op == P_NOT ? 1 : wire_get8(r);
		p->kid = calloc(p->n + 1u, sizeof *p->kid);
		for (int i = 0; i < p->n && !r->err && p->kid; i++)
			p->kid[i] = ag_pred_read(r, depth + 1, budget);
		if (!p->kid)
			wire_r_fail(r, WIRE_NOMEM);
		break;
	case P_CMP:
		p->field = wire_get_strdup(r, MAX_REQUEST);
		p->cmp = wire_get8(r);
		p->kind = wire_get8(r);
		if (p->kind == K_LONG || p->kind == K_DOUBLE)
			p->bits = wire_get64(r);
		else if (p->kind == K_BOOL)
			p->bits = wire_get8(r);
		else if (p->kind == K_STRING)
			p->text = wire_get_strdup(r, MAX_REQUEST);
		else if (p->kind != K_NULL)
			wire_r_fail(r, WIRE_BAD);
		if (p->cmp > 5)
			wire_r_fail(r, WIRE_BAD);
		break;
	default:
		wire_r_fail(r, WIRE_BAD);
	}
	if (r->err) {
		ag_pred_free(p);
		return NULL;
	}
	return p;
}


/* ---- allocation recordings: account patterns and start-up options ---- */

void ag_drop_patterns(struct pattern *pat, int n)
{
	for (int i = 0; i < n; i++) {
		free(pat[i].text);
		free(pat[i].pkg);
	}
}

/*
 * ag_parse_patterns: "a.b,c.d.*" (sep is the separator) into pat[0..*n); a
 * pattern is a package name, dot-separated Java identifiers, optionally
 * ending in ".*" for its subpackages too. On error, why says which, nothing
 * is kept, and false.
 */
bool ag_parse_patterns(const char *text, char sep, struct pattern *pat, int *n, char *why,
			   size_t cap)
{
	*n = 0;
	for (const char *p = text; p && *p;) {
		const char *end = strchr(p, sep);
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (*n == MAX_PATTERNS) {
			snprintf(why, cap, "at most %d account patterns", MAX_PATTERNS);
			goto fail;
		}
		char *t = strndup(p, len);
		if (!t) {
			snprintf(why, cap, "out of memory in the agent");
			goto fail;
		}
		bool wild = len >= 2 && !strcmp(t + len - 2, ".*");
		size_t plen = wild ? len - 2 : len;
		bool ok = plen > 0;
		bool start = true;	/* at the start of an identifier */
		for (size_t k = 0; k < plen && ok; k++) {
			char c = t[k];
			if (c == '.') {
				ok = !start;
				start = true;
			} else if (c == '_' || c == '$' || (c >= 'a' && c <= 'z') ||
				   (c >= 'A' && c <= 'Z') || (unsigned char)c >= 0x80 ||
				   (!start && c >= '0' && c <= '9')) {
				start = false;
			} else {
				ok = false;
			}
		}
		if (!ok || start) {
			snprintf(why, cap, "bad account pattern '%s': a package name (a.b) or a "
				 "package and its subpackages (a.b.*)", t);
			free(t);
			goto fail;
		}
		struct pattern *pt = &pat[(*n)++];
		pt->text = t;
		pt->pkg = strndup(t, plen);
		if (!pt->pkg) {
			snprintf(why, cap, "out of memory in the agent");
			goto fail;
		}
		for (char *q = pt->pkg; *q; q++)
			if (*q == '.')
				*q = '/';
		pt->len = plen;
		pt->wild = wild;
		p = end ? end + 1 : p + len;
		if (end && !*p) {
			snprintf(why, cap, "empty account pattern at the end of '%s'", text);
			goto fail;
		}
	}
	return true;
fail:
	ag_drop_patterns(pat, *n);
	*n = 0;
	return false;
}

/* ag_option: the value of key=VALUE in a comma-separated option string, new memory; NULL absent. */
char *ag_option(const char *opts, const char *key)
{
	size_t kl = strlen(key);
	for (const char *p = opts; p && *p;) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		if (n > kl && !strncmp(p, key, kl) && p[kl] == '=')
			return strndup(p + kl + 1, n - kl - 1);
		p = end ? end + 1 : NULL;
	}
	return NULL;
}

/* ag_parse_u64: a whole decimal number with an optional k, m or g (binary) suffix. */
bool ag_parse_u64(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (end == s || errno || *s == '-')
		return false;
	uint64_t mul = 1;
	if (*end == 'k' || *end == 'K')
		mul = 1024, end++;
	else if (*end == 'm' || *end == 'M')
		mul = 1024 * 1024, end++;
	else if (*end == 'g' || *end == 'G')
		mul = 1024 * 1024 * 1024, end++;
	if (*end || (v && mul > UINT64_MAX / v))
		return false;
	*out = v * mul;
	return true;
}
