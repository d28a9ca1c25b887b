// SPDX-License-Identifier: MIT
/*
 * export_perfetto.c - Perfetto's own trace format: a stream of TracePacket protobufs
 * (protos/perfetto/trace/trace_packet.proto), written here field by field with the trace's
 * varints (gpushim/varint.h); no protobuf library. Per process: a process track and a track
 * per host thread with its CUDA calls; per device a group "GPU n" with a track per stream for
 * its kernels and one for its copies and memsets, more lanes where slices overlap
 * (timeline_tracks.h), the idle gaps by cause, and counter tracks (GPU busy, live device
 * memory, each hardware counter); a flow from each call that can cause GPU work to what it
 * caused; the trace's notes as instant events. Names (event names, argument names, kernel
 * names and launch shapes as arguments) are interned once a process, so a kernel's slice
 * costs some 50 bytes where Chrome JSON takes 500; the arguments are fewer than the Chrome
 * export's (what the flow or the track already says is left out). Formats only; computes
 * nothing but each device's busy intervals (the union of its operations, for the busy
 * counter).
 *
 * Each process is its own packet sequence (trusted_packet_sequence_id: its interned names
 * start clean with it), written as the analysis streams its trace into a spool and copied to
 * the output once it is whole: the driver may start a process over, or its trace turn out
 * corrupt half-way, and what it wrote is then dropped. Packets go out in the order the
 * analysis hands the run on, not in time order: Perfetto sorts them by timestamp. Timestamps
 * are nanoseconds from the earliest trace's start, as the Chrome export's.
 *
 * Flows: a call's slice begins the flow of its id; each operation joined to it continues that
 * flow (TrackEvent.flow_ids), so the one kernel of a launch, or the one copy of a cuMemcpy,
 * has its arrow from the call, and a graph's operations follow each other from the
 * cuGraphLaunch in order of start. A call whose work was not recorded leaves its flow with no
 * second end: Perfetto then draws none.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <uthash.h>

#include "config.h"
#include "analysis/analyze.h"
#include "analysis/counters.h"
#include "export.h"
#include "gpushim/varint.h"
#include "output.h"
#include "report_output.h"
#include "timeline_tracks.h"
#include "util/util.h"

/* ---- Field numbers (protos/perfetto/trace/...) ---- */

enum {
	F_TRACE_PACKET = 1,		/* Trace.packet */

	F_PKT_TIMESTAMP = 8,		/* TracePacket */
	F_PKT_SEQ_ID = 10,		/* trusted_packet_sequence_id */
	F_PKT_TRACK_EVENT = 11,
	F_PKT_INTERNED = 12,
	F_PKT_SEQ_FLAGS = 13,
	F_PKT_TRACK_DESC = 60,

	F_TE_DEBUG = 4,			/* TrackEvent */
	F_TE_TYPE = 9,
	F_TE_NAME_IID = 10,
	F_TE_TRACK_UUID = 11,
	F_TE_COUNTER = 30,
	F_TE_DOUBLE_COUNTER = 44,
	F_TE_EXTRA_DOUBLE_UUIDS = 45,
	F_TE_EXTRA_DOUBLE_VALUES = 46,	/* repeated double, not packed */
	F_TE_FLOW_IDS = 47,		/* fixed64 */

	F_DA_NAME_IID = 1,		/* DebugAnnotation */
	F_DA_UINT = 3,
	F_DA_INT = 4,
	F_DA_DOUBLE = 5,
	F_DA_STRING_IID = 17,

	F_TD_UUID = 1,			/* TrackDescriptor */
	F_TD_NAME = 2,
	F_TD_PROCESS = 3,
	F_TD_THREAD = 4,
	F_TD_PARENT = 5,
	F_TD_COUNTER = 8,
	F_TD_CHILD_ORDER = 11,
	F_TD_RANK = 12,

	F_PD_PID = 1,			/* ProcessDescriptor */
	F_PD_CMDLINE = 2,
	F_PD_NAME = 6,

	F_THD_PID = 1,			/* ThreadDescriptor */
	F_THD_TID = 2,
	F_THD_NAME = 5,

	F_CD_UNIT = 3,			/* CounterDescriptor */
	F_CD_UNIT_NAME = 6,

	F_ID_EVENT_NAMES = 2,		/* InternedData */
	F_ID_ANNOTATION_NAMES = 3,
	F_ID_ANNOTATION_STRINGS = 29,

	F_IID = 1,			/* EventName, DebugAnnotationName, InternedString */
	F_IID_NAME = 2,
};

enum { TE_SLICE_BEGIN = 1, TE_SLICE_END = 2, TE_INSTANT = 3, TE_COUNTER = 4 };
enum { SEQ_CLEARED = 1, SEQ_NEEDS_STATE = 2 };	/* TracePacket.SequenceFlags */
enum { UNIT_SIZE_BYTES = 3 };			/* CounterDescriptor.Unit */
enum { ORDER_EXPLICIT = 3 };			/* TrackDescriptor.ChildTracksOrdering */
enum { WT_VARINT = 0, WT_FIXED64 = 1, WT_LEN = 2 };

/* The interning tables of InternedData this writer uses. */
enum { IN_EVENT_NAME, IN_ANNOTATION_NAME, IN_ANNOTATION_STRING, NR_INTERN };

static const uint32_t intern_field[NR_INTERN] = {
	F_ID_EVENT_NAMES, F_ID_ANNOTATION_NAMES, F_ID_ANNOTATION_STRINGS,
};

/* Sibling ranks in a device's group: its counters and idle gaps above its streams. */
#define RANK_BUSY (-100)
#define RANK_MEMORY (-99)
#define RANK_IDLE (-98)
#define RANK_COUNTER (-90)		/* + the counter's slot */

/* ---- A protobuf message being built ---- */

#define PB_DEPTH 8

struct pb {
	uint8_t *p;
	size_t n, cap;
	size_t open[PB_DEPTH];		/* where each open message's bytes begin */
	int depth;
};

static void pb_room(struct pb *b, size_t more)
{
	if (b->n + more > b->cap)
		xgrow((void **)&b->p, &b->cap, b->n + more, 1);
}

static void pb_tag(struct pb *b, uint32_t field, int wire)
{
	pb_room(b, 10);
	b->n = (size_t)(varint_put(b->p + b->n, (uint64_t)field << 3 | (unsigned)wire) - b->p);
}

static void pb_uint(struct pb *b, uint32_t field, uint64_t v)
{
	pb_tag(b, field, WT_VARINT);
	pb_room(b, 10);
	b->n = (size_t)(varint_put(b->p + b->n, v) - b->p);
}

/* int32 and int64 fields: two's complement, a negative number in ten bytes. */
static void pb_int(struct pb *b, uint32_t field, int64_t v)
{
	pb_uint(b, field, (uint64_t)v);
}

static void pb_fixed64(struct pb *b, uint32_t field, uint64_t v)
{
	int i;

	pb_tag(b, field, WT_FIXED64);
	pb_room(b, 8);
	for (i = 0; i < 8; i++)
		b->p[b->n++] = (uint8_t)(v >> (8 * i));
}

static void pb_double(struct pb *b, uint32_t field, double d)
{
	uint64_t v;

	memcpy(&v, &d, sizeof(v));
	pb_fixed64(b, field, v);
}

static void pb_bytes(struct pb *b, uint32_t field, const void *s, size_t len)
{
	pb_tag(b, field, WT_LEN);
	pb_room(b, 10 + len);
	b->n = (size_t)(varint_put(b->p + b->n, len) - b->p);
	memcpy(b->p + b->n, s, len);
	b->n += len;
}

static void pb_str(struct pb *b, uint32_t field, const char *s)
{
	pb_bytes(b, field, s, strlen(s));
}

static void pb_open(struct pb *b, uint32_t field)
{
	pb_tag(b, field, WT_LEN);
	b->open[b->depth++] = b->n;
}

/* Close the innermost open message: its length goes before its bytes. */
static void pb_close(struct pb *b)
{
	size_t start = b->open[--b->depth], len = b->n - start;
	unsigned k = varint_len(len);

	pb_room(b, k);
	memmove(b->p + start + k, b->p + start, len);
	varint_put(b->p + start, len);
	b->n += k;
}

/* ---- The writer ---- */

struct interned {
	char *s;
	uint64_t iid;
	UT_hash_handle hh;
};

/* A device's group track, its busy intervals and its counter tracks. */
struct pf_device {
	uint32_t device;
	uint64_t uuid;			/* "GPU n" */
	uint64_t busy_uuid, mem_uuid;
	uint64_t pm_uuid[TRACE_PM_NR_SLOTS];	/* 0: not made yet */
	uint64_t busy_end;		/* the end of the busy interval open */
	int is_busy;			/* an interval is open */
};

struct perfetto {
	FILE *spool;			/* the process being fed */
	char *spool_buf;
	struct pb pk;			/* the packet being built */
	struct pb in;			/* ... the interned names it defines */
	uint64_t next_uuid;		/* track uuids: distinct over the document */
	uint64_t uuid0;			/* ... when the process began */
	uint64_t nr_packets;		/* of the sequence */
	int uses_state;			/* the packet being built names an interned name */

	/* The process being fed (tap_begin resets it: the driver may start over) */
	int is_open;
	const struct model *m;
	int pid;
	uint32_t seq;			/* its packet sequence */
	uint64_t process_uuid;
	uint64_t *thread_uuid;		/* by thread slot */
	struct tl_tracks tracks;	/* lanes of threads, streams, idle gaps; id: uuid */
	struct pf_device *devs;
	size_t nr_devs, devs_cap, last_dev;
	struct interned *intern[NR_INTERN];
	uint64_t next_iid[NR_INTERN];
	struct m_pm_sample sample;	/* the last counter sample, written when the next comes */
	int has_sample;
	struct model_sink sink;
	struct name_cache names;	/* kernels' forms: a name is demangled once, not per slice */
	struct strbuf stack_text;	/* a call's stack (export_stack), reused */
};

/*
 * The iid of @s in interning table @t, defined in the packet being built (its interned_data)
 * when new. The sequence's names start clean with the process.
 */
static uint64_t intern(struct perfetto *pf, int t, const char *s)
{
	struct interned *e;
	size_t len = strlen(s);

	pf->uses_state = 1;
	HASH_FIND(hh, pf->intern[t], s, len, e);
	if (e)
		return e->iid;
	e = xcalloc(1, sizeof(*e));
	e->s = xstrdup(s);
	e->iid = ++pf->next_iid[t];
	HASH_ADD_KEYPTR(hh, pf->intern[t], e->s, len, e);
	pb_open(&pf->in, intern_field[t]);
	pb_uint(&pf->in, F_IID, e->iid);
	pb_bytes(&pf->in, F_IID_NAME, s, len);
	pb_close(&pf->in);
	return e->iid;
}

static void intern_reset(struct perfetto *pf)
{
	struct interned *e, *tmp;
	int t;

	for (t = 0; t < NR_INTERN; t++) {
		HASH_ITER(hh, pf->intern[t], e, tmp) {
			HASH_DEL(pf->intern[t], e);
			free(e->s);
			free(e);
		}
		pf->next_iid[t] = 0;
	}
}

/* Begin a packet at @ts (UINT64_MAX: none, as a track's descriptor has). */
static void packet_begin(struct export_ctx *x, uint64_t ts)
{
	struct perfetto *pf = x->priv;

	pf->pk.n = 0;
	pf->pk.depth = 0;
	pf->in.n = 0;
	pf->in.depth = 0;
	pf->uses_state = 0;
	if (ts != UINT64_MAX)
		pb_uint(&pf->pk, F_PKT_TIMESTAMP, ts > x->base_ns ? ts - x->base_ns : 0);
}

/*
 * Finish the packet (its sequence, flags and interned names) into the spool. Only a packet that
 * names an interned name says it needs the sequence's state: a slice's end, a counter value
 * or a track do not, and two bytes are a tenth of such a packet.
 */
static void packet_end(struct export_ctx *x)
{
	struct perfetto *pf = x->priv;
	uint8_t head[16], *h = head;

	pb_uint(&pf->pk, F_PKT_SEQ_ID, pf->seq);
	if (!pf->nr_packets++)
		pb_uint(&pf->pk, F_PKT_SEQ_FLAGS, SEQ_CLEARED);
	else if (pf->uses_state)
		pb_uint(&pf->pk, F_PKT_SEQ_FLAGS, SEQ_NEEDS_STATE);
	if (pf->in.n)
		pb_bytes(&pf->pk, F_PKT_INTERNED, pf->in.p, pf->in.n);
	h = varint_put(h, (uint64_t)F_TRACE_PACKET << 3 | WT_LEN);
	h = varint_put(h, pf->pk.n);
	if (fwrite(head, 1, (size_t)(h - head), pf->spool) != (size_t)(h - head) ||
	    fwrite(pf->pk.p, 1, pf->pk.n, pf->spool) != pf->pk.n)
		x->has_error = 1;
}

/* ---- Tracks ---- */

static uint64_t new_uuid(struct perfetto *pf)
{
	return ++pf->next_uuid;
}

/* A track under @parent named @name, ranked among its siblings; a counter when @counter. */
static void track(struct export_ctx *x, uint64_t uuid, uint64_t parent, const char *name,
		  int64_t rank, int counter, int is_bytes)
{
	struct perfetto *pf = x->priv;

	packet_begin(x, UINT64_MAX);
	pb_open(&pf->pk, F_PKT_TRACK_DESC);
	pb_uint(&pf->pk, F_TD_UUID, uuid);
	pb_uint(&pf->pk, F_TD_PARENT, parent);
	pb_str(&pf->pk, F_TD_NAME, name);
	pb_int(&pf->pk, F_TD_RANK, rank);
	if (counter) {
		pb_open(&pf->pk, F_TD_COUNTER);
		if (is_bytes)
			pb_uint(&pf->pk, F_CD_UNIT, UNIT_SIZE_BYTES);
		else
			pb_str(&pf->pk, F_CD_UNIT_NAME, "%");
		pb_close(&pf->pk);
	}
	pb_close(&pf->pk);
	packet_end(x);
}

/* The device's group track "GPU n" (made when first met) and its busy counter. */
static struct pf_device *device_of(struct export_ctx *x, uint32_t device)
{
	struct perfetto *pf = x->priv;
	struct pf_device *d;
	char name[48];
	size_t i;

	if (pf->last_dev < pf->nr_devs && pf->devs[pf->last_dev].device == device)
		return &pf->devs[pf->last_dev];
	for (i = 0; i < pf->nr_devs; i++)
		if (pf->devs[i].device == device)
			return &pf->devs[pf->last_dev = i];
	XGROW(pf->devs, pf->devs_cap, pf->nr_devs + 1);
	d = &pf->devs[pf->nr_devs];
	memset(d, 0, sizeof(*d));
	d->device = device;
	d->uuid = new_uuid(pf);
	snprintf(name, sizeof(name), "GPU %d", (int)device);

	packet_begin(x, UINT64_MAX);
	pb_open(&pf->pk, F_PKT_TRACK_DESC);
	pb_uint(&pf->pk, F_TD_UUID, d->uuid);
	pb_uint(&pf->pk, F_TD_PARENT, pf->process_uuid);
	pb_str(&pf->pk, F_TD_NAME, name);
	pb_int(&pf->pk, F_TD_RANK, 1000 + (int64_t)(device < 1000 ? device : 1000));
	pb_uint(&pf->pk, F_TD_CHILD_ORDER, ORDER_EXPLICIT);
	pb_close(&pf->pk);
	packet_end(x);

	d->busy_uuid = new_uuid(pf);
	track(x, d->busy_uuid, d->uuid, "busy", RANK_BUSY, 1, 0);
	pf->last_dev = pf->nr_devs;
	return &pf->devs[pf->nr_devs++];
}

/* The uuid of the lane of key @k for slice [@start, @end), its track made when new. */
static uint64_t place(struct export_ctx *x, const struct tl_key *k, uint64_t start,
		      uint64_t end)
{
	struct perfetto *pf = x->priv;
	const struct model *m = pf->m;
	int is_new;
	size_t i = tl_place(&pf->tracks, k, start, end, &is_new);
	struct tl_track *t = &pf->tracks.v[i];
	uint64_t parent, uuid;
	int64_t rank;
	char name[96];
	int n;

	if (!is_new)
		return t->id;
	if (k->kind == TL_THREAD) {
		/* The thread's own track, or a lane beside it for calls that overlap. */
		uint32_t tid = k->a < m->nr_threads ? m->threads[k->a].tid : 0;

		if (!t->lane && k->a < m->nr_threads)
			return t->id = pf->thread_uuid[k->a];
		snprintf(name, sizeof(name), "host thread %u (%u)", tid, t->lane + 1);
		parent = pf->process_uuid;
		rank = (int64_t)k->a;
	} else {
		struct pf_device *d = device_of(x, k->a);

		parent = d->uuid;
		if (k->kind == TL_IDLE) {
			n = snprintf(name, sizeof(name), "idle, by cause");
			rank = RANK_IDLE;
		} else {
			n = snprintf(name, sizeof(name), "stream %u %s", k->b,
				     k->kind == TL_KERNELS ? "kernels" : "copies");
			/* by stream (int32: streams past 2^22 share a rank), kernels first */
			rank = ((int64_t)(k->b < (1u << 22) ? k->b : 1u << 22) << 8) +
			       (k->kind == TL_COPIES) * 64 + (t->lane < 63 ? t->lane : 63);
		}
		if (t->lane && n > 0 && (size_t)n < sizeof(name))
			snprintf(name + n, sizeof(name) - (size_t)n, " (%u)", t->lane + 1);
	}
	uuid = new_uuid(pf);
	track(x, uuid, parent, name, rank, 0, 0);
	return t->id = uuid;
}

/* ---- Events ---- */

/* A track event at @ts on @uuid: begin it (the caller adds what it needs, then event_end). */
static void event_begin(struct export_ctx *x, uint64_t ts, uint64_t uuid, int type)
{
	struct perfetto *pf = x->priv;

	packet_begin(x, ts);
	pb_open(&pf->pk, F_PKT_TRACK_EVENT);
	pb_uint(&pf->pk, F_TE_TYPE, (uint64_t)type);
	pb_uint(&pf->pk, F_TE_TRACK_UUID, uuid);
}

static void event_end(struct export_ctx *x)
{
	struct perfetto *pf = x->priv;

	pb_close(&pf->pk);
	packet_end(x);
}

static void event_name(struct export_ctx *x, const char *name)
{
	struct perfetto *pf = x->priv;

	pb_uint(&pf->pk, F_TE_NAME_IID, intern(pf, IN_EVENT_NAME, name));
}

static void arg_open(struct perfetto *pf, const char *key)
{
	pb_open(&pf->pk, F_TE_DEBUG);
	pb_uint(&pf->pk, F_DA_NAME_IID, intern(pf, IN_ANNOTATION_NAME, key));
}

static void arg_uint(struct perfetto *pf, const char *key, uint64_t v)
{
	arg_open(pf, key);
	pb_uint(&pf->pk, F_DA_UINT, v);
	pb_close(&pf->pk);
}

/* A string argument, interned: kernel names and kinds repeat. */
static void arg_str(struct perfetto *pf, const char *key, const char *v)
{
	arg_open(pf, key);
	pb_uint(&pf->pk, F_DA_STRING_IID, intern(pf, IN_ANNOTATION_STRING, v));
	pb_close(&pf->pk);
}

/* The flow of call @c: its correlation number, the process's sequence in the high bits so that
 * the flows of two processes stay apart. */
static uint64_t flow_id(const struct export_ctx *x, const struct m_call *c)
{
	const struct perfetto *pf = x->priv;

	return (uint64_t)pf->seq << 56 ^ export_corr(x, c);
}

static void slice_end(struct export_ctx *x, uint64_t ts, uint64_t uuid)
{
	event_begin(x, ts, uuid, TE_SLICE_END);
	event_end(x);
}

/* Calls that can cause GPU work begin a flow. */
static int call_has_flow(const struct m_call *c)
{
	switch (c->kind) {
	case MC_LAUNCH:
	case MC_GRAPH_LAUNCH:
	case MC_HOST_FUNC:
	case MC_COPY:
	case MC_SET:
		return !(c->flags & (MCF_CAPTURING | MCF_ERROR));
	default:
		return 0;
	}
}

static void tap_call(void *ctx, const struct m_call *c, uint32_t id)
{
	struct export_ctx *x = ctx;
	struct perfetto *pf = x->priv;
	const struct model *m = pf->m;
	const struct tl_key k = { TL_THREAD, c->thread, 0 };
	uint64_t uuid = place(x, &k, c->t0, c->t1);
	uint32_t result = model_call_result(m, id), stack;

	event_begin(x, c->t0, uuid, TE_SLICE_BEGIN);
	event_name(x, model_api_name(m, c->api));
	if (result)
		arg_uint(pf, "result", result);
	if (c->kind == MC_LAUNCH) {
		const struct m_launch_shape *l = model_launch(m, c);
		const struct name_forms *kn = name_cache_get(&pf->names, model_func_name(m, l->func));

		arg_str(pf, "kernel", kn->whole);
	}
	if (c->kind == MC_COPY || c->kind == MC_SET || c->kind == MC_MEM)
		arg_uint(pf, "bytes", model_call_args(m, c)->bytes);
	if (c->flags & MCF_CAPTURING)
		arg_uint(pf, "captured", 1);
	stack = model_call_stack(m, id);
	if (stack && export_stack(m, stack, &pf->stack_text) == 0) {
		char at[512];

		report_where(m, stack, at, sizeof(at), NULL, 0);
		arg_str(pf, "where", at);
		arg_str(pf, "stack", pf->stack_text.buf);	/* interned: stacks repeat */
	}
	if (call_has_flow(c))
		pb_fixed64(&pf->pk, F_TE_FLOW_IDS, flow_id(x, c));
	event_end(x);
	slice_end(x, c->t1 > c->t0 ? c->t1 : c->t0, uuid);
}

/* The device's busy counter: 1 from an operation's start while operations run, then 0. */
static void busy(struct export_ctx *x, struct pf_device *d, uint64_t start, uint64_t end)
{
	struct perfetto *pf = x->priv;

	if (d->is_busy && start <= d->busy_end) {
		if (end > d->busy_end)
			d->busy_end = end;
		return;
	}
	if (d->is_busy) {
		event_begin(x, d->busy_end, d->busy_uuid, TE_COUNTER);
		pb_int(&pf->pk, F_TE_COUNTER, 0);
		event_end(x);
	}
	event_begin(x, start, d->busy_uuid, TE_COUNTER);
	pb_int(&pf->pk, F_TE_COUNTER, 1);
	event_end(x);
	d->is_busy = 1;
	d->busy_end = end > start ? end : start;
}

static void tap_op(void *ctx, const struct m_gpu_op *g, const struct m_call *c, uint32_t id)
{
	struct export_ctx *x = ctx;
	struct perfetto *pf = x->priv;
	const struct model *m = pf->m;
	const struct m_gpu_shape *sh = model_gpu_shape(m, g);
	const struct tl_key k = { sh->kind == MG_KERNEL ? TL_KERNELS : TL_COPIES, sh->device,
				  sh->stream };
	uint64_t uuid = place(x, &k, g->start, g->end);
	uint64_t dur = g->end > g->start ? g->end - g->start : 0;
	char launch[64];

	(void)id;	/* the call's number differs streamed and loaded whole */

	busy(x, device_of(x, sh->device), g->start, g->start + dur);
	event_begin(x, g->start, uuid, TE_SLICE_BEGIN);
	switch (sh->kind) {
	case MG_KERNEL: {
		int is_est;
		double fill = stats_fill_op(m, g, &is_est);
		const struct name_forms *kn =
			name_cache_get(&pf->names, model_string(m, sh->name, "<kernel>"));

		/* The title, and the name whole or as recorded where they differ from it. */
		event_name(x, kn->title);
		if (strcmp(kn->whole, kn->title))
			arg_str(pf, "name", kn->whole);
		if (strcmp(kn->name, kn->whole))
			arg_str(pf, "mangled", kn->name);
		/* The shape as CUDA writes a launch (blocks, threads a block, dynamic shared
		 * memory): one interned string for what a step repeats. */
		if (sh->dyn_smem)
			snprintf(launch, sizeof(launch), "<<<%" PRIu64 ", %u, %u>>>", sh->blocks,
				 sh->block_threads, sh->dyn_smem);
		else
			snprintf(launch, sizeof(launch), "<<<%" PRIu64 ", %u>>>", sh->blocks,
				 sh->block_threads);
		arg_str(pf, "launch", launch);
		if (fill >= 0)	/* whole percents: a byte, where a double takes nine */
			arg_uint(pf, "sm_fill_pct", (uint64_t)llround(fill * 100));
		break;
	}
	case MG_MEMCPY:
		event_name(x, export_copy_name(sh->copy_kind));
		arg_uint(pf, "bytes", sh->bytes);
		arg_str(pf, "src", export_mem_name(sh->src_kind));
		arg_str(pf, "dst", export_mem_name(sh->dst_kind));
		break;
	default:
		event_name(x, "memset");
		arg_uint(pf, "bytes", sh->bytes);
		break;
	}
	if (sh->graph_id)
		arg_uint(pf, "graph", sh->graph_id);
	if (c && call_has_flow(c))	/* its low bits: the correlation number */
		pb_fixed64(&pf->pk, F_TE_FLOW_IDS, flow_id(x, c));
	event_end(x);
	slice_end(x, g->start + dur, uuid);
}

/* The track of hardware counter @slot of device @d, made when first met. */
static uint64_t pm_track(struct export_ctx *x, struct pf_device *d, int slot)
{
	struct perfetto *pf = x->priv;

	if (!d->pm_uuid[slot]) {
		char name[64];

		snprintf(name, sizeof(name), "%s %%", counters_slot_name(slot));
		d->pm_uuid[slot] = new_uuid(pf);
		track(x, d->pm_uuid[slot], d->uuid, name, RANK_COUNTER + slot, 1, 0);
	}
	return d->pm_uuid[slot];
}

/*
 * The sampled counters' values at @ts (@zero: 0 each): one counter event on the first one's
 * track carries the others as extra counter values, up to PM_EXTRA a packet (Perfetto takes
 * at most 8), where a packet each would take twice the bytes.
 */
#define PM_EXTRA 8

static void pm_values(struct export_ctx *x, const struct m_pm_sample *p, uint64_t ts, int zero)
{
	struct perfetto *pf = x->priv;
	struct pf_device *d = device_of(x, p->device);
	uint64_t uuid[TRACE_PM_NR_SLOTS];
	double v[TRACE_PM_NR_SLOTS];
	int k, n = 0, i, j;

	for (k = 0; k <= TRACE_PM_WARPS; k++) {
		if (isnan(p->value[k]))
			continue;
		uuid[n] = pm_track(x, d, k);
		v[n++] = zero ? 0 : p->value[k];
	}
	for (i = 0; i < n; i = j) {
		event_begin(x, ts, uuid[i], TE_COUNTER);
		pb_double(&pf->pk, F_TE_DOUBLE_COUNTER, v[i]);
		for (j = i + 1; j < n && j <= i + PM_EXTRA; j++)
			pb_uint(&pf->pk, F_TE_EXTRA_DOUBLE_UUIDS, uuid[j]);
		for (j = i + 1; j < n && j <= i + PM_EXTRA; j++)
			pb_double(&pf->pk, F_TE_EXTRA_DOUBLE_VALUES, v[j]);
		event_end(x);
	}
}

/*
 * Hardware counters: a value per metric at each sample's start (a step until the next
 * sample); a 0 at its end when a hole (or the end) follows, as the Chrome export draws them.
 * Sample @p, followed by @next (NULL: the last).
 */
static void pm_sample(struct export_ctx *x, const struct m_pm_sample *p,
		      const struct m_pm_sample *next)
{
	pm_values(x, p, p->start, 0);
	if (!next || next->start > p->end + p->end - p->start)
		pm_values(x, p, p->end, 1);
}

static void tap_sample(void *ctx, const struct m_pm_sample *s)
{
	struct export_ctx *x = ctx;
	struct perfetto *pf = x->priv;

	if (pf->has_sample)
		pm_sample(x, &pf->sample, s);
	pf->sample = *s;
	pf->has_sample = 1;
}

static void tap_floor(void *ctx, uint64_t t)
{
	(void)ctx, (void)t;
}

/* An idle gap as the findings split it, named by its largest part (noise left out). */
static void tap_gap(void *ctx, const struct f_gap *g)
{
	struct export_ctx *x = ctx;
	struct perfetto *pf = x->priv;
	const struct tl_key key = { TL_IDLE, (uint32_t)g->device, 0 };	/* device may be -1 */
	int label = gap_label(g);
	uint64_t uuid;
	char name[48];
	int k;

	if (label == GAP_NOISE)
		return;
	uuid = place(x, &key, g->start, g->end);
	event_begin(x, g->start, uuid, TE_SLICE_BEGIN);
	event_name(x, gap_part_name(label));
	for (k = 0; k < NR_GAP_PARTS; k++) {
		if (!g->part[k])
			continue;
		snprintf(name, sizeof(name), "%s_ns", gap_part_name(k));
		arg_uint(pf, name, g->part[k]);
	}
	event_end(x);
	slice_end(x, g->end > g->start ? g->end : g->start, uuid);
}

/* Drop what the process being fed wrote: the driver starts over, or its trace failed. */
static void take_back(struct export_ctx *x)
{
	struct perfetto *pf = x->priv;

	spool_reset(x, pf->spool);
	pf->next_uuid = pf->uuid0;
	pf->is_open = 0;
}

static void tap_begin(void *ctx, const struct model *m, const struct first_look *p)
{
	struct export_ctx *x = ctx;
	struct perfetto *pf = x->priv;
	char name[160];
	size_t k;

	(void)p;
	if (pf->is_open)
		take_back(x);
	pf->is_open = 1;
	pf->m = m;
	pf->pid = export_pid(x, (int)m->pid);
	pf->seq = (uint32_t)x->nr_processes + 1;
	pf->uuid0 = pf->next_uuid;
	pf->nr_packets = 0;
	pf->nr_devs = 0;
	pf->last_dev = SIZE_MAX;
	pf->has_sample = 0;
	tl_reset(&pf->tracks);
	intern_reset(pf);

	/* The process, then its host threads (all known from the first look). */
	pf->process_uuid = new_uuid(pf);
	packet_begin(x, UINT64_MAX);
	pb_open(&pf->pk, F_PKT_TRACK_DESC);
	pb_uint(&pf->pk, F_TD_UUID, pf->process_uuid);
	pb_open(&pf->pk, F_TD_PROCESS);
	pb_int(&pf->pk, F_PD_PID, pf->pid);
	if (m->cmdline)
		pb_str(&pf->pk, F_PD_CMDLINE, m->cmdline);
	snprintf(name, sizeof(name), "pid %u on %s", m->pid, m->host ? m->host : "?");
	pb_str(&pf->pk, F_PD_NAME, name);
	pb_close(&pf->pk);
	pb_close(&pf->pk);
	packet_end(x);

	free(pf->thread_uuid);
	pf->thread_uuid = xcalloc(m->nr_threads + 1, sizeof(*pf->thread_uuid));
	for (k = 0; k < m->nr_threads; k++) {
		pf->thread_uuid[k] = new_uuid(pf);
		packet_begin(x, UINT64_MAX);
		pb_open(&pf->pk, F_PKT_TRACK_DESC);
		pb_uint(&pf->pk, F_TD_UUID, pf->thread_uuid[k]);
		pb_open(&pf->pk, F_TD_THREAD);
		pb_int(&pf->pk, F_THD_PID, pf->pid);
		pb_int(&pf->pk, F_THD_TID, m->threads[k].tid);
		snprintf(name, sizeof(name), "host thread %u", m->threads[k].tid);
		pb_str(&pf->pk, F_THD_NAME, name);
		pb_close(&pf->pk);
		pb_close(&pf->pk);
		packet_end(x);
	}
}

/* ---- Tracks from the finished analysis ---- */

struct mem_step {
	uint64_t t;
	int64_t delta;
	uint32_t device;
};

static int cmp_step(const void *a, const void *b)
{
	const struct mem_step *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->delta < y->delta ? -1 : x->delta > y->delta;	/* frees first */
}

/* Live device memory per device after every allocation and free (the Chrome export's). */
static void memory_counter(struct export_ctx *x, const struct stats *s)
{
	struct perfetto *pf = x->priv;
	const struct s_memory *mem = &s->mem;
	struct mem_step *st = xcalloc(2 * mem->nr_allocs + 1, sizeof(*st));
	size_t i, n = 0;
	int64_t live[64] = { 0 };

	for (i = 0; i < mem->nr_allocs; i++) {
		const struct s_alloc *a = &mem->allocs[i];
		uint32_t dev = a->device >= 0 && a->device < 64 ? (uint32_t)a->device : 0;
		int64_t bytes = a->bytes > INT64_MAX ? INT64_MAX : (int64_t)a->bytes;

		st[n++] = (struct mem_step){ a->t_alloc, bytes, dev };
		if (a->t_free != UINT64_MAX)
			st[n++] = (struct mem_step){ a->t_free, -bytes, dev };
	}
	xqsort(st, n, sizeof(*st), cmp_step);
	for (i = 0; i < n; i++) {
		struct pf_device *d = device_of(x, st[i].device);
		int64_t *l = &live[st[i].device];

		if (__builtin_add_overflow(*l, st[i].delta, l))	/* such sizes: saturate */
			*l = st[i].delta > 0 ? INT64_MAX : INT64_MIN;
		if (!d->mem_uuid) {
			d->mem_uuid = new_uuid(pf);
			track(x, d->mem_uuid, d->uuid, "memory", RANK_MEMORY, 1, 1);
		}
		event_begin(x, st[i].t, d->mem_uuid, TE_COUNTER);
		pb_int(&pf->pk, F_TE_COUNTER, *l);
		event_end(x);
	}
	free(st);
}

static void notes(struct export_ctx *x, const struct model *m)
{
	struct perfetto *pf = x->priv;
	size_t i;

	for (i = 0; i < m->nr_notes; i++) {
		const struct m_note *n = &m->notes[i];

		if (n->kind == TRACE_NOTE_DOORS)
			continue;	/* a summary at exit, not an event */
		event_begin(x, n->ts, pf->process_uuid, TE_INSTANT);
		event_name(x, model_string(m, n->text, "note"));
		event_end(x);
	}
}

/* ---- The document ---- */

static int perfetto_begin(struct export_ctx *x)
{
	struct perfetto *pf = xcalloc(1, sizeof(*pf));

	x->priv = pf;
	pf->spool = spool_open(&pf->spool_buf);
	if (!pf->spool) {
		int ret = -(errno ? errno : EIO);

		free(pf);
		x->priv = NULL;
		return ret;
	}
	pf->sink = (struct model_sink){ tap_begin, tap_call, tap_op, tap_sample, tap_floor, x };
	return 0;
}

static void perfetto_process_tap(struct export_ctx *x, struct analyze_tap *tap)
{
	struct perfetto *pf = x->priv;

	if (pf->is_open)
		take_back(x);	/* the last one's trace failed */
	tap->sink = &pf->sink;
	tap->gap = tap_gap;
}

static void perfetto_process(struct export_ctx *x, const struct model *m, const struct stats *s,
			     const struct findings *fd)
{
	struct perfetto *pf = x->priv;
	size_t i;

	(void)fd;	/* its gaps came through the tap */
	if (pf->has_sample)
		pm_sample(x, &pf->sample, NULL);
	for (i = 0; i < pf->nr_devs; i++) {
		struct pf_device *d = &pf->devs[i];

		if (d->is_busy) {
			event_begin(x, d->busy_end, d->busy_uuid, TE_COUNTER);
			pb_int(&pf->pk, F_TE_COUNTER, 0);
			event_end(x);
		}
	}
	memory_counter(x, s);
	notes(x, m);
	export_pid_add(x, pf->pid);
	spool_copy(x, pf->spool);
	pf->is_open = 0;
}

static void perfetto_end(struct export_ctx *x)
{
	struct perfetto *pf = x->priv;

	if (pf->is_open)
		take_back(x);
	fclose(pf->spool);
	free(pf->spool_buf);
	free(pf->pk.p);
	free(pf->in.p);
	free(pf->thread_uuid);
	free(pf->devs);
	tl_free(&pf->tracks);
	intern_reset(pf);
	name_cache_free(&pf->names);
	sb_free(&pf->stack_text);
	free(pf);
	free(x->pids);
	x->priv = NULL;
	x->pids = NULL;
}

const struct export_ops export_perfetto_ops = {
	.name = "perfetto",
	.begin = perfetto_begin,
	.process_tap = perfetto_process_tap,
	.process = perfetto_process,
	.end = perfetto_end,
};
