// SPDX-License-Identifier: MIT
/*
 * replay.c - the what-if replay (replay.h). The graph is built once from the loaded model:
 * nodes 2i (call i's start), 2i + 1 (its end), 2 * calls + o (operation o's start); each edge
 * holds its recorded delay and a kind that says how a change alters it. A replay visits the
 * nodes in dependency order (Kahn: a node is done when every edge into it is), each at the
 * latest of its edges; nodes nothing precedes stay at their recorded times. Pure.
 */
#include "replay.h"

#include <stdlib.h>
#include <string.h>

#include <uthash.h>

#include "findings.h"
#include "stats.h"
#include "util/demangle.h"
#include "util/util.h"

enum edge_kind {
	E_GAP,			/* a thread's previous call's end -> its next call's start: CPU time */
	E_NEST,			/* an enclosing call's start -> a call made inside it */
	E_OWN,			/* a call's start -> its end: its own time */
	E_POST,			/* a waiting call's start -> its end: returning after the wait */
	E_WAIT,			/* the operation a call waited for -> the call's end */
	E_LAUNCH,		/* a call's start -> an operation it issued */
	E_STREAM,		/* the operation before on the stream -> the next */
	E_DEP,			/* another stream's operation -> one that waited for it */
	E_WAKE,			/* another thread's call's end -> a call it woke (a handoff) */
};

enum call_flag {
	CF_WAITS = 1u << 0,	/* a synchronization or blocking read-back (the host_sync kind) */
	CF_PAGEABLE = 1u << 1,	/* a copy of pageable memory */
	CF_LAUNCH = 1u << 2,	/* a kernel or graph launch */
	CF_ALLOC = 1u << 3,	/* device memory allocated or freed */
	CF_READBACK = 1u << 4,	/* a copy to the host: the host waits for what it brings */
	CF_LAUNCH_RUN = 1u << 5,	/* a launch right after the thread's previous launch */
};

struct edge {
	uint32_t from, to;
	uint64_t delay;
	uint8_t kind;
};

struct replay {
	const struct model *m;
	size_t nr_calls, nr_ops, nr_nodes;
	uint64_t *rec;			/* each node's recorded time */
	uint32_t *indeg;
	uint32_t *first;		/* CSR: node n's edges are first[n] .. first[n + 1] */
	struct edge *e;
	size_t nr_e, e_cap;
	uint8_t *call_flags;
	uint32_t *call_site;		/* a waiting call's host_sync site; UINT32_MAX: none */
	struct replay_site *sites;
	size_t nr_sites, sites_cap;
	uint64_t *dur;			/* each operation's recorded duration */
	uint64_t lo, hi;		/* the window */
	double pinned_bw;
	int pinned_measured;
	uint8_t *is_saturated;		/* by kernel name id: fill does not bound it */
	size_t nr_saturated;
	/* per run */
	uint64_t *t;
	uint64_t *dur_now;
	uint32_t *left, *queue;
};

static uint32_t op_node(const struct replay *r, uint32_t o)
{
	return (uint32_t)(2 * r->nr_calls + o);
}

static void add_edge(struct replay *r, uint32_t from, uint32_t to, uint64_t delay, int kind)
{
	XGROW(r->e, r->e_cap, r->nr_e + 1);
	r->e[r->nr_e++] = (struct edge){ from, to, delay, (uint8_t)kind };
}

static int cmp_edge(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;

	return x->from < y->from ? -1 : x->from > y->from;
}

static uint64_t key_from(const void *p)
{
	return ((const struct edge *)p)->from;
}

/* An operation's or a call's index by its end. */
struct end_idx {
	uint64_t end;
	uint32_t idx;
};

/* Operations or calls sorted by end (for "the one that ended last before t"). */
struct by_end {
	struct end_idx *v;
	size_t n;
};

static uint64_t key_end(const void *p)
{
	return ((const struct end_idx *)p)->end;
}

static int cmp_end(const void *a, const void *b)
{
	const struct end_idx *x = a, *y = b;

	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* @be over @n things, the end of the i-th being @end(@m, i). */
static void by_end_make(struct by_end *be, const struct model *m, size_t n,
			uint64_t (*end)(const struct model *, size_t))
{
	size_t i;

	be->n = n;
	be->v = xmalloc((n + 1) * sizeof(*be->v));
	for (i = 0; i < n; i++)
		be->v[i] = (struct end_idx){ end(m, i), (uint32_t)i };
	xsort_by(be->v, n, sizeof(*be->v), key_end, cmp_end);
}

static uint64_t op_end(const struct model *m, size_t i)
{
	return m->gpu[i].end;
}

static uint64_t call_end(const struct model *m, size_t i)
{
	return m->calls[i].t1;
}

/* The last index in @be whose end is at or before @t, or SIZE_MAX. */
static size_t last_ending_by(const struct by_end *be, uint64_t t)
{
	size_t lo = 0, hi = be->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (be->v[mid].end <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? lo - 1 : SIZE_MAX;
}

/* The operation call @i waited for (its end came last before the call returned), or -1. */
static int64_t waited_for(const struct model *m, const struct by_end *be, uint32_t i)
{
	const struct m_call *c = &m->calls[i];
	uint64_t dur = c->t1 - c->t0;
	size_t k = last_ending_by(be, c->t1), walked;

	/*
	 * Calls that can block: synchronizations, blocking copies, allocations and frees (a free
	 * synchronizes); any other only when long (a launch into a full queue). A short launch
	 * that a kernel's end happened to fall in waited for nothing.
	 */
	if (k == SIZE_MAX || dur < 2000)
		return -1;
	if (c->kind != MC_SYNC && c->kind != MC_MEM && !findings_is_blocking_wait(c) &&
	    !(c->kind == MC_COPY && !(c->flags & MCF_ASYNC)) && dur < REPLAY_LONG_CALL_NS)
		return -1;
	for (walked = 0; walked < 64 && k != SIZE_MAX; walked++, k--) {
		const struct m_gpu_op *g = &m->gpu[be->v[k].idx];

		if (g->end < c->t0)
			break;
		if (g->call == i)	/* its own (a blocking copy), however long it took after */
			return be->v[k].idx;
		/* another's, submitted before the call began, that it returned right after */
		if (c->t1 - g->end <= REPLAY_WAIT_SLACK_NS && g->end >= c->t0 + dur / 2 &&
		    g->call != M_NO_CALL && m->calls[g->call].t0 < c->t0)
			return be->v[k].idx;
		if (!k)
			break;
	}
	return -1;
}

struct stream_key {
	uint32_t device, stream;
};

struct stream_last {
	UT_hash_handle hh;
	struct stream_key k;
	uint32_t op;
};

static uint64_t sub0(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

static uint64_t min64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/*
 * The call of another thread than @th, made before call @i (a lower index: never a cycle, a
 * call of no length or one ending at the same instant included), that ended last at or before
 * @t0, within @within ns, after *@after when given (the thread's own previous call's end): what
 * woke the thread (a queue's handoff: PyTorch's autograd thread waits for the main thread's
 * backward(), the main thread for the autograd thread's end), or started it. UINT32_MAX:
 * none.
 */
static uint32_t woken_by(const struct model *m, const struct by_end *ce, uint32_t i,
			 uint32_t th, uint64_t t0, const uint64_t *after, uint64_t within)
{
	size_t k = last_ending_by(ce, t0), walked;

	for (walked = 0; walked < 64 && k != SIZE_MAX; walked++, k--) {
		const struct end_idx *e = &ce->v[k];

		if (t0 - e->end > within || (after && e->end <= *after))
			break;
		if (m->calls[e->idx].thread != th && e->idx < i)
			return e->idx;
		if (!k)
			break;
	}
	return UINT32_MAX;
}

/* The sites by (entry point, name waited for), while the graph is built. Names are the
 * model's (or model_gpu_op_name's constants): compared by address, as the findings' sites are. */
struct site_key {
	uint64_t api;
	uintptr_t after;
};

struct site_slot {
	UT_hash_handle hh;
	struct site_key k;
	uint32_t idx;
};

/* Waiting call @i, which waited for operation @o: its site, added when new. */
static void site_of(struct replay *r, struct site_slot **slots, uint32_t i, uint32_t o)
{
	const struct model *m = r->m;
	const struct m_call *c = &m->calls[i];
	const char *after = model_gpu_op_name(m, model_gpu_shape(m, &m->gpu[o]));
	struct site_key k;
	struct site_slot *s;

	memset(&k, 0, sizeof(k));
	k.api = c->api;
	k.after = (uintptr_t)after;
	HASH_FIND(hh, *slots, &k, sizeof(k), s);
	if (!s) {
		s = xcalloc(1, sizeof(*s));
		s->k = k;
		s->idx = (uint32_t)r->nr_sites;
		HASH_ADD(hh, *slots, k, sizeof(s->k), s);
		XGROW(r->sites, r->sites_cap, r->nr_sites + 1);
		r->sites[r->nr_sites++] = (struct replay_site){ model_api_name(m, c->api), after,
								 0, 0 };
	}
	r->call_site[i] = s->idx;
	if (c->t0 <= r->hi && c->t1 >= r->lo) {	/* a wait in the window, whenever it began */
		r->sites[s->idx].nr_calls++;
		r->sites[s->idx].waited_ns += sub0(c->t1, c->t0);
	}
}

/* The calls' edges and flags. */
static void build_calls(struct replay *r, const struct by_end *be)
{
	const struct model *m = r->m;
	uint32_t *last_end = xmalloc((m->nr_threads + 1) * sizeof(*last_end));
	struct by_end ce;		/* the calls by end, for hand-offs */
	struct site_slot *slots = NULL, *s, *tmp;
	uint32_t i;

	by_end_make(&ce, m, r->nr_calls, call_end);

	for (i = 0; i <= m->nr_threads; i++)
		last_end[i] = UINT32_MAX;
	for (i = 0; i < r->nr_calls; i++) {
		const struct m_call *c = &m->calls[i];
		uint32_t th = c->thread < m->nr_threads ? c->thread : (uint32_t)m->nr_threads;
		uint32_t p = last_end[th];
		int64_t x;

		r->rec[2 * i] = c->t0;
		r->rec[2 * i + 1] = c->t1 > c->t0 ? c->t1 : c->t0;
		if (findings_is_blocking_wait(c))
			r->call_flags[i] |= CF_WAITS;
		if (c->kind == MC_LAUNCH || c->kind == MC_GRAPH_LAUNCH)
			r->call_flags[i] |= CF_LAUNCH;
		if (c->kind == MC_MEM && (c->op == TRACE_MEM_ALLOC || c->op == TRACE_MEM_FREE))
			r->call_flags[i] |= CF_ALLOC;
		if (p != UINT32_MAX) {
			const struct m_call *pc = &m->calls[p];

			uint32_t w = c->t0 >= pc->t1 + REPLAY_WAKE_MIN_GAP_NS ?
					     woken_by(m, &ce, i, c->thread, c->t0, &pc->t1,
							      REPLAY_WAKE_NS) :
					     UINT32_MAX;

			if (w != UINT32_MAX) {
				/* the thread waited for another: that is what its start follows */
				add_edge(r, 2 * w + 1, 2 * i, c->t0 - m->calls[w].t1, E_WAKE);
				add_edge(r, 2 * p + 1, 2 * i, 0, E_GAP);
			} else if (c->t0 >= pc->t1) {
				add_edge(r, 2 * p + 1, 2 * i, c->t0 - pc->t1, E_GAP);
				if ((r->call_flags[i] & CF_LAUNCH) && (r->call_flags[p] & CF_LAUNCH) &&
				    c->t0 - pc->t1 < REPLAY_GRAPH_GAP_NS)
					r->call_flags[i] |= CF_LAUNCH_RUN;
			} else	/* made inside the call before (a call that calls the driver) */
				add_edge(r, 2 * p, 2 * i, c->t0 - pc->t0, E_NEST);
		} else {
			/*
			 * A thread's first call: after the call of another thread that ended
			 * last before it (what started it, or its time), not at its recorded
			 * time: a run replayed shorter would otherwise wait for it.
			 */
			uint32_t w = woken_by(m, &ce, i, c->thread, c->t0, NULL,
					      UINT64_MAX);

			if (w != UINT32_MAX)
				add_edge(r, 2 * w + 1, 2 * i, c->t0 - m->calls[w].t1, E_WAKE);
		}
		if (p == UINT32_MAX || c->t1 > m->calls[p].t1)
			last_end[th] = i;
		r->call_site[i] = UINT32_MAX;
		x = waited_for(m, be, i);
		if (x >= 0) {
			uint64_t post = sub0(c->t1, m->gpu[x].end);

			add_edge(r, 2 * i, 2 * i + 1, post, E_POST);
			add_edge(r, op_node(r, (uint32_t)x), 2 * i + 1, post, E_WAIT);
			if (r->call_flags[i] & CF_WAITS)
				site_of(r, &slots, i, (uint32_t)x);
		} else {
			add_edge(r, 2 * i, 2 * i + 1, sub0(c->t1, c->t0), E_OWN);
		}
	}
	HASH_ITER(hh, slots, s, tmp) {
		HASH_DEL(slots, s);
		free(s);
	}
	free(last_end);
	free(ce.v);
}

/* The least delay from a launch call's start to its operation's, per device (the first 64). */
struct dev_lat {
	uint32_t device;
	uint64_t min_ns;
};

static uint64_t *lat_of(struct dev_lat *d, size_t *n, uint32_t device)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (d[i].device == device)
			return &d[i].min_ns;
	if (*n == 64)
		return &d[63].min_ns;
	d[*n] = (struct dev_lat){ device, UINT64_MAX };
	return &d[(*n)++].min_ns;
}

/* The operations' edges; the pinned bandwidth seen. */
static void build_ops(struct replay *r, const struct by_end *be)
{
	const struct model *m = r->m;
	struct stream_last *streams = NULL, *s, *tmp;
	struct dev_lat lat[64];
	size_t nr_lat = 0;
	uint32_t o;

	for (o = 0; o < r->nr_ops; o++) {	/* launch latency: the least per device */
		const struct m_gpu_op *g = &m->gpu[o];
		uint64_t *l;

		if (g->call == M_NO_CALL || g->start < m->calls[g->call].t0)
			continue;
		l = lat_of(lat, &nr_lat, model_gpu_shape(m, g)->device);
		*l = min64(*l, g->start - m->calls[g->call].t0);
	}
	for (o = 0; o < r->nr_ops; o++) {
		const struct m_gpu_op *g = &m->gpu[o];
		const struct m_gpu_shape *sh = model_gpu_shape(m, g);
		struct stream_key k = { sh->device, sh->stream };
		const struct m_call *c = g->call != M_NO_CALL ? &m->calls[g->call] : NULL;
		uint64_t lmin = *lat_of(lat, &nr_lat, sh->device), a = 0, b = 0, most;
		int bind = 0;			/* 1 launch, 2 stream, 3 another stream */
		uint32_t prev = UINT32_MAX, node = op_node(r, o);
		int64_t x = -1;

		r->rec[node] = g->start;
		r->dur[o] = sub0(g->end, g->start);
		if (sh->kind == MG_MEMCPY && g->call != M_NO_CALL &&
		    (sh->src_kind == TRACE_GPU_MEM_PAGEABLE || sh->dst_kind == TRACE_GPU_MEM_PAGEABLE))
			r->call_flags[g->call] |= CF_PAGEABLE;
		if (sh->kind == MG_MEMCPY && g->call != M_NO_CALL &&
		    (sh->copy_kind == 2 || sh->copy_kind == 4))	/* device or array to host */
			r->call_flags[g->call] |= CF_READBACK;
		if (sh->kind == MG_MEMCPY && sh->bytes >= (1u << 20) && r->dur[o] &&
		    sh->src_kind != TRACE_GPU_MEM_PAGEABLE && sh->dst_kind != TRACE_GPU_MEM_PAGEABLE &&
		    (sh->copy_kind == 1 || sh->copy_kind == 2)) {	/* host to device, back */
			double bw = (double)sh->bytes * 1e9 / (double)r->dur[o];

			if (bw > r->pinned_bw || !r->pinned_measured)
				r->pinned_bw = bw;
			r->pinned_measured = 1;
		}
		HASH_FIND(hh, streams, &k, sizeof(k), s);
		/* The stream's operation that ended last; none when it ran on past this one's
		 * start (kernels of a CUDA graph run side by side on their launch's stream). */
		if (s && m->gpu[s->op].end <= g->start)
			prev = s->op;
		if (c && lmin != UINT64_MAX)
			a = c->t0 + lmin, bind = 1;
		if (prev != UINT32_MAX && (!bind || m->gpu[prev].end > a))
			b = m->gpu[prev].end, bind = 2;
		most = bind == 2 ? b : a;
		if (bind && g->start > most + REPLAY_DEP_NS) {
			/* Neither explains the start: another stream's operation it waited for. */
			size_t i = last_ending_by(be, g->start), walked;

			for (walked = 0; walked < 64 && i != SIZE_MAX; walked++, i--) {
				const struct m_gpu_op *q = &m->gpu[be->v[i].idx];
				const struct m_gpu_shape *qs = model_gpu_shape(m, q);

				if (q->end < most)
					break;
				if (qs->device == sh->device && qs->stream != sh->stream &&
				    be->v[i].idx != o) {
					x = be->v[i].idx;
					bind = 3;
					break;
				}
				if (!i)
					break;
			}
		}
		if (c)
			add_edge(r, 2 * g->call, node,
				 bind == 1 ? sub0(g->start, c->t0) :
					     min64(lmin == UINT64_MAX ? 0 : lmin, sub0(g->start, c->t0)),
				 E_LAUNCH);
		if (prev != UINT32_MAX)
			add_edge(r, op_node(r, prev), node,
				 bind == 2 ? sub0(g->start, m->gpu[prev].end) : 0, E_STREAM);
		if (x >= 0)
			add_edge(r, op_node(r, (uint32_t)x), node, sub0(g->start, m->gpu[x].end), E_DEP);
		if (!s) {
			s = xcalloc(1, sizeof(*s));
			s->k = k;
			s->op = UINT32_MAX;
			HASH_ADD(hh, streams, k, sizeof(s->k), s);
		}
		if (s->op == UINT32_MAX || g->end >= m->gpu[s->op].end)
			s->op = o;
	}
	HASH_ITER(hh, streams, s, tmp) {
		HASH_DEL(streams, s);
		free(s);
	}
	if (!r->pinned_measured)
		r->pinned_bw = 50e9;	/* PCIe 5.0 x16 as the H200 moves pinned memory (README) */
}

struct replay *replay_build(const struct model *m, uint64_t lo, uint64_t hi, const char **why)
{
	struct replay *r;
	struct by_end be;
	size_t i, n;

	if (!m->nr_gpu) {
		*why = "no GPU timestamps (CUPTI was off)";
		return NULL;
	}
	if (m->nr_calls > (UINT32_MAX - m->nr_gpu) / 2) {
		*why = "too many calls and operations";
		return NULL;
	}
	r = xcalloc(1, sizeof(*r));
	r->m = m;
	r->nr_calls = m->nr_calls;
	r->nr_ops = m->nr_gpu;
	r->nr_nodes = 2 * r->nr_calls + r->nr_ops;
	r->lo = lo;
	r->hi = hi;
	r->rec = xcalloc(r->nr_nodes + 1, sizeof(*r->rec));
	r->call_flags = xcalloc(r->nr_calls + 1, 1);
	r->call_site = xmalloc((r->nr_calls + 1) * sizeof(*r->call_site));
	r->dur = xcalloc(r->nr_ops + 1, sizeof(*r->dur));
	by_end_make(&be, m, m->nr_gpu, op_end);
	build_calls(r, &be);
	build_ops(r, &be);
	free(be.v);
	/* CSR by the edge's source */
	xsort_by(r->e, r->nr_e, sizeof(*r->e), key_from, cmp_edge);
	r->first = xcalloc(r->nr_nodes + 2, sizeof(*r->first));
	r->indeg = xcalloc(r->nr_nodes + 1, sizeof(*r->indeg));
	for (i = 0, n = 0; i <= r->nr_nodes; i++) {
		while (n < r->nr_e && r->e[n].from < i)
			n++;
		r->first[i] = (uint32_t)n;
	}
	r->first[r->nr_nodes + 1] = (uint32_t)r->nr_e;
	for (i = 0; i < r->nr_e; i++)
		r->indeg[r->e[i].to]++;
	r->t = xmalloc((r->nr_nodes + 1) * sizeof(*r->t));
	r->dur_now = xmalloc((r->nr_ops + 1) * sizeof(*r->dur_now));
	r->left = xmalloc((r->nr_nodes + 1) * sizeof(*r->left));
	r->queue = xmalloc((r->nr_nodes + 1) * sizeof(*r->queue));
	if (!replay_run(r, NULL)) {
		*why = "the trace describes an impossible order (a cycle among its calls and "
		       "operations)";
		replay_free(r);
		return NULL;
	}
	return r;
}

/* What edge @e delays under @c; UINT64_MAX: the edge is gone. */
static uint64_t delay_of(const struct replay *r, const struct edge *e, const struct replay_change *c)
{
	uint32_t call = e->to / 2;
	uint8_t f;

	switch (e->kind) {
	case E_GAP:
		/* a CUDA graph replays a run of launches without the host between them */
		if ((r->call_flags[call] & CF_LAUNCH_RUN) && c->has_launch_ns)
			return 0;
		/* fall through */
	case E_WAKE:	/* the woken thread's CPU work before its call */
		return c->cpu_factor == 1.0 ? e->delay : (uint64_t)((double)e->delay * c->cpu_factor);
	case E_OWN:
		f = r->call_flags[call];
		if ((f & CF_ALLOC) && c->no_alloc)
			return 0;
		if ((f & CF_PAGEABLE) && !(f & CF_READBACK) && c->pinned)	/* asynchronous */
			return min64(e->delay, REPLAY_ASYNC_CALL_NS);
		if ((f & CF_LAUNCH) && c->has_launch_ns)
			return min64(e->delay, c->launch_ns);
		return e->delay;
	case E_WAIT:
		f = r->call_flags[call];
		if (((f & CF_WAITS) && c->no_sync &&
		     (!c->sync_sites || c->sync_sites[r->call_site[call]])) ||
		    ((f & CF_ALLOC) && c->no_alloc) ||
		    ((f & CF_PAGEABLE) && !(f & CF_READBACK) && c->pinned))
			return UINT64_MAX;
		return e->delay;
	case E_POST:
		f = r->call_flags[call];
		if ((f & CF_ALLOC) && c->no_alloc)
			return 0;
		if ((f & CF_PAGEABLE) && !(f & CF_READBACK) && c->pinned)
			return min64(e->delay, REPLAY_ASYNC_CALL_NS);
		return e->delay;
	default:
		return e->delay;
	}
}

/* Operation @o's duration under @c. */
static uint64_t dur_under(struct replay *r, uint32_t o, const struct replay_change *c)
{
	const struct m_gpu_op *g = &r->m->gpu[o];
	const struct m_gpu_shape *sh = model_gpu_shape(r->m, g);

	if (c->pinned && sh->kind == MG_MEMCPY &&
	    (sh->src_kind == TRACE_GPU_MEM_PAGEABLE || sh->dst_kind == TRACE_GPU_MEM_PAGEABLE))
		return min64(r->dur[o], (uint64_t)((double)sh->bytes * 1e9 / r->pinned_bw));
	if (c->full_fill && sh->kind == MG_KERNEL &&
	    !(sh->name < r->nr_saturated && r->is_saturated[sh->name])) {
		int est;
		double fill = stats_fill_op(r->m, g, &est);

		if (fill > 0 && fill < 1)
			return (uint64_t)((double)r->dur[o] * fill);
	}
	return r->dur[o];
}

void replay_set_stats(struct replay *r, const struct stats *s)
{
	size_t i;

	for (i = 0; i < s->nr_kernels; i++) {
		const struct s_kernel *k = &s->kernels[i];
		int unit, cls = stats_kernel_bound(k, &unit);

		/* a communication kernel's few blocks are its channels: more would not shorten
		 * a transfer or a wait for the other ranks (findings leave it out too) */
		if (cls != PM_CLASS_COMPUTE && cls != PM_CLASS_BANDWIDTH &&
		    !stats_is_comm_kernel(model_string(r->m, k->name_id, NULL)))
			continue;
		if (k->name_id >= r->nr_saturated) {
			size_t n = (size_t)k->name_id + 1;

			r->is_saturated = xrealloc(r->is_saturated, n);
			memset(r->is_saturated + r->nr_saturated, 0, n - r->nr_saturated);
			r->nr_saturated = n;
		}
		r->is_saturated[k->name_id] = 1;
	}
}

/* Is node @n in the window (its recorded time in it)? */
static int in_window(const struct replay *r, size_t n)
{
	return r->rec[n] >= r->lo && r->rec[n] <= r->hi;
}

/* With nodes at @t and operations lasting @dur: the first node the recording had in the
 * window (*@first, UINT64_MAX: none) and the last end of one (*@last). */
static void window_bounds(const struct replay *r, const uint64_t *t, const uint64_t *dur,
			  uint64_t *first, uint64_t *last)
{
	size_t i;

	*first = UINT64_MAX;
	*last = 0;
	for (i = 0; i < r->nr_nodes; i++) {
		uint64_t e = t[i];

		if (!in_window(r, i))
			continue;
		if (i >= 2 * r->nr_calls)
			e += dur[i - 2 * r->nr_calls];
		*first = min64(*first, t[i]);
		if (e > *last)
			*last = e;
	}
}

/* The window's span: from its first node to its last end (0: none, or no length). */
static uint64_t window_span(const struct replay *r, const uint64_t *t, const uint64_t *dur)
{
	uint64_t first, last;

	window_bounds(r, t, dur, &first, &last);
	return last > first ? last - first : 0;
}

uint64_t replay_run(struct replay *r, const struct replay_change *c)
{
	static const struct replay_change none = { .cpu_factor = 1.0 };
	size_t head = 0, tail = 0, done = 0, i;
	uint64_t span;

	if (!c)
		c = &none;
	/* The change applies in the window: what comes before it runs as recorded. */
	for (i = 0; i < r->nr_ops; i++)
		r->dur_now[i] = r->rec[op_node(r, (uint32_t)i)] < r->lo ?
					r->dur[i] :
					dur_under(r, (uint32_t)i, c);
	memcpy(r->left, r->indeg, r->nr_nodes * sizeof(*r->left));
	for (i = 0; i < r->nr_nodes; i++) {
		r->t[i] = r->left[i] ? 0 : r->rec[i];	/* nothing before it: as recorded */
		if (!r->left[i])
			r->queue[tail++] = (uint32_t)i;
	}
	while (head < tail) {
		uint32_t n = r->queue[head++];
		uint64_t from = r->t[n];

		done++;
		if (n >= 2 * r->nr_calls)	/* an operation: what follows waits for its end */
			from += r->dur_now[n - 2 * r->nr_calls];
		for (i = r->first[n]; i < r->first[n + 1]; i++) {
			const struct edge *e = &r->e[i];
			uint64_t d = r->rec[e->to] < r->lo ? e->delay : delay_of(r, e, c);

			if (d != UINT64_MAX && from + d > r->t[e->to])
				r->t[e->to] = from + d;
			if (!--r->left[e->to])
				r->queue[tail++] = e->to;
		}
	}
	if (done < r->nr_nodes)
		return 0;	/* a cycle */
	span = window_span(r, r->t, r->dur_now);
	return span ? span : 1;		/* 0 says a cycle */
}

uint64_t replay_recorded_span(const struct replay *r)
{
	return window_span(r, r->rec, r->dur);
}

double replay_pinned_bw(const struct replay *r, int *measured)
{
	*measured = r->pinned_measured;
	return r->pinned_bw;
}

size_t replay_nr_sites(const struct replay *r)
{
	return r->nr_sites;
}

const struct replay_site *replay_site(const struct replay *r, size_t i)
{
	return &r->sites[i];
}

/* Does @name answer to NAME @want (@n bytes): the whole name, its end, or its start with
 * "..." after it (a name cut)? */
static int text_matches(const char *name, const char *want, size_t n)
{
	size_t len = strlen(name);

	if (n > 3 && !memcmp(want + n - 3, "...", 3) && len >= n - 3 &&
	    !memcmp(name, want, n - 3))
		return 1;
	return n && len >= n && !memcmp(name + len - n, want, n);
}

/* @mangled demangled whole (@width 0) or short at @width into @buf (@len bytes), else into an
 * allocation in *@big (free it); NULL when refused. */
static const char *readable(const char *mangled, size_t width, char *buf, size_t len,
			    char **big)
{
	int n = width ? demangle_short(mangled, buf, len, width) : demangle(mangled, buf, len);

	if (n < 0)
		return NULL;
	if ((size_t)n < len)
		return buf;
	*big = xmalloc((size_t)n + 1);
	if (width)
		demangle_short(mangled, *big, (size_t)n + 1, width);
	else
		demangle(mangled, *big, (size_t)n + 1);
	return *big;
}

/*
 * ... or, a C++ name's, does it answer as the outputs print it: demangled whole (or its end,
 * or its start and "..."), or any short form (demangle_short at any width: the report's and
 * whatif's tables take one of them, widened or not). The short forms, longest first, are
 * found by asking each time for one narrower than the last; at most demangle.c's steps.
 */
static int name_matches(const char *name, const char *want, size_t n)
{
	char buf[512], *big = NULL;
	const char *s;
	size_t width = SIZE_MAX;
	int is_match = 0;

	if (text_matches(name, want, n))
		return 1;
	s = readable(name, 0, buf, sizeof(buf), &big);
	if (!s)
		return 0;
	is_match = text_matches(s, want, n);
	while (!is_match && width) {
		size_t len;

		free(big);
		big = NULL;
		s = readable(name, width, buf, sizeof(buf), &big);
		if (!s)
			break;
		len = strlen(s);
		is_match = len == n && !memcmp(s, want, n);
		if (len > width || !len)
			break;		/* the narrowest form: none fits a narrower width */
		width = len - 1;
	}
	free(big);
	return is_match;
}

size_t replay_sites_match(const struct replay *r, const char *spec, uint8_t *mask)
{
	static const char sep[] = " after ";
	const char *a = strstr(spec, sep), *want = a ? a + strlen(sep) : NULL;
	size_t entry_len = a ? (size_t)(a - spec) : strlen(spec), i, n = 0;

	for (i = 0; i < r->nr_sites; i++) {
		const struct replay_site *s = &r->sites[i];

		if (strlen(s->entry) != entry_len || memcmp(s->entry, spec, entry_len))
			continue;
		if (want && !name_matches(s->after, want, strlen(want)))
			continue;
		mask[i] = 1;
		n++;
	}
	return n;
}

int replay_call_times(const struct replay *r, size_t i, enum replay_clock clk, uint64_t *t0,
		      uint64_t *t1)
{
	const uint64_t *t = clk == REPLAY_RECORDED ? r->rec : r->t;

	*t0 = t[2 * i];
	*t1 = t[2 * i + 1];
	return in_window(r, 2 * i);
}

int replay_op_times(const struct replay *r, size_t o, enum replay_clock clk, uint64_t *start,
		    uint64_t *end)
{
	size_t n = op_node(r, (uint32_t)o);

	*start = clk == REPLAY_RECORDED ? r->rec[n] : r->t[n];
	*end = *start + (clk == REPLAY_RECORDED ? r->dur[o] : r->dur_now[o]);
	return in_window(r, n);
}

void replay_window_times(const struct replay *r, enum replay_clock clk, uint64_t *first,
			 uint64_t *last)
{
	if (clk == REPLAY_RECORDED)
		window_bounds(r, r->rec, r->dur, first, last);
	else
		window_bounds(r, r->t, r->dur_now, first, last);
}

void replay_free(struct replay *r)
{
	if (!r)
		return;
	free(r->rec);
	free(r->call_site);
	free(r->sites);
	free(r->indeg);
	free(r->first);
	free(r->e);
	free(r->call_flags);
	free(r->dur);
	free(r->is_saturated);
	free(r->t);
	free(r->dur_now);
	free(r->left);
	free(r->queue);
	free(r);
}

int replay_change_of_cause(int cause, struct replay_change *c)
{
	memset(c, 0, sizeof(*c));
	c->cpu_factor = 1.0;
	switch (cause) {
	case CAUSE_HOST_SYNC:
		c->no_sync = 1;
		return 0;
	case CAUSE_LAUNCH_OVERHEAD:
		c->has_launch_ns = 1;
		c->launch_ns = REPLAY_GRAPH_LAUNCH_NS;
		return 0;
	case CAUSE_CPU_BOUND:
		c->cpu_factor = 0.5;
		return 0;
	case CAUSE_MEMCPY:
		c->pinned = 1;
		return 0;
	case CAUSE_ALLOCATION:
		c->no_alloc = 1;
		return 0;
	case CAUSE_LOW_PARALLELISM:
		c->full_fill = 1;
		return 0;
	default:
		return -1;
	}
}
