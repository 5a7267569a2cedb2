/*
 * le.h - line editing: GNU readline when built with HAVE_READLINE, else a
 * plain fallback that prints the prompt and reads with getline.
 *
 * Ownership: le_readline returns a malloc'd line (no newline) the caller
 * frees, or NULL at end of input.
 */
#ifndef HS_LE_H
#define HS_LE_H

#include <stdbool.h>

/*
 * le_complete_fn: fills *out with up to cap candidates (malloc'd strings,
 * freed by le) that complete word, given the whole line so far and where
 * word starts in it; returns the count.
 */
typedef int (*le_complete_fn)(const char *line, int start, const char *word,
			      char **out, int cap);

/* le_init: set up history (history_path may be NULL) and completion. */
void le_init(const char *history_path, le_complete_fn complete);
/* le_readline: one line, with prompt shown when interactive. */
char *le_readline(const char *prompt);
void le_add_history(const char *line);
/* le_finish: save history. */
void le_finish(void);
/* le_interrupt: called from the SIGINT handler while at the prompt. */
void le_interrupt(void);

#endif
