/*
 * req.c - the agent's readers of request payloads (docs/protocol.md): every
 * read is checked against what is left, so a malformed or hostile request
 * sets req.bad instead of reading past its frame; and the INSTANCES
 * filter's predicate tree. Nothing here touches the JVM, so the fuzz
 * harness (tests/fuzz/fuzz_agent.c) runs these readers as the agent does.
 */
#include <stdlib.h>
#include <string.h>

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

