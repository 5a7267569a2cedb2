/*
 * req.c - the agent's readers of request payloads (docs/protocol.md): every
 * read is checked against what is left, so a malformed or hostile request
 * sets req.bad instead of reading past its frame; and the INSTANCES
 * filter's predicate tree; and the allocation recorder's settings: account
 * patterns (ALLOC_START, and the agent's start-up options) and the option
 * string itself. Nothing here touches the JVM, so the fuzz
 * harness (tests/fuzz/fuzz_agent.c) runs these readers as the agent does.
 */
#include <stdlib.h>
#include <string.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>

#include "ag.h"

bool ag_need(struct req *r, size_t n)
{
	if (r->bad || (size_t)(r->end - r->p) < n)
		r->bad = true;
	return !r->bad;
}
uint8_t ag_ru8(struct req *r) { return ag_need(r, 1) ? *r->p++ : 0; }
uint32_t ag_ru32(struct req *r)
{
	if (!ag_need(r, 4))
		return 0;
	uint32_t v = (uint32_t)r->p[0] << 24 | (uint32_t)r->p[1] << 16 | (uint32_t)r->p[2] << 8 |
		     r->p[3];
	r->p += 4;
	return v;
}
uint16_t ag_ru16(struct req *r)
{
	if (!ag_need(r, 2))
		return 0;
	uint16_t v = (uint16_t)(r->p[0] << 8 | r->p[1]);
	r->p += 2;
	return v;
}
uint64_t ag_ru64(struct req *r)
{
	uint64_t hi = ag_ru32(r);
	return hi << 32 | ag_ru32(r);
}
/* ag_rstr: a new NUL-terminated copy (caller frees), or NULL when malformed. */
char *ag_rstr(struct req *r)
{
	uint32_t n = ag_ru32(r);
	if (!ag_need(r, n))
		return NULL;
	char *s = malloc((size_t)n + 1);
	if (!s) {
		r->bad = true;
		return NULL;
	}
	memcpy(s, r->p, n);
	s[n] = 0;
	r->p += n;
	return s;
}

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

struct pnode *ag_pred_read(struct req *r, int depth, int *budget)
{
	if (depth > 32 || --*budget < 0) {
		r->bad = true;
		return NULL;
	}
	struct pnode *p = calloc(1, sizeof *p);
	if (!p) {
		r->bad = true;
		return NULL;
	}
	p->op = ag_ru8(r);
	switch (p->op) {
	case P_TRUE:
		break;
	case P_AND:
	case P_OR:
	case P_NOT:
		p->n = p->op == P_NOT ? 1 : ag_ru8(r);
		p->kid = calloc(p->n + 1u, sizeof *p->kid);
		for (int i = 0; i < p->n && !r->bad && p->kid; i++)
			p->kid[i] = ag_pred_read(r, depth + 1, budget);
		if (!p->kid)
			r->bad = true;
		break;
	case P_CMP:
		p->field = ag_rstr(r);
		p->cmp = ag_ru8(r);
		p->kind = ag_ru8(r);
		if (p->kind == K_LONG || p->kind == K_DOUBLE)
			p->bits = ag_ru64(r);
		else if (p->kind == K_BOOL)
			p->bits = ag_ru8(r);
		else if (p->kind == K_STRING)
			p->text = ag_rstr(r);
		else if (p->kind != K_NULL)
			r->bad = true;
		if (p->cmp > 5)
			r->bad = true;
		break;
	default:
		r->bad = true;
	}
	if (r->bad) {
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
