/*
 * jvmdir.c - struct att_jvm_dir (attach.h): the private folders where heapsh
 * and a JVM pass each other files (the agent library the JVM loads, the heap
 * dumps it writes), in the JVM's own /tmp when it runs in another mount
 * namespace. Everything below /proc/PID/root is reached through open folder
 * descriptors, with no symbolic link followed (a container owns its /tmp).
 */
#include "attach.h"
#include "attach_internal.h"

#include "../base/fmt.h"
#include "../base/io.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

/* random_name: 6 characters of [A-Za-z0-9] into buf (7 bytes), as mkdtemp's XXXXXX. */
static void random_name(char *buf)
{
	static const char set[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	unsigned char r[6];
	if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r) {
		struct timespec ts;	/* no entropy source: still unlikely to repeat, and mkdirat is exclusive */
		clock_gettime(CLOCK_REALTIME, &ts);
		uint64_t x = (uint64_t)ts.tv_nsec * 2654435761u ^ (uint64_t)getpid() << 20 ^ (uint64_t)ts.tv_sec;
		for (int i = 0; i < 6; i++, x >>= 8)
			r[i] = (unsigned char)x;
	}
	for (int i = 0; i < 6; i++)
		buf[i] = set[r[i] % (sizeof set - 1)];
	buf[6] = 0;
}

/* give: as root, hand fd to the JVM's user and group (a JVM that is not root's). */
static int give(const struct att_jvm_dir *d, int fd)
{
	if (geteuid() != 0 || d->uid == 0 || d->uid == (uid_t)-1 || d->gid == (gid_t)-1)
		return 0;
	return fchown(fd, d->uid, d->gid);
}

int att_jvm_dir_make(int pid, const char *local_base, const char *prefix, struct att_jvm_dir *d,
		     enum att_kind *kind, struct hs_error *err)
{
	char base[PATH_MAX];
	memset(d, 0, sizeof *d);
	d->fd = d->parent_fd = -1;
	if (!prefix || strlen(prefix) > 40 || strchr(prefix, '/'))
		return att_fail(kind, ATT_BAD_REQUEST, err, "bad prefix for a folder of JVM %d", pid);
	if (att_read_ids(pid, &d->uid, &d->gid) != 0)
		return att_fail(kind, ATT_NO_PROCESS, err, "no process %d (it may have exited)", pid);
	d->other_ns = !att_same_mnt_ns(pid);
	if (d->other_ns) {
		/* The magic link /proc/PID/root is the JVM's root; "tmp" must be a real folder in it. */
		char root[64];
		snprintf(root, sizeof root, "/proc/%d/root", pid);
		snprintf(base, sizeof base, "%s/tmp", root);
		int rfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (rfd < 0) {
			int e = errno;
			if (e == ENOENT || e == ESRCH)
				return att_fail(kind, ATT_NO_PROCESS, err, "no process %d (it may have exited)", pid);
			return att_fail(kind, e == EACCES || e == EPERM ? ATT_OTHER_USER : ATT_IO, err,
				    "JVM %d runs in another mount namespace (a container), and heapsh "
				    "reaches its files through %s, which it cannot open: %s; heapsh "
				    "passes the JVM its agent library (HEAPSH_AGENT, or the one next to "
				    "heapsh) and its heap dumps through the JVM's /tmp there: run heapsh "
				    "as root, or inside the container", pid, root, strerror(e));
		}
		d->parent_fd = openat(rfd, "tmp", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int e = errno;
		close(rfd);
		if (d->parent_fd < 0)
			return att_fail(kind, ATT_IO, err, "cannot open the /tmp of JVM %d, which runs in "
				    "another mount namespace (a container), as %s: %s%s", pid, base,
				    strerror(e), e == ELOOP || e == ENOTDIR ? " (heapsh does not follow a "
				    "symbolic link there)" : "");
	} else {
		snprintf(base, sizeof base, "%s", local_base && *local_base ? local_base : "/tmp");
		d->parent_fd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (d->parent_fd < 0)
			return att_fail(kind, ATT_IO, err, "cannot open the folder %s: %s", base,
				    strerror(errno));
	}
	int made = -1, e = 0;
	for (int k = 0; k < 100 && made != 0; k++) {
		char r[8];
		random_name(r);
		snprintf(d->name, sizeof d->name, "%s%s", prefix, r);
		made = mkdirat(d->parent_fd, d->name, 0700);
		e = errno;
		if (made != 0 && e != EEXIST)
			break;
	}
	if (made != 0) {
		d->name[0] = 0;
		att_jvm_dir_remove(d);
		return att_fail(kind, ATT_IO, err, "cannot create a private folder for JVM %d in %s: %s",
			    pid, base, strerror(e));
	}
	d->fd = openat(d->parent_fd, d->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	bool ours = d->fd >= 0 && fstat(d->fd, &st) == 0;
	if (ours && st.st_uid != geteuid()) {	/* replaced by someone else's since mkdirat */
		ours = false;
		errno = EPERM;
	}
	if (!ours || give(d, d->fd) != 0) {
		e = errno;
		att_jvm_dir_remove(d);
		return att_fail(kind, ATT_IO, err, "cannot prepare the private folder %s/%s for JVM %d: %s",
			    base, d->name, pid, strerror(e));
	}
	snprintf(d->here, sizeof d->here, "%s/%s", base, d->name);
	snprintf(d->there, sizeof d->there, "%s/%s", d->other_ns ? "/tmp" : base, d->name);
	if (kind)
		*kind = ATT_OK;
	return HS_OK;
}

/*
 * copy_fd: the whole of in to out, in chunks (copy_file_range, or read and
 * write where the kernel cannot copy between those files). 0, or -1 with
 * errno (EINTR for Ctrl-C).
 */
static int copy_fd(int in, int out)
{
	static const size_t chunk = 64u << 20;
	bool plain = false;
	char *buf = NULL;
	int r = 0;
	for (;;) {
		if (hs_interrupted) {
			errno = EINTR;
			r = -1;
			break;
		}
		ssize_t n;
		if (!plain) {
			n = copy_file_range(in, NULL, out, NULL, chunk, 0);
			if (n < 0 && (errno == EXDEV || errno == ENOSYS || errno == EINVAL ||
				      errno == EOPNOTSUPP)) {
				plain = true;
				continue;
			}
		} else {
			if (!buf)
				buf = xmalloc(1u << 20);
			n = read(in, buf, 1u << 20);
			if (n > 0 && !io_write_full(out, buf, (size_t)n))
				n = -1;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			r = n < 0 ? -1 : 0;
			break;
		}
	}
	int e = errno;
	free(buf);
	errno = e;
	return r;
}

int att_jvm_dir_put(struct att_jvm_dir *d, const char *src, const char *name,
		    enum att_kind *kind, struct hs_error *err)
{
	struct stat st;
	int in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0 || fstat(in, &st) != 0 || !S_ISREG(st.st_mode)) {
		int e = in < 0 ? errno : 0;
		if (in >= 0)
			close(in);
		return att_fail(kind, ATT_BAD_REQUEST, err, "%s: %s", src, e ? strerror(e) :
			    "not a regular file");
	}
	int out = openat(d->fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0500);
	int ok = out >= 0 && copy_fd(in, out) == 0 && give(d, out) == 0;
	int e = errno;
	close(in);
	if (out >= 0 && close(out) != 0 && ok) {
		ok = 0;
		e = errno;
	}
	if (!ok) {
		if (out >= 0)
			unlinkat(d->fd, name, 0);
		return att_fail(kind, e == EINTR && hs_interrupted ? ATT_INTERRUPTED : ATT_IO, err,
			    "cannot copy %s into %s/%s: %s", src, d->here, name, strerror(e));
	}
	if (kind)
		*kind = ATT_OK;
	return HS_OK;
}

int att_jvm_dir_open(const struct att_jvm_dir *d, const char *name, enum att_kind *kind,
		     struct hs_error *err)
{
	struct stat st;
	int in = openat(d->fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (in < 0 || fstat(in, &st) != 0 || !S_ISREG(st.st_mode)) {
		int e = in < 0 ? errno : 0;
		if (in >= 0)
			close(in);
		att_fail(kind, ATT_IO, err, "cannot read %s/%s: %s", d->here, name,
			 e ? strerror(e) : "not a regular file");
		return -1;
	}
	return in;
}

int att_jvm_dir_get(const struct att_jvm_dir *d, const char *name, const char *dest,
		    enum att_kind *kind, struct hs_error *err)
{
	struct stat st;
	int in = att_jvm_dir_open(d, name, kind, err);
	if (in < 0 || fstat(in, &st) != 0) {
		if (in >= 0)
			close(in);
		return in < 0 ? HS_ERR : att_fail(kind, ATT_IO, err, "cannot read %s/%s: %s", d->here,
						  name, strerror(errno));
	}
	int out = open(dest, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, st.st_mode & 0666);
	if (out < 0) {
		int e = errno;
		close(in);
		return att_fail(kind, ATT_IO, err, "cannot create %s: %s", dest, strerror(e));
	}
	int ok = copy_fd(in, out) == 0;
	int e = errno;
	close(in);
	if (close(out) != 0 && ok) {
		ok = 0;
		e = errno;
	}
	if (!ok) {
		unlink(dest);
		if (e == EINTR && hs_interrupted)
			return att_fail(kind, ATT_INTERRUPTED, err, "interrupted while copying %s/%s to %s",
				    d->here, name, dest);
		return att_fail(kind, ATT_IO, err, "cannot copy %s/%s to %s: %s", d->here, name, dest,
			    strerror(e));
	}
	if (kind)
		*kind = ATT_OK;
	return HS_OK;
}

int att_jvm_dir_dump(int pid, struct att_jvm_dir *d, const char *name, int timeout_ms,
		     enum att_kind *kind, struct hs_error *err)
{
	char there[sizeof d->there + 64], *out = NULL;
	enum att_kind k = ATT_OK;
	snprintf(there, sizeof there, "%s/%s", d->there, name);
	int st = att_heap_dump(pid, there, timeout_ms, &out, &k, err);
	bool short_file = st != HS_OK && k == ATT_REFUSED && out &&
			  strstr(out, "Dump file is incomplete");
	if (st == HS_OK && !att_jvm_dir_has(d, name, NULL)) {
		for (char *c = out; c && *c; c++)
			if (*c == '\n' || *c == '\r')
				*c = ' ';
		st = att_fail(&k, ATT_IO, err, "JVM %d wrote no dump at %s: %.200s", pid, there,
			      out && *out ? out : "no reason given");
		short_file = true;
	}
	free(out);
	if (short_file) {
		struct statvfs vfs;
		char room[32];
		unlinkat(d->fd, name, 0);
		if (err && fstatvfs(d->fd, &vfs) == 0) {
			size_t n = strlen(err->msg);
			fmt_bytes(room, sizeof room, (unsigned long long)vfs.f_bavail * vfs.f_frsize);
			if (d->other_ns)
				snprintf(err->msg + n, sizeof err->msg - n, "; it writes into its own "
					 "/tmp (/proc/%d/root/tmp to heapsh), which has %s free without "
					 "the partial dump: if that is too little for the heap, make room "
					 "there or give the container a larger /tmp", pid, room);
			else
				snprintf(err->msg + n, sizeof err->msg - n, "; it writes into %s, whose "
					 "file system has %s free without the partial dump: if that is "
					 "too little for the heap, set TMPDIR to a folder with more room",
					 d->here, room);
		}
	}
	if (kind)
		*kind = k;
	return st;
}

bool att_jvm_dir_has(const struct att_jvm_dir *d, const char *name, uint64_t *bytes)
{
	struct stat st;
	if (d->fd < 0 || fstatat(d->fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
		return false;
	if (bytes)
		*bytes = (uint64_t)st.st_size;
	return true;
}

void att_jvm_dir_remove(struct att_jvm_dir *d)
{
	if (d->fd >= 0) {
		/* what the JVM may have left: a partial dump, HotSpot's temporary files */
		int dup_fd = dup(d->fd);
		DIR *dir = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
		if (!dir && dup_fd >= 0)
			close(dup_fd);
		for (struct dirent *ent; dir && (ent = readdir(dir));)
			if (strcmp(ent->d_name, ".") && strcmp(ent->d_name, "..") &&
			    unlinkat(d->fd, ent->d_name, 0) != 0 && errno == EISDIR)
				unlinkat(d->fd, ent->d_name, AT_REMOVEDIR);
		if (dir)
			closedir(dir);
		close(d->fd);
	}
	if (d->parent_fd >= 0) {
		if (d->name[0])
			unlinkat(d->parent_fd, d->name, AT_REMOVEDIR);
		close(d->parent_fd);
	}
	d->fd = d->parent_fd = -1;
	d->name[0] = d->here[0] = d->there[0] = 0;
}
