/*
 * attach_internal.h - what the files of src/attach share and nothing else
 * includes: attach.c's error helper and its reading of /proc/PID/status.
 */
#ifndef HS_ATTACH_INTERNAL_H
#define HS_ATTACH_INTERNAL_H

#include <sys/types.h>

#include "attach.h"

/*
 * att_fail: set *kind (may be NULL) to k and err (may be NULL) to the
 * formatted message (offset -1); returns HS_ERR, or HS_INTERRUPTED for
 * ATT_INTERRUPTED.
 */
int att_fail(enum att_kind *kind, enum att_kind k, struct hs_error *err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* att_read_ids: process pid's effective uid and gid, from /proc/PID/status; -1 with errno. */
int att_read_ids(int pid, uid_t *uid, gid_t *gid);

#endif
