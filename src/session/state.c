/*
 * state.c - the session seen from outside: its settings, the front end's
 * hooks, and what it holds, read through functions so that struct
 * hs_session stays the session's own (session_internal.h). See session.h.
 */
#include <string.h>
#include <time.h>

#include "../attach/attach.h"
#include "../base/big.h"
#include "../base/filemap.h"
#include "session_internal.h"

struct hs_options hs_get_options(const struct hs_session *s)
{
	struct hs_options o = {
		.oop_size = s->load_opts.oop_size,
		.layout_jdk = s->load_opts.layout_jdk,
		.dump = s->load_opts.dump,
		.no_weak = s->no_weak,
		.no_index = s->no_index,
		.no_spill = s->no_spill,
		.keep_agent = s->keep_agent,
		.live_off = s->live_off,
		.live_time_s = s->live_time_s,
		.live_mem_mb = s->live_mem_mb,
	};
	return o;
}

void hs_set_options(struct hs_session *s, const struct hs_options *o)
{
	s->load_opts.oop_size = o->oop_size;
	s->load_opts.layout_jdk = o->layout_jdk;
	s->load_opts.dump = o->dump;
	s->no_weak = o->no_weak;
	s->no_index = o->no_index;
	s->no_spill = o->no_spill;
	s->keep_agent = o->keep_agent;
	s->live_off = o->live_off;
	s->live_time_s = o->live_time_s;
	s->live_mem_mb = o->live_mem_mb;
}

void hs_set_callbacks(struct hs_session *s, const struct hs_callbacks *cb)
{
	static const struct hs_callbacks none;
	if (!cb)
		cb = &none;
	s->notice = cb->notice;
	s->stage = cb->stage;
	s->load_progress = cb->load_progress;
	s->snap_progress = cb->snap_progress;
	s->ctx = cb->ctx;
}

struct heap *hs_heap(const struct hs_session *s)
{
	return s->heap;
}

const char *hs_dump_path(const struct hs_session *s)
{
	return s->dump_path;
}

unsigned hs_gen(const struct hs_session *s)
{
	return s->gen;
}

const char *hs_errmsg(const struct hs_session *s)
{
	return s->err.msg;
}

bool hs_get_live(const struct hs_session *s, struct hs_live_info *in)
{
	memset(in, 0, sizeof *in);
	const struct hs_live *l = s->live;
	if (!l)
		return false;
	in->pid = l->pid;
	in->vm = l->vm;
	in->snap_time = l->snap_time;
	in->snapshots = l->snapshots;
	in->prev_time = s->prev.heap ? s->prev.when : 0;
	return true;
}

int hs_live_pid(const struct hs_session *s)
{
	return s->live ? s->live->pid : 0;
}

const struct alc_rec *hs_recording(const struct hs_session *s, const char **path)
{
	if (path)
		*path = s->recording ? s->recording_path : NULL;
	return s->recording;
}

void hs_get_state(const struct hs_session *s, struct hs_state *st)
{
	memset(st, 0, sizeof *st);
	st->model_from_index = s->model_from_index;
	st->model_trusted = s->model_trusted;
	for (int w = 0; w < 2; w++)
		st->dom[w] = s->dom[w];
	st->dyn = s->dyn;
	st->dyn_from_index = s->dyn_from_index;
	if (s->idx) {
		st->index_file = idx_file(s->idx);
		uint32_t tags[8];
		int n = idx_usage(s->idx, tags, st->section_bytes, 8, &st->index_unused);
		st->nsections = n < 8 ? n : 8;
		for (int k = 0; k < st->nsections; k++)
			st->section[k] = idx_section_name(tags[k]);
	}
	struct big_stats bs;
	big_stats(&bs);
	st->mem = (struct hs_memory){bs.budget, bs.anon, bs.anon_peak, bs.file, bs.file_peak, bs.dir};
}

bool hs_jvm_name(int pid, char *buf, size_t cap)
{
	return att_main_class(pid, buf, cap);
}

bool hs_is_jvm(int pid)
{
	return att_which_vm(pid) == 1;
}

char *hs_heap_label(const struct hs_session *s)
{
	const struct hs_live *l = s->live;
	if (!l || !l->snap_time)
		return xasprintf("heap dump %s", s->dump_path ? s->dump_path
				 : s->heap ? s->heap->hp->path : "?");
	char main_class[512], when[64];
	att_main_class(l->pid, main_class, sizeof main_class);
	struct tm tm;
	strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", gmtime_r(&l->snap_time, &tm));
	return xasprintf("snapshot of JVM %d (%s%s%s) taken %s", l->pid, main_class,
			 main_class[0] ? ", " : "", l->vm, when);
}

bool hs_fault_text(const void *addr, char *buf, size_t cap)
{
	return fm_explain(addr, buf, cap);
}

void *hs_array(struct hs_session *s, size_t n, size_t size)
{
	(void)s;	/* one budget per process for now (big.h) */
	return big_alloc(n, size);
}

void hs_array_free(struct hs_session *s, void *p)
{
	(void)s;
	big_free(p);
}
