/* le_readline.c - le.h on GNU readline (HAVE_READLINE builds). */
#include "le.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <readline/history.h>
#include <readline/readline.h>

static char *history_file;
static le_complete_fn completer;
static char **cands;
static int ncands, next_cand;

static char *generator(const char *text, int state)
{
	(void)text;
	if (state == 0)
		next_cand = 0;
	if (next_cand < ncands) {
		char *s = cands[next_cand];
		cands[next_cand++] = NULL;
		return s;	/* readline frees it */
	}
	return NULL;
}

static char **complete(const char *text, int start, int end)
{
	(void)end;
	for (int k = next_cand; k < ncands; k++)
		free(cands[k]);
	ncands = next_cand = 0;
	if (!cands)
		cands = calloc(4096, sizeof *cands);
	if (completer && cands)
		ncands = completer(rl_line_buffer, start, text, cands, 4096);
	rl_attempted_completion_over = 1;
	return rl_completion_matches(text, generator);
}

void le_init(const char *history_path, le_complete_fn fn)
{
	completer = fn;
	rl_readline_name = "heapsh";
	rl_attempted_completion_function = complete;
	/* '.' and '$' are part of class names; ':' starts commands. */
	rl_basic_word_break_characters = " \t\n\"'`@><=;|&{([,";
	if (history_path) {
		history_file = strdup(history_path);
		read_history(history_file);
	}
}

static volatile sig_atomic_t in_readline;	/* readline() is reading a line */

char *le_readline(const char *prompt)
{
	if (!isatty(STDIN_FILENO)) {
		char *line = NULL;
		size_t cap = 0;
		ssize_t n = getline(&line, &cap, stdin);
		if (n < 0) {
			free(line);
			return NULL;
		}
		if (n && line[n - 1] == '\n')
			line[n - 1] = 0;
		return line;
	}
	in_readline = 1;
	char *line = readline(prompt);
	in_readline = 0;
	return line;
}

void le_add_history(const char *line)
{
	if (isatty(STDIN_FILENO) && *line)
		add_history(line);
}

void le_finish(void)
{
	if (history_file && isatty(STDIN_FILENO)) {
		write_history(history_file);
		history_truncate_file(history_file, 1000);
	}
	free(history_file);
	history_file = NULL;
}

void le_interrupt(void)
{
	/* Abandon the line being typed and show a fresh prompt: only while
	 * readline reads one (a pipe is read with getline, and readline's
	 * streams are not set up). */
	if (!in_readline)
		return;
	rl_replace_line("", 0);
	rl_crlf();
	rl_on_new_line();
	rl_redisplay();
}
