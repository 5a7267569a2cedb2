/*
 * idx.h - the on-disk index: engine results kept between runs, so that
 * reopening a dump skips their computation (docs/engine.md, "Cache").
 *
 * One file per dump, next to it (DUMP.hsidx) or, when that folder is not
 * writable, under $XDG_CACHE_HOME/heapsh (default ~/.cache/heapsh). It
 * holds tagged sections and is keyed by the dump's size, mtime and a hash
 * of its first 64 KiB; a CRC-32 covers its header, and one each section.
 * A stale or truncated file, or one whose header or a record is damaged,
 * is ignored (and replaced on the next write); a section whose payload is
 * damaged is left out (idx_note says which), the others used. A whole
 * file is written to a temporary file and renamed, and a section
 * appended after the last one before the header counts it, so a crash
 * never leaves a file that looks valid. A tag's last section counts. Values are in this
 * machine's byte order, which the header records.
 *
 * The file is mapped, not read: a section is file pages the kernel reads
 * when they are touched and may drop under memory pressure, so an index
 * of any size opens at once and costs no memory until used
 * (docs/out-of-core.md).
 *
 * Each section's payload starts at a multiple of 4096 bytes in the file,
 * so that it can be mapped on its own (idx_map_section).
 *
 * Ownership: idx_open returns a handle freed with idx_close; section
 * pointers live until then or the next idx_put, whichever comes first.
 * A mapping from idx_map_section lives until idx_unmap, whatever becomes
 * of the handle or the file.
 */
#ifndef HS_IDX_H
#define HS_IDX_H

#include <stdbool.h>
#include <stdint.h>

#include "../base/mem.h"

struct idx;

/* Section tags. */
#define IDX_DOM_ALL 0x444f4d41u		/* "DOMA": dominators, every reference */
#define IDX_DOM_STRONG 0x444f4d53u	/* "DOMS": dominators, --no-weak */
#define IDX_DYN 0x44594e41u		/* "DYNA": the dynamic-size engine (dyn_save) */
#define IDX_DYN_EXACT 0x44594e58u	/* "DYNX": exact sizes found since (dyn_save_exact) */
#define IDX_MODEL 0x4d4f444cu		/* "MODL": the heap model (heap_model_save) */

/*
 * idx_open: find and check the index of the dump at dump_path. Always
 * returns a handle (with no sections when there is no usable file);
 * idx_note says why an existing file was ignored, or NULL.
 */
struct idx *idx_open(const char *dump_path);
void idx_close(struct idx *x);
const char *idx_note(const struct idx *x);
/* idx_file: where the index is (or will be) written. */
const char *idx_file(const struct idx *x);

/*
 * Trust (docs/out-of-core.md, "Reopening at once"). Checking an index in
 * full (its checksum, then each section's own checks against the dump)
 * reads all of it and much of the dump: minutes for a dump larger than
 * memory. Once a process has, it leaves a seal in the user's private seal
 * folder ($XDG_CACHE_HOME/heapsh/seals, else ~/.cache/heapsh/seals; a
 * folder of this user's that no one else can write, 0700, or no seals):
 * the index's and the dump's device, inode, size, mtime and ctime, the
 * file's checksum and which sections were checked. While both files are
 * unchanged (any write, truncation, chmod or replacement moves a file's
 * ctime, which no unprivileged process can set back) the next idx_open
 * skips the checksum and the sections the seal names are trusted. This is
 * git's index stat cache, with its "racy clean" rule: a file another user
 * could write, changed less than a second before it was read, is not
 * sealed, as a write in the same clock tick might leave its ctime as it
 * was (this user's own processes are trusted, as the seal folder is). A
 * process seals the file it writes (idx_put_parts) for the sections it
 * made and those it had checked, when only this user can write it.
 *
 * idx_trusted: section tag's checks may be skipped (a seal vouches for
 * it). idx_vouch: the caller has checked section tag in full (with the
 * dump): record it in the seal, when neither the file nor the dump has
 * changed since; failures are silent (the next open checks again).
 * idx_dump_read_earlier: the caller read the dump before idx_open stamped
 * it, so the stamp does not vouch for what was read: nothing of x is
 * sealed. All accept a NULL x.
 */
bool idx_trusted(const struct idx *x, uint32_t tag);
void idx_vouch(struct idx *x, uint32_t tag);
void idx_dump_read_earlier(struct idx *x);

/*
 * idx_usage: what the mapped file holds: its sections in use, in file
 * order (up to cap of them: tags[k], bytes[k] their payloads' bytes), and
 * *unused the payload bytes superseded or damaged (idx_put_parts writes
 * the file again once those pass the ones in use); returns the count of
 * sections in use. idx_section_name: what a tag holds, for people.
 */
int idx_usage(const struct idx *x, uint32_t *tags, uint64_t *bytes, int cap, uint64_t *unused);
const char *idx_section_name(uint32_t tag);
/* idx_section: the payload of section tag, or NULL; *len its bytes. */
const void *idx_section(const struct idx *x, uint32_t tag, uint64_t *len);

/*
 * idx_map_section: a read-only mapping of section tag of its own, which
 * outlives the handle (file pages, read when touched), or NULL; *len its
 * bytes. Release it with idx_unmap.
 */
struct idx_mapping {
	void *base;
	size_t len;
};
const void *idx_map_section(const struct idx *x, uint32_t tag, uint64_t *len,
			    struct idx_mapping *m);
void idx_unmap(struct idx_mapping *m);

/*
 * idx_put: add or replace section tag (len bytes). It is appended to the
 * file in place (payload, sync, then the header's count), superseding a
 * section of its tag, when the file is the one x mapped and unchanged
 * since, the bytes superseded stay at most those in use and the file holds
 * at most 256 sections: its other bytes and inode stay, so another
 * process's mapping of it stays good, and the disk needs room for the
 * section only. Otherwise the file is written again atomically with the
 * sections in use (a temporary file renamed over it), next to the dump
 * or, when that fails, in the cache folder. HS_ERR with err set when
 * neither location is writable or has room (with 1/16 to spare), and
 * HS_INTERRUPTED on Ctrl-C (hs_interrupted, heard between pieces of 64
 * MiB): the file is then left as it was and the section is not kept.
 * Writing says how far it is (hs_progress).
 */
int idx_put(struct idx *x, uint32_t tag, const void *data, uint64_t len, struct hs_error *err);

/*
 * idx_put_parts: idx_put for several sections at once, each the
 * concatenation of its parts, written straight from them (nothing is
 * copied): one append, or one rewrite of the file, for all. The parts need to live only
 * for the call. A part that is a whole big array in a spill file (big.h),
 * written at a multiple of 4096 bytes in the file, is moved rather than
 * copied: the array is then mapped from the new file and its spill file
 * goes (big_rehome), and the room asked for counts those bytes as freed
 * (all but the largest, which is on disk twice for a moment). Such an
 * array stays a mapping of that file, written or not, until freed.
 */
struct idx_part {
	const void *data;
	uint64_t len;
};
struct idx_put {
	uint32_t tag;
	const struct idx_part *parts;
	int nparts;
};
int idx_put_parts(struct idx *x, const struct idx_put *puts, int nputs, struct hs_error *err);

#endif
