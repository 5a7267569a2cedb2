/*
 * test_filemap.c - the noted mappings a SIGBUS handler explains
 * (src/base/filemap.c): the file and the byte offset of an address inside
 * one, nothing outside or after fm_forget, and no more than FM_SLOTS.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>

#include <cmocka.h>

#include "../../src/base/filemap.h"

static char area[3][8192];

static void explains_inside_only(void **state)
{
	(void)state;
	char msg[FM_PATH + 512];
	fm_note(area[0], sizeof area[0], 1000000, "/data/big.hprof");
	assert_true(fm_explain(area[0] + 4096, msg, sizeof msg));
	assert_non_null(strstr(msg, "/data/big.hprof changed on disk"));
	assert_non_null(strstr(msg, "reading its byte 1004096 failed"));	/* off + 4096 */
	assert_true(fm_explain(area[0], msg, sizeof msg));
	assert_non_null(strstr(msg, "byte 1000000 "));
	assert_false(fm_explain(area[0] + sizeof area[0], msg, sizeof msg));
	assert_false(fm_explain(area[1], msg, sizeof msg));
	/* a short buffer is cut, still terminated */
	char tiny[16];
	assert_true(fm_explain(area[0] + 1, tiny, sizeof tiny));
	assert_int_equal(strlen(tiny), sizeof tiny - 1);
	fm_forget(area[0] + 100, 1);	/* any overlap forgets it */
	assert_false(fm_explain(area[0] + 4096, msg, sizeof msg));
}

static void path_from_descriptor(void **state)
{
	(void)state;
	char msg[FM_PATH + 512], tmpl[] = "/tmp/test_filemapXXXXXX";
	int fd = mkstemp(tmpl);
	assert_true(fd >= 0);
	fm_note_fd(area[1], sizeof area[1], 0, fd);
	assert_true(fm_explain(area[1] + 7, msg, sizeof msg));
	assert_non_null(strstr(msg, tmpl));
	assert_non_null(strstr(msg, "byte 7 "));
	fm_forget(area[1], sizeof area[1]);
	close(fd);
	unlink(tmpl);
}

static void slots_run_out(void **state)
{
	(void)state;
	char msg[FM_PATH + 512];
	static char many[FM_SLOTS + 8][64];
	for (int k = 0; k < FM_SLOTS + 8; k++)
		fm_note(many[k], sizeof many[k], 0, "f");
	assert_true(fm_explain(many[0], msg, sizeof msg));
	assert_false(fm_explain(many[FM_SLOTS + 7], msg, sizeof msg));	/* not noted */
	fm_forget(many, sizeof many);
	for (int k = 0; k < FM_SLOTS + 8; k++)
		assert_false(fm_explain(many[k], msg, sizeof msg));
	fm_note(area[2], sizeof area[2], 0, "g");	/* the slots are free again */
	assert_true(fm_explain(area[2], msg, sizeof msg));
	fm_forget(area[2], sizeof area[2]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(explains_inside_only),
		cmocka_unit_test(path_from_descriptor),
		cmocka_unit_test(slots_run_out),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
