/*
 * parse.c - the query language's lexer and recursive-descent parser.
 * Precedence, loosest first: or, and, not, relations (= != < <= > >= is in),
 * + -, * /, unary minus, member access and calls.
 */
#include "parse.h"

#include "extern.h"

#include <ctype.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum tok {
	T_EOF, T_IDENT, T_INT, T_FLOAT, T_STR,
	T_ARROW, T_AND, T_OR, T_NOT, T_IN, T_IS, T_EQ, T_NE, T_LT, T_LE, T_GT, T_GE,
	T_PLUS, T_MINUS, T_STAR, T_SLASH, T_DOT, T_COMMA, T_COLON, T_BAR,
	T_LPAREN, T_RPAREN, T_LBRACK, T_RBRACK, T_HASHLBRACK,
	T_SET_TYPE, T_INSTANCES_FOR, T_HAVE_NAMES, T_TABLE_OF, T_STRUCT, T_END, T_RET,
	T_TRUE, T_FALSE, T_NULL, T_LET, T_UNASSIGNED
};

struct token {
	enum tok t;
	int line, col;
	const char *s;		/* identifier or string text (arena) */
	int64_t i;
	double f;
};

struct parser {
	struct arena *a;
	struct token *toks;
	int n, pos;
	struct hs_error *err;
	jmp_buf fail;
	enum parse_status status;
	int depth;		/* expression nesting, bounded to keep the C stack safe */
	const char *snippet;	/* the text, copied into the arena */
};

const char *const parse_keywords[] = {
	"set_type", "instances_for", "have_names", "roots", "membership", "on_inclusion",
	"table-of", "struct", "end", "ret", "and", "or", "not", "in", "is", "true", "false",
	"null", "let", "Unassigned", "THIS", "REFERRER", "ENTITY", "ref_kind", "objects",
	"classes", "classloaders", "threads", "allocations", "int", "bool", "string", "float",
	"extern", "void", NULL
};

static const struct {
	const char *word;
	enum tok t;
} words[] = {
	{"set_type", T_SET_TYPE}, {"set-type", T_SET_TYPE},
	{"instances_for", T_INSTANCES_FOR}, {"instances-for", T_INSTANCES_FOR},
	{"have_names", T_HAVE_NAMES}, {"have-names", T_HAVE_NAMES},
	{"table-of", T_TABLE_OF}, {"table_of", T_TABLE_OF},
	{"struct", T_STRUCT}, {"end", T_END}, {"ret", T_RET},
	{"and", T_AND}, {"or", T_OR}, {"not", T_NOT}, {"in", T_IN}, {"is", T_IS},
	{"true", T_TRUE}, {"false", T_FALSE}, {"null", T_NULL}, {"let", T_LET},
	{"Unassigned", T_UNASSIGNED},
};

static void fail_at(struct parser *p, int line, int col, enum parse_status st,
		    const char *fmt, ...) __attribute__((format(printf, 5, 6), noreturn));
static void fail_at(struct parser *p, int line, int col, enum parse_status st,
		    const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->err->msg, sizeof p->err->msg, fmt, ap);
	va_end(ap);
	p->err->line = line;
	p->err->col = col;
	p->err->offset = -1;
	p->status = st;
	longjmp(p->fail, 1);
}

/* ---- lexer ---- */

static void push(struct parser *p, struct token t, int *cap)
{
	if (p->n == *cap) {
		*cap = *cap ? *cap * 2 : 64;
		p->toks = xreallocarray(p->toks, (size_t)*cap, sizeof *p->toks);
	}
	p->toks[p->n++] = t;
}

/* Multi-word keywords spelled with '-': set-type, instances-for, ... */
static size_t dashed_keyword(const char *s)
{
	static const char *const dashed[] = {"set-type", "instances-for", "have-names",
					     "on-inclusion", "table-of"};
	for (size_t k = 0; k < sizeof dashed / sizeof *dashed; k++) {
		size_t l = strlen(dashed[k]);
		if (!strncmp(s, dashed[k], l) && !isalnum((unsigned char)s[l]) && s[l] != '_')
			return l;
	}
	return 0;
}

static void lex(struct parser *p, const char *text)
{
	int cap = 0, line = 1;
	const char *s = text, *bol = text;
	for (;;) {
		while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n' ||
		       (s[0] == '/' && s[1] == '/')) {
			if (*s == '/') {
				while (*s && *s != '\n')
					s++;
				continue;
			}
			if (*s == '\n') {
				line++;
				bol = s + 1;
			}
			s++;
		}
		struct token t = {T_EOF, line, (int)(s - bol) + 1, NULL, 0, 0};
		if (!*s) {
			push(p, t, &cap);
			return;
		}
		const unsigned char *u = (const unsigned char *)s;
		size_t dl;
		if ((dl = dashed_keyword(s)) != 0 || isalpha(u[0]) || u[0] == '_' || u[0] == '$') {
			size_t len = dl;
			if (!len)
				while (isalnum((unsigned char)s[len]) || s[len] == '_' || s[len] == '$')
					len++;
			t.t = T_IDENT;
			t.s = arena_strndup(p->a, s, len);
			if (!strcmp(t.s, "on-inclusion"))
				t.s = "on_inclusion";
			for (size_t k = 0; k < sizeof words / sizeof *words; k++)
				if (!strcmp(t.s, words[k].word))
					t.t = words[k].t;
			s += len;
		} else if (isdigit(u[0])) {
			char *end;
			errno = 0;
			if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
				t.t = T_INT;
				t.i = (int64_t)strtoull(s, &end, 16);
			} else {
				const char *q = s;
				while (isdigit((unsigned char)*q))
					q++;
				bool fl = (*q == '.' && isdigit((unsigned char)q[1])) || *q == 'e' ||
					  *q == 'E';
				if (fl) {
					t.t = T_FLOAT;
					t.f = strtod(s, &end);
				} else {
					t.t = T_INT;
					t.i = strtoll(s, &end, 10);
				}
			}
			if (errno == ERANGE && t.t == T_INT)
				fail_at(p, t.line, t.col, PARSE_ERROR, "integer literal out of range "
					"(a long holds -9223372036854775808 to 9223372036854775807)");
			s = end;
		} else if (u[0] == '"') {
			const char *q = s + 1;
			char *buf = arena_alloc(p->a, strlen(s) + 1), *o = buf;
			while (*q && *q != '"' && *q != '\n') {
				if (*q == '\\' && q[1]) {
					q++;
					*o++ = *q == 'n' ? '\n' : *q == 't' ? '\t' : *q;
					q++;
				} else {
					*o++ = *q++;
				}
			}
			if (*q != '"')
				fail_at(p, t.line, t.col, *q ? PARSE_ERROR : PARSE_INCOMPLETE,
					"unterminated string");
			*o = 0;
			t.t = T_STR;
			t.s = buf;
			s = q + 1;
		} else if (!strncmp(s, "<-", 2) || !strncmp(s, "\xe2\x86\x90", 3)) {
			t.t = T_ARROW;
			s += s[0] == '<' ? 2 : 3;
		} else if (!strncmp(s, "\xe2\x88\xa7", 3)) {	/* ∧ */
			t.t = T_AND;
			s += 3;
		} else if (!strncmp(s, "\xe2\x88\xa8", 3)) {	/* ∨ */
			t.t = T_OR;
			s += 3;
		} else if (!strncmp(s, "\xc2\xac", 2)) {	/* ¬ */
			t.t = T_NOT;
			s += 2;
		} else if (!strncmp(s, "\xe2\x88\x88", 3)) {	/* ∈ */
			t.t = T_IN;
			s += 3;
		} else if (!strncmp(s, "\xe2\x89\xa0", 3)) {	/* ≠ */
			t.t = T_NE;
			s += 3;
		} else if (!strncmp(s, "\xe2\x89\xa4", 3)) {	/* ≤ */
			t.t = T_LE;
			s += 3;
		} else if (!strncmp(s, "\xe2\x89\xa5", 3)) {	/* ≥ */
			t.t = T_GE;
			s += 3;
		} else if (!strncmp(s, "#[", 2)) {
			t.t = T_HASHLBRACK;
			s += 2;
		} else {
			static const char two[][3] = {"!=", "<=", ">=", "==", "&&", "||"};
			static const enum tok two_t[] = {T_NE, T_LE, T_GE, T_EQ, T_AND, T_OR};
			bool done = false;
			for (size_t k = 0; k < 6 && !done; k++)
				if (!strncmp(s, two[k], 2)) {
					t.t = two_t[k];
					s += 2;
					done = true;
				}
			if (!done) {
				switch (*s) {
				case '=': t.t = T_EQ; break;
				case '<': t.t = T_LT; break;
				case '>': t.t = T_GT; break;
				case '+': t.t = T_PLUS; break;
				case '-': t.t = T_MINUS; break;
				case '*': t.t = T_STAR; break;
				case '/': t.t = T_SLASH; break;
				case '.': t.t = T_DOT; break;
				case ',': t.t = T_COMMA; break;
				case ':': t.t = T_COLON; break;
				case '|': t.t = T_BAR; break;
				case '(': t.t = T_LPAREN; break;
				case ')': t.t = T_RPAREN; break;
				case '[': t.t = T_LBRACK; break;
				case ']': t.t = T_RBRACK; break;
				case '!': t.t = T_NOT; break;
				default:
					if (u[0] >= 0x80)
						fail_at(p, t.line, t.col, PARSE_ERROR,
							"unexpected character (not one of the language's "
							"symbols)");
					fail_at(p, t.line, t.col, PARSE_ERROR, "unexpected character '%c'",
						*s);
				}
				s++;
			}
		}
		push(p, t, &cap);
	}
}

/* ---- parser ---- */

static struct token *peek(struct parser *p)
{
	return &p->toks[p->pos];
}

static struct token *peek2(struct parser *p)
{
	return &p->toks[p->pos + 1 < p->n ? p->pos + 1 : p->n - 1];
}

static const char *tok_name(enum tok t)
{
	static const char *const names[] = {
		"end of input", "a name", "a number", "a number", "a string",
		"'<-'", "'and'", "'or'", "'not'", "'in'", "'is'", "'='", "'!='", "'<'", "'<='",
		"'>'", "'>='", "'+'", "'-'", "'*'", "'/'", "'.'", "','", "':'", "'|'",
		"'('", "')'", "'['", "']'", "'#['",
		"'set_type'", "'instances_for'", "'have_names'", "'table-of'", "'struct'",
		"'end'", "'ret'", "'true'", "'false'", "'null'", "'let'", "'Unassigned'"};
	return names[t];
}

static void unexpected(struct parser *p, const char *wanted) __attribute__((noreturn));
static void unexpected(struct parser *p, const char *wanted)
{
	struct token *t = peek(p);
	if (t->t == T_EOF)
		fail_at(p, t->line, t->col, PARSE_INCOMPLETE, "the snippet ends where %s was expected",
			wanted);
	if (t->t == T_IDENT)
		fail_at(p, t->line, t->col, PARSE_ERROR, "expected %s, found '%s'", wanted, t->s);
	fail_at(p, t->line, t->col, PARSE_ERROR, "expected %s, found %s", wanted, tok_name(t->t));
}

static struct token *expect(struct parser *p, enum tok t, const char *wanted)
{
	if (peek(p)->t != t)
		unexpected(p, wanted);
	return &p->toks[p->pos++];
}

static bool accept(struct parser *p, enum tok t)
{
	if (peek(p)->t != t)
		return false;
	p->pos++;
	return true;
}

static struct node *mk(struct parser *p, enum node_kind k, const struct token *at)
{
	struct node *n = arena_alloc(p->a, sizeof *n);
	n->kind = k;
	n->line = at->line;
	n->col = at->col;
	n->snippet = p->snippet;
	return n;
}

static struct node *expr(struct parser *p);

/* A growable array of node pointers in the arena. */
static struct node **grow_items(struct parser *p, struct node **v, int n, int *cap)
{
	if (n < *cap)
		return v;
	int nc = *cap ? *cap * 2 : 4;
	struct node **w = arena_alloc(p->a, (size_t)nc * sizeof *w);
	if (n)
		memcpy(w, v, (size_t)n * sizeof *w);
	*cap = nc;
	return w;
}

static void expr_list(struct parser *p, struct node *n, enum tok close, const char *wanted)
{
	int cap = 0;
	if (accept(p, close))
		return;
	do {
		n->items = grow_items(p, n->items, n->nitems, &cap);
		n->items[n->nitems++] = expr(p);
	} while (accept(p, T_COMMA));
	expect(p, close, wanted);
}

/* A type name: int, bool, ..., or a (dotted) declared type. */
static const char *type_name(struct parser *p)
{
	if (peek(p)->t == T_TABLE_OF) {
		p->pos++;
		const char *of = expect(p, T_IDENT, "a type name after table-of")->s;
		size_t l = strlen(of) + 10;
		char *s = arena_alloc(p->a, l);
		snprintf(s, l, "table-of %s", of);
		return s;
	}
	return expect(p, T_IDENT, "a type name (int, bool, string, float or a declared type)")->s;
}

/* A class name after 'is': a.b.C$D, or Outer.Inner. */
static const char *dotted_name(struct parser *p)
{
	char buf[1024];
	size_t len = 0;
	do {
		const char *part = expect(p, T_IDENT, "a class name")->s;
		size_t l = strlen(part);
		if (len + l + 2 >= sizeof buf)
			fail_at(p, peek(p)->line, peek(p)->col, PARSE_ERROR, "class name too long");
		if (len)
			buf[len++] = '.';
		memcpy(buf + len, part, l);
		len += l;
	} while (peek(p)->t == T_DOT && peek2(p)->t == T_IDENT && accept(p, T_DOT));
	return arena_strndup(p->a, buf, len);
}

/* try_params: "a, b : int |" at the start of a lambda; false (and no move) otherwise. */
static bool try_params(struct parser *p, struct node *lam)
{
	int save = p->pos, cap = 0, n = 0;
	struct decl *v = NULL;
	while (peek(p)->t == T_IDENT) {
		struct token *t = &p->toks[p->pos++];
		struct decl d = {t->s, NULL, t->line, t->col};
		if (accept(p, T_COLON)) {
			if (peek(p)->t != T_IDENT && peek(p)->t != T_TABLE_OF)
				break;
			d.type = type_name(p);
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 4;
			struct decl *w = arena_alloc(p->a, (size_t)cap * sizeof *w);
			if (n)
				memcpy(w, v, (size_t)n * sizeof *w);
			v = w;
		}
		v[n++] = d;
		if (accept(p, T_BAR)) {
			lam->params = v;
			lam->nparams = n;
			return true;
		}
		if (!accept(p, T_COMMA))
			break;
	}
	if (n == 0 && accept(p, T_BAR))
		return true;	/* "[ | body ]": no parameters */
	p->pos = save;
	return false;
}

static struct node *lambda(struct parser *p)
{
	struct token *open = expect(p, T_LBRACK, "'['");
	struct node *n = mk(p, N_LAMBDA, open);
	try_params(p, n);
	int cap = 0;
	while (!accept(p, T_RBRACK)) {
		if (peek(p)->t == T_EOF)
			unexpected(p, "']' to close the lambda");
		if (accept(p, T_RET)) {
			n->result = expr(p);
			expect(p, T_RBRACK, "']' after the ret expression");
			break;
		}
		struct node *s;
		if (peek(p)->t == T_IDENT && peek2(p)->t == T_ARROW) {
			struct token *t = &p->toks[p->pos];
			p->pos += 2;
			s = mk(p, N_ASSIGN, t);
			s->name = t->s;
			s->a = expr(p);
		} else {
			s = expr(p);
			if (peek(p)->t == T_RBRACK) {
				p->pos++;
				n->result = s;	/* a final bare expression is the result */
				break;
			}
		}
		n->items = grow_items(p, n->items, n->nitems, &cap);
		n->items[n->nitems++] = s;
	}
	return n;
}

static struct node *primary(struct parser *p)
{
	struct token *t = peek(p);
	struct node *n;
	switch (t->t) {
	case T_INT:
		p->pos++;
		n = mk(p, N_INT, t);
		n->i = t->i;
		return n;
	case T_FLOAT:
		p->pos++;
		n = mk(p, N_FLOAT, t);
		n->f = t->f;
		return n;
	case T_STR:
		p->pos++;
		n = mk(p, N_STR, t);
		n->s = t->s;
		return n;
	case T_TRUE: case T_FALSE:
		p->pos++;
		n = mk(p, N_BOOL, t);
		n->i = t->t == T_TRUE;
		return n;
	case T_NULL:
		p->pos++;
		return mk(p, N_NULL, t);
	case T_IDENT:
		p->pos++;
		if (peek(p)->t == T_LPAREN && peek(p)->line == t->line) {
			/* name(args) on one line: a native function (extern) */
			p->pos++;
			n = mk(p, N_EXTERN_CALL, t);
			n->name = t->s;
			expr_list(p, n, T_RPAREN, "',' or ')' in the arguments");
			return n;
		}
		n = mk(p, N_IDENT, t);
		n->name = t->s;
		return n;
	case T_LPAREN:
		p->pos++;
		n = expr(p);
		expect(p, T_RPAREN, "')'");
		return n;
	case T_HASHLBRACK:
		p->pos++;
		n = mk(p, N_LIST, t);
		expr_list(p, n, T_RBRACK, "',' or ']' in the list");
		return n;
	case T_STRUCT: {
		p->pos++;
		n = mk(p, N_STRUCT, t);
		n->name = expect(p, T_IDENT, "the struct type's name")->s;
		int cap = 0;
		if (!accept(p, T_END)) {
			do {
				n->items = grow_items(p, n->items, n->nitems, &cap);
				n->items[n->nitems++] = expr(p);
			} while (accept(p, T_COMMA));
			expect(p, T_END, "',' or 'end' in the struct literal");
		}
		return n;
	}
	case T_LBRACK:
		return lambda(p);
	default:
		unexpected(p, "an expression");
	}
}

static struct node *postfix(struct parser *p)
{
	struct node *n = primary(p);
	while (peek(p)->t == T_DOT) {
		struct token *dot = &p->toks[p->pos++];
		struct token *id = expect(p, T_IDENT, "a member name after '.'");
		struct node *m = mk(p, N_MEMBER, id);
		(void)dot;
		m->name = id->s;
		m->a = n;
		if (accept(p, T_LPAREN)) {
			m->kind = N_CALL;
			expr_list(p, m, T_RPAREN, "',' or ')' in the arguments");
		}
		n = m;
	}
	return n;
}

static struct node *unary(struct parser *p)
{
	struct token *t = peek(p);
	if (accept(p, T_MINUS)) {
		if (++p->depth > 500)
			fail_at(p, t->line, t->col, PARSE_ERROR, "expressions nested more than 500 deep");
		struct node *n = mk(p, N_NEG, t);
		n->a = unary(p);
		p->depth--;
		return n;
	}
	return postfix(p);
}

static struct node *binary(struct parser *p, struct node *a, enum bin_op op,
			   struct token *at, struct node *b)
{
	struct node *n = mk(p, N_BIN, at);
	n->op = op;
	n->a = a;
	n->b = b;	/* positioned at the operator, where errors point */
	return n;
}

static struct node *mul(struct parser *p)
{
	struct node *n = unary(p);
	for (;;) {
		struct token *t = peek(p);
		if (accept(p, T_STAR))
			n = binary(p, n, OP_MUL, t, unary(p));
		else if (accept(p, T_SLASH))
			n = binary(p, n, OP_DIV, t, unary(p));
		else
			return n;
	}
}

static struct node *add(struct parser *p)
{
	struct node *n = mul(p);
	for (;;) {
		struct token *t = peek(p);
		if (accept(p, T_PLUS))
			n = binary(p, n, OP_ADD, t, mul(p));
		else if (accept(p, T_MINUS))
			n = binary(p, n, OP_SUB, t, mul(p));
		else
			return n;
	}
}

static struct node *rel(struct parser *p)
{
	struct node *n = add(p);
	struct token *t = peek(p);
	static const struct { enum tok t; enum bin_op op; } rels[] = {
		{T_EQ, OP_EQ}, {T_NE, OP_NE}, {T_LT, OP_LT}, {T_LE, OP_LE}, {T_GT, OP_GT},
		{T_GE, OP_GE}};
	for (size_t k = 0; k < sizeof rels / sizeof *rels; k++)
		if (accept(p, rels[k].t))
			return binary(p, n, rels[k].op, t, add(p));
	if (accept(p, T_IS)) {
		struct node *m = mk(p, N_IS, t);
		m->a = n;
		struct token *at = peek(p);
		m->name = dotted_name(p);
		m->line = at->line;	/* errors about the class point at its name */
		m->col = at->col;
		return m;
	}
	if (accept(p, T_IN)) {
		struct node *m = mk(p, N_IN, t);
		m->a = n;
		if (accept(p, T_UNASSIGNED))
			m->kind = N_IN_UNASSIGNED;
		else
			m->b = add(p);
		return m;
	}
	return n;
}

static struct node *not_expr(struct parser *p)
{
	struct token *t = peek(p);
	if (accept(p, T_NOT)) {
		if (++p->depth > 500)
			fail_at(p, t->line, t->col, PARSE_ERROR, "expressions nested more than 500 deep");
		struct node *n = mk(p, N_NOT, t);
		n->a = not_expr(p);
		p->depth--;
		return n;
	}
	return rel(p);
}

static struct node *and_expr(struct parser *p)
{
	struct node *n = not_expr(p);
	struct token *t;
	while ((t = peek(p))->t == T_AND && accept(p, T_AND))
		n = binary(p, n, OP_AND, t, not_expr(p));
	return n;
}

static struct node *expr(struct parser *p)
{
	if (++p->depth > 500)
		fail_at(p, peek(p)->line, peek(p)->col, PARSE_ERROR,
			"expressions nested more than 500 deep");
	struct node *n = and_expr(p);
	struct token *t;
	while ((t = peek(p))->t == T_OR && accept(p, T_OR))
		n = binary(p, n, OP_OR, t, and_expr(p));
	p->depth--;
	return n;
}

/* ---- statements ---- */

static struct stmt *new_stmt(struct parser *p, enum stmt_kind k, const struct token *at)
{
	struct stmt *s = arena_alloc(p->a, sizeof *s);
	s->kind = k;
	s->line = at->line;
	s->col = at->col;
	s->snippet = p->snippet;
	return s;
}

static void decls_until_end(struct parser *p, struct stmt *s)
{
	int cap = 0;
	while (!accept(p, T_END)) {
		struct token *id = expect(p, T_IDENT, "a field name or 'end'");
		expect(p, T_COLON, "':' and the field's type");
		struct decl d = {id->s, type_name(p), id->line, id->col};
		if (s->nfields == cap) {
			cap = cap ? cap * 2 : 4;
			struct decl *w = arena_alloc(p->a, (size_t)cap * sizeof *w);
			if (s->nfields)
				memcpy(w, s->fields, (size_t)s->nfields * sizeof *w);
			s->fields = w;
		}
		s->fields[s->nfields++] = d;
		accept(p, T_COMMA);
	}
}

static struct stmt *set_type(struct parser *p)
{
	struct token *kw = &p->toks[p->pos++];
	struct stmt *s = new_stmt(p, S_SET_TYPE, kw);
	s->name = expect(p, T_IDENT, "the set type's name")->s;
	expect(p, T_COLON, "':' after the set type's name");
	int cap = 0;
	while (peek(p)->t == T_IDENT) {
		struct token *id = peek(p);
		struct property pr;
		memset(&pr, 0, sizeof pr);
		pr.decl.name = id->s;
		pr.decl.line = id->line;
		pr.decl.col = id->col;
		if (peek2(p)->t == T_ARROW) {
			if (!strcmp(id->s, "roots"))
				pr.kind = P_ROOTS;
			else if (!strcmp(id->s, "membership"))
				pr.kind = P_MEMBERSHIP;
			else if (!strcmp(id->s, "on_inclusion"))
				pr.kind = P_ON_INCLUSION;
			else
				fail_at(p, id->line, id->col, PARSE_ERROR,
					"'%s' is not a property: use roots, membership, on_inclusion, "
					"or declare it with 'name : type <- value'", id->s);
			p->pos += 2;
		} else if (peek2(p)->t == T_COLON) {
			p->pos += 2;
			pr.kind = P_USER;
			pr.decl.type = type_name(p);
			expect(p, T_ARROW, "'<-' and the property's initial value");
		} else {
			break;
		}
		pr.value = expr(p);
		if (s->nprops == cap) {
			cap = cap ? cap * 2 : 4;
			struct property *w = arena_alloc(p->a, (size_t)cap * sizeof *w);
			if (s->nprops)
				memcpy(w, s->props, (size_t)s->nprops * sizeof *w);
			s->props = w;
		}
		s->props[s->nprops++] = pr;
	}
	if (peek(p)->t == T_EOF)
		unexpected(p, "another property or 'instances_for'");
	return s;
}

/* ext_type_of: a type of a native function's signature at token t. */
static enum ext_type ext_type_of(struct parser *p, const struct token *t, bool result)
{
	enum ext_type et;
	if (!ext_type_parse(t->s, strlen(t->s), &et))
		fail_at(p, t->line, t->col, PARSE_ERROR,
			"unknown type '%s' for a native function (int, float, bool, string; void "
			"as the result)", t->s);
	if (et == EXT_VOID && !result)
		fail_at(p, t->line, t->col, PARSE_ERROR,
			"void is only a result type (write () for no parameters)");
	return et;
}

/*
 * extern "lib" name(types) : type - declares a native function
 * (src/dsl/extern.h); the types are checked here, the library and the
 * symbol when the statement runs. s->sig is the signature in extern.h's
 * syntax, "(float, int) : float".
 */
static struct stmt *extern_decl(struct parser *p)
{
	struct token *kw = &p->toks[p->pos++];
	struct stmt *s = new_stmt(p, S_EXTERN, kw);
	struct token *lib = expect(p, T_STR, "the library, a string such as \"libm.so.6\"");
	if (!*lib->s)
		fail_at(p, lib->line, lib->col, PARSE_ERROR, "the library's name is empty");
	s->lib.name = lib->s;
	s->lib.line = lib->line;
	s->lib.col = lib->col;
	struct token *id = expect(p, T_IDENT, "the function's name after the library");
	s->name = id->s;
	s->name_line = id->line;
	s->name_col = id->col;
	expect(p, T_LPAREN, "'(' and the parameter types after the function's name");
	char sig[EXT_MAX_PARAMS * 8 + 32];
	size_t len = 0;
	sig[len++] = '(';
	int np = 0;
	if (!accept(p, T_RPAREN)) {
		do {
			struct token *ty = expect(p, T_IDENT,
						  "a parameter type (int, float, bool, string)");
			enum ext_type et = ext_type_of(p, ty, false);
			if (np == EXT_MAX_PARAMS)
				fail_at(p, ty->line, ty->col, PARSE_ERROR,
					"a native function takes at most %d parameters", EXT_MAX_PARAMS);
			len += (size_t)snprintf(sig + len, sizeof sig - len, "%s%s", np ? ", " : "",
						ext_type_name(et));
			np++;
		} while (accept(p, T_COMMA));
		expect(p, T_RPAREN, "',' or ')' in the parameter types");
	}
	expect(p, T_COLON, "':' and the result type");
	struct token *rt = expect(p, T_IDENT, "the result type (int, float, bool, string or void)");
	snprintf(sig + len, sizeof sig - len, ") : %s", ext_type_name(ext_type_of(p, rt, true)));
	s->sig = arena_strndup(p->a, sig, strlen(sig));
	return s;
}

static struct stmt *statement(struct parser *p)
{
	struct token *t = peek(p);
	struct stmt *s;
	switch (t->t) {
	case T_SET_TYPE:
		return set_type(p);
	case T_INSTANCES_FOR:
		p->pos++;
		s = new_stmt(p, S_INSTANCES, t);
		s->name = expect(p, T_IDENT, "the set type's name")->s;
		expect(p, T_HAVE_NAMES, "'have_names'");
		expect(p, T_EQ, "'=' after have_names");
		s->e = expr(p);
		return s;
	case T_LET:
		p->pos++;
		s = new_stmt(p, S_LET, t);
		s->name = expect(p, T_IDENT, "a name after let")->s;
		if (!accept(p, T_EQ))
			expect(p, T_ARROW, "'=' after the name");
		s->e = expr(p);
		return s;
	case T_IDENT:
		/* extern is a keyword only here: a Java field may be called extern */
		if (!strcmp(t->s, "extern") && (peek2(p)->t == T_STR || peek2(p)->t == T_IDENT))
			return extern_decl(p);
		if (peek2(p)->t == T_ARROW) {
			p->pos += 2;
			s = new_stmt(p, S_LET, t);
			s->name = t->s;
			s->e = expr(p);
			return s;
		}
		if (peek2(p)->t == T_COLON) {
			p->pos += 2;
			if (accept(p, T_TABLE_OF)) {
				s = new_stmt(p, S_TYPE, t);
				s->name = t->s;
				s->type = expect(p, T_IDENT, "the element type after table-of")->s;
				return s;
			}
			if (accept(p, T_STRUCT)) {
				s = new_stmt(p, S_TYPE, t);
				s->name = t->s;
				s->is_struct = true;
				decls_until_end(p, s);
				return s;
			}
			s = new_stmt(p, S_LET, t);
			s->name = t->s;
			s->type = type_name(p);
			if (accept(p, T_ARROW))
				s->e = expr(p);
			return s;
		}
		break;
	default:
		break;
	}
	s = new_stmt(p, S_EXPR, t);
	s->e = expr(p);
	return s;
}

enum parse_status parse_snippet(const char *text, struct arena *a, struct stmt ***stmts,
				int *n, struct hs_error *err)
{
	/* On the heap: its fields change between setjmp and longjmp. */
	struct parser *p = xcalloc(1, sizeof *p);
	enum parse_status st = PARSE_OK;
	p->a = a;
	p->err = err;
	*stmts = NULL;
	*n = 0;
	if (setjmp(p->fail)) {
		st = p->status;
		goto done;
	}
	p->snippet = arena_strndup(a, text, strlen(text));
	lex(p, text);
	int cap = 0;
	bool pending = false;	/* a set_type still waiting for its instances_for */
	while (peek(p)->t != T_EOF) {
		struct stmt *s = statement(p);
		if (s->kind == S_SET_TYPE)
			pending = true;
		else if (s->kind == S_INSTANCES)
			pending = false;
		if (*n == cap) {
			cap = cap ? cap * 2 : 4;
			struct stmt **w = arena_alloc(a, (size_t)cap * sizeof *w);
			if (*n)
				memcpy(w, *stmts, (size_t)*n * sizeof *w);
			*stmts = w;
		}
		(*stmts)[(*n)++] = s;
	}
	if (pending) {
		err->line = peek(p)->line;
		err->col = peek(p)->col;
		snprintf(err->msg, sizeof err->msg, "the set_type waits for its instances_for");
		st = PARSE_INCOMPLETE;
	}
done:
	free(p->toks);
	free(p);
	return st;
}
