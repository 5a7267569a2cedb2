/*
 * parse.h - lexer and parser of the query language (docs/dsl.md).
 *
 * A snippet is parsed whole. PARSE_INCOMPLETE means the text ended where
 * more was needed (an open bracket, a dangling operator, a set_type with no
 * instances_for yet): the shell then reads another line and tries again,
 * Lua's "<eof>" trick. PARSE_ERROR fills err with line, column and message.
 * Ownership: the statements and nodes live in the arena passed in.
 */
#ifndef HS_PARSE_H
#define HS_PARSE_H

#include "../base/mem.h"
#include "arena.h"
#include "ast.h"

enum parse_status { PARSE_OK = 0, PARSE_ERROR = -1, PARSE_INCOMPLETE = 1 };

/*
 * parse_snippet: text (NUL-terminated, any number of lines) into *stmts
 * (*n of them). Errors carry err->line/col (1-based) of the offending token.
 */
enum parse_status parse_snippet(const char *text, struct arena *a, struct stmt ***stmts,
				int *n, struct hs_error *err);

/* parse_keywords: the language's keywords, NULL-terminated (for completion). */
extern const char *const parse_keywords[];

#endif
