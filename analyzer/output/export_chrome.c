// SPDX-License-Identifier: MIT
/*
 * export_chrome.c - Chrome trace-event JSON (loads in Perfetto and chrome://tracing). Per
 * process: one track per host thread with its CUDA calls (host synchronizations in category
 * "sync", drawn red), one track per GPU stream with kernels, copies and memsets, a flow arrow
 * from each call to the GPU work it caused, a counter of live device memory per device, a
 * track per device with the idle gaps named by the cause the analysis gave them, and the
 * trace's notes (CUPTI handed to another profiler and back) as instant events.
 * Timestamps are microseconds with nanosecond precision, from the earliest event exported.
 * Every string from the trace goes through json_escape. Formats only; computes nothing.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "analysis/counters.h"
#include "export.h"
#include "output.h"
#include "util/util.h"

/* Track ids of the GPU side, above any Linux thread id (pid_max is at most 2^22). */
#define GPU_TID_BASE 0x40000000u
#define IDLE_TID_BASE 0x3f000000u

struct stream_key {
	uint32_t device, stream;
};

struct chrome {
	uint64_t nr_flows;
};

/* ---- Event writing ---- */

static void ev_open(struct export_ctx *x, const char *ph, int pid)
{
	fputs(x->nr_events++ ? ",\n" : "\n", x->f);
	fprintf(x->f, "{\"ph\":\"%s\",\"pid\":%d", ph, pid);
}

static void ev_close(struct export_ctx *x)
{
	fputc('}', x->f);
}

static void put_str(struct export_ctx *x, const char *key, const char *val)
{
	fprintf(x->f, ",\"%s\":", key);
	json_escape(x->f, val ? val : "", val ? strlen(val) : 0);
}

static void put_time(struct export_ctx *x, const char *key, uint64_t t)
{
	uint64_t d = t > x->base_ns ? t - x->base_ns : 0;

	fprintf(x->f, ",\"%s\":%" PRIu64 ".%03u", key, d / 1000, (unsigned)(d % 1000));
}

static void put_dur(struct export_ctx *x, uint64_t d)
{
	fprintf(x->f, ",\"dur\":%" PRIu64 ".%03u", d / 1000, (unsigned)(d % 1000));
}

/* "name" metadata of a process or thread, and its sort position. */
static void meta(struct export_ctx *x, int pid, int64_t tid, const char *what, const char *name,
		 int64_t sort)
{
	ev_open(x, "M", pid);
	fprintf(x->f, ",\"tid\":%" PRId64, tid);
	put_str(x, "name", what);
	fputs(",\"args\":{", x->f);
	fputs("\"name\":", x->f);
	json_escape(x->f, name, strlen(name));
	fputc('}', x->f);
	ev_close(x);
	ev_open(x, "M", pid);
	fprintf(x->f, ",\"tid\":%" PRId64, tid);
	put_str(x, "name", !strcmp(what, "process_name") ? "process_sort_index" :
							    "thread_sort_index");
	fprintf(x->f, ",\"args\":{\"sort_index\":%" PRId64 "}", sort);
	ev_close(x);
}

/* ---- What the calls and operations are ---- */

static const char *call_category(const struct model *m, const struct m_call *c)
{
	switch (c->kind) {
	case MC_LAUNCH:
	case MC_GRAPH_LAUNCH:
	case MC_HOST_FUNC:
		return "launch";
	case MC_MEM:
		return "memory";
	case MC_COPY:
		return "copy";
	case MC_SET:
		return "set";
	case MC_SYNC:
		return stats_is_host_sync(c) ? "sync" : "stream";
	case MC_CAPTURE:
	case MC_GRAPH:
		return "graph";
	case MC_MODULE:
		return "module";
	default:
		return c->api < m->nr_apis && m->apis[c->api].family == TRACE_FAM_INIT ? "init" :
											 "other";
	}
}

static const char *copy_kind_name(uint8_t k)
{
	switch (k) {
	case TRACE_GPU_COPY_HTOD:
		return "memcpy HtoD";
	case TRACE_GPU_COPY_DTOH:
		return "memcpy DtoH";
	case TRACE_GPU_COPY_DTOD:
		return "memcpy DtoD";
	case TRACE_GPU_COPY_PTOP:
		return "memcpy PtoP";
	default:
		return "memcpy";
	}
}

static const char *mem_name(uint8_t k)
{
	switch (k) {
	case TRACE_GPU_MEM_PAGEABLE:
		return "pageable";
	case TRACE_GPU_MEM_PINNED:
		return "pinned";
	case TRACE_GPU_MEM_DEVICE:
		return "device";
	case TRACE_GPU_MEM_ARRAY:
		return "array";
	case TRACE_GPU_MEM_MANAGED:
		return "managed";
	default:
		return "unknown";
	}
}

static int64_t thread_tid(const struct model *m, const struct m_call *c)
{
	return c->thread < m->nr_threads ? (int64_t)m->threads[c->thread].tid : 0;
}

/* ---- Tracks ---- */

static void host_calls(struct export_ctx *x, int pid, const struct model *m)
{
	size_t i;

	for (i = 0; i < m->nr_threads; i++) {
		char name[48];

		snprintf(name, sizeof(name), "host thread %u", m->threads[i].tid);
		meta(x, pid, m->threads[i].tid, "thread_name", name, (int64_t)i);
	}
	for (i = 0; i < m->nr_calls; i++) {
		const struct m_call *c = &m->calls[i];
		const char *cat = call_category(m, c);

		ev_open(x, "X", pid);
		fprintf(x->f, ",\"tid\":%" PRId64, thread_tid(m, c));
		put_time(x, "ts", c->t0);
		put_dur(x, c->t1 > c->t0 ? c->t1 - c->t0 : 0);
		put_str(x, "name", model_api_name(m, c->api));
		put_str(x, "cat", cat);
		if (!strcmp(cat, "sync"))
			fputs(",\"cname\":\"terrible\"", x->f);
		fputs(",\"args\":{", x->f);
		fprintf(x->f, "\"result\":%u", model_call_result(m, i));
		if (c->kind == MC_LAUNCH) {
			const struct m_launch_shape *l = model_launch(m, c);
			const char *k = model_func_name(m, l->func);

			fputs(",\"kernel\":", x->f);
			json_escape(x->f, k, strlen(k));
			fprintf(x->f, ",\"grid\":[%u,%u,%u],\"block\":[%u,%u,%u]", l->grid[0],
				l->grid[1], l->grid[2], l->block[0], l->block[1], l->block[2]);
		}
		if (c->kind == MC_COPY || c->kind == MC_SET || c->kind == MC_MEM)
			fprintf(x->f, ",\"bytes\":%" PRIu64, model_call_args(m, c)->bytes);
		if (c->flags & MCF_CAPTURING)
			fputs(",\"captured\":true", x->f);
		fputc('}', x->f);
		ev_close(x);
	}
}

/* The track index of (device, stream), adding it when new. */
static size_t stream_index(struct stream_key **keys, size_t *n, size_t *cap, uint32_t device,
			   uint32_t stream)
{
	size_t i;

	for (i = *n; i-- > 0;)
		if ((*keys)[i].device == device && (*keys)[i].stream == stream)
			return i;
	XGROW(*keys, *cap, *n + 1);
	(*keys)[*n] = (struct stream_key){ device, stream };
	return (*n)++;
}

static void gpu_ops(struct export_ctx *x, int pid, const struct model *m)
{
	struct chrome *ch = x->priv;
	struct stream_key *keys = NULL;
	size_t nk = 0, capk = 0, i, last = SIZE_MAX;

	for (i = 0; i < m->nr_gpu; i++) {
		const struct m_gpu_op *g = &m->gpu[i];
		const struct m_gpu_shape *sh = model_gpu_shape(m, g);
		size_t k;
		uint64_t tid;

		if (last != SIZE_MAX && keys[last].device == sh->device &&
		    keys[last].stream == sh->stream) {
			k = last;
		} else {
			size_t before = nk;

			k = stream_index(&keys, &nk, &capk, sh->device, sh->stream);
			if (nk != before) {
				char name[64];

				snprintf(name, sizeof(name), "GPU %u stream %u", sh->device,
					 sh->stream);
				meta(x, pid, GPU_TID_BASE + k, "thread_name", name, 1000 + (int64_t)k);
			}
			last = k;
		}
		tid = GPU_TID_BASE + k;

		ev_open(x, "X", pid);
		fprintf(x->f, ",\"tid\":%" PRIu64, tid);
		put_time(x, "ts", g->start);
		put_dur(x, g->end > g->start ? g->end - g->start : 0);
		switch (sh->kind) {
		case MG_KERNEL: {
			int is_est;
			double fill = stats_fill_op(m, g, &is_est);

			put_str(x, "name", model_string(m, sh->name, "<kernel>"));
			put_str(x, "cat", "kernel");
			fprintf(x->f, ",\"args\":{\"blocks\":%" PRIu64 ",\"block_threads\":%u",
				sh->blocks, sh->block_threads);
			if (fill >= 0)
				fprintf(x->f, ",\"sm_fill\":%.4f", fill);
			break;
		}
		case MG_MEMCPY:
			put_str(x, "name", copy_kind_name(sh->copy_kind));
			put_str(x, "cat", "memcpy");
			fprintf(x->f, ",\"args\":{\"bytes\":%" PRIu64 ",\"src\":\"%s\",\"dst\":\"%s\"",
				sh->bytes, mem_name(sh->src_kind), mem_name(sh->dst_kind));
			break;
		default:
			put_str(x, "name", "memset");
			put_str(x, "cat", "memset");
			fprintf(x->f, ",\"args\":{\"bytes\":%" PRIu64, sh->bytes);
			break;
		}
		if (sh->graph_id)
			fprintf(x->f, ",\"graph\":%u", sh->graph_id);
		if (g->call != M_NO_CALL) {
			fputs(",\"call\":", x->f);
			{
				const char *a = model_api_name(m, m->calls[g->call].api);

				json_escape(x->f, a, strlen(a));
			}
		}
		fputc('}', x->f);
		ev_close(x);

		/* The arrow from the call to its work: each end 1 ns inside its slice, so it
		 * binds to it and never points back in time. */
		if (g->call != M_NO_CALL) {
			const struct m_call *c = &m->calls[g->call];
			uint64_t id = ++ch->nr_flows;

			ev_open(x, "s", pid);
			fprintf(x->f, ",\"tid\":%" PRId64 ",\"id\":%" PRIu64, thread_tid(m, c), id);
			put_time(x, "ts", c->t0 + (c->t1 > c->t0 + 1 ? 1 : 0));
			fputs(",\"name\":\"launch\",\"cat\":\"flow\"", x->f);
			ev_close(x);
			ev_open(x, "f", pid);
			fprintf(x->f, ",\"tid\":%" PRIu64 ",\"id\":%" PRIu64 ",\"bp\":\"e\"", tid, id);
			put_time(x, "ts", g->start + (g->end > g->start + 1 ? 1 : 0));
			fputs(",\"name\":\"launch\",\"cat\":\"flow\"", x->f);
			ev_close(x);
		}
	}
	free(keys);
}

struct mem_step {
	uint64_t t;
	int64_t delta;
	int device;
};

static int cmp_step(const void *a, const void *b)
{
	const struct mem_step *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->delta < y->delta ? -1 : x->delta > y->delta;	/* frees first */
}

/* One counter per device: live bytes after every allocation and free. */
static void memory_counter(struct export_ctx *x, int pid, const struct stats *s)
{
	const struct s_memory *mem = &s->mem;
	struct mem_step *st = xcalloc(2 * mem->nr_allocs + 1, sizeof(*st));
	size_t i, n = 0;
	int64_t live[64] = { 0 };

	for (i = 0; i < mem->nr_allocs; i++) {
		const struct s_alloc *a = &mem->allocs[i];
		int dev = a->device >= 0 && a->device < 64 ? a->device : 0;
		/* A trace may claim any size: beyond 2^63 bytes, counted as 2^63 - 1. */
		int64_t bytes = a->bytes > INT64_MAX ? INT64_MAX : (int64_t)a->bytes;

		st[n++] = (struct mem_step){ a->t_alloc, bytes, dev };
		if (a->t_free != UINT64_MAX)
			st[n++] = (struct mem_step){ a->t_free, -bytes, dev };
	}
	xqsort(st, n, sizeof(*st), cmp_step);
	for (i = 0; i < n; i++) {
		int64_t *l = &live[st[i].device];

		if (__builtin_add_overflow(*l, st[i].delta, l))	/* such sizes: saturate */
			*l = st[i].delta > 0 ? INT64_MAX : INT64_MIN;
		ev_open(x, "C", pid);
		fprintf(x->f, ",\"tid\":0,\"name\":\"device %d memory\"", st[i].device);
		put_time(x, "ts", st[i].t);
		fprintf(x->f, ",\"args\":{\"bytes\":%" PRId64 "}", *l);
		ev_close(x);
	}
	free(st);
}

/*
 * Hardware counters: one counter track per device, a value per metric at each sample's start
 * (Perfetto draws it as a step until the next sample); a 0 after the last sample ends it.
 */
static void pm_counters(struct export_ctx *x, int pid, const struct model *m)
{
	size_t i;
	int k;

	for (i = 0; i < m->nr_pm; i++) {
		const struct m_pm_sample *p = &m->pm[i];
		const char *sep = "";

		ev_open(x, "C", pid);
		fprintf(x->f, ",\"tid\":0,\"name\":\"device %u counters %%\"", p->device);
		put_time(x, "ts", p->start);
		fputs(",\"args\":{", x->f);
		for (k = 0; k <= TRACE_PM_SM_THROUGHPUT; k++) {
			if (isnan(p->value[k]))
				continue;
			fprintf(x->f, "%s\"%s\":%.2f", sep, counters_slot_name(k), p->value[k]);
			sep = ",";
		}
		fputs("}", x->f);
		ev_close(x);
		if (i + 1 == m->nr_pm || m->pm[i + 1].start > p->end + p->end - p->start) {
			/* A hole (or the end): the track drops to zero instead of holding on. */
			ev_open(x, "C", pid);
			fprintf(x->f, ",\"tid\":0,\"name\":\"device %u counters %%\"", p->device);
			put_time(x, "ts", p->end);
			fputs(",\"args\":{", x->f);
			sep = "";
			for (k = 0; k <= TRACE_PM_SM_THROUGHPUT; k++) {
				if (isnan(p->value[k]))
					continue;
				fprintf(x->f, "%s\"%s\":0", sep, counters_slot_name(k));
				sep = ",";
			}
			fputs("}", x->f);
			ev_close(x);
		}
	}
}

/* The analysis' idle gaps, named by their largest part (scheduling noise left out). */
static void idle_gaps(struct export_ctx *x, int pid, const struct findings *fd)
{
	uint64_t named = 0;
	const char *sep;
	size_t i;
	int k;

	for (i = 0; i < fd->nr_gaps_kept; i++) {
		const struct f_gap *g = &fd->gaps[i];
		int label = gap_label(g);
		uint64_t bit = 1ull << ((unsigned)g->device % 64);	/* device may be -1 */

		if (label == GAP_NOISE)
			continue;
		if (!(named & bit)) {
			char name[64];

			named |= bit;
			snprintf(name, sizeof(name), "GPU %d idle, by cause", g->device);
			meta(x, pid, IDLE_TID_BASE + (unsigned)g->device, "thread_name", name,
			     900 + g->device);
		}
		ev_open(x, "X", pid);
		fprintf(x->f, ",\"tid\":%u", IDLE_TID_BASE + (unsigned)g->device);
		put_time(x, "ts", g->start);
		put_dur(x, g->end - g->start);
		put_str(x, "name", gap_part_name(label));
		put_str(x, "cat", "idle");
		fputs(",\"args\":{", x->f);
		for (k = 0, sep = ""; k < NR_GAP_PARTS; k++) {
			if (!g->part[k])
				continue;
			fprintf(x->f, "%s\"%s_ns\":%" PRIu64, sep, gap_part_name(k), g->part[k]);
			sep = ",";
		}
		fputc('}', x->f);
		ev_close(x);
	}
}

static void notes(struct export_ctx *x, int pid, const struct model *m)
{
	size_t i;

	for (i = 0; i < m->nr_notes; i++) {
		const struct m_note *n = &m->notes[i];

		if (n->kind == TRACE_NOTE_DOORS)
			continue;	/* a summary at exit, not an event */
		ev_open(x, "i", pid);
		fputs(",\"tid\":0,\"s\":\"p\"", x->f);
		put_time(x, "ts", n->ts);
		put_str(x, "name", model_string(m, n->text, "note"));
		put_str(x, "cat", "note");
		ev_close(x);
	}
}

/* ---- The document ---- */

static int pick_pid(struct export_ctx *x, int want)
{
	int i, pid = want;

	for (;;) {
		for (i = 0; i < x->nr_processes; i++)
			if (x->pids[i] == pid)
				break;
		if (i == x->nr_processes)
			break;
		pid += 10000000;	/* the same pid twice (two hosts, or one trace given twice) */
	}
	x->pids = xrealloc(x->pids, (size_t)(x->nr_processes + 1) * sizeof(*x->pids));
	x->pids[x->nr_processes++] = pid;
	return pid;
}

static void chrome_begin(struct export_ctx *x)
{
	x->priv = xcalloc(1, sizeof(struct chrome));
	fputs("{\"traceEvents\":[", x->f);
}

static void chrome_process(struct export_ctx *x, const struct model *m, const struct stats *s,
			   const struct findings *fd)
{
	int pid = pick_pid(x, (int)m->pid);
	char name[160];

	snprintf(name, sizeof(name), "pid %u on %s", m->pid, m->host ? m->host : "?");
	meta(x, pid, 0, "process_name", name, x->nr_processes);
	ev_open(x, "M", pid);
	fputs(",\"tid\":0,\"name\":\"process_labels\",\"args\":{\"labels\":", x->f);
	json_escape(x->f, m->cmdline ? m->cmdline : "", m->cmdline ? strlen(m->cmdline) : 0);
	fputc('}', x->f);
	ev_close(x);
	host_calls(x, pid, m);
	gpu_ops(x, pid, m);
	memory_counter(x, pid, s);
	pm_counters(x, pid, m);
	idle_gaps(x, pid, fd);
	notes(x, pid, m);
}

static void chrome_end(struct export_ctx *x)
{
	fprintf(x->f,
		"\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"generator\":\"gpushim %s\","
		"\"clock\":\"CLOCK_MONOTONIC\",\"base_ns\":%" PRIu64 "}}\n",
		GPUSHIM_VERSION, x->base_ns);
	free(x->priv);
	free(x->pids);
	x->priv = NULL;
	x->pids = NULL;
}

const struct export_ops export_chrome_ops = {
	.name = "chrome",
	.begin = chrome_begin,
	.process = chrome_process,
	.end = chrome_end,
};

uint64_t export_first_ns(const struct model *m)
{
	uint64_t t = UINT64_MAX;

	if (m->nr_calls && m->calls[0].t0 < t)
		t = m->calls[0].t0;
	if (m->nr_gpu && m->gpu[0].start < t)
		t = m->gpu[0].start;
	if (m->nr_notes && m->notes[0].ts < t)
		t = m->notes[0].ts;
	return t;
}
