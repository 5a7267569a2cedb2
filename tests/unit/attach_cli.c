/*
 * attach_cli.c - a small driver of src/attach for tests/t_attach.sh; not a
 * unit test (make unit does not run it). Usage:
 *   attach_cli PID jcmd CMDLINE [TIMEOUT_MS]
 *   attach_cli PID cmd NAME [ARG1 [ARG2 [ARG3]]]
 *   attach_cli PID load ABS_PATH [OPTIONS]
 *   attach_cli PID nspid | tmpdir
 * Prints the JVM's text on stdout. On failure prints
 * "attach_cli: KIND: MESSAGE" on stderr (KIND from att_kind_name) and exits 1;
 * exits 2 on a usage error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/attach/attach.h"

static int usage(void)
{
	fprintf(stderr, "usage: attach_cli PID jcmd CMDLINE [TIMEOUT_MS] | PID cmd NAME [ARGS...] | "
		"PID load ABS_PATH [OPTIONS] | PID nspid | PID tmpdir\n");
	return 2;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return usage();
	int pid = atoi(argv[1]);
	const char *op = argv[2];
	char *out = NULL;
	enum att_kind kind = ATT_OK;
	struct hs_error err;
	int st;
	hs_error_clear(&err);

	if (strcmp(op, "jcmd") == 0 && (argc == 4 || argc == 5)) {
		st = att_jcmd(pid, argv[3], argc == 5 ? atoi(argv[4]) : 0, &out, &kind, &err);
	} else if (strcmp(op, "cmd") == 0 && argc >= 4 && argc <= 7) {
		st = att_command(pid, argv[3], argc > 4 ? argv[4] : NULL, argc > 5 ? argv[5] : NULL,
				 argc > 6 ? argv[6] : NULL, 0, &out, &kind, &err);
	} else if (strcmp(op, "load") == 0 && (argc == 4 || argc == 5)) {
		st = att_load_agent(pid, argv[3], argc == 5 ? argv[4] : NULL, 0, &kind, &err);
	} else if (strcmp(op, "nspid") == 0 && argc == 3) {
		printf("%d\n", att_nspid(pid));
		return 0;
	} else if (strcmp(op, "tmpdir") == 0 && argc == 3) {
		char buf[128];
		if (att_tmp_dir(pid, buf, sizeof buf) != HS_OK)
			return 1;
		printf("%s\n", buf);
		return 0;
	} else {
		return usage();
	}
	if (out)
		fputs(out, stdout);
	free(out);
	if (st != HS_OK) {
		fprintf(stderr, "attach_cli: %s: %s\n", att_kind_name(kind), err.msg);
		return 1;
	}
	return 0;
}
