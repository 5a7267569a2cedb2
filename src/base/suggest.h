/*
 * suggest.h - "did you mean" for names typed wrong: commands, classes,
 * fields, members. Edit distance (Levenshtein: insertions, deletions and
 * substitutions of bytes) to each candidate; the closest ones, if they are
 * within two edits, are suggested.
 */
#ifndef HS_SUGGEST_H
#define HS_SUGGEST_H

#include <stddef.h>

/* hs_edit_distance: edits from a to b; 99 when either is longer than 64 bytes. */
size_t hs_edit_distance(const char *a, const char *b);

/*
 * hs_suggest: into buf (cap bytes, always terminated) "; did you mean a, b?"
 * naming the candidates closest to name (at most two edits away, each named
 * once), or "" when none is. prefix goes before each candidate (":" for
 * commands; NULL for none).
 */
void hs_suggest(char *buf, size_t cap, const char *name, const char *const *cands, int n,
		const char *prefix);

#endif
