/* le_plain.c - le.h without readline: prompt, getline, no history. */
#include "le.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

void le_init(const char *history_path, le_complete_fn complete)
{
	(void)history_path;
	(void)complete;
}

char *le_readline(const char *prompt)
{
	if (isatty(STDIN_FILENO)) {
		fputs(prompt, stdout);
		fflush(stdout);
	}
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

void le_add_history(const char *line)
{
	(void)line;
}

void le_finish(void)
{
}

void le_interrupt(void)
{
	if (write(STDOUT_FILENO, "\n", 1) < 0)
		return;
}
