// SPDX-License-Identifier: MIT
/*
 * export_chrome.c - Chrome trace-event JSON (loads in Perfetto and chrome://tracing). Per
 * process: a track per host thread with its CUDA calls (category "cuda_driver", as Holistic
 * Trace Analysis reads a driver call; what kind of call in args.kind; host synchronizations
 * coloured "terrible"), per GPU stream a track of its kernels and another of its copies and
 * memsets (Kineto's categories "kernel", "gpu_memcpy", "gpu_memset", and the arguments HTA
 * reads: correlation, External id, stream, device, grid, block ...), a flow arrow from each
 * call to the GPU work it caused, a counter of live device memory per device, a track per
 * device with the idle gaps named and coloured by the cause the analysis gave them, and the
 * trace's notes (CUPTI handed to another profiler and back) as instant events. No two slices
 * of a track partially overlap (timeline_tracks.h: a CUDA graph's branches on one stream go
 * to extra lanes), so Perfetto never cuts a track short. Colours are only the names Chrome's
 * trace viewer reserves (cname); Perfetto colours by name and ignores them.
 * Timestamps are microseconds with nanosecond precision, from the earliest event exported.
 * Every string from the trace goes through json_escape. A kernel's slice is titled by its
 * short form (output.h, TIMELINE_NAME_WIDTH), its arguments give it whole and as recorded,
 * its launch's whole. Formats only; computes nothing.
 *
 * A process is written as the analysis streams its trace: the calls, the GPU operations and
 * the counter samples come interleaved in time order, the idle gaps as the findings split
 * them, while the document wants them track after track. The process's name, its threads and
 * its calls go straight to the document; the other kinds each to a spool of its own (an
 * unlinked temporary file; the gaps as records, sorted device by device when written), copied
 * out in order once the statistics and findings are done: memory stays bounded as the
 * stream's, whatever the trace's length. The driver may start a process over (the stream gave
 * up: the trace is loaded whole) and a trace may turn out corrupt half-way: what the process
 * wrote is then taken back. Only a regular file can be cut back, so to any other output (a
 * pipe, a terminal) the calls go through a spool as well.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "analysis/analyze.h"
#include "analysis/counters.h"
#include "export.h"
#include "output.h"
#include "report_output.h"
#include "timeline_tracks.h"
#include "util/util.h"

#include <uthash.h>

/*
 * Track ids of the GPU side and of extra lanes, above any Linux thread id (pid_max is at most
 * 2^22): a base + the track's index in its table (struct tl_tracks). The calls, the operations
 * and the gaps each have a table of their own, each filled in its own order, which is the
 * same whether the trace streams or is loaded whole (the two interleave calls and operations
 * differently): the document is the same.
 */
#define GPU_TID_BASE 0x40000000u
#define IDLE_TID_BASE 0x3f000000u
#define LANE_TID_BASE 0x3e000000u

/* Calls that partially overlap an earlier call of their thread (no shim records such calls:
 * a corrupt or forged trace) go to an extra lane; the flows from them need its track, so it
 * is kept for so many of them, and flows from any more are left out. */
#define CALL_LANES_MAX 65536

struct call_lane {
	uint32_t call;
	int64_t tid;
	UT_hash_handle hh;
};

/* An idle gap in the gap spool, with its device's place in the order the gaps are written. */
struct gap_rec {
	uint32_t rank;
	uint32_t pad_;
	struct f_gap g;
};

/* A device in order of its first operation (the findings' order), and where its gaps lie. */
struct gap_dev {
	uint32_t device;
	uint64_t first, last;		/* records of the gap spool; first UINT64_MAX: none */
};

struct chrome {
	uint64_t nr_flows;		/* flow ids of the processes written */
	FILE *calls, *ops, *pm, *gaps;	/* the spools */
	char *buf[4];			/* ... their buffers */
	FILE *head;			/* the process's name, threads and calls: the document
					 * when it is a regular file, else the calls' spool */

	/* The process being fed (tap_begin resets it: the driver may start over) */
	int is_open;			/* fed, not yet written */
	uint64_t events0;		/* the document's events and size before it */
	off_t size0;
	const struct model *m;
	int pid;
	uint64_t flows;			/* flow ids so far */
	struct tl_tracks threads, gpu, idle;	/* the tracks (lanes) of each kind */
	struct call_lane *call_lanes;	/* calls on a thread's extra lane (uthash) */
	size_t nr_call_lanes;
	int is_call_lanes_full;		/* some were not kept: their flows are left out */
	struct m_pm_sample sample;	/* the last counter sample, written when the next comes */
	int has_sample;
	struct gap_dev *devs;
	size_t nr_devs, devs_cap, last_dev;
	uint64_t nr_gaps;		/* records in the gap spool */
	struct model_sink sink;
	struct name_cache names;	/* kernels' forms: a name is demangled once, not per slice */
	struct strbuf stack_text;	/* a call's stack (export_stack), reused */
};

/* ---- Event writing ---- */

/* The separator before an event: only the document's first event, its first process's name,
 * has none. The spools other than the head hold events that follow their process's name. */
static void ev_open(struct export_ctx *x, FILE *f, const char *ph, int pid)
{
	const struct chrome *ch = x->priv;
	int is_first = (f == x->f || f == ch->head) && !x->nr_events++;

	fputs(is_first ? "\n" : ",\n", f);
	fprintf(f, "{\"ph\":\"%s\",\"pid\":%d", ph, pid);
}

static void ev_close(FILE *f)
{
	fputc('}', f);
}

static void put_str(FILE *f, const char *key, const char *val)
{
	fprintf(f, ",\"%s\":", key);
	json_escape(f, val ? val : "", val ? strlen(val) : 0);
}

static void put_time(struct export_ctx *x, FILE *f, const char *key, uint64_t t)
{
	uint64_t d = t > x->base_ns ? t - x->base_ns : 0;

	fprintf(f, ",\"%s\":%" PRIu64 ".%03u", key, d / 1000, (unsigned)(d % 1000));
}

static void put_dur(FILE *f, uint64_t d)
{
	fprintf(f, ",\"dur\":%" PRIu64 ".%03u", d / 1000, (unsigned)(d % 1000));
}

/* "name" metadata of a process or thread, and its sort position. */
static void meta(struct export_ctx *x, FILE *f, int pid, int64_t tid, const char *what,
		 const char *name, int64_t sort)
{
	ev_open(x, f, "M", pid);
	fprintf(f, ",\"tid\":%" PRId64, tid);
	put_str(f, "name", what);
	fputs(",\"args\":{", f);
	fputs("\"name\":", f);
	json_escape(f, name, strlen(name));
	fputc('}', f);
	ev_close(f);
	ev_open(x, f, "M", pid);
	fprintf(f, ",\"tid\":%" PRId64, tid);
	put_str(f, "name", !strcmp(what, "process_name") ? "process_sort_index" :
							  "thread_sort_index");
	fprintf(f, ",\"args\":{\"sort_index\":%" PRId64 "}", sort);
	ev_close(f);
}

static int64_t thread_tid(const struct model *m, const struct m_call *c)
{
	return c->thread < m->nr_threads ? (int64_t)m->threads[c->thread].tid : 0;
}

/* ---- Spools ---- */

/* Take back what the process being fed wrote: the driver starts over, or its trace failed. */
static void take_back(struct export_ctx *x)
{
	struct chrome *ch = x->priv;

	x->nr_events = ch->events0;
	if (ch->head != x->f)
		spool_reset(x, ch->head);
	else if (fflush(x->f) || ftruncate(fileno(x->f), ch->size0) < 0 ||
		 fseeko(x->f, ch->size0, SEEK_SET) < 0)
		x->has_error = 1;
	ch->is_open = 0;
}

/* ---- Tracks, as the driver hands the run on ---- */

/* The sort position of a GPU track: by device, stream, kernels before copies, then lane; kept
 * below 2^53 so that a viewer reading numbers as doubles orders them alike. */
static int64_t gpu_sort(const struct tl_track *t)
{
	int64_t dev = t->key.a < 1023 ? t->key.a : 1023;

	return 1000 + (dev << 40) + ((int64_t)t->key.b << 8) + (t->key.kind == TL_COPIES) * 64 +
	       (t->lane < 63 ? t->lane : 63);
}

/* The lane's name: the key's, and its number from the second on. */
static void lane_name(char *buf, size_t n, const struct model *m, const struct tl_track *t)
{
	int k = 0;

	switch (t->key.kind) {
	case TL_THREAD:
		k = snprintf(buf, n, "host thread %u",
			     t->key.a < m->nr_threads ? m->threads[t->key.a].tid : 0);
		break;
	case TL_KERNELS:
	case TL_COPIES:
		k = snprintf(buf, n, "GPU %u stream %u %s", t->key.a, t->key.b,
			     t->key.kind == TL_KERNELS ? "kernels" : "copies");
		break;
	default:
		k = snprintf(buf, n, "GPU %d idle, by cause", (int)t->key.a);
		break;
	}
	if (t->lane && k > 0 && (size_t)k < n)
		snprintf(buf + k, n - (size_t)k, " (%u)", t->lane + 1);
}

/*
 * The thread id of the track for slice [@start, @end) of key @k: a lane made now is named
 * first (in @f, before the slice). A host thread's first lane is the thread itself.
 */
static int64_t place(struct export_ctx *x, FILE *f, const struct tl_key *k, uint64_t start,
		     uint64_t end)
{
	struct chrome *ch = x->priv;
	const struct model *m = ch->m;
	int is_new;
	struct tl_tracks *tt = k->kind == TL_THREAD ? &ch->threads :
			       k->kind == TL_IDLE   ? &ch->idle :
						      &ch->gpu;
	size_t i = tl_place(tt, k, start, end, &is_new);
	struct tl_track *t = &tt->v[i];
	char name[96];

	if (!is_new)
		return (int64_t)t->id;
	if (k->kind == TL_THREAD && !t->lane) {
		t->id = k->a < m->nr_threads ? m->threads[k->a].tid : 0;
		return (int64_t)t->id;	/* named with the process */
	}
	t->id = (k->kind == TL_THREAD ? LANE_TID_BASE :
		 k->kind == TL_IDLE   ? IDLE_TID_BASE :
					GPU_TID_BASE) + i;
	lane_name(name, sizeof(name), m, t);
	meta(x, f, ch->pid, (int64_t)t->id, "thread_name", name,
	     k->kind == TL_THREAD ? (int64_t)k->a :
	     k->kind == TL_IDLE	  ? 900 + (k->a < 99 ? k->a : 99) :
				    gpu_sort(t));
	return (int64_t)t->id;
}

/* The track of call @id, for the flows from it: its thread's, or the extra lane it took. */
static int call_tid(struct chrome *ch, const struct m_call *c, uint32_t id, int64_t *tid)
{
	struct call_lane *e;

	HASH_FIND(hh, ch->call_lanes, &id, sizeof(id), e);
	if (e) {
		*tid = e->tid;
		return 1;
	}
	*tid = thread_tid(ch->m, c);
	return !ch->is_call_lanes_full;
}

static void call_lanes_free(struct chrome *ch)
{
	struct call_lane *e, *tmp;

	HASH_ITER(hh, ch->call_lanes, e, tmp) {
		HASH_DEL(ch->call_lanes, e);
		free(e);
	}
	ch->nr_call_lanes = 0;
	ch->is_call_lanes_full = 0;
}

static void host_call(struct export_ctx *x, FILE *f, int pid, const struct model *m,
		      const struct m_call *c, uint32_t id)
{
	struct chrome *ch = x->priv;
	const char *kind = export_call_kind(m, c);
	const struct tl_key k = { TL_THREAD, c->thread, 0 };
	int64_t tid = place(x, f, &k, c->t0, c->t1);
	uint32_t stack;

	if (tid != thread_tid(m, c)) {
		if (ch->nr_call_lanes < CALL_LANES_MAX) {
			struct call_lane *e = xcalloc(1, sizeof(*e));

			e->call = id;
			e->tid = tid;
			HASH_ADD(hh, ch->call_lanes, call, sizeof(e->call), e);
			ch->nr_call_lanes++;
		} else {
			ch->is_call_lanes_full = 1;
		}
	}
	ev_open(x, f, "X", pid);
	fprintf(f, ",\"tid\":%" PRId64, tid);
	put_time(x, f, "ts", c->t0);
	put_dur(f, c->t1 > c->t0 ? c->t1 - c->t0 : 0);
	put_str(f, "name", model_api_name(m, c->api));
	put_str(f, "cat", "cuda_driver");
	if (!strcmp(kind, "sync"))
		fputs(",\"cname\":\"terrible\"", f);
	fputs(",\"args\":{\"kind\":", f);
	json_escape(f, kind, strlen(kind));
	fprintf(f, ",\"result\":%u", model_call_result(m, id));
	fprintf(f, ",\"correlation\":%" PRIu64 ",\"External id\":%" PRIu64, export_corr(x, c),
		export_corr(x, c));
	if (c->kind == MC_LAUNCH) {
		const struct m_launch_shape *l = model_launch(m, c);
		const struct name_forms *kn = name_cache_get(&ch->names, model_func_name(m, l->func));

		/* whole: as recorded, it is in the arguments of the kernel's slice */
		fputs(",\"kernel\":", f);
		json_escape(f, kn->whole, strlen(kn->whole));
		fprintf(f, ",\"grid\":[%u,%u,%u],\"block\":[%u,%u,%u]", l->grid[0], l->grid[1],
			l->grid[2], l->block[0], l->block[1], l->block[2]);
	}
	if (c->kind == MC_COPY || c->kind == MC_SET || c->kind == MC_MEM)
		fprintf(f, ",\"bytes\":%" PRIu64, model_call_args(m, c)->bytes);
	if (c->flags & MCF_CAPTURING)
		fputs(",\"captured\":true", f);
	stack = model_call_stack(m, id);
	if (stack && export_stack(m, stack, &ch->stack_text) == 0) {
		char at[512];

		report_where(m, stack, at, sizeof(at), NULL, 0);
		fputs(",\"where\":", f);
		json_escape(f, at, strlen(at));
		fputs(",\"stack\":", f);
		json_escape(f, ch->stack_text.buf, ch->stack_text.len);
	}
	fputc('}', f);
	ev_close(f);
}

/* The place of @device among those the operations met so far, adding it when new. */
static size_t dev_rank(struct chrome *ch, uint32_t device)
{
	size_t i;

	if (ch->last_dev < ch->nr_devs && ch->devs[ch->last_dev].device == device)
		return ch->last_dev;
	for (i = 0; i < ch->nr_devs && ch->devs[i].device != device; i++)
		;
	if (i == ch->nr_devs) {
		XGROW(ch->devs, ch->devs_cap, ch->nr_devs + 1);
		ch->devs[ch->nr_devs++] = (struct gap_dev){ device, UINT64_MAX, 0 };
	}
	return ch->last_dev = i;
}

/* A kernel's arguments beyond its names, those Kineto gives it (Holistic Trace Analysis reads
 * them by these names): the launch's grid and block, the registers and shared memory. */
static void kernel_launch_args(FILE *f, const struct model *m, const struct m_gpu_shape *sh,
			       const struct m_call *c)
{
	uint64_t smem = sh->dyn_smem;

	if (c && c->kind == MC_LAUNCH) {
		const struct m_launch_shape *l = model_launch(m, c);

		fprintf(f, ",\"grid\":[%u,%u,%u],\"block\":[%u,%u,%u]", l->grid[0], l->grid[1],
			l->grid[2], l->block[0], l->block[1], l->block[2]);
		if (l->func && l->func < m->nr_funcs) {
			const struct m_func *fn = &m->funcs[l->func];

			if (fn->have & TRACE_FUNC_HAVE_REGS)
				fprintf(f, ",\"registers per thread\":%u", fn->regs);
			if (fn->have & TRACE_FUNC_HAVE_SMEM)
				smem += fn->static_smem;
		}
	}
	fprintf(f, ",\"shared memory\":%" PRIu64, smem);
}

static void gpu_op(struct export_ctx *x, const struct m_gpu_op *g, const struct m_call *c,
		   uint32_t id)
{
	struct chrome *ch = x->priv;
	const struct model *m = ch->m;
	const struct m_gpu_shape *sh = model_gpu_shape(m, g);
	FILE *f = ch->ops;
	const int pid = ch->pid;
	const struct tl_key k = { sh->kind == MG_KERNEL ? TL_KERNELS : TL_COPIES, sh->device,
				  sh->stream };
	uint64_t dur = g->end > g->start ? g->end - g->start : 0;
	int64_t tid, from;

	if (!c)
		id = M_NO_CALL;
	dev_rank(ch, sh->device);
	tid = place(x, f, &k, g->start, g->end);
	ev_open(x, f, "X", pid);
	fprintf(f, ",\"tid\":%" PRId64, tid);
	put_time(x, f, "ts", g->start);
	put_dur(f, dur);
	switch (sh->kind) {
	case MG_KERNEL: {
		int is_est;
		double fill = stats_fill_op(m, g, &is_est);
		const struct name_forms *kn =
			name_cache_get(&ch->names, model_string(m, sh->name, "<kernel>"));

		put_str(f, "name", kn->title);
		put_str(f, "cat", "kernel");
		fputs(",\"args\":{\"name\":", f);
		json_escape(f, kn->whole, strlen(kn->whole));
		fputs(",\"mangled\":", f);
		json_escape(f, kn->name, strlen(kn->name));
		fprintf(f, ",\"blocks\":%" PRIu64 ",\"block_threads\":%u", sh->blocks,
			sh->block_threads);
		kernel_launch_args(f, m, sh, c);
		if (fill >= 0)
			fprintf(f, ",\"sm_fill\":%.4f", fill);
		break;
	}
	case MG_MEMCPY:
		put_str(f, "name", export_copy_name(sh->copy_kind));
		put_str(f, "cat", "gpu_memcpy");
		fputs(",\"cname\":\"thread_state_iowait\"", f);
		fprintf(f, ",\"args\":{\"bytes\":%" PRIu64 ",\"src\":\"%s\",\"dst\":\"%s\"",
			sh->bytes, export_mem_name(sh->src_kind), export_mem_name(sh->dst_kind));
		if (dur)	/* bytes a ns are GB/s */
			fprintf(f, ",\"memory bandwidth (GB/s)\":%.3f", (double)sh->bytes / dur);
		break;
	default:
		put_str(f, "name", "memset");
		put_str(f, "cat", "gpu_memset");
		fputs(",\"cname\":\"olive\"", f);
		fprintf(f, ",\"args\":{\"bytes\":%" PRIu64, sh->bytes);
		if (dur)
			fprintf(f, ",\"memory bandwidth (GB/s)\":%.3f", (double)sh->bytes / dur);
		break;
	}
	/* Holistic Trace Analysis tells GPU work from host work by a stream >= 0 and pairs it
	 * with its call by the correlation number. */
	fprintf(f, ",\"device\":%u,\"stream\":%u,\"correlation\":%" PRIu64
		   ",\"External id\":%" PRIu64,
		sh->device, sh->stream, export_corr(x, c), export_corr(x, c));
	if (sh->graph_id)
		fprintf(f, ",\"graph\":%u", sh->graph_id);
	if (c) {
		const char *a = model_api_name(m, c->api);

		fputs(",\"call\":", f);
		json_escape(f, a, strlen(a));
	}
	fputc('}', f);
	ev_close(f);

	/* The arrow from the call to its work: each end 1 ns inside its slice, so it binds to
	 * it and never points back in time. */
	if (c && call_tid(ch, c, id, &from)) {
		uint64_t fid = ++ch->flows;

		ev_open(x, f, "s", pid);
		fprintf(f, ",\"tid\":%" PRId64 ",\"id\":%" PRIu64, from, fid);
		put_time(x, f, "ts", c->t0 + (c->t1 > c->t0 + 1 ? 1 : 0));
		fputs(",\"name\":\"launch\",\"cat\":\"flow\"", f);
		ev_close(f);
		ev_open(x, f, "f", pid);
		fprintf(f, ",\"tid\":%" PRId64 ",\"id\":%" PRIu64 ",\"bp\":\"e\"", tid, fid);
		put_time(x, f, "ts", g->start + (g->end > g->start + 1 ? 1 : 0));
		fputs(",\"name\":\"launch\",\"cat\":\"flow\"", f);
		ev_close(f);
	}
}

/*
 * Hardware counters: one counter track per device, a value per metric at each sample's start
 * (Perfetto draws it as a step until the next sample); a 0 after the last sample ends it.
 * Sample @p, followed by @next (NULL: the last).
 */
static void pm_sample(struct export_ctx *x, FILE *f, int pid, const struct m_pm_sample *p,
		      const struct m_pm_sample *next)
{
	const char *sep = "";
	int k;

	ev_open(x, f, "C", pid);
	fprintf(f, ",\"tid\":0,\"name\":\"device %u counters %%\"", p->device);
	put_time(x, f, "ts", p->start);
	fputs(",\"args\":{", f);
	for (k = 0; k <= TRACE_PM_WARPS; k++) {
		if (isnan(p->value[k]))
			continue;
		fprintf(f, "%s\"%s\":%.2f", sep, counters_slot_name(k), p->value[k]);
		sep = ",";
	}
	fputs("}", f);
	ev_close(f);
	if (!next || next->start > p->end + p->end - p->start) {
		/* A hole (or the end): the track drops to zero instead of holding on. */
		ev_open(x, f, "C", pid);
		fprintf(f, ",\"tid\":0,\"name\":\"device %u counters %%\"", p->device);
		put_time(x, f, "ts", p->end);
		fputs(",\"args\":{", f);
		sep = "";
		for (k = 0; k <= TRACE_PM_WARPS; k++) {
			if (isnan(p->value[k]))
				continue;
			fprintf(f, "%s\"%s\":0", sep, counters_slot_name(k));
			sep = ",";
		}
		fputs("}", f);
		ev_close(f);
	}
}

static void tap_begin(void *ctx, const struct model *m, const struct first_look *p)
{
	struct export_ctx *x = ctx;
	struct chrome *ch = x->priv;
	FILE *f = ch->head;
	int pid = (int)m->pid;
	char name[160];
	size_t k;

	(void)p;
	if (ch->is_open)
		take_back(x);
	ch->is_open = 1;
	pid = export_pid(x, pid);
	ch->m = m;
	ch->pid = pid;
	ch->flows = ch->nr_flows;
	tl_reset(&ch->threads);
	tl_reset(&ch->gpu);
	tl_reset(&ch->idle);
	call_lanes_free(ch);
	ch->has_sample = 0;
	ch->nr_devs = 0;
	ch->last_dev = SIZE_MAX;
	ch->nr_gaps = 0;
	spool_reset(x, ch->ops);
	spool_reset(x, ch->pm);
	spool_reset(x, ch->gaps);

	/* The process, and its host threads (all known from the first look) before their calls. */
	snprintf(name, sizeof(name), "pid %u on %s", m->pid, m->host ? m->host : "?");
	meta(x, f, pid, 0, "process_name", name, x->nr_processes + 1);
	ev_open(x, f, "M", pid);
	fputs(",\"tid\":0,\"name\":\"process_labels\",\"args\":{\"labels\":", f);
	json_escape(f, m->cmdline ? m->cmdline : "", m->cmdline ? strlen(m->cmdline) : 0);
	fputc('}', f);
	ev_close(f);
	for (k = 0; k < m->nr_threads; k++) {
		snprintf(name, sizeof(name), "host thread %u", m->threads[k].tid);
		meta(x, f, pid, m->threads[k].tid, "thread_name", name, (int64_t)k);
	}
}

static void tap_call(void *ctx, const struct m_call *c, uint32_t id)
{
	struct export_ctx *x = ctx;
	struct chrome *ch = x->priv;

	/* model_call_result answers for the calls model_stream holds: this one too. */
	host_call(x, ch->head, ch->pid, ch->m, c, id);
}

static void tap_op(void *ctx, const struct m_gpu_op *g, const struct m_call *call, uint32_t id)
{
	gpu_op(ctx, g, call, id);
}

static void tap_sample(void *ctx, const struct m_pm_sample *s)
{
	struct export_ctx *x = ctx;
	struct chrome *ch = x->priv;

	if (ch->has_sample)
		pm_sample(x, ch->pm, ch->pid, &ch->sample, s);
	ch->sample = *s;
	ch->has_sample = 1;
}

static void tap_floor(void *ctx, uint64_t t)
{
	(void)ctx, (void)t;
}

/* An idle gap as the findings split it: spooled unless it is scheduling noise. */
static void tap_gap(void *ctx, const struct f_gap *g)
{
	struct export_ctx *x = ctx;
	struct chrome *ch = x->priv;
	struct gap_rec r;
	size_t d;

	if (gap_label(g) == GAP_NOISE)
		return;
	d = dev_rank(ch, (uint32_t)g->device);
	memset(&r, 0, sizeof(r));
	r.rank = (uint32_t)d;
	r.g = *g;
	if (fwrite(&r, sizeof(r), 1, ch->gaps) != 1)
		x->has_error = 1;
	if (ch->devs[d].first == UINT64_MAX)
		ch->devs[d].first = ch->nr_gaps;
	ch->devs[d].last = ch->nr_gaps++;
}

/* ---- Tracks from the finished analysis ---- */

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
		ev_open(x, x->f, "C", pid);
		fprintf(x->f, ",\"tid\":0,\"name\":\"device %d memory\"", st[i].device);
		put_time(x, x->f, "ts", st[i].t);
		fprintf(x->f, ",\"args\":{\"bytes\":%" PRId64 "}", *l);
		ev_close(x->f);
	}
	free(st);
}

/*
 * The colour of an idle gap by its cause, among the names Chrome's trace viewer reserves
 * (tracing/base/color_scheme.html; any other cname is an error there): the host waiting on
 * the GPU red, the host too slow to feed it amber, copies and allocations as I/O.
 */
static const char *gap_cname(int label)
{
	switch (label) {
	case CAUSE_HOST_SYNC:
		return "terrible";
	case CAUSE_LAUNCH_OVERHEAD:
	case CAUSE_CPU_BOUND:
		return "bad";
	case CAUSE_MEMCPY:
		return "thread_state_iowait";
	case CAUSE_ALLOCATION:
		return "thread_state_uninterruptible";
	case GAP_DEPENDENCY:
		return "thread_state_runnable";
	case GAP_MODULE:
		return "startup";
	default:
		return "generic_work";
	}
}

/* One idle gap of the spool's, on its device's track (named before its first gap). */
static void idle_gap(struct export_ctx *x, int pid, const struct f_gap *g)
{
	FILE *f = x->f;
	int label = gap_label(g);
	const struct tl_key key = { TL_IDLE, (uint32_t)g->device, 0 };	/* device may be -1 */
	int64_t tid = place(x, f, &key, g->start, g->end);
	const char *sep;
	int k;

	ev_open(x, f, "X", pid);
	fprintf(f, ",\"tid\":%" PRId64, tid);
	put_time(x, f, "ts", g->start);
	put_dur(f, g->end - g->start);
	put_str(f, "name", gap_part_name(label));
	put_str(f, "cat", "idle");
	put_str(f, "cname", gap_cname(label));
	fputs(",\"args\":{", f);
	for (k = 0, sep = ""; k < NR_GAP_PARTS; k++) {
		if (!g->part[k])
			continue;
		fprintf(f, "%s\"%s_ns\":%" PRIu64, sep, gap_part_name(k), g->part[k]);
		sep = ",";
	}
	fputc('}', f);
	ev_close(f);
}

/*
 * The analysis' idle gaps, named by their largest part (scheduling noise left out), device by
 * device in order of their first operation, each in time order: the spool is read once for
 * each device, from its first gap to its last.
 */
static void idle_gaps(struct export_ctx *x, int pid)
{
	struct chrome *ch = x->priv;
	struct gap_rec *v = xmalloc(256 * sizeof(*v));
	size_t d;

	if (fflush(ch->gaps) || ferror(ch->gaps))
		x->has_error = 1;
	for (d = 0; d < ch->nr_devs; d++) {
		const struct gap_dev *dv = &ch->devs[d];
		uint64_t i = dv->first;

		if (i == UINT64_MAX)
			continue;
		if (fseeko(ch->gaps, (off_t)(i * sizeof(*v)), SEEK_SET) < 0) {
			x->has_error = 1;
			break;
		}
		while (i <= dv->last) {
			size_t n = fread(v, sizeof(*v), 256, ch->gaps), k;

			if (!n) {
				x->has_error = 1;
				break;
			}
			for (k = 0; k < n && i <= dv->last; k++, i++)
				if (v[k].rank == d)
					idle_gap(x, pid, &v[k].g);
		}
	}
	free(v);
	spool_reset(x, ch->gaps);
}

static void notes(struct export_ctx *x, int pid, const struct model *m)
{
	size_t i;

	for (i = 0; i < m->nr_notes; i++) {
		const struct m_note *n = &m->notes[i];

		if (n->kind == TRACE_NOTE_DOORS)
			continue;	/* a summary at exit, not an event */
		ev_open(x, x->f, "i", pid);
		fputs(",\"tid\":0,\"s\":\"p\"", x->f);
		put_time(x, x->f, "ts", n->ts);
		put_str(x->f, "name", model_string(m, n->text, "note"));
		put_str(x->f, "cat", "note");
		ev_close(x->f);
	}
}

/* ---- The document ---- */

static int chrome_begin(struct export_ctx *x)
{
	struct chrome *ch = xcalloc(1, sizeof(*ch));
	struct stat st;
	int i;

	x->priv = ch;
	ch->calls = spool_open(&ch->buf[0]);
	ch->ops = ch->calls ? spool_open(&ch->buf[1]) : NULL;
	ch->pm = ch->ops ? spool_open(&ch->buf[2]) : NULL;
	ch->gaps = ch->pm ? spool_open(&ch->buf[3]) : NULL;
	if (!ch->gaps) {
		int ret = -(errno ? errno : EIO);

		if (ch->calls)
			fclose(ch->calls);
		if (ch->ops)
			fclose(ch->ops);
		if (ch->pm)
			fclose(ch->pm);
		for (i = 0; i < 4; i++)
			free(ch->buf[i]);
		free(ch);
		x->priv = NULL;
		return ret;
	}
	ch->head = !fstat(fileno(x->f), &st) && S_ISREG(st.st_mode) && ftello(x->f) >= 0 ?
			   x->f :
			   ch->calls;
	ch->sink = (struct model_sink){ tap_begin, tap_call, tap_op, tap_sample, tap_floor, x };
	fputs("{\"traceEvents\":[", x->f);
	return 0;
}

static void chrome_process_tap(struct export_ctx *x, struct analyze_tap *tap)
{
	struct chrome *ch = x->priv;

	if (ch->is_open)
		take_back(x);	/* the last one's trace failed */
	ch->events0 = x->nr_events;
	if (ch->head == x->f && (fflush(x->f) || (ch->size0 = ftello(x->f)) < 0))
		x->has_error = 1;
	tap->sink = &ch->sink;
	tap->gap = tap_gap;
}

static void chrome_process(struct export_ctx *x, const struct model *m, const struct stats *s,
			   const struct findings *fd)
{
	struct chrome *ch = x->priv;
	const int pid = ch->pid;

	(void)fd;	/* its gaps came through the tap */
	export_pid_add(x, pid);
	if (ch->head != x->f)
		spool_copy(x, ch->head);
	spool_copy(x, ch->ops);
	memory_counter(x, pid, s);
	if (ch->has_sample)
		pm_sample(x, ch->pm, pid, &ch->sample, NULL);
	spool_copy(x, ch->pm);
	idle_gaps(x, pid);
	notes(x, pid, m);
	ch->nr_flows = ch->flows;
	ch->is_open = 0;
}

static void chrome_end(struct export_ctx *x)
{
	struct chrome *ch = x->priv;
	int i;

	if (ch->is_open)
		take_back(x);
	fprintf(x->f,
		"\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"generator\":\"gpushim %s\","
		"\"clock\":\"CLOCK_MONOTONIC\",\"base_ns\":%" PRIu64 "}}\n",
		GPUSHIM_VERSION, x->base_ns);
	fclose(ch->calls);
	fclose(ch->ops);
	fclose(ch->pm);
	fclose(ch->gaps);
	for (i = 0; i < 4; i++)
		free(ch->buf[i]);
	tl_free(&ch->threads);
	tl_free(&ch->gpu);
	tl_free(&ch->idle);
	call_lanes_free(ch);
	free(ch->devs);
	name_cache_free(&ch->names);
	sb_free(&ch->stack_text);
	free(ch);
	free(x->pids);
	x->priv = NULL;
	x->pids = NULL;
}

const struct export_ops export_chrome_ops = {
	.name = "chrome",
	.begin = chrome_begin,
	.process_tap = chrome_process_tap,
	.process = chrome_process,
	.end = chrome_end,
};
