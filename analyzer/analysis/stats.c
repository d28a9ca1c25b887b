// SPDX-License-Identifier: MIT
/*
 * stats.c - see stats.h. Pure: reads the model, fills struct stats. No I/O.
 */
#define _GNU_SOURCE
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "counters.h"
#include "model/first_look.h"
#include "uthash.h"
#include "util/util.h"

int stats_is_host_sync(const struct m_call *c)
{
	return c->kind == MC_SYNC && (c->sub == TRACE_SYNC_CTX || c->sub == TRACE_SYNC_STREAM ||
				      c->sub == TRACE_SYNC_EVENT);
}

int stats_is_device_mem(uint8_t kind)
{
	return kind == TRACE_MEM_DEVICE || kind == TRACE_MEM_PITCH || kind == TRACE_MEM_MANAGED ||
	       kind == TRACE_MEM_ASYNC || kind == TRACE_MEM_POOL || kind == TRACE_MEM_VMM_PHYS;
}

double stats_fill(const struct model *m, uint32_t name, uint64_t blocks, uint32_t block_threads,
		  uint32_t dyn_smem, int device, int *is_estimate)
{
	const struct trace_rec_device *d = model_device(m, device);
	uint32_t per_sm = model_occupancy(m, name, block_threads, dyn_smem);
	double fill;

	*is_estimate = 0;
	if (!d || !d->sm_count || !block_threads)
		return -1;
	if (!per_sm) {
		/* No calculator answer: the thread limit bounds the blocks per SM from above. */
		uint32_t by_threads = d->max_threads_per_sm / block_threads;

		per_sm = d->max_blocks_per_sm && d->max_blocks_per_sm < by_threads ?
				 d->max_blocks_per_sm :
				 by_threads;
		if (!per_sm)
			per_sm = 1;
		*is_estimate = 1;
	}
	fill = (double)blocks / ((double)d->sm_count * per_sm);
	return fill > 1 ? 1 : fill;
}

double stats_fill_op(const struct model *m, const struct m_gpu_op *g, int *is_estimate)
{
	const struct m_gpu_shape *sh = model_gpu_shape(m, g);
	struct m_fill_memo *e;

	if (!m->fill_memo)
		return stats_fill(m, sh->name, sh->blocks, sh->block_threads, sh->dyn_smem,
				  (int)sh->device, is_estimate);
	e = &m->fill_memo[g->shape];
	if (!e->known) {
		e->fill = stats_fill(m, sh->name, sh->blocks, sh->block_threads, sh->dyn_smem,
				     (int)sh->device, &e->is_estimate);
		e->known = 1;
	}
	*is_estimate = e->is_estimate;
	return e->fill;
}

/* ---- Span and counts ---- */

static void count_call(struct s_counts *n, const struct model *m, const struct m_call *c)
{
	int is_err = (c->flags & MCF_ERROR) != 0;

	n->calls++;
	n->errors += is_err;
	switch (c->kind) {
	case MC_LAUNCH:
	case MC_GRAPH_LAUNCH:
	case MC_HOST_FUNC:
		n->launches++;
		n->launch_errors += is_err;
		n->kernel_launches += c->kind == MC_LAUNCH;
		n->graph_launches += c->kind == MC_GRAPH_LAUNCH;
		n->host_funcs += c->kind == MC_HOST_FUNC;
		n->captured_launches += c->kind == MC_LAUNCH && (c->flags & MCF_CAPTURING);
		break;
	case MC_SYNC:
		n->syncs += stats_is_host_sync(c);
		n->ctx_syncs += c->sub == TRACE_SYNC_CTX;
		n->stream_syncs += c->sub == TRACE_SYNC_STREAM;
		n->event_syncs += c->sub == TRACE_SYNC_EVENT;
		n->queries += c->sub == TRACE_SYNC_STREAM_QUERY ||
			      c->sub == TRACE_SYNC_EVENT_QUERY;
		n->stream_waits += c->sub == TRACE_SYNC_STREAM_WAIT_EVENT;
		n->event_records += c->sub == TRACE_SYNC_EVENT_RECORD;
		break;
	case MC_MEM:
		if (stats_is_device_mem(c->sub)) {
			n->allocs += c->op == TRACE_MEM_ALLOC;
			n->frees += c->op == TRACE_MEM_FREE;
			n->alloc_errors += is_err;
		} else if (c->sub == TRACE_MEM_HOST || c->sub == TRACE_MEM_HOST_REGISTER) {
			n->host_allocs += c->op == TRACE_MEM_ALLOC;
			n->host_frees += c->op == TRACE_MEM_FREE;
		}
		break;
	case MC_COPY:
		n->memcpys++;
		if (!is_err)
			n->memcpy_bytes += model_call_args(m, c)->bytes;
		break;
	case MC_SET:
		n->memsets++;
		if (!is_err)
			n->memset_bytes += model_call_args(m, c)->bytes;
		break;
	default:
		break;
	}
}

/* ---- Entry points ---- */

static int cmp_api(const void *a, const void *b)
{
	const struct s_api *x = a, *y = b;

	if (x->total_ns != y->total_ns)
		return x->total_ns > y->total_ns ? -1 : 1;
	if (x->calls != y->calls)
		return x->calls > y->calls ? -1 : 1;
	return strcmp(x->name, y->name);
}

static void api_add(struct s_api *by_id, const struct model *m, const struct m_call *c)
{
	uint64_t dur = c->t1 - c->t0;
	struct s_api *a;

	if (c->api >= m->nr_apis + 1)
		return;
	a = &by_id[c->api];
	a->calls++;
	a->errors += (c->flags & MCF_ERROR) != 0;
	a->total_ns += dur;
	if (dur > a->max_ns)
		a->max_ns = dur;
}

/* The entry points called, by host time, from per-id sums (@by_id: nr_apis + 1 of them). */
static void compute_apis(struct stats *s, const struct model *m, const struct s_api *by_id)
{
	size_t i, n = 0;

	s->apis = xcalloc(m->nr_apis + 1, sizeof(*s->apis));
	for (i = 0; i <= m->nr_apis; i++) {
		if (!by_id[i].calls)
			continue;
		s->apis[n] = by_id[i];
		s->apis[n].api = (uint16_t)i;
		s->apis[n].name = model_api_name(m, (uint16_t)i);
		s->apis[n].family = i < m->nr_apis ? m->apis[i].family : 0;
		n++;
	}
	s->nr_apis = n;
	xqsort(s->apis, n, sizeof(*s->apis), cmp_api);
}

/* ---- Kernels ---- */

struct shape_key {
	uint32_t grid[3];
	uint32_t block[3];
};

/* A kernel's launch shape: which kernel (index into s->kernels) and its geometry. */
struct shape_id {
	uint32_t kernel;
	struct shape_key shape;
};

/* The distinct shape_ids seen: open addressing, at most half full. */
struct shape_set {
	struct shape_id *v;
	uint8_t *used;
	size_t n, nr_slots;
};

static size_t shape_hash(const struct shape_id *k)
{
	uint32_t w[sizeof(*k) / 4];
	uint64_t h = 0x9e3779b97f4a7c15ull;
	size_t i;

	memcpy(w, k, sizeof(w));
	for (i = 0; i < sizeof(w) / 4; i++)
		h = (h ^ w[i]) * 0xff51afd7ed558ccdull;
	return (size_t)(h ^ (h >> 29));
}

/* Add @k to @set; 1 when it was not there. */
static int shape_set_add(struct shape_set *set, const struct shape_id *k)
{
	size_t j;

	if (2 * (set->n + 1) > set->nr_slots) {
		struct shape_set bigger = { NULL, NULL, 0, set->nr_slots ? 2 * set->nr_slots : 256 };

		bigger.v = xmalloc(bigger.nr_slots * sizeof(*bigger.v));
		bigger.used = xcalloc(bigger.nr_slots, 1);
		for (j = 0; j < set->nr_slots; j++)
			if (set->used[j])
				shape_set_add(&bigger, &set->v[j]);
		free(set->v);
		free(set->used);
		*set = bigger;
	}
	for (j = shape_hash(k) & (set->nr_slots - 1); set->used[j];
	     j = (j + 1) & (set->nr_slots - 1))
		if (!memcmp(&set->v[j], k, sizeof(*k)))
			return 0;
	set->used[j] = 1;
	set->v[j] = *k;
	set->n++;
	return 1;
}

/*
 * A kernel's p50 and p99. The first look (first_look.h) counted its durations by bucket, so only
 * the executions in the two buckets holding them are counted here, by value: a bucket is 1/32
 * of an octave wide (exact below 64 ns), so it holds at most that many distinct values, however
 * long the run.
 */
struct vcount {
	uint64_t v, n;			/* n == 0: an empty slot */
};

struct k_aux {
	struct first_look_rank rank[2];		/* where the p50 and p99 are */
	int has_rank;
	struct vcount *vc;		/* open addressing by value, at most half full */
	size_t nr_vc, nr_slots;
	double fill_sum, fill_w;
	double pm_sum[TRACE_PM_NR_SLOTS], pm_w[TRACE_PM_NR_SLOTS];
	struct ctr_share pm_share;
};

/* Value @v's slot in @x: where it is, or the empty one where it goes. */
static size_t vc_slot(const struct k_aux *x, uint64_t v)
{
	size_t j = (size_t)(v * 0x9e3779b97f4a7c15ull >> 17) & (x->nr_slots - 1);

	while (x->vc[j].n && x->vc[j].v != v)
		j = (j + 1) & (x->nr_slots - 1);
	return j;
}

static void vc_add(struct k_aux *x, uint64_t v)
{
	size_t j;

	if (2 * (x->nr_vc + 1) > x->nr_slots) {
		struct vcount *old = x->vc;
		size_t i, n = x->nr_slots;

		x->nr_slots = n ? 2 * n : 16;
		x->vc = xcalloc(x->nr_slots, sizeof(*x->vc));
		for (i = 0; i < n; i++)
			if (old[i].n)
				x->vc[vc_slot(x, old[i].v)] = old[i];
		free(old);
	}
	j = vc_slot(x, v);
	if (!x->vc[j].n) {
		x->vc[j].v = v;
		x->nr_vc++;
	}
	x->vc[j].n++;
}

static int cmp_vcount(const void *a, const void *b)
{
	const struct vcount *x = a, *y = b;

	return x->v < y->v ? -1 : x->v > y->v;
}

/* The @r.rank-th smallest value counted in bucket @r.bucket. */
static uint64_t vc_rank(struct k_aux *x, struct first_look_rank r)
{
	struct vcount *v = xmalloc((x->nr_vc + 1) * sizeof(*v));
	size_t i, n = 0;
	uint64_t seen = 0, ans = 0;

	for (i = 0; i < x->nr_slots; i++)
		if (x->vc[i].n && first_look_bucket(x->vc[i].v) == r.bucket)
			v[n++] = x->vc[i];
	xqsort(v, n, sizeof(*v), cmp_vcount);
	for (i = 0; i < n; i++) {
		ans = v[i].v;
		seen += v[i].n;
		if (seen >= r.rank)
			break;
	}
	free(v);
	return ans;
}

static int cmp_kernel(const void *a, const void *b)
{
	const struct s_kernel *x = a, *y = b;

	if (x->gpu_total_ns != y->gpu_total_ns)
		return x->gpu_total_ns > y->gpu_total_ns ? -1 : 1;
	if (x->launches != y->launches)
		return x->launches > y->launches ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* What statistics_call and _op add to as they come; stats_end makes struct stats of it. */
struct stats_acc {
	struct stats *s;
	const struct model *m;
	const struct first_look *p;
	struct s_api *by_api;		/* by entry point id: nr_apis + 1 */
	uint64_t lo, hi;		/* the span */
	struct mem_call *mem;		/* the memory calls, in order */
	size_t nr_mem, mem_cap;
	/* Kernels, keyed by name (STRING id): one entry per distinct kernel name */
	int64_t *slot;			/* index into s->kernels by STRING id; -1 none */
	size_t nr_ids, kernels_cap;
	struct k_aux *aux;		/* beside s->kernels */
	struct pm_window pm;		/* the counter samples kernels still to come may overlap */
	/* The GPU timeline: UNIONS unions per device (all, kernel, memcpy, memset, comm, other) */
	struct stats_union *unions;
	struct stats_comm_memo comm;	/* communication kernels' names */
	struct m_stretch *host_only;	/* model_host_only */
	size_t nr_host_only;
};

static struct s_kernel *kernel_slot(struct stats_acc *a, uint32_t key_id)
{
	struct stats *s = a->s;
	uint32_t id = key_id < a->nr_ids ? key_id : 0;
	size_t n = s->nr_kernels, old = a->kernels_cap;
	int j;

	if (a->slot[id] >= 0)
		return &s->kernels[a->slot[id]];
	XGROW(s->kernels, a->kernels_cap, n + 1);
	if (a->kernels_cap > old) {
		a->aux = xrealloc(a->aux, a->kernels_cap * sizeof(*a->aux));
		memset(a->aux + old, 0, (a->kernels_cap - old) * sizeof(*a->aux));
	}
	memset(&s->kernels[n], 0, sizeof(s->kernels[n]));
	s->kernels[n].name_id = id;
	s->kernels[n].name = model_string(a->m, id, "<unknown kernel>");
	s->kernels[n].fill = -1;
	s->kernels[n].pm_share = -1;
	for (j = 0; j < TRACE_PM_NR_SLOTS; j++)
		s->kernels[n].pm[j] = NAN;
	a->aux[n].has_rank = first_look_ranks(a->p, id, a->aux[n].rank);
	a->slot[id] = (int64_t)n;
	s->nr_kernels = n + 1;
	return &s->kernels[n];
}

static void kernel_call(struct stats_acc *a, const struct m_call *c)
{
	const struct model *m = a->m;
	const struct m_launch_shape *l = model_launch(m, c);
	struct s_kernel *k = kernel_slot(a, l->func < m->nr_funcs ? m->funcs[l->func].name : 0);

	if (!k->launches) {
		memcpy(k->grid_first, l->grid, sizeof(k->grid_first));
		k->block_first[0] = l->block[0];
		k->block_first[1] = l->block[1];
		k->block_first[2] = l->block[2];
	}
	k->launches++;
	k->launch_errors += (c->flags & MCF_ERROR) != 0;
	k->captured += (c->flags & MCF_CAPTURING) != 0;
	k->blocks_total += model_launch_blocks(l);
	k->launch_host_ns += c->t1 - c->t0;
}

static void kernel_op(struct stats_acc *a, const struct m_gpu_op *g,
		      const struct m_gpu_shape *sh)
{
	struct s_kernel *k = kernel_slot(a, sh->name);
	struct k_aux *x = &a->aux[k - a->s->kernels];
	uint64_t dur = g->end - g->start;
	int is_est;
	double f;

	if (!k->gpu_count || dur < k->gpu_min_ns)
		k->gpu_min_ns = dur;
	if (dur > k->gpu_max_ns)
		k->gpu_max_ns = dur;
	k->gpu_count++;
	k->gpu_total_ns += dur;
	k->from_graphs += sh->graph_id != 0;
	if (x->has_rank) {
		uint32_t b = first_look_bucket(dur);

		if (b == x->rank[0].bucket || b == x->rank[1].bucket)
			vc_add(x, dur);
	}
	f = stats_fill_op(a->m, g, &is_est);
	if (f >= 0) {
		x->fill_sum += f * (double)dur;
		x->fill_w += (double)dur;
		k->fill_is_estimate |= is_est;
	}
	pm_window_let_go(&a->pm, g->start);
	counters_accumulate(&a->pm, sh->device, g->start, g->end, x->pm_sum, x->pm_w,
			    &x->pm_share);
}

static void kernels_end(struct stats_acc *a)
{
	struct stats *s = a->s;
	const struct model *m = a->m;
	struct shape_set shapes = { NULL, NULL, 0, 0 };
	struct shape_id key;
	size_t i;
	int j;

	/* Each launched kernel's shapes: the model's distinct launches, by grid and block. */
	memset(&key, 0, sizeof(key));	/* no padding, but memcmp reads all of it */
	for (i = 0; i < m->nr_launch_shapes; i++) {
		const struct m_launch_shape *l = &m->launch_shapes[i];
		uint32_t name = l->func < m->nr_funcs ? m->funcs[l->func].name : 0;
		int64_t at = a->slot[name < a->nr_ids ? name : 0];

		if (at < 0 || !s->kernels[at].launches)
			continue;	/* no launch call has it */
		key.kernel = (uint32_t)at;
		memcpy(key.shape.grid, l->grid, sizeof(l->grid));
		key.shape.block[0] = l->block[0];
		key.shape.block[1] = l->block[1];
		key.shape.block[2] = l->block[2];
		if (shape_set_add(&shapes, &key) && s->kernels[at].nr_shapes < 255)
			s->kernels[at].nr_shapes++;
	}
	for (i = 0; i < s->nr_kernels; i++) {
		struct s_kernel *k = &s->kernels[i];
		struct k_aux *x = &a->aux[i];

		if (k->gpu_count) {
			if (x->has_rank) {
				k->gpu_p50_ns = vc_rank(x, x->rank[0]);
				k->gpu_p99_ns = vc_rank(x, x->rank[1]);
			}
			if (x->fill_w > 0)
				k->fill = x->fill_sum / x->fill_w;
			for (j = 0; j < TRACE_PM_NR_SLOTS; j++)
				if (x->pm_w[j] > 0)
					k->pm[j] = x->pm_sum[j] / x->pm_w[j];
			/* The samples' GR share undercounts busy time (GR active 72-86 % while
			 * kernels ran back to back on the H200): at most all of it. */
			if (x->pm_share.busy > 0)
				k->pm_share = x->pm_share.own < x->pm_share.busy ?
						      x->pm_share.own / x->pm_share.busy :
						      1.0;
		}
		free(x->vc);
	}
	free(shapes.v);
	free(shapes.used);
	free(a->aux);
	free(a->slot);
	xqsort(s->kernels, s->nr_kernels, sizeof(*s->kernels), cmp_kernel);
}

/* ---- Memory ---- */

struct live_entry {
	UT_hash_handle hh;
	struct {
		uint64_t addr;
		uint32_t is_vmm;	/* VMM handles and device pointers are different spaces */
	} key;
	size_t alloc;
	uint64_t seq;
};

struct alloc_seq {
	uint64_t a, f;			/* allocation and free order numbers; f = UINT64_MAX live */
};

static int cmp_live(const void *a, const void *b, void *ctx)
{
	const struct s_alloc *v = ctx;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	if (v[x].bytes != v[y].bytes)
		return v[x].bytes > v[y].bytes ? -1 : 1;
	return x < y ? -1 : x > y;
}

static size_t dev_slot(struct s_memory *mem, const struct model *m, int device)
{
	size_t i;
	const struct trace_rec_device *d;

	for (i = 0; i < mem->nr_devices; i++)
		if (mem->devices[i].device == device)
			return i;
	mem->devices = xrealloc(mem->devices, (mem->nr_devices + 1) * sizeof(*mem->devices));
	memset(&mem->devices[i], 0, sizeof(mem->devices[i]));
	mem->devices[i].device = device;
	d = model_device(m, device);
	mem->devices[i].total_bytes = d ? d->total_bytes : 0;
	mem->devices[i].peak_pct = -1;
	mem->nr_devices++;
	return i;
}

/* A memory call with what it carries, kept for the walk at the end (they are few). */
struct mem_call {
	struct m_call c;
	struct m_call_args arg;
	uint32_t result;		/* the CUresult of a failed call */
};

/* What follows the calls for memory pressure (struct s_pressure). */
struct pressure_acc {
	int pending;			/* a failure not yet retried with success */
	uint64_t fail_t0, fail_bytes;
	uint64_t frees, freed;
	struct { uint64_t t, bytes, ns; } recent[MEM_CHURN_FREES];	/* the last frees */
	size_t nr_recent, next;
};

static void pressure_failed(struct s_pressure *p, struct pressure_acc *a, const struct m_call *c,
			    const struct m_call_args *arg, uint64_t live)
{
	if (p->failed < MEM_FAILED_KEPT)
		p->first[p->failed] = (struct s_failed_alloc){ c->t0, arg->bytes, live, c->api,
							       c->device };
	p->failed++;
	if (!a->pending) {
		a->pending = 1;
		a->fail_t0 = c->t0;
		a->fail_bytes = arg->bytes;
		a->frees = a->freed = 0;
	}
}

static void pressure_freed(struct pressure_acc *a, const struct m_call *c, uint64_t bytes)
{
	if (a->pending) {
		a->frees++;
		a->freed += bytes;
	}
	a->recent[a->next].t = c->t1;
	a->recent[a->next].bytes = bytes;
	a->recent[a->next].ns = c->t1 - c->t0;
	a->next = (a->next + 1) % MEM_CHURN_FREES;
	if (a->nr_recent < MEM_CHURN_FREES)
		a->nr_recent++;
}

static void pressure_allocated(struct s_pressure *p, struct pressure_acc *a,
			       const struct m_call *c, uint64_t bytes)
{
	size_t i;

	/* The retry: the refused size (or more) again, after frees. */
	if (a->pending && c->t0 - a->fail_t0 > MEM_RECLAIM_NS)
		a->pending = 0;
	if (a->pending && bytes >= a->fail_bytes && a->frees) {
		p->reclaims++;
		p->reclaim_frees += a->frees;
		p->reclaim_freed_bytes += a->freed;
		p->reclaim_ns += c->t1 - a->fail_t0;
		a->pending = 0;
	}
	/* The most recent free of this size, soon enough before: taken back. */
	for (i = 0; i < a->nr_recent; i++) {
		size_t k = (a->next + MEM_CHURN_FREES - 1 - i) % MEM_CHURN_FREES;

		if (c->t0 < a->recent[k].t)
			continue;	/* freed (by another thread) while this was allocated */
		if (c->t0 - a->recent[k].t > MEM_CHURN_NS)
			break;
		if (a->recent[k].bytes == bytes) {
			p->churn_allocs++;
			p->churn_bytes += bytes;
			p->churn_ns += (c->t1 - c->t0) + a->recent[k].ns;
			a->recent[k].bytes = 0;	/* one allocation a free */
			break;
		}
	}
}

/* ---- Memory over time ---- */

uint64_t stats_mem_size_floor(int k)
{
	return k <= 0 ? 0 : 1ull << (16 + 4 * k);	/* 1 MiB, 16 MiB, 256 MiB, 4 GiB */
}

static int size_class(uint64_t bytes)
{
	int k;

	for (k = MEM_NR_SIZES - 1; k > 0; k--)
		if (bytes >= stats_mem_size_floor(k))
			break;
	return k;
}

/* A level the live bytes held from t_start to t_end (UINT64_MAX: still). */
struct level {
	uint64_t t_start, t_end, bytes;
	size_t nr_allocs;		/* allocations made when it began */
};

/*
 * What follows the live bytes as the walk changes them (struct s_mem_formation): the series'
 * open slice, the spike's window, the open steady step. O(1) memory but for the spike's window,
 * which holds at most the changes of one window (a step).
 */
struct form_acc {
	struct s_mem_formation *fm;
	const struct loop *l;
	uint64_t last_t;		/* the walk's times, kept from going back (threads overlap) */
	uint64_t start;			/* the series' */
	size_t slice;			/* the open slice */
	/* The spike: the levels the window's low point may come from, least first (a ring) */
	uint64_t spike_from;
	int is_spike_on;
	struct level *dq;
	size_t dq_head, dq_len, dq_cap;
	size_t spike_allocs[2];		/* the best rise's allocations: [from, to) */
	/* The growth: steady steps l->series[g_first + i], i < nr_steps; step g_at is open */
	size_t g_first;
	uint64_t g_at, g_min, g_best;
	int is_g_open;
	uint64_t rises_half[2];		/* rises in the first and second half of the steps */
	double mx, my, cxy, cxx;	/* the fit's means and co-moments (Welford) */
};

static void form_begin(struct form_acc *f, struct s_mem_formation *fm, const struct loop *l,
		       uint64_t span_start, uint64_t span_end)
{
	uint64_t span = span_end > span_start ? span_end - span_start : 0;
	size_t k;

	memset(f, 0, sizeof(*f));
	f->fm = fm;
	f->l = l;
	f->start = span_start;
	f->last_t = span_start;
	/* Rounded up, without overflow: a hostile span reaches 2^64. */
	fm->slice_ns = span / MEM_SERIES_POINTS + (span % MEM_SERIES_POINTS != 0);
	if (!fm->slice_ns)
		fm->slice_ns = 1;
	fm->nr_series = (size_t)(span / fm->slice_ns + (span % fm->slice_ns != 0));
	if (!fm->nr_series)
		fm->nr_series = 1;
	for (k = 0; k < fm->nr_series; k++)
		fm->series[k].end = k + 1 < fm->nr_series ? span_start + (k + 1) * fm->slice_ns :
							    span_end;
	fm->has_phases = l->found.source != STEPS_NONE;
	fm->peak_phase = -1;
	fm->spike.phase = -1;
	/* A spike within a step, from the first step on: the start-up's loading is no spike. */
	fm->spike.window_ns = fm->slice_ns;
	if (fm->has_phases) {
		/* The steady steps: after the warm-up, starting in the steady state. */
		size_t i = l->warmup < l->nr_series ? (size_t)l->warmup : l->nr_series, j;

		f->spike_from = l->phase[PHASE_WARMUP].start;
		if (l->found.median_ns)
			fm->spike.window_ns = l->found.median_ns;
		while (i < l->nr_series && l->series[i].start < l->phase[PHASE_STEADY].start)
			i++;
		for (j = i; j < l->nr_series && l->series[j].start < l->phase[PHASE_STEADY].end; j++)
			;
		if (j - i >= MEM_GROWTH_MIN_STEPS) {
			f->g_first = i;
			fm->growth.nr_steps = j - i;
		}
	}
}

static size_t slice_of(const struct form_acc *f, uint64_t t)
{
	uint64_t k = t > f->start ? (t - f->start) / f->fm->slice_ns : 0;

	return k < f->fm->nr_series ? (size_t)k : f->fm->nr_series - 1;
}

/* The series moves on to @t, @cur bytes live until then: the slices before it close. */
static void series_to(struct form_acc *f, uint64_t t, uint64_t cur)
{
	struct s_mem_point *p = f->fm->series;
	size_t k = slice_of(f, t);

	for (; f->slice < k; f->slice++) {
		p[f->slice].end_bytes = cur;
		p[f->slice + 1].min_bytes = p[f->slice + 1].max_bytes = cur;
	}
}

static struct level *dq_at(struct form_acc *f, size_t i)
{
	return &f->dq[(f->dq_head + i) & (f->dq_cap - 1)];
}

static void dq_push(struct form_acc *f, struct level v)
{
	if (f->dq_len == f->dq_cap) {
		size_t cap = f->dq_cap ? 2 * f->dq_cap : 64, i;
		struct level *bigger = xmalloc(cap * sizeof(*bigger));

		for (i = 0; i < f->dq_len; i++)
			bigger[i] = *dq_at(f, i);
		free(f->dq);
		f->dq = bigger;
		f->dq_cap = cap;
		f->dq_head = 0;
	}
	*dq_at(f, f->dq_len++) = v;
}

/*
 * The live bytes went from @before to @after at @t: the rise since the window's low point. The
 * levels kept are those whose bytes no later level undercuts (a sliding minimum), each dropped
 * once it ended a window before @t.
 */
static void spike_at(struct form_acc *f, uint64_t t, uint64_t before, uint64_t after,
		     size_t nr_before, size_t nr_after)
{
	struct s_mem_spike *sp = &f->fm->spike;
	struct level *low;

	if (t < f->spike_from)
		return;
	if (!f->is_spike_on) {
		f->is_spike_on = 1;
		dq_push(f, (struct level){ f->spike_from, UINT64_MAX, before, nr_before });
	}
	dq_at(f, f->dq_len - 1)->t_end = t;
	while (f->dq_len && dq_at(f, f->dq_len - 1)->bytes >= after)
		f->dq_len--;
	dq_push(f, (struct level){ t, UINT64_MAX, after, nr_after });
	while (t >= sp->window_ns && dq_at(f, 0)->t_end <= t - sp->window_ns) {
		f->dq_head = (f->dq_head + 1) & (f->dq_cap - 1);
		f->dq_len--;
	}
	low = dq_at(f, 0);
	if (after - low->bytes > sp->bytes) {
		sp->bytes = after - low->bytes;
		sp->from_bytes = low->bytes;
		sp->to_bytes = after;
		sp->start = low->t_end;
		sp->end = t;
		f->spike_allocs[0] = low->nr_allocs;
		f->spike_allocs[1] = nr_after;
	}
}

/* The open steady step closes with its low point @y. */
static void growth_close(struct form_acc *f, uint64_t y)
{
	struct s_mem_growth *g = &f->fm->growth;
	double x = (double)f->g_at, n = x + 1, dx = x - f->mx;

	f->mx += dx / n;
	f->my += ((double)y - f->my) / n;
	f->cxy += dx * ((double)y - f->my);
	f->cxx += dx * (x - f->mx);
	if (!f->g_at) {
		g->first_bytes = y;
		f->g_best = y;
	} else if (y > f->g_best) {
		f->g_best = y;
		g->nr_rises++;
		f->rises_half[2 * f->g_at >= g->nr_steps]++;
	}
	g->last_bytes = y;
	f->g_at++;
}

/* Steady step @i's end: the next step's start; the last's, the steady state's end. */
static uint64_t growth_step_end(const struct form_acc *f, uint64_t i)
{
	const struct loop *l = f->l;

	if (i + 1 < f->fm->growth.nr_steps)
		return l->series[f->g_first + i + 1].start;
	return l->phase[PHASE_STEADY].end;
}

/* The growth moves on to @t, @cur bytes live until then: the steps ended by then close. */
static void growth_to(struct form_acc *f, uint64_t t, uint64_t cur)
{
	const struct s_mem_growth *g = &f->fm->growth;

	if (f->g_at >= g->nr_steps || t < f->l->series[f->g_first].start)
		return;
	if (!f->is_g_open) {
		f->is_g_open = 1;
		f->g_min = cur;		/* live at the first steady step's start */
	}
	while (f->g_at < g->nr_steps && t >= growth_step_end(f, f->g_at)) {
		growth_close(f, f->g_min);
		f->g_min = cur;
	}
}

/* The live bytes went from @before to @after at @t (allocations made: @nr_before, @nr_after). */
static void form_event(struct form_acc *f, uint64_t t, uint64_t before, uint64_t after,
		       size_t nr_before, size_t nr_after)
{
	struct s_mem_point *p;

	if (t < f->last_t)
		t = f->last_t;
	f->last_t = t;
	series_to(f, t, before);
	p = &f->fm->series[f->slice];
	if (after < p->min_bytes)
		p->min_bytes = after;
	if (after > p->max_bytes)
		p->max_bytes = after;
	spike_at(f, t, before, after, nr_before, nr_after);
	growth_to(f, t, before);
	if (f->is_g_open && f->g_at < f->fm->growth.nr_steps && after < f->g_min)
		f->g_min = after;
}

/* The walk is over, @cur bytes live at the end: what the allocations live at the peak made. */
static void form_end(struct form_acc *f, struct s_memory *mem, uint64_t span_end, uint64_t cur)
{
	struct s_mem_formation *fm = f->fm;
	struct s_mem_growth *g = &fm->growth;
	const struct loop *l = f->l;
	size_t i;

	series_to(f, span_end, cur);
	fm->series[fm->nr_series - 1].end_bytes = cur;
	growth_to(f, UINT64_MAX, cur);
	if (g->nr_steps) {
		/* Growing: the fit rose by the smallest leak worth a look, and the low point kept
		 * setting new highs, early and late (not one buffer kept, nor a cache that filled
		 * in the first steady steps). */
		double fit, enough = (double)(mem->peak_bytes / 100 > MEM_LEAK_MIN_BYTES ?
						      mem->peak_bytes / 100 :
						      MEM_LEAK_MIN_BYTES);

		g->per_step_bytes = f->cxx > 0 ? f->cxy / f->cxx : 0;
		fit = g->per_step_bytes * (double)(g->nr_steps - 1);
		g->is_growing = fit >= enough && g->nr_rises >= MEM_LEAK_RISES &&
				f->rises_half[0] && f->rises_half[1];
	}
	if (fm->spike.bytes) {
		for (i = f->spike_allocs[0]; i < f->spike_allocs[1]; i++) {
			fm->spike.nr_allocs++;
			if (mem->allocs[i].bytes > fm->spike.largest_bytes)
				fm->spike.largest_bytes = mem->allocs[i].bytes;
		}
		if (fm->has_phases)
			fm->spike.phase = loop_phase_at(l, fm->spike.end);
	}
	if (fm->has_phases && mem->peak_bytes)
		fm->peak_phase = loop_phase_at(l, mem->peak_ts);
	for (i = 0; i < mem->nr_live_at_peak; i++) {
		const struct s_alloc *a = &mem->allocs[mem->live_at_peak[i]];
		struct s_mem_group *sz = &fm->by_size[size_class(a->bytes)];

		fm->series[slice_of(f, a->t_alloc)].peak_made_bytes += a->bytes;
		sz->nr++;
		sz->bytes += a->bytes;
		if (fm->has_phases) {
			fm->by_phase[loop_phase_at(l, a->t_alloc)].nr++;
			fm->by_phase[loop_phase_at(l, a->t_alloc)].bytes += a->bytes;
		}
		if (!fm->peak_first_alloc || a->t_alloc < fm->peak_first_alloc)
			fm->peak_first_alloc = a->t_alloc;
		if (a->t_alloc > fm->peak_last_alloc)
			fm->peak_last_alloc = a->t_alloc;
	}
	free(f->dq);
}

static void compute_memory(struct s_memory *mem, const struct model *m, const struct mem_call *v,
			   size_t nr_v, const struct loop *l, uint64_t span_start, uint64_t span_end)
{
	struct form_acc fa;
	struct pressure_acc pa;
	struct live_entry *live = NULL, *e, *tmp;
	struct alloc_seq *seq = NULL;
	uint64_t cur = 0, order = 0, peak_order = 0, *dev_cur = NULL;
	size_t i, cap = 0, seq_cap = 0, nr_dev_cur = 0;

	memset(mem, 0, sizeof(*mem));
	memset(&pa, 0, sizeof(pa));
	mem->peak_device = -1;
	mem->peak_pct = -1;
	form_begin(&fa, &mem->formation, l, span_start, span_end);
	for (i = 0; i < nr_v; i++) {
		const struct m_call *c = &v[i].c;
		const struct m_call_args *arg = &v[i].arg;
		struct live_entry key;
		uint64_t before = cur;
		size_t nr_before = mem->nr_allocs;

		if (stats_is_device_mem(c->sub) || c->sub == TRACE_MEM_HOST)
			mem->alloc_ns += c->t1 - c->t0;
		/* Out of memory (CUDA_ERROR_OUT_OF_MEMORY, 2): not a refused handle type, say. */
		if (stats_is_device_mem(c->sub) && (c->flags & MCF_ERROR) &&
		    c->op == TRACE_MEM_ALLOC && v[i].result == 2)
			pressure_failed(&mem->pressure, &pa, c, arg, cur);
		if (!stats_is_device_mem(c->sub) || (c->flags & MCF_ERROR))
			continue;
		memset(&key, 0, sizeof(key));
		key.key.addr = arg->addr;
		key.key.is_vmm = c->sub == TRACE_MEM_VMM_PHYS;
		order++;
		if (c->op == TRACE_MEM_ALLOC) {
			struct s_alloc *a;
			size_t d;

			if (!arg->addr)
				continue;
			XGROW(mem->allocs, cap, mem->nr_allocs + 1);
			XGROW(seq, seq_cap, mem->nr_allocs + 1);
			a = &mem->allocs[mem->nr_allocs];
			a->addr = arg->addr;
			a->bytes = arg->bytes;
			a->t_alloc = c->t1;
			a->t_free = UINT64_MAX;
			a->api = c->api;
			a->kind = c->sub;
			a->device = c->device;
			seq[mem->nr_allocs].a = order;
			seq[mem->nr_allocs].f = UINT64_MAX;
			HASH_FIND(hh, live, &key.key, sizeof(key.key), e);
			if (e) {
				/* Re-allocated without a free we saw: the old one is gone. */
				seq[e->alloc].f = order;
				mem->allocs[e->alloc].t_free = c->t1;
				cur -= mem->allocs[e->alloc].bytes;
				dev_cur[dev_slot(mem, m, mem->allocs[e->alloc].device)] -=
					mem->allocs[e->alloc].bytes;
				HASH_DEL(live, e);
				free(e);
			}
			e = xmalloc(sizeof(*e));
			*e = key;
			e->alloc = mem->nr_allocs++;
			HASH_ADD(hh, live, key, sizeof(e->key), e);
			cur += a->bytes;
			mem->alloc_bytes_total += a->bytes;
			pressure_allocated(&mem->pressure, &pa, c, a->bytes);
			d = dev_slot(mem, m, a->device);
			if (mem->nr_devices > nr_dev_cur) {
				dev_cur = xrealloc(dev_cur, mem->nr_devices * sizeof(*dev_cur));
				dev_cur[nr_dev_cur++] = 0;
			}
			dev_cur[d] += a->bytes;
			if (dev_cur[d] > mem->devices[d].peak_bytes) {
				mem->devices[d].peak_bytes = dev_cur[d];
				mem->devices[d].peak_ts = c->t1;
			}
			if (cur > mem->peak_bytes) {
				mem->peak_bytes = cur;
				mem->peak_ts = c->t1;
				peak_order = order;
			}
			form_event(&fa, c->t1, before, cur, nr_before, mem->nr_allocs);
		} else if (c->op == TRACE_MEM_FREE) {
			HASH_FIND(hh, live, &key.key, sizeof(key.key), e);
			if (!e) {
				if (arg->addr)
					mem->unmatched_frees++;
				continue;
			}
			seq[e->alloc].f = order;
			mem->allocs[e->alloc].t_free = c->t0;
			cur -= mem->allocs[e->alloc].bytes;
			pressure_freed(&pa, c, mem->allocs[e->alloc].bytes);
			/* The device was given a slot when this allocation was made. */
			dev_cur[dev_slot(mem, m, mem->allocs[e->alloc].device)] -=
				mem->allocs[e->alloc].bytes;
			HASH_DEL(live, e);
			free(e);
			form_event(&fa, c->t0, before, cur, nr_before, mem->nr_allocs);
		}
	}
	mem->final_bytes = cur;
	HASH_ITER(hh, live, e, tmp) {
		HASH_DEL(live, e);
		free(e);
	}

	/* The headline device is the fullest one (by share of its memory, else by bytes). */
	for (i = 0; i < mem->nr_devices; i++) {
		struct s_device_mem *d = &mem->devices[i];
		const struct s_device_mem *best = NULL;
		size_t j;

		if (d->total_bytes)
			d->peak_pct = 100.0 * (double)d->peak_bytes / (double)d->total_bytes;
		for (j = 0; j < mem->nr_devices; j++)
			if (mem->devices[j].device == mem->peak_device)
				best = &mem->devices[j];
		if (!best || d->peak_pct > best->peak_pct ||
		    (d->peak_pct == best->peak_pct && d->peak_bytes > best->peak_bytes)) {
			mem->peak_pct = d->peak_pct;
			mem->peak_device = d->device;
			mem->device_total_bytes = d->total_bytes;
		}
	}
	if (mem->peak_device < 0 && m->nr_devices) {
		mem->peak_device = (int)m->devices[0].ordinal;
		mem->device_total_bytes = m->devices[0].total_bytes;
	}

	mem->live_at_peak = xcalloc(mem->nr_allocs + 1, sizeof(size_t));
	for (i = 0; i < mem->nr_allocs; i++)
		if (seq[i].a <= peak_order && seq[i].f > peak_order && peak_order)
			mem->live_at_peak[mem->nr_live_at_peak++] = i;
	if (mem->nr_live_at_peak > 1)
		qsort_r(mem->live_at_peak, mem->nr_live_at_peak, sizeof(size_t), cmp_live,
			mem->allocs);
	form_end(&fa, mem, span_end, cur);
	free(seq);
	free(dev_cur);
}

/* ---- GPU timeline ---- */

/* The unions beside the kinds' (MG_KERNEL, MG_MEMCPY, MG_MEMSET: 1-3; 0 is all of them). */
enum { U_COMM = 4, U_OTHER = 5, UNIONS = 6 };

int stats_is_comm_kernel(const char *name)
{
	const char *p = name;

	if (!name)
		return 0;
	/* NCCL's kernels as recorded: "ncclDevKernel_..." (extern "C" builds) or mangled with
	 * their arguments, "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgs..."
	 * (NCCL 2.28 in PyTorch 2.11's wheel, seen on the H200) */
	if (p[0] == '_' && p[1] == 'Z')
		for (p += 2; *p >= '0' && *p <= '9'; p++)
			;
	return !strncmp(p, "nccl", 4) || strstr(name, "nvshmem") ||
	       strstr(name, "c10d16symmetric_memory");
}

int stats_is_comm_name(struct stats_comm_memo *memo, const struct model *m, uint32_t name)
{
	if (name >= m->nr_strings)
		return stats_is_comm_kernel(model_string(m, name, NULL));
	if (name >= memo->n) {
		size_t n = m->nr_strings;

		memo->v = xrealloc(memo->v, n);
		memset(memo->v + memo->n, 0, n - memo->n);
		memo->n = n;
	}
	if (!memo->v[name])
		memo->v[name] = stats_is_comm_kernel(model_string(m, name, NULL)) ? 1 : 2;
	return memo->v[name] == 1;
}

void stats_comm_memo_free(struct stats_comm_memo *memo)
{
	free(memo->v);
	memo->v = NULL;
	memo->n = 0;
}

static void gpu_op(struct stats_acc *a, const struct m_gpu_op *op, const struct m_gpu_shape *sh)
{
	struct s_gpu *g = &a->s->gpu;
	struct s_gpu_device *d = NULL;
	size_t j, nd = g->nr_devices;
	int is_est;
	double f;

	for (j = 0; j < nd; j++)
		if (g->devices[j].device == (int)sh->device)
			d = &g->devices[j];
	if (!d) {
		g->devices = xrealloc(g->devices, (nd + 1) * sizeof(*g->devices));
		a->unions = xrealloc(a->unions, (nd + 1) * UNIONS * sizeof(*a->unions));
		memset(&g->devices[nd], 0, sizeof(*d));
		memset(&a->unions[nd * UNIONS], 0, UNIONS * sizeof(*a->unions));
		g->devices[nd].device = (int)sh->device;
		g->devices[nd].first_ns = op->start;
		d = &g->devices[nd];
		g->nr_devices++;
	}
	j = (size_t)(d - g->devices);
	if (op->end > d->last_ns)
		d->last_ns = op->end;
	stats_union_add(&a->unions[j * UNIONS], op->start, op->end);
	stats_union_add(&a->unions[j * UNIONS + sh->kind], op->start, op->end);
	switch (sh->kind) {
	case MG_KERNEL:
		g->nr_kernels++;
		if (stats_is_comm_name(&a->comm, a->m, sh->name)) {
			d->nr_comm++;
			stats_union_add(&a->unions[j * UNIONS + U_COMM], op->start, op->end);
			if (g->nr_comm_ops < STATS_MAX_COMM_OPS) {
				XGROW(g->comm_ops, g->comm_ops_cap, g->nr_comm_ops + 1);
				g->comm_ops[g->nr_comm_ops++] = (struct s_comm_op){
					op->start, op->end, sh->name, (int32_t)sh->device };
			} else {
				g->comm_ops_dropped++;
			}
		} else {
			stats_union_add(&a->unions[j * UNIONS + U_OTHER], op->start, op->end);
		}
		f = stats_fill_op(a->m, op, &is_est);
		if (f >= 0)
			d->fill_ns += f * (double)(op->end - op->start);
		break;
	case MG_MEMCPY:
		g->nr_memcpys++;
		break;
	default:
		g->nr_memsets++;
		break;
	}
}

static void gpu_end(struct stats_acc *a)
{
	struct stats *s = a->s;
	const struct model *m = a->m;
	struct s_gpu *g = &s->gpu;
	size_t i, nd = g->nr_devices;
	double span_dev;

	g->has_cupti = m->has_cupti;
	g->joined = m->gpu_joined;
	g->unjoined = m->gpu_unjoined;
	for (i = 0; i < nd; i++) {
		struct s_gpu_device *d = &g->devices[i];

		d->busy_ns = a->unions[i * UNIONS].total;
		d->kernel_ns = a->unions[i * UNIONS + MG_KERNEL].total;
		d->memcpy_ns = a->unions[i * UNIONS + MG_MEMCPY].total;
		d->memset_ns = a->unions[i * UNIONS + MG_MEMSET].total;
		/* |comm and other| = |comm| + |other| - |comm or other|, the last the kernels'. */
		d->comm_ns = a->unions[i * UNIONS + U_COMM].total;
		d->comm_overlap_ns = d->comm_ns + a->unions[i * UNIONS + U_OTHER].total - d->kernel_ns;
		g->comm_ns += d->comm_ns;
		g->comm_overlap_ns += d->comm_overlap_ns;
		g->nr_comm += d->nr_comm;
		g->busy_ns += d->busy_ns;
		g->kernel_ns += d->kernel_ns;
		g->memcpy_ns += d->memcpy_ns;
		g->memset_ns += d->memset_ns;
	}
	span_dev = (double)s->span_ns * (double)(nd ? nd : 1);
	/* span x devices can pass 2^64 on a hostile trace: clamp before converting. */
	g->idle_ns = span_dev <= (double)g->busy_ns		    ? 0 :
		     span_dev - (double)g->busy_ns >= 18446744073709549568.0 ? UINT64_MAX :
									     (uint64_t)(span_dev - (double)g->busy_ns);
	if (span_dev > 0) {
		double fill = 0;

		for (i = 0; i < nd; i++)
			fill += g->devices[i].fill_ns;
		g->busy_pct = 100.0 * (double)g->busy_ns / span_dev;
		g->fill_pct = 100.0 * fill / span_dev;
		if (g->fill_pct > g->busy_pct)
			g->fill_pct = g->busy_pct;
	}

	/* Stretches without GPU timestamps: CUPTI handed to another client (or failing). */
	g->nr_host_only = a->nr_host_only;
	g->host_only_ns = model_host_only_overlap(a->host_only, a->nr_host_only, s->span_start,
						  s->span_end);
	free(a->host_only);
	free(a->unions);
	stats_comm_memo_free(&a->comm);
}

/* ---- As the calls and operations come ---- */

struct stats_acc *stats_begin(struct stats *s, const struct model *m, const struct first_look *p)
{
	struct stats_acc *a = xcalloc(1, sizeof(*a));
	size_t i;

	memset(s, 0, sizeof(*s));
	a->s = s;
	a->m = m;
	a->p = p;
	a->by_api = xcalloc(m->nr_apis + 1, sizeof(*a->by_api));
	a->lo = UINT64_MAX;
	a->nr_ids = m->nr_strings + 1;
	a->pm.max_len = m->pm_max_len;
	a->slot = xmalloc(a->nr_ids * sizeof(*a->slot));
	for (i = 0; i < a->nr_ids; i++)
		a->slot[i] = -1;
	a->host_only = model_host_only(m, &a->nr_host_only);
	return a;
}

void stats_call(struct stats_acc *a, const struct m_call *c, uint32_t id)
{
	if (c->t0 < a->lo)
		a->lo = c->t0;
	if (c->t1 > a->hi)
		a->hi = c->t1;
	count_call(&a->s->counts, a->m, c);
	api_add(a->by_api, a->m, c);
	if (c->kind == MC_LAUNCH) {
		kernel_call(a, c);
		/* A launch still in its call when the GPU timestamps stopped (or not yet
		 * started) may or may not have its record: counted as without. */
		if (a->nr_host_only &&
		    model_host_only_overlap(a->host_only, a->nr_host_only, c->t0, c->t1 + 1))
			a->s->gpu.host_only_launches++;
	}
	if (c->kind == MC_MEM) {
		XGROW(a->mem, a->mem_cap, a->nr_mem + 1);
		a->mem[a->nr_mem++] = (struct mem_call){
			*c, *model_call_args(a->m, c),
			(c->flags & MCF_ERROR) && id != M_NO_CALL ? model_call_result(a->m, id) : 0
		};
	}
}

void stats_sample(struct stats_acc *a, const struct m_pm_sample *s)
{
	if (a->nr_host_only &&
	    model_host_only_overlap(a->host_only, a->nr_host_only, s->start, s->end)) {
		a->s->gpu.host_only_samples++;
		return;
	}
	pm_window_add(&a->pm, s);
}

void stats_floor(struct stats_acc *a, uint64_t t)
{
	pm_window_let_go(&a->pm, t);
}

void stats_op(struct stats_acc *a, const struct m_gpu_op *g)
{
	const struct m_gpu_shape *sh = model_gpu_shape(a->m, g);

	if (g->start < a->lo)
		a->lo = g->start;
	if (g->end > a->hi)
		a->hi = g->end;
	if (sh->kind == MG_KERNEL)
		kernel_op(a, g, sh);
	gpu_op(a, g, sh);
}

void stats_end(struct stats_acc *a)
{
	struct stats *s = a->s;

	/* The span: from the first call or GPU operation to the end of the last. */
	if (a->lo > a->hi)
		a->lo = a->hi = 0;
	s->span_start = a->lo;
	s->span_end = a->hi;
	s->span_ns = a->hi - a->lo;
	compute_apis(s, a->m, a->by_api);
	kernels_end(a);
	compute_memory(&s->mem, a->m, a->mem, a->nr_mem, &s->loop, s->span_start, s->span_end);
	gpu_end(a);
	free(a->by_api);
	free(a->mem);
	free(a->pm.v);
	free(a);
}

void stats_free(struct stats *s)
{
	free(s->apis);
	free(s->kernels);
	free(s->mem.devices);
	free(s->mem.allocs);
	free(s->mem.live_at_peak);
	free(s->gpu.devices);
	free(s->gpu.comm_ops);
	loop_free(&s->loop);
	ranges_free(&s->ranges);
	memset(s, 0, sizeof(*s));
}

int stats_kernel_bound(const struct s_kernel *k, int *unit)
{
	struct pm_judgement j;

	*unit = -1;
	if (!(k->pm_share >= KERNEL_PM_OWN_MIN))
		return -1;
	pm_classify(k->pm, &j);
	*unit = j.unit;
	return j.cls;
}
